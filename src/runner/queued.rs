//! The loop for queueing engines (io_uring): keep up to `depth` operations in
//! flight, submit them in batches of `batch`, reap completions by token.
//!
//! Timestamps, as fio takes them: `t_prep` when the operation is handed to the
//! engine, `t_sub` when the batch holding it has been submitted, and `end`
//! when its completion is processed. slat = t_sub - t_prep, clat = end -
//! t_sub, lat = end - t_prep.
//!
//! With fio's latency_target the number in flight is held at or below the
//! depth the search is at (`latency::Search`); without one the loop is
//! built with `latency::NoSearch`, which adds nothing to it.

use super::latency::{Action, LatencyHook, NoSearch, Search};
use super::pace::{wait_due, FioPacer, Grid, Pacing, Waited};
use super::record::Recorder;
use super::{ns, Ctx, Instant, WorkerOut};
use crate::engine::{Completion, Engine, Submit};
use crate::workload::{NextOp, Step, Workload};

struct Slot {
    next: NextOp,
    t_prep: Instant,
    t_sub: Instant,
    intended: Option<Instant>,
}

/// A queueing worker's state between engine calls.
struct Queue<'a, L: LatencyHook> {
    depth: usize,
    /// Submit only while fewer than this are in flight (≤ depth): the
    /// depth itself, or where fio's latency_target search is.
    limit: usize,
    lat: L,
    batch: usize,
    /// --rate-iops: the grid, late operations catching up.
    grid: Option<Grid>,
    /// fio's pacing (rate per direction, poisson, thinktime, rate_min).
    pacer: Option<FioPacer>,
    rec: Recorder<'a>,
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    unsubmitted: Vec<usize>,
    /// Completions reaped, processed from `next_comp` on.
    comps: Vec<Completion>,
    next_comp: usize,
    inflight: usize,
    /// An operation taken from the workload but not yet accepted by the engine.
    held: Option<(usize, NextOp, Option<Instant>)>,
    done: bool,
    error: Option<String>,
    /// The direction of the last completion (a think adds to its rate).
    last_dir: crate::stats::OpKind,
}

pub(super) fn worker<W: Workload>(ctx: &Ctx, engine: &mut dyn Engine, wl: &mut W) -> WorkerOut {
    match &ctx.cfg.pacing.latency {
        // fio's o.iodepth bounds the search, the engine's cap what is in flight
        Some(t) => run(ctx, engine, wl, Search::new(t, ctx.cfg.depth, ctx.t0 + ctx.cfg.ramp)),
        None => run(ctx, engine, wl, NoSearch),
    }
}

fn run<W: Workload, L: LatencyHook>(ctx: &Ctx, engine: &mut dyn Engine, wl: &mut W, lat: L) -> WorkerOut {
    let cfg = ctx.cfg;
    let depth = cfg.depth.clamp(1, engine.caps().max_depth.max(1));
    let mut q = Queue {
        depth,
        limit: lat.start_limit(depth).min(depth),
        lat,
        batch: cfg.batch.clamp(1, depth),
        grid: cfg.rate.map(|r| Grid::new(ctx.t0, &Pacing::rate(r))),
        pacer: cfg
            .pacing
            .paces()
            .then(|| FioPacer::new(&cfg.pacing, ctx.j, ctx.t0, ctx.t0 + cfg.ramp)),
        rec: Recorder::new(ctx, true),
        slots: (0..depth).map(|_| None).collect(),
        free: (0..depth).rev().collect(),
        unsubmitted: Vec::with_capacity(depth),
        comps: Vec::with_capacity(depth),
        next_comp: 0,
        inflight: 0,
        held: None,
        done: false,
        error: None,
        last_dir: crate::stats::OpKind::Read,
    };
    // Completions reaped but not yet processed. Each is processed with its
    // own timestamp and its slot refilled at once, so the queue stays full the
    // way fio keeps it (reap one, submit one) while one io_uring_enter can
    // still bring many completions.
    loop {
        if !q.done && ctx.stopped() {
            q.finish_taking();
        }
        q.fill(ctx, engine, wl);
        if q.process_one(ctx, wl) {
            continue;
        }
        if !q.submit_and_wait(engine) {
            break;
        }
    }
    let mut out = q.rec.finish(q.error);
    out.latency_depth = q.lat.depth();
    out
}

