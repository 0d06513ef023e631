//! fio's steady-state stop (steadystate.c), checked once a second on the
//! calling thread from the workers' progress counters: nothing of it runs
//! on a worker's path. Each check turns every running worker's operations
//! and bytes since the previous check into per-second figures (scaled by
//! the milliseconds between checks, as fio's `1000 * delta / rate_time`),
//! adds them up over the check's workers (one worker, or every worker of a
//! reporting group under group_reporting) and puts the sum in a ring of
//! `ss_dur` samples; once the ring is full, its slope or its largest
//! deviation from its mean is compared with the limit. When it is below,
//! the check's workers stop (fio's fio_mark_td_terminate).

use super::{Counter, Instant};
use crate::model::steady::SteadyState;
use crate::plan::fio::steady::{SteadyCriterion, SteadyMetric, SteadyPlan};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// A group's steady-state check (`RunConfig::steady`).
#[derive(Clone, Debug)]
pub struct SteadyCheck {
    pub plan: SteadyPlan,
    /// Some(id): one check over the workers of every group of the run with
    /// this id, in group order (fio's group_reporting); None: each worker
    /// is checked alone (each of fio's numjobs clones is a job of its own).
    pub shared: Option<usize>,
}

/// fio's steadystate_data: the window's samples and its running sums,
/// with fio's integer arithmetic (and its wrap-around).
#[derive(Debug)]
pub(crate) struct Ring {
    c: SteadyCriterion,
    dur: usize,
    iops: Vec<u64>,
    bw: Vec<u64>,
    head: usize,
    tail: usize,
    full: bool,
    sum_x: u64,
    sum_x_sq: u64,
    sum_y: u64,
    sum_xy: u64,
    oldest_y: u64,
    slope: f64,
    deviation: f64,
    criterion: f64,
    attained: bool,
}

impl Ring {
    pub(crate) fn new(p: &SteadyPlan) -> Self {
        let d = p.dur.max(1) as u64;
        Ring {
            c: p.criterion,
            dur: d as usize,
            iops: vec![0; d as usize],
            bw: vec![0; d as usize],
            head: 0,
            tail: 0,
            full: false,
            sum_x: d * (d - 1) / 2,
            sum_x_sq: (d - 1) * d * (2 * d - 1) / 6,
            sum_y: 0,
            sum_xy: 0,
            oldest_y: 0,
            slope: 0.0,
            deviation: 0.0,
            criterion: 0.0,
            attained: false,
        }
    }

    fn y(&self, i: usize) -> u64 {
        match self.c.metric {
            SteadyMetric::Iops => self.iops[i],
            SteadyMetric::Bw => self.bw[i],
        }
    }

    /// Adds one check's figures; true when steady state is attained.
    pub(crate) fn add(&mut self, iops: u64, bw: u64) -> bool {
        self.iops[self.tail] = iops;
        self.bw[self.tail] = bw;
        let filled = self.full || self.tail as i64 - self.head as i64 == self.dur as i64 - 1;
        if filled {
            let steady = if self.c.slope { self.slope() } else { self.deviation() };
            if steady {
                self.attained = true;
                return true;
            }
        }
        self.tail = (self.tail + 1) % self.dur;
        if self.tail <= self.head {
            self.head = (self.head + 1) % self.dur;
        }
        false
    }

    /// fio's steadystate_slope, once the ring is full.
    fn slope(&mut self) -> bool {
        let dur = self.dur as u64;
        let new = self.y(self.tail);
        if !self.full {
            self.sum_y = 0;
            for i in 0..self.dur {
                self.sum_y = self.sum_y.wrapping_add(self.y(i));
                let j = (self.head + i) % self.dur;
                self.sum_xy = self.sum_xy.wrapping_add((i as u64).wrapping_mul(self.y(j)));
            }
            self.full = true;
        } else {
            self.sum_y = self.sum_y.wrapping_sub(self.oldest_y).wrapping_add(new);
            self.sum_xy = self.sum_xy.wrapping_sub(self.sum_y).wrapping_add(dur.wrapping_mul(new));
        }
        self.oldest_y = self.y(self.head);
        // least squares with the samples one second apart, as fio assumes
        let (sx, n) = (self.sum_x as f64, dur as f64);
        self.slope = (self.sum_xy as f64 - sx * self.sum_y as f64 / n) / (self.sum_x_sq as f64 - sx * sx / n);
        self.criterion = if self.c.pct {
            // fio divides by the integer mean
            100.0 * self.slope / (self.sum_y / dur) as f64
        } else {
            self.slope
        };
        self.criterion.abs() < self.c.limit
    }

