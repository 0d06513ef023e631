//! Runs workers: N threads behind a start barrier, an optional ramp that is
//! not measured, a deadline, pacing, and a stop flag for Ctrl-C.
//!
//! Each worker owns its engine, workload and stats; the only shared state on
//! the hot path is a relaxed stop flag and per-worker progress counters on
//! their own cache lines. Results merge with `+=` after the workers finish.

mod progress;

pub use progress::Progress;

use crate::engine::{Completion, Engine, Submit};
use crate::stats::cpu::CpuTimes;
use crate::stats::series::{IntervalPoint, IntervalTracker, SeriesCollector};
use crate::stats::{Dir, OpStats};
use crate::workload::Workload;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::Duration;

/// Timestamps come from the TSC when the CPU has an invariant one (calibrated
/// against CLOCK_MONOTONIC, the same source the kernel uses; fio's
/// `clocksource=cpu` does the same), else from clock_gettime. Reading the TSC
/// costs ~9 ns against ~21 ns for clock_gettime on a typical VM: it is most of
/// fslab's own per-operation cost.
pub use quanta::Instant;

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
}

/// Per-worker counters the progress display reads.
#[repr(align(64))]
#[derive(Default)]
pub struct Counter {
    pub ops: AtomicU64,
    pub bytes: AtomicU64,
}

/// What one worker measured.
#[derive(Debug, Default)]
pub struct WorkerOut {
    pub stats: [OpStats; 3],
    pub cpu: CpuTimes,
    /// From the end of the ramp to the worker's last measured completion.
    pub elapsed_ns: u64,
    pub error: Option<String>,
}

/// What a run measured, merged.
#[derive(Debug)]
pub struct RunOut {
    pub stats: [OpStats; 3],
    pub jobs: Vec<WorkerOut>,
    pub elapsed_ns: u64,
    pub series: Vec<IntervalPoint>,
    pub interrupted: bool,
    pub cpu_process: CpuTimes,
}

/// Runs `cfg.jobs` workers; `make(j)` builds worker j's engine and workload on
/// its own thread (so per-thread setup like opening files is not timed).
pub fn run<W, F>(cfg: &RunConfig, stop: &AtomicBool, progress: &Progress, make: F) -> RunOut
where
    W: Workload,
    F: Fn(usize) -> Result<(Box<dyn Engine>, W), String> + Sync,
{
    let ready = Barrier::new(cfg.jobs + 1);
    let go = Barrier::new(cfg.jobs + 1);
    let start_at: Mutex<Option<Instant>> = Mutex::new(None);
    let counters: Vec<Counter> = (0..cfg.jobs).map(|_| Counter::default()).collect();
    let series = SeriesCollector::new(cfg.jobs);
    let cpu0 = CpuTimes::process();
    let mut outs = Vec::with_capacity(cfg.jobs);
    if cfg.jobs == 1 && !progress.is_enabled() {
        // One job without a progress bar runs on the calling thread: in a
        // single-threaded process the kernel skips the file refcounting it
        // does on every syscall of a multithreaded one (fdget/fput), which is
        // ~2 % of a page-cached 4 KiB read. fio gets the same by forking.
        let built = make(0);
        let t0 = Instant::now();
        outs.push(drive(0, built, cfg, stop, &counters[0], &series, t0));
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..cfg.jobs)
                .map(|j| {
                    let (ready, go, start_at, counter, series, make) =
                        (&ready, &go, &start_at, &counters[j], &series, &make);
                    std::thread::Builder::new()
                        .name(format!("fslab-job{j}"))
                        .spawn_scoped(s, move || {
                            let built = make(j);
                            ready.wait();
                            go.wait();
                            let t0 = start_at
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .expect("start time set before go");
                            drive(j, built, cfg, stop, counter, series, t0)
                        })
                        .expect("spawn worker thread")
                })
                .collect();
            ready.wait();
            let t0 = Instant::now();
            *start_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(t0);
            go.wait();
            progress.watch(&counters, t0 + cfg.ramp, cfg.runtime, &handles);
            for h in handles {
                outs.push(h.join().unwrap_or_else(|_| WorkerOut {
                    error: Some("worker thread panicked".into()),
                    ..Default::default()
                }));
            }
        });
    }
    let cpu_process = CpuTimes::process() - cpu0;
    let outs_ok = outs.iter().all(|o| o.error.is_none());
    let mut stats: [OpStats; 3] = Default::default();
    for o in &outs {
        for d in Dir::ALL {
            stats[d.idx()] += &o.stats[d.idx()];
        }
    }
    RunOut {
        stats,
        elapsed_ns: outs.iter().map(|o| o.elapsed_ns).max().unwrap_or(0),
        jobs: outs,
        series: series.into_points(),
        // A failing job also raises the stop flag to end its siblings; only a
        // stop without a job error is an interruption (a signal).
        interrupted: stop.load(Ordering::Relaxed) && outs_ok,
        cpu_process,
    }
}

