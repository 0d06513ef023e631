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
//! Every entry goes out as fio's text line at once, through a bounded
//! buffer (`SPOOL_BUF`) into an unnamed file beside the log's final path
//! (`LogSpec::spool_dir`): a per-I/O log of a null job makes millions of
//! entries a second (held in memory, 10 s of one took 2.86 GB and a
//! ulimit's SIGABRT), so a worker's memory stays flat however long it runs,
//! and a killed fslab leaves no spool behind. `app::fio::logs` copies the
//! spools into the final files when the segment ends.

use crate::stats::{Instant, OpKind};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Seek, Write};
use std::path::PathBuf;

/// Each log's buffer: what a worker holds of it at most before it goes to
/// the spool file.
pub const SPOOL_BUF: usize = 64 << 10;

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
    /// log_prio: the last column is the I/O's whole ioprio value (0x%04x)
    /// instead of whether its class is realtime (fio's iolog.c).
    pub prio: bool,
    /// Where the logs' spool files are made (unnamed): the directory of the
    /// job's first log file; None: the system's temporary directory.
    pub spool_dir: Option<PathBuf>,
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
    /// The I/O's priority (ioprio value); 0 in a window's entry.
    pub prio: u16,
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

/// The logs a worker can keep, in the order of `Recorded`'s files.
pub const KINDS: [&str; 6] = ["bw", "iops", "lat", "clat", "slat", "clat_hist"];
const BW: usize = 0;
const IOPS: usize = 1;
const LAT: usize = 2;
const HIST: usize = 5;

/// fio 3.33's lines: `time, value, direction, bs, prio`, with log_offset
/// `time, value, direction, bs, offset, prio` (fio's own output, checked).
/// The priority column is 1 for a realtime class (ioprio class 1), else
/// 0; with log_prio the whole ioprio value, as `0x%04x`.
pub fn sample_line(out: &mut String, s: &Sample, offset: bool, log_prio: bool) {
    let _ = if offset {
        write!(out, "{}, {}, {}, {}, {}, ", s.t_ms, s.val, s.dir, s.bs, s.offset)
    } else {
        write!(out, "{}, {}, {}, {}, ", s.t_ms, s.val, s.dir, s.bs)
    };
    let _ = if log_prio {
        writeln!(out, "0x{:04x}", s.prio)
    } else {
        writeln!(out, "{}", u8::from(s.prio >> 13 == 1))
    };
}

/// fio's histogram line: `time, direction, bs`, then the count of each of
/// fio's 1856 bins.
pub fn hist_line(out: &mut String, h: &HistRow) {
    let _ = write!(out, "{}, {}, {}", h.t_ms, h.dir, h.bs);
    let mut next = 0usize;
    for &(i, c) in &h.bins {
        for _ in next..i as usize {
            out.push_str(", 0");
        }
        let _ = write!(out, ", {c}");
        next = i as usize + 1;
    }
    for _ in next..PLAT_NR {
        out.push_str(", 0");
    }
    out.push('\n');
}

/// One log on its way to disk.
struct Spool {
    w: BufWriter<File>,
}

/// What one worker logged: each kind's text in its spool file (None: not
/// kept), and the first error that stopped a spool (ENOSPC...).
#[derive(Debug, Default)]
pub struct Recorded {
    files: [Option<File>; 6],
    pub error: Option<String>,
}

impl Recorded {
    /// Copies log `kind`'s text (fio's format) to `out`; nothing for a log
    /// not kept. Streams: the log is never read whole into memory.
    pub fn copy_to(&self, kind: &str, out: &mut dyn Write) -> std::io::Result<u64> {
        let Some(mut f) = KINDS
            .iter()
            .position(|k| *k == kind)
            .and_then(|i| self.files[i].as_ref())
        else {
            return Ok(0);
        };
        f.rewind()?;
        std::io::copy(&mut f, out)
    }

