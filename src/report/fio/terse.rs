//! fio's terse output, version 3 (`--output-format=terse`, `--minimal`):
//! one `;`-separated line per job as fio 3.33's stat.c
//! show_thread_status_terse_all writes it (the field list of fio's HOWTO
//! "Terse output": 121 fields, then nine for each disk from fslab's device
//! sampling, as fio's 130 with one disk). `FioAll` (in `fio`) puts it first in a comma list of
//! formats (`--output-format=json,normal`): terse lines, the normal text,
//! then the JSON document.

use super::common::{cpu_pcts, depth_levels, description, errors_if_continued, first_errno, latency_maps, pcts_of};
use crate::model::{Cell, DirResult, LatSummary, Report};
use crate::plan::fio::LatReport;
use crate::report::render::Reporter;
use crate::stats::{LatHist, OpKind};
use std::fmt::Write;

/// fio's FIO_IO_U_LIST_MAX_LEN: the terse line always has 20 percentile fields.
const PCT_FIELDS: usize = 20;

/// `;min;max;mean;dev` in µs (min and max truncated, as fio's integer division).
fn lat4(s: &mut String, l: Option<&LatSummary>) {
    match l {
        Some(l) => {
            let _ = write!(
                s,
                ";{};{};{:.6};{:.6}",
                l.min_ns / 1000,
                l.max_ns / 1000,
                l.mean_ns / 1000.0,
                l.stddev_ns / 1000.0
            );
        }
        None => s.push_str(";0;0;0.000000;0.000000"),
    }
}

/// One direction's 41 fields (fio's show_ddir_status_terse, version 3).
fn ddir(s: &mut String, all: &Report, c: &Cell, d: Option<&DirResult>, r: &LatReport, pcts: &[f64]) {
    let (bytes, ops) = d.map_or((0, 0), |d| (d.bytes, d.ops));
    // fio keeps a direction's runtime only once it moved bytes (backend.c
    // update_runtime): cpuio's and exec's operations have none
    let runtime_ms = if bytes > 0 { c.elapsed_ns / 1_000_000 } else { 0 };
    let (bw, iops) = if runtime_ms > 0 && ops > 0 {
        (1000 * bytes / runtime_ms / 1024, 1000 * ops / runtime_ms)
    } else {
        (0, 0)
    };
    let _ = write!(s, ";{};{bw};{iops};{}", bytes >> 10, runtime_ms);
    let d = d.filter(|d| d.ops > 0);
    let slat = d.and_then(|d| d.slat.as_ref()).filter(|_| !r.disable_slat);
    let clat = d.map(|d| d.clat.as_ref().unwrap_or(&d.lat)).filter(|_| !r.disable_clat);
    let lat = d.map(|d| &d.lat).filter(|_| !r.disable_lat);
    lat4(s, slat);
    lat4(s, clat);
    // fio: total-latency percentiles if asked, else completion-latency ones
    let of = if r.lat_percentiles {
        Some(lat)
    } else if r.clat_percentiles {
        Some(clat)
    } else {
        None
    };
    let listed = if of.is_some() { pcts.len().min(PCT_FIELDS) } else { 0 };
    for (i, &p) in pcts.iter().enumerate().take(PCT_FIELDS) {
        if i >= listed {
            break;
        }
        let v = of.flatten().map_or(0, |l| {
            LatHist::from_sparse(&l.histogram).quantile(p / 100.0, l.min_ns, l.max_ns) / 1000
        });
        let _ = write!(s, ";{p:.6}%={v}");
    }
    for _ in listed..PCT_FIELDS {
        s.push_str(";0%=0");
    }
    lat4(s, lat);
    // fio's bandwidth samples (KiB/s, every 500 ms)
    let bw = d.map(|d| (d.dir, super::common::rate_samples(c, d).0));
    match bw.filter(|(_, b)| b.samples > 0) {
        None => s.push_str(";0;0;0.000000%;0.000000;0.000000"),
        Some((dir, b)) => {
            let per = super::common::share_of_group(all, c, dir, b.mean, b.samples as usize);
            let _ = write!(s, ";{};{};{per:.6}%;{:.6};{:.6}", b.min, b.max, b.mean, b.stddev);
        }
    }
}

/// One job's terse line (version 3), with every disk of the report (fio
/// prints them all on every job's line).
fn line(all: &Report, c: &Cell, version: &str, disks: &[super::disks::Disk]) -> String {
    let mut s = String::new();
    let fio = c.plan.fio();
    let r = fio.map(|f| f.report).unwrap_or_default();
    let groupid = fio.map_or(0, |f| f.groupid);
    let pcts = pcts_of(c);
    // fio's ts->error, as its JSON and text print it (the errno, not a flag)
    let error = first_errno(c);
    let _ = write!(s, "3;{version};{};{groupid};{error}", c.name.replace(';', ","));
    ddir(&mut s, all, c, c.dir(OpKind::Read), &r, &pcts);
    ddir(&mut s, all, c, c.dir(OpKind::Write), &r, &pcts);
    let (usr, sys) = cpu_pcts(c);
    // ctx, majf, minf as getrusage counted them; empty fields (the place
    // kept, as fio's field list is positional) where a result did not count them
    let counts = c
        .cpu
        .rusage
        .map_or(";;;".to_string(), |r| format!(";{};{};{}", r.ctx, r.majf, r.minf));
    let _ = write!(s, ";{:.6}%;{:.6}%{counts}", usr, sys);
    for (_, p) in depth_levels(c) {
        let _ = write!(s, ";{p:.1}%");
    }
    let (lns, lus, lms) = latency_maps(c);
    let num = |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_f64()).unwrap_or(0.0);
    // fio's stat_calc_lat_nu: the nanosecond buckets count in the first microsecond one
    let ns_total: f64 = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"]
        .iter()
        .map(|k| num(&lns, k))
        .sum();
    for (i, k) in ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"]
        .iter()
        .enumerate()
    {
        let v = num(&lus, k) + if i == 0 { ns_total } else { 0.0 };
        let _ = write!(s, ";{v:.2}%");
    }
    for k in [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
    ] {
        let _ = write!(s, ";{:.2}%", num(&lms, k));
    }
    super::disks::terse(&mut s, disks);
    // fio: the error count and first error with continue_on_error, then the description
    if let Some((n, first)) = errors_if_continued(c) {
        let _ = write!(s, ";{n};{first}");
    }
    if let Some(d) = description(c) {
        let _ = write!(s, ";{d}");
    }
    s.push('\n');
    s
}

/// The jobs of a report, as fio's JSON lists them.
fn jobs(r: &Report) -> impl Iterator<Item = &Cell> {
    r.cells.iter().filter(|c| c.error.is_none() && c.plan.io().is_some())
}

/// fio's terse output alone.
pub struct FioTerse;

impl Reporter for FioTerse {
    fn render(&self, r: &Report) -> Vec<u8> {
        let v = format!("fslab-{}", r.fslab_version);
        let disks = super::disks::disks(r);
        jobs(r).map(|c| line(r, c, &v, &disks)).collect::<String>().into_bytes()
    }
}
