//! Every reporter is a pure function of the Report: rendering the committed
//! result files (tests/fixtures, made by tests/fixtures/make.sh from real
//! runs) must give the committed snapshots byte for byte. A change to a
//! format shows up here as a diff to review (`cargo insta review`).

use fslab::report::{bonnie_csv, csv, fio_json, html, json, text, timeline_csv, Report, Reporter};
use std::path::Path;

fn fixture_text(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.json"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn fixture(name: &str) -> Report {
    serde_json::from_str(&fixture_text(name)).unwrap_or_else(|e| panic!("{name}.json: {e}"))
}

fn render(r: &Report, f: &dyn Reporter) -> String {
    String::from_utf8(f.render(r)).expect("reporters write UTF-8")
}

/// Snapshots of `fixture` in every format that applies to it. The JSON
/// reporter's snapshot is the fixture itself: reading and writing a result
/// file must lose nothing.
fn snap(name: &str, extra: &[(&str, &dyn Reporter)]) {
    let r = fixture(name);
    let written: serde_json::Value = serde_json::from_str(&render(&r, &json::Json)).unwrap();
    let original: serde_json::Value = serde_json::from_str(&fixture_text(name)).unwrap();
    assert_eq!(written, original, "{name}.json does not survive a read and write");
    let common: [(&str, &dyn Reporter); 3] = [("text", &text::Text), ("csv", &csv::Csv), ("html", &html::Html)];
    for (fmt, rep) in common.iter().chain(extra) {
        insta::assert_snapshot!(format!("{name}.{fmt}"), render(&r, *rep));
    }
}

#[test]
fn snapshot_io() {
    snap("io", &[("fio-json", &fio_json::FioJson)]);
}

#[test]
fn snapshot_meta() {
    snap("meta", &[("bonnie-csv", &bonnie_csv::BonnieCsv)]);
}

#[test]
fn snapshot_probe() {
    snap("probe", &[("timeline-csv", &timeline_csv::TimelineCsv)]);
}

#[test]
fn snapshot_replay() {
    snap("replay", &[]);
}

#[test]
fn snapshot_lab() {
    snap("lab", &[("fio-json", &fio_json::FioJson)]);
}

#[test]
fn snapshot_compare_table() {
    let r = fixture("lab");
    let c = fslab::report::compare::build(&[(String::new(), &r)], None);
    insta::assert_snapshot!("lab.compare", fslab::report::compare::render(&c));
}
