//! `/sys/block/X/stat` and the `iostat -x` figures computed from two
//! readings, as sysstat computes them (rd_stats.c `compute_ext_disk_stats`,
//! iostat.c `compute_ext_disk_stats`/`write_ext_stat`):
//!
//! - r/s, w/s, d/s, f/s, rrqm/s, wrqm/s: counter delta / interval;
//! - rMB/s, wMB/s, dMB/s: sectors (512 bytes) delta / 2048 / interval;
//! - r_await, w_await, d_await, f_await: ticks delta / completed delta (ms),
//!   0 without completions;
//! - rareq-sz, wareq-sz: sectors delta / completed delta / 2 (KiB);
//! - aqu-sz: time-in-queue delta (ms) / interval (ms);
//! - %util: io_ticks delta (ms) / interval (ms) × 100, 0 when the counter
//!   went back (sysstat's guard), at most 100 as iostat prints it.
//!
//! The interval is the caller's measured wall time (sysstat uses the uptime
//! difference, the same clock at a coarser grain).

use crate::model::system::IostatPoint;

/// One reading of `/sys/block/X/stat` (Documentation/block/stat.rst): 11
/// fields before Linux 4.18, 15 with discards, 17 with flushes (5.5).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskStat {
    pub rd_ios: u64,
    pub rd_merges: u64,
    pub rd_sectors: u64,
    pub rd_ticks: u64,
    pub wr_ios: u64,
    pub wr_merges: u64,
    pub wr_sectors: u64,
    pub wr_ticks: u64,
    pub in_flight: u64,
    pub io_ticks: u64,
    pub time_in_queue: u64,
    pub dc_ios: u64,
    pub dc_merges: u64,
    pub dc_sectors: u64,
    pub dc_ticks: u64,
    pub fl_ios: u64,
    pub fl_ticks: u64,
}

impl DiskStat {
    /// Parses the file's text; None unless it has at least 11 numbers.
    pub fn parse(text: &str) -> Option<DiskStat> {
        let v: Vec<u64> = text
            .split_whitespace()
            .map(|f| f.parse::<u64>())
            .collect::<Result<_, _>>()
            .ok()?;
        if v.len() < 11 {
            return None;
        }
        let g = |i: usize| v.get(i).copied().unwrap_or(0);
        Some(DiskStat {
            rd_ios: g(0),
            rd_merges: g(1),
            rd_sectors: g(2),
            rd_ticks: g(3),
            wr_ios: g(4),
            wr_merges: g(5),
            wr_sectors: g(6),
            wr_ticks: g(7),
            in_flight: g(8),
            io_ticks: g(9),
            time_in_queue: g(10),
            dc_ios: g(11),
            dc_merges: g(12),
            dc_sectors: g(13),
            dc_ticks: g(14),
            fl_ios: g(15),
            fl_ticks: g(16),
        })
    }

    /// Reads `/sys/block/<name>/stat`.
    pub fn read(name: &str) -> Option<DiskStat> {
        DiskStat::parse(&std::fs::read_to_string(format!("/sys/block/{name}/stat")).ok()?)
    }
}

/// Parses `/proc/diskstats` (major, minor, name, then the stat fields):
/// every device and partition in one read, the sampler's source.
pub fn parse_diskstats(text: &str) -> Vec<(String, DiskStat)> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let _major = f.next()?;
            let _minor = f.next()?;
            let name = f.next()?;
            let rest: Vec<&str> = f.collect();
            Some((name.to_string(), DiskStat::parse(&rest.join(" "))?))
        })
        .collect()
}

/// Reads `/proc/diskstats`.
pub fn read_diskstats() -> Vec<(String, DiskStat)> {
    parse_diskstats(&std::fs::read_to_string("/proc/diskstats").unwrap_or_default())
}

