//! `fslab report` and `--output html`: one self-contained HTML page (inline
//! SVG and CSS, no script, no network) with the environment of every result,
//! bar charts with 95% CI whiskers and baseline ratios for plans, latency
//! percentile curves per cell, per-second time series, probe timelines with
//! phases shaded and stalls marked, and per-operation tables. A pure
//! function of the reports: the same input gives the same bytes.

use super::compare::{self, Comparison, Row, Unit, WorkloadCmp};
use super::render::svg::{self, esc, Band, Bar, BarGroup, Scale, Series, XyChart, PALETTE};
use crate::model::{Cell, CellKind, LatSummary, Report};
use crate::report::render::Reporter;
use crate::units::{fmt_rate, Bytes, Nanos};
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
@media print{body{margin:0}figure.chart{break-inside:avoid}details{display:block}}";

fn fmt_ns(v: f64) -> String {
    Nanos(v.max(0.0).round() as u64)
        .to_string()
        .replace(".00 ", " ")
        .replace(".0 ", " ")
}

fn fmt_plain(v: f64) -> String {
    if v.abs() >= 1e4 {
        fmt_rate(v)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn fmt_pct(v: f64) -> String {
    format!("{v:.0}%")
}

fn fmt_unit(u: Unit) -> fn(f64) -> String {
    match u {
        Unit::Ns => fmt_ns,
        Unit::Percent => fmt_pct,
        Unit::Rate | Unit::MBs | Unit::Count => fmt_plain,
    }
}

/// A chart in its figure; `n` counts them.
fn figure(s: &mut String, n: &mut usize, kind: &str, svg: &str, caption: &str) {
    *n += 1;
    let _ = write!(s, r#"<figure class="chart" data-kind="{kind}">{svg}"#);
    if !caption.is_empty() {
        let _ = write!(s, "<figcaption>{}</figcaption>", esc(caption));
    }
    s.push_str("</figure>\n");
}

/// Filesystem (or file label) and workload of a cell, as the comparison names them.
fn place(label: &str, c: &Cell) -> (String, String) {
    match &c.lab {
        Some(t) => (t.column(), t.workload.clone()),
        None => (label.to_string(), c.name.clone()),
    }
}

/// Cells grouped by workload, in first-seen order: (workload, [(filesystem, repeat, cell)]).
type Group<'a> = (String, Vec<(String, u32, &'a Cell)>);

fn groups<'a>(sources: &[(String, &'a Report)]) -> Vec<Group<'a>> {
    let mut out: Vec<Group<'a>> = Vec::new();
    for (label, r) in sources {
        for c in r.cells.iter().filter(|c| c.error.is_none()) {
            let (fs, wl) = place(label, c);
            let rep = c.lab.as_ref().map(|l| l.repeat).unwrap_or(1);
            match out.iter_mut().find(|g| g.0 == wl) {
                Some(g) => g.1.push((fs, rep, c)),
                None => out.push((wl, vec![(fs, rep, c)])),
            }
        }
    }
    out
}

fn color(cmp: &Comparison, fs: &str) -> String {
    let i = cmp.filesystems.iter().position(|f| f == fs).unwrap_or(0);
    PALETTE[i % PALETTE.len()].to_string()
}

