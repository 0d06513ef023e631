//! Statistics: what a worker records per operation, and how per-worker records
//! merge into the totals of a run.
//!
//! Every worker owns its `OpStats` (nothing shared on the hot path); the runner
//! merges them with `+=` at the end. Latency goes into a histogram *and* exact
//! count/sum/sum-of-squares/min/max, so means and extremes are exact and only the
//! percentiles carry the histogram's (< 1 %) error.

pub mod anatomy;
pub mod confidence;
pub mod cpu;
pub mod decide;
mod hist;
pub mod plat;
pub mod samples;
pub mod series;

pub use hist::{LatHist, SparseHist, MAX_NS};

/// Per-kind statistics of one worker or run.
pub type KindStats = [OpStats; KINDS];

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::AddAssign;

/// Timestamps come from the TSC when the CPU has an invariant one (calibrated
/// against CLOCK_MONOTONIC, the same source the kernel uses; fio's
/// `clocksource=cpu` does the same), else from clock_gettime. Reading the TSC
/// costs ~9 ns against ~21 ns for clock_gettime on a typical VM: it is most of
/// fslab's own per-operation cost.
pub use quanta::Instant;

/// Kind of operation a statistic is about: the three directions of data I/O,
/// then the metadata operations (one file operation each: a create is
/// open + write + setxattr + close).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum OpKind {
    #[default]
    Read,
    Write,
    Fsync,
    Create,
    Stat,
    Delete,
    Getxattr,
    Rename,
    Readdir,
    OpenClose,
    // NBENCH load-file operations (fslab replay), under dbench's names.
    #[serde(rename = "NTCreateX")]
    NtCreateX,
    #[serde(rename = "Close")]
    NbClose,
    #[serde(rename = "ReadX")]
    ReadX,
    #[serde(rename = "WriteX")]
    WriteX,
    #[serde(rename = "Flush")]
    Flush,
    #[serde(rename = "LockX")]
    LockX,
    #[serde(rename = "UnlockX")]
    UnlockX,
    #[serde(rename = "Unlink")]
    NbUnlink,
    #[serde(rename = "Mkdir")]
    NbMkdir,
    #[serde(rename = "Rmdir")]
    NbRmdir,
    #[serde(rename = "Deltree")]
    Deltree,
    #[serde(rename = "Rename")]
    NbRename,
    #[serde(rename = "QUERY_PATH_INFORMATION")]
    QueryPath,
    #[serde(rename = "QUERY_FILE_INFORMATION")]
    QueryFile,
    #[serde(rename = "SET_FILE_INFORMATION")]
    SetFile,
    #[serde(rename = "QUERY_FS_INFORMATION")]
    QueryFs,
    #[serde(rename = "FIND_FIRST")]
    FindFirst,
    #[serde(rename = "SLEEP")]
    Sleep,
    // fio's third direction: a discard (BLKDISCARD) of a device's range, or
    // a punched hole (the falloc engine). Last, so the indices of the kinds
    // before it are unchanged. (A plain comment: a doc comment on one
    // variant would turn the schema's enum of names into a oneOf.)
    Trim,
}

/// Number of `OpKind` kinds: the size of per-kind arrays.
pub const KINDS: usize = 29;

impl OpKind {
    pub const ALL: [OpKind; KINDS] = [
        OpKind::Read,
        OpKind::Write,
        OpKind::Fsync,
        OpKind::Create,
        OpKind::Stat,
        OpKind::Delete,
        OpKind::Getxattr,
        OpKind::Rename,
        OpKind::Readdir,
        OpKind::OpenClose,
        OpKind::NtCreateX,
        OpKind::NbClose,
        OpKind::ReadX,
        OpKind::WriteX,
        OpKind::Flush,
        OpKind::LockX,
        OpKind::UnlockX,
        OpKind::NbUnlink,
        OpKind::NbMkdir,
        OpKind::NbRmdir,
        OpKind::Deltree,
        OpKind::NbRename,
        OpKind::QueryPath,
        OpKind::QueryFile,
        OpKind::SetFile,
        OpKind::QueryFs,
        OpKind::FindFirst,
        OpKind::Sleep,
        OpKind::Trim,
    ];

    /// Index into per-kind arrays.
    #[inline]
    pub fn idx(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Fsync => "fsync",
            OpKind::Create => "create",
            OpKind::Stat => "stat",
            OpKind::Delete => "delete",
            OpKind::Getxattr => "getxattr",
            OpKind::Rename => "rename",
            OpKind::Readdir => "readdir",
            OpKind::OpenClose => "open-close",
            OpKind::NtCreateX => "NTCreateX",
            OpKind::NbClose => "Close",
            OpKind::ReadX => "ReadX",
            OpKind::WriteX => "WriteX",
            OpKind::Flush => "Flush",
            OpKind::LockX => "LockX",
            OpKind::UnlockX => "UnlockX",
            OpKind::NbUnlink => "Unlink",
            OpKind::NbMkdir => "Mkdir",
            OpKind::NbRmdir => "Rmdir",
            OpKind::Deltree => "Deltree",
            OpKind::NbRename => "Rename",
            OpKind::QueryPath => "QUERY_PATH_INFORMATION",
            OpKind::QueryFile => "QUERY_FILE_INFORMATION",
            OpKind::SetFile => "SET_FILE_INFORMATION",
            OpKind::QueryFs => "QUERY_FS_INFORMATION",
            OpKind::FindFirst => "FIND_FIRST",
            OpKind::Sleep => "SLEEP",
            OpKind::Trim => "trim",
        }
    }
}

