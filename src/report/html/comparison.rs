//! The comparison section of a plan of several filesystems: one table per
//! workload (estimates, ratios, significance) and a bar chart per metric
//! with its confidence whiskers.

use super::common::{color, figure, fmt_unit};
use crate::report::compare::{self, Col, Comparison, Row, WorkloadCmp};
use crate::report::render::svg::{self, esc, Bar, BarGroup};
use std::fmt::Write;

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
    table_head(s, cmp, w, &used);
    for r in &w.rows {
        table_row(s, cmp, w, r, &used);
    }
    s.push_str("</table>\n");
    table_notes(s, w);
}

/// The table's opening and its two header rows: a filesystem per column
/// group, then what each column holds.
fn table_head(s: &mut String, cmp: &Comparison, w: &WorkloadCmp, used: &[usize]) {
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
    for &i in used {
        let f = &cmp.filesystems[i];
        if f == base {
            let _ = write!(s, "<th>{}</th>", head_name(f));
        } else {
            let _ = write!(s, "<th colspan=\"3\">{}</th>", head_name(f));
        }
    }
    s.push_str("</tr>\n<tr>");
    for &i in used {
        if cmp.filesystems[i] == *base {
            s.push_str("<th>mean ± 95% CI</th>");
        } else {
            let _ = write!(s, "<th>mean ± 95% CI</th><th>× {}</th><th>p</th>", esc(base));
        }
    }
    s.push_str("</tr>\n");
}

/// One metric's row: each filesystem's mean ± CI, and beside every one but
/// the baseline its ratio and p-value.
fn table_row(s: &mut String, cmp: &Comparison, w: &WorkloadCmp, r: &Row, used: &[usize]) {
    let base = &cmp.baseline;
    let _ = write!(
        s,
        "<tr data-metric=\"{}\"><td>{} {}</td>",
        esc(&r.metric),
        esc(&r.metric),
        if r.higher_is_better { "↑" } else { "↓" }
    );
    for &i in used {
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
        ratio_cells(s, r, col);
    }
    s.push_str("</tr>\n");
}

/// A column's ratio to the baseline and p-value: marked † when a flagged
/// column is involved, coloured better or worse when significant.
fn ratio_cells(s: &mut String, r: &Row, col: Option<&Col>) {
    match col.and_then(|c| Some((c, c.ratio?))) {
        Some((c, ratio)) if c.marked => {
            let _ = write!(
                s,
                "<td title=\"involves a flagged column: not comparable\">{ratio:.2}×{}</td><td>{}</td>",
                compare::MARK,
                c.p.map(fmt_p).unwrap_or_else(|| "–".into())
            );
        }
        Some((c, ratio)) if c.verdict.is_some() => {
            let v = c.verdict.expect("matched");
            let class = match v.call {
                crate::stats::decide::Call::Regressed => " class=\"worse\"",
                crate::stats::decide::Call::Improved => " class=\"better\"",
                _ => "",
            };
            let _ = write!(
                s,
                "<td{class} title=\"{}\">{ratio:.2}×{}</td><td>{}</td>",
                esc(&compare::verdict_words(&v)),
                compare::verdict_mark(v.call),
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

/// The lines under a workload's table: differences, failures, bounds,
/// disturbed columns.
fn table_notes(s: &mut String, w: &WorkloadCmp) {
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
pub(super) fn comparison(s: &mut String, n: &mut usize, cmp: &Comparison) {
    let repeats = cmp.max_repeats();
    let how = if repeats > 1 {
        format!(
            "mean over up to {repeats} repeats ± the half-width of its 95% confidence interval (Student t); × {b}: the mean over {b}'s, marked * and coloured (<span class=\"better\">better</span>, <span class=\"worse\">worse</span>) where the difference is significant; p: Welch's t-test, * where p &lt; {a}",
            b = esc(&cmp.baseline),
            a = compare::ALPHA
        ) + ". " + &esc(&compare::verdict_legend(&cmp.deciding))
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
    charts(s, n, cmp);
}

/// One grouped bar chart per metric (every workload that has it, every
/// filesystem in each), metrics in first-seen order.
fn charts(s: &mut String, n: &mut usize, cmp: &Comparison) {
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
        metric_chart(s, n, cmp, m);
    }
    s.push_str("</div>\n");
}

/// The bar chart of metric `m`.
fn metric_chart(s: &mut String, n: &mut usize, cmp: &Comparison, m: &Row) {
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
                                let mark = match (c.marked, c.verdict, c.significant()) {
                                    (true, _, _) => compare::MARK.to_string(),
                                    (false, Some(v), _) => compare::verdict_mark(v.call).to_string(),
                                    (false, None, true) => "*".into(),
                                    (false, None, false) => String::new(),
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
