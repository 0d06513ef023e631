//! fio's JSON output shape (`fio --output-format=json`), for io cells: the
//! subset fio tooling reads (fio-plot: "fio version", "global options",
//! jobs[].jobname, "job options".{iodepth,numjobs,bs,rw}, per direction bw,
//! iops, iops_stddev, lat_ns, the latency_ns/us/ms buckets, usr_cpu/sys_cpu).
//! Each fslab cell is one job, as fio reports with group_reporting.

use super::Reporter;
use crate::model::{Cell, DirResult, LatSummary, Report};
use crate::stats::{LatHist, OpKind};
use serde_json::{json, Map, Value};

pub struct FioJson;

/// fio's default percentile list, keyed as fio prints them ("99.900000").
const FIO_PCTS: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99,
];

fn lat_obj(l: Option<&LatSummary>, n: u64, pcts: &[f64]) -> Value {
    let Some(l) = l else {
        return json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0});
    };
    let hist = LatHist::from_sparse(&l.histogram);
    let pct: Map<String, Value> = pcts
        .iter()
        .map(|&p| (format!("{p:.6}"), json!(hist.quantile(p / 100.0, l.min_ns, l.max_ns))))
        .collect();
    json!({"min": l.min_ns, "max": l.max_ns, "mean": l.mean_ns, "stddev": l.stddev_ns, "N": n, "percentile": pct})
}

fn empty_dir() -> Value {
    let z = lat_obj(None, 0, &FIO_PCTS);
    json!({"io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0,
           "short_ios": 0, "drop_ios": 0, "slat_ns": z, "clat_ns": z, "lat_ns": z,
           "bw_min": 0, "bw_max": 0, "bw_agg": 0.0, "bw_mean": 0.0, "bw_dev": 0.0, "bw_samples": 0,
           "iops_min": 0, "iops_max": 0, "iops_mean": 0.0, "iops_stddev": 0.0, "iops_samples": 0})
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64
    } else {
        0.0
    };
    (m, var.sqrt())
}

/// A fio job on one of fio's metadata engines (filecreate, filestat...):
/// its block size, which fio's fake I/O counts are in.
pub(crate) fn meta_engine_bs(c: &Cell) -> Option<u64> {
    let e = c.plan.fio()?.options.get("ioengine")?;
    crate::plan::fio::engines::MetaOp::from_name(e)?;
    Some(c.plan.io()?.bs.max(1))
}

fn dir_obj(c: &Cell, d: &DirResult) -> Value {
    // fio's percentile_list, when the job had one
    let pcts: Vec<f64> = c
        .plan
        .io()
        .map(|p| p.lat_percentiles.clone())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| FIO_PCTS.to_vec());
    // per-second samples, as fio's bw/iops logs at 1 s
    let ops: Vec<f64> = c.series.iter().map(|p| p.dir(d.dir).ops as f64).collect();
    let kib: Vec<f64> = c.series.iter().map(|p| p.dir(d.dir).bytes as f64 / 1024.0).collect();
    let (im, isd) = mean_sd(&ops);
    let (bm, bsd) = mean_sd(&kib);
    let mn = |v: &[f64]| v.iter().cloned().fold(f64::INFINITY, f64::min).max(0.0) as u64;
    let mx = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max) as u64;
    // sync engines: clat is the whole latency and slat is not measured (as fio psync)
    let clat = d.clat.as_ref().unwrap_or(&d.lat);
    if let Some(bs) = meta_engine_bs(c) {
        // fio's metadata engines: the file operations are clat samples; the
        // I/Os are bs-sized fake ones over each file's bytes (fio fills no lat)
        let ios = d.bytes / bs;
        let z = lat_obj(None, 0, &pcts);
        let scale = if d.ops > 0 { ios as f64 / d.ops as f64 } else { 0.0 };
        return json!({
            "io_bytes": d.bytes, "io_kbytes": d.bytes / 1024, "bw_bytes": d.bytes_per_s as u64,
            "bw": (d.bytes_per_s / 1024.0) as u64, "iops": d.iops * scale, "runtime": c.elapsed_ns / 1_000_000,
            "total_ios": ios, "short_ios": 0, "drop_ios": 0,
            "slat_ns": z.clone(), "clat_ns": lat_obj(Some(clat), d.ops, &pcts), "lat_ns": z,
            "bw_min": 0, "bw_max": 0, "bw_agg": 0.0, "bw_mean": 0.0, "bw_dev": 0.0, "bw_samples": 0,
            "iops_min": 0, "iops_max": 0, "iops_mean": 0.0, "iops_stddev": 0.0, "iops_samples": 0,
        });
    }
    json!({
        "io_bytes": d.bytes, "io_kbytes": d.bytes / 1024, "bw_bytes": d.bytes_per_s as u64,
        "bw": (d.bytes_per_s / 1024.0) as u64, "iops": d.iops, "runtime": c.elapsed_ns / 1_000_000,
        "total_ios": d.ops, "short_ios": 0, "drop_ios": 0,
        "slat_ns": lat_obj(d.slat.as_ref(), if d.slat.is_some() { d.ops } else { 0 }, &pcts),
        "clat_ns": lat_obj(Some(clat), d.ops, &pcts),
        "lat_ns": lat_obj(Some(&d.lat), d.ops, &pcts),
        "bw_min": if kib.is_empty() { 0 } else { mn(&kib) }, "bw_max": mx(&kib), "bw_agg": 100.0,
        "bw_mean": bm, "bw_dev": bsd, "bw_samples": kib.len(),
        "iops_min": if ops.is_empty() { 0 } else { mn(&ops) }, "iops_max": mx(&ops),
        "iops_mean": im, "iops_stddev": isd, "iops_samples": ops.len(),
    })
}

