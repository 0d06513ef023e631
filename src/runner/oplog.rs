//! fio's per-job logs (write_bw_log, write_lat_log, write_iops_log,
//! write_hist_log): what a worker records beside its statistics when a log
//! is asked for. Without one nothing here runs on the hot path (the
//! recorder's one `Option` test).
//!
//! As fio 3.33 (stat.c add_log_sample, add_clat_sample, __add_samples):
//! - without log_avg_msec every read and write is one entry (time in ms
//!   since measurement started, value, direction, bytes, offset);
//! - with log_avg_msec the latency logs keep, per direction, the mean (or
//!   with log_max_value the maximum) of a window, written when a sample
//!   arrives `avg` ms or more after the window began (at that sample's
//!   time; the next window starts at the last multiple of `avg`); the bw
//!   and iops logs are the window's bytes and I/Os per second, at the
//!   window's end; block size and offset are 0;
//! - with log_hist_msec the completion-latency histogram of each window
//!   (fio's 1856 bins), per direction.
//!
//! So memory grows per I/O only where fio's would (a per-I/O log).

use crate::stats::{Instant, OpKind};

/// Which logs a group's workers keep, and how they average. `Default`: none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogSpec {
    pub bw: bool,
    pub iops: bool,
    /// The lat, clat and slat logs.
    pub lat: bool,
    /// The clat histogram log (only with `hist_ms`).
    pub hist: bool,
    /// log_avg_msec; 0 = per I/O.
    pub avg_ms: u64,
    pub max_value: bool,
    /// log_hist_msec; 0 = no histogram entries.
    pub hist_ms: u64,
    /// log_offset: per-I/O entries carry their file offset (written as
    /// fio's fifth column).
    pub offset: bool,
}

impl LogSpec {
    /// True when no log is asked for.
    pub fn is_off(&self) -> bool {
        !(self.bw || self.iops || self.lat || (self.hist && self.hist_ms > 0))
    }
}

/// One log entry: fio's `time, value, direction, block size[, offset]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    pub t_ms: u64,
    pub val: u64,
    /// 0 read, 1 write.
    pub dir: u8,
    pub bs: u64,
    /// The I/O's file offset; 0 in a window's entry (as fio's).
    pub offset: u64,
}

/// One histogram entry: the window's clat counts per fio bin (sparse).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HistRow {
    pub t_ms: u64,
    pub dir: u8,
    pub bs: u64,
    /// (fio bin index, count), index ascending.
    pub bins: Vec<(u16, u64)>,
}

/// What one worker logged.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recorded {
    pub bw: Vec<Sample>,
    pub iops: Vec<Sample>,
    pub lat: Vec<Sample>,
    pub clat: Vec<Sample>,
    pub slat: Vec<Sample>,
    pub hist: Vec<HistRow>,
    /// log_offset: the files get the offset column.
    pub offset: bool,
}

pub use crate::stats::plat::{plat_idx_to_val, plat_val_to_idx, PLAT_NR};

/// A latency log's window for one direction.
#[derive(Clone, Copy, Debug, Default)]
struct Window {
    sum: u128,
    n: u64,
    max: u64,
    last_ms: u64,
}

impl Window {
    fn value(&self, max_value: bool) -> u64 {
        if max_value {
            self.max
        } else if self.n > 0 {
            (self.sum / self.n as u128) as u64
        } else {
            0
        }
    }
}

/// A worker's logs while it runs.
pub struct OpLog {
    spec: LogSpec,
    start: Instant,
    /// The engine splits slat/clat (they come through `split`); else clat = lat.
    split: bool,
    out: Recorded,
    /// lat, clat, slat windows per direction.
    win: [[Window; 2]; 3],
    /// bw/iops window: its end, bytes and I/Os per direction.
    rate_end: u64,
    rate_bytes: [u64; 2],
    rate_ios: [u64; 2],
    /// clat histogram window per direction.
    hist: [Vec<u64>; 2],
    hist_last: [u64; 2],
    hist_bs: [u64; 2],
    /// The offset of the operation `record` saw last (`split` follows it).
    last_offset: u64,
}

fn dir_of(d: OpKind) -> Option<usize> {
    match d {
        OpKind::Read => Some(0),
        OpKind::Write => Some(1),
        _ => None,
    }
}

impl OpLog {
    /// A worker's log, measured from `start` (the end of the ramp).
    pub fn new(spec: &LogSpec, start: Instant, split: bool) -> Self {
        let hist = spec.hist && spec.hist_ms > 0;
        OpLog {
            spec: spec.clone(),
            start,
            split,
            out: Recorded {
                offset: spec.offset,
                ..Default::default()
            },
            win: Default::default(),
            rate_end: spec.avg_ms,
            rate_bytes: [0; 2],
            rate_ios: [0; 2],
            hist: if hist {
                [vec![0; PLAT_NR], vec![0; PLAT_NR]]
            } else {
                [Vec::new(), Vec::new()]
            },
            hist_last: [0; 2],
            hist_bs: [0; 2],
            last_offset: 0,
        }
    }

