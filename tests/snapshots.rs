//! Every reporter is a pure function of the Report: rendering the committed
//! result files (tests/fixtures, schema 1, made by tests/fixtures/make.sh
//! from real runs) must give the committed snapshots byte for byte. A change
//! to a format shows up here as a diff to review (`cargo insta review`).
//! The fixtures stay at schema 1 on purpose: they are what `fslab compare`
//! and `fslab report` must keep reading.

use fslab::model::{parse_report, CellKind, Report};
use fslab::report::{bonnie_csv, csv, fio_json, html, json, text, timeline_csv, Reporter};
use std::path::Path;

fn fixture_text(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.json"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn fixture(name: &str) -> Report {
    parse_report(&fixture_text(name)).unwrap_or_else(|e| panic!("{name}.json: {e}"))
}

fn render(r: &Report, f: &dyn Reporter) -> String {
    String::from_utf8(f.render(r)).expect("reporters write UTF-8")
}

/// Snapshots of `fixture` in every format that applies to it. The JSON
/// reporter's output must read back as the same report (schema 2 loses
/// nothing), and hold every field of the schema-1 fixture unchanged but the
/// version, each cell's new `kind` and the plan fields schema 1 lacked.
fn snap(name: &str, extra: &[(&str, &dyn Reporter)]) {
    let r = fixture(name);
    let written = render(&r, &json::Json);
    let again = parse_report(&written).unwrap_or_else(|e| panic!("{name}: schema 2 does not read back: {e}"));
    assert_eq!(
        render(&again, &json::Json),
        written,
        "{name}: a schema-2 round trip changes it"
    );
    let mut v2: serde_json::Value = serde_json::from_str(&written).unwrap();
    let mut v1: serde_json::Value = serde_json::from_str(&fixture_text(name)).unwrap();
    assert_eq!(v2["schema_version"], 2);
    v1["schema_version"] = 2.into();
    for (c2, c1) in v2["cells"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .zip(v1["cells"].as_array_mut().unwrap())
    {
        assert!(c2["kind"].is_string(), "{name}: a cell without its kind");
        c2.as_object_mut().unwrap().remove("kind");
        // every field the fixture's plan has is kept as it was
        let (p2, p1) = (c2["plan"].as_object().unwrap(), c1["plan"].as_object().unwrap());
        for (k, v) in p1 {
            assert_eq!(p2.get(k), Some(v), "{name}: plan field {k}");
        }
        c2["plan"] = c1["plan"].clone();
    }
    assert_eq!(v2, v1, "{name}.json does not survive a read and write");
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

/// Schema-1 cells get the kind their contents say, and their figures.
#[test]
fn schema_1_fixtures_are_read_with_their_kind() {
    for (name, kind) in [
        ("io", CellKind::Io),
        ("meta", CellKind::Meta),
        ("probe", CellKind::Probe),
        ("replay", CellKind::Replay),
    ] {
        let r = fixture(name);
        assert_eq!(r.schema_version, 2, "{name}: upgraded on reading");
        assert_eq!(r.cells[0].kind(), kind, "{name}");
    }
    let io = fixture("io");
    let p = io.cells[0].plan.io().expect("an io plan");
    assert_eq!((p.rw.name(), p.bs, p.rwmixread), ("randrw", 4096, 75));
    assert_eq!(io.cells[0].directions[0].ops, 1883072);
    let lab = fixture("lab");
    let kinds: Vec<CellKind> = lab.cells.iter().map(|c| c.kind()).collect();
    assert!(
        kinds.contains(&CellKind::Meta) && kinds.contains(&CellKind::Io),
        "{kinds:?}"
    );
    let replay = fixture("replay");
    assert!(replay.cells[0].dbench_mb_s() > 0.0);
    assert!(replay.cells[0]
        .plan
        .replay()
        .unwrap()
        .loadfile
        .name
        .ends_with("load.txt"));
}

/// A schema-1 cell that failed in a lab run recorded the lab's plan enum
/// (`{"io": {...}}`): it is read as an io cell with that plan.
#[test]
fn schema_1_failed_lab_cells_are_unwrapped() {
    let mut v: serde_json::Value = serde_json::from_str(&fixture_text("lab")).unwrap();
    let c = &mut v["cells"][1];
    let plan = c["plan"].take();
    c["plan"] = serde_json::json!({ "io": plan });
    c["error"] = "making the filesystem: mkfs refused".into();
    let r = parse_report(&v.to_string()).unwrap();
    assert_eq!(r.cells[1].kind(), CellKind::Io);
    assert_eq!(r.cells[1].plan.io().unwrap().bs, 4096);
}

/// Versions other than 1 and 2 are refused, naming the version.
#[test]
fn unknown_schema_versions_are_refused() {
    let mut v: serde_json::Value = serde_json::from_str(&fixture_text("io")).unwrap();
    v["schema_version"] = 3.into();
    let e = parse_report(&v.to_string()).unwrap_err();
    assert!(e.msg.contains("schema_version 3"), "{e}");
}

/// A fio job's cell: the io plan with fio's job info under `fio`, typed,
/// written and read back unchanged; fio-json takes its group and options.
#[test]
fn fio_cells_round_trip_and_report_their_job() {
    let mut v: serde_json::Value = serde_json::from_str(&fixture_text("io")).unwrap();
    v["cells"][0]["plan"]["fio"] = serde_json::json!({
        "groupid": 3, "jobs": 2, "options": {"bs": "4k", "rw": "randrw"}
    });
    let r = parse_report(&v.to_string()).unwrap();
    let c = &r.cells[0];
    assert_eq!(c.kind(), CellKind::Fio);
    let fio = c.plan.fio().unwrap();
    assert_eq!((fio.groupid, fio.jobs, fio.options["bs"].as_str()), (3, 2, "4k"));
    let written = render(&r, &json::Json);
    let w: serde_json::Value = serde_json::from_str(&written).unwrap();
    assert_eq!(w["cells"][0]["kind"], "fio");
    assert_eq!(w["cells"][0]["plan"]["fio"], v["cells"][0]["plan"]["fio"]);
    let again = parse_report(&written).unwrap();
    assert_eq!(render(&again, &json::Json), written);
    let job: serde_json::Value = serde_json::from_str(&render(&r, &fio_json::FioJson)).unwrap();
    assert_eq!(job["jobs"][0]["groupid"], 3);
    assert_eq!(
        job["jobs"][0]["job options"],
        serde_json::json!({"bs": "4k", "rw": "randrw"})
    );
}
