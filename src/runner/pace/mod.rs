//! Pacing: when a worker's next operation may go. Three kinds, one file
//! each, and the hook through which they drive the inline engines' loop
//! (`runner::sync`):
//!
//! - `grid`: a fixed grid of slots, shared by `--rate-iops` and the probe;
//! - `fio`: fio's pacing from a `PacingPlan`, made of its rate `schedule`
//!   per direction, `think` (thinktime), `min_rate` (rate_min) and `flow`;
//! - `wait`: the waits they all go through, never past the deadline.
//!
//! The queued loop (`runner::queued`) uses `Grid` and `FioPacer` directly:
//! there a wait must leave room for reaping, which this hook cannot.

mod fio;
mod flow;
mod grid;
mod min_rate;
mod schedule;
mod think;
mod wait;

pub(crate) use fio::{FioPacer, FioSync};
pub(crate) use grid::{Grid, GridSync};
pub use grid::{PacedOp, Pacing, SPIN};
pub(crate) use schedule::Waited;
pub(crate) use wait::{wait_due, wait_until};

use super::record::Recorder;
use super::{Ctx, Instant, WorkerOut};
use crate::engine::Engine;
use crate::workload::{Step, Workload};
use std::ops::ControlFlow;

/// One completed operation, as the loop hands it to `Pace::after`.
#[derive(Clone, Copy)]
pub(crate) struct Done {
    pub step: Step,
    pub start: Instant,
    pub end: Instant,
    /// From `start` to `end`, ns.
    pub lat: u64,
}

/// What a pacing does around each operation of the inline engines' loop
/// (`runner::sync::run`). The loop is generic over it, so each pacing is
/// compiled into a loop of its own: the unpaced one's hooks are empty and
/// inline to nothing, and its hot path stays two timestamps per operation.
pub(crate) trait Pace {
    /// Waits until the next operation may go. `Some(intended)`: go, with
    /// the time the operation's latency from its schedule counts from
    /// (None: none is recorded). None: the worker stops (the pacing has
    /// told `rec` when a wait ran into the deadline or a stop).
    fn before<W: Workload>(&mut self, ctx: &Ctx, rec: &mut Recorder, wl: &mut W) -> Option<Option<Instant>>;

    /// Does the operation, which starts at `start`; None when there is none.
    #[inline(always)]
    fn issue<W: Workload>(&mut self, _start: Instant, engine: &mut dyn Engine, wl: &mut W) -> Option<Step> {
        wl.step(engine)
    }

    /// After the operation was counted (and recorded, while `rec.recording`):
    /// `Break` ends the worker, with its error if it failed.
    fn after(&mut self, ctx: &Ctx, rec: &mut Recorder, done: Done) -> ControlFlow<Option<String>>;

    /// What the pacing adds to the worker's result.
    fn finish(self, out: &mut WorkerOut);
}
