//! The comparison as text (`fslab compare`, and the end of `fslab run`'s
//! report): one table per workload with its notes, then the legend; and
//! the lines other renderings share (differences, refusal, flag notes).

use super::metrics::{Unit, ALPHA};
use super::model::{Col, Comparison, Deciding, WorkloadCmp};
use crate::plan::{TableFormat, TextStyle};
use crate::report::render::doc::Doc;
use crate::stats::decide::{Call, Decision};
use crate::units::{fmt_rate, Nanos};
use comfy_table::{presets::UTF8_BORDERS_ONLY, CellAlignment, Table};
use std::fmt::Write;

/// "bounds differ: ext4 device, xfs page-cache: ..." when the columns of a
/// table were bounded by different limits (each column's cells' bounds).
pub fn bounds_line(w: &WorkloadCmp) -> Option<String> {
    let name = |v: &[crate::model::verdict::Bound]| v.iter().map(|b| b.name()).collect::<Vec<_>>().join("/");
    let first = w.bounds.first()?;
    if w.bounds.iter().all(|b| b.1 == first.1) {
        return None;
    }
    let each: Vec<String> = w.bounds.iter().map(|(f, b)| format!("{f} {}", name(b))).collect();
    Some(format!(
        "bounds differ: {}: a ratio between these columns compares different limits, not only the filesystems",
        each.join(", ")
    ))
}

/// A value in its unit as the comparison tables print it (`fslab compare`,
/// and the HTML report's comparison table).
pub fn fmt_value(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Rate => fmt_rate(v),
        Unit::MBs => format!("{v:.1}"),
        Unit::Ns => Nanos(v.max(0.0).round() as u64).to_string(),
        Unit::Count => {
            if v.fract() == 0.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.1}")
            }
        }
        Unit::Percent => format!("{v:.1}%"),
    }
}

fn fmt_col(c: &Col, unit: Unit) -> String {
    let mut s = fmt_value(c.est.mean, unit);
    if let Some(ci) = c.est.ci95 {
        let _ = write!(s, " ± {}", fmt_value(ci, unit));
    }
    if let Some(r) = c.ratio {
        let _ = write!(s, "  {r:.2}×");
        if c.marked {
            s.push(MARK);
        } else if let Some(v) = &c.verdict {
            s.push(verdict_mark(v.call));
        } else if c.noise {
            s.push('≈');
        } else if c.significant() {
            s.push('*');
        }
    }
    s
}

/// The mark of a ratio involving a flagged column.
pub const MARK: char = '†';

/// A verdict's mark beside its ratio.
pub fn verdict_mark(c: Call) -> char {
    match c {
        Call::Regressed => '▼',
        Call::Improved => '▲',
        Call::Equivalent => '=',
        Call::Undecided => '?',
    }
}

/// A signed percentage: "+1.2%", "−5.0%".
pub fn pct(x: f64) -> String {
    let p = x * 100.0;
    if p < 0.0 {
        format!("−{:.1}%", -p)
    } else {
        format!("+{p:.1}%")
    }
}

/// A verdict in words: "regressed −5.1% [−6.9%, −3.2%]", "undecided
/// +0.3% [−2.9%, +3.6%], about 6 more repeats".
pub fn verdict_words(d: &Decision) -> String {
    format!("{} {}", d.call.name(), interval_words(d))
}

/// A decision's change and interval: "−5.7% [−10.0%, −1.2%]", with the
/// repeats an undecided one needs.
pub fn interval_words(d: &Decision) -> String {
    let mut s = format!("{} [{}, {}]", pct(d.change), pct(d.lo), pct(d.hi));
    if let Some(m) = d.more {
        let _ = write!(s, ", about {m} more repeat{}", if m == 1 { "" } else { "s" });
    }
    s
}

/// The verdict lines under a table: one per headline metric, its columns'
/// verdicts against the baseline.
fn verdict_lines(s: &mut Doc, c: &Comparison, w: &WorkloadCmp) {
    for r in w.rows.iter().filter(|r| r.headline) {
        let each: Vec<String> = r
            .cols
            .iter()
            .zip(&c.filesystems)
            .filter_map(|(col, f)| Some(format!("{f} {}", verdict_words(col.as_ref()?.verdict.as_ref()?))))
            .collect();
        if !each.is_empty() {
            let _ = writeln!(s, "  {} vs {}: {}", r.metric, c.baseline, each.join("; "));
        }
    }
}

