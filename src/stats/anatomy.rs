//! Latency anatomy: where each operation's time went, per layer.
//!
//! The kernel side (BPF on tracepoints, `telemetry::anatomy`) keeps, for
//! each worker thread, how long it was off the CPU and why; a worker reads
//! its own counters before and after each operation (plain loads from a
//! shared mapping) through a [`ThreadTrace`], and records each layer's share
//! of the operation in the histograms here. This module is the bottom of
//! that: the traits the runner calls and the mergeable figures, with no
//! knowledge of BPF.

use super::{LatHist, OpKind};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, RwLock};

/// The layers an operation's end-to-end time is split into. They partition
/// it: on-CPU is what is left of the end-to-end time once the measured
/// off-CPU time is taken away, and every off-CPU interval has one class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Layer {
    /// On the CPU: the syscall's own work in the filesystem and above.
    OnCpu,
    /// Runnable but preempted (waiting for a CPU).
    Runqueue,
    /// Asleep waiting for I/O (page, buffer or bio waits, direct I/O).
    Io,
    /// Asleep waiting for the journal or log (jbd2 commits and handles, XFS log forces and grants).
    Journal,
    /// Asleep on a lock (mutex, rwsem, semaphore).
    Lock,
    /// Asleep in writeback throttling: the page cache's dirty limits
    /// (balance_dirty_pages) or the block layer's (wbt).
    Throttle,
    /// Asleep elsewhere, or in a sleep whose stack was not captured.
    Other,
}

impl Layer {
    pub const ALL: [Layer; 7] = [
        Layer::OnCpu,
        Layer::Runqueue,
        Layer::Io,
        Layer::Journal,
        Layer::Lock,
        Layer::Throttle,
        Layer::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Layer::OnCpu => "on CPU",
            Layer::Runqueue => "runqueue",
            Layer::Io => "I/O wait",
            Layer::Journal => "journal/log",
            Layer::Lock => "lock",
            Layer::Throttle => "wb throttle",
            Layer::Other => "other sleep",
        }
    }
}

/// One figure of an operation kind: a histogram and the exact sum (so a
/// mean is exact and only percentiles carry the histogram's error).
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Figure {
    pub sum_ns: u64,
    /// Operations that spent any time here.
    pub nonzero: u64,
    /// Every operation, those that spent nothing here as 0 (the
    /// histogram's lowest value, 1 ns), so percentiles are over all of them.
    #[schemars(with = "super::SparseHist")]
    pub hist: LatHist,
    /// Operations that spent nothing here and are not in `hist` yet: most
    /// layers of most operations are 0, and a counter costs less than a
    /// histogram record on the hot path (`settle` moves them in).
    #[serde(skip)]
    zeros: u64,
}

impl Figure {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        if ns == 0 {
            self.zeros += 1;
            return;
        }
        self.sum_ns += ns;
        self.nonzero += 1;
        self.hist.record(ns);
    }

    /// Puts the operations counted as 0 into the histogram.
    pub fn settle(&mut self) {
        self.hist.record_n(0, std::mem::take(&mut self.zeros));
    }

    pub fn add(&mut self, o: &Figure) {
        self.sum_ns += o.sum_ns;
        self.nonzero += o.nonzero;
        self.hist.add(&o.hist);
        self.zeros += o.zeros;
    }
}

/// The anatomy of one operation kind.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KindAnatomy {
    pub ops: u64,
    /// End to end, as fslab timed it.
    pub total: Figure,
    /// Each layer's share, in `Layer::ALL`'s order.
    pub layers: Vec<Figure>,
    /// Block requests the operation's own thread submitted and saw
    /// complete within it: their queue (insert -> issue) and device
    /// (issue -> complete) time. Part of the I/O wait, not added to the layers.
    pub block_queue: Figure,
    pub block_device: Figure,
    /// Requests counted into the two above.
    pub block_requests: u64,
    /// Operations whose measured off-CPU time exceeded their end-to-end
    /// time (the two clocks disagree by more than the operation): their
    /// on-CPU share is counted as 0. A check on the partition: it should be 0.
    pub overshoot: u64,
}

