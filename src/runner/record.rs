//! What every worker loop shares: recording completed operations, the ramp,
//! the per-second boundaries and the deadline.

use super::oplog::OpLog;
use super::samples::Sampler;
use super::{ns, Counter, Ctx, Instant, WorkerOut};
use crate::stats::cpu::CpuTimes;
use crate::stats::samples::Batches;
use crate::stats::series::{IntervalTracker, SeriesCollector};
use crate::stats::{KindStats, OpKind, OpStats};
use crate::workload::Step;
use std::sync::atomic::Ordering;
use std::time::Duration;

pub(crate) struct Recorder<'a> {
    j: usize,
    counter: &'a Counter,
    series: &'a SeriesCollector,
    pub stats: KindStats,
    interval: IntervalTracker,
    measure_start: Instant,
    deadline: Option<Instant>,
    /// False during the ramp.
    pub recording: bool,
    cpu_start: CpuTimes,
    sec: u64,
    /// The next instant at which something other than recording must happen.
    next_event: Instant,
    ops: u64,
    bytes: u64,
    last: Instant,
    pub depth_counts: Vec<u64>,
    /// Set for --on-error stop: raised at the first failed operation.
    halt_on_error: Option<&'a std::sync::atomic::AtomicBool>,
    /// fio's per-job logs, when the group keeps any (`RunConfig.log`).
    log: Option<Box<OpLog>>,
    /// fio's continue_on_error / ignore_error: the errors that do not halt.
    errors: &'a crate::plan::PacingPlan,
    /// What fresh statistics are made of (`reset`).
    cfg: &'a super::RunConfig,
    split: bool,
    /// Where `elapsed_ns` counts from: the end of the ramp, or the last `reset`.
    stats_start: Instant,
    /// fio's bw and iops samples.
    samplers: [Sampler; 2],
    /// When the next window of either is taken.
    sample_at: Option<Instant>,
    /// Either takes a sample per I/O (a per-I/O bw or iops log).
    per_io_samples: bool,
    /// Operations per submit and per reap call (queueing engines).
    pub batches: Batches,
    /// The kernel's view of this thread, when the run is traced
    /// (`--anatomy`, `--explain-slow`; the sync loop only).
    pub trace: Option<Box<dyn crate::stats::anatomy::ThreadTrace>>,
}

impl<'a> Recorder<'a> {
    pub fn new(ctx: &Ctx<'a>, split: bool) -> Self {
        let (cfg, t0) = (ctx.cfg, ctx.t0);
        let measure_start = t0 + cfg.ramp;
        let deadline = cfg.deadline().map(|r| measure_start + r);
        let recording = cfg.ramp.is_zero();
        if recording {
            ctx.counter.measuring.store(true, Ordering::Relaxed);
        }
        let samplers = [
            Sampler::new(true, &cfg.log, measure_start),
            Sampler::new(false, &cfg.log, measure_start),
        ];
        let sample_at = samplers.iter().filter_map(Sampler::due).min();
        let mut next_event = if recording {
            (measure_start + Duration::from_secs(1)).min(sample_at.unwrap_or(measure_start + Duration::from_secs(1)))
        } else {
            measure_start
        };
        if let Some(d) = deadline {
            next_event = next_event.min(d);
        }
        Recorder {
            halt_on_error: cfg.stop_on_error.then_some(ctx.halt),
            errors: &cfg.pacing,
            j: ctx.j,
            counter: ctx.counter,
            series: ctx.series,
            stats: std::array::from_fn(|_| OpStats::new(&cfg.bucket_ns, cfg.rate.is_some(), split)),
            interval: IntervalTracker::default(),
            measure_start,
            deadline,
            recording,
            cpu_start: CpuTimes::thread(),
            sec: 0,
            next_event,
            // a worker of a group that runs in windows goes on counting
            ops: ctx.counter.ops.load(Ordering::Relaxed),
            bytes: ctx.counter.bytes.load(Ordering::Relaxed),
            last: t0,
            depth_counts: Vec::new(),
            log: (!cfg.log.is_off()).then(|| Box::new(OpLog::new(&cfg.log, measure_start, split))),
            cfg,
            split,
            stats_start: measure_start,
            per_io_samples: samplers.iter().any(Sampler::per_io_mode),
            samplers,
            sample_at,
            batches: Batches::default(),
            trace: None,
        }
    }