fn environment(s: &mut String, sources: &[(String, &Report)], cmp: &Comparison) {
    s.push_str("<h2 id=\"environment\">Environment</h2>\n<table class=\"env\"><tr><th>result</th><th>command</th><th>started</th><th>host</th><th>kernel</th><th>CPU</th><th>memory</th><th>fslab</th><th>peak RSS</th></tr>\n");
    for (label, r) in sources {
        let cmd = match &r.lab {
            Some(l) => format!("run {}", l.file.as_deref().unwrap_or("(quick suite)")),
            None => r.command.clone(),
        };
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} {}</td><td>{} ({} cores)</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(if label.is_empty() { "-" } else { label }),
            esc(&cmd),
            esc(&r.started_at),
            esc(&r.host.hostname),
            esc(&r.host.kernel),
            esc(&r.host.arch),
            esc(&r.host.cpu_model),
            r.host.cores,
            Bytes(r.host.memory_bytes),
            esc(&r.fslab_version),
            Bytes(r.max_rss_kib * 1024),
        );
    }
    s.push_str("</table>\n<table class=\"env\"><tr><th>filesystem</th><th>type</th><th>made with</th><th>mount options</th><th>device</th><th>O_DIRECT</th></tr>\n");
    for fs in &cmp.filesystems {
        let Some(c) = sources
            .iter()
            .flat_map(|(l, r)| r.cells.iter().map(move |c| (l, c)))
            .find(|(l, c)| place(l, c).0 == *fs && c.error.is_none())
            .map(|(_, c)| c)
        else {
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td colspan=\"5\" class=\"fail\">no cell ran</td></tr>",
                esc(fs)
            );
            continue;
        };
        let t = &c.target;
        let scratch = c.lab.as_ref().and_then(|l| l.scratch.as_ref());
        let made = match scratch {
            Some(sc) if sc.fs_type == "raw" => format!("raw loop device, {} image", Bytes(sc.size)),
            Some(sc) if sc.fs_type == "tmpfs" => format!("tmpfs, {}", Bytes(sc.size)),
            Some(sc) => format!(
                "mkfs.{} {} ({} image)",
                sc.fs_type,
                sc.mkfs_args.join(" "),
                Bytes(sc.size)
            ),
            None => "existing".into(),
        };
        let mut dev = t.device.clone().unwrap_or_default();
        if let Some(b) = &t.loop_backing_file {
            let _ = write!(dev, " (loop on {b})");
        }
        if let Some(d) = scratch.and_then(|x| x.loop_direct_io).or(t.loop_direct_io) {
            let _ = write!(dev, ", loop dio {}", if d { "on" } else { "off" });
        }
        if let Some(q) = &t.queue {
            let _ = write!(dev, ", scheduler {}", q.scheduler);
        }
        if let Some(k) = super::compare::kernel_note(c) {
            let _ = write!(dev, ", {k}");
        }
        let direct = sources
            .iter()
            .flat_map(|(l, r)| r.cells.iter().map(move |c| (l, c)))
            .filter(|(l, c)| place(l, c).0 == *fs)
            .find_map(|(_, c)| c.target.direct_honoured)
            .map(|h| if h { "honoured" } else { "ignored (page cache)" })
            .unwrap_or("not used");
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(fs),
            esc(&t.fs_type),
            esc(&made),
            esc(t.mount_options.as_deref().unwrap_or("")),
            esc(&dev),
            direct
        );
    }
    s.push_str("</table>\n");
}

/// A p-value as the comparison table shows it.
fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "&lt; 0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// The filesystems a workload ran on (or failed on), in comparison order.
fn used_filesystems(cmp: &Comparison, w: &WorkloadCmp) -> Vec<usize> {
    (0..cmp.filesystems.len())
        .filter(|&i| {
            w.rows.iter().any(|r| r.cols.get(i).is_some_and(|c| c.is_some()))
                || w.failed.iter().any(|(f, _)| *f == cmp.filesystems[i])
        })
        .collect()
}

