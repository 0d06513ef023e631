//! Runs workers: N threads behind a start barrier, an optional ramp that is
//! not measured, a deadline, pacing, and a stop flag for Ctrl-C.
//!
//! Each worker owns its engine, workload and stats; the only shared state on
//! the hot path is a relaxed stop flag and per-worker progress counters on
//! their own cache lines. Results merge with `+=` after the workers finish.

mod merge;
mod progress;
mod queued;
mod record;

pub use progress::Progress;

use crate::dist;
use crate::engine::Engine;
use crate::stats::cpu::CpuTimes;
use crate::stats::series::{IntervalPoint, SeriesCollector};
use crate::stats::{KindStats, OpKind};
use crate::workload::Workload;
use record::Recorder;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::Duration;

use crate::plan::Stonewall;
use crate::stats::Instant;

/// How a run is driven, independent of what it does.
#[derive(Clone, Debug)]
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

/// Per-worker counters the progress display reads.
#[repr(align(64))]
#[derive(Default)]
pub struct Counter {
    pub ops: AtomicU64,
    pub bytes: AtomicU64,
}

/// Everything a worker loop gets from the runner besides its engine and workload.
pub(crate) struct Ctx<'a> {
    pub j: usize,
    pub cfg: &'a RunConfig,
    /// The run's stop flag (a signal).
    pub stop: &'a AtomicBool,
    /// Ends this run only: a failed job, or the first error with --on-error stop.
    pub halt: &'a AtomicBool,
    /// Raised by --stonewall first.
    wall: &'a Wall,
    pub counter: &'a Counter,
    pub series: &'a SeriesCollector,
    /// When all workers were released.
    pub t0: Instant,
}

impl Ctx<'_> {
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || self.halt.load(Ordering::Relaxed)
            || self.wall.fired.load(Ordering::Relaxed)
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
    /// The workload's notes (verification mismatches).
    pub notes: Vec<String>,
    /// From the end of the ramp to when the worker stopped (after its last
    /// completion, including one that missed the deadline).
    pub stopped_ns: u64,
    /// `Workload::items_done`.
    pub items: u64,
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
    // workers poll the stop flag: a first signal lets them end the run
    let _polling = crate::interrupt::polling();
    let coord = dist::coordinator();
    let ready = Barrier::new(cfg.jobs + 1);
    let go = Barrier::new(cfg.jobs + 1);
    let start_at: Mutex<Option<Instant>> = Mutex::new(None);
    let halt = AtomicBool::new(false);
    let wall = Wall::new();
    let counters: Vec<Counter> = (0..cfg.jobs).map(|_| Counter::default()).collect();
    let series = SeriesCollector::new(cfg.jobs);
    let cpu0 = CpuTimes::process();
    let mut outs = Vec::with_capacity(cfg.jobs);
    let first = cfg.stonewall == Some(Stonewall::First);
    // The main thread has work while the workers run: stonewall messages.
    let coordinates = first || coord.size() > 1;
    if cfg.jobs == 1 && !progress.is_enabled() && !coordinates {
        // One job without a progress bar runs on the calling thread: in a
        // single-threaded process the kernel skips the file refcounting it
        // does on every syscall of a multithreaded one (fdget/fput), which is
        // ~2 % of a page-cached 4 KiB read. fio gets the same by forking.
        let built = build(0, &make);
        coord.barrier();
        let t0 = Instant::now();
        outs.push(drive_caught(
            &Ctx {
                j: 0,
                cfg,
                stop,
                halt: &halt,
                wall: &wall,
                counter: &counters[0],
                series: &series,
                t0,
            },
            built,
        ));
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..cfg.jobs)
                .map(|j| {
                    let (ready, go, start_at, counter, series, make, halt, wall) =
                        (&ready, &go, &start_at, &counters[j], &series, &make, &halt, &wall);
                    std::thread::Builder::new()
                        .name(format!("fslab-job{j}"))
                        .spawn_scoped(s, move || {
                            // a panic in make must not leave the others
                            // waiting on the barriers for good
                            let built = build(j, make);
                            ready.wait();
                            go.wait();
                            let t0 = start_at
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .expect("start time set before go");
                            drive_caught(
                                &Ctx {
                                    j,
                                    cfg,
                                    stop,
                                    halt,
                                    wall,
                                    counter,
                                    series,
                                    t0,
                                },
                                built,
                            )
                        })
                        .expect("spawn worker thread")
                })
                .collect();
            ready.wait();
            // every rank's workers are ready: start the phase together
            coord.barrier();
            let t0 = Instant::now();
            *start_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(t0);
            go.wait();
            let mut announced = false;
            let mut tick = || {
                if let Some((_, at)) = wall.own().filter(|_| !announced) {
                    coord.announce_stonewall(at);
                    announced = true;
                }
                if let Some(at) = coord.poll_stonewall() {
                    wall.heard(at);
                }
            };
            progress.watch(
                &counters,
                t0 + cfg.ramp,
                cfg.deadline(),
                &handles,
                if first { Some(&mut tick) } else { None },
            );
            if first {
                // the last local job may have finished first after the last
                // tick: the other ranks must still hear of it
                tick();
            }
            for h in handles {
                outs.push(h.join().unwrap_or_else(|_| WorkerOut {
                    error: Some("worker thread panicked".into()),
                    ..Default::default()
                }));
            }
        });
    }
    if first {
        coord.finish_stonewall();
    }
    let cpu_process = CpuTimes::process() - cpu0;
    let outs_ok = outs.iter().all(|o| o.error.is_none());
    let mut stats: KindStats = Default::default();
    let mut depth_counts: Vec<u64> = Vec::new();
    for o in &outs {
        for d in OpKind::ALL {
            stats[d.idx()] += &o.stats[d.idx()];
        }
        if depth_counts.len() < o.depth_counts.len() {
            depth_counts.resize(o.depth_counts.len(), 0);
        }
        for (a, b) in depth_counts.iter_mut().zip(&o.depth_counts) {
            *a += b;
        }
    }
    let last_ns = outs.iter().map(|o| o.stopped_ns).max().unwrap_or(0);
    let stonewall = match cfg.stonewall {
        Some(Stonewall::Deadline(d)) => (last_ns >= ns(d)).then(|| StonewallOut {
            rule: Stonewall::Deadline(d).to_string(),
            at_ns: ns(d),
            by_rank: None,
            by_job: None,
            last_ns,
        }),
        Some(Stonewall::First) => wall.fired.load(Ordering::SeqCst).then(|| StonewallOut {
            rule: "first".into(),
            at_ns: wall.at_ns.load(Ordering::SeqCst),
            by_rank: None,
            by_job: wall.own().map(|(j, _)| j),
            last_ns,
        }),
        None => None,
    };
    let out = RunOut {
        stats,
        elapsed_ns: outs.iter().map(|o| o.elapsed_ns).max().unwrap_or(0),
        jobs: outs,
        series: series.into_points(),
        // Only a signal is an interruption: a failing job or --on-error stop
        // halts the run without touching the caller's stop flag.
        interrupted: stop.load(Ordering::Relaxed),
        halted_on_error: cfg.stop_on_error && halt.load(Ordering::Relaxed) && outs_ok,
        cpu_process,
        depth_counts,
        host: coord.host(),
        ranks: Vec::new(),
        stonewall,
    };
    merge::merge_across(coord, out)
}

