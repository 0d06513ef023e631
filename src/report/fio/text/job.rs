//! One job's block of fio's normal output (stat.c
//! show_thread_status_normal, show_ddir_status, show_latencies), from a
//! cell: the job line, each direction's IOPS/BW line, latency lines and
//! percentiles, the bw/iops sample lines, the latency distribution, the
//! sync block, CPU, IO depths, submit/complete, issued and latency lines.

use super::num::{lat_unit, num2str, Unit};
use super::Group;
use crate::model::{Cell, DirResult, LatSummary, RateSamples};
use crate::stats::{LatHist, OpKind};
use std::fmt::Write;

/// fio's display_lat: min and max in at most 6 digits (num2str), mean and
/// deviation with two decimals, in the unit the figures call for.
fn lat_line(s: &mut String, what: &str, l: &LatSummary) {
    let (u, div) = lat_unit(l.min_ns, l.max_ns, l.stddev_ns);
    let n = |v: u64| num2str(v / div, 6, 1, false, Unit::None);
    let _ = writeln!(
        s,
        "    {what} ({u}): min={}, max={}, avg={:5.2}, stdev={:5.2}",
        n(l.min_ns),
        n(l.max_ns),
        l.mean_ns / div as f64,
        l.stddev_ns / div as f64
    );
}

/// Digits after the point of the percentile list (fio's
/// percentile_precision, the most a value of the list has): 2 for fio's
/// default list, 0 for `50:99` (fio prints " 50th=").
fn precision(pcts: &[f64]) -> usize {
    pcts.iter()
        .map(|p| {
            let t = format!("{p}");
            t.split_once('.').map_or(0, |(_, d)| d.len())
        })
        .max()
        .unwrap_or(2)
}

/// fio's percentile block (show_clat_percentiles): the unit is msec when
/// the smallest value is over 2 ms and the largest over 100 ms, usec at a
/// thousandth of each, else nsec; values rounded up to the unit, as many
/// per row as fit in 80 columns.
fn pct_block(s: &mut String, what: &str, l: &LatSummary, pcts: &[f64]) {
    let hist = LatHist::from_sparse(&l.histogram);
    let vals: Vec<u64> = pcts
        .iter()
        .map(|&p| hist.quantile(p / 100.0, l.min_ns, l.max_ns))
        .collect();
    let (lo, hi) = (
        vals.iter().copied().min().unwrap_or(0),
        vals.iter().copied().max().unwrap_or(0),
    );
    let (u, steps) = if lo > 2_000_000 && hi > 99_999_999 {
        ("msec", 2)
    } else if lo > 2_000 && hi > 99_999 {
        ("usec", 1)
    } else {
        ("nsec", 0)
    };
    let prec = precision(pcts);
    let width = (hi / 1000u64.pow(steps)).to_string().len().max(5);
    let per_line = (80 - 7) / (prec + 10 + width);
    let _ = write!(s, "    {what} percentiles ({u}):\n     |");
    for (j, (p, &v)) in pcts.iter().zip(&vals).enumerate() {
        if j != 0 && j % per_line == 0 {
            s.push_str("     |");
        }
        let v = (0..steps).fold(v, |v, _| v.div_ceil(1000));
        let last = j + 1 == vals.len();
        let _ = write!(
            s,
            " {p:w$.prec$}th=[{v:width$}]{}",
            if last { '\n' } else { ',' },
            w = prec + 3
        );
        if !last && j % per_line == per_line - 1 {
            s.push('\n');
        }
    }
}

/// fio's bw and iops sample lines (show_ddir_status): KiB/s (MiB/s over
/// 1 GiB/s), the job's share of its group's aggregate (`agg` bytes/s).
/// A result of a version that took no samples has no such lines, as it
/// had none.
fn sample_lines(s: &mut String, d: &DirResult, agg: u64, kb_base: u64) {
    let none = RateSamples::default();
    let (b, i) = (d.bw_samples.unwrap_or(none), d.iops_samples.unwrap_or(none));
    if b.samples > 0 {
        let RateSamples {
            mut min,
            mut max,
            mut mean,
            stddev: mut dev,
            ..
        } = b;
        // fio passes the mean as an int
        let per = if agg > 1024 {
            ((mean as i64) as f64 * 100.0 / (agg as f64 / 1024.0)).min(100.0)
        } else {
            100.0
        };
        let kb = kb_base as f64;
        let mut unit = if kb_base == 1024 { "KiB" } else { "kB" };
        if mean > kb * kb {
            (min, max) = ((min as f64 / kb) as u64, (max as f64 / kb) as u64);
            (mean, dev) = (mean / kb, dev / kb);
            unit = "MiB";
        }
        let _ = writeln!(
            s,
            "   bw ({unit:>5}/s): min={min:5}, max={max:5}, per={per:3.2}%, avg={mean:5.2}, stdev={dev:5.2}, samples={}",
            b.samples
        );
    }
    if i.samples > 0 {
        let _ = writeln!(
            s,
            "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}",
            i.min, i.max, i.mean, i.stddev, i.samples
        );
    }
}

