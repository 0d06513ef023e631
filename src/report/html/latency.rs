//! Latency percentile curves per workload (on a "nines" axis, cut where
//! a cell's samples no longer resolve a percentile) and the per-second
//! time series of each cell.

use super::common::{color, figure, fmt_ns, fmt_plain, Group};
use crate::model::LatSummary;
use crate::report::compare::Comparison;
use crate::report::render::svg::{esc, Scale, Series, XyChart};
use std::fmt::Write;

/// Whether `n` samples resolve percentile `p` (in percent): the p-th
/// percentile needs at least 1/(1 - p) samples (p99.9: 1000), with fewer
/// it is only the largest sample under another name.
pub fn resolves(p: f64, n: u64) -> bool {
    n as f64 * (1.0 - p / 100.0) >= 1.0 - 1e-9
}

/// The fewest samples that resolve percentile `p` (1000 for p99.9).
fn samples_needed(p: f64) -> u64 {
    (1.0 / (1.0 - p / 100.0) - 1e-6).ceil() as u64
}

/// The latency samples behind a summary: its histogram's count, or the
/// operations when the result carries no histogram.
fn samples(l: &LatSummary, ops: u64) -> u64 {
    match l.histogram.buckets.iter().map(|b| b.1).sum::<u64>() {
        0 => ops,
        n => n,
    }
}

/// The percentiles a cell reports for one operation from p50 up, as far as
/// its `n` samples resolve them; and the first one left out.
fn percentile_points(l: &LatSummary, n: u64) -> (Vec<(f64, f64)>, Option<f64>) {
    let mut v: Vec<(f64, f64)> = l
        .percentiles
        .iter()
        .filter_map(|(k, &ns)| Some((k.parse::<f64>().ok()?, ns as f64)))
        .filter(|(p, _)| *p >= 50.0)
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let cut = v.iter().map(|p| p.0).find(|&p| !resolves(p, n));
    v.retain(|p| resolves(p.0, n));
    (v, cut)
}

/// A curve cut short: whose, its samples, its last percentile and the first left out.
struct Cut {
    who: String,
    n: u64,
    last: Option<f64>,
    dropped: f64,
}

/// What a percentile chart's caption says of the curves it cut short.
fn cut_caption(cuts: &[Cut]) -> String {
    let Some(first) = cuts.first() else {
        return String::new();
    };
    let to = |c: &Cut| match c.last {
        Some(p) => format!("to p{p}"),
        None => "no percentile from p50 up".into(),
    };
    let need = |c: &Cut| format!("p{} needs ≥ {} samples", c.dropped, samples_needed(c.dropped));
    if cuts.iter().all(|c| c.last == first.last && c.dropped == first.dropped) {
        let (lo, hi) = cuts
            .iter()
            .fold((u64::MAX, 0), |(lo, hi), c| (lo.min(c.n), hi.max(c.n)));
        let count = if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}–{hi}")
        };
        format!(
            "{} curve(s) drawn only {}: {count} samples each, and {}.",
            cuts.len(),
            to(first),
            need(first)
        )
    } else {
        let each: Vec<String> = cuts
            .iter()
            .map(|c| format!("{}: {} samples, {} ({})", c.who, c.n, to(c), need(c)))
            .collect();
        format!("Cut short: {}.", each.join("; "))
    }
}

