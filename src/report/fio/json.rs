//! fio's JSON output shape (`fio --output-format=json`), for io cells: the
//! subset fio tooling reads (fio-plot: "fio version", "global options",
//! jobs[].jobname, "job options".{iodepth,numjobs,bs,rw}, per direction bw,
//! iops, iops_stddev, lat_ns, the latency_ns/us/ms buckets, usr_cpu/sys_cpu).
//! Each fslab cell is one job, as fio reports with group_reporting.

use super::common::{cpu_pcts, depth_levels, latency_fields, latency_maps, meta_engine_bs, pcts_of, share_of_group};
use crate::model::{Cell, DirResult, LatSummary, Report};
use crate::plan::fio::LatReport;
use crate::report::render::Reporter;
use crate::stats::plat::{plat_idx_to_val, plat_val_to_idx};
use crate::stats::{LatHist, OpKind};
use serde_json::{json, Map, Value};

pub struct FioJson;

/// What a latency object shows: its percentiles, and json+'s bins.
#[derive(Clone, Copy)]
struct Show<'a> {
    pcts: &'a [f64],
    percentiles: bool,
    bins: bool,
}

fn lat_obj(l: Option<&LatSummary>, n: u64, show: Show) -> Value {
    let Some(l) = l.filter(|_| n > 0) else {
        return json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0});
    };
    let hist = LatHist::from_sparse(&l.histogram);
    let mut o = json!({"min": l.min_ns, "max": l.max_ns, "mean": l.mean_ns, "stddev": l.stddev_ns, "N": n});
    if show.percentiles {
        let pct: Map<String, Value> = show
            .pcts
            .iter()
            .map(|&p| (format!("{p:.6}"), json!(hist.quantile(p / 100.0, l.min_ns, l.max_ns))))
            .collect();
        o["percentile"] = Value::Object(pct);
        if show.bins {
            o["bins"] = Value::Object(
                fio_bins(&l.histogram)
                    .into_iter()
                    .map(|(v, c)| (v.to_string(), json!(c)))
                    .collect(),
            );
        }
    }
    o
}

/// fio's latency bins (json+'s `bins`, the hist log's columns): each of
/// fslab's histogram buckets falls inside one of fio's (fslab's are finer,
/// with the same power-of-two groups), so the counts are exactly fio's
/// bucketing of the same latencies: (fio bin value in ns, count), ascending.
pub(crate) fn fio_bins(h: &crate::stats::SparseHist) -> Vec<(u64, u64)> {
    let mut bins: std::collections::BTreeMap<usize, u64> = Default::default();
    for &(v, c) in &h.buckets {
        *bins.entry(plat_val_to_idx(v)).or_insert(0) += c;
    }
    bins.into_iter().map(|(i, c)| (plat_idx_to_val(i), c)).collect()
}

/// A direction the job did not do: fio's zeros, each true (no I/O, so none
/// short or dropped, no samples).
fn empty_dir() -> Value {
    let z = lat_obj(None, 0, NO_SHOW);
    json!({"io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0,
           "short_ios": 0, "drop_ios": 0, "slat_ns": z, "clat_ns": z, "lat_ns": z,
           "bw_min": 0, "bw_max": 0, "bw_agg": 0.0, "bw_mean": 0.0, "bw_dev": 0.0, "bw_samples": 0,
           "iops_min": 0, "iops_max": 0, "iops_mean": 0.0, "iops_stddev": 0.0, "iops_samples": 0})
}

const NO_SHOW: Show = Show {
    pcts: &[],
    percentiles: false,
    bins: false,
};

/// The job's reporting options (fio's defaults for an `fslab io` cell).
fn report_of(c: &Cell) -> LatReport {
    c.plan.fio().map(|f| f.report).unwrap_or_default()
}

/// fio's `sync` object: fsync and fdatasync latencies (fslab counts both as fsync).
fn sync_obj(c: &Cell, plus: bool) -> Value {
    let r = report_of(c);
    let pcts = pcts_of(c);
    let show = Show {
        pcts: &pcts,
        percentiles: r.lat_percentiles || r.clat_percentiles,
        bins: plus,
    };
    let d = c.dir(OpKind::Fsync);
    let n = d.map_or(0, |d| d.ops);
    let lat = if r.disable_clat { None } else { d.map(|d| &d.lat) };
    json!({"total_ios": super::common::fsyncs(c, n), "lat_ns": lat_obj(lat, if lat.is_some() { n } else { 0 }, show)})
}