/// fio's latency_ns/us/ms maps: percent of all I/Os whose latency falls in
/// (previous key, key], from the merged histograms of reads and writes.
fn latency_maps(c: &Cell) -> (Value, Value, Value) {
    let mut all = LatHist::new();
    for d in c
        .directions
        .iter()
        .filter(|d| matches!(d.dir, OpKind::Read | OpKind::Write))
    {
        all.add(&LatHist::from_sparse(&d.lat.histogram));
    }
    let total = all.len().max(1) as f64;
    let buckets = all.to_sparse().buckets;
    let share = |lo: u64, hi: u64| {
        buckets
            .iter()
            .filter(|(v, _)| *v > lo && *v <= hi)
            .map(|(_, n)| *n)
            .sum::<u64>() as f64
            * 100.0
            / total
    };
    let mut out = Vec::new();
    for (unit, keys) in [
        (1u64, &[2u64, 4, 10, 20, 50, 100, 250, 500, 750, 1000][..]),
        (1_000, &[2, 4, 10, 20, 50, 100, 250, 500, 750, 1000][..]),
        (1_000_000, &[2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000][..]),
    ] {
        let mut m = Map::new();
        let mut lo = if unit == 1 { 0 } else { unit / 1000 * 1000 };
        for &k in keys {
            let hi = k * unit;
            m.insert(k.to_string(), json!(share(lo, hi)));
            lo = hi;
        }
        if unit == 1_000_000 {
            m.insert(">=2000".into(), json!(share(lo, u64::MAX)));
        }
        out.push(Value::Object(m));
    }
    (out[0].clone(), out[1].clone(), out[2].clone())
}

/// fio's "IO depths" buckets (1, 2, 4, ... >=64): the percentage of
/// submissions at each in-flight depth; a sync run is all at depth 1.
pub(crate) fn depth_levels(counts: &[u64]) -> Vec<(&'static str, f64)> {
    let total: u64 = counts.iter().sum();
    let mut lo = 0usize;
    let mut out = Vec::new();
    for (label, hi) in [
        ("1", 1usize),
        ("2", 2),
        ("4", 4),
        ("8", 8),
        ("16", 16),
        ("32", 32),
        (">=64", usize::MAX),
    ] {
        let pct = if total == 0 {
            if hi == 1 {
                100.0
            } else {
                0.0
            }
        } else {
            let n: u64 = counts
                .iter()
                .enumerate()
                .filter(|(d, _)| *d > lo && *d <= hi)
                .map(|(_, n)| *n)
                .sum();
            n as f64 * 100.0 / total as f64
        };
        out.push((label, pct));
        lo = hi;
    }
    out
}

/// One io or fio cell as a fio job.
fn job(c: &Cell, id: usize) -> Value {
    let Some(p) = c.plan.io() else {
        return Value::Null;
    };
    let engine = match p.engine.name() {
        "sync" => "psync",
        "uring" => "io_uring",
        e => e,
    };
    let mut opts = Map::new();
    for (k, v) in [
        ("rw", p.rw.name().to_string()),
        ("bs", p.bs.to_string()),
        ("iodepth", p.iodepth.to_string()),
        ("numjobs", p.jobs.to_string()),
        ("rwmixread", p.rwmixread.to_string()),
        ("direct", if p.direct { "1" } else { "0" }.to_string()),
        ("ioengine", engine.to_string()),
    ] {
        opts.insert(k.into(), json!(v));
    }
    let secs = c.elapsed_ns as f64 / 1e9;
    let pct = |ns: u64| {
        if secs > 0.0 {
            ns as f64 / 1e9 / secs * 100.0
        } else {
            0.0
        }
    };
    let (lns, lus, lms) = latency_maps(c);
    let depth: Map<String, Value> = depth_levels(&c.inflight_depth)
        .into_iter()
        .map(|(label, pct)| (label.to_string(), json!(pct)))
        .collect();
    // `fslab fio` cells carry fio's group and the job's own options
    let fio = c.plan.fio();
    let id = fio.map_or(id, |f| f.groupid);
    if let Some(f) = fio {
        opts = f.options.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    }
    let mut j = json!({
        "jobname": c.name, "groupid": id, "error": 0, "elapsed": secs.round() as u64,
        "job_runtime": c.elapsed_ns / 1_000_000, "job options": opts,
        "usr_cpu": pct(c.cpu.user_ns), "sys_cpu": pct(c.cpu.sys_ns), "ctx": 0, "majf": 0, "minf": 0,
        "iodepth_level": depth, "latency_ns": lns, "latency_us": lus, "latency_ms": lms,
    });
    for (key, dir) in [
        ("read", OpKind::Read),
        ("write", OpKind::Write),
        ("trim", OpKind::Fsync),
    ] {
        j[key] = match (dir, c.dir(dir)) {
            (OpKind::Fsync, _) | (_, None) => empty_dir(),
            (_, Some(d)) => dir_obj(c, d),
        };
    }
    j
}

impl Reporter for FioJson {
    fn render(&self, r: &Report) -> Vec<u8> {
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
            .map(|(i, c)| job(c, i))
            .collect();
        let v = json!({
            "fio version": format!("fslab-{}", r.fslab_version),
            "timestamp": ts / 1000, "timestamp_ms": ts, "time": r.started_at,
            "global options": {}, "jobs": jobs, "disk_util": [],
        });
        let mut out = serde_json::to_vec_pretty(&v).expect("JSON values serialise");
        out.push(b'\n');
        out
    }
}
