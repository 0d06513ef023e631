//! Per-second time series, merged across workers while the run goes on.
//!
//! A per-second p99 across all workers can't be derived from per-worker p99s,
//! so workers hand their interval histograms to this collector at each second
//! boundary (one short lock per worker per second, never per operation). A
//! second is summarised, and its histograms dropped, as soon as every worker has
//! passed it: memory stays flat however long the run is.

use super::{KindStats, LatStats, OpKind, KINDS};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::sync::Mutex;

/// One direction during one interval.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct IntervalDir {
    pub ops: u64,
    pub bytes: u64,
    pub mean_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

/// One interval of the series: `t_s` is the second since measurement started;
/// one entry per kind of operation that had any ("read", "write", ...).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct IntervalPoint {
    pub t_s: u64,
    #[serde(flatten)]
    pub kinds: BTreeMap<OpKind, IntervalDir>,
}

impl IntervalPoint {
    /// The interval's figures for kind `d` (zeros when it had none).
    pub fn dir(&self, d: OpKind) -> IntervalDir {
        self.kinds.get(&d).cloned().unwrap_or_default()
    }
}

/// One worker's stats for one interval.
#[derive(Clone, Debug, Default)]
pub struct IntervalStats {
    pub lat: [LatStats; KINDS],
    pub bytes: [u64; KINDS],
}

/// Derives a worker's interval stats by differencing its cumulative stats at
/// each boundary. The hot path then records each latency once (plus one
/// compare for the interval's exact maximum) instead of into two histograms.
#[derive(Debug, Default)]
pub struct IntervalTracker {
    prev: [LatStats; KINDS],
    prev_bytes: [u64; KINDS],
    max: [u64; KINDS],
    cur: IntervalStats,
}

impl IntervalTracker {
    /// Notes one successful operation's latency (for the interval maximum).
    #[inline]
    pub fn note(&mut self, d: OpKind, ns: u64) {
        let m = &mut self.max[d.idx()];
        if ns > *m {
            *m = ns;
        }
    }

    /// The interval since the last call, given the worker's cumulative stats.
    pub fn take(&mut self, total: &KindStats) -> &mut IntervalStats {
        for d in OpKind::ALL {
            let i = d.idx();
            let (t, p) = (&total[i].lat, &mut self.prev[i]);
            let l = &mut self.cur.lat[i];
            // reset + add reuse the histograms' allocations: nothing is
            // allocated per interval, so memory stays flat over long runs.
            l.hist.reset();
            if t.count > p.count {
                l.hist.add(&t.hist);
                l.hist.subtract(&p.hist);
                p.hist.reset();
                p.hist.add(&t.hist);
            }
            l.count = t.count - p.count;
            l.sum_ns = t.sum_ns - p.sum_ns;
            l.sum_sq_ns = t.sum_sq_ns - p.sum_sq_ns;
            l.min_ns = l.hist.min();
            l.max_ns = self.max[i];
            (p.count, p.sum_ns, p.sum_sq_ns) = (t.count, t.sum_ns, t.sum_sq_ns);
            self.cur.bytes[i] = total[i].bytes - self.prev_bytes[i];
            self.prev_bytes[i] = total[i].bytes;
            self.max[i] = 0;
        }
        &mut self.cur
    }
}

impl IntervalStats {
    /// Records one operation directly (tests and callers without cumulative stats).
    pub fn record(&mut self, d: OpKind, ns: u64, bytes: u64) {
        self.lat[d.idx()].record(ns);
        self.bytes[d.idx()] += bytes;
    }

    fn is_empty(&self) -> bool {
        self.lat.iter().all(|l| l.count == 0)
    }

    fn reset(&mut self) {
        for l in &mut self.lat {
            if l.count > 0 {
                let mut h = std::mem::take(&mut l.hist);
                h.reset();
                *l = LatStats {
                    hist: h,
                    ..Default::default()
                };
            }
        }
        self.bytes = [0; KINDS];
    }

    fn add(&mut self, o: &IntervalStats) {
        for i in 0..KINDS {
            self.lat[i] += &o.lat[i];
            self.bytes[i] += o.bytes[i];
        }
    }

    fn summarise(&self, t_s: u64) -> IntervalPoint {
        let mut p = IntervalPoint {
            t_s,
            ..Default::default()
        };
        for d in OpKind::ALL {
            let l = &self.lat[d.idx()];
            if l.count > 0 {
                p.kinds.insert(
                    d,
                    IntervalDir {
                        ops: l.count,
                        bytes: self.bytes[d.idx()],
                        mean_ns: l.mean_ns() as u64,
                        p99_ns: l.percentile(99.0),
                        max_ns: l.max_ns,
                    },
                );
            }
        }
        p
    }
}