    fn ms(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.start).as_millis() as u64
    }

    /// A latency sample of log `k` (0 lat, 1 clat, 2 slat).
    fn lat_sample(&mut self, k: usize, d: usize, t_ms: u64, ns: u64, bs: u64) {
        let avg = self.spec.avg_ms;
        if avg == 0 {
            let s = Sample {
                t_ms,
                val: ns,
                dir: d as u8,
                bs,
                offset: self.last_offset,
            };
            match k {
                0 => self.out.lat.push(s),
                1 => self.out.clat.push(s),
                _ => self.out.slat.push(s),
            }
            return;
        }
        let w = &mut self.win[k][d];
        w.sum += ns as u128;
        w.n += 1;
        w.max = w.max.max(ns);
        if t_ms < w.last_ms || t_ms - w.last_ms < avg {
            return;
        }
        let s = Sample {
            t_ms,
            val: w.value(self.spec.max_value),
            dir: d as u8,
            bs: 0,
            offset: 0,
        };
        *w = Window {
            last_ms: t_ms - t_ms % avg,
            ..Default::default()
        };
        self.push_lat(k, s);
    }

    fn push_lat(&mut self, k: usize, s: Sample) {
        match k {
            0 => self.out.lat.push(s),
            1 => self.out.clat.push(s),
            _ => self.out.slat.push(s),
        }
    }

    /// The bw and iops entries of the windows that ended by `t_ms`.
    fn rate_windows(&mut self, t_ms: u64) {
        let avg = self.spec.avg_ms;
        if t_ms >= self.rate_end {
            let at = self.rate_end;
            self.emit_rate(at, avg);
            // idle windows have no entries: the next is the one `t_ms` is in
            self.rate_end = t_ms - t_ms % avg + avg;
        }
    }

    fn emit_rate(&mut self, at: u64, spent: u64) {
        let spent = spent.max(1);
        for d in 0..2 {
            if self.rate_ios[d] == 0 {
                continue;
            }
            if self.spec.bw {
                self.out.bw.push(Sample {
                    t_ms: at,
                    val: self.rate_bytes[d] * 1000 / spent / 1024,
                    dir: d as u8,
                    bs: 0,
                    offset: 0,
                });
            }
            if self.spec.iops {
                self.out.iops.push(Sample {
                    t_ms: at,
                    val: self.rate_ios[d] * 1000 / spent,
                    dir: d as u8,
                    bs: 0,
                    offset: 0,
                });
            }
        }
        self.rate_bytes = [0; 2];
        self.rate_ios = [0; 2];
    }

    fn clat_sample(&mut self, d: usize, t_ms: u64, ns: u64, bs: u64) {
        if self.spec.lat {
            self.lat_sample(1, d, t_ms, ns, bs);
        }
        if self.hist[d].is_empty() {
            return;
        }
        self.hist[d][plat_val_to_idx(ns)] += 1;
        self.hist_bs[d] = bs;
        if self.hist_last[d] == 0 {
            self.hist_last[d] = t_ms;
        }
        let window = t_ms.saturating_sub(self.hist_last[d]);
        if window >= self.spec.hist_ms {
            self.emit_hist(d, t_ms);
            self.hist_last[d] = t_ms - (window - self.spec.hist_ms);
        }
    }

    fn emit_hist(&mut self, d: usize, t_ms: u64) {
        let bins: Vec<(u16, u64)> = self.hist[d]
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| (i as u16, *c))
            .collect();
        self.hist[d].iter_mut().for_each(|c| *c = 0);
        self.out.hist.push(HistRow {
            t_ms,
            dir: d as u8,
            bs: self.hist_bs[d],
            bins,
        });
    }

    /// A completed operation: `result` bytes (or a negated errno), total
    /// latency `lat` ns, completed at `end`.
    #[inline(never)]
    pub fn record(&mut self, dir: OpKind, result: i64, offset: u64, lat: u64, end: Instant) {
        let Some(d) = dir_of(dir) else { return };
        if result < 0 {
            return;
        }
        self.last_offset = offset;
        let bs = result as u64;
        let t = self.ms(end);
        if self.spec.avg_ms == 0 {
            if self.spec.bw {
                // fio's per-I/O bandwidth: bytes / latency, in KiB/s as fio counts it
                let val = bs.saturating_mul(1_000_000).checked_div(lat).unwrap_or(0);
                self.out.bw.push(Sample {
                    t_ms: t,
                    val,
                    dir: d as u8,
                    bs,
                    offset,
                });
            }
            if self.spec.iops {
                self.out.iops.push(Sample {
                    t_ms: t,
                    val: 1,
                    dir: d as u8,
                    bs,
                    offset,
                });
            }
        } else if self.spec.bw || self.spec.iops {
            self.rate_windows(t);
            self.rate_bytes[d] += bs;
            self.rate_ios[d] += 1;
        }
        if !self.split {
            self.clat_sample(d, t, lat, bs);
        }
        if self.spec.lat {
            self.lat_sample(0, d, t, lat, bs);
        }
    }

    /// The slat/clat split of a queued operation (after `record`).
    #[inline(never)]
    pub fn split(&mut self, dir: OpKind, result: i64, slat: u64, clat: u64, end: Instant) {
        let Some(d) = dir_of(dir) else { return };
        if result < 0 {
            return;
        }
        let t = self.ms(end);
        let bs = result as u64;
        if self.spec.lat {
            self.lat_sample(2, d, t, slat, bs);
        }
        self.clat_sample(d, t, clat, bs);
    }

    /// The log, with the open windows written at `end` (fio's finalize_logs).
    pub fn finish(mut self, end: Instant) -> Recorded {
        let t = self.ms(end);
        if self.spec.avg_ms > 0 {
            for k in 0..3 {
                for d in 0..2 {
                    let w = self.win[k][d];
                    if w.n > 0 {
                        let s = Sample {
                            t_ms: t,
                            val: w.value(self.spec.max_value),
                            dir: d as u8,
                            bs: 0,
                            offset: 0,
                        };
                        self.push_lat(k, s);
                    }
                }
            }
            if self.spec.bw || self.spec.iops {
                self.rate_windows(t);
                let begun = self.rate_end.saturating_sub(self.spec.avg_ms);
                if t > begun {
                    self.emit_rate(t, t - begun);
                }
            }
        }
        self.out.lat.sort_by_key(|s| s.t_ms);
        for k in [&mut self.out.clat, &mut self.out.slat] {
            k.sort_by_key(|s| s.t_ms);
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn per_io_entries_and_windows() {
        let t0 = Instant::now();
        let spec = LogSpec {
            bw: true,
            iops: true,
            lat: true,
            ..Default::default()
        };
        let mut l = OpLog::new(&spec, t0, false);
        l.record(OpKind::Read, 4096, 8192, 1_000_000, t0 + Duration::from_millis(3));
        l.record(OpKind::Fsync, 0, 0, 1_000, t0 + Duration::from_millis(4));
        let r = l.finish(t0 + Duration::from_millis(5));
        assert_eq!(
            r.bw,
            vec![Sample {
                t_ms: 3,
                val: 4096,
                dir: 0,
                bs: 4096,
                offset: 8192,
            }]
        );
        assert_eq!(r.iops[0].val, 1);
        assert_eq!(r.lat.len(), 1);
        assert_eq!(r.clat[0].val, 1_000_000);
        // every per-I/O entry carries the I/O's offset
        assert!([&r.iops, &r.lat, &r.clat].iter().all(|v| v[0].offset == 8192));
        assert!(r.slat.is_empty());

        let spec = LogSpec {
            bw: true,
            iops: true,
            lat: true,
            avg_ms: 100,
            ..Default::default()
        };
        let mut l = OpLog::new(&spec, t0, false);
        for i in 0..300u64 {
            // 1 ms apart, 4 KiB writes of 10 us
            l.record(OpKind::Write, 4096, i * 4096, 10_000, t0 + Duration::from_millis(i));
        }
        let r = l.finish(t0 + Duration::from_millis(300));
        let times: Vec<u64> = r.iops.iter().map(|s| s.t_ms).collect();
        assert_eq!(times, vec![100, 200, 300]);
        assert_eq!(r.iops[0].val, 1000);
        assert_eq!(r.bw[0].val, 4000);
        // a window's entry has neither block size nor offset, as fio's
        assert!(r
            .lat
            .iter()
            .all(|s| s.val == 10_000 && s.bs == 0 && s.dir == 1 && s.offset == 0));
        assert!(r.bw.iter().chain(&r.iops).all(|s| s.offset == 0));
        assert_eq!(r.lat[0].t_ms, 100);
    }

    #[test]
    fn hist_windows_hold_their_own_counts() {
        let t0 = Instant::now();
        let spec = LogSpec {
            hist: true,
            hist_ms: 50,
            ..Default::default()
        };
        let mut l = OpLog::new(&spec, t0, true);
        for i in 1..=200u64 {
            l.record(OpKind::Read, 4096, 0, 2_000, t0 + Duration::from_millis(i));
            l.split(OpKind::Read, 4096, 100, 1_900, t0 + Duration::from_millis(i));
        }
        let r = l.finish(t0 + Duration::from_millis(201));
        assert!(r.hist.len() >= 3);
        let total: u64 = r.hist.iter().flat_map(|h| h.bins.iter().map(|b| b.1)).sum();
        assert!((150..=200).contains(&total));
        assert_eq!(r.hist[0].bins, vec![(plat_val_to_idx(1_900) as u16, 51)]);
    }
}