    /// fio's steadystate_deviation, once the ring is full.
    fn deviation(&mut self) -> bool {
        if !self.full {
            self.sum_y = (0..self.dur).fold(0u64, |s, i| s.wrapping_add(self.y(i)));
            self.full = true;
        } else {
            self.sum_y = self.sum_y.wrapping_sub(self.oldest_y).wrapping_add(self.y(self.tail));
        }
        self.oldest_y = self.y(self.head);
        let mean = self.sum_y as f64 / self.dur as f64;
        self.deviation = 0.0;
        for i in 0..self.dur {
            self.deviation = self.deviation.max((self.y(i) as f64 - mean).abs());
        }
        self.criterion = if self.c.pct {
            100.0 * self.deviation / mean
        } else {
            self.deviation
        };
        self.criterion < self.c.limit
    }

    /// What fio reports of it; `attained_at_ns` from the run's start.
    pub(crate) fn report(&self, attained_at_ns: Option<u64>) -> SteadyState {
        // fio's head is the oldest sample unless the full ring moved on
        // after its last check, when it is the second oldest
        let j = if self.attained || !self.full {
            self.head
        } else {
            (self.head + self.dur - 1) % self.dur
        };
        let order: Vec<usize> = (0..self.dur).map(|l| (j + l) % self.dur).collect();
        let num = |x: f64| x.is_finite().then_some(x);
        SteadyState {
            criterion: self.c.name().to_string(),
            pct: self.c.pct,
            limit: self.c.limit,
            duration: self.dur as u32,
            attained: self.attained,
            attained_at_ns,
            value: num(self.criterion),
            max_deviation: num(self.deviation),
            slope: num(self.slope),
            iops: order.iter().map(|&k| self.iops[k]).collect(),
            bw: order.iter().map(|&k| self.bw[k]).collect(),
        }
    }
}

/// One worker of a check: what fio keeps per thread.
struct Member {
    /// (group, worker) among the run's.
    at: (usize, usize),
    /// When it was first seen measuring (fio's epoch, after the ramp).
    epoch: Option<Instant>,
    prev_time: Instant,
    prev_ops: u64,
    prev_bytes: u64,
    /// ss_ramp has passed (counted from `epoch`).
    ramp_over: bool,
}

/// One check: its workers, the last of which holds the ring (as fio's
/// last thread of a reporting group).
struct Unit {
    ring: Ring,
    ramp: Duration,
    members: Vec<Member>,
    attained_at: Option<Instant>,
}

/// Every steady-state check of a run of groups.
pub(super) struct Monitor {
    units: Vec<Unit>,
    t0: Instant,
    next: Instant,
}

impl Monitor {
    /// The checks of `checks` (each group's `RunConfig::steady` and its
    /// number of workers); None when no group has one.
    pub(super) fn new(checks: &[(Option<&SteadyCheck>, usize)], t0: Instant) -> Option<Self> {
        let mut units: Vec<Unit> = Vec::new();
        let mut shared: Vec<(usize, usize)> = Vec::new(); // (id, unit)
        for (g, (check, jobs)) in checks.iter().enumerate() {
            let Some(c) = check else { continue };
            for j in 0..*jobs {
                let m = Member {
                    at: (g, j),
                    epoch: None,
                    prev_time: t0,
                    prev_ops: 0,
                    prev_bytes: 0,
                    ramp_over: c.plan.ramp.is_zero(),
                };
                let unit = Unit {
                    ring: Ring::new(&c.plan),
                    ramp: c.plan.ramp,
                    members: Vec::new(),
                    attained_at: None,
                };
                let u = match c.shared {
                    None => {
                        units.push(unit);
                        units.len() - 1
                    }
                    Some(id) => match shared.iter().find(|(i, _)| *i == id) {
                        Some(&(_, u)) => u,
                        None => {
                            units.push(unit);
                            shared.push((id, units.len() - 1));
                            units.len() - 1
                        }
                    },
                };
                units[u].members.push(m);
            }
        }
        (!units.is_empty()).then(|| Monitor {
            units,
            t0,
            next: t0 + Duration::from_secs(1),
        })
    }

    /// Called every few milliseconds: notes workers that began measuring,
    /// and once a second checks. `finished(g, j)`: that worker has ended.
    pub(super) fn tick(&mut self, now: Instant, counters: &[&[Counter]], finished: &dyn Fn(usize, usize) -> bool) {
        let counter = |(g, j): (usize, usize)| &counters[g][j];
        for u in self.units.iter_mut().filter(|u| u.attained_at.is_none()) {
            for m in u.members.iter_mut().filter(|m| m.epoch.is_none()) {
                let c = counter(m.at);
                if c.measuring.load(Ordering::Relaxed) {
                    m.epoch = Some(now);
                    m.prev_time = now;
                    m.prev_ops = c.ops.load(Ordering::Relaxed);
                    m.prev_bytes = c.bytes.load(Ordering::Relaxed);
                }
            }
        }
        if now < self.next {
            return;
        }
        self.next += Duration::from_secs(1);
        if self.next <= now {
            // a late tick: the next check a second from this one
            self.next = now + Duration::from_secs(1);
        }
        for u in self.units.iter_mut().filter(|u| u.attained_at.is_none()) {
            if u.check(now, &counter, finished) {
                u.attained_at = Some(now);
                for m in &u.members {
                    counter(m.at).end.store(true, Ordering::Relaxed);
                }
            }
        }
    }

