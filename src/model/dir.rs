//! One kind of operation's results (a direction of I/O or a metadata
//! phase) and latency summaries.

use super::ranks::{RankRates, StonewallRates};
use super::PERCENTILES;
use crate::errno::errno_name;
use crate::stats::samples::SampleStat;
use crate::stats::{LatStats, OpKind, OpStats, SparseHist};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Results of one kind of operation: a direction of data I/O (read, write,
/// fsync), or one phase of a metadata run (`phase` set: "seq-create", ...).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DirResult {
    pub dir: OpKind,
    /// Metadata runs: the phase, with its own elapsed time and CPU use
    /// (rates are over the phase's time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_percent: Option<f64>,
    pub ops: u64,
    pub bytes: u64,
    /// Reads and writes that succeeded moving fewer bytes than they asked
    /// for (fio's short_ios); None for other kinds, and in results of
    /// versions that did not count them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_ops: Option<u64>,
    /// Datagrams a receiver found missing from its sender's sequence (fio's
    /// drop_ios; fio's net engine's UDP reader only, 0 when it lost none);
    /// absent for every other kind of job, which counts none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_ops: Option<u64>,
    /// Failed operations by errno name ("EIO": 3).
    pub errors: BTreeMap<String, u64>,
    pub iops: f64,
    pub bytes_per_s: f64,
    /// 10^6 bytes per second.
    pub mb_s: f64,
    /// 2^20 bytes per second.
    pub mib_s: f64,
    /// Submit to completion.
    pub lat: LatSummary,
    /// Paced runs: from the scheduled start (includes time spent behind schedule).
    pub sched_lat: Option<LatSummary>,
    /// Queueing engines: submission latency (fio's slat) and completion latency (clat);
    /// `lat` is their sum per operation.
    pub slat: Option<LatSummary>,
    pub clat: Option<LatSummary>,
    /// Share of ops at or under each threshold (exact counts).
    pub lat_buckets: Vec<LatBucket>,
    /// Distributed runs: each rank's rate, and the spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<RankRates>,
    /// --stonewall: the rate at the stonewall and when the last job stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stonewall: Option<StonewallRates>,
    /// Reads and writes: the bandwidth in KiB/s of each 500 ms of the run,
    /// as fio samples it (its `bw` line); `samples` 0 for a run under
    /// 500 ms. Absent for other kinds, and in results of versions that did
    /// not take them (reporters then use the per-second `series`, as those
    /// versions did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bw_samples: Option<RateSamples>,
    /// The same for I/Os per second (fio's `iops` line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops_samples: Option<RateSamples>,
}

/// Samples of a rate, one per 500 ms (fio's bw_stat/iops_stat). With
/// fio's group_reporting the jobs' figures are summed (minima, maxima,
/// means and deviations alike, as fio sums them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RateSamples {
    pub samples: u64,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
}

impl RateSamples {
    pub fn of(s: &SampleStat) -> Self {
        RateSamples {
            samples: s.n,
            min: s.min,
            max: s.max,
            mean: s.mean,
            stddev: s.stddev(),
        }
    }

    /// Per-second samples of `v` (a result without fio's samples: its
    /// series), with the sample deviation.
    pub fn of_values(v: &[f64]) -> Self {
        if v.is_empty() {
            return RateSamples::default();
        }
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = if v.len() > 1 {
            v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        RateSamples {
            samples: v.len() as u64,
            min: v.iter().cloned().fold(f64::INFINITY, f64::min).max(0.0) as u64,
            max: v.iter().cloned().fold(0.0, f64::max) as u64,
            mean,
            stddev: var.sqrt(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatBucket {
    pub le_ns: u64,
    pub count: u64,
    pub share: f64,
}

/// Latency of one measure.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatSummary {
    pub min_ns: u64,
    pub mean_ns: f64,
    pub stddev_ns: f64,
    pub max_ns: u64,
    /// Keys are percentiles as text ("50", "99.9", "99.999"), values ns.
    pub percentiles: BTreeMap<String, u64>,
    pub histogram: SparseHist,
}

impl LatSummary {
    pub fn of(l: &LatStats) -> Self {
        LatSummary {
            min_ns: l.min_ns,
            mean_ns: l.mean_ns(),
            stddev_ns: l.stddev_ns(),
            max_ns: l.max_ns,
            percentiles: PERCENTILES.iter().map(|&p| (pct_key(p), l.percentile(p))).collect(),
            histogram: l.hist.to_sparse(),
        }
    }

    /// Percentile `p` as stored (0 when absent).
    pub fn p(&self, p: f64) -> u64 {
        self.percentiles.get(&pct_key(p)).copied().unwrap_or(0)
    }
}

/// "50", "99.9", "99.999": the shortest exact text of a percentile.
pub fn pct_key(p: f64) -> String {
    let s = format!("{p:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl DirResult {
    pub fn of(dir: OpKind, s: &OpStats, elapsed_ns: u64) -> Self {
        let secs = elapsed_ns as f64 / 1e9;
        let rate = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
        let bps = rate(s.bytes);
        DirResult {
            dir,
            phase: None,
            elapsed_ns: None,
            cpu_percent: None,
            ops: s.lat.count,
            bytes: s.bytes,
            short_ops: matches!(dir, OpKind::Read | OpKind::Write | OpKind::Trim).then_some(s.short),
            dropped_ops: s.dropped,
            errors: s.errors.iter().map(|(e, c)| (errno_name(*e), *c)).collect(),
            iops: rate(s.lat.count),
            bytes_per_s: bps,
            mb_s: bps / 1e6,
            mib_s: bps / 1048576.0,
            lat: LatSummary::of(&s.lat),
            sched_lat: s.sched_lat.as_ref().map(LatSummary::of),
            slat: s.slat.as_ref().filter(|l| l.count > 0).map(LatSummary::of),
            clat: s.clat.as_ref().filter(|l| l.count > 0).map(LatSummary::of),
            lat_buckets: s
                .bucket_ns
                .iter()
                .enumerate()
                .map(|(i, &t)| LatBucket {
                    le_ns: t,
                    count: s.bucket_counts[i],
                    share: s.bucket_share(i),
                })
                .collect(),
            ranks: None,
            stonewall: None,
            bw_samples: matches!(dir, OpKind::Read | OpKind::Write | OpKind::Trim)
                .then(|| RateSamples::of(&s.bw_samples)),
            iops_samples: matches!(dir, OpKind::Read | OpKind::Write | OpKind::Trim)
                .then(|| RateSamples::of(&s.iops_samples)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_keys() {
        assert_eq!(pct_key(50.0), "50");
        assert_eq!(pct_key(99.9), "99.9");
        assert_eq!(pct_key(99.999), "99.999");
        assert_eq!(pct_key(99.95), "99.95");
    }
}
