//! fio's pacing of one worker, from a `PacingPlan`, and how it drives the
//! inline engines' loop. `FioPacer` joins the parts, each in its own file:
//! the rate's `schedule` per direction, `think` (thinktime every
//! thinktime_blocks operations), `min_rate` (the rate_min check every
//! rate_cycle) and `flow` (a flow_id's share).

use super::flow::FlowShare;
use super::hook::{Done, Pace};
use super::min_rate::MinRate;
use super::schedule::{ddir, Schedule, Waited};
use super::think::{sleep_granularity_us, Think};
use crate::engine::{Engine, Submit};
use crate::plan::PacingPlan;
use crate::runner::record::Recorder;
use crate::runner::{Ctx, Instant, WorkerOut};
use crate::stats::OpKind;
use crate::workload::{NextOp, Step, Workload};
use std::ops::ControlFlow;

/// fio's pacing of one worker, from a `PacingPlan`: the rate's schedule per
/// direction (`usec_for_io`: linear in the bytes issued, or poisson gaps),
/// thinktime every `thinktime_blocks` operations, and the `rate_min` check
/// every `rate_cycle`.
pub(crate) struct FioPacer {
    sched: Schedule,
    think: Think,
    min: MinRate,
    /// fio's flow: this job's share of its flow_id's operations.
    flow: Option<FlowShare>,
    /// A mixed job with a rate: `steer` picks each read or write's direction.
    pub switches: bool,
}

impl FioPacer {
    /// Worker `j`'s pacer; its schedule starts at `t0`, measurement at `measure_start`.
    pub fn new(p: &PacingPlan, j: usize, t0: Instant, measure_start: Instant) -> Self {
        FioPacer {
            sched: Schedule::new(p, j, t0, measure_start),
            think: Think::new(p, t0),
            min: MinRate::new(p),
            flow: (p.flow > 0).then(|| FlowShare::join(p.flow_id, p.flow, p.flow_sleep_us)),
            switches: p.switches(),
        }
        .measured_sleep(p.thinktime_us > 0)
    }

    /// Measures fio's sleep granularity before the job starts (not in its
    /// first think) when it thinks.
    fn measured_sleep(self, thinks: bool) -> Self {
        if thinks {
            sleep_granularity_us();
        }
        self
    }

    /// fio's rate_ddir for a mixed job (`Schedule::steer`).
    #[inline]
    pub fn steer(&self, dir: OpKind, now: Instant) -> OpKind {
        self.sched.steer(dir, now)
    }

    /// In a flow: whether the next operation may go (counted if so).
    #[inline]
    pub fn flow_admit(&mut self) -> bool {
        self.flow.as_mut().is_none_or(FlowShare::admit)
    }

    /// Held back by the flow: waits a little (flow_sleep, or a yield),
    /// never past `deadline`.
    pub fn flow_hold(&self, deadline: Option<Instant>) {
        if let Some(f) = &self.flow {
            f.hold(deadline);
        }
    }

    /// Waits until the flow lets the next operation go; false when
    /// `stopped` or once `deadline` has passed.
    pub fn flow_wait(&mut self, deadline: Option<Instant>, stopped: &dyn Fn() -> bool) -> bool {
        while !self.flow_admit() {
            self.flow_hold(deadline);
            if stopped() || deadline.is_some_and(|d| Instant::now() >= d) {
                return false;
            }
        }
        true
    }

    /// When an operation of `dir` may be issued (None: at once).
    #[inline]
    pub fn due(&self, dir: OpKind) -> Option<Instant> {
        self.sched.due(dir)
    }

    /// For a workload whose direction is known only once done: the earlier
    /// of the paced directions' times.
    pub fn due_any(&self) -> Option<Instant> {
        [OpKind::Read, OpKind::Write]
            .into_iter()
            .filter_map(|d| self.due(d))
            .min()
    }

    /// The smallest block of `dir` (a step's length, when not known).
    pub fn bs(&self, dir: OpKind) -> u64 {
        self.sched.bs(dir)
    }