    /// Each check's result, with the worker (group, index) that reports it.
    pub(super) fn results(self) -> Vec<((usize, usize), SteadyState)> {
        let t0 = self.t0;
        self.units
            .into_iter()
            .filter_map(|u| {
                let at = u.members.last()?.at;
                let when = u.attained_at.map(|t| super::ns(t.saturating_duration_since(t0)));
                Some((at, u.ring.report(when)))
            })
            .collect()
    }
}

impl Unit {
    /// fio's steadystate_check for one unit; true when attained.
    fn check<'c>(
        &mut self,
        now: Instant,
        counter: &dyn Fn((usize, usize)) -> &'c Counter,
        finished: &dyn Fn(usize, usize) -> bool,
    ) -> bool {
        let (mut iops, mut bw, mut over) = (0u64, 0u64, 0usize);
        let last = self.members.len().saturating_sub(1);
        for (i, m) in self.members.iter_mut().enumerate() {
            // fio skips threads not yet running (or still ramping) and ended ones
            let Some(epoch) = m.epoch else { continue };
            if finished(m.at.0, m.at.1) {
                continue;
            }
            if !m.ramp_over && now.saturating_duration_since(epoch) >= self.ramp + Duration::from_secs(1) {
                m.ramp_over = true;
            }
            let c = counter(m.at);
            let (ops, bytes) = (c.ops.load(Ordering::Relaxed), c.bytes.load(Ordering::Relaxed));
            let rate_ms = now.saturating_duration_since(m.prev_time).as_millis() as u64;
            m.prev_time = now;
            if m.ramp_over && rate_ms > 0 {
                bw = bw.wrapping_add(1000 * bytes.wrapping_sub(m.prev_bytes) / rate_ms);
                iops = iops.wrapping_add(1000 * ops.wrapping_sub(m.prev_ops) / rate_ms);
                over += 1;
            }
            m.prev_ops = ops;
            m.prev_bytes = bytes;
            if i == last && over > 0 && self.ring.add(iops, bw) {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(metric: SteadyMetric, slope: bool, pct: bool, limit: f64, dur: u32) -> SteadyPlan {
        SteadyPlan {
            criterion: SteadyCriterion {
                metric,
                slope,
                pct,
                limit,
            },
            dur,
            ramp: Duration::ZERO,
        }
    }

    #[test]
    fn deviation_attains_once_the_window_is_full_and_within_the_limit() {
        let mut r = Ring::new(&plan(SteadyMetric::Iops, false, true, 5.0, 3));
        assert!(!r.add(499, 0));
        assert!(!r.add(501, 0));
        // full: mean 500, largest deviation 1 = 0.2 %
        assert!(r.add(500, 0));
        let s = r.report(Some(7));
        assert_eq!(s.iops, vec![499, 501, 500]);
        assert_eq!(s.max_deviation, Some(1.0));
        assert!((s.value.unwrap() - 0.2).abs() < 1e-9);
        assert_eq!(s.slope, Some(0.0));
        assert_eq!(s.iops_mean(), 500);
    }

    #[test]
    fn slope_slides_the_window_as_fio_does() {
        // rising by 10 a second: slope 10, never under 1
        let mut r = Ring::new(&plan(SteadyMetric::Bw, true, false, 1.0, 3));
        for k in 0..5u64 {
            assert!(!r.add(0, 100 + 10 * k));
        }
        let s = r.report(None);
        assert_eq!(s.bw, vec![120, 130, 140], "the last three, oldest first");
        assert_eq!(s.slope, Some(10.0));
        assert!(!s.attained);
        // then flat: the sliding sums give the exact slope of the window
        assert!(!r.add(0, 140));
        assert_eq!(r.slope, 5.0);
        assert!(r.add(0, 140), "slope 0 at 140, 140, 140");
        assert_eq!(r.report(None).bw, vec![140, 140, 140]);
    }

    #[test]
    fn a_one_second_slope_is_not_a_number_and_never_attains() {
        let mut r = Ring::new(&plan(SteadyMetric::Iops, true, false, 1e9, 1));
        assert!(!r.add(5, 0));
        assert!(!r.add(5, 0));
        assert_eq!(r.report(None).slope, None);
    }
}
