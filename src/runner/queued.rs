//! The loop for queueing engines (io_uring): keep up to `depth` operations in
//! flight, submit them in batches of `batch`, reap completions by token.
//!
//! Timestamps, as fio takes them: `t_prep` when the operation is handed to the
//! engine, `t_sub` when the batch holding it has been submitted, and `end`
//! when its completion is processed. slat = t_sub - t_prep, clat = end -
//! t_sub, lat = end - t_prep.

use super::record::Recorder;
use super::{ns, Ctx, Instant, WorkerOut};
use crate::engine::{Completion, Engine, Submit};
use crate::workload::{NextOp, Workload};
use std::time::Duration;

struct Slot {
    next: NextOp,
    t_prep: Instant,
    t_sub: Instant,
    intended: Option<Instant>,
}

pub(super) fn worker<W: Workload>(ctx: &Ctx, engine: &mut dyn Engine, wl: &mut W) -> WorkerOut {
    let cfg = ctx.cfg;
    let depth = cfg.depth.clamp(1, engine.caps().max_depth.max(1));
    let batch = cfg.batch.clamp(1, depth);
    let period = cfg.rate.map(|r| Duration::from_nanos(1_000_000_000 / r.max(1)));
    let mut rec = Recorder::new(ctx, true);
    let mut slots: Vec<Option<Slot>> = (0..depth).map(|_| None).collect();
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut unsubmitted: Vec<usize> = Vec::with_capacity(depth);
    let mut comps: Vec<Completion> = Vec::with_capacity(depth);
    let mut inflight = 0usize;
    let mut due = ctx.t0;
    // An operation taken from the workload but not yet accepted by the engine.
    let mut held: Option<(usize, NextOp, Option<Instant>)> = None;
    let mut done = false;
    let mut error = None;

    let commit = |engine: &mut dyn Engine, slots: &mut [Option<Slot>], unsubmitted: &mut Vec<usize>| {
        let r = engine.commit();
        let t = Instant::now();
        for s in unsubmitted.drain(..) {
            if let Some(s) = slots[s].as_mut() {
                s.t_sub = t;
            }
        }
        r
    };

    // Completions reaped but not yet processed. Each is processed with its
    // own timestamp and its slot refilled at once, so the queue stays full the
    // way fio keeps it (reap one, submit one) while one io_uring_enter can
    // still bring many completions.
    let mut next_comp = 0usize;
    loop {
        if !done && ctx.stopped() {
            done = true;
            if let Some((slot, _, _)) = held.take() {
                free.push(slot);
            }
        }
        while !done && inflight < depth {
            let (slot, next, intended) = match held.take() {
                Some(h) => h,
                None => {
                    let slot = free.pop().expect("a free slot when fewer than depth are in flight");
                    let Some(next) = wl.next_op(slot) else {
                        free.push(slot);
                        done = true;
                        break;
                    };
                    let intended = period.map(|p| {
                        let t = due;
                        due += p;
                        t
                    });
                    (slot, next, intended)
                }
            };
            if let Some(t) = intended {
                let now = Instant::now();
                if t > now {
                    if inflight > 0 {
                        // Not due yet: reap what is in flight meanwhile.
                        held = Some((slot, next, intended));
                        break;
                    }
                    std::thread::sleep(t - now);
                }
            }
            let t_prep = Instant::now();
            // SAFETY: `next.op` names slot `slot`'s buffer, which the
            // workload does not reuse until that slot's completion went
            // through `on_complete` (Workload::next_op's contract); the loop
            // reaps all in flight unless the ring breaks, and even then the
            // workload outlives the engine (runner::drive drops it first).
            match unsafe { engine.submit(&next.op, slot as u64) } {
                Submit::Queued => {
                    inflight += 1;
                    rec.note_depth(inflight);
                    slots[slot] = Some(Slot {
                        next,
                        t_prep,
                        t_sub: t_prep,
                        intended,
                    });
                    unsubmitted.push(slot);
                    if unsubmitted.len() >= batch {
                        if let Err(e) = commit(engine, &mut slots, &mut unsubmitted) {
                            error = Some(format!("{}: submit: {e}", engine.name()));
                            done = true;
                        }
                    }
                }
                Submit::Busy => {
                    held = Some((slot, next, intended));
                    break;
                }
                Submit::Done(result) => {
                    let end = Instant::now();
                    free.push(slot);
                    let result = wl.on_complete(&next, result);
                    if !rec.tick(end) {
                        done = true;
                    } else if rec.recording {
                        let sched = intended.map(|t| ns(end.saturating_duration_since(t)));
                        rec.record(next.dir, result, ns(end - t_prep), sched, end);
                    }
                }
            }
        }
        if let Some(c) = comps.get(next_comp) {
            next_comp += 1;
            let slot = c.token as usize;
            let Some(s) = slots.get_mut(slot).and_then(Option::take) else {
                continue;
            };
            let end = Instant::now();
            inflight -= 1;
            free.push(slot);
            let result = wl.on_complete(&s.next, c.result);
            if !rec.tick(end) {
                done = true;
                if let Some((slot, _, _)) = held.take() {
                    free.push(slot);
                }
            } else if rec.recording {
                let sched = s.intended.map(|t| ns(end.saturating_duration_since(t)));
                rec.record(s.next.dir, result, ns(end - s.t_prep), sched, end);
                rec.record_split(s.next.dir, result, ns(s.t_sub - s.t_prep), ns(end - s.t_sub));
            }
            continue;
        }
        // Nothing left to process: submit what is queued, then wait.
        if !unsubmitted.is_empty() {
            if let Err(e) = commit(engine, &mut slots, &mut unsubmitted) {
                error.get_or_insert(format!("{}: submit: {e}", engine.name()));
                done = true;
            }
        }
        if inflight == 0 {
            if done {
                break;
            }
            continue;
        }
        comps.clear();
        next_comp = 0;
        if let Err(e) = engine.reap(1, &mut comps) {
            // Buffers must outlive every in-flight operation: keep draining
            // unless the ring itself is broken.
            error.get_or_insert(format!("{}: reap: {e}", engine.name()));
            done = true;
            if comps.is_empty() {
                break;
            }
        }
    }
    rec.finish(error)
}
