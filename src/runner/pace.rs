//! Pacing on a fixed grid, shared by `--rate-iops` and the probe: slot k is
//! due at t0 + k × period whatever happened before, and latency is also
//! measured from the slot, so a stall that delays later operations shows
//! (coordinated omission corrected).
//!
//! Two ways to handle an operation that overruns its slot: `--rate-iops`
//! catches up (the late slots run back to back), the probe skips the slots
//! it missed, counts them, and records each one's latency from its slot to
//! the end of the operation that blocked it.

use super::record::Recorder;
use super::{ns, Ctx, Instant, WorkerOut};
use crate::engine::Engine;
use crate::workload::Workload;
use serde::{Deserialize, Serialize};
use std::num::NonZeroU64;
use std::time::Duration;

/// How long before a slot the probe stops sleeping and spins: a VM's
/// wake-up lateness would otherwise show in every latency measured from the
/// schedule.
pub const SPIN: Duration = Duration::from_micros(250);

/// The longest sleep between two looks at the stop flag.
const NAP: Duration = Duration::from_millis(200);

/// A paced group's grid.
#[derive(Clone, Debug)]
pub struct Pacing {
    pub period: Duration,
    /// Sleep until this long before a slot, then spin.
    pub spin: Duration,
    /// An operation that overruns skips the slots it missed (the probe);
    /// false: the late slots run back to back to catch up (`--rate-iops`).
    pub skip_missed: bool,
    /// No slot at or after this (from the run's start); unless `count` ends
    /// the worker first, it waits for this moment before it stops.
    pub end: Option<Duration>,
    /// The worker stops after this many operations.
    pub count: Option<u64>,
    /// Keep every operation in `WorkerOut::paced`.
    pub trace: bool,
}

impl Pacing {
    /// `--rate-iops`: `rate` operations per second, late ones catch up.
    pub fn rate(rate: u64) -> Self {
        Pacing {
            period: Duration::from_nanos(1_000_000_000 / rate.max(1)),
            spin: Duration::ZERO,
            skip_missed: false,
            end: None,
            count: None,
            trace: false,
        }
    }

    /// The probe: a slot every `period` until `end`, missed slots skipped,
    /// every operation traced.
    pub fn probe(period: Duration, end: Duration, count: Option<u64>) -> Self {
        Pacing {
            period,
            spin: SPIN,
            skip_missed: true,
            end: Some(end),
            count,
            trace: true,
        }
    }
}

/// One paced operation, all times in ns since the run's start.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PacedOp {
    /// Its slot (scheduled start).
    pub slot_ns: u64,
    /// When it really started.
    pub start_ns: u64,
    /// From its start to its end.
    pub lat_ns: u64,
    /// From its slot to its end.
    pub sched_ns: u64,
    /// Slots skipped right after it because it overran.
    pub missed_after: u64,
    /// >= 0, or the negated errno.
    pub result: i64,
}

/// The slots of one worker.
pub(crate) struct Grid {
    t0: Instant,
    period_ns: u64,
    /// The current slot.
    k: u64,
    spin: Duration,
}

impl Grid {
    pub fn new(t0: Instant, p: &Pacing) -> Self {
        Grid {
            t0,
            period_ns: ns(p.period).max(1),
            k: 0,
            spin: p.spin,
        }
    }

    /// The current slot, since the start.
    #[inline]
    pub fn slot_ns(&self) -> u64 {
        self.period_ns.saturating_mul(self.k)
    }

    /// When the current slot is due.
    #[inline]
    pub fn due(&self) -> Instant {
        self.t0 + Duration::from_nanos(self.slot_ns())
    }

    /// Takes the current slot and moves to the next one (catching up).
    #[inline]
    pub fn take(&mut self) -> Instant {
        let t = self.due();
        self.k += 1;
        t
    }

    /// The operation of the current slot ended `end_ns` after the start:
    /// moves to the first slot still ahead and returns the slots skipped.
    #[inline]
    pub fn skip_to(&mut self, end_ns: u64) -> u64 {
        let next = end_ns.div_ceil(self.period_ns).max(self.k + 1);
        let missed = next - self.k - 1;
        self.k = next;
        missed
    }

    /// Slot `j` since the start.
    #[inline]
    pub fn slot_of(&self, j: u64) -> u64 {
        self.period_ns.saturating_mul(j)
    }

    /// Waits until `t` (see `wait_until`).
    #[inline]
    pub fn wait(&self, t: Instant, stopped: &dyn Fn() -> bool) -> bool {
        wait_until(t, self.spin, stopped)
    }
}