    /// Log `kind`'s whole text (tests, small logs).
    pub fn text(&self, kind: &str) -> String {
        let mut v = Vec::new();
        let _ = self.copy_to(kind, &mut v);
        String::from_utf8_lossy(&v).into_owned()
    }
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
    /// Each kept log's spool (`KINDS` order).
    spools: [Option<Spool>; 6],
    /// The line being made.
    line: String,
    /// The first spool error (the log it hit is no longer kept).
    error: Option<String>,
    /// lat, clat, slat windows per direction.
    win: [[Window; 3]; 3],
    /// bw/iops window: its end, bytes and I/Os per direction.
    rate_end: u64,
    rate_bytes: [u64; 3],
    rate_ios: [u64; 3],
    /// clat histogram window per direction.
    hist: [Vec<u64>; 3],
    hist_last: [u64; 3],
    hist_bs: [u64; 3],
    /// The offset of the operation `record` saw last (`split` follows it).
    last_offset: u64,
    /// The last I/O's priority, for its latency entries.
    last_prio: u16,
}

fn dir_of(d: OpKind) -> Option<usize> {
    match d {
        OpKind::Read => Some(0),
        OpKind::Write => Some(1),
        OpKind::Trim => Some(2),
        _ => None,
    }
}

impl OpLog {
    /// A worker's log, measured from `start` (the end of the ramp).
    pub fn new(spec: &LogSpec, start: Instant, split: bool) -> Self {
        let hist = spec.hist && spec.hist_ms > 0;
        let kept = [spec.bw, spec.iops, spec.lat, spec.lat, spec.lat, hist];
        let mut log = OpLog {
            spec: spec.clone(),
            start,
            split,
            spools: Default::default(),
            line: String::with_capacity(256),
            error: None,
            win: Default::default(),
            rate_end: spec.avg_ms,
            rate_bytes: [0; 3],
            rate_ios: [0; 3],
            hist: if hist {
                [vec![0; PLAT_NR], vec![0; PLAT_NR], vec![0; PLAT_NR]]
            } else {
                [Vec::new(), Vec::new(), Vec::new()]
            },
            hist_last: [0; 3],
            hist_bs: [0; 3],
            last_offset: 0,
            last_prio: 0,
        };
        let dir = spec.spool_dir.clone().unwrap_or_else(std::env::temp_dir);
        for (k, keep) in kept.into_iter().enumerate() {
            if !keep {
                continue;
            }
            match crate::plan::unnamed_file_in(&dir) {
                Ok(f) => {
                    log.spools[k] = Some(Spool {
                        w: BufWriter::with_capacity(SPOOL_BUF, f),
                    })
                }
                Err(e) => log.fail(k, format!("{}: a file for the {} log: {e}", dir.display(), KINDS[k])),
            }
        }
        log
    }

    /// Log `k` cannot go on: it is no longer kept, the first error is told.
    #[cold]
    fn fail(&mut self, k: usize, e: String) {
        self.spools[k] = None;
        self.error.get_or_insert(e);
    }

