//! `fslab compare --format plain|markdown|csv` on a wide comparison: the
//! committed lab fixture (tmpfs and ext4, real runs) with its ext4 cells
//! given again under three more filesystems' names, so the table has five
//! columns of figures and cannot fit 80 columns as the boxed one does.

use crate::util::{expect_usage, fslab};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use std::path::{Path, PathBuf};

const MORE: [&str; 3] = ["xfs-isize-2048", "btrfs-compress-zstd", "ext4-nojournal-I2048"];

/// The wide result file, written into `dir`.
fn wide(dir: &Path) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lab.json");
    let mut r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let ext4: Vec<serde_json::Value> = r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["lab"]["filesystem"] == "ext4")
        .cloned()
        .collect();
    assert!(!ext4.is_empty());
    for name in MORE {
        for c in &ext4 {
            let mut c = c.clone();
            c["lab"]["filesystem"] = name.into();
            c["name"] = format!("{name}/{}", c["lab"]["workload"].as_str().unwrap()).into();
            r["cells"].as_array_mut().unwrap().push(c);
        }
        r["lab"]["filesystems"].as_array_mut().unwrap().push(name.into());
    }
    let out = dir.join("wide.json");
    std::fs::write(&out, serde_json::to_string(&r).unwrap()).unwrap();
    out
}

fn compare(file: &Path, format: &str) -> String {
    compare_at(file, format, "80")
}

fn compare_at(file: &Path, format: &str, width: &str) -> String {
    let out = fslab()
        .arg("compare")
        .arg(file)
        .args(["--format", format, "--width", width])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{format}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn filesystems() -> Vec<&'static str> {
    let mut v = vec!["tmpfs", "ext4"];
    v.extend(MORE);
    v
}

#[test]
fn plain_is_ascii_within_80_columns_and_keeps_every_figure() {
    let d = tempfile::tempdir().unwrap();
    let f = wide(d.path());
    let boxed = compare_at(&f, "text", "400");
    assert!(
        boxed.lines().any(|l| l.chars().count() > 80),
        "the fixture is not wide enough to test the split"
    );
    let plain = compare(&f, "plain");
    for (i, l) in plain.lines().enumerate() {
        assert!(l.is_ascii(), "line {}: not ASCII: {l:?}", i + 1);
        assert!(
            l.chars().count() <= 80,
            "line {}: {} columns: {l:?}",
            i + 1,
            l.chars().count()
        );
    }
    for fs in filesystems() {
        assert!(plain.contains(fs), "{fs} missing:\n{plain}");
    }
    // every row of every block, and the boxed table's figures in ASCII
    assert!(plain.contains("tmpfs (baseline)"), "{plain}");
    assert!(plain.contains("seq-create p99 v"), "{plain}");
    assert!(plain.contains("8.89 us +/- 8.13 us"), "{plain}");
    // the verdict (regressed: a higher p99) where the star of significance was
    assert!(plain.contains("2.81x[-]"), "{plain}");
    assert!(plain.contains("read IOPS ^"), "{plain}");
    assert!(
        plain.contains("+/-: mean +/- 95% confidence") || plain.contains("mean +/- 95% confidence"),
        "{plain}"
    );
    let blocks = plain.matches("seq-create p99 v").count();
    assert!(
        blocks >= 2,
        "a five-filesystem table is split into blocks: {blocks}\n{plain}"
    );
}