/// Exact moments plus a histogram of one latency measure.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LatStats {
    pub count: u64,
    pub sum_ns: u64,
    pub sum_sq_ns: u128,
    pub min_ns: u64,
    pub max_ns: u64,
    pub hist: LatHist,
}

impl LatStats {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        if self.count == 0 || ns < self.min_ns {
            self.min_ns = ns;
        }
        if ns > self.max_ns {
            self.max_ns = ns;
        }
        self.count += 1;
        self.sum_ns += ns;
        self.sum_sq_ns += (ns as u128) * (ns as u128);
        self.hist.record(ns);
    }

    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }

    /// Sample standard deviation (n-1), as fio reports it.
    pub fn stddev_ns(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let n = self.count as f64;
        let mean = self.sum_ns as f64 / n;
        let var = (self.sum_sq_ns as f64 - n * mean * mean) / (n - 1.0);
        var.max(0.0).sqrt()
    }

    /// Percentile `p` (0..=100), clamped to the observed range.
    pub fn percentile(&self, p: f64) -> u64 {
        self.hist.quantile(p / 100.0, self.min_ns, self.max_ns)
    }
}

impl AddAssign<&LatStats> for LatStats {
    fn add_assign(&mut self, o: &LatStats) {
        if o.count == 0 {
            return;
        }
        if self.count == 0 || o.min_ns < self.min_ns {
            self.min_ns = o.min_ns;
        }
        self.max_ns = self.max_ns.max(o.max_ns);
        self.count += o.count;
        self.sum_ns += o.sum_ns;
        self.sum_sq_ns += o.sum_sq_ns;
        self.hist.add(&o.hist);
    }
}

/// Most thresholds `--lat-buckets` accepts; counters live inline on the hot path.
pub const MAX_LAT_BUCKETS: usize = 8;

/// Everything recorded about one direction of one worker (or, merged, of a run).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OpStats {
    /// Latency from submit to completion.
    pub lat: LatStats,
    /// Latency from the intended (scheduled) start, for paced runs only: a stall
    /// that delays later operations shows here and not in `lat`.
    pub sched_lat: Option<LatStats>,
    /// Queueing engines: submission latency (prepared to handed to the kernel)
    /// and completion latency (handed to the kernel to completion seen), as fio's slat/clat.
    pub slat: Option<LatStats>,
    pub clat: Option<LatStats>,
    pub bytes: u64,
    /// Successful reads and writes that moved fewer bytes than they asked
    /// for (fio's short_ios).
    #[serde(default)]
    pub short: u64,
    /// Datagrams a receiver found missing from its sender's sequence
    /// (fio's drop_ios, of its net engine's UDP reader); None where nothing
    /// counts them, so a reader that lost none says 0.
    #[serde(default)]
    pub dropped: Option<u64>,
    /// Failed operations by errno (their latency is not in `lat`).
    pub errors: BTreeMap<i32, u64>,
    /// Thresholds in ns, and exact counts of successful ops at or under each.
    pub bucket_ns: Vec<u64>,
    pub bucket_counts: [u64; MAX_LAT_BUCKETS],
    /// Reads and writes: the rate every 500 ms in KiB/s and in I/Os per
    /// second (fio's bw and iops samples, `samples::SAMPLE_MS`).
    #[serde(default)]
    pub bw_samples: samples::SampleStat,
    #[serde(default)]
    pub iops_samples: samples::SampleStat,
}

impl OpStats {
    pub fn new(bucket_ns: &[u64], paced: bool, split: bool) -> Self {
        OpStats {
            sched_lat: paced.then(LatStats::default),
            slat: split.then(LatStats::default),
            clat: split.then(LatStats::default),
            bucket_ns: bucket_ns.to_vec(),
            ..Default::default()
        }
    }

    /// Records a successful operation.
    #[inline]
    pub fn record_ok(&mut self, lat_ns: u64, bytes: u64) {
        self.lat.record(lat_ns);
        self.bytes += bytes;
        for (i, &t) in self.bucket_ns.iter().enumerate() {
            if lat_ns <= t {
                self.bucket_counts[i] += 1;
            }
        }
    }

    /// Records the latency from the intended start of a paced operation.
    #[inline]
    pub fn record_sched(&mut self, ns: u64) {
        if let Some(s) = &mut self.sched_lat {
            s.record(ns);
        }
    }

