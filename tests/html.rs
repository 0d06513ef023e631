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
    // the comparison's figures are text in the page, not only in tooltips
    let table = dom.split("<table class=\"cmp\"").nth(1).expect("a comparison table");
    assert!(table.contains("<td data-fs=\"ext4\">") && table.contains(" ± "));
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

/// The page `fslab report` writes for `fixtures`, as text.
fn report_page(fixtures: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let mut cmd = fslab();
    cmd.arg("report");
    for f in fixtures {
        cmd.arg(fixture(f));
    }
    cmd.arg("-o").arg(&page).assert().success();
    std::fs::read_to_string(&page).unwrap()
}

/// Text of an HTML fragment: tags dropped, the entities the report writes decoded.
fn text_of(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for ch in html.chars() {
        match ch {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
        .trim()
        .to_string()
}

/// The `<td>` texts of one table row.
fn row_cells(row: &str) -> Vec<String> {
    row.split("<td")
        .skip(1)
        .map(|c| {
            let c = &c[c.find('>').unwrap() + 1..];
            text_of(&c[..c.find("</td>").unwrap()])
        })
        .collect()
}

/// Each `<figure>` of a kind, its inner HTML.
fn figures<'a>(html: &'a str, kind: &str) -> Vec<&'a str> {
    html.split(&format!("<figure class=\"chart\" data-kind=\"{kind}\""))
        .skip(1)
        .map(|f| f.split("</figure>").next().unwrap())
        .collect()
}

/// The comparison is a table in the page, not only hover tooltips: every
/// workload's rows carry, per filesystem, the mean ± CI exactly as
/// `compare::build` computes and `fslab compare` prints it, and beside the
/// other filesystems the ratio to the baseline and Welch's p-value.
#[test]
fn comparison_table_shows_the_figures_of_compare() {
    use fslab::report::compare::{self, fmt_value};
    let html = report_page(&["lab.json"]);
    let r = fslab::model::parse_report(&std::fs::read_to_string(fixture("lab.json")).unwrap()).unwrap();
    let cmp = compare::build(&[(String::new(), &r)], None);
    let printed = fslab().args(["compare", &fixture("lab.json")]).assert().success();
    let printed = String::from_utf8_lossy(&printed.get_output().stdout).to_string();
    assert_eq!(cmp.baseline, "tmpfs");
    let mut checked = 0;
    for w in &cmp.workloads {
        let table = html
            .split(&format!("<table class=\"cmp\" data-workload=\"{}\">", w.name))
            .nth(1)
            .unwrap_or_else(|| panic!("a comparison table for {}", w.name));
        let table = table.split("</table>").next().unwrap();
        let rows: Vec<&str> = table.split("<tr data-metric=").skip(1).collect();
        assert_eq!(rows.len(), w.rows.len(), "{}: one row per metric", w.name);
        for (row, want) in rows.iter().zip(&w.rows) {
            let cells = row_cells(row);
            assert!(cells[0].starts_with(&want.metric), "{cells:?} vs {}", want.metric);
            let mut k = 1;
            for (i, fs) in cmp.filesystems.iter().enumerate() {
                let col = want.cols[i].as_ref().expect("both filesystems ran every workload");
                let ci = col.est.ci95.expect("two repeats give an interval");
                let value = format!("{} ± {}", fmt_value(col.est.mean, want.unit), fmt_value(ci, want.unit));
                assert_eq!(cells[k], value, "{} {} on {fs}", w.name, want.metric);
                assert!(printed.contains(&value), "fslab compare prints {value} too");
                k += 1;
                if *fs == cmp.baseline {
                    continue;
                }
                let ratio: f64 = cells[k]
                    .trim_end_matches(['×', '*', '▼', '▲', '=', '?'])
                    .parse()
                    .unwrap();
                assert!((ratio - col.ratio.unwrap()).abs() <= 0.005, "{cells:?}");
                // a verdict's mark where one applies, else the star of significance
                match col.verdict {
                    Some(v) => assert!(
                        cells[k].ends_with(fslab::report::compare::verdict_mark(v.call)),
                        "{cells:?}"
                    ),
                    None => assert_eq!(cells[k].ends_with('*'), col.significant(), "{cells:?}"),
                }
                let p = col.p.expect("a p-value with two repeats each");
                if p < 0.001 {
                    assert_eq!(cells[k + 1], "< 0.001");
                } else {
                    let shown: f64 = cells[k + 1].parse().unwrap();
                    assert!((shown - p).abs() <= 0.0005, "{cells:?} vs p = {p}");
                }
                k += 2;
                checked += 1;
            }
            assert_eq!(cells.len(), k, "no other cells: {cells:?}");
        }
    }
    assert!(checked >= 20, "rows checked: {checked}");
}

