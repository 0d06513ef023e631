//! Cell builders that need the runner's output: the result model
//! (`crate::model`) knows nothing of the runner, so the step from a
//! `RunOut` to a `Cell` is made here.

use crate::model::ranks::{per_s, RankRate, RankRates, StonewallRates};
use crate::model::{Cell, CellPlan, CpuSummary, DirResult, JobCpu, RusageCounts, TargetInfo};
use crate::runner::{RankRun, RunOut, StonewallOut};
use crate::stats::cpu::CpuTimes;
use crate::stats::OpKind;

/// Builds a cell from a run; directions with no operation and no error are left out.
pub fn from_run(name: &str, plan: CellPlan, target: TargetInfo, warnings: Vec<String>, out: RunOut) -> Cell {
    let elapsed = out.elapsed_ns;
    let directions = OpKind::ALL
        .iter()
        .filter(|d| {
            let s = &out.stats[d.idx()];
            s.lat.count > 0 || !s.errors.is_empty()
        })
        .map(|&d| with_ranks(DirResult::of(d, &out.stats[d.idx()], elapsed), &out))
        .collect();
    let pct = |c: CpuTimes| c.percent_of_core(elapsed);
    let mut warnings = warnings;
    warnings.extend(out.jobs.iter().flat_map(|o| o.notes.iter().cloned()));
    if out.halted_on_error {
        warnings.push("stopped at the first failed operation (--on-error stop)".into());
    }
    let mut batches = crate::stats::samples::Batches::default();
    for o in &out.jobs {
        batches += &o.batches;
    }
    Cell {
        warnings,
        interrupted: out.interrupted,
        elapsed_ns: elapsed,
        directions,
        cpu: CpuSummary {
            user_ns: out.cpu_process.user_ns,
            sys_ns: out.cpu_process.sys_ns,
            percent_of_core: pct(out.cpu_process),
            rusage: Some(RusageCounts::of(&out.cpu_process)),
            jobs: out
                .jobs
                .iter()
                .enumerate()
                .map(|(j, o)| JobCpu {
                    job: j,
                    user_ns: o.cpu.user_ns,
                    sys_ns: o.cpu.sys_ns,
                    percent_of_core: pct(o.cpu),
                    rusage: Some(RusageCounts::of(&o.cpu)),
                    elapsed_ns: Some(o.elapsed_ns),
                })
                .collect(),
        },
        series: out.series,
        job_errors: out.jobs.iter().filter_map(|o| o.error.clone()).collect(),
        inflight_depth: out.depth_counts,
        submit_batches: batches.submit,
        complete_batches: batches.complete,
        // the last worker of a steady-state check reports it (fio's last job of a group)
        steadystate: out.jobs.iter().rev().find_map(|o| o.steady.clone()),
        ..Cell::new(name, plan, target)
    }
}

/// `d` with the per-rank rates and the stonewall of `out`, if it has them.
pub fn with_ranks(mut d: DirResult, out: &RunOut) -> DirResult {
    d.ranks = rank_rates(d.dir, &out.ranks);
    d.stonewall = out.stonewall.as_ref().map(|s| stonewall_rates(s, d.ops, d.bytes));
    d
}

/// Each rank's rate of `dir`, over its own time; None for a one-process run.
pub fn rank_rates(dir: OpKind, ranks: &[RankRun]) -> Option<RankRates> {
    RankRates::of(
        ranks
            .iter()
            .map(|r| {
                let ops = r.ops.get(&dir).copied().unwrap_or(0);
                RankRate {
                    rank: r.rank,
                    host: r.host.clone(),
                    ops,
                    bytes: r.bytes.get(&dir).copied().unwrap_or(0),
                    elapsed_ns: r.elapsed_ns,
                    ops_per_s: per_s(ops, r.elapsed_ns),
                }
            })
            .collect(),
    )
}

/// The two rates of `ops` and `bytes` at the stonewall `s`.
pub fn stonewall_rates(s: &StonewallOut, ops: u64, bytes: u64) -> StonewallRates {
    StonewallRates::of(s.rule.clone(), s.at_ns, s.last_ns, (s.by_rank, s.by_job), ops, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(r: usize, ops: u64, elapsed_ns: u64) -> RankRun {
        RankRun {
            rank: r,
            host: format!("n{r}"),
            jobs: 1,
            elapsed_ns,
            stopped_ns: elapsed_ns,
            ops: [(OpKind::Create, ops)].into(),
            bytes: [(OpKind::Create, 0)].into(),
        }
    }

    #[test]
    fn per_rank_rates_are_over_each_rank_s_own_time() {
        let r = rank_rates(
            OpKind::Create,
            &[
                rank(0, 1000, 1_000_000_000),
                rank(1, 1000, 4_000_000_000),
                rank(2, 600, 1_000_000_000),
            ],
        )
        .unwrap();
        let rates: Vec<f64> = r.per_rank.iter().map(|p| p.ops_per_s).collect();
        assert_eq!(rates, vec![1000.0, 250.0, 600.0]);
        assert_eq!(r.slowest_rank, 1);
        assert!(rank_rates(OpKind::Create, &[]).is_none(), "one process has no ranks");
    }

    #[test]
    fn stonewall_rates_come_from_the_runner_s_stonewall() {
        let s = StonewallOut {
            rule: "first".into(),
            at_ns: 2_000_000_000,
            by_rank: Some(3),
            by_job: Some(0),
            last_ns: 2_500_000_000,
        };
        let w = stonewall_rates(&s, 10_000, 1 << 20);
        assert_eq!((w.ops_per_s_at_stonewall, w.ops_per_s_at_last), (5000.0, 4000.0));
        assert_eq!(w.describe(), "first finisher: rank 3 job 0");
    }
}