pub(super) fn latency(s: &mut String, n: &mut usize, groups: &[Group], cmp: &Comparison) {
    s.push_str("<h2 id=\"latency\">Latency percentiles</h2>\n<p class=\"note\">One curve per cell (repeats share their filesystem's colour, later repeats dashed); both axes logarithmic, the x axis in nines. A curve ends at the highest percentile its sample count resolves: percentile p needs at least 1/(1 − p) samples (p99: 100, p99.9: 1000, p99.99: 10 000); with fewer it is only the largest sample.</p>\n");
    for (wl, cells) in groups {
        // operations in first-seen order
        let mut ops: Vec<String> = Vec::new();
        for (_, _, c) in cells {
            for d in &c.directions {
                let k = d.phase.clone().unwrap_or_else(|| d.dir.name().to_string());
                if !ops.contains(&k) {
                    ops.push(k);
                }
            }
        }
        if ops.is_empty() {
            continue;
        }
        let _ = writeln!(s, "<h3>{}</h3>\n<div class=\"grid\">", esc(wl));
        for op in &ops {
            let mut cuts = Vec::new();
            let series: Vec<Series> = cells
                .iter()
                .filter_map(|(fs, rep, c)| {
                    let d = c
                        .directions
                        .iter()
                        .find(|d| d.phase.clone().unwrap_or_else(|| d.dir.name().to_string()) == *op)?;
                    let count = samples(&d.lat, d.ops);
                    let (points, cut) = percentile_points(&d.lat, count);
                    let who = if c.lab.is_some() {
                        format!("{fs} #{rep}")
                    } else {
                        fs.clone()
                    };
                    let last = points.last().map(|p| p.0);
                    if let Some(dropped) = cut {
                        cuts.push(Cut {
                            who: who.clone(),
                            n: count,
                            last,
                            dropped,
                        });
                    }
                    Some(Series {
                        label: fs.clone(),
                        color: color(cmp, fs),
                        tip: format!(
                            "{who}: {count} samples, p50 to p{}",
                            last.map_or_else(|| "–".into(), |p| p.to_string())
                        ),
                        points,
                        dots: false,
                        dashed: *rep > 1,
                    })
                })
                .collect();
            let chart = XyChart {
                title: format!("{wl}: {op} latency"),
                x_label: "percentile".into(),
                y_label: "latency".into(),
                x_scale: Scale::Nines,
                y_scale: Scale::Log,
                series,
                bands: vec![],
                y_fmt: fmt_ns,
                x_fmt: |p| format!("p{p}"),
            };
            figure(s, n, "percentiles", &chart.render(), &cut_caption(&cuts));
        }
        s.push_str("</div>\n");
    }
}

pub(super) fn series_charts(s: &mut String, n: &mut usize, groups: &[Group], cmp: &Comparison) {
    let with: Vec<&Group> = groups
        .iter()
        .filter(|(_, cells)| cells.iter().any(|(_, _, c)| !c.series.is_empty()))
        .collect();
    if with.is_empty() {
        return;
    }
    s.push_str("<h2 id=\"series\">Over time</h2>\n<p class=\"note\">Per second of measurement, all jobs and operation kinds together.</p>\n");
    for (wl, cells) in with {
        let _ = writeln!(s, "<h3>{}</h3>\n<div class=\"grid\">", esc(wl));
        let line = |f: &dyn Fn(&crate::stats::series::IntervalPoint) -> f64| -> Vec<Series> {
            cells
                .iter()
                .filter(|(_, _, c)| !c.series.is_empty())
                .map(|(fs, rep, c)| Series {
                    label: fs.clone(),
                    color: color(cmp, fs),
                    points: c.series.iter().map(|p| (p.t_s as f64, f(p))).collect(),
                    dots: false,
                    dashed: *rep > 1,
                    tip: if c.lab.is_some() {
                        format!("{fs} #{rep}")
                    } else {
                        fs.clone()
                    },
                })
                .collect()
        };
        let has_bytes = cells
            .iter()
            .any(|(_, _, c)| c.series.iter().any(|p| p.kinds.values().any(|k| k.bytes > 0)));
        let mut charts = vec![(
            "operations/s",
            line(&|p| p.kinds.values().map(|k| k.ops as f64).sum()),
            Scale::Linear,
            fmt_plain as fn(f64) -> String,
        )];
        if has_bytes {
            charts.push((
                "MB/s",
                line(&|p| p.kinds.values().map(|k| k.bytes as f64).sum::<f64>() / 1e6),
                Scale::Linear,
                fmt_plain,
            ));
        }
        charts.push((
            "p99 latency",
            line(&|p| p.kinds.values().map(|k| k.p99_ns).max().unwrap_or(0) as f64),
            Scale::Log,
            fmt_ns,
        ));
        for (what, series, y_scale, y_fmt) in charts {
            let chart = XyChart {
                title: format!("{wl}: {what} per second"),
                x_label: "seconds".into(),
                y_label: what.into(),
                x_scale: Scale::Linear,
                y_scale,
                series,
                bands: vec![],
                y_fmt,
                x_fmt: fmt_plain,
            };
            figure(s, n, "series", &chart.render(), "");
        }
        s.push_str("</div>\n");
    }
}
