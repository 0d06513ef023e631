//! fio's "normal" text output shape, for `fslab fio`: per job the IOPS and
//! bandwidth line, slat/clat/lat in the unit fio would pick, the clat
//! percentile block, CPU and I/O depths; then "Run status group N" lines.
//! Close enough that people find their numbers where they look for them.
//!
//! Every number printed was measured, or is fio's own constant for what
//! the job asked (the `latency` line without a latency target: target=0,
//! window=0, percentile=100.00%). fio's lines fslab does not measure are
//! left out rather than filled with zeros: the bw/iops sample lines, the
//! `lat (usec)` buckets (the JSON's latency_us has them), `submit` and
//! `complete` (fslab does not count I/Os per submit call), `issued rwts`
//! and "Disk stats" (fslab's telemetry reports devices its own way).

use crate::model::{Cell, DirResult, LatSummary, Report};
use crate::report::render::Reporter;
use crate::stats::{LatHist, OpKind};
use std::fmt::Write;

pub struct FioText;

/// fio's unit of a latency line (stat.c display_lat): msec when both the
/// minimum and the mean are above 1 ms, usec when above 1 µs, else nsec.
/// Chosen on the minimum, so that the minimum never prints as a 0 it was
/// not (a unit chosen on the maximum printed "min=0" msec for 34 µs).
fn unit(min_ns: u64, mean_ns: f64) -> (&'static str, u64) {
    if min_ns > 1_000_000 && mean_ns > 1e6 {
        ("msec", 1_000_000)
    } else if min_ns > 1_000 && mean_ns > 1e3 {
        ("usec", 1_000)
    } else {
        ("nsec", 1)
    }
}

fn lat_line(s: &mut String, what: &str, l: &LatSummary) {
    let (u, div) = unit(l.min_ns, l.mean_ns);
    // min and max divided as integers, as fio's
    let _ = writeln!(
        s,
        "    {what} ({u}): min={}, max={}, avg={:.2}, stdev={:.2}",
        l.min_ns / div,
        l.max_ns / div,
        l.mean_ns / div as f64,
        l.stddev_ns / div as f64
    );
}

fn bw(bps: f64) -> String {
    let mib = bps / 1048576.0;
    if mib >= 1.0 {
        format!("{mib:.1}MiB/s ({:.1}MB/s)", bps / 1e6)
    } else {
        format!("{:.1}KiB/s ({:.1}kB/s)", bps / 1024.0, bps / 1e3)
    }
}

/// fio's percentile block of one latency (`what`: clat, lat, slat, sync).
/// The unit is fio's (show_clat_percentiles): msec when the smallest value
/// shown is above 2 ms and the largest above 100 ms, usec when above 2 µs
/// and 100 µs, else nsec; values divided as integers.
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
    let (u, div) = if lo > 2_000_000 && hi > 99_999_999 {
        ("msec", 1_000_000)
    } else if lo > 2_000 && hi > 99_999 {
        ("usec", 1_000)
    } else {
        ("nsec", 1)
    };
    let _ = writeln!(s, "    {what} percentiles ({u}):");
    let cells: Vec<String> = pcts
        .iter()
        .zip(&vals)
        .map(|(p, v)| format!("{:>5.2}th=[{:>5}]", p, v / div))
        .collect();
    let rows: Vec<String> = cells.chunks(4).map(|c| c.join(", ")).collect();
    for (i, r) in rows.iter().enumerate() {
        let end = if i + 1 < rows.len() { "," } else { "" };
        let _ = writeln!(s, "     | {r}{end}");
    }
}

fn dir_block(s: &mut String, c: &Cell, d: &DirResult, pcts: &[f64]) {
    let r = c.plan.fio().map(|f| f.report).unwrap_or_default();
    if d.dir == OpKind::Fsync {
        // fio: fsync and fdatasync latencies, after the directions
        if r.disable_clat || d.ops == 0 {
            return;
        }
        s.push_str("  fsync/fdatasync/sync_file_range:\n");
        lat_line(s, "sync", &d.lat);
        if r.clat_percentiles || r.lat_percentiles {
            pct_block(s, "sync", &d.lat, pcts);
        }
        return;
    }
    let name = match d.dir {
        OpKind::Read => "read",
        _ => "write",
    };
    // fio's metadata engines: IOPS of their bs-sized fake I/Os, and no lat line
    let meta = super::common::meta_engine_bs(c);
    let iops = match meta {
        Some(bs) if d.ops > 0 => d.iops * (d.bytes / bs) as f64 / d.ops as f64,
        _ => d.iops,
    };
    let _ = writeln!(
        s,
        "  {name}: IOPS={}, BW={}({:.1}MiB/{}msec)",
        crate::units::fmt_rate(iops),
        bw(d.bytes_per_s),
        d.bytes as f64 / 1048576.0,
        c.elapsed_ns / 1_000_000
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
        (r.lat_percentiles, " lat", lat),
    ] {
        if let (true, Some(l)) = (on, l) {
            pct_block(s, what, l, pcts);
        }
    }
}

