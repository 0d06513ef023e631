//! Per-interval rate samples (fio's `bw_stat`/`iops_stat`) and I/O batch
//! counts (fio's `io_u_submit`/`io_u_complete`): what fio's normal output
//! prints as the `bw (KiB/s)`/`iops` sample lines and the `submit`/
//! `complete` lines. Both are a handful of integers per worker, never one
//! entry per operation.

use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

/// fio's default `bwavgtime`/`iopsavgtime`: one rate sample per 500 ms.
pub const SAMPLE_MS: u64 = 500;

/// Samples of a rate, as fio's `io_stat`: how many, their extremes, and
/// the running mean and sum of squared deviations (fio's add_stat_sample,
/// Welford's update).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleStat {
    pub n: u64,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    /// Sum of squared deviations from the mean.
    pub s: f64,
}

impl SampleStat {
    /// One sample (fio's add_stat_sample).
    pub fn add(&mut self, v: u64) {
        if self.n == 0 {
            (self.min, self.max) = (v, v);
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        let val = v as f64;
        let delta = val - self.mean;
        self.mean += delta / (self.n as f64 + 1.0);
        self.s += delta * (val - self.mean);
        self.n += 1;
    }

    /// The sample standard deviation (0 for fewer than two samples).
    pub fn stddev(&self) -> f64 {
        if self.n > 1 {
            (self.s / (self.n - 1) as f64).sqrt()
        } else {
            0.0
        }
    }
}

/// Merging the samples of several workers is fio's group_reporting sum
/// (stat.c sum_stat with pure_sum): minima, maxima, means and deviations
/// add up, so the group's figures are those of its summed rate.
impl AddAssign<&SampleStat> for SampleStat {
    fn add_assign(&mut self, o: &SampleStat) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        self.min += o.min;
        self.max += o.max;
        self.n += o.n;
        self.mean += o.mean;
        self.s += o.s;
    }
}

/// How many operations each submit call handed to the engine and each
/// reap call brought back (index: the batch size; a queueing engine's
/// only). A sync engine has none: each of its operations is its own
/// submit and completion by construction.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Batches {
    pub submit: Vec<u64>,
    pub complete: Vec<u64>,
}

fn count(v: &mut Vec<u64>, n: usize) {
    if v.len() <= n {
        v.resize(n + 1, 0);
    }
    v[n] += 1;
}

impl Batches {
    #[inline]
    pub fn note_submit(&mut self, n: usize) {
        count(&mut self.submit, n);
    }

    #[inline]
    pub fn note_complete(&mut self, n: usize) {
        count(&mut self.complete, n);
    }

    pub fn is_empty(&self) -> bool {
        self.submit.is_empty() && self.complete.is_empty()
    }
}

impl AddAssign<&Batches> for Batches {
    fn add_assign(&mut self, o: &Batches) {
        for (a, b) in [(&mut self.submit, &o.submit), (&mut self.complete, &o.complete)] {
            if a.len() < b.len() {
                a.resize(b.len(), 0);
            }
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_as_fio_counts_them() {
        let mut s = SampleStat::default();
        for v in [100, 200, 300] {
            s.add(v);
        }
        assert_eq!((s.n, s.min, s.max), (3, 100, 300));
        assert!((s.mean - 200.0).abs() < 1e-9);
        assert!((s.stddev() - 100.0).abs() < 1e-9);
        // group_reporting: the sums of two jobs' figures
        let mut g = SampleStat::default();
        g += &s;
        g += &s;
        assert_eq!((g.n, g.min, g.max), (6, 200, 600));
        assert!((g.mean - 400.0).abs() < 1e-9);
    }

    #[test]
    fn batches_count_per_size_and_merge() {
        let mut a = Batches::default();
        a.note_submit(1);
        a.note_submit(8);
        a.note_complete(3);
        let mut b = Batches::default();
        b.note_submit(1);
        b += &a;
        assert_eq!(b.submit, vec![0, 2, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(b.complete, vec![0, 0, 0, 1]);
    }
}