struct Inner {
    /// Second index of `pending[0]`.
    first: u64,
    pending: VecDeque<Option<IntervalStats>>,
    /// Per worker: the first second it has not yet handed in.
    next_of: Vec<u64>,
    done: Vec<IntervalPoint>,
}

/// Collects per-second interval stats from all workers of a run.
pub struct SeriesCollector {
    inner: Mutex<Inner>,
}

impl SeriesCollector {
    pub fn new(workers: usize) -> Self {
        SeriesCollector {
            inner: Mutex::new(Inner {
                first: 0,
                pending: VecDeque::new(),
                next_of: vec![0; workers],
                done: Vec::new(),
            }),
        }
    }

    /// Worker `w` hands in its stats for second `t_s` and resets them. Seconds it
    /// skipped (an operation that took several seconds) count as empty.
    pub fn flush(&self, w: usize, t_s: u64, stats: &mut IntervalStats) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if t_s >= g.first && !stats.is_empty() {
            let i = (t_s - g.first) as usize;
            if g.pending.len() <= i {
                g.pending.resize(i + 1, None);
            }
            match &mut g.pending[i] {
                Some(s) => s.add(stats),
                slot @ None => *slot = Some(stats.clone()),
            }
        }
        stats.reset();
        g.next_of[w] = g.next_of[w].max(t_s + 1);
        Self::settle(&mut g);
    }

    /// Worker `w` has stopped: it will hand in nothing more.
    pub fn finish(&self, w: usize) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.next_of[w] = u64::MAX;
        Self::settle(&mut g);
    }

    fn settle(g: &mut Inner) {
        let upto = g.next_of.iter().copied().min().unwrap_or(u64::MAX);
        while g.first < upto && !g.pending.is_empty() {
            let t = g.first;
            let slot = g.pending.pop_front().flatten();
            let point = match slot {
                Some(s) => s.summarise(t),
                None => IntervalPoint {
                    t_s: t,
                    ..Default::default()
                },
            };
            g.done.push(point);
            g.first += 1;
        }
        if g.pending.is_empty() && upto != u64::MAX {
            g.first = g.first.max(upto);
        }
    }

    /// The finished series (call after every worker finished).
    pub fn into_points(self) -> Vec<IntervalPoint> {
        let g = self.inner.into_inner().unwrap_or_else(|e| e.into_inner());
        g.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_workers_per_second_and_fills_gaps() {
        let c = SeriesCollector::new(2);
        let mut a = IntervalStats::default();
        let mut b = IntervalStats::default();
        a.record(OpKind::Read, 100, 4096);
        b.record(OpKind::Read, 300, 4096);
        c.flush(0, 0, &mut a);
        c.flush(1, 0, &mut b);
        // worker 0 stalls through second 1 and reports at second 2
        a.record(OpKind::Write, 5_000_000_000, 4096);
        b.record(OpKind::Read, 200, 4096);
        c.flush(1, 1, &mut b);
        c.flush(0, 2, &mut a);
        c.finish(0);
        c.finish(1);
        let pts = c.into_points();
        assert_eq!(pts.len(), 3, "{pts:?}");
        assert_eq!(pts[0].dir(OpKind::Read).ops, 2);
        assert_eq!(pts[0].dir(OpKind::Read).bytes, 8192);
        assert_eq!(pts[0].dir(OpKind::Read).max_ns, 300);
        assert_eq!(pts[1].dir(OpKind::Read).ops, 1);
        assert_eq!(pts[2].dir(OpKind::Write).ops, 1);
        assert_eq!(pts[2].dir(OpKind::Write).max_ns, 5_000_000_000);
        assert!(
            !pts[1].kinds.contains_key(&OpKind::Write),
            "kinds without ops are left out"
        );
        assert_eq!(pts.iter().map(|p| p.t_s).collect::<Vec<_>>(), vec![0, 1, 2]);
    }

    #[test]
    fn tracker_differences_cumulative_stats() {
        let mut total: KindStats = Default::default();
        let mut tr = IntervalTracker::default();
        for v in [100, 200, 300] {
            total[0].record_ok(v, 10);
            tr.note(OpKind::Read, v);
        }
        let i = tr.take(&total).clone();
        assert_eq!((i.lat[0].count, i.bytes[0], i.lat[0].max_ns), (3, 30, 300));
        total[0].record_ok(50, 10);
        tr.note(OpKind::Read, 50);
        let i = tr.take(&total).clone();
        assert_eq!(
            (i.lat[0].count, i.bytes[0], i.lat[0].max_ns, i.lat[0].sum_ns),
            (1, 10, 50, 50)
        );
        assert_eq!(i.lat[0].hist.len(), 1);
        assert_eq!(i.lat[0].percentile(99.0), 50);
        assert_eq!(tr.take(&total).lat[0].count, 0);
    }
}
