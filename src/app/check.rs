//! `fslab check BASELINE PLAN`: the plan's cells on the system as it is
//! now against a stored baseline, repeated until every headline metric is
//! decided, and an exit code a CI job or `git bisect run` acts on: 0 not
//! worse by the threshold, 1 regressed, 125 undecided (bisect skips the
//! commit), 2 bad usage.
//!
//! The baseline's repeats are fixed; only the test side grows, so each
//! look's level is calibrated for (baseline repeats, test repeats) pairs
//! (`stats::decide::nominal_alpha`). The report has the shape kernel
//! developers read on the lists (LKP's): `base ±%stddev %change test
//! ±%stddev metric`, with what bounded each side beneath.

use super::lab::run_lab_until;
use crate::model::{KernelTag, Report};
use crate::plan::{self, LabPlan, PlanError, Presentation};
use crate::report::compare::{self, Comparison, Deciding};
use crate::report::render::parts::Part;
use crate::stats::decide::{self, Decision, Grows};
use std::fmt::Write;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

/// The default threshold: a regression of 5% or more fails the check.
pub const DEFAULT_THRESHOLD: f64 = 0.05;
/// Exit code of an undecided check: `git bisect run` skips the commit.
pub const UNDECIDED: u8 = 125;

/// One headline comparison's outcome for the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    /// Its interval's worse end is within the threshold.
    Pass,
    /// Not decided either way.
    Undecided,
    /// Worse beyond the noise, and by the threshold or more.
    Regressed,
}

/// `d` for a metric where higher is better or not, against `threshold`.
fn outcome(d: &Decision, higher_is_better: bool, threshold: f64) -> Outcome {
    // how much worse, positive: worse
    let (lo, hi, est) = if higher_is_better {
        (-d.hi, -d.lo, -d.change)
    } else {
        (d.lo, d.hi, d.change)
    };
    if lo > 0.0 && est >= threshold {
        Outcome::Regressed
    } else if hi < threshold {
        Outcome::Pass
    } else {
        Outcome::Undecided
    }
}

/// The check's side of a report: every lab cell's column becomes
/// `COLUMN@side` and its table stays its table (a plan's factors, compared
/// or not, become part of the names), so the baseline's and the test's
/// cells of one column sit side by side in one comparison.
fn side(r: &Report, name: &str) -> Report {
    let mut r = r.clone();
    r.lab = None;
    for c in &mut r.cells {
        if let Some(t) = c.lab.as_mut() {
            let (column, table) = (t.column(), t.table());
            t.filesystem = column;
            t.workload = table;
            t.compare = None;
            t.levels.clear();
            t.kernel = Some(KernelTag {
                name: name.to_string(),
                ..Default::default()
            });
        }
    }
    r
}

/// The cells of `r` in column `col` and table `table`.
fn cells_of<'a>(r: &'a Report, col: &str, table: &str) -> Vec<&'a crate::model::Cell> {
    r.cells
        .iter()
        .filter(|c| c.error.is_none() && c.lab.as_ref().is_some_and(|t| t.column() == col && t.table() == table))
        .collect()
}

/// Every column of `base`'s lab cells, in order.
fn columns(r: &Report) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for t in r.cells.iter().filter_map(|c| c.lab.as_ref()) {
        if !v.contains(&t.column()) {
            v.push(t.column());
        }
    }
    v
}

/// The comparisons of `test` against `base`, one per column.
fn comparisons(base: &Report, test: &Report, deciding: Deciding) -> Vec<(String, Comparison)> {
    let (b, t) = (side(base, "base"), side(test, "test"));
    columns(base)
        .into_iter()
        .map(|col| {
            let keep = |r: &Report| {
                let mut r = r.clone();
                r.cells.retain(|c| c.lab.as_ref().is_some_and(|l| l.filesystem == col));
                r
            };
            let (bb, tt) = (keep(&b), keep(&t));
            let sources = [("baseline".to_string(), &bb), ("now".to_string(), &tt)];
            let c = compare::build_deciding(&sources, Some(&crate::model::column(&col, "base")), deciding);
            (col, c)
        })
        .collect()
}

/// The rules of the check's verdicts: looks over the test side's repeats
/// against the baseline's fixed ones.
fn deciding(lab: &LabPlan, base_repeats: u32, threshold: f64) -> Deciding {
    let r = lab.repeat;
    let looks: Vec<(usize, usize)> = if r.adaptive() {
        decide::looks(r.min, r.max)
    } else {
        vec![r.max]
    }
    .into_iter()
    .map(|n| (base_repeats as usize, n as usize))
    .collect();
    Deciding {
        nominal: decide::nominal_alpha(&looks, decide::ALPHA),
        target: threshold,
        grows: Grows::Test,
        range: r.adaptive().then_some((r.min, r.max)),
    }
}

