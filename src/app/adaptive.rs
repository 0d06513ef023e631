//! The order of a lab run's cells and when an adaptive run stops
//! (issue: "did my change make it worse?" answered in as few runs as the
//! noise allows).
//!
//! Each repeat is a block holding every cell once. The comparison's
//! tables keep the plan's order; the arms compared in a table (its
//! columns: filesystems, kernels, or the levels of the compared factor)
//! run one after another in a random order of their own (a randomised
//! complete block): slow drift of the machine lands on every arm alike
//! instead of on whichever runs last, the cells compared run close in
//! time, and no arm always runs right after another's writeback. The seed
//! is recorded, and each cell's place in the run is in its tag. After the repeats of the look
//! schedule (`stats::decide::looks`), an adaptive run builds the
//! comparison from the cells so far and stops once every headline
//! comparison is decided.

use crate::model::decision::{DecisionInfo, VerdictEntry};
use crate::model::Report;
use crate::plan::LabPlan;
use crate::report::compare::{self, Comparison, Deciding};
use crate::stats::decide;

/// One cell of a repeat: (kernel, filesystem, workload) indexes.
type Slot = (usize, usize, usize);

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
            Deciding::fixed(r.target)
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
    /// in the order they run: grouped by their comparison table (`table`),
    /// the tables in the plan's order (workloads, then kernels, then
    /// filesystems), each table's cells shuffled.
    pub(super) fn block(
        &mut self,
        kernels: usize,
        filesystems: usize,
        workloads: usize,
        table: impl Fn(&(usize, usize, usize)) -> String,
    ) -> Vec<(usize, usize, usize)> {
        let mut groups: Vec<(String, Vec<Slot>)> = Vec::new();
        for w in 0..workloads {
            for k in 0..kernels {
                for f in 0..filesystems {
                    let cell = (k, f, w);
                    let t = table(&cell);
                    match groups.iter_mut().find(|g| g.0 == t) {
                        Some(g) => g.1.push(cell),
                        None => groups.push((t, vec![cell])),
                    }
                }
            }
        }
        let mut b = Vec::with_capacity(kernels * filesystems * workloads);
        for (_, mut cells) in groups {
            self.rng.shuffle(&mut cells);
            b.extend(cells);
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

    fn order() -> Adaptive {
        Adaptive {
            rng: fastrand::Rng::with_seed(1),
            seed: 1,
            looks: vec![3],
            deciding: Deciding {
                nominal: 0.05,
                target: 0.02,
                grows: decide::Grows::Both,
                range: None,
            },
            min: 3,
            max: 3,
        }
    }

    /// The compared arms of a table run together in some order, the tables
    /// in the plan's: across filesystems (tables per workload), and across
    /// a workload factor's levels (tables per filesystem).
    #[test]
    fn a_block_shuffles_the_arms_of_each_table_and_keeps_the_tables_in_order() {
        let mut o = order();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..20 {
            // 2 workloads x 3 filesystems, tables per workload
            let b = o.block(1, 3, 2, |&(_, _, w)| format!("w{w}"));
            assert_eq!(b.iter().map(|c| c.2).collect::<Vec<_>>(), [0, 0, 0, 1, 1, 1]);
            let mut fs: Vec<usize> = b[..3].iter().map(|c| c.1).collect();
            seen.insert(fs.clone());
            fs.sort();
            assert_eq!(fs, [0, 1, 2]);
            // 2 filesystems x 2 levels (workloads), tables per filesystem
            let b = o.block(1, 2, 2, |&(_, f, _)| format!("fs{f}"));
            assert_eq!(b.iter().map(|c| c.1).collect::<Vec<_>>(), [0, 0, 1, 1]);
            let mut lv: Vec<usize> = b[..2].iter().map(|c| c.2).collect();
            lv.sort();
            assert_eq!(lv, [0, 1]);
        }
        // the arms' order changes between repeats
        assert!(seen.len() > 1, "{seen:?}");
    }

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
