//! Runs workers: N threads behind a start barrier, an optional ramp that is
//! not measured, a deadline, pacing, and a stop flag for Ctrl-C.
//!
//! Each worker owns its engine, workload and stats; the only shared state on
//! the hot path is a relaxed stop flag and per-worker progress counters on
//! their own cache lines. Results merge with `+=` after the workers finish.

pub mod calibrate;
mod group;
mod latency;
mod merge;
pub mod oplog;
mod pace;
mod progress;
mod queued;
mod record;
mod samples;
mod steady;
mod sync;

pub use group::{run_groups, Group, GroupsOut, MakeFn, Monitor, WindowOut};
pub use pace::{PacedOp, Pacing, SPIN};
pub use progress::Progress;
pub use steady::SteadyCheck;

use crate::dist;
use crate::engine::Engine;
use crate::stats::cpu::CpuTimes;
use crate::stats::series::{IntervalPoint, SeriesCollector};
use crate::stats::{KindStats, OpKind};
use crate::workload::Workload;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::plan::Stonewall;
use crate::stats::Instant;

/// How a run is driven, independent of what it does.
#[derive(Clone, Debug, Default)]
pub struct RunConfig {
    pub jobs: usize,
    /// Time-based runs stop here (after the ramp); None = until the workloads end.
    pub runtime: Option<Duration>,
    pub ramp: Duration,
    /// Operations per second per job, paced on a fixed grid.
    pub rate: Option<u64>,
    pub bucket_ns: Vec<u64>,
    /// Operations in flight per job (queueing engines).
    pub depth: usize,
    /// Submit when this many operations are queued (1 = each at once).
    pub batch: usize,
    /// --on-error stop: the first failed operation ends the run (every job).
    pub stop_on_error: bool,
    /// --stonewall: every job (of every rank) stops at a deadline or when the first finishes.
    pub stonewall: Option<Stonewall>,
    /// fio's startdelay: the group's workers start this long after the
    /// others were released (their ramp and runtime count from then).
    pub start_delay: Duration,
    /// fio's pacing beyond `rate` (bytes per second, poisson, rate_min...).
    pub pacing: crate::plan::PacingPlan,
    /// fio's per-job logs; `Default`: none.
    pub log: oplog::LogSpec,
    /// fio's exitall_on_error: a failure of this group (its halt) stops
    /// every other group of the run.
    pub exit_on_error: bool,
    /// fio's wait_for: the group starts when group `wait_for` (an index
    /// into the run's groups) has ended; its times count from then.
    pub wait_for: Option<usize>,
    /// fio's steadystate: the group (or its reporting group) stops once
    /// its per-second figures are steady.
    pub steady: Option<SteadyCheck>,
}

impl RunConfig {
    /// When measurement ends at the latest: the runtime or a stonewall deadline.
    pub fn deadline(&self) -> Option<Duration> {
        match (self.runtime, self.stonewall) {
            (r, Some(Stonewall::Deadline(d))) => Some(r.map_or(d, |r| r.min(d))),
            (r, _) => r,
        }
    }
}

/// Where and when a phase's stonewall fell.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct StonewallOut {
    /// The rule: "first" or the deadline ("10s").
    pub rule: String,
    /// When it fell, from the start of measurement.
    pub at_ns: u64,
    /// The rank and job that finished first (`first`); None for a deadline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by_rank: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by_job: Option<usize>,
    /// When the last job (of every rank) had stopped.
    pub last_ns: u64,
}

impl StonewallOut {
    /// The same, seen from the whole run: a first finisher gets its rank.
    pub fn of_rank(mut self, rank: usize) -> Self {
        if self.by_job.is_some() {
            self.by_rank = Some(rank);
        }
        self
    }
}

/// One rank's share of a distributed run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RankRun {
    pub rank: usize,
    pub host: String,
    pub jobs: usize,
    /// From the start of measurement to its last measured completion.
    pub elapsed_ns: u64,
    /// When its last job stopped.
    pub stopped_ns: u64,
    /// Successful operations and bytes per kind.
    pub ops: BTreeMap<OpKind, u64>,
    pub bytes: BTreeMap<OpKind, u64>,
}

/// The stonewall of one process's run: set by the first of its jobs to
/// finish, or by a message from another rank.
struct Wall {
    fired: AtomicBool,
    at_ns: AtomicU64,
    /// The local job that finished first, u64::MAX when the stonewall came from elsewhere.
    by_job: AtomicU64,
}

impl Wall {
    fn new() -> Self {
        Wall {
            fired: AtomicBool::new(false),
            at_ns: AtomicU64::new(u64::MAX),
            by_job: AtomicU64::new(u64::MAX),
        }
    }

    /// A local job finished its work `at_ns` after the start.
    fn finished(&self, job: usize, at_ns: u64) {
        if self.at_ns.fetch_min(at_ns, Ordering::SeqCst) > at_ns {
            self.by_job.store(job as u64, Ordering::SeqCst);
        }
        self.fired.store(true, Ordering::SeqCst);
    }

