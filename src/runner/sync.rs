//! The loop for engines that complete inline (sync, null): one operation at
//! a time, two timestamps per operation and nothing else on the hot path.
//!
//! It is one of the runner's two worker loops (the other, `queued`, keeps
//! many operations in flight). Pacing plugs in through `pace::Pace`: the
//! loop is generic over it and compiled once per pacing, so `Plain` (no
//! pacing) costs nothing and the paced loops pay only for what they do:
//!
//! - `Plain<NoSearch>`: as fast as the workload goes (a replay waits for
//!   its own timestamps);
//! - `Plain<Search>`: the same under fio's latency_target (`latency`);
//! - `pace::GridSync`: `--rate-iops` and the probe's grid;
//! - `pace::FioSync`: fio's rate, thinktime, rate_min and flow.

use super::latency::{Action, LatencyHook};
use super::pace::{wait_due, Done, Pace};
use super::record::Recorder;
use super::{ns, Ctx, Instant, WorkerOut};
use crate::engine::Engine;
use crate::stats::OpKind;
use crate::workload::{StepMark, Workload};
use std::ops::ControlFlow;
use std::time::Duration;

/// Runs worker `ctx.j` with `pace` around each operation.
///
/// The body allocates nothing; with `Plain<NoSearch>` it is the unpaced
/// loop it always was (the hooks inline to a `next_due` and nothing).
pub(super) fn run<W: Workload, P: Pace>(ctx: &Ctx, engine: &mut dyn Engine, wl: &mut W, mut pace: P) -> WorkerOut {
    let mut rec = Recorder::new(ctx, false);
    if ctx.traced {
        rec.trace = crate::stats::anatomy::thread();
    }
    let mut error = None;
    while !ctx.stopped() {
        let Some(intended) = pace.before(ctx, &mut rec, wl) else {
            break;
        };
        let start = Instant::now();
        // the kernel's counters are read inside the timed window, so every
        // sleep they count lies within the operation's own time
        if let Some(t) = &mut rec.trace {
            t.begin();
        }
        let Some(step) = pace.issue(start, engine, wl) else {
            break;
        };
        if let Some(t) = &mut rec.trace {
            t.stop();
        }
        let end = Instant::now();
        if step.mark != StepMark::Op {
            // a wait, not an operation (fio's net engine waiting for its peer)
            if step.mark == StepMark::Restart {
                rec.reset(end);
            } else if !rec.tick(end) {
                break;
            }
            continue;
        }
        if !rec.tick(end) {
            break;
        }
        let lat = ns(end - start);
        if rec.recording {
            let sched = intended.map(|t| ns(end.saturating_duration_since(t)));
            rec.record(step, lat, sched, end);
            if let Some(t) = &mut rec.trace {
                t.end(step.dir, lat, end);
            }
        }
        if let ControlFlow::Break(e) = pace.after(ctx, &mut rec, Done { step, start, end, lat }) {
            error = e;
            break;
        }
    }
    let mut out = rec.finish(error);
    pace.finish(&mut out);
    out
}

/// No pacing: each operation as soon as the last one ended (or, for a
/// replay, at its own timestamp), under a latency_target search when `L`
/// is `latency::Search`. fio's sync engines run it at depth 1 whatever the
/// search's depth, which fio reports all the same.
pub(super) struct Plain<L: LatencyHook>(pub L);

impl<L: LatencyHook> Pace for Plain<L> {
    #[inline(always)]
    fn before<W: Workload>(&mut self, ctx: &Ctx, rec: &mut Recorder, wl: &mut W) -> Option<Option<Instant>> {
        let intended = wl.next_due();
        if let Some(t) = intended {
            // a replay's timestamps wait too, never past the deadline
            if !wait_due(t, rec.deadline(), Duration::ZERO, &|| ctx.stopped()) {
                rec.waited_out();
                return None;
            }
        }
        Some(intended)
    }

    #[inline(always)]
    fn after(&mut self, ctx: &Ctx, rec: &mut Recorder, d: Done) -> ControlFlow<Option<String>> {
        if !L::ON || !rec.recording {
            return ControlFlow::Continue(());
        }
        let counts = d.step.result >= 0 && matches!(d.step.dir, OpKind::Read | OpKind::Write | OpKind::Trim);
        match self.0.complete(counts, d.lat, d.end, 0) {
            Action::Keep | Action::Limit(_) => ControlFlow::Continue(()),
            Action::Reset(_) => {
                rec.reset(d.end);
                ControlFlow::Continue(())
            }
            Action::Done => ControlFlow::Break(None),
            Action::Fatal(e) => ControlFlow::Break(Some(ctx.failed(e))),
        }
    }

    fn finish(self, out: &mut WorkerOut) {
        out.latency_depth = self.0.depth();
    }
}