fn dir_obj(r_all: &Report, c: &Cell, d: &DirResult, plus: bool) -> Value {
    let pcts = pcts_of(c);
    let r = report_of(c);
    let show = |on: bool| Show {
        pcts: &pcts,
        percentiles: on,
        bins: plus,
    };
    // sync engines: clat is the whole latency and slat is not measured (as fio psync)
    let clat = d.clat.as_ref().unwrap_or(&d.lat);
    let (slat, clat, lat) = (
        d.slat.as_ref().filter(|_| !r.disable_slat),
        Some(clat).filter(|_| !r.disable_clat),
        Some(&d.lat).filter(|_| !r.disable_lat),
    );
    let n = |l: Option<&LatSummary>| if l.is_some() { d.ops } else { 0 };
    // fio's bw (KiB/s) and iops samples, every 500 ms
    let (bw, io) = super::common::rate_samples(c, d);
    let mut o = if let Some(bs) = meta_engine_bs(c) {
        // fio's metadata engines: the file operations are clat samples; the
        // I/Os are bs-sized fake ones over each file's bytes (fio fills no lat)
        let ios = d.bytes / bs;
        let z = lat_obj(None, 0, show(false));
        let scale = if d.ops > 0 { ios as f64 / d.ops as f64 } else { 0.0 };
        json!({
            "io_bytes": d.bytes, "io_kbytes": d.bytes / 1024, "bw_bytes": d.bytes_per_s as u64,
            "bw": (d.bytes_per_s / 1024.0) as u64, "iops": d.iops * scale, "runtime": c.elapsed_ns / 1_000_000,
            "total_ios": ios, "drop_ios": 0,
            "slat_ns": z.clone(), "clat_ns": lat_obj(clat, n(clat), show(r.clat_percentiles)), "lat_ns": z,
            "bw_min": 0, "bw_max": 0, "bw_agg": 0.0, "bw_mean": 0.0, "bw_dev": 0.0, "bw_samples": 0,
            "iops_min": 0, "iops_max": 0, "iops_mean": 0.0, "iops_stddev": 0.0, "iops_samples": 0,
        })
    } else {
        // fio keeps a direction's runtime only once it moved bytes
        // (backend.c update_runtime): none, and its bw and iops are 0 (the
        // operations of cpuio and exec, which move nothing, still counted)
        let moved = d.bytes > 0;
        json!({
        "io_bytes": d.bytes, "io_kbytes": d.bytes / 1024, "bw_bytes": d.bytes_per_s as u64,
        "bw": (d.bytes_per_s / 1024.0) as u64, "iops": if moved { d.iops } else { 0.0 },
        "runtime": if moved { c.elapsed_ns / 1_000_000 } else { 0 },
        "total_ios": d.ops, "drop_ios": d.dropped_ops.unwrap_or(0),
        "slat_ns": lat_obj(slat, n(slat), show(r.slat_percentiles)),
        "clat_ns": lat_obj(clat, n(clat), show(r.clat_percentiles)),
        "lat_ns": lat_obj(lat, n(lat), show(r.lat_percentiles)),
        "bw_min": bw.min, "bw_max": bw.max,
        "bw_agg": share_of_group(r_all, c, d.dir, bw.mean, bw.samples as usize),
        "bw_mean": bw.mean, "bw_dev": bw.stddev, "bw_samples": bw.samples,
        "iops_min": io.min, "iops_max": io.max,
        "iops_mean": io.mean, "iops_stddev": io.stddev, "iops_samples": io.samples,
        })
    };
    // short_ios: the reads and writes that moved less than they asked, as
    // counted (absent for a result that did not count them, rather than a
    // zero). drop_ios: the datagrams a net job's UDP reader found missing
    // (fio 3.33 counts nothing else there), 0 for every other job.
    // where fio puts it: after total_ios
    if let (Some(n), Some(m)) = (d.short_ops, o.as_object_mut()) {
        let at = m.keys().position(|k| k == "total_ios").map_or(m.len(), |i| i + 1);
        m.shift_insert(at, "short_ios".into(), json!(n));
    }
    o
}

