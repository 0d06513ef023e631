//! fio's queue-depth search for a latency target (io_u.c: lat_target_init,
//! lat_target_check, lat_target_success, lat_target_failed,
//! __lat_target_failed, lat_new_cycle), step for step:
//!
//! - the depth starts at 1 (also during the ramp: fio re-starts the search
//!   when the ramp ends, so the first window starts with measurement);
//! - an operation whose total latency (submission to completion, fio's
//!   `lat`) is above the target is a miss; with latency_percentile=100 a
//!   miss lowers the depth at once (a miss at depth 1 fails the job),
//!   otherwise misses are counted;
//! - once a window has passed, the share of hits decides: enough, and the
//!   depth doubles (or bisects up to the lowest failing depth once one has
//!   failed); too few, and it bisects down (at depth 1 nothing changes and
//!   the window goes on growing);
//! - a change downwards first lets every operation in flight complete
//!   (io_u_quiesce), and the next window starts after that;
//! - when a success leaves the depth where it was, the queue drains, the
//!   statistics are reset (fio's reset_all_stats) and one more window runs;
//!   the success after it ends the job. latency_run skips both: the search
//!   goes on until the job ends otherwise.
//!
//! Both worker loops are generic over `LatencyHook` (`sync::Plain` and
//! `queued`): without a target they use `NoSearch`, whose calls compile to
//! nothing.

use super::Instant;
use crate::plan::io::pacing::LatencyTarget;
use std::time::Duration;

/// What the worker loop does after a completion.
#[derive(Debug, PartialEq)]
pub(super) enum Action {
    /// Nothing changes.
    Keep,
    /// Submit only while fewer than this many are in flight (0: let those
    /// in flight complete first, fio's io_u_quiesce).
    Limit(usize),
    /// The queue has drained after the search settled: reset the
    /// statistics, then go on with this limit for the final window.
    Reset(usize),
    /// The final window met the target: the job ends.
    Done,
    /// A miss at depth 1 with latency_percentile=100: the job fails.
    Fatal(String),
}

/// The search as the worker loops see it.
pub(super) trait LatencyHook {
    /// False for `NoSearch`: the loops leave out every call.
    const ON: bool = true;
    /// One measured operation completed after `lat_ns` (`counts`: a read or
    /// write without an error, which the search judges); `inflight` are
    /// still in flight.
    fn complete(&mut self, counts: bool, lat_ns: u64, now: Instant, inflight: usize) -> Action;
    /// The in-flight limit to start with, given the worker's depth.
    fn start_limit(&self, depth: usize) -> usize;
    /// The depth the search is at (fio's latency_qd); None without one.
    fn depth(&self) -> Option<u32>;
}

/// No latency target: the loops run as they always have.
pub(super) struct NoSearch;

impl LatencyHook for NoSearch {
    const ON: bool = false;

    #[inline(always)]
    fn complete(&mut self, _counts: bool, _lat_ns: u64, _now: Instant, _inflight: usize) -> Action {
        Action::Keep
    }

    #[inline(always)]
    fn start_limit(&self, depth: usize) -> usize {
        depth
    }

    fn depth(&self) -> Option<u32> {
        None
    }
}

/// fio's latency_qd search state (`struct thread_data`'s latency_* fields).
pub(super) struct Search {
    target_ns: u64,
    window: Duration,
    percentile: f64,
    run: bool,
    /// fio's o.iodepth: the search's ceiling.
    iodepth: u32,
    qd: u32,
    qd_low: u32,
    qd_high: u32,
    stable: u32,
    end_run: bool,
    /// The current window's start (latency_ts).
    ts: Instant,
    /// Operations done and missed in the current window.
    ios: u64,
    failed: u64,
    /// Draining before a new window; `Some(true)`: reset the stats first.
    quiesce: Option<bool>,
    done: bool,
}

impl Search {
    /// fio's lat_target_init, at the start of measurement.
    pub(super) fn new(t: &LatencyTarget, iodepth: usize, measure_start: Instant) -> Self {
        Search {
            target_ns: t.target_ns,
            window: Duration::from_micros(t.window_us),
            percentile: t.percentile,
            run: t.run,
            iodepth: iodepth.clamp(1, u32::MAX as usize) as u32,
            qd: 1,
            qd_low: 1,
            qd_high: iodepth.clamp(1, u32::MAX as usize) as u32,
            stable: 0,
            end_run: false,
            ts: measure_start,
            ios: 0,
            failed: 0,
            quiesce: None,
            done: false,
        }
    }

    fn new_cycle(&mut self, now: Instant) {
        self.ts = now;
        self.ios = 0;
        self.failed = 0;
    }

    /// __lat_target_failed: lower the depth; true at depth 1 (nothing to lower).
    fn ramp_down(&mut self) -> bool {
        if self.qd == 1 {
            return true;
        }
        self.qd_high = self.qd;
        if self.qd == self.qd_low {
            self.qd_low -= 1;
        }
        self.qd = (self.qd + self.qd_low) / 2;
        self.stable = 0;
        // a pending reset stays pending: fio's nested quiesce still resets
        self.quiesce = Some(self.quiesce.unwrap_or(false));
        false
    }