/// Every headline outcome of the comparisons, with its row's line; with
/// the reports, each workload's telemetry deltas beneath its rows.
fn outcomes(
    cmps: &[(String, Comparison)],
    threshold: f64,
    sides: Option<(&Report, &Report)>,
) -> Vec<(Outcome, String)> {
    let mut out = Vec::new();
    for (col, c) in cmps {
        let (Some(bi), Some(ti)) = (
            c.filesystems
                .iter()
                .position(|f| *f == crate::model::column(col, "base")),
            c.filesystems
                .iter()
                .position(|f| *f == crate::model::column(col, "test")),
        ) else {
            continue;
        };
        for w in &c.workloads {
            for r in w.rows.iter().filter(|r| r.headline) {
                let (Some(b), Some(t)) = (r.cols[bi].as_ref(), r.cols.get(ti).and_then(|x| x.as_ref())) else {
                    continue;
                };
                let o = t
                    .verdict
                    .map_or(Outcome::Undecided, |d| outcome(&d, r.higher_is_better, threshold));
                let rsd = |e: &crate::stats::confidence::Estimate| {
                    if e.mean != 0.0 {
                        format!("±{:.1}%", 100.0 * e.sd / e.mean.abs())
                    } else {
                        "–".into()
                    }
                };
                let verdict = t
                    .verdict
                    .map(|d| compare::interval_words(&d))
                    .unwrap_or_else(|| "no verdict (fewer than 2 repeats a side, or a zero)".into());
                let mut line = format!(
                    "{:>12} {:>8} {:>9} {:>12} {:>8}  {col} · {} · {}",
                    compare::fmt_value(b.est.mean, r.unit),
                    rsd(&b.est),
                    t.verdict.map(|d| compare::pct(d.change)).unwrap_or_else(|| "–".into()),
                    compare::fmt_value(t.est.mean, r.unit),
                    rsd(&t.est),
                    w.name,
                    r.metric,
                );
                let _ = write!(
                    line,
                    "\n{:>53}{}",
                    "",
                    match o {
                        Outcome::Pass => format!("ok: {verdict}"),
                        Outcome::Regressed => format!("REGRESSED: {verdict}"),
                        Outcome::Undecided => format!("undecided: {verdict}"),
                    }
                );
                out.push((o, line));
            }
            if let Some((base, now)) = sides {
                for l in super::check_deltas::lines(&cells_of(base, col, &w.name), &cells_of(now, col, &w.name)) {
                    out.push((Outcome::Pass, format!("{:>53}{l}", "")));
                }
            }
            if !w.differs.is_empty() {
                out.push((
                    Outcome::Undecided,
                    format!("{:>53}≠ not the same workload: {}", "", compare::differences(w)),
                ));
            }
        }
    }
    out
}

/// Refuses, before anything runs, a baseline of fewer than two repeats (no
/// spread), or a plan whose cells would not be compared with the
/// baseline's: none of them in the baseline (the same column and table),
/// or one that runs another workload than the baseline's cell there. After
/// the run, either could only end undecided (exit 125), and `git bisect
/// run` would skip every commit.
fn comparable(lab: &LabPlan, a: &crate::cli::CheckArgs, base: &Report, base_repeats: u32) -> Result<(), PlanError> {
    let (plan_file, baseline) = (a.run.plan.as_deref().unwrap_or("PLAN"), a.baseline.as_str());
    if base_repeats < 2 {
        return Err(PlanError::new(
            baseline,
            format!("the baseline has {base_repeats} repeat: a check needs 2 or more (fslab run --repeat 3 or more)"),
        ));
    }
    let planned = super::lab::planned_cells(lab);
    let mut shared = 0;
    for (tag, plan) in &planned {
        let (col, table) = (tag.column(), tag.table());
        let Some(b) = base
            .cells
            .iter()
            .find(|c| c.lab.as_ref().is_some_and(|t| t.column() == col && t.table() == table))
        else {
            continue;
        };
        shared += 1;
        let now = compare::workload_of(plan, tag.fs_type == "raw");
        let diffs = compare::differing(&compare::workload(b), &now);
        if !diffs.is_empty() {
            let what: Vec<String> = diffs
                .iter()
                .map(|(k, was, is)| format!("{k} {was} in the baseline, {is} in the plan"))
                .collect();
            return Err(PlanError::new(
                plan_file,
                format!(
                    "{col} · {table}: not the workload {} ran: {}",
                    crate::units::shown(baseline),
                    what.join("; ")
                ),
            ));
        }
    }
    if shared == 0 {
        // each once, in order (a baseline holds every cell once per
        // repeat), the first few: the line stays one line
        let names = |v: Vec<String>| {
            let mut seen: Vec<String> = Vec::new();
            for n in v {
                if !seen.contains(&n) {
                    seen.push(n);
                }
            }
            let more = seen.len().saturating_sub(4);
            seen.truncate(4);
            let mut s = seen.join(", ");
            if more > 0 {
                s += &format!(" and {more} more");
            }
            s
        };
        let base_cells = names(
            base.cells
                .iter()
                .filter_map(|c| c.lab.as_ref().map(|t| format!("{} · {}", t.column(), t.table())))
                .collect(),
        );
        let plan_cells = names(
            planned
                .iter()
                .map(|(t, _)| format!("{} · {}", t.column(), t.table()))
                .collect(),
        );
        return Err(PlanError::new(
            plan_file,
            format!(
                "none of its cells ({plan_cells}) is in {} ({base_cells}): nothing to compare",
                crate::units::shown(baseline)
            ),
        ));
    }
    Ok(())
}