/// One io or fio cell as a fio job.
fn job(r: &Report, c: &Cell, id: usize, plus: bool) -> Value {
    let Some(p) = c.plan.io() else {
        return Value::Null;
    };
    let engine = match p.ioengine.engine.name() {
        "sync" => "psync",
        "uring" => "io_uring",
        e => e,
    };
    let mut opts = Map::new();
    for (k, v) in [
        ("rw", p.shape.rw.name().to_string()),
        ("bs", p.shape.bs.to_string()),
        ("iodepth", p.ioengine.iodepth.to_string()),
        ("numjobs", p.jobs.to_string()),
        ("rwmixread", p.shape.rwmixread.to_string()),
        ("direct", if p.ioengine.direct { "1" } else { "0" }.to_string()),
        ("ioengine", engine.to_string()),
    ] {
        opts.insert(k.into(), json!(v));
    }
    let secs = c.elapsed_ns as f64 / 1e9;
    let (usr, sys) = cpu_pcts(c);
    let (lns, lus, lms) = latency_maps(c);
    let depth: Map<String, Value> = depth_levels(c)
        .into_iter()
        .map(|(label, pct)| (label.to_string(), json!(pct)))
        .collect();
    // `fslab fio` cells carry fio's group and the job's own options
    let fio = c.plan.fio();
    let id = fio.map_or(id, |f| f.groupid);
    if let Some(f) = fio {
        opts = f.options.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    }
    // fio's order (stat.c show_thread_status_json): the map keeps it
    // (serde_json's preserve_order), so a diff against fio's JSON lines up
    let mut j = json!({
        "jobname": c.name, "groupid": id, "error": super::common::first_errno(c), "elapsed": secs.round() as u64,
        "job options": opts,
    });
    for (key, dir) in [("read", OpKind::Read), ("write", OpKind::Write), ("trim", OpKind::Trim)] {
        j[key] = match c.dir(dir) {
            None => empty_dir(),
            Some(d) => dir_obj(r, c, d, plus),
        };
    }
    j["sync"] = sync_obj(c, plus);
    j["job_runtime"] = json!(super::common::job_runtime_ns(c) / 1_000_000);
    j["usr_cpu"] = json!(usr);
    j["sys_cpu"] = json!(sys);
    // getrusage's counts (the job's threads for a fio cell, the process for
    // another); a result that did not count them (an older version's) has
    // no such keys rather than a zero: no fio tool fslab is tested with
    // reads them
    if let Some(ru) = c.cpu.rusage {
        j["ctx"] = json!(ru.ctx);
        j["majf"] = json!(ru.majf);
        j["minf"] = json!(ru.minf);
    }
    j["iodepth_level"] = json!(depth);
    j["latency_ns"] = json!(lns);
    j["latency_us"] = json!(lus);
    j["latency_ms"] = json!(lms);
    if let Some((n, first)) = super::common::errors_if_continued(c) {
        j["total_err"] = json!(n);
        j["first_error"] = json!(first);
    }
    let (ldepth, target, pct, window) = latency_fields(c);
    j["latency_depth"] = json!(ldepth);
    j["latency_target"] = json!(target);
    j["latency_percentile"] = json!(pct);
    j["latency_window"] = json!(window);
    if let Some(d) = super::common::description(c) {
        j["desc"] = json!(d);
    }
    if let Some(ss) = super::steady::json(c) {
        j["steadystate"] = ss;
    }
    j
}

impl Reporter for FioJson {
    fn render(&self, r: &Report) -> Vec<u8> {
        render(r, false)
    }
}

/// fio's JSON document (json+ with `plus`: each latency's `bins`).
pub fn render(r: &Report, plus: bool) -> Vec<u8> {
    {
        let ts = humantime::parse_rfc3339(&r.started_at)
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let jobs: Vec<Value> = r
            .cells
            .iter()
            // io and fio cells that ran (a lab cell that failed has no job)
            .filter(|c| c.error.is_none() && c.plan.io().is_some())
            .enumerate()
            .map(|(i, c)| job(r, c, i, plus))
            .collect();
        let v = json!({
            "fio version": format!("fslab-{}", r.fslab_version),
            "timestamp": ts / 1000, "timestamp_ms": ts, "time": r.started_at,
            "global options": {}, "jobs": jobs, "disk_util": super::disks::json(r),
        });
        let mut out = serde_json::to_vec_pretty(&v).expect("JSON values serialise");
        out.push(b'\n');
        out
    }
}