/// A workload's differences as one note: "bs 4 KiB (a) vs 64 KiB (b); ...".
pub fn differences(w: &WorkloadCmp) -> String {
    w.differs
        .iter()
        .map(|d| {
            format!(
                "{} {} ({}) vs {} ({})",
                d.key, d.a.value, d.a.column, d.b.value, d.b.column
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `fslab compare`'s refusal of workload `w`, whose cells differ: the two
/// files (or the columns of one file) and each differing key, e.g. "a.json
/// and b.json ran different workloads (bs: 4 KiB vs 64 KiB); --force
/// compares them anyway". `files` are the sources' names; `named` adds
/// the workload's name (when there are several).
pub fn refusal(w: &WorkloadCmp, files: &[String], named: bool) -> String {
    let Some(d) = w.differs.first() else {
        return String::new();
    };
    let file = |i: usize| files.get(i).cloned().unwrap_or_default();
    let who = if d.a.source != d.b.source {
        format!("{} and {}", file(d.a.source), file(d.b.source))
    } else if d.a.column != d.b.column {
        format!("{} and {} in {}", d.a.column, d.b.column, file(d.a.source))
    } else {
        format!("cells of {} in {}", d.a.column, file(d.a.source))
    };
    let keys: Vec<String> = w
        .differs
        .iter()
        .map(|d| format!("{}: {} vs {}", d.key, d.a.value, d.b.value))
        .collect();
    format!(
        "{who} ran different workloads{} ({}); --force compares them anyway",
        if named {
            format!(" in '{}'", w.name)
        } else {
            String::new()
        },
        keys.join(", ")
    )
}

/// The footer's lines on flagged columns and the baseline they could not be.
pub fn flag_notes(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    if c.flagged.is_empty() {
        return out;
    }
    let mut by_why: Vec<(&str, Vec<&str>)> = Vec::new();
    for (f, why) in &c.flagged {
        match by_why.iter_mut().find(|(w, _)| *w == why.as_str()) {
            Some((_, cols)) => cols.push(f),
            None => by_why.push((why, vec![f])),
        }
    }
    for (why, cols) in by_why {
        out.push(format!(
            "{MARK} {}: {why}, not comparable with the other columns; a ratio involving one is marked {MARK}",
            cols.join(", ")
        ));
    }
    match (&c.baseline_moved_from, c.baseline.is_empty()) {
        (Some(from), false) => out.push(format!(
            "baseline {} instead of {from}: a flagged column is never the baseline unless named (fslab compare --baseline)",
            c.baseline
        )),
        (_, true) => out.push(
            "no ratios: every column is flagged, and a flagged column is never the baseline unless named (fslab compare --baseline)"
                .to_string(),
        ),
        _ => {}
    }
    out
}

/// The comparison as boxed text tables, one per workload, in 80 columns.
pub fn render(c: &Comparison) -> String {
    render_as(c, TextStyle::default())
}

/// The comparison laid out as `style` says (`fslab compare --format`,
/// `--width`).
pub fn render_as(c: &Comparison, style: TextStyle) -> String {
    if style.tables == TableFormat::Csv {
        return super::csv::render(c);
    }
    let mut d = Doc::new();
    write(&mut d, c);
    d.render(style.tables, style.width.into())
}

/// Writes the comparison's lines and tables, one table per workload, into `s`.
pub fn write(s: &mut Doc, c: &Comparison) {
    for (fs, env) in &c.environment {
        let _ = writeln!(s, "{fs}: {env}");
    }
    for w in &c.workloads {
        // only the filesystems this workload ran on, or failed on
        let used: Vec<usize> = (0..c.filesystems.len())
            .filter(|&i| {
                w.rows.iter().any(|r| r.cols.get(i).is_some_and(|c| c.is_some()))
                    || w.failed.iter().any(|(f, _)| *f == c.filesystems[i])
            })
            .collect();
        if used.is_empty() {
            continue;
        }
        s.push('\n');
        s.table(workload_table(c, w, &used));
        verdict_lines(s, c, w);
        workload_notes(s, w);
    }
    legend(s, c);
}

/// The table of workload `w`: a row per metric, a column per filesystem
/// of `used` (those it ran or failed on).
fn workload_table(c: &Comparison, w: &WorkloadCmp, used: &[usize]) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_BORDERS_ONLY);
    let mut head = vec![w.name.clone()];
    for &i in used {
        let f = &c.filesystems[i];
        let mut h = if *f == c.baseline && used.len() > 1 {
            format!("{f} (baseline)")
        } else {
            f.clone()
        };
        if c.flagged.iter().any(|x| x.0 == *f) {
            h.push(' ');
            h.push(MARK);
        }
        if w.disturbed.iter().any(|d| d.0 == *f) {
            h.push_str(" !");
        }
        head.push(h);
    }
    t.set_header(head);
    for r in &w.rows {
        let mut row = vec![format!("{} {}", r.metric, if r.higher_is_better { "↑" } else { "↓" })];
        for &i in used {
            row.push(match r.cols.get(i).and_then(|c| c.as_ref()) {
                Some(col) => fmt_col(col, r.unit),
                None if w.failed.iter().any(|(f, _)| *f == c.filesystems[i]) => "failed".into(),
                None => "–".into(),
            });
        }
        t.add_row(row);
    }
    if w.rows.is_empty() {
        let mut row = vec!["(no result)".to_string()];
        row.extend(used.iter().map(|_| "failed".to_string()));
        t.add_row(row);
    }
    for col in t.column_iter_mut().skip(1) {
        col.set_cell_alignment(CellAlignment::Right);
    }
    t
}

/// The lines under workload `w`'s table: failures, differences, bounds,
/// disturbed columns.
fn workload_notes(s: &mut Doc, w: &WorkloadCmp) {
    for (f, e) in &w.failed {
        let _ = writeln!(s, "  {f}: failed: {e}");
    }
    if !w.differs.is_empty() {
        let _ = writeln!(
            s,
            "  ≠ not the same workload, the figures measure different work: {}",
            differences(w)
        );
    }
    // with --quiet-warnings the per-table summaries stay in the JSON
    // (each cell's verdict and interference are there); what makes a
    // ratio meaningless (≠ above, flagged columns below) is always said
    if let Some(l) = bounds_line(w).filter(|_| !s.quiet_warnings()) {
        let _ = writeln!(s, "  {l}");
    }
    // one line per table, whatever the number of disturbed columns
    if !w.disturbed.is_empty() && !s.quiet_warnings() {
        let each: Vec<String> = w
            .disturbed
            .iter()
            .map(|(f, n, of)| format!("{f} {n} of {of}"))
            .collect();
        let _ = writeln!(
            s,
            "  ! disturbed cells: {} (other processes or the hypervisor took CPU or I/O; see each cell's verdict)",
            each.join(", ")
        );
    }
}

/// The footer: flag notes, then what the marks and figures mean.
fn legend(s: &mut Doc, c: &Comparison) {
    let notes = flag_notes(c);
    if !notes.is_empty() {
        s.push('\n');
    }
    for l in notes {
        let _ = writeln!(s, "{l}");
    }
    let n = c.max_repeats();
    if let Some(cv) = c.noise_cv.filter(|_| !c.baseline.is_empty()) {
        let _ = writeln!(
            s,
            "\n≈: the ratio is within this host's noise ({:.1}%, the calibration card's): not a difference",
            cv * 100.0
        );
    }
    if c.baseline.is_empty() {
        if n > 1 {
            let _ = writeln!(
                s,
                "\nmean ± 95% confidence interval over up to {n} repeats (Student t); ↑/↓: higher/lower is better"
            );
        }
    } else if n > 1 {
        let _ = writeln!(
            s,
            "\nmean ± 95% confidence interval over up to {n} repeats (Student t); ×: ratio to {}; ↑/↓: higher/lower is better",
            c.baseline
        );
        let _ = writeln!(s, "{}", verdict_legend(&c.deciding));
    } else if c.filesystems.len() > 1 {
        let _ = writeln!(
            s,
            "\none run per cell: no confidence interval or significance (give repeat = 3 or more); ×: ratio to {}; ↑/↓: higher/lower is better",
            c.baseline
        );
    }
}

/// What the verdict marks mean and the rules that drew them.
pub fn verdict_legend(d: &Deciding) -> String {
    let looks = match d.range {
        Some((min, max)) => format!(
            "looks after repeats {} at {:.2}% each, {}% over all looks",
            crate::stats::decide::looks(min, max)
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(","),
            d.nominal * 100.0,
            crate::stats::decide::ALPHA * 100.0
        ),
        None => format!("one look at {}%", d.nominal * 100.0),
    };
    format!(
        "▼ regressed / ▲ improved: the change's interval (log scale, Welch; {looks}) excludes no change; \
         = equivalent: it lies within ±{}%; ? undecided; *: p < {ALPHA} (Welch's t-test) where no verdict applies",
        d.target * 100.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::confidence::{welch_p, Estimate};

    fn est(xs: &[f64]) -> Estimate {
        Estimate::of(xs).unwrap()
    }

    #[test]
    fn columns_carry_ratio_and_significance() {
        let base = est(&[100.0, 102.0, 98.0]);
        let slow = est(&[50.0, 51.0, 49.0]);
        let p = welch_p(&slow, &base).unwrap();
        assert!(p < 0.001, "{p}");
        let c = Col {
            est: slow,
            ratio: Some(0.5),
            p: Some(p),
            marked: false,
            noise: false,
            verdict: None,
        };
        assert!(c.significant());
        assert_eq!(fmt_col(&c, Unit::Rate), "50 ± 2  0.50×*");
        let same = Col {
            est: est(&[99.0, 103.0, 97.0]),
            ratio: Some(0.997),
            p: welch_p(&est(&[99.0, 103.0, 97.0]), &base),
            marked: false,
            noise: false,
            verdict: None,
        };
        assert!(!same.significant());
        // a 2% difference on a host whose noise is 5%: noise, never significant
        let noisy = Col {
            noise: true,
            ratio: Some(0.98),
            ..c
        };
        assert!(!noisy.significant());
        assert!(fmt_col(&noisy, Unit::Rate).ends_with("0.98×≈"));
    }
}
