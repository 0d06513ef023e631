//! fio's rate_min and rate_iops_min (__check_min_rate): once the first 2 s
//! have passed, every rate_cycle a direction must have moved at least its
//! minimum since the last check, or the job fails.

use crate::plan::PacingPlan;
use crate::stats::Instant;
use std::time::Duration;

/// fio's __check_min_rate state per direction.
pub(super) struct MinRate {
    min_bps: [u64; 2],
    min_iops: [u64; 2],
    /// rate or rate_min set: the bytes are checked, else the operations.
    by_bytes: [bool; 2],
    cycle: Duration,
    /// Since the end of the ramp: bytes and operations completed.
    bytes: [u64; 2],
    ios: [u64; 2],
    /// At the last check.
    last_bytes: [u64; 2],
    last_ios: [u64; 2],
    last_at: [Option<Instant>; 2],
}

impl MinRate {
    pub(super) fn new(p: &PacingPlan) -> Self {
        MinRate {
            min_bps: p.rate_min,
            min_iops: p.rate_iops_min,
            by_bytes: std::array::from_fn(|d| p.rate[d] > 0 || p.rate_min[d] > 0),
            cycle: Duration::from_millis(if p.rate_cycle_ms == 0 {
                1000
            } else {
                p.rate_cycle_ms as u64
            }),
            bytes: [0; 2],
            ios: [0; 2],
            last_bytes: [0; 2],
            last_ios: [0; 2],
            last_at: [None; 2],
        }
    }

    /// A measured operation of direction `d` completed with `result`;
    /// true when `d` has a minimum to check.
    #[inline]
    pub(super) fn note(&mut self, d: usize, result: i64) -> bool {
        if result >= 0 {
            self.bytes[d] += result as u64;
            self.ios[d] += 1;
        }
        self.min_bps[d] != 0 || self.min_iops[d] != 0
    }

    /// fio's __check_min_rate for direction `d` at `now`; measurement
    /// started at `measure_start`.
    #[cold]
    pub(super) fn check(&mut self, d: usize, now: Instant, measure_start: Instant) -> Option<String> {
        // a 2 second settle period in the beginning
        if now.saturating_duration_since(measure_start) < Duration::from_secs(2) {
            return None;
        }
        if let Some(at) = self.last_at[d] {
            let spent = now.saturating_duration_since(at);
            if spent < self.cycle {
                return None;
            }
            let ms = spent.as_millis().max(1) as u64;
            if self.by_bytes[d] {
                let rate = (self.bytes[d] - self.last_bytes[d]).saturating_mul(1000) / ms;
                if rate < self.min_bps[d] {
                    return Some(format!("rate_min={}B/s not met, got {rate}B/s", self.min_bps[d]));
                }
            } else {
                let rate = (self.ios[d] - self.last_ios[d]).saturating_mul(1000) / ms;
                if rate < self.min_iops[d] {
                    return Some(format!("rate_iops_min={} not met, got {rate} IOPS", self.min_iops[d]));
                }
            }
        }
        self.last_bytes[d] = self.bytes[d];
        self.last_ios[d] = self.ios[d];
        self.last_at[d] = Some(now);
        None
    }
}