    /// An operation of `dir` moving `len` bytes was issued: the next one's
    /// time (fio: rate_io_issue_bytes, then usec_for_io).
    #[inline]
    pub fn issue(&mut self, dir: OpKind, len: u64) {
        let Some(d) = ddir(dir) else { return };
        self.think.issued();
        self.sched.issue(d, len);
    }

    /// An operation of `dir` completed at `now` with `result` (bytes, or a
    /// negated errno); `recording`: after the ramp. Returns the rate_min
    /// failure, if this completion shows one.
    #[inline]
    pub fn complete(&mut self, dir: OpKind, result: i64, recording: bool, now: Instant) -> Option<String> {
        let d = ddir(dir)?;
        self.think.completed();
        if !recording {
            return None;
        }
        if !self.sched.measured {
            self.sched.restart();
        }
        if !self.min.note(d, result) {
            return None;
        }
        self.min.check(d, now, self.sched.measure_start)
    }

    /// Waits for an operation due at `t` (`Schedule::wait_for`: never past
    /// `deadline`, nor in the ramp past its end).
    pub fn wait_for(&mut self, t: Instant, deadline: Option<Instant>, stopped: &dyn Fn() -> bool) -> Waited {
        self.sched.wait_for(t, deadline, stopped)
    }

    /// Whether a think is due now (`Think::due`).
    #[inline]
    pub fn think_due(&self) -> bool {
        self.think.due()
    }

    /// Thinks after an operation of `dir`: spins thinktime_spin, sleeps the
    /// rest, never past `deadline`. False when `stopped` ended the sleep.
    pub fn think(&mut self, dir: OpKind, deadline: Option<Instant>, stopped: &dyn Fn() -> bool) -> bool {
        let (total, ok) = self.think.think(deadline, stopped);
        if let Some(d) = ddir(dir).filter(|_| self.think.ignore) {
            self.sched.skip_think(d, total);
        }
        ok
    }
}

/// fio's pacing driving the inline engines' loop: each operation waits for
/// its direction's time, then the pacer learns of it; a think follows every
/// thinktime_blocks operations.
pub(crate) struct FioSync {
    pacer: FioPacer,
    /// The workload hands out operations (`Workload::queues`): the pacer
    /// learns each one's direction before it waits.
    queues: bool,
    /// Taken from the workload by `before`, done by `issue`.
    next: Option<NextOp>,
}

impl FioSync {
    /// Worker `ctx.j`'s pacing from `ctx.cfg.pacing`.
    pub fn new<W: Workload>(ctx: &Ctx, wl: &W) -> Self {
        let cfg = ctx.cfg;
        FioSync {
            pacer: FioPacer::new(&cfg.pacing, ctx.j, ctx.t0, ctx.t0 + cfg.ramp),
            queues: wl.queues(),
            next: None,
        }
    }
}

impl Pace for FioSync {
    fn before<W: Workload>(&mut self, ctx: &Ctx, rec: &mut Recorder, wl: &mut W) -> Option<Option<Instant>> {
        let p = &mut self.pacer;
        let stopped = || ctx.stopped();
        // the recorder's deadline: a latency_target search's reset moves it
        let deadline = rec.deadline();
        // fio checks its flow first, at the top of its loop
        if !p.flow_wait(deadline, &stopped) {
            rec.waited_out();
            return None;
        }
        let due = if self.queues {
            if p.switches {
                if let Some(d) = wl.next_dir() {
                    let s = p.steer(d, Instant::now());
                    if s != d {
                        wl.set_next_dir(s);
                    }
                }
            }
            let next = wl.next_op(0)?;
            self.next = Some(next);
            p.due(next.dir)
        } else {
            p.due_any()
        };
        if let Some(t) = due {
            if p.wait_for(t, deadline, &stopped) == Waited::Ended {
                rec.waited_out();
                return None;
            }
        }
        if let Some(next) = &self.next {
            p.issue(next.dir, next.len);
        }
        // fio's latency from the schedule is not kept
        Some(None)
    }

