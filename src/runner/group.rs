//! Runs groups of workers: each group has its own config, workload and
//! merged result, and all are released together behind one barrier. A
//! group that `ends_run` stops every other once its workers have ended (the
//! probe ends its background load; fio's exitall); the others run until
//! their own work or time is done (fio's jobs that differ, side by side). A
//! group may start late (fio's startdelay) or run in windows of the run only
//! (the probe's load during the `load` phases).

use super::pace::{self, Pacing};
use super::steady;
use super::{
    build, dist, drive_caught, drive_guarded, end_all, merge, ns, Counter, Ctx, Engine, Instant, KindStats, OpKind,
    Progress, RunConfig, RunOut, Stonewall, StonewallOut, Wall, WorkerOut, Workload,
};
use crate::stats::cpu::CpuTimes;
use crate::stats::series::SeriesCollector;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::thread::ScopedJoinHandle;
use std::time::{Duration, SystemTime};

/// Builds worker j's engine and workload, on the worker's thread.
pub type MakeFn<'a, W> = dyn Fn(usize) -> Result<(Box<dyn Engine>, W), String> + Sync + 'a;

/// Called on the calling thread every few milliseconds while the workers
/// run, with the run's start and each group's progress counters.
pub type Monitor<'m> = &'m mut dyn FnMut(Instant, &[&[Counter]]);

/// One group of a run.
pub struct Group<'a, W> {
    pub cfg: RunConfig,
    pub make: &'a MakeFn<'a, W>,
    /// The group's own grid (the probe's), instead of `cfg.rate`.
    pub pacing: Option<Pacing>,
    /// Spans of the run (from its start) the group runs in, each with
    /// engines and workloads built afresh at its start and `cfg.ramp`
    /// applied within it; empty: the whole run.
    pub windows: Vec<(Duration, Duration)>,
    /// When this group's workers have all ended, every other group stops.
    pub ends_run: bool,
}

/// What one worker did in one window.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct WindowOut {
    /// When its measurement began (the window's start, after the ramp),
    /// since the run's start.
    pub start_ns: u64,
    /// From `start_ns` to its last measured completion.
    pub elapsed_ns: u64,
    /// From `start_ns` to when it stopped.
    pub stopped_ns: u64,
    /// Bytes its measured operations moved.
    pub bytes: u64,
    /// The workload ran out of work before the window ended (neither
    /// stopped nor failed).
    pub finished: bool,
}

/// What a run of groups measured, a `RunOut` per group (merged over the ranks).
pub struct GroupsOut {
    pub groups: Vec<RunOut>,
    /// Wall clock (Unix ns) of the run's start, which all times are from.
    pub start_unix_ns: u64,
}

/// What the workers of one group share.
struct Shared {
    /// Ends this group only: a failed job, or the first error with --on-error stop.
    halt: AtomicBool,
    wall: Wall,
    counters: Vec<Counter>,
    series: SeriesCollector,
    /// Workers that have ended (fio's wait_for waits for all of them).
    ended: AtomicUsize,
}

fn unix_now_ns() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(ns)
        .unwrap_or(0)
}

/// Runs every group's workers together; see `run` for a single group.
pub fn run_groups<W: Workload>(
    groups: &[Group<W>],
    stop: &AtomicBool,
    progress: &Progress,
    monitor: Option<Monitor>,
) -> GroupsOut {
    // workers poll the stop flag: a first signal lets them end the run
    let _polling = crate::interrupt::polling();
    let coord = dist::coordinator();
    let shared: Vec<Shared> = groups
        .iter()
        .map(|g| Shared {
            halt: AtomicBool::new(false),
            wall: Wall::new(),
            counters: (0..g.cfg.jobs).map(|_| Counter::default()).collect(),
            series: SeriesCollector::new(g.cfg.jobs),
            ended: AtomicUsize::new(0),
        })
        .collect();
    let cpu0 = CpuTimes::process();
    let first = groups[0].cfg.stonewall == Some(Stonewall::First);
    // The main thread has work while the workers run: stonewall messages.
    let coordinates = first || coord.size() > 1;
    // a steady-state check needs the calling thread
    let alone =
        groups.len() == 1 && groups[0].cfg.jobs == 1 && groups[0].windows.is_empty() && groups[0].cfg.steady.is_none();
    let (outs, start_unix_ns) = if alone && !progress.is_enabled() && !coordinates && monitor.is_none() {
        inline_run(&groups[0], &shared[0], stop)
    } else {
        let w = Watch {
            stop,
            follow: &AtomicBool::new(false),
            progress,
            first,
        };
        threaded_run(groups, &shared, &w, monitor)
    };
    if first {
        coord.finish_stonewall();
    }
    let cpu_process = CpuTimes::process() - cpu0;
    let groups = outs
        .into_iter()
        .zip(groups.iter().zip(shared))
        .map(|(o, (g, s))| merge::merge_across(coord, summarise(&g.cfg, o, s, stop, cpu_process)))
        .collect();
    GroupsOut { groups, start_unix_ns }
}

