//! What a distributed or stonewalled run adds to a direction's result: the
//! rate of each rank with the spread, and the two rates of a stonewall.

use super::Cell;
use crate::runner::{RankRun, StonewallOut};
use crate::stats::OpKind;
use crate::units::fmt_rate;
use comfy_table::{presets::UTF8_BORDERS_ONLY, CellAlignment, Table};
use serde::{Deserialize, Serialize};

/// One rank's share of one kind of operation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RankRates {
    pub per_rank: Vec<RankRate>,
    pub min_ops_per_s: f64,
    pub mean_ops_per_s: f64,
    pub max_ops_per_s: f64,
    /// The rank with the lowest rate.
    pub slowest_rank: usize,
}

fn per_s(n: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        n as f64 * 1e9 / ns as f64
    }
}

impl RankRates {
    /// None for a one-process run.
    pub fn of(dir: OpKind, ranks: &[RankRun]) -> Option<Self> {
        if ranks.is_empty() {
            return None;
        }
        let per_rank: Vec<RankRate> = ranks
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
            .collect();
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
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
    pub fn of(s: &StonewallOut, ops: u64, bytes: u64) -> Self {
        StonewallRates {
            rule: s.rule.clone(),
            at_ns: s.at_ns,
            by_rank: s.by_rank,
            by_job: s.by_job,
            last_ns: s.last_ns,
            ops_per_s_at_stonewall: per_s(ops, s.at_ns),
            ops_per_s_at_last: per_s(ops, s.last_ns),
            bytes_per_s_at_stonewall: per_s(bytes, s.at_ns),
            bytes_per_s_at_last: per_s(bytes, s.last_ns),
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

fn label(d: &super::DirResult) -> String {
    d.phase.clone().unwrap_or_else(|| d.dir.name().to_string())
}

fn secs(ns: u64) -> String {
    format!("{:.3} s", ns as f64 / 1e9)
}

fn right_aligned(mut tab: Table) -> Table {
    for (i, col) in tab.column_iter_mut().enumerate() {
        if i > 0 {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    tab
}

/// The text tables of a cell's ranks and stonewalls (empty when it has neither).
pub fn text(c: &Cell) -> String {
    let mut s = String::new();
    let ranked: Vec<_> = c
        .directions
        .iter()
        .filter_map(|d| Some((d, d.ranks.as_ref()?)))
        .collect();
    if let Some((_, first)) = ranked.first() {
        let mut tab = Table::new();
        tab.load_style(UTF8_BORDERS_ONLY);
        tab.set_header([
            "per rank",
            "ranks",
            "min ops/s",
            "mean ops/s",
            "max ops/s",
            "slowest rank",
        ]);
        for (d, r) in &ranked {
            let slow = &r.per_rank[r.slowest_rank.min(r.per_rank.len() - 1)];
            tab.add_row([
                label(d),
                r.per_rank.len().to_string(),
                fmt_rate(r.min_ops_per_s),
                fmt_rate(r.mean_ops_per_s),
                fmt_rate(r.max_ops_per_s),
                format!("{} on {} ({})", slow.rank, slow.host, secs(slow.elapsed_ns)),
            ]);
        }
        let hosts: std::collections::BTreeSet<&str> = first.per_rank.iter().map(|r| r.host.as_str()).collect();
        s.push_str(&format!(
            "{} MPI ranks on {} host(s); totals above are of every rank, percentiles from the merged histograms\n{}\n",
            first.per_rank.len(),
            hosts.len(),
            right_aligned(tab)
        ));
    }
    let walled: Vec<_> = c
        .directions
        .iter()
        .filter_map(|d| Some((d, d.stonewall.as_ref()?)))
        .collect();
    if !walled.is_empty() {
        let mut tab = Table::new();
        tab.load_style(UTF8_BORDERS_ONLY);
        tab.set_header([
            "stonewall",
            "fell",
            "at",
            "ops/s at stonewall",
            "last stopped",
            "ops/s at last",
        ]);
        for (d, w) in &walled {
            tab.add_row([
                label(d),
                w.describe(),
                secs(w.at_ns),
                fmt_rate(w.ops_per_s_at_stonewall),
                secs(w.last_ns),
                fmt_rate(w.ops_per_s_at_last),
            ]);
        }
        s.push_str(&format!("{}\n", right_aligned(tab)));
    }
    s
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
        let r = RankRates::of(
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
        assert_eq!((r.min_ops_per_s, r.max_ops_per_s), (250.0, 1000.0));
        assert!((r.mean_ops_per_s - 616.666).abs() < 0.01);
        assert_eq!(r.slowest_rank, 1);
        assert!(RankRates::of(OpKind::Create, &[]).is_none(), "one process has no ranks");
    }

    #[test]
    fn stonewall_rates_divide_all_ops_by_each_moment() {
        let s = StonewallOut {
            rule: "first".into(),
            at_ns: 2_000_000_000,
            by_rank: Some(3),
            by_job: Some(0),
            last_ns: 2_500_000_000,
        };
        let w = StonewallRates::of(&s, 10_000, 1 << 20);
        assert_eq!((w.ops_per_s_at_stonewall, w.ops_per_s_at_last), (5000.0, 4000.0));
        assert_eq!(w.bytes_per_s_at_stonewall, (1 << 19) as f64);
        assert_eq!(w.describe(), "first finisher: rank 3 job 0");
        let d = StonewallRates::of(
            &StonewallOut {
                rule: "10s".into(),
                by_rank: None,
                by_job: None,
                ..s
            },
            1,
            0,
        );
        assert_eq!(d.describe(), "deadline 10s");
    }
}
