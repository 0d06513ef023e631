//! What a distributed or stonewalled run adds to a direction's result: the
//! rate of each rank with the spread, and the two rates of a stonewall.
//! (`app::cell` fills them from the runner's output.)

use serde::{Deserialize, Serialize};

/// One rank's share of one kind of operation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct RankRate {
    pub rank: usize,
    pub host: String,
    pub ops: u64,
    pub bytes: u64,
    /// Its own time: start of the phase to its last measured completion.
    pub elapsed_ns: u64,
    pub ops_per_s: f64,
}

/// The ranks of a distributed run, for one kind of operation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct RankRates {
    pub per_rank: Vec<RankRate>,
    pub min_ops_per_s: f64,
    pub mean_ops_per_s: f64,
    pub max_ops_per_s: f64,
    /// The rank with the lowest rate.
    pub slowest_rank: usize,
}

/// `n` per second over `ns` nanoseconds (0 over no time).
pub fn per_s(n: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        n as f64 * 1e9 / ns as f64
    }
}

impl RankRates {
    /// The spread of `per_rank`; None for a one-process run (no ranks).
    pub fn of(per_rank: Vec<RankRate>) -> Option<Self> {
        if per_rank.is_empty() {
            return None;
        }
        let rates = || per_rank.iter().map(|r| r.ops_per_s);
        let slowest = per_rank
            .iter()
            .min_by(|a, b| a.ops_per_s.total_cmp(&b.ops_per_s))
            .map_or(0, |r| r.rank);
        Some(RankRates {
            min_ops_per_s: rates().fold(f64::INFINITY, f64::min),
            mean_ops_per_s: rates().sum::<f64>() / per_rank.len() as f64,
            max_ops_per_s: rates().fold(0.0, f64::max),
            slowest_rank: slowest,
            per_rank,
        })
    }
}

/// Where a stonewall fell and the rates it gives, as IOR and mdtest report
/// them: every operation over the time the stonewall fell, and over the
/// time the last job (of every rank) stopped. The second includes the
/// stragglers' time to notice the stonewall and finish the operation they
/// were in.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct StonewallRates {
    /// "first" or the deadline ("10s").
    pub rule: String,
    pub at_ns: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_rank: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_job: Option<usize>,
    pub last_ns: u64,
    pub ops_per_s_at_stonewall: f64,
    pub ops_per_s_at_last: f64,
    pub bytes_per_s_at_stonewall: f64,
    pub bytes_per_s_at_last: f64,
}

impl StonewallRates {
    /// The rates of `ops` and `bytes` at a stonewall that fell at `at_ns`
    /// (by `rule`, the job and rank that finished first) with the last job
    /// stopping at `last_ns`.
    pub fn of(
        rule: String,
        at_ns: u64,
        last_ns: u64,
        by: (Option<usize>, Option<usize>),
        ops: u64,
        bytes: u64,
    ) -> Self {
        StonewallRates {
            rule,
            at_ns,
            by_rank: by.0,
            by_job: by.1,
            last_ns,
            ops_per_s_at_stonewall: per_s(ops, at_ns),
            ops_per_s_at_last: per_s(ops, last_ns),
            bytes_per_s_at_stonewall: per_s(bytes, at_ns),
            bytes_per_s_at_last: per_s(bytes, last_ns),
        }
    }

    /// "first finisher rank 1 job 0" or "deadline 10s".
    pub fn describe(&self) -> String {
        match (self.by_rank, self.by_job) {
            (Some(r), Some(j)) => format!("first finisher: rank {r} job {j}"),
            (None, Some(j)) => format!("first finisher: job {j}"),
            _ if self.rule == "first" => "first finisher".into(),
            _ => format!("deadline {}", self.rule),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(r: usize, ops: u64, elapsed_ns: u64) -> RankRate {
        RankRate {
            rank: r,
            host: format!("n{r}"),
            ops,
            bytes: 0,
            elapsed_ns,
            ops_per_s: per_s(ops, elapsed_ns),
        }
    }

    #[test]
    fn spread_of_the_ranks_rates() {
        let r = RankRates::of(vec![
            rank(0, 1000, 1_000_000_000),
            rank(1, 1000, 4_000_000_000),
            rank(2, 600, 1_000_000_000),
        ])
        .unwrap();
        assert_eq!((r.min_ops_per_s, r.max_ops_per_s), (250.0, 1000.0));
        assert!((r.mean_ops_per_s - 616.666).abs() < 0.01);
        assert_eq!(r.slowest_rank, 1);
        assert!(RankRates::of(vec![]).is_none(), "one process has no ranks");
    }

    #[test]
    fn stonewall_rates_divide_all_ops_by_each_moment() {
        let w = StonewallRates::of(
            "first".into(),
            2_000_000_000,
            2_500_000_000,
            (Some(3), Some(0)),
            10_000,
            1 << 20,
        );
        assert_eq!((w.ops_per_s_at_stonewall, w.ops_per_s_at_last), (5000.0, 4000.0));
        assert_eq!(w.bytes_per_s_at_stonewall, (1 << 19) as f64);
        assert_eq!(w.describe(), "first finisher: rank 3 job 0");
        let d = StonewallRates::of("10s".into(), 2_000_000_000, 2_500_000_000, (None, None), 1, 0);
        assert_eq!(d.describe(), "deadline 10s");
    }
}