impl KindAnatomy {
    /// Every figure's zeros into its histogram (before reading percentiles).
    pub fn settle(&mut self) {
        self.total.settle();
        for f in &mut self.layers {
            f.settle();
        }
        self.block_queue.settle();
        self.block_device.settle();
    }

    pub fn add(&mut self, o: &KindAnatomy) {
        self.ops += o.ops;
        self.total.add(&o.total);
        if self.layers.len() < o.layers.len() {
            self.layers.resize_with(o.layers.len(), Figure::default);
        }
        for (a, b) in self.layers.iter_mut().zip(&o.layers) {
            a.add(b);
        }
        self.block_queue.add(&o.block_queue);
        self.block_device.add(&o.block_device);
        self.block_requests += o.block_requests;
        self.overshoot += o.overshoot;
    }
}

/// What one operation's thread did off the CPU, measured by the kernel.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpSplit {
    /// Asleep, per class (`Layer::ALL` without OnCpu and Runqueue: Io,
    /// Journal, Lock, Throttle, Other).
    pub asleep: [u64; 5],
    pub runqueue: u64,
    pub block_n: u64,
    pub block_queue: u64,
    pub block_device: u64,
}

impl KindAnatomy {
    /// Records one operation of `lat` ns split as `s`.
    #[inline]
    pub fn record(&mut self, lat: u64, s: &OpSplit) {
        if self.layers.is_empty() {
            self.layers.resize_with(Layer::ALL.len(), Figure::default);
        }
        let off = s.runqueue + s.asleep.iter().sum::<u64>();
        self.ops += 1;
        self.overshoot += (off > lat) as u64;
        self.total.record(lat);
        self.layers[0].record(lat.saturating_sub(off));
        self.layers[1].record(s.runqueue);
        for (i, &a) in s.asleep.iter().enumerate() {
            self.layers[2 + i].record(a);
        }
        if s.block_n > 0 {
            self.block_requests += s.block_n;
            self.block_queue.record(s.block_queue);
            self.block_device.record(s.block_device);
        }
    }
}

/// One worker thread's view of the kernel's counters.
pub trait ThreadTrace: Send {
    /// Right after the operation's start was taken.
    fn begin(&mut self);
    /// Right after the operation, before its end is taken: between
    /// `begin` and `stop` the thread ran only the operation, so what the
    /// kernel counted in between lies within its end-to-end time.
    fn stop(&mut self);
    /// When it is recorded: `lat` is its end-to-end time, `end` when it ended.
    fn end(&mut self, kind: OpKind, lat: u64, end: super::Instant);
}

/// What a traced run measures: handed threads, it gives each a [`ThreadTrace`].
pub trait Tracer: Send + Sync {
    /// A trace for the calling thread (None: no slot left, or tracing is off).
    fn thread(&self) -> Option<Box<dyn ThreadTrace>>;
}

static TRACER: RwLock<Option<Arc<dyn Tracer>>> = RwLock::new(None);

/// Installs (or with None removes) the tracer later workers use.
pub fn install(t: Option<Arc<dyn Tracer>>) {
    *TRACER.write().unwrap_or_else(|e| e.into_inner()) = t;
}

/// A trace for the calling worker thread, when a tracer is installed.
pub fn thread() -> Option<Box<dyn ThreadTrace>> {
    TRACER.read().unwrap_or_else(|e| e.into_inner()).as_ref()?.thread()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_partition_the_operation() {
        let mut k = KindAnatomy::default();
        let s = OpSplit {
            asleep: [300, 200, 0, 0, 100],
            runqueue: 50,
            ..Default::default()
        };
        k.record(1000, &s);
        let sum: u64 = k.layers.iter().map(|f| f.sum_ns).sum();
        assert_eq!(sum, 1000);
        assert_eq!(k.layers[0].sum_ns, 350);
        assert_eq!(k.layers[2].nonzero, 1);
        assert_eq!(k.layers[4].nonzero, 0);
        let mut m = KindAnatomy::default();
        m.add(&k);
        m.add(&k);
        assert_eq!(m.ops, 2);
        assert_eq!(m.layers[3].sum_ns, 400);
        m.settle();
        // every operation is in every layer's histogram, zeros too
        assert!(m.layers.iter().all(|f| f.hist.len() == 2));
    }
}