    /// fio's reset_all_stats, for the final window of a latency_target
    /// search: the statistics, the in-flight depths, the CPU time, the
    /// measured time and the runtime start again from `now` (fio's job runs
    /// its whole runtime again at most). The per-second series and the logs
    /// go on (the series' current second loses what came before).
    #[cold]
    pub fn reset(&mut self, now: Instant) {
        let cfg = self.cfg;
        self.stats = std::array::from_fn(|_| OpStats::new(&cfg.bucket_ns, cfg.rate.is_some(), self.split));
        self.interval = IntervalTracker::default();
        self.depth_counts.clear();
        self.batches = Batches::default();
        self.cpu_start = CpuTimes::thread();
        self.stats_start = now;
        self.last = now;
        for s in &mut self.samplers {
            s.restart(now);
        }
        self.sample_at = self.samplers.iter().filter_map(Sampler::due).min();
        if let Some(r) = cfg.deadline() {
            self.deadline = Some(now + r);
        }
        self.set_next_event();
    }

    /// The next second's boundary or rate sample, whichever comes first,
    /// never past the deadline.
    fn set_next_event(&mut self) {
        let mut next = self.measure_start + Duration::from_secs(self.sec + 1);
        if let Some(t) = self.sample_at {
            next = next.min(t);
        }
        self.next_event = self.deadline.map_or(next, |d| next.min(d));
    }

    /// Takes the sample windows due by `now`, at their own ends: what
    /// completed at `now` is not recorded yet, and nothing since they ended.
    fn take_samples(&mut self, now: Instant) {
        for s in &mut self.samplers {
            s.catch_up(now, &mut self.stats);
        }
        self.sample_at = self.samplers.iter().filter_map(Sampler::due).min();
    }

    /// When measurement ends (the runtime's end, moved by `reset`): no
    /// pacing wait may go past it.
    #[inline]
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// A pacing wait ended (at the deadline, or stopped): the events due
    /// now are handled, so a worker that waited out its runtime reports
    /// the whole runtime as its time, as fio does (1 I/O in a 2 s run of
    /// `rate=100` is 2048 B/s, not one I/O's bandwidth).
    #[inline]
    pub fn waited_out(&mut self) {
        let _ = self.tick(Instant::now());
    }

    /// Handles the events due at `now`; false once the deadline has passed
    /// (the operation that completed at `now` is then not recorded).
    #[inline]
    pub fn tick(&mut self, now: Instant) -> bool {
        now < self.next_event || self.event(now)
    }

    #[cold]
    fn event(&mut self, now: Instant) -> bool {
        if let Some(d) = self.deadline {
            if now >= d {
                // the windows that ended before the run did; the one that
                // ends with it fio 3.33 takes after a ramp, not without one
                // (its helper's timer then ends the window as the job ends:
                // 1 sample in a 1 s run, 2 with ramp_time=100ms)
                if self.recording {
                    let last_too = !self.cfg.ramp.is_zero();
                    for s in &mut self.samplers {
                        s.at_end(d, last_too, &mut self.stats);
                    }
                }
                self.last = d;
                return false;
            }
        }
        if !self.recording {
            if now >= self.measure_start {
                self.recording = true;
                self.counter.measuring.store(true, Ordering::Relaxed);
                self.cpu_start = CpuTimes::thread();
                self.set_next_event();
            } else {
                self.next_event = self.measure_start;
            }
            return true;
        }
        if self.sample_at.is_some_and(|t| now >= t) {
            self.take_samples(now);
        }
        if now >= self.measure_start + Duration::from_secs(self.sec + 1) {
            self.series.flush(self.j, self.sec, self.interval.take(&self.stats));
            self.sec = (now - self.measure_start).as_secs();
        }
        self.set_next_event();
        true
    }