    /// lat_target_success.
    fn success(&mut self, now: Instant) {
        let qd = self.qd;
        self.qd_low = self.qd;
        if self.qd + 1 == self.qd_high {
            // fio: a depth that cannot rise any more is "stable"; three
            // successes in a row there raise the ceiling by one
            self.stable += 1;
            if self.stable >= 3 {
                self.qd_high += 1;
                self.stable = 0;
            }
        }
        if self.qd_high != self.iodepth {
            self.qd = (self.qd + self.qd_high) / 2;
        } else {
            self.qd = self.qd.saturating_mul(2);
        }
        self.qd = self.qd.min(self.iodepth);
        if !self.run && self.qd == qd {
            if self.end_run {
                self.done = true;
            } else {
                self.end_run = true;
                self.quiesce = Some(true);
                return;
            }
        }
        self.new_cycle(now);
    }

    /// lat_target_check, after a completion outside a quiesce.
    fn check(&mut self, now: Instant) {
        if now.saturating_duration_since(self.ts) < self.window {
            return;
        }
        let hits = (self.ios - self.failed) as f64 / self.ios as f64 * 100.0;
        // no operation in the window: NaN, a failure as in fio
        if hits >= self.percentile {
            self.success(now);
        } else {
            self.ramp_down();
        }
    }

    /// The queue's next limit once something changed.
    fn after(&mut self, now: Instant, inflight: usize) -> Action {
        if self.done {
            return Action::Done;
        }
        match self.quiesce {
            Some(_) if inflight > 0 => Action::Limit(0),
            Some(reset) => {
                self.quiesce = None;
                self.new_cycle(now);
                if reset {
                    Action::Reset(self.qd as usize)
                } else {
                    Action::Limit(self.qd as usize)
                }
            }
            None => Action::Limit(self.qd as usize),
        }
    }
}

impl LatencyHook for Search {
    fn complete(&mut self, counts: bool, lat_ns: u64, now: Instant, inflight: usize) -> Action {
        let (qd, quiescing) = (self.qd, self.quiesce.is_some());
        if counts {
            self.ios += 1;
            if lat_ns > self.target_ns {
                if self.percentile == 100.0 {
                    if self.ramp_down() {
                        return Action::Fatal(format!(
                            "latency of {lat_ns} ns exceeds latency_target ({} ns) at queue depth 1",
                            self.target_ns
                        ));
                    }
                } else {
                    self.failed += 1;
                }
            }
        }
        if self.quiesce.is_none() {
            self.check(now);
        }
        if self.done || self.quiesce.is_some() || self.qd != qd || quiescing {
            self.after(now, inflight)
        } else {
            Action::Keep
        }
    }

    fn start_limit(&self, _depth: usize) -> usize {
        1
    }

    fn depth(&self) -> Option<u32> {
        Some(self.qd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(pct: f64, iodepth: usize, t0: Instant) -> Search {
        let t = LatencyTarget {
            target_ns: 1000,
            window_us: 1000,
            percentile: pct,
            run: false,
        };
        Search::new(&t, iodepth, t0)
    }

    /// Runs windows of `n` operations each at latency `lat(depth)` with
    /// nothing else in flight; returns the depth of each window and the
    /// final action.
    fn drive(s: &mut Search, lat: impl Fn(u32) -> u64, windows: usize) -> (Vec<u32>, Action) {
        let mut now = Instant::now();
        let mut seen = Vec::new();
        for _ in 0..windows {
            seen.push(s.qd);
            let l = lat(s.qd);
            for _ in 0..10 {
                now += Duration::from_micros(101);
                match s.complete(true, l, now, 0) {
                    Action::Keep | Action::Limit(_) | Action::Reset(_) => {}
                    a => return (seen, a),
                }
            }
        }
        (seen, Action::Keep)
    }

    #[test]
    fn doubles_then_settles_at_the_ceiling_and_ends_after_one_more_window() {
        let t0 = Instant::now();
        let mut s = search(100.0, 8, t0);
        let (seen, end) = drive(&mut s, |_| 10, 20);
        assert_eq!(seen, vec![1, 2, 4, 8, 8]);
        assert_eq!(end, Action::Done);
    }

    #[test]
    fn bisects_down_to_the_deepest_depth_that_meets_the_target() {
        // depths above 5 miss: fio's path 1,2,4,8 (miss) -> 6 (miss) -> 5
        let t0 = Instant::now();
        let mut s = search(90.0, 8, t0);
        let (seen, end) = drive(&mut s, |d| if d > 5 { 5000 } else { 10 }, 40);
        // settled at 5 (its bisection stays at 5), then the final window
        assert_eq!(seen, vec![1, 2, 4, 8, 6, 5, 5]);
        assert_eq!(end, Action::Done);
        assert_eq!(s.depth(), Some(5));
    }

    #[test]
    fn a_miss_at_depth_one_fails_only_with_percentile_100() {
        let t0 = Instant::now();
        let mut s = search(100.0, 8, t0);
        let now = t0 + Duration::from_micros(5);
        assert!(matches!(s.complete(true, 5000, now, 0), Action::Fatal(_)));
        let mut s = search(99.0, 8, t0);
        let (seen, end) = drive(&mut s, |_| 5000, 5);
        assert_eq!(seen, vec![1; 5]);
        assert_eq!(end, Action::Keep);
    }

    #[test]
    fn a_drop_waits_for_the_queue_to_drain() {
        let t0 = Instant::now();
        let mut s = search(100.0, 8, t0);
        s.qd = 4;
        s.qd_low = 4;
        let now = t0 + Duration::from_micros(5);
        // a miss with 3 still in flight: no new submission until they are done
        assert_eq!(s.complete(true, 5000, now, 3), Action::Limit(0));
        assert_eq!(s.complete(true, 10, now, 2), Action::Limit(0));
        assert_eq!(s.complete(true, 10, now, 0), Action::Limit(3));
        assert_eq!(s.depth(), Some(3));
    }
}