/// One read or write direction; nothing for one that took no whole
/// millisecond (fio's runtime of 0).
fn dir_block(s: &mut String, c: &Cell, d: &DirResult, g: &Group, pcts: &[f64]) {
    let r = c.plan.fio().map(|f| f.report).unwrap_or_default();
    let runt = super::runtime_ms(c);
    if runt == 0 {
        return;
    }
    let name = match d.dir {
        OpKind::Read => "read",
        OpKind::Trim => "trim",
        _ => "write",
    };
    // fio's metadata engines: IOPS of their bs-sized fake I/Os, and no lat line
    let meta = super::super::common::meta_engine_bs(c);
    let ios = meta.map_or(d.ops, |bs| d.bytes / bs);
    let i2p = g.kb_base != 1000;
    let bw = d.bytes * 1000 / runt;
    let _ = writeln!(
        s,
        "  {name}: IOPS={}, BW={} ({})({}/{runt}msec){}",
        num2str(ios * 1000 / runt, 4, 1, false, Unit::None),
        num2str(bw, 4, 1, i2p, Unit::BytePerSec),
        num2str(bw, 4, 1, !i2p, Unit::BytePerSec),
        num2str(d.bytes, 4, 1, i2p, Unit::Byte),
        // fslab writes no zoned device's zones: none is ever reset
        if d.dir == OpKind::Write { "; 0 zone resets" } else { "" }
    );
    let slat = d.slat.as_ref().filter(|_| !r.disable_slat);
    let clat = Some(d.clat.as_ref().unwrap_or(&d.lat)).filter(|_| !r.disable_clat);
    let lat = Some(&d.lat).filter(|_| !r.disable_lat);
    if let Some(l) = slat {
        lat_line(s, "slat", l);
    }
    if let Some(l) = clat {
        lat_line(s, "clat", l);
    }
    if let Some(l) = lat.filter(|_| meta.is_none()) {
        lat_line(s, " lat", l);
    }
    for (on, what, l) in [
        (r.slat_percentiles, "slat", slat),
        (r.clat_percentiles, "clat", clat),
        (r.lat_percentiles, "lat", lat),
    ] {
        if let (true, Some(l)) = (on, l) {
            pct_block(s, what, l, pcts);
        }
    }
    if !r.disable_bw && meta.is_none() {
        sample_lines(s, d, g.agg(d.dir), g.kb_base);
    }
}

/// fsync and fdatasync latencies, after the distribution (fio's sync block).
fn sync_block(s: &mut String, c: &Cell, pcts: &[f64]) {
    let r = c.plan.fio().map(|f| f.report).unwrap_or_default();
    let Some(d) = c.dir(OpKind::Fsync).filter(|d| d.ops > 0 && !r.disable_clat) else {
        return;
    };
    s.push_str("  fsync/fdatasync/sync_file_range:\n");
    lat_line(s, "sync", &d.lat);
    if r.clat_percentiles || r.lat_percentiles {
        pct_block(s, "sync", &d.lat, pcts);
    }
}

/// fio's latency distribution (show_latencies): the share of reads and
/// writes whose completion latency, in whole ns, µs or ms, is under each
/// mark (2 = 0..1, 4 = 2..3, ..., 1000 = 750..999; then 2000 and >=2000
/// ms), from the latency histogram (within its 1% resolution); a
/// non-empty share under 0.01% shows as 0.01%, as fio's.
fn distribution(s: &mut String, c: &Cell) {
    // fio marks a latency where it takes clat, and its metadata engines
    // take theirs apart from it
    let r = c.plan.fio().map(|f| f.report).unwrap_or_default();
    if r.disable_clat || super::super::common::meta_engine_bs(c).is_some() {
        return;
    }
    const MARKS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    let mut counts = [[0u64; 12]; 3];
    let mut total = 0u64;
    for d in c
        .directions
        .iter()
        .filter(|d| matches!(d.dir, OpKind::Read | OpKind::Write | OpKind::Trim))
    {
        total += d.ops + d.errors.values().sum::<u64>();
        let l = d.clat.as_ref().unwrap_or(&d.lat);
        for &(v, n) in &l.histogram.buckets {
            let (unit, x) = match v {
                0..=999 => (0, v),
                1_000..=999_999 => (1, v / 1_000),
                _ => (2, v / 1_000_000),
            };
            let i = match MARKS.iter().position(|&m| x < m) {
                Some(i) => i,
                None if unit == 2 && x < 2000 => 10,
                None => 11,
            };
            counts[unit][i.min(if unit == 2 { 11 } else { 9 })] += n;
        }
    }
    if total == 0 {
        return;
    }
    for (unit, name) in ["nsec", "usec", "msec"].iter().enumerate() {
        let labels: Vec<String> = MARKS
            .iter()
            .map(|m| format!("{m}="))
            .chain(["2000=".to_string(), ">=2000=".to_string()])
            .collect();
        let n = if unit == 2 { 12 } else { 10 };
        let cells: Vec<String> = (0..n)
            .filter(|&i| counts[unit][i] > 0)
            .map(|i| {
                let pct = (counts[unit][i] as f64 * 100.0 / total as f64).max(0.01);
                format!("{}{pct:3.2}%", labels[i])
            })
            .collect();
        for row in cells.chunks(5) {
            let _ = writeln!(s, "  lat ({name})   : {}", row.join(", "));
        }
    }
}