fn job(s: &mut String, c: &Cell) {
    let fio = c.plan.fio();
    let pcts = super::common::pcts_of(c);
    // only fio cells have fio's group (others print as fio prints a missing value)
    let (groupid, jobs) = fio.map_or(("null".into(), "null".into()), |f| {
        (f.groupid.to_string(), f.jobs.to_string())
    });
    // fio prints its job's error number here, not a count
    let errors = super::common::first_errno(c);
    let _ = writeln!(
        s,
        "{}: (groupid={}, jobs={}): err={:>2}: pid={}",
        c.name,
        groupid,
        jobs,
        errors,
        std::process::id()
    );
    // reads and writes first, then fio's sync block
    for d in c.directions.iter().filter(|d| d.dir != OpKind::Fsync) {
        dir_block(s, c, d, &pcts);
    }
    if let Some(d) = c.dir(OpKind::Fsync) {
        dir_block(s, c, d, &pcts);
    }
    let (usr, sys) = super::common::cpu_pcts(c);
    // ctx, majf and minf as getrusage counted them (the job's threads for
    // a fio cell, the process for another); a result that did not count
    // them (an older version's) leaves them out rather than print a zero
    let counts = c.cpu.rusage.map_or(String::new(), |r| {
        format!(", ctx={}, majf={}, minf={}", r.ctx, r.majf, r.minf)
    });
    let _ = writeln!(s, "  cpu          : usr={:.2}%, sys={:.2}%{counts}", usr, sys);
    let depth = super::common::depth_levels(c)
        .iter()
        .map(|(label, pct)| format!("{label}={pct:.1}%"))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(s, "  IO depths    : {depth}");
    let (depth, target, pct, window) = super::common::latency_fields(c);
    let _ = writeln!(
        s,
        "     latency   : target={target}, window={window}, percentile={pct:.2}%, depth={depth}"
    );
    if let Some(l) = super::steady::text_line(c) {
        s.push_str(&l);
    }
    for w in &c.warnings {
        let _ = writeln!(s, "  warning: {w}");
    }
    for e in &c.job_errors {
        let _ = writeln!(s, "  error: {e}");
    }
    s.push('\n');
}

impl Reporter for FioText {
    fn render(&self, r: &Report) -> Vec<u8> {
        let mut s = String::new();
        for c in &r.cells {
            job(&mut s, c);
        }
        let mut groups: Vec<usize> = r.cells.iter().filter_map(|c| c.plan.fio().map(|f| f.groupid)).collect();
        groups.dedup();
        for g in groups {
            let cells: Vec<&Cell> = r
                .cells
                .iter()
                .filter(|c| c.plan.fio().map(|f| f.groupid) == Some(g))
                .collect();
            let _ = writeln!(s, "Run status group {g} (all jobs):");
            for (label, dir) in [("READ", OpKind::Read), ("WRITE", OpKind::Write)] {
                let ds: Vec<(&Cell, &DirResult)> = cells.iter().filter_map(|c| Some((*c, c.dir(dir)?))).collect();
                if ds.is_empty() {
                    continue;
                }
                // fio's aggregate: the group's bytes over its longest
                // runtime (not the sum of the jobs' rates, which counts a
                // job that ran shorter at its own pace)
                let longest = ds.iter().map(|(c, _)| c.elapsed_ns).max().unwrap_or(0);
                let bytes: u64 = ds.iter().map(|(_, d)| d.bytes).sum();
                let total = if longest > 0 {
                    bytes as f64 * 1e9 / longest as f64
                } else {
                    0.0
                };
                let lo = ds.iter().map(|(_, d)| d.bytes_per_s).fold(f64::INFINITY, f64::min);
                let hi = ds.iter().map(|(_, d)| d.bytes_per_s).fold(0.0, f64::max);
                let io = bytes;
                let rmin = ds.iter().map(|(c, _)| c.elapsed_ns / 1_000_000).min().unwrap_or(0);
                let rmax = ds.iter().map(|(c, _)| c.elapsed_ns / 1_000_000).max().unwrap_or(0);
                let _ = writeln!(
                    s,
                    "{label:>7}: bw={}, {}-{}, io={:.1}MiB ({:.1}MB), run={rmin}-{rmax}msec",
                    bw(total),
                    bw(lo).split(' ').next().unwrap_or(""),
                    bw(hi).split(' ').next().unwrap_or(""),
                    io as f64 / 1048576.0,
                    io as f64 / 1e6,
                );
            }
        }
        if r.interrupted {
            s.push_str("fio: terminating on signal (fslab: results cover the time before the stop)\n");
        }
        s.into_bytes()
    }
}
