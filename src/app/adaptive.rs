//! The order of a lab run's cells and when an adaptive run stops
//! (issue: "did my change make it worse?" answered in as few runs as the
//! noise allows).
//!
//! Each repeat is a block holding every cell once. Workloads keep the
//! plan's order; the arms compared on a workload (its filesystems under
//! its kernels) run one after another in a random order of their own (a
//! randomised complete block): slow drift of the machine lands on every
//! arm alike instead of on whichever runs last, the cells compared run
//! close in time, and no arm always runs right after another's
//! writeback. The seed is recorded, and each cell's place in the run is
//! in its tag. After the repeats of the look
//! schedule (`stats::decide::looks`), an adaptive run builds the
//! comparison from the cells so far and stops once every headline
//! comparison is decided.

use crate::model::decision::{DecisionInfo, VerdictEntry};
use crate::model::Report;
use crate::plan::LabPlan;
use crate::report::compare::{self, Comparison, Deciding};
use crate::stats::decide;

/// A run's order and decision rules.
pub(super) struct Adaptive {
    rng: fastrand::Rng,
    seed: u64,
    looks: Vec<u32>,
    deciding: Deciding,
    min: u32,
    max: u32,
}

impl Adaptive {
    pub(super) fn new(lab: &LabPlan) -> Adaptive {
        let r = lab.repeat;
        let seed = fastrand::u64(..);
        let deciding = if r.adaptive() {
            Deciding::range(r.min, r.max, r.target)
        } else {
            Deciding {
                nominal: decide::ALPHA,
                target: r.target,
                grows: decide::Grows::Both,
                range: None,
            }
        };
        Adaptive {
            rng: fastrand::Rng::with_seed(seed),
            seed,
            looks: if r.adaptive() {
                decide::looks(r.min, r.max)
            } else {
                vec![r.max]
            },
            deciding,
            min: r.min,
            max: r.max,
        }
    }

    /// The cells of one repeat as (kernel, filesystem, workload) indexes,
    /// in the order they run.
    pub(super) fn block(&mut self, kernels: usize, filesystems: usize, workloads: usize) -> Vec<(usize, usize, usize)> {
        let mut b = Vec::with_capacity(kernels * filesystems * workloads);
        for w in 0..workloads {
            let mut arms: Vec<(usize, usize)> = (0..kernels)
                .flat_map(|k| (0..filesystems).map(move |f| (k, f)))
                .collect();
            self.rng.shuffle(&mut arms);
            b.extend(arms.into_iter().map(|(k, f)| (k, f, w)));
        }
        b
    }

    /// The repeats after which the run looks whether to stop, each ending
    /// a segment of repeats run together: every repeat; with cells in
    /// virtual machines (`in_vm`: one boot per kernel per segment), only
    /// the looks (a fixed count: one segment).
    pub(super) fn segment_ends(&self, in_vm: bool) -> Vec<u32> {
        segment_ends(&self.looks, self.max, in_vm)
    }

    /// After repeat `rep`: whether an adaptive run has decided everything.
    pub(super) fn decided(&self, rep: u32, r: &Report) -> bool {
        self.min < self.max && self.looks.contains(&rep) && self.comparison(r).all_decided()
    }

    fn comparison(&self, r: &Report) -> Comparison {
        compare::build_deciding(&[(String::new(), r)], None, self.deciding)
    }

    /// What the run followed and concluded, for the report.
    pub(super) fn info(&self, r: &Report, repeats_run: u32, stopped: &str) -> DecisionInfo {
        DecisionInfo {
            min: self.min,
            max: self.max,
            target: self.deciding.target,
            alpha: decide::ALPHA,
            looks: self.looks.clone(),
            nominal_alpha: self.deciding.nominal,
            order_seed: self.seed,
            repeats_run,
            stopped: stopped.to_string(),
            verdicts: verdicts(&self.comparison(r)),
        }
    }
}

/// `Adaptive::segment_ends` of a run of at most `max` repeats that looks
/// after `looks`.
fn segment_ends(looks: &[u32], max: u32, in_vm: bool) -> Vec<u32> {
    if !in_vm {
        return (1..=max).collect();
    }
    let mut v: Vec<u32> = looks.iter().copied().filter(|&l| l <= max).collect();
    v.push(max);
    v.sort_unstable();
    v.dedup();
    v
}

/// Every verdict of comparison `c`, in table order.
pub fn verdicts(c: &Comparison) -> Vec<VerdictEntry> {
    let Some(bi) = c.filesystems.iter().position(|f| *f == c.baseline) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for w in &c.workloads {
        for r in &w.rows {
            let n_base = r.cols.get(bi).and_then(|x| x.as_ref()).map_or(0, |x| x.est.n as u32);
            for (col, name) in r.cols.iter().zip(&c.filesystems) {
                let Some((v, n)) = col.as_ref().and_then(|x| Some((x.verdict?, x.est.n as u32))) else {
                    continue;
                };
                out.push(VerdictEntry {
                    table: w.name.clone(),
                    column: name.clone(),
                    baseline: c.baseline.clone(),
                    metric: r.metric.clone(),
                    headline: r.headline,
                    call: v.call,
                    change: v.change,
                    lo: v.lo,
                    hi: v.hi,
                    n_base,
                    n_test: n,
                    more: v.more,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guests_boot_once_per_segment_up_to_each_look() {
        // a fixed count: one segment, one boot per kernel for the run
        assert_eq!(segment_ends(&[3], 3, true), vec![3]);
        // adaptive: a boot per look, the last at max
        let looks = decide::looks(3, 10);
        assert_eq!(segment_ends(&looks, 10, true), looks);
        assert_eq!(*looks.last().unwrap(), 10);
        // host cells only: every repeat ends a segment, as before
        assert_eq!(segment_ends(&looks, 10, false), (1..=10).collect::<Vec<_>>());
    }
}