/// (header cells, body rows) of every table in a Markdown document.
fn markdown_tables(md: &str) -> Vec<(Vec<String>, usize)> {
    let mut tables = Vec::new();
    let (mut head, mut rows, mut cell) = (Vec::new(), 0usize, String::new());
    let (mut in_head, mut in_cell) = (false, false);
    for ev in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match ev {
            Event::Start(Tag::Table(_)) => {
                head.clear();
                rows = 0;
            }
            Event::Start(Tag::TableHead) => in_head = true,
            Event::End(TagEnd::TableHead) => in_head = false,
            Event::Start(Tag::TableRow) => rows += 1,
            Event::Start(Tag::TableCell) => {
                in_cell = true;
                cell.clear();
            }
            Event::End(TagEnd::TableCell) => {
                in_cell = false;
                if in_head {
                    head.push(cell.trim().to_string());
                }
            }
            Event::Text(t) | Event::Code(t) if in_cell => cell.push_str(&t),
            Event::End(TagEnd::Table) => tables.push((head.clone(), rows)),
            _ => {}
        }
    }
    tables
}

#[test]
fn markdown_is_a_pipe_table_per_workload() {
    let d = tempfile::tempdir().unwrap();
    let md = compare(&wide(d.path()), "markdown");
    let tables = markdown_tables(&md);
    assert_eq!(tables.len(), 2, "{md}");
    let mut want = vec!["meta".to_string(), "tmpfs (baseline)".to_string()];
    want.extend(filesystems()[1..].iter().map(|s| s.to_string()));
    assert_eq!(tables[0].0, want, "{md}");
    // bonnie++'s six phases x (ops/s, p99, %CPU)
    assert_eq!(tables[0].1, 18, "{md}");
    assert_eq!(tables[1].0[0], "randread");
    assert_eq!(tables[1].1, 5, "{md}");
    assert!(md.contains("| seq-create ops/s ↑ | 189.7k ± 227.9k |"), "{md}");
}

#[test]
fn csv_has_a_row_per_workload_metric_and_filesystem() {
    let d = tempfile::tempdir().unwrap();
    let text = compare(&wide(d.path()), "csv");
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let head: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        head,
        [
            "workload",
            "metric",
            "unit",
            "higher_is_better",
            "filesystem",
            "baseline",
            "n",
            "mean",
            "ci95",
            "ratio",
            "p_value",
            "significant",
            "flagged",
            "verdict",
            "change",
            "change_lo",
            "change_hi"
        ]
    );
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), (18 + 5) * filesystems().len(), "{text}");
    let get = |wl: &str, metric: &str, fs: &str| {
        rows.iter()
            .find(|r| &r[0] == wl && &r[1] == metric && &r[4] == fs)
            .unwrap_or_else(|| panic!("no row {wl} {metric} {fs}"))
            .clone()
    };
    let base = get("meta", "seq-create ops/s", "tmpfs");
    assert_eq!((&base[5], &base[9], &base[10]), ("true", "", ""));
    let mean = |r: &csv::StringRecord| r[7].parse::<f64>().unwrap();
    for fs in &filesystems()[1..] {
        let r = get("meta", "seq-create ops/s", fs);
        let ratio: f64 = r[9].parse().unwrap();
        assert!((ratio - mean(&r) / mean(&base)).abs() < 1e-9, "{fs}: {r:?}");
        assert_eq!(&r[6], "2");
        assert!(&r[11] == "true" || &r[11] == "false");
        // two repeats each: a verdict, with the change it is about
        assert!(
            ["regressed", "improved", "equivalent", "undecided"].contains(&&r[13]),
            "{fs}: {r:?}"
        );
        let change: f64 = r[14].parse().unwrap();
        let (lo, hi): (f64, f64) = (r[15].parse().unwrap(), r[16].parse().unwrap());
        assert!(lo <= change && change <= hi, "{fs}: {r:?}");
        // the change is the ratio of geometric means, close to the ratio of means
        assert!((1.0 + change - ratio).abs() < 0.25 * ratio, "{fs}: {r:?}");
    }
    // a copy of ext4's cells has ext4's figures
    assert_eq!(
        mean(&get("randread", "read IOPS", "ext4")),
        mean(&get("randread", "read IOPS", "xfs-isize-2048"))
    );
}

#[test]
fn an_unknown_format_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let f = wide(d.path());
    expect_usage(&["compare", f.to_str().unwrap(), "--format", "xml"], "--format");
}