/// One workload's comparison as a table: per metric each filesystem's mean
/// ± 95% CI, and beside every filesystem but the baseline its ratio to the
/// baseline and Welch's p-value; the ratio is marked * and coloured (better
/// or worse, by the metric's direction) where p < ALPHA. The figures are
/// `compare::build`'s, formatted as `fslab compare` prints them.
fn comparison_table(s: &mut String, cmp: &Comparison, w: &WorkloadCmp) {
    let used = used_filesystems(cmp, w);
    if used.is_empty() {
        return;
    }
    let base = &cmp.baseline;
    let head_name = |f: &String| {
        let mut h = esc(f);
        if f == base && used.len() > 1 {
            h.push_str(" (baseline)");
        }
        if cmp.flagged.iter().any(|x| x.0 == *f) {
            let _ = write!(h, " <span title=\"not comparable\">{}</span>", compare::MARK);
        }
        if w.disturbed.iter().any(|d| d.0 == *f) {
            h.push_str(" <span class=\"dist\" title=\"disturbed cells\">!</span>");
        }
        h
    };
    let _ = write!(
        s,
        "<div class=\"cmpt\"><h3>{}</h3>\n<table class=\"cmp\" data-workload=\"{}\"><tr><th rowspan=\"2\">metric</th>",
        esc(&w.name),
        esc(&w.name)
    );
    for &i in &used {
        let f = &cmp.filesystems[i];
        if f == base {
            let _ = write!(s, "<th>{}</th>", head_name(f));
        } else {
            let _ = write!(s, "<th colspan=\"3\">{}</th>", head_name(f));
        }
    }
    s.push_str("</tr>\n<tr>");
    for &i in &used {
        if cmp.filesystems[i] == *base {
            s.push_str("<th>mean ± 95% CI</th>");
        } else {
            let _ = write!(s, "<th>mean ± 95% CI</th><th>× {}</th><th>p</th>", esc(base));
        }
    }
    s.push_str("</tr>\n");
    for r in &w.rows {
        let _ = write!(
            s,
            "<tr data-metric=\"{}\"><td>{} {}</td>",
            esc(&r.metric),
            esc(&r.metric),
            if r.higher_is_better { "↑" } else { "↓" }
        );
        for &i in &used {
            let f = &cmp.filesystems[i];
            let col = r.cols.get(i).and_then(|c| c.as_ref());
            let value = match col {
                Some(c) => {
                    let mut v = compare::fmt_value(c.est.mean, r.unit);
                    if let Some(ci) = c.est.ci95 {
                        let _ = write!(v, " ± {}", compare::fmt_value(ci, r.unit));
                    }
                    esc(&v)
                }
                None if w.failed.iter().any(|(x, _)| x == f) => "<span class=\"fail\">failed</span>".into(),
                None => "–".into(),
            };
            let _ = write!(s, "<td data-fs=\"{}\">{value}</td>", esc(f));
            if f == base {
                continue;
            }
            match col.and_then(|c| Some((c, c.ratio?))) {
                Some((c, ratio)) if c.marked => {
                    let _ = write!(
                        s,
                        "<td title=\"involves a flagged column: not comparable\">{ratio:.2}×{}</td><td>{}</td>",
                        compare::MARK,
                        c.p.map(fmt_p).unwrap_or_else(|| "–".into())
                    );
                }
                Some((c, ratio)) => {
                    let class = match (c.significant(), (ratio > 1.0) == r.higher_is_better) {
                        _ if ratio == 1.0 => "",
                        (true, true) => " class=\"better\"",
                        (true, false) => " class=\"worse\"",
                        (false, _) => "",
                    };
                    let _ = write!(
                        s,
                        "<td{class}>{ratio:.2}×{}</td><td>{}</td>",
                        if c.significant() { "*" } else { "" },
                        c.p.map(fmt_p).unwrap_or_else(|| "–".into())
                    );
                }
                None => s.push_str("<td>–</td><td>–</td>"),
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    if !w.differs.is_empty() {
        let _ = writeln!(
            s,
            "<p class=\"fail\">≠ not the same workload, the figures measure different work: {}</p>",
            esc(&compare::differences(w))
        );
    }
    for (f, e) in &w.failed {
        let _ = writeln!(s, "<p class=\"fail\">{}: failed: {}</p>", esc(f), esc(e));
    }
    if let Some(l) = compare::bounds_line(w) {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", esc(&l));
    }
    if !w.disturbed.is_empty() {
        let each: Vec<String> = w
            .disturbed
            .iter()
            .map(|(f, k, of)| format!("{}: {k} of {of} cell(s) disturbed", esc(f)))
            .collect();
        let _ = writeln!(
            s,
            "<p class=\"dist\" style=\"color:#D00\">! {} (other processes or the hypervisor's steal took CPU; see the system timelines)</p>",
            each.join("; ")
        );
    }
    s.push_str("</div>\n");
}

/// The comparison: a table per workload, then one grouped bar chart per
/// metric (every workload that has it, every filesystem in each).
fn comparison(s: &mut String, n: &mut usize, cmp: &Comparison) {
    let repeats = cmp.max_repeats();
    let how = if repeats > 1 {
        format!(
            "mean over up to {repeats} repeats ± the half-width of its 95% confidence interval (Student t); × {b}: the mean over {b}'s, marked * and coloured (<span class=\"better\">better</span>, <span class=\"worse\">worse</span>) where the difference is significant; p: Welch's t-test, * where p &lt; {a}",
            b = esc(&cmp.baseline),
            a = compare::ALPHA
        )
    } else {
        format!(
            "one run per cell: no confidence interval or significance (give repeat = 3 or more); × {b}: the value over {b}'s",
            b = esc(&cmp.baseline)
        )
    };
    let base = if cmp.baseline.is_empty() {
        // every column flagged: compare::flag_notes says why
        "No baseline, no ratios".to_string()
    } else {
        format!("Baseline <b>{}</b>", esc(&cmp.baseline))
    };
    let _ = writeln!(
        s,
        "<h2 id=\"comparison\">Comparison</h2>\n<p class=\"note\">{base}. {how}. ↑ higher is better, ↓ lower is better.</p>\n<div class=\"tables\">",
    );
    for l in compare::flag_notes(cmp) {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", esc(&l));
    }
    for w in &cmp.workloads {
        comparison_table(s, cmp, w);
    }
    s.push_str("</div>\n<h3>Charts</h3>\n<p class=\"note\">One chart per metric: every workload that measured it, a bar per filesystem; whiskers: the 95% confidence interval; under each bar its ratio to the baseline, * where significant.</p>\n<div class=\"grid\">\n");
    // metrics in first-seen order over the workloads
    let mut metrics: Vec<&Row> = Vec::new();
    for w in &cmp.workloads {
        for r in &w.rows {
            if !metrics.iter().any(|m| m.metric == r.metric) {
                metrics.push(r);
            }
        }
    }
    for m in metrics {
        let mut in_chart: Vec<usize> = Vec::new();
        let groups: Vec<BarGroup> = cmp
            .workloads
            .iter()
            .filter_map(|w| {
                let r = w.rows.iter().find(|r| r.metric == m.metric)?;
                let bars: Vec<Bar> = r
                    .cols
                    .iter()
                    .enumerate()
                    .filter_map(|(i, c)| {
                        let c = c.as_ref()?;
                        let fs = &cmp.filesystems[i];
                        if !in_chart.contains(&i) {
                            in_chart.push(i);
                        }
                        Some(Bar {
                            label: fs.clone(),
                            value: c.est.mean,
                            ci: c.est.ci95,
                            note: c
                                .ratio
                                .map(|x| {
                                    let mark = match (c.marked, c.significant()) {
                                        (true, _) => compare::MARK.to_string(),
                                        (false, true) => "*".into(),
                                        (false, false) => String::new(),
                                    };
                                    format!("{x:.2}×{mark}")
                                })
                                .unwrap_or_default(),
                            color: color(cmp, fs),
                        })
                    })
                    .collect();
                Some(BarGroup {
                    label: w.name.clone(),
                    bars,
                })
            })
            .collect();
        in_chart.sort_unstable();
        let legend: Vec<(String, String)> = in_chart
            .iter()
            .map(|&i| {
                let f = &cmp.filesystems[i];
                let name = if *f == cmp.baseline && in_chart.len() > 1 {
                    format!("{f} (baseline)")
                } else {
                    f.clone()
                };
                (name, color(cmp, f))
            })
            .collect();
        let title = format!("{} {}", m.metric, if m.higher_is_better { "↑" } else { "↓" });
        figure(
            s,
            n,
            "bars",
            &svg::grouped_bars(&title, &groups, fmt_unit(m.unit), &legend),
            "",
        );
    }
    s.push_str("</div>\n");
}

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

fn latency(s: &mut String, n: &mut usize, groups: &[Group], cmp: &Comparison) {
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

fn series_charts(s: &mut String, n: &mut usize, groups: &[Group], cmp: &Comparison) {
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

fn probes(s: &mut String, n: &mut usize, sources: &[(String, &Report)]) {
    let cells: Vec<(&String, &Cell)> = sources
        .iter()
        .flat_map(|(l, r)| r.cells.iter().map(move |c| (l, c)))
        .filter(|(_, c)| c.probe.is_some())
        .collect();
    if cells.is_empty() {
        return;
    }
    s.push_str("<h2 id=\"probes\">Probe timelines</h2>\n<p class=\"note\">Every probe's latency at its scheduled time; phases shaded, stalls (probes over the threshold, with the slots they blocked) in red.</p>\n<div class=\"grid\">\n");
    for (label, c) in cells {
        let p = c.probe.as_ref().expect("filtered");
        let sec = |ns: u64| ns as f64 / 1e9;
        let mut bands: Vec<Band> = p
            .phases
            .iter()
            .enumerate()
            .flat_map(|(i, ph)| {
                let opacity = if i % 2 == 0 { 0.10 } else { 0.18 };
                let color = if ph.name == "load" { "#E69F00" } else { "#888" };
                // a load that wrote its size early: shaded only while it ran
                let loaded_to = ph.load_end_ns.unwrap_or(ph.end_ns);
                let mut b = vec![Band {
                    from: sec(ph.start_ns),
                    to: sec(loaded_to),
                    label: ph.name.clone(),
                    color: color.into(),
                    opacity,
                }];
                if loaded_to < ph.end_ns {
                    b.push(Band {
                        from: sec(loaded_to),
                        to: sec(ph.end_ns),
                        label: format!("{} (load done)", ph.name),
                        color: "#888".into(),
                        opacity,
                    });
                }
                b
            })
            .collect();
        bands.extend(p.stalls.iter().map(|st| Band {
            from: sec(st.start_ns),
            to: sec(st.end_ns),
            label: format!("stall {}", fmt_ns(st.max_ns as f64)),
            color: "#D00".into(),
            opacity: 0.35,
        }));
        let ok: Vec<(f64, f64)> = p
            .samples
            .iter()
            .filter(|x| x.errno == 0)
            .map(|x| (sec(x.t_ns), x.sched_lat_ns as f64))
            .collect();
        let failed: Vec<(f64, f64)> = p
            .samples
            .iter()
            .filter(|x| x.errno != 0)
            .map(|x| (sec(x.t_ns), x.sched_lat_ns as f64))
            .collect();
        let mut series = vec![Series {
            label: format!("{} probe", p.op),
            color: PALETTE[0].into(),
            points: ok,
            dots: true,
            dashed: false,
            tip: String::new(),
        }];
        if !failed.is_empty() {
            series.push(Series {
                label: "failed".into(),
                color: "#D00".into(),
                points: failed,
                dots: true,
                dashed: false,
                tip: String::new(),
            });
        }
        let (fs, _) = place(label, c);
        let chart = XyChart {
            title: format!(
                "{}{}: {} latency over time",
                c.name,
                c.lab.as_ref().map(|l| format!(" #{}", l.repeat)).unwrap_or_default(),
                p.op
            ),
            x_label: "seconds".into(),
            y_label: "latency from scheduled slot".into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Log,
            series,
            bands,
            y_fmt: fmt_ns,
            x_fmt: fmt_plain,
        };
        let caption = format!(
            "{fs}: {} stall(s) over {}; load: {}",
            p.stalls.len(),
            fmt_ns(p.stall_ns as f64),
            p.load.as_deref().unwrap_or("none")
        );
        figure(s, n, "timeline", &chart.render(), &caption);
    }
    s.push_str("</div>\n");
}

/// Intervals (start, end, value) as a step line: each value held over its interval.
fn steps(intervals: impl Iterator<Item = (f64, f64, f64)>) -> Vec<(f64, f64)> {
    intervals.flat_map(|(a, b, v)| [(a, v), (b, v)]).collect()
}

/// Per cell with telemetry: one timeline of stacked panels on a shared time
/// axis (throughput, p99 latency, device %util and await, the CPU split,
/// dirty memory), its phases shaded, disturbed cells framed in red; then a
/// table of where the time goes.
fn system_timelines(s: &mut String, n: &mut usize, sources: &[(String, &Report)]) {
    use super::system as sy;
    let cells: Vec<(&String, &Cell)> = sources
        .iter()
        .flat_map(|(l, r)| r.cells.iter().map(move |c| (l, c)))
        .filter(|(_, c)| c.error.is_none() && c.system.is_some())
        .collect();
    if cells.is_empty() {
        return;
    }
    s.push_str("<style>figure.chart[data-disturbed]{border:2px solid #D00}.dist{color:#D00;font-weight:700}.badge{border:1px solid #888;border-radius:3px;padding:0 3px;font-size:90%}table.sys td:nth-child(2),table.sys td:last-child{text-align:left}table.sys td:nth-child(11),table.sys td:nth-child(12){white-space:nowrap}</style>\n<h2 id=\"system\">System timelines</h2>\n<p class=\"note\">Per cell, on one time axis (seconds since the first timed phase; each value is held over its interval): fslab's throughput and p99 latency, each device's %util and await, the machine's CPU split (stacked, % of all CPUs; fslab's own dashed), Dirty and Writeback memory. Timed phases shaded; cells that other processes disturbed are framed in red.</p>\n<div class=\"grid\">\n");
    let line = |label: String, color: &str, points: Vec<(f64, f64)>, dashed: bool| Series {
        label,
        color: color.into(),
        points,
        dots: false,
        dashed,
        tip: String::new(),
    };
    for (label, c) in &cells {
        let sys = c.system.as_ref().expect("filtered");
        let mut panels = Vec::new();
        if !c.series.is_empty() {
            let mut kinds: Vec<crate::stats::OpKind> = Vec::new();
            for p in &c.series {
                for k in p.kinds.keys() {
                    if !kinds.contains(k) {
                        kinds.push(*k);
                    }
                }
            }
            let bytes = c.series.iter().any(|p| p.kinds.values().any(|k| k.bytes > 0));
            panels.push(svg::Panel {
                title: if bytes { "MB/s".into() } else { "operations/s".into() },
                y_scale: Scale::Linear,
                y_fmt: fmt_plain,
                series: kinds
                    .iter()
                    .enumerate()
                    .map(|(i, k)| {
                        let pts = steps(c.series.iter().map(|p| {
                            let d = p.dir(*k);
                            let v = if bytes { d.bytes as f64 / 1e6 } else { d.ops as f64 };
                            (p.t_s as f64, (p.t_s + 1) as f64, v)
                        }));
                        line(k.name().into(), PALETTE[i % PALETTE.len()], pts, false)
                    })
                    .collect(),
                stacked: false,
                y_max: None,
            });
            panels.push(svg::Panel {
                title: "p99 latency".into(),
                y_scale: Scale::Log,
                y_fmt: fmt_ns,
                series: kinds
                    .iter()
                    .enumerate()
                    .map(|(i, k)| {
                        let pts = steps(
                            c.series
                                .iter()
                                .map(|p| (p.t_s as f64, (p.t_s + 1) as f64, p.dir(*k).p99_ns as f64)),
                        );
                        line(k.name().into(), PALETTE[i % PALETTE.len()], pts, false)
                    })
                    .collect(),
                stacked: false,
                y_max: None,
            });
        }
        let sec = |t_ms: u64| t_ms as f64 / 1e3;
        // an interval ending at t_ms, len_ms long
        let span = |t_ms: u64, len_ms: u64| (sec(t_ms.saturating_sub(len_ms)), sec(t_ms));
        if !sys.devices.is_empty() {
            panels.push(svg::Panel {
                title: "device %util".into(),
                y_scale: Scale::Linear,
                y_fmt: fmt_pct,
                series: sys
                    .devices
                    .iter()
                    .enumerate()
                    .map(|(i, d)| {
                        let pts = steps(d.samples.iter().map(|p| {
                            let (a, b) = span(p.t_ms, p.len_ms);
                            (a, b, p.util_pct)
                        }));
                        line(d.name.clone(), PALETTE[i % PALETTE.len()], pts, false)
                    })
                    .collect(),
                stacked: false,
                y_max: Some(100.0),
            });
            let mut awaits = Vec::new();
            for (i, d) in sys.devices.iter().enumerate() {
                let col = PALETTE[i % PALETTE.len()];
                if d.total.read_ios > 0 || d.samples.iter().any(|p| p.read_ios > 0) {
                    let pts = steps(d.samples.iter().map(|p| {
                        let (a, b) = span(p.t_ms, p.len_ms);
                        (a, b, p.r_await_ms * 1e6)
                    }));
                    awaits.push(line(format!("{} r_await", d.name), col, pts, false));
                }
                if d.total.write_ios > 0 || d.samples.iter().any(|p| p.write_ios > 0) {
                    let pts = steps(d.samples.iter().map(|p| {
                        let (a, b) = span(p.t_ms, p.len_ms);
                        (a, b, p.w_await_ms * 1e6)
                    }));
                    awaits.push(line(format!("{} w_await", d.name), col, pts, true));
                }
            }
            if !awaits.is_empty() {
                panels.push(svg::Panel {
                    title: "device await".into(),
                    y_scale: Scale::Linear,
                    y_fmt: fmt_ns,
                    series: awaits,
                    stacked: false,
                    y_max: None,
                });
            }
        }
        if !sys.samples.is_empty() {
            let at = |f: &dyn Fn(&crate::model::system::SystemPoint) -> f64| -> Vec<(f64, f64)> {
                steps(sys.samples.iter().map(|p| {
                    let (a, b) = span(p.t_ms, p.len_ms);
                    (a, b, f(p))
                }))
            };
            let cpu = |f: fn(&crate::model::system::CpuSplit) -> f64| at(&|p| f(&p.cpu));
            panels.push(svg::Panel {
                title: "CPU (% of all CPUs)".into(),
                y_scale: Scale::Linear,
                y_fmt: fmt_pct,
                series: vec![
                    line("usr".into(), "#0072B2", cpu(|c| c.user + c.nice), false),
                    line("sys".into(), "#D55E00", cpu(|c| c.system), false),
                    line("iowait".into(), "#E69F00", cpu(|c| c.iowait), false),
                    line("irq+soft".into(), "#CC79A7", cpu(|c| c.irq + c.softirq), false),
                    line("steal".into(), "#000000", cpu(|c| c.steal), false),
                    line("fslab".into(), "#009E73", at(&|p| p.fslab_pct), true),
                ],
                stacked: true,
                y_max: Some(100.0),
            });
            let mem = |f: fn(&crate::model::system::SystemPoint) -> u64| at(&|p| f(p) as f64 / 1024.0);
            panels.push(svg::Panel {
                title: "dirty memory".into(),
                y_scale: Scale::Linear,
                y_fmt: |v| format!("{} MiB", fmt_plain(v)),
                series: vec![
                    line("Dirty".into(), "#0072B2", mem(|p| p.dirty_kib), false),
                    line("Writeback".into(), "#D55E00", mem(|p| p.writeback_kib), false),
                ],
                stacked: false,
                y_max: None,
            });
        }
        let bands = sys
            .phases
            .iter()
            .enumerate()
            .map(|(i, ph)| Band {
                from: sec(ph.start_ms),
                to: sec(ph.end_ms),
                label: ph.name.clone(),
                color: "#888".into(),
                opacity: if i % 2 == 0 { 0.08 } else { 0.16 },
            })
            .collect();
        let title = match &c.lab {
            Some(l) => format!("{} #{}: system", c.name, l.repeat),
            None if label.is_empty() => format!("{}: system", c.name),
            None => format!("{label} {}: system", c.name),
        };
        let disturbed = sys.interference.disturbed;
        let i = &sys.interference;
        let tl = svg::Timeline {
            title,
            panels,
            bands,
            alert: disturbed.then(|| {
                format!(
                    "DISTURBED: others {:.1}% of the CPUs, steal {:.1}% (threshold {:.1}%)",
                    i.other_cpu_pct, i.steal_pct, i.cpu_threshold_pct
                )
            }),
            x_fmt: fmt_plain,
        };
        let mut caption = vec![sy::stack_line(sys)];
        caption.extend(sy::share_lines(sys));
        caption.push(format!("cpu: {}", sy::cpu_line(&sys.total)));
        caption.push(sy::interference_line(sys));
        caption.extend(sy::rerun_lines(sys));
        caption.extend(sy::xattrs_line(c));
        caption.extend(sy::profile_line(c));
        *n += 1;
        let _ = writeln!(
            s,
            "<figure class=\"chart\" data-kind=\"system\"{}>{}<figcaption>{}</figcaption></figure>",
            if disturbed { " data-disturbed=\"true\"" } else { "" },
            tl.render(),
            caption
                .iter()
                .filter(|l| !l.is_empty())
                .map(|l| esc(l))
                .collect::<Vec<_>>()
                .join("<br>")
        );
    }
    s.push_str("</div>\n<h3>Where the time goes</h3>\n<p class=\"note\">Each device's figures over the cell (iostat -x); per direction its await beside fslab's mean latency, and its share: the device's request time over fslab's operation time.</p>\n<table class=\"sys\"><tr><th>cell</th><th>device</th><th>r/s</th><th>w/s</th><th>rMB/s</th><th>wMB/s</th><th>r_await</th><th>w_await</th><th>aqu-sz</th><th>%util</th><th>read share</th><th>write share</th><th>others' CPU</th><th>state</th></tr>\n");
    for (label, c) in &cells {
        let sys = c.system.as_ref().expect("filtered");
        let (fs, _) = place(label, c);
        let rep = c.lab.as_ref().map(|l| format!(" #{}", l.repeat)).unwrap_or_default();
        let mut state = if sys.interference.disturbed {
            format!("<td class=\"dist\">{}", esc(&sy::interference_line(sys)))
        } else {
            "<td>quiet".to_string()
        };
        // the cell's verdict as a badge: its bound, the whole line on hover
        if let Some(v) = &c.verdict {
            let _ = write!(
                state,
                " <span class=\"badge\" title=\"{}\">{}{}</span>",
                esc(&v.line()),
                v.bound.name(),
                if v.flags.is_empty() { "" } else { " ⚑" }
            );
        }
        state.push_str("</td>");
        let share = |dev: &str, dir: crate::stats::OpKind| {
            sys.latency_share
                .iter()
                .find(|l| l.device == dev && l.dir == dir)
                .map(|l| match l.share_pct {
                    Some(p) => format!(
                        "{} of {} ({p:.0}%)",
                        fmt_ns(l.await_us * 1e3),
                        fmt_ns(l.mean_lat_us * 1e3)
                    ),
                    None => match &l.unattributed {
                        Some(why) => format!("{} <span title=\"{}\">(—)</span>", fmt_ns(l.await_us * 1e3), esc(why)),
                        None => fmt_ns(l.await_us * 1e3),
                    },
                })
                .unwrap_or_default()
        };
        for (i, d) in sys.devices.iter().enumerate() {
            let t = &d.total;
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.2}</td><td>{:.2}</td><td>{:.2} ms</td><td>{:.2} ms</td><td>{:.2}</td><td>{:.1}%</td><td>{}</td><td>{}</td><td>{}</td>{}</tr>",
                if i == 0 { esc(format!("{fs}{rep} {}", c.name).trim()) } else { String::new() },
                esc(&sy::device_label(d)),
                t.r_s,
                t.w_s,
                t.rmb_s,
                t.wmb_s,
                t.r_await_ms,
                t.w_await_ms,
                t.aqu_sz,
                t.util_pct,
                esc(&share(&d.name, crate::stats::OpKind::Read)),
                esc(&share(&d.name, crate::stats::OpKind::Write)),
                if i == 0 { format!("{:.1}%", sys.interference.other_cpu_pct) } else { String::new() },
                if i == 0 { state.clone() } else { "<td></td>".into() },
            );
        }
        if sys.devices.is_empty() {
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>(no block device)</td><td colspan=\"10\"></td><td>{:.1}%</td>{state}</tr>",
                esc(format!("{fs}{rep} {}", c.name).trim()),
                sys.interference.other_cpu_pct
            );
        }
    }
    s.push_str("</table>\n");
}

/// What a cell is called in a heading: its name and, in a plan run, which
/// repeat of how many ("ext4/meta, repeat 2 of 3"); a result given without
/// a plan gets its label in front.
fn cell_heading(label: &str, r: &Report, c: &Cell) -> String {
    match (&c.lab, &r.lab) {
        (Some(t), Some(l)) => format!("{}, repeat {} of {}", c.name, t.repeat, l.repeat),
        (Some(t), None) => format!("{}, repeat {}", c.name, t.repeat),
        _ if label.is_empty() => c.name.clone(),
        _ => format!("{label}: {}", c.name),
    }
}

fn op_tables(s: &mut String, sources: &[(String, &Report)]) {
    let cells: Vec<(&String, &Report, &Cell)> = sources
        .iter()
        .flat_map(|(l, r)| r.cells.iter().map(move |c| (l, *r, c)))
        .filter(|(_, _, c)| {
            c.error.is_none() && (c.kind() == CellKind::Replay || c.directions.iter().any(|d| d.phase.is_some()))
        })
        .filter(|(_, _, c)| c.probe.is_none())
        .collect();
    if cells.is_empty() {
        return;
    }
    s.push_str("<h2 id=\"operations\">Operations</h2>\n<p class=\"note\">Per cell, each repeat on its own: every phase or operation with its rate, CPU and latency.</p>\n");
    for (label, r, c) in cells {
        let replay = c.kind() == CellKind::Replay;
        let _ = write!(
            s,
            "<details open><summary>{}{}</summary>\n<table class=\"ops\"><tr><th>{}</th><th>ops</th><th>ops/s</th>{}<th>mean</th><th>p99</th><th>max</th><th>errors</th></tr>\n",
            esc(&cell_heading(label, r, c)),
            if replay {
                format!(": {:.1} MB/s (dbench throughput)", c.dbench_mb_s())
            } else {
                String::new()
            },
            if replay { "operation" } else { "phase" },
            if replay { "" } else { "<th>%CPU</th>" },
        );
        for d in &c.directions {
            let errors: u64 = d.errors.values().sum();
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td>{}<td>{}</td><td>{}</td><td>{}</td><td{}>{}</td></tr>",
                esc(&d.phase.clone().unwrap_or_else(|| d.dir.name().to_string())),
                d.ops,
                fmt_rate(d.iops),
                if replay {
                    String::new()
                } else {
                    format!("<td>{:.0}%</td>", d.cpu_percent.unwrap_or(0.0))
                },
                Nanos(d.lat.mean_ns as u64),
                Nanos(d.lat.p(99.0)),
                Nanos(d.lat.max_ns),
                if errors > 0 { " class=\"fail\"" } else { "" },
                errors
            );
        }
        s.push_str("</table></details>\n");
    }
}

/// Distributed and stonewalled cells: each rank's rate and where the stonewall fell.
fn ranks(s: &mut String, sources: &[(String, &Report)]) {
    let cells: Vec<(&String, &Report, &Cell)> = sources
        .iter()
        .flat_map(|(l, r)| r.cells.iter().map(move |c| (l, *r, c)))
        .filter(|(_, _, c)| c.directions.iter().any(|d| d.ranks.is_some() || d.stonewall.is_some()))
        .collect();
    if cells.is_empty() {
        return;
    }
    s.push_str("<h2 id=\"ranks\">Ranks and stonewalls</h2>\n<p class=\"note\">Distributed runs: each rank's rate over its own time (the totals above merge every rank's counters and histograms). Stonewalled phases: all operations over the time the stonewall fell, and over the time the last job stopped.</p>\n");
    for (label, r, c) in cells {
        let _ = writeln!(
            s,
            "<details open><summary>{}</summary>\n<table><tr><th>operation</th><th>ranks</th><th>min ops/s</th><th>mean ops/s</th><th>max ops/s</th><th>slowest rank</th><th>stonewall</th><th>at</th><th>ops/s then</th><th>last stopped</th><th>ops/s then</th></tr>",
            esc(&cell_heading(label, r, c))
        );
        for d in &c.directions {
            let mut row = vec![esc(&d.phase.clone().unwrap_or_else(|| d.dir.name().to_string()))];
            match &d.ranks {
                Some(r) => {
                    let slow = r.per_rank.iter().find(|p| p.rank == r.slowest_rank);
                    row.extend([
                        r.per_rank.len().to_string(),
                        fmt_rate(r.min_ops_per_s),
                        fmt_rate(r.mean_ops_per_s),
                        fmt_rate(r.max_ops_per_s),
                        slow.map_or_else(String::new, |p| format!("{} on {}", p.rank, esc(&p.host))),
                    ]);
                }
                None => row.extend(["1".into(), String::new(), String::new(), String::new(), String::new()]),
            }
            match &d.stonewall {
                Some(w) => row.extend([
                    esc(&w.describe()),
                    format!("{:.3} s", w.at_ns as f64 / 1e9),
                    fmt_rate(w.ops_per_s_at_stonewall),
                    format!("{:.3} s", w.last_ns as f64 / 1e9),
                    fmt_rate(w.ops_per_s_at_last),
                ]),
                None => row.extend(std::iter::repeat_n(String::new(), 5)),
            }
            let _ = writeln!(s, "<tr><td>{}</td></tr>", row.join("</td><td>"));
        }
        s.push_str("</table></details>\n");
    }
}

/// Renders the page for one or more results (`label` names a result that is
/// not a plan run, as in `fslab compare`).
pub fn render(sources: &[(String, &Report)]) -> String {
    let cmp = compare::build(sources, None);
    let groups = groups(sources);
    let mut body = String::new();
    let mut n = 0;
    environment(&mut body, sources, &cmp);
    if cmp.filesystems.len() > 1 {
        comparison(&mut body, &mut n, &cmp);
    }
    latency(&mut body, &mut n, &groups, &cmp);
    series_charts(&mut body, &mut n, &groups, &cmp);
    probes(&mut body, &mut n, sources);
    // per-cell extras: the system timelines (cell.system); flame graphs go after them
    system_timelines(&mut body, &mut n, sources);
    op_tables(&mut body, sources);
    ranks(&mut body, sources);
    n += super::flame::section(&mut body, sources);
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
    s.push_str(&body);
    s.push_str("<p class=\"note\">Made by fslab from its result files; every number here is in them (docs/results.md).</p>\n</body></html>\n");
    s
}
