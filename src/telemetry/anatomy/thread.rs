//! One worker thread's trace: its slot's counters read before and after
//! each operation (six loads from one cache line when nothing happened),
//! the operation's sleeps classified by their stacks, and a slow
//! operation's details kept for the cell's end.

use super::kernel::{Counters, RawSleep, Window, LAZY_STACK, NWINDOWS, RING, WINDOW_NS};
use super::Inner;
use crate::stats::anatomy::{KindAnatomy, Layer, OpSplit, ThreadTrace};
use crate::stats::{Instant, OpKind, KINDS};
use std::collections::HashMap;
use std::sync::Arc;

/// A slow operation as the worker captured it.
#[derive(Clone, Debug)]
pub struct RawSlow {
    pub kind: OpKind,
    pub tid: u32,
    pub start: u64,
    pub end: u64,
    pub lat: u64,
    pub runq: u64,
    pub asleep: u64,
    /// Sleeps whose ring entry was overwritten before the operation ended.
    pub unseen: u64,
    pub sleeps: Vec<RawSleep>,
    pub own: (u64, u64, u64),
    pub window: Window,
}

pub struct Thread {
    pub(super) inner: Arc<Inner>,
    pub(super) slot: u32,
    pub(super) tid: u32,
    pub(super) at_begin: Counters,
    pub(super) at_stop: Counters,
    pub(super) kinds: Vec<KindAnatomy>,
    /// Stack id -> class, this thread's copy of the session's.
    pub(super) classes: HashMap<i32, Layer>,
    pub(super) slow: Vec<RawSlow>,
}

/// Index of an asleep class in `OpSplit::asleep`.
fn asleep_index(l: Layer) -> usize {
    match l {
        Layer::Io => 0,
        Layer::Journal => 1,
        Layer::Lock => 2,
        Layer::Throttle => 3,
        _ => 4,
    }
}

impl Thread {
    pub(super) fn new(inner: Arc<Inner>, slot: u32, tid: u32) -> Thread {
        let at_begin = inner.slots.counters(slot);
        Thread {
            inner,
            slot,
            tid,
            at_begin,
            at_stop: at_begin,
            kinds: vec![KindAnatomy::default(); KINDS],
            classes: HashMap::new(),
            slow: Vec::new(),
        }
    }

    fn class(&mut self, stack: i32) -> Layer {
        if stack < 0 {
            return Layer::Other;
        }
        if let Some(&c) = self.classes.get(&stack) {
            return c;
        }
        let c = self.inner.resolve(stack).map_or(Layer::Other, |r| r.class);
        self.classes.insert(stack, c);
        c
    }

    /// Device activity over `[start, end]` from the 10 ms windows.
    fn window(&self, start: u64, end: u64) -> Window {
        let mut w = Window::default();
        let (first, last) = (start / WINDOW_NS, end / WINDOW_NS);
        for e in first.max(last.saturating_sub(NWINDOWS - 1))..=last {
            let x = self.inner.windows.window(e);
            if x.epoch != e {
                continue;
            }
            w.n += x.n;
            w.writes += x.writes;
            w.bytes += x.bytes;
            w.queue_ns += x.queue_ns;
            w.dev_ns += x.dev_ns;
            w.dev_max = w.dev_max.max(x.dev_max);
        }
        w
    }
}

impl ThreadTrace for Thread {
    #[inline]
    fn begin(&mut self) {
        self.at_begin = self.inner.slots.counters(self.slot);
    }

    #[inline]
    fn stop(&mut self) {
        self.at_stop = self.inner.slots.counters(self.slot);
    }

    fn end(&mut self, kind: OpKind, lat: u64, end: Instant) {
        let slow = self.inner.threshold.is_some_and(|t| lat >= t);
        // --explain-slow alone: an operation under the threshold costs
        // nothing more (the layers' histograms are only kept for --anatomy)
        if !slow && !self.inner.layers {
            return;
        }
        let (b, e) = (self.at_begin, self.at_stop);
        let mut split = OpSplit {
            runqueue: e.runq_ns - b.runq_ns,
            block_n: e.blk_n - b.blk_n,
            block_queue: e.blk_queue_ns - b.blk_queue_ns,
            block_device: e.blk_dev_ns - b.blk_dev_ns,
            ..Default::default()
        };
        let mut sleeps = Vec::new();
        let asleep = e.off_ns - b.off_ns;
        if e.seq > b.seq {
            // the ring keeps the last RING sleeps: older ones of this
            // operation are counted, unclassified, as other
            let first = b.seq.max(e.seq.saturating_sub(RING));
            let mut seen = 0;
            for s in first..e.seq {
                let mut r = self.inner.slots.sleep(self.slot, s);
                seen += r.dur;
                if r.stack == LAZY_STACK {
                    // only a slow operation's sleeps get here (--explain-slow alone)
                    let lazy = self.inner.lazy.as_ref();
                    r.frames = lazy.and_then(|m| m.lazy_frames(self.slot, s)).unwrap_or_default();
                }
                let c = if r.frames.is_empty() {
                    self.class(r.stack)
                } else {
                    self.inner.resolve_sleep(&r).map_or(Layer::Other, |x| x.class)
                };
                split.asleep[asleep_index(c)] += r.dur;
                if slow {
                    sleeps.push(r);
                }
            }
            split.asleep[4] += asleep.saturating_sub(seen);
        }
        self.kinds[kind.idx()].record(lat, &split);
        if slow {
            let end = self.inner.mono_ns(end);
            let start = end.saturating_sub(lat);
            let seen: u64 = sleeps.iter().map(|s| s.dur).sum();
            self.slow.push(RawSlow {
                kind,
                tid: self.tid,
                start,
                end,
                lat,
                runq: split.runqueue,
                asleep,
                unseen: asleep.saturating_sub(seen),
                sleeps,
                own: (split.block_n, split.block_queue, split.block_device),
                window: self.window(start, end),
            });
        }
    }
}

impl Drop for Thread {
    fn drop(&mut self) {
        let inner = self.inner.clone();
        inner.release(self);
    }
}