/// Worker j's context.
/// Only the first group's workers are traced (`--anatomy`, `--explain-slow`):
/// the probe and not its load, a command's one group, a fio segment's first job.
fn ctx<'a, W>(g: &'a Group<W>, s: &'a Shared, gi: usize, j: usize, stop: &'a AtomicBool, t0: Instant) -> Ctx<'a> {
    Ctx {
        j,
        traced: gi == 0,
        cfg: &g.cfg,
        stop,
        halt: &s.halt,
        wall: &s.wall,
        counter: &s.counters[j],
        peers: &s.counters,
        series: &s.series,
        t0,
        pacing: g.pacing.as_ref(),
    }
}

/// One job without a progress bar runs on the calling thread: in a
/// single-threaded process the kernel skips the file refcounting it does on
/// every syscall of a multithreaded one (fdget/fput), which is ~2 % of a
/// page-cached 4 KiB read. fio gets the same by forking.
fn inline_run<W: Workload>(g: &Group<W>, s: &Shared, stop: &AtomicBool) -> (Vec<Vec<WorkerOut>>, u64) {
    let built = build(0, g.make);
    dist::coordinator().barrier();
    let t0 = Instant::now();
    let unix = unix_now_ns();
    (vec![vec![drive_caught(&ctx(g, s, 0, 0, stop, t0), built)]], unix)
}

/// What the calling thread needs while the workers run.
struct Watch<'a> {
    stop: &'a AtomicBool,
    /// The stop flag of every group when there are several: raised by a
    /// signal or when a group that `ends_run` has ended.
    follow: &'a AtomicBool,
    progress: &'a Progress,
    /// --stonewall first in group 0.
    first: bool,
}

fn threaded_run<W: Workload>(
    groups: &[Group<W>],
    shared: &[Shared],
    w: &Watch,
    monitor: Option<Monitor>,
) -> (Vec<Vec<WorkerOut>>, u64) {
    let total: usize = groups.iter().map(|g| g.cfg.jobs).sum();
    let (ready, go) = (Barrier::new(total + 1), Barrier::new(total + 1));
    let start_at: Mutex<Option<Instant>> = Mutex::new(None);
    let mut outs = Vec::with_capacity(groups.len());
    let mut unix = 0;
    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(total);
        for (gi, (g, sh)) in groups.iter().zip(shared).enumerate() {
            let stop = if groups.len() == 1 { w.stop } else { w.follow };
            for j in 0..g.cfg.jobs {
                let (ready, go, start_at) = (&ready, &go, &start_at);
                let name = if gi == 0 {
                    format!("fslab-job{j}")
                } else {
                    format!("fslab-g{gi}-job{j}")
                };
                let h = std::thread::Builder::new().name(name).spawn_scoped(s, move || {
                    // a panic in make must not leave the others waiting on
                    // the barriers for good
                    let built = g.windows.is_empty().then(|| build(j, g.make));
                    ready.wait();
                    go.wait();
                    let t0 = start_at
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .expect("start time set before go");
                    // wait_for: the group starts when the named one has ended
                    let t0 = match g.cfg.wait_for.and_then(|w| groups.get(w).zip(shared.get(w))) {
                        Some((wg, ws)) => {
                            let c = ctx(g, sh, gi, j, stop, t0);
                            while ws.ended.load(Ordering::SeqCst) < wg.cfg.jobs && !c.stopped() {
                                std::thread::sleep(Duration::from_millis(1));
                            }
                            Instant::now()
                        }
                        None => t0,
                    };
                    // startdelay: the group's times count from its own start
                    let t0 = t0 + g.cfg.start_delay;
                    let c = ctx(g, sh, gi, j, stop, t0);
                    let waited = g.cfg.wait_for.is_some() || !g.cfg.start_delay.is_zero();
                    if waited && (!pace::wait_until(t0, Duration::ZERO, &|| c.stopped()) || c.stopped()) {
                        let out = WorkerOut::default();
                        c.series.finish(j);
                        sh.ended.fetch_add(1, Ordering::SeqCst);
                        return out;
                    }
                    let out = match built {
                        Some(b) => drive_caught(&c, b),
                        None => drive_windows(&c, g.make, &g.windows),
                    };
                    sh.ended.fetch_add(1, Ordering::SeqCst);
                    out
                });
                handles.push(h.expect("spawn worker thread"));
            }
        }
        ready.wait();
        // every rank's workers are ready: start the phase together
        dist::coordinator().barrier();
        let t0 = Instant::now();
        unix = unix_now_ns();
        *start_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(t0);
        go.wait();
        let checks: Vec<_> = groups.iter().map(|g| (g.cfg.steady.as_ref(), g.cfg.jobs)).collect();
        let mut steady = steady::Monitor::new(&checks, t0);
        watch(groups, shared, &handles, t0, w, monitor, &mut steady);
        let mut it = handles.into_iter();
        for g in groups {
            outs.push(it.by_ref().take(g.cfg.jobs).map(join).collect::<Vec<_>>());
        }
        for ((g, j), st) in steady.map(steady::Monitor::results).unwrap_or_default() {
            outs[g][j].steady = Some(st);
        }
    });
    (outs, unix)
}