    /// Records one completed operation (call only while `recording`).
    #[inline]
    pub fn record(&mut self, step: Step, lat: u64, sched: Option<u64>, end: Instant) {
        let (dir, result) = (step.dir, step.result);
        let st = &mut self.stats[dir.idx()];
        if result >= 0 {
            let moved = result as u64;
            st.record_ok(lat, moved);
            st.short += step.short as u64;
            self.interval.note(dir, lat);
            self.bytes += moved;
        } else {
            st.record_err(-result as i32);
            if let Some(h) = self.halt_on_error {
                if !self
                    .errors
                    .non_fatal(crate::plan::io::pacing::error_class(dir, -result), -result as i32)
                {
                    h.store(true, Ordering::Relaxed);
                }
            }
        }
        if let Some(s) = sched {
            st.record_sched(s);
        }
        if self.per_io_samples && result >= 0 {
            for sm in &self.samplers {
                sm.per_io(dir, result as u64, lat, &mut self.stats);
            }
        }
        if let Some(l) = &mut self.log {
            l.record(dir, result, (step.offset, step.prio), lat, end);
        }
        self.ops += 1;
        self.counter.ops.store(self.ops, Ordering::Relaxed);
        self.counter.bytes.store(self.bytes, Ordering::Relaxed);
        self.last = end;
    }

    /// Records a latency from the schedule alone (a slot a paced operation missed).
    #[inline]
    pub fn record_sched(&mut self, dir: OpKind, sched: u64) {
        self.stats[dir.idx()].record_sched(sched);
    }

    /// Records the slat/clat split of a queued operation.
    #[inline]
    pub fn record_split(&mut self, dir: OpKind, result: i64, slat: u64, clat: u64) {
        if result >= 0 {
            self.stats[dir.idx()].record_split(slat, clat);
        }
        if let Some(l) = &mut self.log {
            // `record` of the same operation came first: `last` is its end
            l.split(dir, result, slat, clat, self.last);
        }
    }

    /// Counts a submission that found `depth` operations in flight (itself included).
    #[inline]
    pub fn note_depth(&mut self, depth: usize) {
        if self.recording {
            if self.depth_counts.len() <= depth {
                self.depth_counts.resize(depth + 1, 0);
            }
            self.depth_counts[depth] += 1;
        }
    }

    /// A submit call handed `n` operations to the engine.
    #[inline]
    pub fn note_submit(&mut self, n: usize) {
        if self.recording {
            self.batches.note_submit(n);
        }
    }

    /// A reap call brought back `n` completions.
    #[inline]
    pub fn note_complete(&mut self, n: usize) {
        if self.recording {
            self.batches.note_complete(n);
        }
    }

    pub fn finish(mut self, error: Option<String>) -> WorkerOut {
        if self.recording {
            self.series.flush(self.j, self.sec, self.interval.take(&self.stats));
        }
        WorkerOut {
            cpu: CpuTimes::thread() - self.cpu_start,
            elapsed_ns: if self.recording {
                ns(self.last.saturating_duration_since(self.stats_start))
            } else {
                0
            },
            stopped_ns: if self.recording {
                ns(Instant::now().saturating_duration_since(self.stats_start))
            } else {
                0
            },
            error,
            depth_counts: self.depth_counts,
            batches: self.batches,
            notes: Vec::new(),
            items: 0,
            stats: self.stats,
            paced: Vec::new(),
            windows: Vec::new(),
            steady: None,
            log: self.log.map(|l| Box::new(l.finish(self.last))),
            latency_depth: None,
        }
    }
}