/// Runs `fslab check`.
pub fn run_check(a: &crate::cli::CheckArgs, stop: &AtomicBool) -> ExitCode {
    let usage = |e: PlanError| {
        eprintln!("fslab: error: {e}");
        ExitCode::from(2)
    };
    let threshold = match a.threshold.as_deref().map(plan::lab::parse_target).transpose() {
        Ok(t) => t.unwrap_or(DEFAULT_THRESHOLD),
        Err(e) => return usage(PlanError::new("--threshold", e)),
    };
    if a.run.plan.is_none() {
        return usage(PlanError::new(
            "PLAN",
            "fslab check needs a plan file after the baseline",
        ));
    }
    if a.run.common.layout.format == plan::TableFormat::Csv {
        return usage(PlanError::new(
            "--format",
            "csv: fslab check prints its report as text, plain or markdown; --output csv:PATH writes the rows",
        ));
    }
    let base = match crate::model::read_results(std::slice::from_ref(&a.baseline)) {
        Ok(mut v) => v.remove(0).1,
        Err(e) => return usage(e),
    };
    let Some(base_repeats) = base.lab.as_ref().map(|l| l.repeat) else {
        return usage(PlanError::new(
            &a.baseline,
            "not a result of `fslab run` (no plan's cells to check against)",
        ));
    };
    let validated = plan::quick_suite(&a.run)
        .and_then(|mut s| {
            if a.run.repeat.is_none() {
                s.repeat = plan::lab::Repeats::range(3, 12, threshold).map_err(|e| PlanError::new("--repeat", e))?;
            }
            s.repeat.target = threshold;
            Ok((Presentation::for_run(&a.run, s.quiet_warnings)?, s))
        })
        .and_then(|(show, s)| crate::target::safety::check_plan_devices(&s, a.run.force_overwrite).map(|()| (s, show)))
        .and_then(|(s, show)| crate::vm::check_plan(&s).map(|()| (s, show)));
    let (lab, mut show) = match validated {
        Ok(x) => x,
        Err(e) => return usage(e),
    };
    if let Err(e) = comparable(&lab, a, &base, base_repeats) {
        return usage(e);
    }
    // stdout is the check's report; result files are written as asked
    show.outputs.0.retain(|o| o.path.is_some());
    let mut outputs = show.outputs.clone();
    let rules = deciding(&lab, base_repeats, threshold);
    let looks = if lab.repeat.adaptive() {
        decide::looks(lab.repeat.min, lab.repeat.max)
    } else {
        Vec::new()
    };
    // a regression decides the check whatever the rest say; else every
    // headline metric must pass
    let mut until = |rep: u32, r: &Report| {
        if !looks.contains(&rep) {
            return false;
        }
        let o = outcomes(&comparisons(&base, r, rules), threshold, None);
        o.iter().any(|(o, _)| *o == Outcome::Regressed) || o.iter().all(|(o, _)| *o != Outcome::Undecided)
    };
    let test = match run_lab_until(lab, show, stop, Some(&mut until)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fslab: error: {e}");
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    if test.interrupted {
        return ExitCode::from(crate::interrupt::exit_code());
    }
    let mut test = test;
    // at the terminal's width (--width, $COLUMNS), as every text report
    let style = crate::plan::stdout_style(&a.run.common.layout).unwrap_or_default();
    let (code, word, verdicts) = report(&a.baseline, &base, &test, (rules, threshold), style);
    // the result files say what the check decided, against what
    if !outputs.0.is_empty() {
        if let Some(l) = test.lab.as_mut() {
            let d = l.decision.get_or_insert_with(Default::default);
            d.target = threshold;
            d.nominal_alpha = rules.nominal;
            d.stopped = format!("check against {}: {word}", crate::units::excerpt(&a.baseline));
            d.verdicts = verdicts;
        }
        if let Err(e) = crate::app::results::write_outputs(&test, &mut outputs, true) {
            eprintln!("fslab: error: {e}");
            return ExitCode::from(1);
        }
    }
    ExitCode::from(code)
}

/// Prints the check's report laid out as `style` says (its lines wrapped
/// at the width; ASCII for plain, a code block for markdown); returns its
/// exit code, its word and the verdicts of every comparison (baseline
/// column against now's).
fn report(
    file: &str,
    base: &Report,
    test: &Report,
    (rules, threshold): (Deciding, f64),
    style: plan::TextStyle,
) -> (u8, &'static str, Vec<crate::model::decision::VerdictEntry>) {
    let cmps = comparisons(base, test, rules);
    let lines = outcomes(&cmps, threshold, Some((base, test)));
    let failed: Vec<String> = test
        .cells
        .iter()
        .filter_map(|c| Some(format!("{}: {}", c.name, c.error.as_ref()?)))
        .collect();
    let worst = lines.iter().map(|(o, _)| *o).max();
    let repeats = test.lab.as_ref().map_or(0, |l| l.repeat);
    let mut s = format!(
        "fslab check: {} ({} repeats) against now ({repeats} repeats); regressed: worse by {} or more\n\n",
        crate::units::shown(file),
        base.lab.as_ref().map_or(0, |l| l.repeat),
        compare::pct(threshold).trim_start_matches('+'),
    );
    let _ = writeln!(
        s,
        "{:>12} {:>8} {:>9} {:>12} {:>8}  metric",
        "base", "±%stddev", "%change", "now", "±%stddev"
    );
    for (_, l) in &lines {
        let _ = writeln!(s, "{l}");
    }
    for f in &failed {
        let _ = writeln!(s, "failed: {f}");
    }
    let (code, word) = match (worst, failed.is_empty()) {
        (Some(Outcome::Regressed), _) => (1, "regressed"),
        (_, false) | (Some(Outcome::Undecided), _) | (None, _) => (UNDECIDED, "undecided"),
        (Some(Outcome::Pass), true) => (0, "not regressed"),
    };
    let _ = writeln!(s, "\n{word} (exit {code}); {}", compare::verdict_legend(&rules));
    let s = match style.tables {
        plan::TableFormat::Plain => crate::report::render::plain::render(&[Part::Text(s)], style.width.into()),
        plan::TableFormat::Markdown => crate::report::render::markdown::render(&[Part::Text(s)]),
        _ => crate::report::render::fit::lines(&s, style.width.into()),
    };
    print!(
        "{}",
        String::from_utf8_lossy(&crate::report::terminal_bytes(s.into_bytes()))
    );
    let verdicts = cmps.iter().flat_map(|(_, c)| super::adaptive::verdicts(c)).collect();
    (code, word, verdicts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(change: f64, lo: f64, hi: f64) -> Decision {
        Decision {
            call: decide::Call::Undecided,
            change,
            lo,
            hi,
            nominal: 0.05,
            more: None,
        }
    }

    #[test]
    fn outcomes_follow_the_worse_end_of_the_interval() {
        // 10% fewer ops/s, surely: regressed at a 5% threshold
        assert_eq!(outcome(&d(-0.10, -0.12, -0.08), true, 0.05), Outcome::Regressed);
        // 1% fewer, within ±2%: passes
        assert_eq!(outcome(&d(-0.01, -0.02, 0.0), true, 0.05), Outcome::Pass);
        // surely worse, but by less than the threshold: passes once the
        // interval's worse end is within it
        assert_eq!(outcome(&d(-0.02, -0.03, -0.01), true, 0.05), Outcome::Pass);
        // could be 8% worse or 2% better: undecided
        assert_eq!(outcome(&d(-0.03, -0.08, 0.02), true, 0.05), Outcome::Undecided);
        // a latency 10% higher is worse
        assert_eq!(outcome(&d(0.10, 0.08, 0.12), false, 0.05), Outcome::Regressed);
        assert_eq!(outcome(&d(-0.10, -0.12, -0.08), false, 0.05), Outcome::Pass);
    }
}