    /// Another rank announced it.
    fn heard(&self, at_ns: u64) {
        if self.at_ns.fetch_min(at_ns, Ordering::SeqCst) > at_ns {
            self.by_job.store(u64::MAX, Ordering::SeqCst);
        }
        self.fired.store(true, Ordering::SeqCst);
    }

    /// The local first finisher, if the stonewall is this rank's own.
    fn own(&self) -> Option<(usize, u64)> {
        let j = self.by_job.load(Ordering::SeqCst);
        (j != u64::MAX).then(|| (j as usize, self.at_ns.load(Ordering::SeqCst)))
    }
}

/// Per-worker counters the progress display reads, on the worker's own
/// cache line, with the flags the calling thread talks to it through.
#[repr(align(64))]
#[derive(Default)]
pub struct Counter {
    pub ops: AtomicU64,
    pub bytes: AtomicU64,
    /// Raised to stop this worker alone (its group's stonewall, fio's
    /// steady state); read where the worker reads the run's stop flag.
    end: AtomicBool,
    /// Set once the worker's measurement has begun (after its ramp): from
    /// then on `ops` and `bytes` count.
    measuring: AtomicBool,
}

/// Everything a worker loop gets from the runner besides its engine and workload.
pub(crate) struct Ctx<'a> {
    pub j: usize,
    /// The worker's operations are traced when a tracer is installed
    /// (`stats::anatomy`): the first group's only.
    pub traced: bool,
    pub cfg: &'a RunConfig,
    /// The run's stop flag (a signal).
    pub stop: &'a AtomicBool,
    /// Ends this run only: a failed job, or the first error with --on-error stop.
    pub halt: &'a AtomicBool,
    /// Raised by --stonewall first.
    wall: &'a Wall,
    pub counter: &'a Counter,
    /// The counters of every worker of the group (`counter` among them).
    peers: &'a [Counter],
    pub series: &'a SeriesCollector,
    /// When all workers were released (a window's start, for a group run in windows).
    pub t0: Instant,
    /// The group's own grid (the probe's), instead of `cfg.rate`.
    pub pacing: Option<&'a Pacing>,
}

impl Ctx<'_> {
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || self.halt.load(Ordering::Relaxed)
            || self.counter.end.load(Ordering::Relaxed)
    }

    /// A pacing or latency check failed the worker with `e`: with fio's
    /// exitall_on_error the run's other workers stop too.
    pub(crate) fn failed(&self, e: String) -> String {
        if self.cfg.exit_on_error {
            self.halt.store(true, Ordering::Relaxed);
        }
        e
    }
}

/// What one worker measured.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct WorkerOut {
    pub stats: KindStats,
    pub cpu: CpuTimes,
    /// From the end of the ramp to the worker's last measured completion.
    pub elapsed_ns: u64,
    pub error: Option<String>,
    /// Queueing engines: how many operations were in flight when each was
    /// submitted (index = depth, counting the new one).
    pub depth_counts: Vec<u64>,
    /// Queueing engines: operations per submit and per reap call.
    #[serde(default)]
    pub batches: crate::stats::samples::Batches,
    /// fio's steadystate: the check this worker reports (the last worker
    /// of each check carries it, as fio's last job of a group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<crate::model::steady::SteadyState>,
    /// The workload's notes (verification mismatches).
    pub notes: Vec<String>,
    /// From the end of the ramp to when the worker stopped (after its last
    /// completion, including one that missed the deadline).
    pub stopped_ns: u64,
    /// `Workload::items_done`.
    pub items: u64,
    /// A traced paced group (the probe): every operation, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paced: Vec<PacedOp>,
    /// A group run in windows: what each window did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<WindowOut>,
    /// fio's per-job logs (`RunConfig.log`); not sent between ranks.
    #[serde(skip)]
    pub log: Option<Box<oplog::Recorded>>,
    /// fio's latency_target search: the depth it ended at (latency_qd).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_depth: Option<u32>,
}

/// What a run measured, merged (over the jobs, and over the ranks of a
/// distributed run).
#[derive(Debug, Serialize, Deserialize)]
pub struct RunOut {
    pub stats: KindStats,
    pub jobs: Vec<WorkerOut>,
    pub elapsed_ns: u64,
    pub series: Vec<IntervalPoint>,
    pub interrupted: bool,
    pub cpu_process: CpuTimes,
    /// Merged `WorkerOut::depth_counts`.
    pub depth_counts: Vec<u64>,
    /// --on-error stop ended the run at the first failed operation.
    pub halted_on_error: bool,
    /// The machine (of rank 0, once merged).
    pub host: String,
    /// Distributed runs: each rank's share (empty for one process).
    pub ranks: Vec<RankRun>,
    /// --stonewall: when and where it fell (None if it did not).
    pub stonewall: Option<StonewallOut>,
}

impl RunOut {
    /// This rank's jobs (all of them in a one-process run).
    pub fn local_jobs(&self) -> &[WorkerOut] {
        let me = dist::coordinator().rank();
        if self.ranks.is_empty() {
            return &self.jobs;
        }
        let skip: usize = self.ranks[..me].iter().map(|r| r.jobs).sum();
        &self.jobs[skip..skip + self.ranks[me].jobs]
    }
}