fn join(h: ScopedJoinHandle<'_, WorkerOut>) -> WorkerOut {
    h.join().unwrap_or_else(|_| WorkerOut {
        error: Some("worker thread panicked".into()),
        ..Default::default()
    })
}

/// The calling thread while the workers run: progress, stonewall messages,
/// the end of the groups that follow the first, the monitor.
fn watch<W>(
    groups: &[Group<W>],
    shared: &[Shared],
    handles: &[ScopedJoinHandle<'_, WorkerOut>],
    t0: Instant,
    w: &Watch,
    mut monitor: Option<Monitor>,
    steady: &mut Option<steady::Monitor>,
) {
    let coord = dist::coordinator();
    let g0 = &groups[0];
    let followers = groups.len() > 1;
    // each group's workers among the handles
    let mut spans = Vec::with_capacity(groups.len());
    let mut from = 0;
    for g in groups {
        spans.push((g.ends_run, from..from + g.cfg.jobs));
        from += g.cfg.jobs;
    }
    let counters: Vec<&[Counter]> = shared.iter().map(|s| &s.counters[..]).collect();
    let mut announced = false;
    let ticks = w.first || followers || monitor.is_some() || steady.is_some();
    // each worker's handle, by (group, worker)
    let finished = |g: usize, j: usize| handles[spans[g].1.start + j].is_finished();
    let mut tick = || {
        if w.first {
            if let Some((_, at)) = shared[0].wall.own().filter(|_| !announced) {
                coord.announce_stonewall(at);
                announced = true;
            }
            if let Some(at) = coord.poll_stonewall() {
                shared[0].wall.heard(at);
                end_all(&shared[0].counters);
            }
        }
        if followers
            && (w.stop.load(Ordering::Relaxed)
                || spans
                    .iter()
                    .any(|(ends, r)| *ends && handles[r.clone()].iter().all(|h| h.is_finished()))
                || groups
                    .iter()
                    .zip(shared)
                    .any(|(g, s)| g.cfg.exit_on_error && s.halt.load(Ordering::Relaxed)))
        {
            w.follow.store(true, Ordering::Relaxed);
        }
        if let Some(m) = monitor.as_mut() {
            m(t0, &counters);
        }
        if let Some(s) = steady.as_mut() {
            s.tick(Instant::now(), &counters, &finished);
        }
    };
    let every = Duration::from_millis(if w.first { 1 } else { 10 });
    // a count-limited grid has no known end
    let grid_end = g0.pacing.as_ref().filter(|p| p.count.is_none()).and_then(|p| p.end);
    let runtime = g0.cfg.deadline().or(grid_end);
    // the probe shows its own operations; jobs side by side (fio) show all
    let shown = if groups.iter().any(|g| g.ends_run) {
        &counters[..1]
    } else {
        &counters[..]
    };
    w.progress.watch(
        shown,
        t0 + g0.cfg.ramp,
        runtime,
        handles,
        if ticks { Some((&mut tick, every)) } else { None },
    );
    if w.first {
        // the last local job may have finished first after the last
        // tick: the other ranks must still hear of it
        tick();
    }
}

/// A worker of a group that runs in windows: waits for each, builds its
/// engine and workload, runs until the window's end (or its work's).
fn drive_windows<W: Workload>(ctx: &Ctx, make: &MakeFn<W>, windows: &[(Duration, Duration)]) -> WorkerOut {
    let mut acc = WorkerOut::default();
    let stopped = || ctx.stopped();
    for &(from, to) in windows {
        if !pace::wait_until(ctx.t0 + from, Duration::ZERO, &stopped) || ctx.stopped() {
            break;
        }
        let len = to.saturating_sub(from);
        let ramp = ctx.cfg.ramp.min(len);
        let cfg = RunConfig {
            ramp,
            runtime: Some(len - ramp),
            ..ctx.cfg.clone()
        };
        let w = Ctx {
            cfg: &cfg,
            t0: ctx.t0 + from,
            ..*ctx
        };
        let out = drive_guarded(&w, build(ctx.j, make));
        let start_ns = ns(from + ramp);
        acc.windows.push(WindowOut {
            start_ns,
            elapsed_ns: out.elapsed_ns,
            stopped_ns: out.stopped_ns,
            bytes: OpKind::ALL.iter().map(|d| out.stats[d.idx()].bytes).sum(),
            finished: out.error.is_none() && !w.stopped() && out.stopped_ns < ns(len - ramp),
        });
        absorb(&mut acc, out, start_ns);
        if acc.error.is_some() {
            break;
        }
    }
    ctx.series.finish(ctx.j);
    acc
}

/// Adds a window's result to the worker's; its times are from `offset`.
fn absorb(acc: &mut WorkerOut, o: WorkerOut, offset: u64) {
    for d in OpKind::ALL {
        acc.stats[d.idx()] += &o.stats[d.idx()];
    }
    acc.cpu += o.cpu;
    if o.elapsed_ns > 0 {
        acc.elapsed_ns = offset + o.elapsed_ns;
    }
    acc.stopped_ns = offset + o.stopped_ns;
    acc.error = acc.error.take().or(o.error);
    add_counts(&mut acc.depth_counts, &o.depth_counts);
    acc.batches += &o.batches;
    acc.notes.extend(o.notes);
    acc.items += o.items;
    acc.paced.extend(o.paced);
}

fn add_counts(into: &mut Vec<u64>, from: &[u64]) {
    if into.len() < from.len() {
        into.resize(from.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
}

/// One group's result on this rank.
fn summarise(cfg: &RunConfig, outs: Vec<WorkerOut>, s: Shared, stop: &AtomicBool, cpu_process: CpuTimes) -> RunOut {
    let outs_ok = outs.iter().all(|o| o.error.is_none());
    let mut stats: KindStats = Default::default();
    let mut depth_counts: Vec<u64> = Vec::new();
    for o in &outs {
        for d in OpKind::ALL {
            stats[d.idx()] += &o.stats[d.idx()];
        }
        add_counts(&mut depth_counts, &o.depth_counts);
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
        Some(Stonewall::First) => s.wall.fired.load(Ordering::SeqCst).then(|| StonewallOut {
            rule: "first".into(),
            at_ns: s.wall.at_ns.load(Ordering::SeqCst),
            by_rank: None,
            by_job: s.wall.own().map(|(j, _)| j),
            last_ns,
        }),
        None => None,
    };
    RunOut {
        stats,
        elapsed_ns: outs.iter().map(|o| o.elapsed_ns).max().unwrap_or(0),
        jobs: outs,
        series: s.series.into_points(),
        // Only a signal is an interruption: a failing job or --on-error stop
        // halts the run without touching the caller's stop flag.
        interrupted: stop.load(Ordering::Relaxed),
        halted_on_error: cfg.stop_on_error && s.halt.load(Ordering::Relaxed) && outs_ok,
        cpu_process,
        depth_counts,
        host: dist::coordinator().host(),
        ranks: Vec::new(),
        stonewall,
    }
}