/// Runs worker `j` if its engine and workload were built, and tells the
/// series collector it is done either way.
fn drive<W: Workload>(
    j: usize,
    built: Result<(Box<dyn Engine>, W), String>,
    cfg: &RunConfig,
    stop: &AtomicBool,
    counter: &Counter,
    series: &SeriesCollector,
    t0: Instant,
) -> WorkerOut {
    let out = match built {
        Ok((mut engine, mut wl)) => worker(j, cfg, stop, counter, series, engine.as_mut(), &mut wl, t0),
        Err(e) => {
            stop.store(true, Ordering::Relaxed);
            WorkerOut {
                error: Some(e),
                ..Default::default()
            }
        }
    };
    series.finish(j);
    out
}

#[inline]
fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

/// The hot loop of one worker.
#[allow(clippy::too_many_arguments)]
fn worker<W: Workload>(
    j: usize,
    cfg: &RunConfig,
    stop: &AtomicBool,
    counter: &Counter,
    series: &SeriesCollector,
    engine: &mut dyn Engine,
    wl: &mut W,
    t0: Instant,
) -> WorkerOut {
    let paced = cfg.rate.is_some();
    let mut stats: [OpStats; 3] = std::array::from_fn(|_| OpStats::new(&cfg.bucket_ns, paced));
    let mut interval = IntervalTracker::default();
    let measure_start = t0 + cfg.ramp;
    let deadline = cfg.runtime.map(|r| measure_start + r);
    let period = cfg.rate.map(|r| Duration::from_nanos(1_000_000_000 / r.max(1)));
    let mut recording = cfg.ramp.is_zero();
    let mut cpu_start = CpuTimes::thread();
    let mut sec: u64 = 0;
    // The next instant at which something other than recording must happen.
    let mut next_event = if recording {
        measure_start + Duration::from_secs(1)
    } else {
        measure_start
    };
    if let Some(d) = deadline {
        next_event = next_event.min(d);
    }
    let (mut ops, mut bytes) = (0u64, 0u64);
    // Pacing grid: operation n is due at t0 + n*period, whatever happened before.
    let mut due = t0;
    let mut last = t0;
    let mut completions: Vec<Completion> = Vec::new();
    let mut error = None;
    loop {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let Some(next) = wl.next_op() else { break };
        let intended = period.map(|p| {
            let t = due;
            due += p;
            let now = Instant::now();
            if t > now {
                std::thread::sleep(t - now);
            }
            t
        });
        let start = Instant::now();
        let result = match engine.submit(&next.op, ops) {
            Submit::Done(r) => r,
            Submit::Queued | Submit::Busy => {
                // Depth-1 path for queueing engines: wait for this op's completion.
                completions.clear();
                match engine.commit().and_then(|_| engine.reap(1, &mut completions)) {
                    Ok(()) => completions.first().map(|c| c.result).unwrap_or(-(libc::EIO as i64)),
                    Err(e) => {
                        error = Some(format!("{}: {e}", engine.name()));
                        break;
                    }
                }
            }
        };
        let end = Instant::now();
        wl.on_complete(&next, result);
        if end >= next_event {
            if let Some(d) = deadline {
                if end >= d {
                    last = d;
                    break;
                }
            }
            if !recording {
                if end >= measure_start {
                    recording = true;
                    cpu_start = CpuTimes::thread();
                    next_event = measure_start + Duration::from_secs(1);
                } else {
                    next_event = measure_start;
                }
            } else {
                series.flush(j, sec, interval.take(&stats));
                sec = (end - measure_start).as_secs();
                next_event = measure_start + Duration::from_secs(sec + 1);
            }
            if let Some(d) = deadline {
                next_event = next_event.min(d);
            }
        }
        if recording {
            let lat = ns(end - start);
            let st = &mut stats[next.dir.idx()];
            if result >= 0 {
                let moved = result as u64;
                st.record_ok(lat, moved);
                interval.note(next.dir, lat);
                bytes += moved;
            } else {
                st.record_err(-result as i32);
            }
            if let Some(t) = intended {
                st.record_sched(ns(end.saturating_duration_since(t)));
            }
            ops += 1;
            counter.ops.store(ops, Ordering::Relaxed);
            counter.bytes.store(bytes, Ordering::Relaxed);
            last = end;
        }
    }
    if recording {
        series.flush(j, sec, interval.take(&stats));
    }
    WorkerOut {
        stats,
        cpu: CpuTimes::thread() - cpu_start,
        elapsed_ns: if recording {
            ns(last.saturating_duration_since(measure_start))
        } else {
            0
        },
        error,
    }
}