    /// One entry of log `k` (lat 2, clat 3, slat 4), as fio's line.
    #[inline]
    fn push(&mut self, k: usize, s: Sample) {
        let Some(sp) = &mut self.spools[k] else { return };
        self.line.clear();
        sample_line(&mut self.line, &s, self.spec.offset, self.spec.prio);
        if let Err(e) = sp.w.write_all(self.line.as_bytes()) {
            self.fail(k, format!("writing the {} log: {e}", KINDS[k]));
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
                prio: self.last_prio,
            };
            self.push(LAT + k, s);
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
            prio: 0,
        };
        *w = Window {
            last_ms: t_ms - t_ms % avg,
            ..Default::default()
        };
        self.push_lat(k, s);
    }

    fn push_lat(&mut self, k: usize, s: Sample) {
        self.push(LAT + k, s);
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
        for d in 0..3 {
            if self.rate_ios[d] == 0 {
                continue;
            }
            if self.spec.bw {
                self.push(
                    BW,
                    Sample {
                        t_ms: at,
                        val: self.rate_bytes[d] * 1000 / spent / 1024,
                        dir: d as u8,
                        bs: 0,
                        offset: 0,
                        prio: 0,
                    },
                );
            }
            if self.spec.iops {
                self.push(
                    IOPS,
                    Sample {
                        t_ms: at,
                        val: self.rate_ios[d] * 1000 / spent,
                        dir: d as u8,
                        bs: 0,
                        offset: 0,
                        prio: 0,
                    },
                );
            }
        }
        self.rate_bytes = [0; 3];
        self.rate_ios = [0; 3];
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
        let row = HistRow {
            t_ms,
            dir: d as u8,
            bs: self.hist_bs[d],
            bins,
        };
        let Some(sp) = &mut self.spools[HIST] else { return };
        self.line.clear();
        hist_line(&mut self.line, &row);
        if let Err(e) = sp.w.write_all(self.line.as_bytes()) {
            self.fail(HIST, format!("writing the clat_hist log: {e}"));
        }
    }

    /// A completed operation: `result` bytes (or a negated errno), total
    /// latency `lat` ns, completed at `end`.
    #[inline(never)]
    pub fn record(&mut self, dir: OpKind, result: i64, (offset, prio): (u64, u16), lat: u64, end: Instant) {
        let Some(d) = dir_of(dir) else { return };
        if result < 0 {
            return;
        }
        self.last_offset = offset;
        self.last_prio = prio;
        let bs = result as u64;
        let t = self.ms(end);
        if self.spec.avg_ms == 0 {
            if self.spec.bw {
                // fio's per-I/O bandwidth: bytes / latency, in KiB/s as fio counts it
                let val = bs.saturating_mul(1_000_000).checked_div(lat).unwrap_or(0);
                self.push(
                    BW,
                    Sample {
                        t_ms: t,
                        val,
                        dir: d as u8,
                        bs,
                        offset,
                        prio: self.last_prio,
                    },
                );
            }
            if self.spec.iops {
                self.push(
                    IOPS,
                    Sample {
                        t_ms: t,
                        val: 1,
                        dir: d as u8,
                        bs,
                        offset,
                        prio: self.last_prio,
                    },
                );
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
                for d in 0..3 {
                    let w = self.win[k][d];
                    if w.n > 0 {
                        let s = Sample {
                            t_ms: t,
                            val: w.value(self.spec.max_value),
                            dir: d as u8,
                            bs: 0,
                            offset: 0,
                            prio: 0,
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
        // each log's entries are in the order they were made, as fio's:
        // completion order, so time order
        let mut out = Recorded::default();
        for (k, kind) in KINDS.iter().enumerate() {
            let Some(sp) = self.spools[k].take() else { continue };
            match sp.w.into_inner() {
                Ok(f) => out.files[k] = Some(f),
                Err(e) => self.fail(k, format!("writing the {kind} log: {}", e.error())),
            }
        }
        out.error = self.error;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Log `kind`'s entries, read back from its spool's fio lines.
    fn entries(r: &Recorded, kind: &str, offset: bool) -> Vec<Sample> {
        r.text(kind)
            .lines()
            .map(|l| {
                let v: Vec<u64> = l.split(", ").map(|x| x.parse().unwrap()).collect();
                assert_eq!(v.len(), if offset { 6 } else { 5 }, "{l}");
                Sample {
                    t_ms: v[0],
                    val: v[1],
                    dir: v[2] as u8,
                    bs: v[3],
                    offset: if offset { v[4] } else { 0 },
                    prio: 0,
                }
            })
            .collect()
    }

    #[test]
    fn lines_are_fios() {
        let s = Sample {
            t_ms: 86,
            val: 47,
            dir: 0,
            bs: 4096,
            offset: 12288,
            prio: 0,
        };
        let mut l = String::new();
        sample_line(&mut l, &s, false, false);
        assert_eq!(l, "86, 47, 0, 4096, 0\n");
        l.clear();
        sample_line(&mut l, &s, true, false);
        assert_eq!(l, "86, 47, 0, 4096, 12288, 0\n");
        let mut h = String::new();
        hist_line(
            &mut h,
            &HistRow {
                t_ms: 186,
                dir: 0,
                bs: 4096,
                bins: vec![(1, 2), (1855, 3)],
            },
        );
        let cols: Vec<&str> = h.trim_end().split(", ").collect();
        assert_eq!(cols.len(), 3 + PLAT_NR);
        assert_eq!(&cols[..5], &["186", "0", "4096", "0", "2"]);
        assert_eq!(cols[3 + 1855], "3");
    }

    #[test]
    fn a_per_io_log_goes_to_its_spool_as_it_is_made() {
        let t0 = Instant::now();
        let d = tempfile::tempdir().unwrap();
        let spec = LogSpec {
            lat: true,
            spool_dir: Some(d.path().to_path_buf()),
            ..Default::default()
        };
        let mut l = OpLog::new(&spec, t0, false);
        // the spools have no name: nothing in the directory, even while running
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
        let n = 20 * SPOOL_BUF as u64;
        for i in 0..n {
            l.record(OpKind::Read, 4096, (0, 0), 1_000 + i, t0);
        }
        // far more lines than a buffer holds went out: the buffers stay bounded
        let on_disk = |sp: &Option<Spool>| sp.as_ref().map_or(0, |s| s.w.get_ref().metadata().unwrap().len());
        assert!(on_disk(&l.spools[LAT]) > 10 * SPOOL_BUF as u64);
        assert!(l.spools.iter().flatten().all(|s| s.w.capacity() == SPOOL_BUF));
        let r = l.finish(t0);
        assert!(r.error.is_none());
        let lat = entries(&r, "lat", false);
        assert_eq!(lat.len() as u64, n);
        assert_eq!(lat[n as usize - 1].val, 1_000 + n - 1);
        assert_eq!(r.text("clat").lines().count() as u64, n);
        assert_eq!(r.text("bw"), "");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn per_io_entries_and_windows() {
        let t0 = Instant::now();
        let spec = LogSpec {
            bw: true,
            iops: true,
            lat: true,
            offset: true,
            ..Default::default()
        };
        let mut l = OpLog::new(&spec, t0, false);
        l.record(OpKind::Read, 4096, (8192, 0), 1_000_000, t0 + Duration::from_millis(3));
        l.record(OpKind::Fsync, 0, (0, 0), 1_000, t0 + Duration::from_millis(4));
        let r = l.finish(t0 + Duration::from_millis(5));
        let (bw, iops, lat, clat, slat) = (
            entries(&r, "bw", true),
            entries(&r, "iops", true),
            entries(&r, "lat", true),
            entries(&r, "clat", true),
            entries(&r, "slat", true),
        );
        assert_eq!(
            bw,
            vec![Sample {
                t_ms: 3,
                val: 4096,
                dir: 0,
                bs: 4096,
                offset: 8192,
                prio: 0,
            }]
        );
        assert_eq!(iops[0].val, 1);
        assert_eq!(lat.len(), 1);
        assert_eq!(clat[0].val, 1_000_000);
        // every per-I/O entry carries the I/O's offset
        assert!([&iops, &lat, &clat].iter().all(|v| v[0].offset == 8192));
        assert!(slat.is_empty());

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
            l.record(
                OpKind::Write,
                4096,
                (i * 4096, 0),
                10_000,
                t0 + Duration::from_millis(i),
            );
        }
        let r = l.finish(t0 + Duration::from_millis(300));
        let (bw, iops, lat) = (
            entries(&r, "bw", false),
            entries(&r, "iops", false),
            entries(&r, "lat", false),
        );
        let times: Vec<u64> = iops.iter().map(|s| s.t_ms).collect();
        assert_eq!(times, vec![100, 200, 300]);
        assert_eq!(iops[0].val, 1000);
        assert_eq!(bw[0].val, 4000);
        // a window's entry has no block size, as fio's
        assert!(lat.iter().all(|s| s.val == 10_000 && s.bs == 0 && s.dir == 1));
        assert_eq!(lat[0].t_ms, 100);
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
            l.record(OpKind::Read, 4096, (0, 0), 2_000, t0 + Duration::from_millis(i));
            l.split(OpKind::Read, 4096, 100, 1_900, t0 + Duration::from_millis(i));
        }
        let r = l.finish(t0 + Duration::from_millis(201));
        // each line: time, direction, bs, then fio's bins' counts
        let rows: Vec<Vec<u64>> = r
            .text("clat_hist")
            .lines()
            .map(|l| l.split(", ").map(|x| x.parse().unwrap()).collect())
            .collect();
        assert!(rows.len() >= 3);
        assert!(rows.iter().all(|r| r.len() == 3 + PLAT_NR));
        let total: u64 = rows.iter().flat_map(|r| r[3..].iter()).sum();
        assert!((150..=200).contains(&total));
        let first: Vec<(usize, u64)> = rows[0][3..]
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| (i, *c))
            .collect();
        assert_eq!(first, vec![(plat_val_to_idx(1_900), 51)]);
    }
}
