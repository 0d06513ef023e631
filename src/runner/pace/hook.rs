//! The hook through which a pacing drives the inline engines' loop
//! (`runner::sync::run`): what it does before, during and after each
//! operation, and what it adds to the worker's result.

use crate::engine::Engine;
use crate::runner::record::Recorder;
use crate::runner::{Ctx, Instant, WorkerOut};
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