/// Runs `cfg.jobs` workers; `make(j)` builds worker j's engine and workload on
/// its own thread (so per-thread setup like opening files is not timed).
///
/// In a distributed run every rank calls this for the same phase: the
/// workers of all ranks are released together after a barrier, and the
/// result is that of every rank, merged exactly.
pub fn run<W, F>(cfg: &RunConfig, stop: &AtomicBool, progress: &Progress, make: F) -> RunOut
where
    W: Workload,
    F: Fn(usize) -> Result<(Box<dyn Engine>, W), String> + Sync,
{
    let group = Group {
        cfg: cfg.clone(),
        make: &make,
        pacing: None,
        windows: Vec::new(),
        ends_run: true,
    };
    let mut out = run_groups(std::slice::from_ref(&group), stop, progress, None);
    out.groups.pop().expect("one group, one result")
}

/// Runs of groups that ran side by side, added up as one (the ranks'
/// figures are not kept: each group was one process's).
pub fn merge_groups(outs: Vec<RunOut>) -> RunOut {
    let mut m = merge::merge(outs);
    m.ranks.clear();
    m
}

/// What a caught panic said.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// `make(j)`, with a panic turned into worker j's error.
fn build<W>(j: usize, make: &MakeFn<'_, W>) -> Result<(Box<dyn Engine>, W), String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| make(j)))
        .unwrap_or_else(|p| Err(format!("job {j}: panicked while starting: {}", panic_text(p.as_ref()))))
}

/// `drive`, with a panic turned into the worker's error: the run then ends
/// like one with a failed job (the others stop, the results are reported)
/// instead of a dead thread the others and the series wait for.
fn drive_caught<W: Workload>(ctx: &Ctx, built: Result<(Box<dyn Engine>, W), String>) -> WorkerOut {
    let out = drive_guarded(ctx, built);
    ctx.series.finish(ctx.j);
    out
}

/// `drive` with a panic caught; the series is not told.
fn drive_guarded<W: Workload>(ctx: &Ctx, built: Result<(Box<dyn Engine>, W), String>) -> WorkerOut {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drive(ctx, built))).unwrap_or_else(|p| {
        ctx.halt.store(true, Ordering::Relaxed);
        WorkerOut {
            error: Some(format!("job {}: panicked: {}", ctx.j, panic_text(p.as_ref()))),
            ..Default::default()
        }
    })
}

/// Runs worker `j` if its engine and workload were built.
fn drive<W: Workload>(ctx: &Ctx, built: Result<(Box<dyn Engine>, W), String>) -> WorkerOut {
    match built {
        Ok((mut engine, mut wl)) => {
            let mut out = worker(ctx, engine.as_mut(), &mut wl);
            out.notes = wl.notes();
            out.items = wl.items_done();
            if let Some((dir, n)) = wl.dropped() {
                *out.stats[dir.idx()].dropped.get_or_insert(0) += n;
            }
            // the engine before the workload: buffers it registered are the
            // workload's (Engine::register's contract)
            drop(engine);
            if let Some(e) = wl.error() {
                // a fatal workload error ends the siblings too
                ctx.halt.store(true, Ordering::Relaxed);
                out.error.get_or_insert(e);
            } else if ctx.cfg.stonewall == Some(Stonewall::First) && !ctx.stopped() {
                // this job did all its work: the first to do so stops every job
                ctx.wall.finished(ctx.j, out.elapsed_ns);
                end_all(ctx.peers);
            }
            out
        }
        Err(e) => {
            ctx.halt.store(true, Ordering::Relaxed);
            WorkerOut {
                error: Some(e),
                ..Default::default()
            }
        }
    }
}

/// Runs the worker through one of the runner's two loops: `queued` for an
/// engine that queues (io_uring) with a workload that hands out operations,
/// else `sync`, monomorphised for its pacing.
fn worker<W: Workload>(ctx: &Ctx, engine: &mut dyn Engine, wl: &mut W) -> WorkerOut {
    if !engine.caps().inline && wl.queues() {
        return queued::worker(ctx, engine, wl);
    }
    if let Some(p) = ctx.pacing {
        return sync::run(ctx, engine, wl, pace::GridSync::new(ctx, p));
    }
    if ctx.cfg.pacing.paces() {
        let pace = pace::FioSync::new(ctx, wl);
        return sync::run(ctx, engine, wl, pace);
    }
    if let Some(r) = ctx.cfg.rate {
        return sync::run(ctx, engine, wl, pace::GridSync::new(ctx, &Pacing::rate(r)));
    }
    if let Some(t) = &ctx.cfg.pacing.latency {
        let search = latency::Search::new(t, ctx.cfg.depth, ctx.t0 + ctx.cfg.ramp);
        return sync::run(ctx, engine, wl, sync::Plain(search));
    }
    sync::run(ctx, engine, wl, sync::Plain(latency::NoSearch))
}

/// Stops each of these workers (a stonewall that fell).
fn end_all(workers: &[Counter]) {
    for c in workers {
        c.end.store(true, Ordering::Relaxed);
    }
}

#[inline]
pub(crate) fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

#[cfg(test)]
mod tests;