/// Waits until `t`: sleeps (at most `NAP` at a time, looking at `stopped`
/// between) until `spin` before it, then spins. False when `stopped` ended
/// the wait.
pub(crate) fn wait_until(t: Instant, spin: Duration, stopped: &dyn Fn() -> bool) -> bool {
    loop {
        let now = Instant::now();
        if now >= t {
            return true;
        }
        let left = t - now;
        if left > spin {
            std::thread::sleep((left - spin).min(NAP));
            if stopped() {
                return false;
            }
        } else {
            while Instant::now() < t {
                std::hint::spin_loop();
            }
            return true;
        }
    }
}

/// Wake up on time: the default 50 µs timer slack would show in every
/// latency measured from the schedule. Per thread: each paced worker sets its own.
pub(crate) fn wake_on_time() {
    let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(1));
}

/// The loop of a paced worker whose engine completes inline: wait for the
/// slot, one step, two timestamps, then the grid moves on.
pub(super) fn worker<W: Workload>(ctx: &Ctx, engine: &mut dyn Engine, wl: &mut W, p: &Pacing) -> WorkerOut {
    wake_on_time();
    let mut rec = Recorder::new(ctx, false);
    let mut grid = Grid::new(ctx.t0, p);
    let end = p.end.map(|e| ctx.t0 + e);
    let stopped = || ctx.stopped();
    let mut trace = Vec::new();
    let mut n = 0u64;
    while !ctx.stopped() && p.count.is_none_or(|c| n < c) {
        let (due, slot_ns) = (grid.due(), grid.slot_ns());
        if let Some(e) = end.filter(|&e| due >= e) {
            // no slot left: the grid's time runs out (a load beside it runs its time)
            if p.count.is_none() {
                grid.wait(e, &stopped);
            }
            break;
        }
        if !grid.wait(due, &stopped) || ctx.stopped() {
            break;
        }
        let start = Instant::now();
        if end.is_some_and(|e| start >= e) {
            break;
        }
        let Some(step) = wl.step(engine) else { break };
        let t_end = Instant::now();
        n += 1;
        let (lat, sched) = (ns(t_end - start), ns(t_end.saturating_duration_since(due)));
        let end_ns = ns(t_end.saturating_duration_since(ctx.t0));
        let (k, missed) = if p.skip_missed {
            let k = grid.k;
            (k, grid.skip_to(end_ns))
        } else {
            grid.take();
            (0, 0)
        };
        if !rec.tick(t_end) {
            break;
        }
        if rec.recording {
            rec.record(step.dir, step.result, lat, Some(sched), t_end);
            if step.result >= 0 {
                // each skipped slot waited until this end
                for j in k + 1..k + 1 + missed {
                    rec.record_sched(step.dir, end_ns.saturating_sub(grid.slot_of(j)));
                }
            }
        }
        if p.trace {
            trace.push(PacedOp {
                slot_ns,
                start_ns: ns(start.saturating_duration_since(ctx.t0)),
                lat_ns: lat,
                sched_ns: sched,
                missed_after: missed,
                result: step.result,
            });
        }
    }
    let mut out = rec.finish(None);
    out.paced = trace;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overrun_skips_to_the_first_slot_still_ahead_and_counts_the_missed() {
        let p = Pacing::probe(Duration::from_millis(10), Duration::from_secs(1), None);
        let mut g = Grid::new(Instant::now(), &p);
        // slot 0 ends in time: the next slot is 1, nothing missed
        assert_eq!(g.skip_to(3_000_000), 0);
        assert_eq!(g.slot_ns(), 10_000_000);
        // slot 1 ends at 55 ms: slots 2..=5 were missed, 6 (60 ms) is next
        assert_eq!(g.skip_to(55_000_000), 4);
        assert_eq!(g.slot_ns(), 60_000_000);
        // ending exactly on a slot takes that slot
        assert_eq!(g.skip_to(70_000_000), 0);
        assert_eq!(g.slot_ns(), 70_000_000);
        assert_eq!(g.skip_to(80_000_000), 0);
        assert_eq!(g.slot_of(9), 90_000_000);
    }

    #[test]
    fn rate_pacing_takes_every_slot_in_turn() {
        let t0 = Instant::now();
        let mut g = Grid::new(t0, &Pacing::rate(1000));
        assert_eq!(g.take(), t0);
        assert_eq!(g.take(), t0 + Duration::from_millis(1));
        assert_eq!(g.due(), t0 + Duration::from_millis(2));
    }
}
