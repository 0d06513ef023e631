//! The second pass: the gathered samples become estimates, ratios to the
//! chosen baseline and p-values (`build`, the comparison's entry point).

use super::collect::{collect, Collected};
use super::metrics::Unit;
use super::model::{Col, Comparison, Row, WorkloadCmp};
use crate::model::Report;
use crate::stats::confidence::{welch_p, Estimate};

/// One metric's row: each filesystem's estimate, with its ratio to the
/// baseline (`bi`) and the p-value of the difference; a ratio involving a
/// flagged column (`flagged[i]`) is marked.
fn row(
    metric: String,
    unit: Unit,
    hib: bool,
    per_fs: &[Vec<f64>],
    flagged: &[bool],
    bi: Option<usize>,
    noise_cv: Option<f64>,
) -> Row {
    let n_fs = flagged.len();
    let ests: Vec<Option<Estimate>> = (0..n_fs).map(|i| per_fs.get(i).and_then(|v| Estimate::of(v))).collect();
    let base = bi.and_then(|b| ests[b]);
    let cols = ests
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let est = (*e)?;
            let vs_base = base.filter(|_| Some(i) != bi);
            let ratio = vs_base.filter(|b| b.mean != 0.0).map(|b| est.mean / b.mean);
            Some(Col {
                est,
                ratio,
                p: vs_base.and_then(|b| welch_p(&est, &b)),
                marked: ratio.is_some() && (flagged[i] || bi.is_some_and(|b| flagged[b])),
                noise: ratio.is_some_and(|r| noise_cv.is_some_and(|n| (r - 1.0).abs() < n)),
            })
        })
        .collect();
    Row {
        metric,
        unit,
        higher_is_better: hib,
        cols,
    }
}

/// Builds the comparison of every (label, report) given; `baseline`
/// overrides the reports' own. Without it, the reports' baseline (a plan's,
/// else the first column) is used unless it is flagged: then the same
/// filesystem's first column that is not (a kernel A/B plan's host kernel),
/// else the first column that is not, else none (no ratios).
pub fn build(sources: &[(String, &Report)], baseline: Option<&str>) -> Comparison {
    let Collected {
        filesystems,
        environment,
        workloads,
        flagged,
        lab_fs,
    } = collect(sources);
    let is_flagged = |f: &str| flagged.iter().any(|(c, _)| c == f);
    // the noisiest host among the sources decides what is noise
    let noise_cv = sources
        .iter()
        .filter_map(|(_, r)| r.calibration.as_ref()?.noise_cv())
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    let preferred = sources
        .iter()
        .find_map(|(_, r)| r.lab.as_ref()?.baseline_column())
        .filter(|b| filesystems.contains(b))
        .or_else(|| filesystems.first().cloned());
    let (baseline, baseline_moved_from) = match (baseline, preferred) {
        (Some(b), _) => (b.to_string(), None),
        (None, Some(p)) if is_flagged(&p) => {
            let fs_of = |c: &str| lab_fs.iter().find(|(x, _)| x == c).map(|(_, f)| f.as_str());
            let pick = filesystems
                .iter()
                .filter(|f| !is_flagged(f))
                .find(|f| fs_of(&p).is_some() && fs_of(f) == fs_of(&p))
                .or_else(|| filesystems.iter().find(|f| !is_flagged(f)));
            (pick.cloned().unwrap_or_default(), Some(p))
        }
        (None, p) => (p.unwrap_or_default(), None),
    };
    let bi = filesystems.iter().position(|f| *f == baseline);
    let fl: Vec<bool> = filesystems.iter().map(|f| is_flagged(f)).collect();
    let workloads = workloads
        .into_iter()
        .map(|w| {
            let mut failed = w.failed;
            failed.dedup();
            let rows = w
                .rows
                .into_iter()
                .map(|(metric, unit, hib, per_fs)| row(metric, unit, hib, &per_fs, &fl, bi, noise_cv))
                .collect();
            WorkloadCmp {
                name: w.name,
                rows,
                failed,
                disturbed: w.disturbed.into_iter().filter(|d| d.1 > 0).collect(),
                bounds: w.bounds,
                differs: w.differs,
            }
        })
        .collect();
    Comparison {
        filesystems,
        baseline,
        workloads,
        environment,
        flagged,
        baseline_moved_from,
        noise_cv,
    }
}
