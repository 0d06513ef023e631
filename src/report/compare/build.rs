//! The second pass: the gathered samples become estimates, ratios to the
//! chosen baseline and p-values (`build`, the comparison's entry point).

use super::collect::{collect, Collected, RowIn};
use super::model::{Col, Comparison, Deciding, Row, WorkloadCmp};
use crate::model::Report;
use crate::stats::confidence::{welch_p, Estimate};
use crate::stats::decide::{self, Grows};

impl Deciding {
    /// The rules of a comparison of `sources`: an adaptive run's range
    /// and margin (its `LabInfo::decision`), else one look at the plain
    /// level with the plan's margin or the default.
    pub fn of_sources(sources: &[(String, &Report)]) -> Deciding {
        let d = sources.iter().find_map(|(_, r)| r.lab.as_ref()?.decision.as_ref());
        let target = d.map_or(crate::plan::lab::DEFAULT_TARGET, |d| d.target);
        match d.filter(|d| d.max > d.min) {
            Some(d) => Deciding::range(d.min, d.max, target),
            None => Deciding::fixed(target),
        }
    }

    /// The rules of a fixed number of repeats: one look at the plain level.
    pub fn fixed(target: f64) -> Deciding {
        Deciding {
            nominal: decide::ALPHA,
            target,
            grows: Grows::Both,
            range: None,
        }
    }

    /// The rules of a run of `min..=max` repeats, both arms growing.
    pub fn range(min: u32, max: u32, target: f64) -> Deciding {
        let looks: Vec<(usize, usize)> = decide::looks(min, max)
            .into_iter()
            .map(|n| (n as usize, n as usize))
            .collect();
        Deciding {
            nominal: decide::nominal_alpha(&looks, decide::ALPHA),
            target,
            grows: Grows::Both,
            range: Some((min, max)),
        }
    }
}

/// One metric's row: each filesystem's estimate, with its ratio to the
/// baseline (`bi`), the p-value of the difference and the verdict
/// (`deciding`); a ratio involving a flagged column (`flagged[i]`) is marked.
fn row(
    (metric, unit, hib, headline, per_fs): RowIn,
    flagged: &[bool],
    bi: Option<usize>,
    noise_cv: Option<f64>,
    deciding: &Deciding,
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
            let marked = ratio.is_some() && (flagged[i] || bi.is_some_and(|b| flagged[b]));
            let verdict = match (vs_base, bi) {
                (Some(_), Some(b)) if !marked => decide::decide(
                    &per_fs[b],
                    &per_fs[i],
                    hib,
                    deciding.nominal,
                    deciding.target,
                    deciding.grows,
                ),
                _ => None,
            };
            Some(Col {
                est,
                ratio,
                p: vs_base.and_then(|b| welch_p(&est, &b)),
                marked,
                noise: ratio.is_some_and(|r| noise_cv.is_some_and(|n| (r - 1.0).abs() < n)),
                verdict,
            })
        })
        .collect();
    Row {
        metric,
        unit,
        higher_is_better: hib,
        headline,
        cols,
    }
}

/// Builds the comparison of every (label, report) given; `baseline`
/// overrides the reports' own. Without it, the reports' baseline (a plan's,
/// else the first column) is used unless it is flagged: then the same
/// filesystem's first column that is not (a kernel A/B plan's host kernel),
/// else the first column that is not, else none (no ratios).
pub fn build(sources: &[(String, &Report)], baseline: Option<&str>) -> Comparison {
    build_deciding(sources, baseline, Deciding::of_sources(sources))
}

/// `build` with the verdicts' rules given (`fslab check`: only the test arm grows).
pub fn build_deciding(sources: &[(String, &Report)], baseline: Option<&str>, deciding: Deciding) -> Comparison {
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
                .map(|r| row(r, &fl, bi, noise_cv, &deciding))
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
        deciding,
    }
}