/// What a caught panic said.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// `make(j)`, with a panic turned into worker j's error.
fn build<W, F>(j: usize, make: &F) -> Result<(Box<dyn Engine>, W), String>
where
    F: Fn(usize) -> Result<(Box<dyn Engine>, W), String>,
{
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| make(j)))
        .unwrap_or_else(|p| Err(format!("job {j}: panicked while starting: {}", panic_text(p.as_ref()))))
}

/// `drive`, with a panic turned into the worker's error: the run then ends
/// like one with a failed job (the others stop, the results are reported)
/// instead of a dead thread the others and the series wait for.
fn drive_caught<W: Workload>(ctx: &Ctx, built: Result<(Box<dyn Engine>, W), String>) -> WorkerOut {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drive(ctx, built))).unwrap_or_else(|p| {
        ctx.halt.store(true, Ordering::Relaxed);
        ctx.series.finish(ctx.j);
        WorkerOut {
            error: Some(format!("job {}: panicked: {}", ctx.j, panic_text(p.as_ref()))),
            ..Default::default()
        }
    })
}

/// Runs worker `j` if its engine and workload were built, and tells the
/// series collector it is done either way.
fn drive<W: Workload>(ctx: &Ctx, built: Result<(Box<dyn Engine>, W), String>) -> WorkerOut {
    let out = match built {
        Ok((mut engine, mut wl)) => {
            let mut out = worker(ctx, engine.as_mut(), &mut wl);
            out.notes = wl.notes();
            out.items = wl.items_done();
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
    };
    ctx.series.finish(ctx.j);
    out
}

/// The loop for engines that complete inline (sync, null): one operation at
/// a time, two timestamps per operation and nothing else on the hot path.
fn worker<W: Workload>(ctx: &Ctx, engine: &mut dyn Engine, wl: &mut W) -> WorkerOut {
    if !engine.caps().inline && wl.queues() {
        return queued::worker(ctx, engine, wl);
    }
    let mut rec = Recorder::new(ctx, false);
    if ctx.cfg.rate.is_some() {
        // paced: wake up on time (the default timer slack is 50 µs)
        // SAFETY: prctl with integer arguments only.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0) };
    }
    let period = ctx.cfg.rate.map(|r| Duration::from_nanos(1_000_000_000 / r.max(1)));
    // Pacing grid: operation n is due at t0 + n*period, whatever happened before.
    let mut due = ctx.t0;
    while !ctx.stopped() {
        let intended = match period {
            Some(p) => {
                let t = due;
                due += p;
                Some(t)
            }
            None => wl.next_due(),
        };
        if let Some(t) = intended {
            let now = Instant::now();
            if t > now {
                std::thread::sleep(t - now);
            }
        }
        let start = Instant::now();
        let Some(step) = wl.step(engine) else { break };
        let end = Instant::now();
        if !rec.tick(end) {
            break;
        }
        if rec.recording {
            let sched = intended.map(|t| ns(end.saturating_duration_since(t)));
            rec.record(step.dir, step.result, ns(end - start), sched, end);
        }
    }
    rec.finish(None)
}

#[inline]
pub(crate) fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

#[cfg(test)]
mod tests;