/// The `iostat -x` figures between `prev` and `cur`, `len_ms` apart, the
/// interval ending `t_ms` after the cell's first phase started. A counter
/// that went back (the device was detached and reused) counts as 0.
pub fn iostat(prev: &DiskStat, cur: &DiskStat, len_ms: u64, t_ms: u64) -> IostatPoint {
    let d = |a: u64, b: u64| b.saturating_sub(a);
    let secs = len_ms as f64 / 1000.0;
    let per_s = |n: u64| if len_ms == 0 { 0.0 } else { n as f64 / secs };
    let ratio = |num: u64, den: u64| if den == 0 { 0.0 } else { num as f64 / den as f64 };
    let rd = d(prev.rd_ios, cur.rd_ios);
    let wr = d(prev.wr_ios, cur.wr_ios);
    let dc = d(prev.dc_ios, cur.dc_ios);
    let fl = d(prev.fl_ios, cur.fl_ios);
    let rs = d(prev.rd_sectors, cur.rd_sectors);
    let ws = d(prev.wr_sectors, cur.wr_sectors);
    let ds = d(prev.dc_sectors, cur.dc_sectors);
    let rt = d(prev.rd_ticks, cur.rd_ticks);
    let wt = d(prev.wr_ticks, cur.wr_ticks);
    let util = if cur.io_ticks < prev.io_ticks || len_ms == 0 {
        0.0
    } else {
        ((cur.io_ticks - prev.io_ticks) as f64 * 100.0 / len_ms as f64).min(100.0)
    };
    IostatPoint {
        t_ms,
        len_ms,
        r_s: per_s(rd),
        w_s: per_s(wr),
        rmb_s: per_s(rs) / 2048.0,
        wmb_s: per_s(ws) / 2048.0,
        rrqm_s: per_s(d(prev.rd_merges, cur.rd_merges)),
        wrqm_s: per_s(d(prev.wr_merges, cur.wr_merges)),
        r_await_ms: ratio(rt, rd),
        w_await_ms: ratio(wt, wr),
        rareq_kib: ratio(rs, rd) / 2.0,
        wareq_kib: ratio(ws, wr) / 2.0,
        d_s: per_s(dc),
        dmb_s: per_s(ds) / 2048.0,
        d_await_ms: ratio(d(prev.dc_ticks, cur.dc_ticks), dc),
        f_s: per_s(fl),
        f_await_ms: ratio(d(prev.fl_ticks, cur.fl_ticks), fl),
        aqu_sz: if len_ms == 0 {
            0.0
        } else {
            d(prev.time_in_queue, cur.time_in_queue) as f64 / len_ms as f64
        },
        util_pct: util,
        read_ios: rd,
        write_ios: wr,
        read_bytes: rs * 512,
        write_bytes: ws * 512,
        read_ticks_ms: rt,
        write_ticks_ms: wt,
        read_merges: d(prev.rd_merges, cur.rd_merges),
        write_merges: d(prev.wr_merges, cur.wr_merges),
        in_queue_ms: d(prev.time_in_queue, cur.time_in_queue),
        io_ticks_ms: d(prev.io_ticks, cur.io_ticks),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_11_15_and_17_fields() {
        let s11 = "  100 5 800 40 50 2 400 30 1 70 90\n";
        let d = DiskStat::parse(s11).unwrap();
        assert_eq!(
            (d.rd_ios, d.wr_sectors, d.time_in_queue, d.dc_ios, d.fl_ios),
            (100, 400, 90, 0, 0)
        );
        let s15 = "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15";
        let d = DiskStat::parse(s15).unwrap();
        assert_eq!((d.dc_ios, d.dc_ticks, d.fl_ios), (12, 15, 0));
        let s17 = "15002846  1659068 582522067  7914538  6394370  3072388 912958287 18036451        0  2269408 27430539  1826419      167 564100248   874383   406472   605165";
        let d = DiskStat::parse(s17).unwrap();
        assert_eq!((d.rd_ios, d.fl_ios, d.fl_ticks), (15002846, 406472, 605165));
        assert!(DiskStat::parse("1 2 3").is_none());
        assert!(DiskStat::parse("1 2 3 4 5 6 7 8 9 10 x").is_none());
    }

    #[test]
    fn computes_iostat_x_as_sysstat() {
        // two readings one second apart: 1000 reads of 8 sectors (4 KiB)
        // taking 500 ms in all, 200 writes of 16 sectors taking 400 ms with
        // 50 merges, the device busy 600 ms, 1100 ms queued; 10 discards of
        // 2048 sectors in 30 ms; 20 flushes in 60 ms
        let a = DiskStat::parse("1000 10 8000 100 300 5 4800 200 0 1000 2000 1 0 0 1 2 3").unwrap();
        let b = DiskStat::parse("2000 10 16000 600 500 55 8000 600 0 1600 3100 11 0 20480 31 22 63").unwrap();
        let p = iostat(&a, &b, 1000, 2000);
        assert_eq!((p.t_ms, p.len_ms), (2000, 1000));
        assert_eq!(p.r_s, 1000.0);
        assert_eq!(p.w_s, 200.0);
        assert!((p.rmb_s - 8000.0 / 2048.0).abs() < 1e-12);
        assert!((p.wmb_s - 3200.0 / 2048.0).abs() < 1e-12);
        assert_eq!(p.rrqm_s, 0.0);
        assert_eq!(p.wrqm_s, 50.0);
        assert_eq!(p.r_await_ms, 0.5);
        assert_eq!(p.w_await_ms, 2.0);
        assert_eq!(p.rareq_kib, 4.0);
        assert_eq!(p.wareq_kib, 8.0);
        assert_eq!(p.d_s, 10.0);
        assert_eq!(p.dmb_s, 10.0);
        assert_eq!(p.d_await_ms, 3.0);
        assert_eq!(p.f_s, 20.0);
        assert_eq!(p.f_await_ms, 3.0);
        assert!((p.aqu_sz - 1.1).abs() < 1e-12);
        assert!((p.util_pct - 60.0).abs() < 1e-12);
        assert_eq!((p.read_ios, p.write_ios), (1000, 200));
        assert_eq!((p.read_bytes, p.write_bytes), (4_096_000, 1_638_400));
        assert_eq!((p.read_ticks_ms, p.write_ticks_ms), (500, 400));
        // half a second: rates double, per-request figures do not change
        let h = iostat(&a, &b, 500, 500);
        assert_eq!(h.r_s, 2000.0);
        assert_eq!(h.r_await_ms, 0.5);
        assert_eq!(h.util_pct, 100.0);
    }

    #[test]
    fn parses_proc_diskstats() {
        let t = " 254       0 vda 15002846 1659068 582522067 7914538 6394370 3072388 912958287 18036451 0 2269408 27430539 1826419 167 564100248 874383 406472 605165\n 254       1 vda1 10 0 80 1 0 0 0 0 0 1 1\n   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
        let v = parse_diskstats(t);
        assert_eq!(v.len(), 3);
        assert_eq!(v[0].0, "vda");
        assert_eq!(v[0].1.fl_ios, 406472);
        assert_eq!(v[1].0, "vda1");
        assert_eq!(v[1].1.rd_sectors, 80);
        assert!(!read_diskstats().is_empty());
    }

    #[test]
    fn an_idle_or_reset_device_gives_zeros() {
        let a = DiskStat::parse("5 0 40 3 0 0 0 0 0 3 3").unwrap();
        let p = iostat(&a, &a, 1000, 1000);
        assert_eq!(
            (p.r_s, p.r_await_ms, p.rareq_kib, p.util_pct, p.aqu_sz),
            (0.0, 0.0, 0.0, 0.0, 0.0)
        );
        let reset = DiskStat::default();
        let p = iostat(&a, &reset, 1000, 1000);
        assert_eq!((p.r_s, p.util_pct), (0.0, 0.0));
    }
}