/// fio's stat_calc_dist of submit or complete batch sizes: buckets 0,
/// 1-4, 5-8, 9-16, 17-32, 33-64, over 64 (io_u.c __io_u_mark_map).
fn batch_line(s: &mut String, what: &str, counts: &[u64], sync_ops: u64) {
    let mut map = [0u64; 7];
    if counts.is_empty() {
        // a sync engine: every operation its own call of one
        map[1] = sync_ops;
    }
    for (n, &k) in counts.iter().enumerate() {
        let i = match n {
            0 => 0,
            1..=4 => 1,
            5..=8 => 2,
            9..=16 => 3,
            17..=32 => 4,
            33..=64 => 5,
            _ => 6,
        };
        map[i] += k;
    }
    let total: u64 = map.iter().sum();
    let pct = |n: u64| match total {
        0 => 0.0,
        t => (n as f64 * 100.0 / t as f64).max(if n > 0 { 0.1 } else { 0.0 }),
    };
    let _ = writeln!(
        s,
        "     {what}: 0={:3.1}%, 4={:3.1}%, 8={:3.1}%, 16={:3.1}%, 32={:3.1}%, 64={:3.1}%, >=64={:3.1}%",
        pct(map[0]),
        pct(map[1]),
        pct(map[2]),
        pct(map[3]),
        pct(map[4]),
        pct(map[5]),
        pct(map[6])
    );
}

/// The text of errno `e` (strerror's).
fn strerror(e: i32) -> String {
    let t = std::io::Error::from_raw_os_error(e).to_string();
    match t.rfind(" (os error") {
        Some(i) => t[..i].to_string(),
        None => t,
    }
}

/// What a direction issued: its operations, failed ones included.
fn issued(c: &Cell, d: OpKind) -> u64 {
    c.dir(d).map_or(0, |d| d.ops + d.errors.values().sum::<u64>())
}

/// The lines after the latencies: CPU, depths, batches, issued, errors,
/// latency target, steady state.
fn tail(s: &mut String, c: &Cell) {
    // fio's usr/sys: over the jobs' summed runtimes
    let run = super::super::common::job_runtime_ns(c);
    let pct = |ns: u64| if run > 0 { ns as f64 * 100.0 / run as f64 } else { 0.0 };
    let (usr, sys) = (pct(c.cpu.user_ns), pct(c.cpu.sys_ns));
    // a result that did not count ctx/majf/minf (an older version's) leaves them out
    let counts = c.cpu.rusage.map_or(String::new(), |r| {
        format!(", ctx={}, majf={}, minf={}", r.ctx, r.majf, r.minf)
    });
    let _ = writeln!(s, "  cpu          : usr={usr:3.2}%, sys={sys:3.2}%{counts}");
    let depth = super::super::common::depth_levels(c)
        .iter()
        .map(|(label, pct)| format!("{label}={pct:3.1}%"))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(s, "  IO depths    : {depth}");
    let all: u64 = [OpKind::Read, OpKind::Write, OpKind::Trim, OpKind::Fsync]
        .iter()
        .map(|&d| issued(c, d))
        .sum();
    batch_line(s, "submit    ", &c.submit_batches, all);
    batch_line(s, "complete  ", &c.complete_batches, all);
    let short = |d: OpKind| c.dir(d).and_then(|d| d.short_ops).unwrap_or(0);
    let dropped = |d: OpKind| c.dir(d).and_then(|d| d.dropped_ops).unwrap_or(0);
    let _ = writeln!(
        s,
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped={},{},{},0",
        issued(c, OpKind::Read),
        issued(c, OpKind::Write),
        issued(c, OpKind::Trim),
        super::super::common::fsyncs(c, issued(c, OpKind::Fsync)),
        short(OpKind::Read),
        short(OpKind::Write),
        short(OpKind::Trim),
        dropped(OpKind::Read),
        dropped(OpKind::Write),
        dropped(OpKind::Trim),
    );
    if let Some((n, first)) = super::super::common::errors_if_continued(c) {
        let _ = writeln!(
            s,
            "     errors    : total={n}, first_error={first}/<{}>",
            strerror(first)
        );
    }
    let (depth, target, pct, window) = super::super::common::latency_fields(c);
    let _ = writeln!(
        s,
        "     latency   : target={target}, window={window}, percentile={pct:.2}%, depth={depth}"
    );
    if let Some(l) = super::super::steady::text_line(c) {
        s.push_str(&l);
    }
}