/// One bar chart per metric, with every workload that measured it and a bar
/// per filesystem in each.
#[test]
fn one_grouped_bar_chart_per_metric() {
    let html = report_page(&["lab.json"]);
    let r = fslab::model::parse_report(&std::fs::read_to_string(fixture("lab.json")).unwrap()).unwrap();
    let cmp = fslab::report::compare::build(&[(String::new(), &r)], None);
    let mut metrics: Vec<&str> = Vec::new();
    for row in cmp.workloads.iter().flat_map(|w| &w.rows) {
        if !metrics.contains(&row.metric.as_str()) {
            metrics.push(&row.metric);
        }
    }
    let charts = figures(&html, "bars");
    assert_eq!(charts.len(), metrics.len(), "one chart per metric");
    for (chart, m) in charts.iter().zip(&metrics) {
        assert!(chart.contains(&format!("<title>{}", m.replace('<', "&lt;"))), "{m}");
        let with: Vec<_> = cmp
            .workloads
            .iter()
            .filter(|w| w.rows.iter().any(|r| r.metric == *m))
            .collect();
        // a bar is a rect with its figure on hover; the legend's swatches have none
        let bars = chart.matches("</title></rect>").count();
        assert_eq!(
            bars,
            with.len() * cmp.filesystems.len(),
            "{m}: a bar per workload and filesystem"
        );
        for w in with {
            assert!(
                chart.contains(&format!(">{}</text>", w.name)),
                "{m}: the group {}",
                w.name
            );
        }
    }
}

/// A percentile needs 1/(1-p) samples: the fixture's metadata phases have
/// 300 operations, so their curves end at p99.5 (no p99.9) and say so; its
/// I/O cells have millions and go on to p99.999.
#[test]
fn percentile_curves_stop_where_the_samples_do() {
    use fslab::report::html::resolves;
    assert!(resolves(99.9, 1000) && !resolves(99.9, 999));
    assert!(resolves(99.0, 100) && !resolves(99.5, 199));
    let html = report_page(&["lab.json"]);
    let r = fslab::model::parse_report(&std::fs::read_to_string(fixture("lab.json")).unwrap()).unwrap();
    let charts = figures(&html, "percentiles");
    let mut seen = 0;
    for c in r.cells.iter().filter(|c| c.lab.as_ref().unwrap().repeat == 1) {
        for d in &c.directions {
            let op = d.phase.clone().unwrap_or_else(|| d.dir.name().to_string());
            let wl = &c.lab.as_ref().unwrap().workload;
            let chart = charts
                .iter()
                .find(|f| f.contains(&format!("<title>{wl}: {op} latency</title>")))
                .unwrap_or_else(|| panic!("a percentile chart of {wl} {op}"));
            let n: u64 = d.lat.histogram.buckets.iter().map(|b| b.1).sum();
            assert_eq!(n, d.ops);
            let drawn: Vec<f64> = d
                .lat
                .percentiles
                .keys()
                .map(|k| k.parse::<f64>().unwrap())
                .filter(|&p| p >= 50.0 && p * n as f64 <= (n as f64 - 1.0) * 100.0 + 1e-6)
                .collect();
            let last = drawn.iter().copied().fold(0.0, f64::max);
            let fs = &c.lab.as_ref().unwrap().filesystem;
            let tip = format!("<title>{fs} #1: {n} samples, p50 to p{last}</title>");
            let path = chart
                .split("<path d=\"")
                .find(|p| p.contains(&tip))
                .unwrap_or_else(|| panic!("{wl} {op}: {tip} in {chart:.2000}"));
            let vertices = path.split('"').next().unwrap().matches(['M', 'L']).count();
            assert_eq!(vertices, drawn.len(), "{wl} {op}: a point per resolved percentile");
            if n < 1000 {
                assert!(last < 99.9, "{n} samples: no p99.9 point");
                assert!(
                    chart.contains("p99.9 needs ≥ 1000 samples"),
                    "the caption says why: {chart:.3000}"
                );
            } else {
                assert!(last >= 99.999, "{n} samples reach p99.999");
            }
            seen += 1;
        }
    }
    assert_eq!(seen, 2 * 7, "both filesystems' 6 phases and randread");
}

/// Log axes are labelled between decades (2 and 5 × 10^k, or 3 × 10^k).
#[test]
fn log_axes_have_labels_between_decades() {
    let html = report_page(&["lab.json", "probe.json"]);
    let mut between = 0;
    let mut charts = 0;
    for kind in ["percentiles", "timeline"] {
        for f in figures(&html, kind) {
            let labels: Vec<String> = f
                .split("class=\"k yt\">")
                .skip(1)
                .map(|l| text_of(l.split("</text>").next().unwrap()))
                .collect();
            assert!(labels.len() >= 2, "{labels:?}");
            // the leading digit of "20 µs", "5 ms", "300 ns"
            let leading: Vec<char> = labels.iter().map(|l| l.chars().next().unwrap()).collect();
            charts += 1;
            if leading.iter().any(|c| "2357".contains(*c)) {
                between += 1;
            }
        }
    }
    assert!(charts > 0);
    assert_eq!(between, charts, "every log axis has labels between its decades");
}

/// Every per-phase table of a plan run names its cell's repeat.
#[test]
fn operation_tables_name_their_repeat() {
    let html = report_page(&["lab.json"]);
    let ops = html
        .split("<h2 id=\"operations\">")
        .nth(1)
        .expect("an operations section");
    let summaries: Vec<String> = ops
        .split("<summary>")
        .skip(1)
        .map(|s| text_of(s.split("</summary>").next().unwrap()))
        .collect();
    let r = fslab::model::parse_report(&std::fs::read_to_string(fixture("lab.json")).unwrap()).unwrap();
    let want: Vec<String> = r
        .cells
        .iter()
        .filter(|c| c.directions.iter().any(|d| d.phase.is_some()))
        .map(|c| format!("{}, repeat {} of 2", c.name, c.lab.as_ref().unwrap().repeat))
        .collect();
    assert_eq!(want.len(), 4);
    assert_eq!(summaries, want);
}
