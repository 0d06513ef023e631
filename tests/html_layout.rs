//! The HTML report of each example plan laid out by a real browser
//! (headless Chromium) at 1280 and 800 px: no text of a chart leaves its
//! chart or overlaps another, no heading or caption runs off the page, no
//! legend gives two series one swatch. The results are real, shortened runs
//! of examples/*.toml (tests/fixtures/make-examples.sh writes them).

use crate::html::chromium;
use crate::util::*;
use std::path::{Path, PathBuf};

/// The six example plans, by name.
const PLANS: [&str; 6] = [
    "seed-create-under-stream",
    "seed-kernel-ab",
    "seed-metadata-xattr",
    "seed-raw-vs-fs",
    "seed-raw-vs-fs-scheduler",
    "seed-samba-xattr",
];

/// Run on load in a copy of the page: measures every SVG text against its
/// chart and its neighbours, every block of text against the page, every
/// legend's swatches against each other; writes what it found as JSON into
/// `<pre id="layout-check">`.
const CHECK: &str = r##"<script>
window.addEventListener("load", function () {
  var W = document.documentElement.clientWidth, bad = [], texts = 0, blocks = 0, legends = 0;
  var say = function (el) { return (el.textContent || "").replace(/\s+/g, " ").trim().slice(0, 90); };
  var cut = function (a, b) { return Math.min(a.right, b.right) - Math.max(a.left, b.left); };
  var cutY = function (a, b) { return Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top); };
  document.querySelectorAll("svg").forEach(function (svg) {
    var sr = svg.getBoundingClientRect(), title = say(svg.querySelector("title") || svg);
    if (sr.right > W + 0.5) bad.push("chart wider than the page (" + Math.round(sr.right) + " > " + W + "): " + title);
    var boxes = [];
    svg.querySelectorAll("text").forEach(function (t) {
      var r = t.getBoundingClientRect();
      if (r.width === 0 || getComputedStyle(t).display === "none" || getComputedStyle(t).visibility === "hidden") return;
      texts++;
      if (r.left < sr.left - 0.5 || r.right > sr.right + 0.5 || r.top < sr.top - 0.5 || r.bottom > sr.bottom + 0.5)
        bad.push("text outside its chart: \"" + say(t) + "\" in \"" + title + "\"");
      boxes.push([t, r]);
    });
    for (var i = 0; i < boxes.length; i++)
      for (var j = i + 1; j < boxes.length; j++)
        if (cut(boxes[i][1], boxes[j][1]) > 1 && cutY(boxes[i][1], boxes[j][1]) > 3)
          bad.push("texts overlap: \"" + say(boxes[i][0]) + "\" and \"" + say(boxes[j][0]) + "\" in \"" + title + "\"");
    svg.querySelectorAll("g.legend").forEach(function (g) {
      legends++;
      var seen = {};
      g.querySelectorAll(".sw").forEach(function (sw) {
        var key = sw.getAttribute("fill") + "/" + sw.getAttribute("stroke") + "/" + sw.getAttribute("stroke-dasharray");
        var name = say(sw.nextElementSibling || sw);
        if (seen[key]) bad.push("one swatch for \"" + seen[key] + "\" and \"" + name + "\" in \"" + title + "\"");
        seen[key] = name;
      });
    });
  });
  document.querySelectorAll("h1,h2,h3,h4,p,figcaption,summary,nav,li,table,pre").forEach(function (el) {
    if (el.id === "layout-check" || el.closest("#layout-check")) return;
    var box = el.closest(".scroll") || el, r = box.getBoundingClientRect();
    if (r.width === 0) return;
    blocks++;
    if (r.right > W + 0.5 || box.scrollWidth > box.clientWidth + 1 && getComputedStyle(box).overflowX === "visible")
      bad.push("runs off the page (" + Math.round(r.right) + " > " + W + "): <" + el.tagName.toLowerCase() + "> " + say(el));
  });
  if (document.documentElement.scrollWidth > W)
    bad.push("the page scrolls sideways: " + document.documentElement.scrollWidth + " > " + W);
  var pre = document.createElement("pre");
  pre.id = "layout-check";
  pre.textContent = JSON.stringify({ width: W, texts: texts, blocks: blocks, legends: legends, bad: bad });
  document.body.appendChild(pre);
});
</script>"##;

fn example_fixture(plan: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/examples")
        .join(format!("{plan}.json"))
}