/// The cell's block: fio prints nothing for a job that moved nothing.
pub(super) fn job(s: &mut String, c: &Cell, g: &Group, when: &str) {
    let moved = |d: OpKind| c.dir(d).map_or(0, |d| d.bytes) + issued(c, d);
    if moved(OpKind::Read) + moved(OpKind::Write) + moved(OpKind::Trim) == 0 && c.job_errors.is_empty() {
        return;
    }
    let pcts = super::super::common::pcts_of(c);
    // only fio cells have fio's group (others print as fio prints a missing value)
    let (groupid, jobs) = c.plan.fio().map_or(("null".into(), "null".into()), |f| {
        (f.groupid.to_string(), f.jobs.to_string())
    });
    let err = super::super::common::first_errno(c);
    let err = match err {
        0 => " 0".to_string(),
        e => format!("{e:2} ({})", strerror(e)),
    };
    let _ = writeln!(
        s,
        "{}: (groupid={groupid}, jobs={jobs}): err={err}: pid={}: {when}",
        c.name,
        std::process::id()
    );
    if let Some(d) = super::super::common::description(c) {
        let _ = writeln!(s, "  Description  : [{d}]");
    }
    for dir in [OpKind::Read, OpKind::Write, OpKind::Trim] {
        if let Some(d) = c.dir(dir).filter(|d| d.bytes > 0) {
            dir_block(s, c, d, g, &pcts);
        }
    }
    distribution(s, c);
    sync_block(s, c, &pcts);
    tail(s, c);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(values: &[u64]) -> LatSummary {
        let mut l = crate::stats::LatStats::default();
        for &v in values {
            l.record(v);
        }
        LatSummary::of(&l)
    }

    #[test]
    fn percentiles_round_up_and_fill_fios_rows() {
        let mut s = String::new();
        let pcts = [1.0, 50.0, 99.0, 99.9, 99.99];
        pct_block(&mut s, "clat", &summary(&[2500, 3500, 150_000]), &pcts);
        let lines: Vec<&str> = s.lines().collect();
        // usec (smallest over 2 µs, largest over 100 µs), 4 a row of 80 columns
        assert_eq!(lines[0], "    clat percentiles (usec):");
        assert!(lines[1].starts_with("     |  1.00th=[    3], 50.00th=[    4]"), "{s}");
        assert!(lines[1].ends_with(','), "{s}");
        assert!(lines[2].starts_with("     | 99.99th=["), "{s}");
        assert!(lines[2].ends_with(']'), "{s}");
    }

    #[test]
    fn precision_as_the_list_is_written() {
        assert_eq!(precision(&[50.0, 99.0]), 0);
        assert_eq!(precision(&[50.0, 99.9]), 1);
        assert_eq!(precision(&[1.0, 99.5, 99.95]), 2);
        let mut s = String::new();
        pct_block(&mut s, "clat", &summary(&[500, 600]), &[50.0, 99.0]);
        assert!(s.contains("|  50th=[  "), "{s}");
    }

    #[test]
    fn batches_in_fios_buckets() {
        let mut s = String::new();
        // one call of 1, two of 8, one of 9
        batch_line(&mut s, "submit    ", &[0, 1, 0, 0, 0, 0, 0, 0, 2, 1], 0);
        assert_eq!(
            s,
            "     submit    : 0=0.0%, 4=25.0%, 8=50.0%, 16=25.0%, 32=0.0%, 64=0.0%, >=64=0.0%\n"
        );
        s.clear();
        // a sync engine: every operation its own call of one
        batch_line(&mut s, "complete  ", &[], 10);
        assert!(s.contains(" 4=100.0%, 8=0.0%"), "{s}");
    }

    #[test]
    fn strerror_is_the_message_alone() {
        assert_eq!(strerror(libc::EIO), "Input/output error");
    }
}