impl<L: LatencyHook> Queue<'_, L> {
    /// No more operations: a held one goes back.
    fn finish_taking(&mut self) {
        self.done = true;
        if let Some((slot, _, _)) = self.held.take() {
            self.free.push(slot);
        }
    }

    /// Submits the queued operations and stamps their submission time.
    fn commit(&mut self, engine: &mut dyn Engine) -> std::io::Result<()> {
        let r = engine.commit();
        let t = Instant::now();
        self.rec.note_submit(self.unsubmitted.len());
        for s in self.unsubmitted.drain(..) {
            if let Some(s) = self.slots[s].as_mut() {
                s.t_sub = t;
            }
        }
        r
    }

    /// The next operation to submit (a held one first), or None when the
    /// workload is done.
    fn take<W: Workload>(&mut self, wl: &mut W) -> Option<(usize, NextOp, Option<Instant>)> {
        if let Some(h) = self.held.take() {
            return Some(h);
        }
        let slot = self
            .free
            .pop()
            .expect("a free slot when fewer than depth are in flight");
        if let Some(p) = self.pacer.as_ref().filter(|p| p.switches) {
            // fio's rate_ddir: the direction behind its rate goes first
            if let Some(d) = wl.next_dir() {
                let s = p.steer(d, Instant::now());
                if s != d {
                    wl.set_next_dir(s);
                }
            }
        }
        let Some(next) = wl.next_op(slot) else {
            self.free.push(slot);
            // a workload waiting for its own operations asks again later
            self.done = !wl.waits() || self.inflight == 0;
            return None;
        };
        let intended = match (&mut self.grid, &mut self.pacer) {
            (Some(g), _) => Some(g.take()),
            (None, Some(p)) => {
                let t = p.due(next.dir);
                p.issue(next.dir, next.len);
                t
            }
            (None, None) => None,
        };
        Some((slot, next, intended))
    }

    /// fio's thinktime: once the operations in flight are done (fio's
    /// io_u_quiesce), think. False while some are still in flight.
    fn think(&mut self, ctx: &Ctx, dir: crate::stats::OpKind) -> bool {
        if self.inflight > 0 {
            return false;
        }
        let deadline = self.rec.deadline();
        if let Some(p) = &mut self.pacer {
            if !p.think(dir, deadline, &|| ctx.stopped()) {
                self.finish_taking();
            }
        }
        true
    }

    /// Fills the queue up to `depth`, submitting every `batch`.
    fn fill<W: Workload>(&mut self, ctx: &Ctx, engine: &mut dyn Engine, wl: &mut W) {
        while !self.done && self.inflight < self.limit {
            if self.pacer.as_ref().is_some_and(FioPacer::think_due) && !self.think(ctx, self.last_dir) {
                break;
            }
            if self.held.is_none() && !self.pacer.as_mut().is_none_or(FioPacer::flow_admit) {
                // held back by the flow: reap meanwhile, or wait when idle
                if self.inflight > 0 {
                    break;
                }
                let deadline = self.rec.deadline();
                if let Some(p) = &self.pacer {
                    p.flow_hold(deadline);
                }
                if ctx.stopped() || deadline.is_some_and(|d| Instant::now() >= d) {
                    self.rec.waited_out();
                    self.finish_taking();
                }
                continue;
            }
            let Some((slot, next, intended)) = self.take(wl) else {
                break;
            };
            if let Some(t) = intended {
                if t > Instant::now() {
                    if self.inflight > 0 {
                        // Not due yet: reap what is in flight meanwhile.
                        self.held = Some((slot, next, intended));
                        break;
                    }
                    // never past the deadline: an operation due after it is not issued
                    let deadline = self.rec.deadline();
                    let due = match (&self.grid, &mut self.pacer) {
                        (Some(g), _) => g.wait(t, deadline, &|| ctx.stopped()),
                        (None, Some(p)) => match p.wait_for(t, deadline, &|| ctx.stopped()) {
                            Waited::Due => true,
                            Waited::Restarted => {
                                // the new schedule counts this operation
                                p.issue(next.dir, next.len);
                                true
                            }
                            Waited::Ended => false,
                        },
                        (None, None) => wait_due(t, deadline, std::time::Duration::ZERO, &|| ctx.stopped()),
                    };
                    if !due {
                        self.rec.waited_out();
                        self.held = Some((slot, next, intended));
                        self.finish_taking();
                        break;
                    }
                }
            }
            let t_prep = Instant::now();
            engine.set_prio(next.prio);
            // SAFETY: `next.op` names slot `slot`'s buffer, which the
            // workload does not reuse until that slot's completion went
            // through `on_complete` (Workload::next_op's contract); the loop
            // reaps all in flight unless the ring breaks, and even then the
            // workload outlives the engine (runner::drive drops it first).
            match unsafe { engine.submit(&next.op, slot as u64) } {
                Submit::Queued => {
                    self.inflight += 1;
                    self.rec.note_depth(self.inflight);
                    self.slots[slot] = Some(Slot {
                        next,
                        t_prep,
                        t_sub: t_prep,
                        intended,
                    });
                    self.unsubmitted.push(slot);
                    if self.unsubmitted.len() >= self.batch {
                        if let Err(e) = self.commit(engine) {
                            self.error = Some(format!("{}: submit: {e}", engine.name()));
                            self.done = true;
                        }
                    }
                }
                Submit::Busy => {
                    self.held = Some((slot, next, intended));
                    break;
                }
                Submit::Done(result) => {
                    let end = Instant::now();
                    self.free.push(slot);
                    let result = wl.on_complete(&next, result);
                    if !self.rec.tick(end) {
                        self.done = true;
                    } else if self.rec.recording {
                        let sched = intended.map(|t| ns(end.saturating_duration_since(t)));
                        self.rec.record(Step::of(&next, result), ns(end - t_prep), sched, end);
                        if L::ON {
                            self.searched(ctx, next.dir, result, ns(end - t_prep), end);
                        }
                    }
                    self.paced(ctx, next.dir, result, end);
                }
            }
        }
    }

    /// Processes the next reaped completion; false when none is left.
    fn process_one<W: Workload>(&mut self, ctx: &Ctx, wl: &mut W) -> bool {
        let Some(c) = self.comps.get(self.next_comp).copied() else {
            return false;
        };
        self.next_comp += 1;
        let slot = c.token as usize;
        let Some(s) = self.slots.get_mut(slot).and_then(Option::take) else {
            return true;
        };
        let end = Instant::now();
        self.inflight -= 1;
        self.free.push(slot);
        let result = wl.on_complete(&s.next, c.result);
        if !self.rec.tick(end) {
            self.finish_taking();
        } else if self.rec.recording {
            let sched = s.intended.map(|t| ns(end.saturating_duration_since(t)));
            self.rec
                .record(Step::of(&s.next, result), ns(end - s.t_prep), sched, end);
            self.rec
                .record_split(s.next.dir, result, ns(s.t_sub - s.t_prep), ns(end - s.t_sub));
            if L::ON {
                self.searched(ctx, s.next.dir, result, ns(end - s.t_prep), end);
            }
        }
        self.paced(ctx, s.next.dir, result, end);
        true
    }

    /// Tells the latency_target search of a measured completion and does
    /// what it says: a new in-flight limit, the stats reset, the end.
    fn searched(&mut self, ctx: &Ctx, dir: crate::stats::OpKind, result: i64, lat: u64, end: Instant) {
        use crate::stats::OpKind;
        // fio checks reads, writes and trims (ddir_rw); every completion counts for a drain
        let counts = result >= 0 && matches!(dir, OpKind::Read | OpKind::Write | OpKind::Trim);
        match self.lat.complete(counts, lat, end, self.inflight) {
            Action::Keep => {}
            Action::Limit(n) => self.limit = n.min(self.depth),
            Action::Reset(n) => {
                self.rec.reset(end);
                self.limit = n.min(self.depth);
            }
            Action::Done => self.finish_taking(),
            Action::Fatal(e) => {
                self.error.get_or_insert(e);
                if ctx.cfg.exit_on_error {
                    ctx.halt.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                self.finish_taking();
            }
        }
    }

    /// Tells the pacer of a completion; a rate_min failure ends the worker.
    #[inline]
    fn paced(&mut self, ctx: &Ctx, dir: crate::stats::OpKind, result: i64, end: Instant) {
        self.last_dir = dir;
        let recording = self.rec.recording;
        if let Some(e) = self
            .pacer
            .as_mut()
            .and_then(|p| p.complete(dir, result, recording, end))
        {
            self.error.get_or_insert(e);
            if ctx.cfg.exit_on_error {
                ctx.halt.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            self.finish_taking();
        }
    }

    /// Nothing left to process: submits what is queued, then waits for a
    /// completion. False when the worker is finished.
    fn submit_and_wait(&mut self, engine: &mut dyn Engine) -> bool {
        if !self.unsubmitted.is_empty() {
            if let Err(e) = self.commit(engine) {
                self.error.get_or_insert(format!("{}: submit: {e}", engine.name()));
                self.done = true;
            }
        }
        if self.inflight == 0 {
            return !self.done;
        }
        self.comps.clear();
        self.next_comp = 0;
        let reaped = engine.reap(1, &mut self.comps);
        self.rec.note_complete(self.comps.len());
        if let Err(e) = reaped {
            // Buffers must outlive every in-flight operation: keep draining
            // unless the ring itself is broken.
            self.error.get_or_insert(format!("{}: reap: {e}", engine.name()));
            self.done = true;
            if self.comps.is_empty() {
                return false;
            }
        }
        true
    }
}
