//! `fslab report` and `--output html`: one self-contained HTML page (inline
//! SVG and CSS, no network; a script only to zoom and search flame graphs,
//! which read without it) with the environment of every result,
//! bar charts with 95% CI whiskers and baseline ratios for plans, latency
//! percentile curves per cell, per-second time series, probe timelines with
//! phases shaded and stalls marked, and per-operation tables. A pure
//! function of the reports: the same input gives the same bytes.

//!
//! One file per section of the page, in the order they appear; `common`
//! holds what they share. This file puts the page together.

mod anatomy;
mod common;
mod comparison;
mod environment;
pub mod flame;
mod latency;
mod probes;
mod system;
mod tables;
mod toc;

pub use latency::resolves;

use crate::model::Report;
use crate::report::compare;
use crate::report::render::svg::esc;
use crate::report::render::Reporter;
use std::fmt::Write;

pub struct Html;

impl Reporter for Html {
    fn render(&self, r: &Report) -> Vec<u8> {
        render(&[(String::new(), r)]).into_bytes()
    }
}

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:1800px}
h1{font-size:1.6em}h2{border-bottom:2px solid #0072B2;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f2f2f2}
.grid{display:flex;flex-wrap:wrap;gap:.6em}figure.chart{margin:0;border:1px solid #e4e4e4;background:#fff}
figure.chart figcaption{font-size:.8em;color:#555;padding:.2em .5em;max-width:540px}
svg text{font-family:system-ui,sans-serif;font-size:11px;fill:#222}svg text.t{font-size:13px;font-weight:600}
svg text.n{font-size:11px;font-weight:600}svg text.b{font-size:10px;fill:#444}
table.env td,table.env th{text-align:left}.sig{font-weight:700}
.tables{display:flex;flex-wrap:wrap;gap:0 2em;align-items:flex-start}.cmpt h3{margin:.6em 0 .2em}.cmpt p{max-width:44em}
table.cmp td{white-space:nowrap}.better{color:#007a4d;font-weight:700}.worse{color:#c0392b;font-weight:700}.note{color:#555;font-size:.9em}.fail{color:#b00}
svg{max-width:100%;height:auto}figure.chart{max-width:100%;min-width:0}.scroll{overflow-x:auto;max-width:100%}.cmpt{max-width:100%;min-width:0}
body{overflow-wrap:break-word}nav.toc{background:#f6f8fa;border:1px solid #e4e4e4;padding:.4em .8em;font-size:.9em}nav.toc ol{margin:.3em 0;padding-left:1.4em}nav.toc .subs{color:#555;font-size:.92em}
a.totop{position:fixed;right:.8em;bottom:.8em;background:#fff;border:1px solid #ccc;border-radius:4px;padding:.15em .5em;font-size:.85em;text-decoration:none}
@media print{body{margin:0}figure.chart{break-inside:avoid}details{display:block}nav.toc,a.totop{display:none}}";

/// Renders the page for one or more results (`label` names a result that is
/// not a plan run, as in `fslab compare`).
pub fn render(sources: &[(String, &Report)]) -> String {
    let cmp = compare::build(sources, None);
    let groups = common::groups(sources);
    let mut body = String::new();
    let mut n = 0;
    environment::environment(&mut body, sources, &cmp);
    if cmp.filesystems.len() > 1 {
        comparison::comparison(&mut body, &mut n, &cmp);
    }
    latency::latency(&mut body, &mut n, &groups, &cmp);
    latency::series_charts(&mut body, &mut n, &groups, &cmp);
    probes::probes(&mut body, &mut n, sources);
    // per-cell extras: the system timelines (cell.system); flame graphs go after them
    system::system_timelines(&mut body, &mut n, sources);
    anatomy::section(&mut body, &mut n, sources);
    tables::op_tables(&mut body, sources);
    tables::ranks(&mut body, sources);
    n += flame::section(&mut body, sources);
    // wide tables scroll in their own box, not the page
    let body = body
        .replace("<table", "<div class=\"scroll\"><table")
        .replace("</table>", "</table></div>");
    let (body, nav) = toc::contents(&body);
    let interrupted = sources.iter().any(|(_, r)| r.interrupted);
    let title = sources
        .iter()
        .map(|(l, r)| match &r.lab {
            Some(lab) => lab.name.clone(),
            None if l.is_empty() => r.command.clone(),
            None => l.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ");
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"fslab-charts\" content=\"{n}\"><title>fslab report: {t}</title><style>{CSS}</style></head><body>\n<h1>fslab report: {t}</h1>\n",
        t = esc(&title)
    );
    if interrupted {
        s.push_str("<p class=\"fail\">Interrupted: results cover the time before the stop.</p>\n");
    }
    s.push_str(&nav);
    s.push_str(&body);
    s.push_str("<p class=\"note\">Made by fslab from its result files; every number here is in them (docs/results.md).</p>\n</body></html>\n");
    s
}