    /// Records the submission and completion parts of a queued operation.
    #[inline]
    pub fn record_split(&mut self, slat_ns: u64, clat_ns: u64) {
        if let (Some(s), Some(c)) = (&mut self.slat, &mut self.clat) {
            s.record(slat_ns);
            c.record(clat_ns);
        }
    }

    #[cold]
    pub fn record_err(&mut self, errno: i32) {
        *self.errors.entry(errno).or_insert(0) += 1;
    }

    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Share (0..=1) of successful operations at or under threshold `i`.
    pub fn bucket_share(&self, i: usize) -> f64 {
        if self.lat.count == 0 {
            0.0
        } else {
            self.bucket_counts[i] as f64 / self.lat.count as f64
        }
    }
}

impl AddAssign<&OpStats> for OpStats {
    fn add_assign(&mut self, o: &OpStats) {
        self.lat += &o.lat;
        fn merge(a: &mut Option<LatStats>, b: &Option<LatStats>) {
            match (a.as_mut(), b) {
                (Some(a), Some(b)) => *a += b,
                (None, Some(b)) => *a = Some(b.clone()),
                _ => {}
            }
        }
        merge(&mut self.sched_lat, &o.sched_lat);
        merge(&mut self.slat, &o.slat);
        merge(&mut self.clat, &o.clat);
        self.bytes += o.bytes;
        self.short += o.short;
        if let Some(n) = o.dropped {
            *self.dropped.get_or_insert(0) += n;
        }
        for (e, c) in &o.errors {
            *self.errors.entry(*e).or_insert(0) += c;
        }
        if self.bucket_ns.is_empty() {
            self.bucket_ns = o.bucket_ns.clone();
        }
        for (a, b) in self.bucket_counts.iter_mut().zip(o.bucket_counts) {
            *a += b;
        }
        self.bw_samples += &o.bw_samples;
        self.iops_samples += &o.iops_samples;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_per_thread_stats_equals_recording_the_whole() {
        let buckets = [2_000_000, 10_000_000];
        let mut rng = fastrand::Rng::with_seed(42);
        let values: Vec<u64> = (0..100_000).map(|_| rng.u64(1_000..50_000_000)).collect();
        let mut whole = OpStats::new(&buckets, true, true);
        let mut parts: Vec<OpStats> = (0..7).map(|_| OpStats::new(&buckets, true, true)).collect();
        for (i, &v) in values.iter().enumerate() {
            whole.record_ok(v, 4096);
            whole.record_sched(v + 5);
            whole.record_split(v / 3, v - v / 3);
            parts[i % 7].record_ok(v, 4096);
            parts[i % 7].record_sched(v + 5);
            parts[i % 7].record_split(v / 3, v - v / 3);
            if v % 1000 == 0 {
                whole.record_err(5);
                parts[i % 7].record_err(5);
            }
        }
        let mut merged = OpStats::default();
        for p in &parts {
            merged += p;
        }
        assert_eq!(merged.lat.count, whole.lat.count);
        assert_eq!(merged.lat.sum_ns, whole.lat.sum_ns);
        assert_eq!(merged.lat.sum_sq_ns, whole.lat.sum_sq_ns);
        assert_eq!(merged.lat.min_ns, whole.lat.min_ns);
        assert_eq!(merged.lat.max_ns, whole.lat.max_ns);
        assert_eq!(merged.bytes, whole.bytes);
        assert_eq!(merged.errors, whole.errors);
        assert_eq!(merged.bucket_counts, whole.bucket_counts);
        assert_eq!(merged.lat.hist.to_sparse(), whole.lat.hist.to_sparse());
        for p in [50.0, 99.0, 99.9, 99.999] {
            assert_eq!(merged.lat.percentile(p), whole.lat.percentile(p));
        }
        for (a, b) in [
            (merged.sched_lat, whole.sched_lat),
            (merged.slat, whole.slat),
            (merged.clat, whole.clat),
        ] {
            let (a, b) = (a.unwrap(), b.unwrap());
            assert_eq!((a.count, a.sum_ns, a.max_ns), (b.count, b.sum_ns, b.max_ns));
            assert_eq!(a.hist.to_sparse(), b.hist.to_sparse());
        }
    }

    #[test]
    fn moments_are_exact() {
        let mut s = LatStats::default();
        for v in [10, 20, 30, 40] {
            s.record(v);
        }
        assert_eq!(s.mean_ns(), 25.0);
        assert!((s.stddev_ns() - 12.909944).abs() < 1e-5);
        assert_eq!((s.min_ns, s.max_ns), (10, 40));
    }

    #[test]
    fn bucket_shares_count_at_or_under() {
        let mut s = OpStats::new(&[2_000_000], false, false);
        s.record_ok(2_000_000, 0); // exactly at the threshold counts
        s.record_ok(2_000_001, 0);
        s.record_ok(1, 0);
        s.record_ok(3_000_000, 0);
        assert_eq!(s.bucket_share(0), 0.5);
    }
}
