//! Pacing on a fixed grid, shared by `--rate-iops` and the probe: slot k is
//! due at t0 + k × period whatever happened before, and latency is also
//! measured from the slot, so a stall that delays later operations shows
//! (coordinated omission corrected).
//!
//! Two ways to handle an operation that overruns its slot: `--rate-iops`
//! catches up (the late slots run back to back), the probe skips the slots
//! it missed, counts them, and records each one's latency from its slot to
//! the end of the operation that blocked it.

use super::hook::{Done, Pace};
use super::wait::{wait_due, wake_on_time};
use crate::engine::Engine;
use crate::runner::record::Recorder;
use crate::runner::{ns, Ctx, Instant, WorkerOut};
use crate::workload::{Step, Workload};
use serde::{Deserialize, Serialize};
use std::ops::ControlFlow;
use std::time::Duration;

/// How long before a slot the probe stops sleeping and spins: a VM's
/// wake-up lateness would otherwise show in every latency measured from the
/// schedule.
pub const SPIN: Duration = Duration::from_micros(250);

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

    /// Waits until `t`, never past `deadline` (see `wait_due`).
    #[inline]
    pub fn wait(&self, t: Instant, deadline: Option<Instant>, stopped: &dyn Fn() -> bool) -> bool {
        wait_due(t, deadline, self.spin, stopped)
    }
}

/// A grid driving the inline engines' loop: wait for the slot, one step,
/// two timestamps, then the grid moves on.
pub(crate) struct GridSync {
    grid: Grid,
    t0: Instant,
    /// No slot at or after this (`Pacing::end`, from the run's start).
    end: Option<Instant>,
    count: Option<u64>,
    skip_missed: bool,
    /// `Pacing::trace`: every operation, in order.
    trace: Option<Vec<PacedOp>>,
    /// Operations done.
    n: u64,
    /// The slot of the operation under way: when it was due, and since the start.
    due: Instant,
    slot_ns: u64,
}

impl GridSync {
    /// Worker `ctx.j`'s pacing on `p`; sets the thread's timer slack.
    pub fn new(ctx: &Ctx, p: &Pacing) -> Self {
        wake_on_time();
        GridSync {
            grid: Grid::new(ctx.t0, p),
            t0: ctx.t0,
            end: p.end.map(|e| ctx.t0 + e),
            count: p.count,
            skip_missed: p.skip_missed,
            trace: p.trace.then(Vec::new),
            n: 0,
            due: ctx.t0,
            slot_ns: 0,
        }
    }
}

impl Pace for GridSync {
    fn before<W: Workload>(&mut self, ctx: &Ctx, rec: &mut Recorder, _wl: &mut W) -> Option<Option<Instant>> {
        if self.count.is_some_and(|c| self.n >= c) {
            return None;
        }
        let stopped = || ctx.stopped();
        let (due, slot_ns) = (self.grid.due(), self.grid.slot_ns());
        if let Some(e) = self.end.filter(|&e| due >= e) {
            // no slot left: the grid's time runs out (a load beside it runs its time)
            if self.count.is_none() {
                self.grid.wait(e, rec.deadline(), &stopped);
                rec.waited_out();
            }
            return None;
        }
        if !self.grid.wait(due, rec.deadline(), &stopped) || ctx.stopped() {
            rec.waited_out();
            return None;
        }
        (self.due, self.slot_ns) = (due, slot_ns);
        Some(Some(due))
    }

    #[inline]
    fn issue<W: Workload>(&mut self, start: Instant, engine: &mut dyn Engine, wl: &mut W) -> Option<Step> {
        if self.end.is_some_and(|e| start >= e) {
            return None;
        }
        wl.step(engine)
    }

    fn after(&mut self, _ctx: &Ctx, rec: &mut Recorder, d: Done) -> ControlFlow<Option<String>> {
        self.n += 1;
        let end_ns = ns(d.end.saturating_duration_since(self.t0));
        let (k, missed) = if self.skip_missed {
            let k = self.grid.k;
            (k, self.grid.skip_to(end_ns))
        } else {
            self.grid.take();
            (0, 0)
        };
        if rec.recording && d.step.result >= 0 {
            // each skipped slot waited until this end
            for j in k + 1..k + 1 + missed {
                rec.record_sched(d.step.dir, end_ns.saturating_sub(self.grid.slot_of(j)));
            }
        }
        if let Some(trace) = &mut self.trace {
            trace.push(PacedOp {
                slot_ns: self.slot_ns,
                start_ns: ns(d.start.saturating_duration_since(self.t0)),
                lat_ns: d.lat,
                sched_ns: ns(d.end.saturating_duration_since(self.due)),
                missed_after: missed,
                result: d.step.result,
            });
        }
        ControlFlow::Continue(())
    }

    fn finish(self, out: &mut WorkerOut) {
        out.paced = self.trace.unwrap_or_default();
    }
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