    #[inline]
    fn issue<W: Workload>(&mut self, _start: Instant, engine: &mut dyn Engine, wl: &mut W) -> Option<Step> {
        let Some(next) = self.next.take() else {
            let step = wl.step(engine)?;
            self.pacer.issue(step.dir, self.pacer.bs(step.dir));
            return Some(step);
        };
        // SAFETY: the op names this workload's own buffers, left alone
        // until `on_complete` (next_op's contract); it completes before
        // the next call (as Workload::step's default does).
        let r = match unsafe { engine.submit(&next.op, 0) } {
            Submit::Done(r) => r,
            _ => crate::engine::exec_pending(engine),
        };
        Some(Step::of(&next, wl.on_complete(&next, r)))
    }

    fn after(&mut self, ctx: &Ctx, rec: &mut Recorder, d: Done) -> ControlFlow<Option<String>> {
        let (dir, result) = (d.step.dir, d.step.result);
        if let Some(e) = self.pacer.complete(dir, result, rec.recording, d.end) {
            return ControlFlow::Break(Some(ctx.failed(e)));
        }
        if self.pacer.think_due() && !self.pacer.think(dir, rec.deadline(), &|| ctx.stopped()) {
            return ControlFlow::Break(None);
        }
        ControlFlow::Continue(())
    }

    fn finish(self, _out: &mut WorkerOut) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::ns;
    use std::time::Duration;

    fn plan(rate: [u64; 2], poisson: bool) -> PacingPlan {
        PacingPlan {
            rate,
            poisson,
            min_bs: [4096, 4096],
            seed: 42,
            ..Default::default()
        }
    }

    #[test]
    fn linear_rate_schedules_each_op_at_bytes_issued_over_the_rate() {
        let t0 = Instant::now();
        // 1 MiB/s read, 4 KiB blocks: 3906.25 µs per block, fio's integer µs
        let mut p = FioPacer::new(&plan([1 << 20, 0], false), 0, t0, t0);
        assert_eq!(p.due(OpKind::Read), Some(t0));
        p.issue(OpKind::Read, 4096);
        assert_eq!(p.due(OpKind::Read), Some(t0 + Duration::from_micros(3906)));
        p.issue(OpKind::Read, 4096);
        assert_eq!(p.due(OpKind::Read), Some(t0 + Duration::from_micros(7812)));
        // writes are not limited, syncs never
        assert_eq!(p.due(OpKind::Write), None);
        assert_eq!(p.due(OpKind::Fsync), None);
        // rate_iops becomes bytes per second with the smallest block
        let q = PacingPlan {
            rate_iops: [0, 250],
            min_bs: [4096, 8192],
            ..Default::default()
        };
        assert_eq!(q.bps(), [0, 250 * 8192]);
    }