/// The report `fslab report` writes for the result of `plan`, in `dir`.
fn render(dir: &Path, plan: &str) -> PathBuf {
    let page = dir.join(format!("report-{plan}.html"));
    fslab()
        .arg("report")
        .arg(example_fixture(plan))
        .arg("-o")
        .arg(&page)
        .assert()
        .success();
    page
}

/// What the check found on `page` at `width` px: (texts measured, blocks
/// measured, legends measured, the offending texts).
fn check(dir: &Path, page: &Path, width: u32) -> (u64, u64, u64, Vec<String>) {
    let html = std::fs::read_to_string(page).unwrap();
    let at = html.rfind("</body>").expect("a page with a body");
    let checked = dir.join(format!("checked-{width}.html"));
    std::fs::write(&checked, format!("{}{CHECK}{}", &html[..at], &html[at..])).unwrap();
    let url = format!("file://{}", checked.display());
    let out = chromium(
        &dir.join(format!("profile-{width}")),
        &[
            &format!("--window-size={width},900"),
            "--virtual-time-budget=5000",
            "--dump-dom",
            &url,
        ],
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = dom
        .split("<pre id=\"layout-check\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .unwrap_or_else(|| panic!("the check ran: {:.500}", String::from_utf8_lossy(&out.stderr)))
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let v: serde_json::Value = serde_json::from_str(&json).expect("the check's JSON");
    assert_eq!(v["width"].as_u64(), Some(width as u64), "the page is {width} px wide");
    let bad = v["bad"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap().to_string())
        .collect();
    (
        v["texts"].as_u64().unwrap(),
        v["blocks"].as_u64().unwrap(),
        v["legends"].as_u64().unwrap(),
        bad,
    )
}

/// Done-when 2 of issue 37: every example plan's report, at 1280 and 800
/// px, has no text outside its chart, no overlapping texts, no heading,
/// caption or table off the page and no shared swatch; and the check
/// measured texts, blocks and legends (it cannot pass on an empty page).
/// With FSLAB_REPORT_PNG=DIR, also writes DIR/report-PLAN.png (1280 px).
#[test]
fn example_reports_lay_out_without_overflow_or_overlap() {
    if !require("chromium", have("chromium")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for plan in PLANS {
        if !example_fixture(plan).exists() {
            failures.push(format!("{plan}: no result (tests/fixtures/make-examples.sh writes it)"));
            continue;
        }
        let page = render(dir.path(), plan);
        for width in [1280, 800] {
            let (texts, blocks, legends, bad) = check(dir.path(), &page, width);
            // the check measured something: it cannot pass on an empty page
            if texts < 20 || blocks < 5 || legends == 0 {
                failures.push(format!(
                    "{plan} at {width} px: measured only {texts} texts, {blocks} blocks, {legends} legends"
                ));
            }
            failures.extend(bad.into_iter().map(|b| format!("{plan} at {width} px: {b}")));
        }
        if let Ok(out) = std::env::var("FSLAB_REPORT_PNG") {
            let png = Path::new(&out).join(format!("report-{plan}.png"));
            let url = format!("file://{}", page.display());
            let shot = chromium(
                &dir.path().join("profile-png"),
                &[
                    "--window-size=1280,1600",
                    &format!("--screenshot={}", png.display()),
                    &url,
                ],
            );
            assert!(shot.status.success(), "{}", String::from_utf8_lossy(&shot.stderr));
        }
    }
    assert!(
        failures.is_empty(),
        "{} layout faults:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Run on load after the report's flame script: zooms the first flame
/// graph into its widest frame whose zoom hides other frames, hovers it, searches `QUERY`,
/// and writes what it saw into `<pre id="flame-check">`.
const FLAME_CHECK: &str = r##"<script>
window.addEventListener("load", function () {
  var svg = document.querySelector("svg.flame"), out = { graphs: document.querySelectorAll("svg.flame").length };
  var fl = svg.flame, fig = svg.parentNode;
  // its callers and callees: what a zoom into f keeps
  var kin = function (f) {
    return fl.frames.filter(function (x) {
      var e = x.s + x.v, fe = f.s + f.v;
      return (x.s >= f.s && e <= fe && x.d >= f.d) || (x.s <= f.s && e >= fe && x.d < f.d);
    }).length;
  };
  // the widest frame whose zoom leaves some frames out
  var f = fl.frames.slice().sort(function (a, b) { return b.v - a.v || a.d - b.d; })
    .filter(function (x) { return kin(x) < fl.frames.length; })[0];
  out.kin = kin(f);
  out.name = f.n;
  out.before = +f.r.getAttribute("width");
  f.g.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  out.after = +f.r.getAttribute("width");
  out.shown = fl.frames.filter(function (x) { return x.g.style.display !== "none"; }).length;
  out.all = fl.frames.length;
  out.label = f.t.textContent;
  f.g.dispatchEvent(new MouseEvent("mouseenter"));
  out.info = fig.querySelector(".flameinfo").textContent;
  fig.querySelector(".flamebar button").click();
  out.reset = +f.r.getAttribute("width");
  var box = fig.querySelector(".flamebar input");
  box.value = "QUERY";
  box.dispatchEvent(new Event("input"));
  out.share = +fig.querySelector(".flamebar .found").getAttribute("data-share");
  out.found = fig.querySelector(".flamebar .found").textContent;
  out.total = +svg.getAttribute("data-total");
  var pre = document.createElement("pre");
  pre.id = "flame-check";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"##;

/// The flame graphs (seed-metadata-xattr's result is profiled) in Chromium:
/// a click zooms a frame to the graph's width and hides what is not its
/// callers or callees, hovering names it with its share, "reset zoom" puts
/// it back, and a search's share is the share of the stacks through a
/// matching frame, as the folded stacks give it. Without scripts the graph
/// is drawn and labelled all the same (the HTML has it), with no search box.
#[test]
fn flame_graphs_zoom_search_and_read_without_script() {
    if !require("chromium", have("chromium")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = render(dir.path(), "seed-metadata-xattr");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<svg") && html.contains("class=\"flame\""),
        "flame graphs in the report"
    );
    // the first graph's stacks, from the fixture
    let r =
        fslab::model::parse_report(&std::fs::read_to_string(example_fixture("seed-metadata-xattr")).unwrap()).unwrap();
    let stacks = &r.cells.iter().find_map(|c| c.profile.as_ref()).unwrap().phases[0].stacks;
    let query = "ext4";
    let total: u64 = stacks.iter().map(|s| s.count).sum();
    let through: u64 = stacks
        .iter()
        .filter(|s| s.stack.split(';').any(|f| f.to_lowercase().contains(query)))
        .map(|s| s.count)
        .sum();
    assert!(
        through > 0 && through < total,
        "the query matches some stacks: {through} of {total}"
    );
    let at = html.rfind("</body>").unwrap();
    let checked = dir.path().join("flame.html");
    let script = FLAME_CHECK.replace("QUERY", query);
    std::fs::write(&checked, format!("{}{script}{}", &html[..at], &html[at..])).unwrap();
    let url = format!("file://{}", checked.display());
    let out = chromium(
        &dir.path().join("p1"),
        &["--virtual-time-budget=5000", "--dump-dom", &url],
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let json = dom
        .split("<pre id=\"flame-check\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .unwrap_or_else(|| panic!("the check ran: {}", String::from_utf8_lossy(&out.stderr)))
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let (before, after, reset) = (
        v["before"].as_f64().unwrap(),
        v["after"].as_f64().unwrap(),
        v["reset"].as_f64().unwrap(),
    );
    assert!(v["graphs"].as_u64().unwrap() >= 6, "{v}");
    assert!(
        before < 1180.0 && (after - 1180.0).abs() < 0.2,
        "zoomed to the width: {v}"
    );
    assert!((reset - before).abs() < 0.2, "reset: {v}");
    assert!(
        v["shown"] == v["kin"] && v["shown"].as_u64() < v["all"].as_u64(),
        "only its callers and callees shown: {v}"
    );
    let name = v["name"].as_str().unwrap();
    let info = v["info"].as_str().unwrap();
    assert!(
        info.starts_with(&format!("{name}: ")) && info.contains("% of all"),
        "{v}"
    );
    assert_eq!(v["total"].as_u64(), Some(total));
    let share = v["share"].as_f64().unwrap();
    assert!(
        (share - through as f64 / total as f64).abs() < 1e-5,
        "matched share {share} vs {through}/{total}: {v}"
    );
    // without scripts the page is its HTML: the boxes, labels and
    // tooltips drawn, no search box (the script makes it)
    assert!(!html.contains("class=\"flamebar\""), "no search box without scripts");
    let first = html
        .split("class=\"flame\"")
        .nth(1)
        .unwrap()
        .split("</svg>")
        .next()
        .unwrap();
    assert!(first.matches("<rect").count() > 3 && first.contains("samples, ") && first.contains("</text>"));
}
