//! The HTML report in a real browser (headless Chromium): the page loads and
//! every chart is there; and the CSV in Python's csv module.

use crate::util::*;
use std::path::Path;
use std::process::Command;

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// Chromium as the machine's probe runs it: no sandbox (root), no GPU, no
/// background network (this machine's network is closed), a fresh profile.
pub fn chromium(profile: &Path, args: &[&str]) -> std::process::Output {
    Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("chromium runs")
}

#[test]
fn report_renders_in_headless_chromium_with_every_chart() {
    if !require("chromium", have("chromium")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    fslab()
        .args(["report", &fixture("lab.json"), &fixture("probe.json"), "-o"])
        .arg(&page)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    let declared: usize = html
        .split("<meta name=\"fslab-charts\" content=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|n| n.parse().ok())
        .expect("chart count in the page");
    assert_eq!(html.matches("<figure class=\"chart\"").count(), declared);
    for kind in ["bars", "percentiles", "series", "timeline"] {
        assert!(
            html.contains(&format!("data-kind=\"{kind}\"")),
            "a {kind} chart is in the page"
        );
    }
    assert!(!html.contains("<script"), "no script needed to read it");
    let url = format!("file://{}", page.display());
    let out = chromium(&dir.path().join("profile"), &["--dump-dom", &url]);
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && dom.contains("</html>"),
        "the page loads: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        dom.matches("<figure class=\"chart\"").count(),
        declared,
        "every chart is in the DOM"
    );
    // each figure holds a drawn svg
    for fig in dom.split("<figure class=\"chart\"").skip(1) {
        let fig = fig.split("</figure>").next().unwrap();
        assert!(
            fig.contains("<svg") && (fig.contains("<path") || fig.contains("<rect")),
            "an empty chart: {fig:.200}"
        );
    }
    let png = dir.path().join("shot.png");
    let out = chromium(
        &dir.path().join("profile2"),
        &[
            "--window-size=1400,2000",
            &format!("--screenshot={}", png.display()),
            &url,
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    assert!(
        bytes.len() > 30_000,
        "a screenshot with content, not a blank page: {} bytes",
        bytes.len()
    );
}

#[test]
fn csv_loads_in_python_with_the_documented_columns() {
    if !require("python3", have("python3")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut r = fslab::model::parse_report(&std::fs::read_to_string(fixture("lab.json")).unwrap()).unwrap();
    // with the system rows of telemetry (operation system, device:NAME)
    r.cells[1].system = Some(crate::snapshots::hand_built_system(true));
    let csv = dir.path().join("lab.csv");
    std::fs::write(&csv, fslab::report::Reporter::render(&fslab::report::csv::Csv, &r)).unwrap();
    let columns = fslab::report::csv::COLUMNS.join(",");
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/results.md")).unwrap();
    assert!(
        docs.contains(&columns),
        "docs/results.md documents the columns {columns}"
    );
    let script = format!(
        r#"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert rows, "no rows"
assert list(rows[0].keys()) == "{columns}".split(","), rows[0].keys()
for r in rows:
    float(r["value"]); int(r["repeat"])
    assert r["filesystem"] in ("tmpfs", "ext4"), r
sysrows = [r for r in rows if r["operation"] == "system" and r["metric"] == "disturbed"]
assert [float(r["value"]) for r in sysrows] == [1.0], sysrows
assert any(r["operation"] == "device:vda" and r["metric"] == "read_share_pct" for r in rows)
print(len(rows), len({{(r["filesystem"], r["workload"], r["repeat"]) for r in rows}}))
"#
    );
    let out = Command::new("python3")
        .arg("-c")
        .arg(&script)
        .arg(&csv)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cells: usize = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_eq!(cells, r.cells.len(), "every cell has rows");
}

/// Cells with telemetry: each has its system timeline (stacked panels on one
/// time axis), drawn in Chromium; the disturbed one is framed in red.
#[test]
fn system_timelines_render_in_headless_chromium() {
    if !require("chromium", have("chromium")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut r = fslab::model::parse_report(&std::fs::read_to_string(fixture("lab.json")).unwrap()).unwrap();
    for (i, c) in r.cells.iter_mut().enumerate() {
        c.system = Some(crate::snapshots::hand_built_system(i == 3));
    }
    let page = dir.path().join("system.html");
    std::fs::write(&page, fslab::report::Reporter::render(&fslab::report::html::Html, &r)).unwrap();
    if let Ok(keep) = std::env::var("FSLAB_KEEP_HTML") {
        std::fs::copy(&page, keep).unwrap();
    }
    let url = format!("file://{}", page.display());
    let out = chromium(&dir.path().join("profile"), &["--dump-dom", &url]);
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && dom.contains("</html>"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let figs: Vec<&str> = dom
        .split("<figure class=\"chart\" data-kind=\"system\"")
        .skip(1)
        .map(|f| f.split("</figure>").next().unwrap())
        .collect();
    assert_eq!(figs.len(), r.cells.len(), "one timeline per cell");
    for f in &figs {
        // six panels (throughput, p99, %util, await, CPU, dirty memory), one svg
        assert_eq!(f.matches("<svg").count(), 1);
        for panel in ["device %util", "device await", "CPU (% of all CPUs)", "dirty memory"] {
            assert!(f.contains(panel), "{panel} in {f:.300}");
        }
        assert!(f.contains("Z\""), "stacked CPU areas");
    }
    assert_eq!(
        figs.iter()
            .filter(|f| f.starts_with(" data-disturbed=\"true\""))
            .count(),
        1
    );
    let png = dir.path().join("shot.png");
    let out = chromium(
        &dir.path().join("profile2"),
        &[
            "--window-size=1400,3000",
            &format!("--screenshot={}", png.display()),
            &url,
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    if let Ok(keep) = std::env::var("FSLAB_KEEP_PNG") {
        std::fs::copy(&png, keep).unwrap();
    }
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
}