    /// Kolmogorov-Smirnov: the largest distance between the empirical CDF of
    /// `xs` and `cdf`.
    fn ks(xs: &mut [f64], cdf: impl Fn(f64) -> f64) -> f64 {
        xs.sort_by(|a, b| a.total_cmp(b));
        let n = xs.len() as f64;
        xs.iter()
            .enumerate()
            .map(|(i, &x)| {
                let f = cdf(x);
                (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn poisson_gaps_are_exponential_with_the_rate_s_mean() {
        let t0 = Instant::now();
        // 256 KiB/s of 4 KiB: 64 IOPS, a mean gap of 15625 µs
        let mut p = FioPacer::new(&plan([256 << 10, 0], true), 3, t0, t0);
        let n = 5000;
        let mut last = 0u64;
        let mut gaps = Vec::with_capacity(n);
        for _ in 0..n {
            p.issue(OpKind::Read, 4096);
            let at = ns(p.due(OpKind::Read).unwrap() - t0) / 1000;
            gaps.push((at - last) as f64);
            last = at;
        }
        let mean = gaps.iter().sum::<f64>() / n as f64;
        assert!((mean - 15625.0).abs() < 15625.0 * 0.05, "mean gap {mean} µs");
        let d = ks(&mut gaps, |x| 1.0 - (-x / 15625.0).exp());
        // the 1% critical value of the one-sample test is 1.63 / sqrt(n)
        let crit = 1.63 / (n as f64).sqrt();
        assert!(d < crit, "KS distance {d} >= {crit}");
        // a fixed grid is far from exponential
        let mut grid = vec![15625.0; 100];
        assert!(ks(&mut grid, |x| 1.0 - (-x / 15625.0).exp()) > 0.5);
    }

    #[test]
    fn a_mixed_job_issues_the_direction_behind_its_rate() {
        let t0 = Instant::now();
        // 1 MiB/s of reads, 512 KiB/s of writes, 4 KiB blocks
        let q = PacingPlan {
            mixed: true,
            ..plan([1 << 20, 512 << 10], false)
        };
        assert!(q.switches());
        let mut p = FioPacer::new(&q, 0, t0, t0);
        assert!(p.switches);
        let at = |ms| t0 + Duration::from_millis(ms);
        // both behind: the drawn direction goes
        assert_eq!(p.steer(OpKind::Read, at(0)), OpKind::Read);
        p.issue(OpKind::Read, 4096);
        // reads ahead (next at 3906 µs), writes behind: a write instead
        assert_eq!(p.steer(OpKind::Read, at(1)), OpKind::Write);
        p.issue(OpKind::Write, 4096);
        // both ahead: the one due first (reads at 3906 µs, writes at 7812 µs)
        assert_eq!(p.steer(OpKind::Read, at(1)), OpKind::Read);
        assert_eq!(p.steer(OpKind::Write, at(1)), OpKind::Read);
        // writes behind again at 8 ms
        assert_eq!(p.steer(OpKind::Write, at(8)), OpKind::Write);
        // syncs are never steered
        assert_eq!(p.steer(OpKind::Fsync, at(1)), OpKind::Fsync);
        // an unlimited direction is always behind
        let mut u = FioPacer::new(&plan([1 << 20, 0], false), 0, t0, t0);
        u.issue(OpKind::Read, 4096);
        assert_eq!(u.steer(OpKind::Read, at(1)), OpKind::Write);
        // a job that is not mixed never switches
        assert!(!plan([1 << 20, 512 << 10], false).switches());
    }

    #[test]
    fn a_flow_gives_each_job_its_weight_s_share_of_the_operations() {
        // a flow id no other test uses: flows are shared by the process
        let q = |w| PacingPlan {
            flow: w,
            flow_id: 0x7E57_F10A,
            ..Default::default()
        };
        let t0 = Instant::now();
        let mut heavy = FioPacer::new(&q(2), 0, t0, t0);
        let mut light = FioPacer::new(&q(1), 1, t0, t0);
        let (mut h, mut l) = (0u64, 0u64);
        // the light job tries three times as often: the flow still holds it to a third
        for i in 0..6000 {
            if i % 4 == 0 {
                h += heavy.flow_admit() as u64;
            } else {
                l += light.flow_admit() as u64;
            }
        }
        assert!(l > 500 && h.abs_diff(2 * l) <= 2, "heavy {h}, light {l}");
        // the light job leaves: the heavy one runs alone, never held back
        drop(light);
        assert!((0..100).all(|_| heavy.flow_admit()));
        // without flow, nothing is held back
        let mut free = FioPacer::new(&PacingPlan::default(), 2, t0, t0);
        assert!((0..10).all(|_| free.flow_admit()));
    }

    #[test]
    fn thinktime_comes_every_thinktime_blocks_completions() {
        let t0 = Instant::now();
        let q = PacingPlan {
            thinktime_us: 10,
            thinktime_blocks: 3,
            ..Default::default()
        };
        let mut p = FioPacer::new(&q, 0, t0, t0);
        let mut thinks = 0;
        for _ in 0..9 {
            p.issue(OpKind::Read, 4096);
            assert_eq!(p.complete(OpKind::Read, 4096, true, Instant::now()), None);
            if p.think_due() {
                assert!(p.think(OpKind::Read, None, &|| false));
                thinks += 1;
            }
        }
        assert_eq!(thinks, 3);
    }

    #[test]
    fn rate_min_fails_after_the_settle_period_when_a_cycle_is_short() {
        let t0 = Instant::now();
        let q = PacingPlan {
            rate_min: [1 << 20, 0],
            rate_cycle_ms: 100,
            ..Default::default()
        };
        let mut p = FioPacer::new(&q, 0, t0, t0);
        // within the first 2 s: never
        assert_eq!(p.complete(OpKind::Read, 4096, true, t0 + Duration::from_secs(1)), None);
        // the first check only takes its sample
        assert_eq!(p.complete(OpKind::Read, 4096, true, t0 + Duration::from_secs(2)), None);
        // a cycle later: 4 KiB in 100 ms is 40 KiB/s, below 1 MiB/s
        let e = p.complete(OpKind::Read, 4096, true, t0 + Duration::from_millis(2100));
        assert_eq!(e.as_deref(), Some("rate_min=1048576B/s not met, got 40960B/s"));
    }

    /// Reads through the null engine, noting when each was issued.
    struct Stamps(std::sync::Arc<std::sync::Mutex<Vec<Instant>>>);

    impl Workload for Stamps {
        fn next_op(&mut self, _slot: usize) -> Option<crate::workload::NextOp> {
            self.0.lock().unwrap().push(Instant::now());
            Some(crate::workload::NextOp {
                op: crate::engine::Op::Read {
                    fd: -1,
                    offset: 0,
                    buf: std::ptr::null_mut(),
                    len: 4096,
                    buf_index: crate::engine::NO_BUF_INDEX,
                },
                dir: OpKind::Read,
                len: 4096,
                prio: 0,
            })
        }
    }

    #[test]
    fn a_poisson_paced_run_issues_with_exponential_gaps() {
        let stamps = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let cfg = crate::runner::RunConfig {
            jobs: 1,
            runtime: Some(Duration::from_secs(3)),
            depth: 1,
            batch: 1,
            pacing: PacingPlan {
                rate_iops: [100, 0],
                ..plan([0, 0], true)
            },
            ..Default::default()
        };
        let stop = std::sync::atomic::AtomicBool::new(false);
        let s2 = stamps.clone();
        let out = crate::runner::run(
            &cfg,
            &stop,
            &crate::runner::Progress::new(false, "t", None),
            move |_| {
                Ok((
                    Box::new(crate::engine::NullEngine) as Box<dyn Engine>,
                    Stamps(s2.clone()),
                ))
            },
        );
        let t = stamps.lock().unwrap().clone();
        let n = out.stats[OpKind::Read.idx()].lat.count;
        // 100 IOPS for 3 s, the count itself Poisson (sd ~17)
        assert!((230..=370).contains(&n), "{n} reads");
        // The gaps' distribution is poisson_gaps_are_exponential_with_the_rate_s_mean's
        // (the schedule, free of wake-up jitter). Here, on a wall clock that a busy
        // machine delays (CI once saw KS 0.12 over 293 gaps when a strict fit was
        // asked of the stamps), only what jitter cannot fake: the gaps vary as an
        // exponential's do (coefficient of variation 1; a fixed grid's is ~0, and
        // late wake-ups that catch up only add to it) around the rate's mean.
        let gaps: Vec<f64> = t.windows(2).map(|w| ns(w[1] - w[0]) as f64 / 1000.0).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!(sd / mean > 0.6, "gaps of mean {mean} µs and sd {sd}: not exponential");
        assert!((7_000.0..14_000.0).contains(&mean), "mean gap {mean} µs, not 10 ms");
    }
}
