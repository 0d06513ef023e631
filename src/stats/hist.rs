//! A latency histogram: HdrHistogram with 2 significant digits over 1 ns .. 1 h.
//!
//! Two digits keep the relative error of every recorded value under 1/128
//! (0.78 %), inside DESIGN.md's 1 % rule, at ~36 KiB per histogram instead of the
//! ~264 KiB that 3 digits cost. That matters: a worker keeps one per direction
//! for the whole run and one per direction for the current interval.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest value the histogram resolves; larger values are clamped to it.
pub const MAX_NS: u64 = 3_600 * 1_000_000_000;

/// A mergeable latency histogram in integer nanoseconds. The counts are
/// allocated at the first value, so the per-kind arrays that workers keep cost
/// nothing for kinds a workload never does.
#[derive(Clone, Debug, Default)]
pub struct LatHist(Option<Box<Histogram<u64>>>);

fn empty() -> Box<Histogram<u64>> {
    // Bounds are constants known to be valid, so this cannot fail.
    Box::new(Histogram::new_with_bounds(1, MAX_NS, 2).expect("valid histogram bounds"))
}

impl LatHist {
    /// An empty histogram.
    pub fn new() -> Self {
        LatHist(None)
    }

    /// Records one value; 0 ns is recorded as 1 ns and values over an hour as an hour.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.0.get_or_insert_with(empty).saturating_record(ns.clamp(1, MAX_NS));
    }

    /// Records `n` values of `ns` (a histogram made elsewhere, bucket by bucket).
    pub fn record_n(&mut self, ns: u64, n: u64) {
        if n > 0 {
            self.0
                .get_or_insert_with(empty)
                .saturating_record_n(ns.clamp(1, MAX_NS), n);
        }
    }

    /// Number of recorded values.
    pub fn len(&self) -> u64 {
        self.0.as_ref().map_or(0, |h| h.len())
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds every value of `other` (same bounds, so this cannot fail).
    pub fn add(&mut self, other: &LatHist) {
        if let Some(o) = &other.0 {
            self.0
                .get_or_insert_with(empty)
                .add(&**o)
                .expect("histograms share bounds");
        }
    }

    /// Removes the values of `earlier`, a snapshot this histogram has grown from.
    pub fn subtract(&mut self, earlier: &LatHist) {
        if let (Some(h), Some(e)) = (&mut self.0, &earlier.0) {
            // Only fails if `earlier` holds values this one lacks: not a snapshot.
            let _ = h.subtract(&**e);
        }
    }

    /// Lowest recorded value (bucket resolution), 0 when empty.
    pub fn min(&self) -> u64 {
        match &self.0 {
            Some(h) if !h.is_empty() => h.min(),
            _ => 0,
        }
    }

    /// Forgets every value, keeping the allocation.
    pub fn reset(&mut self) {
        if let Some(h) = &mut self.0 {
            h.reset();
        }
    }

    /// The value at quantile `q` (0..=1), clamped to the exact observed `[min, max]`
    /// so that a percentile never claims a latency no operation had.
    pub fn quantile(&self, q: f64, min: u64, max: u64) -> u64 {
        match &self.0 {
            Some(h) if !h.is_empty() => h.value_at_quantile(q).clamp(min, max.max(min)),
            _ => 0,
        }
    }

    /// The sparse form stored in result files: `(value_ns, count)` per non-empty
    /// bucket, where value is the highest value equivalent to the bucket. Recording
    /// these pairs again rebuilds the same histogram.
    pub fn to_sparse(&self) -> SparseHist {
        SparseHist {
            significant_digits: 2,
            buckets: self.0.as_ref().map_or_else(Vec::new, |h| {
                h.iter_recorded()
                    .map(|v| (v.value_iterated_to(), v.count_at_value()))
                    .collect()
            }),
        }
    }

    /// Rebuilds a histogram from its sparse form.
    pub fn from_sparse(s: &SparseHist) -> Self {
        let mut h = LatHist::new();
        for &(v, c) in &s.buckets {
            h.0.get_or_insert_with(empty).saturating_record_n(v.clamp(1, MAX_NS), c);
        }
        h
    }
}

/// Sent between ranks in its sparse form: rebuilding it is exact.
impl Serialize for LatHist {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_sparse().serialize(s)
    }
}

impl<'de> Deserialize<'de> for LatHist {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        SparseHist::deserialize(d).map(|s| LatHist::from_sparse(&s))
    }
}

/// Serialized histogram: non-empty buckets as `[value_ns, count]` pairs.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct SparseHist {
    pub significant_digits: u8,
    pub buckets: Vec<(u64, u64)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact_quantile(sorted: &[u64], q: f64) -> u64 {
        // HdrHistogram's definition: the smallest value with at least q*n values at or under it.
        let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
        sorted[rank - 1]
    }

    #[test]
    fn percentile_error_is_under_one_percent_on_random_data() {
        let mut rng = fastrand::Rng::with_seed(7);
        for &spread in &[1_000u64, 1_000_000, 1_000_000_000] {
            let mut h = LatHist::new();
            let mut v: Vec<u64> = (0..200_000)
                .map(|_| {
                    // log-uniform, as latencies are: several decades of values.
                    let e = rng.f64() * (spread as f64).ln();
                    (e.exp() as u64).max(1) + 100
                })
                .collect();
            for &x in &v {
                h.record(x);
            }
            v.sort_unstable();
            let (min, max) = (v[0], *v.last().unwrap());
            for &q in &[0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999, 1.0] {
                let exact = exact_quantile(&v, q) as f64;
                let got = h.quantile(q, min, max) as f64;
                let err = (got - exact).abs() / exact;
                assert!(err <= 0.01, "q={q} spread={spread}: exact {exact} got {got} err {err}");
            }
            assert_eq!(h.quantile(1.0, min, max), max, "p100 is clamped to the true max");
            assert!(h.quantile(0.0, min, max) >= min);
        }
    }

    #[test]
    fn sparse_round_trip_rebuilds_the_same_histogram() {
        let mut h = LatHist::new();
        let mut rng = fastrand::Rng::with_seed(1);
        for _ in 0..10_000 {
            h.record(rng.u64(1..10_000_000));
        }
        let back = LatHist::from_sparse(&h.to_sparse());
        assert_eq!(back.len(), h.len());
        assert_eq!(back.to_sparse(), h.to_sparse());
        for q in [0.5, 0.99, 0.999] {
            assert_eq!(back.quantile(q, 0, u64::MAX), h.quantile(q, 0, u64::MAX));
        }
    }

    #[test]
    fn extremes_are_clamped_not_lost() {
        let mut h = LatHist::new();
        h.record(0);
        h.record(u64::MAX);
        assert_eq!(h.len(), 2);
    }
}
