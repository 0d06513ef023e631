//! What fio's formats (JSON, terse, normal text) all read from a cell the
//! same way: the percentile list, the IO depth buckets, the latency maps,
//! the group's bandwidth share, the errno fio reports. One place, so the
//! three formats agree and none of them imports another.

use crate::model::{Cell, RateSamples, Report};
use crate::stats::{LatHist, OpKind};
use serde_json::{json, Map, Value};

/// fio's default percentile list, keyed as fio prints them ("99.900000").
const FIO_PCTS: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99,
];

/// A fio job on one of fio's metadata engines (filecreate, filestat...):
/// its block size, which fio's fake I/O counts are in.
pub(crate) fn meta_engine_bs(c: &Cell) -> Option<u64> {
    let e = c.plan.fio()?.options.get("ioengine")?;
    crate::plan::fio::engines::MetaOp::from_name(e)?;
    Some(c.plan.io()?.shape.bs.max(1))
}

/// fio's percentile_list, when the job had one.
pub(crate) fn pcts_of(c: &Cell) -> Vec<f64> {
    c.plan
        .io()
        .map(|p| p.lat_percentiles.clone())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| FIO_PCTS.to_vec())
}

/// fio's bw_agg, a job's share of its group's bandwidth in percent (stat.c:
/// the mean of the job's bandwidth samples over the group's aggregate, the
/// group's bytes over its longest runtime, at most 100; 0 without samples).
/// A cell of `fslab io` is a group of its own.
pub(crate) fn share_of_group(r: &Report, c: &Cell, dir: OpKind, mean_kib: f64, samples: usize) -> f64 {
    if samples == 0 {
        return 0.0;
    }
    let group = c.plan.fio().map(|f| f.groupid);
    let members: Vec<&Cell> = match group {
        Some(g) => r
            .cells
            .iter()
            .filter(|o| o.plan.fio().map(|f| f.groupid) == Some(g))
            .collect(),
        None => vec![c],
    };
    let bytes: u64 = members.iter().filter_map(|o| o.dir(dir)).map(|d| d.bytes).sum();
    // fio's runtimes: microseconds rounded up to a millisecond
    let run_ms = members
        .iter()
        .filter(|o| o.dir(dir).is_some())
        .map(|o| (o.elapsed_ns / 1000).div_ceil(1000))
        .max()
        .unwrap_or(0);
    // as fio's convert_agg_kbytes_percent: the aggregate in bytes/s (an
    // integer), the mean passed as an int
    match (bytes * 1000).checked_div(run_ms) {
        Some(agg) if agg > 1024 => ((mean_kib as i64) as f64 * 100.0 / (agg as f64 / 1024.0)).min(100.0),
        _ => 100.0,
    }
}

/// fio's latency_ns/us/ms maps: percent of all I/Os whose latency falls in
/// (previous key, key], from the merged histograms of reads and writes.
/// Exact shares, summing to 100: fio's stat_calc_lat raises a non-empty
/// share under 0.01% to 0.01%, a display floor the JSON's full precision
/// does not need.
pub(crate) fn latency_maps(c: &Cell) -> (Value, Value, Value) {
    let mut all = LatHist::new();
    for d in c
        .directions
        .iter()
        .filter(|d| matches!(d.dir, OpKind::Read | OpKind::Write | OpKind::Trim))
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

/// fio's "IO depths" buckets (io_u_mark_depth) of a cell: each is labelled
/// with its lowest depth and runs to the next label ("4" is 4 to 7), the
/// submissions at each in-flight depth, as counted by the queueing
/// engines. A sync engine counts none: it has one operation in flight per
/// thread by construction, so its reads, writes and syncs are all at the
/// depth of one. As fio's stat_calc_dist, each count is a percentage of the
/// reads and writes issued, which the syncs are not among (so a job with fsync=4
/// shows "1=125.0%", as fio's); a job that did none is 0% everywhere, and
/// a share under 0.1% that is not empty shows as 0.1%.
pub(crate) fn depth_levels(c: &Cell) -> Vec<(&'static str, f64)> {
    let issued = |k: OpKind| c.dir(k).map_or(0, |d| d.ops + d.errors.values().sum::<u64>());
    let syncs = issued(OpKind::Fsync);
    let sync = [
        0,
        issued(OpKind::Read) + issued(OpKind::Write) + issued(OpKind::Trim) + syncs,
    ];
    let counts: &[u64] = if c.inflight_depth.iter().any(|&n| n > 0) {
        &c.inflight_depth
    } else {
        &sync
    };
    // the reads and writes submitted (those still in flight at the end of
    // a timed run included, as fio's total_io_u)
    let total = counts.iter().sum::<u64>().saturating_sub(syncs);
    let mut out = Vec::new();
    let levels = [
        ("1", 0usize),
        ("2", 2),
        ("4", 4),
        ("8", 8),
        ("16", 16),
        ("32", 32),
        (">=64", 64),
    ];
    for (i, (label, lo)) in levels.iter().enumerate() {
        let hi = levels.get(i + 1).map_or(usize::MAX, |l| l.1);
        let n: u64 = counts
            .iter()
            .enumerate()
            .filter(|(d, _)| *d >= *lo && *d < hi)
            .map(|(_, n)| *n)
            .sum();
        let pct = if total == 0 {
            0.0
        } else {
            (n as f64 * 100.0 / total as f64).max(if n > 0 { 0.1 } else { 0.0 })
        };
        out.push((*label, pct));
    }
    out
}

/// fio's latency_target fields of a job: the depth (the one the search
/// found, else the job's iodepth), the target in ns, the percentile and the
/// window in µs (0, 100 and 0 without a target), as stat.c reports them.
pub(crate) fn latency_fields(c: &Cell) -> (u64, u64, f64, u64) {
    let Some(p) = c.plan.io() else {
        return (1, 0, 100.0, 0);
    };
    let found = c.plan.fio().and_then(|f| f.latency_depth);
    // fio reports the iodepth as written, also where a sync engine capped it at 1
    let written = c
        .plan
        .fio()
        .and_then(|f| f.options.get("iodepth"))
        .and_then(|v| v.trim().parse::<u64>().ok());
    let depth = found.map_or(written.unwrap_or(p.ioengine.iodepth as u64), u64::from);
    match &p.pacing.latency {
        Some(l) => (depth, l.target_ns, l.percentile, l.window_us),
        None => (depth, 0, 100.0, 0),
    }
}

/// With fio's continue_on_error: the job's failed operations and the errno
/// of the first kind ([`first_errno`]).
pub(crate) fn errors_if_continued(c: &Cell) -> Option<(u64, i32)> {
    let v = c.plan.fio()?.options.get("continue_on_error")?;
    if matches!(v.as_str(), "none" | "0" | "false") {
        return None;
    }
    let n = c.directions.iter().map(|d| d.errors.values().sum::<u64>()).sum();
    Some((n, first_errno(c)))
}

/// fio's `ts->error`, the "error" of its JSON and the "err=" of its text:
/// the errno that ended the job, or with continue_on_error the job's first
/// The job's user and system CPU time, % of its elapsed time, as fio's
/// usr_cpu and sys_cpu (0 for a job that took no time).
pub(crate) fn cpu_pcts(c: &Cell) -> (f64, f64) {
    let secs = c.elapsed_ns as f64 / 1e9;
    let pct = |ns: u64| {
        if secs > 0.0 {
            ns as f64 / 1e9 / secs * 100.0
        } else {
            0.0
        }
    };
    (pct(c.cpu.user_ns), pct(c.cpu.sys_ns))
}

/// (fio's `td->first_error`); 0 when no operation failed. fslab keeps
/// counts per errno, not their order: where a job had several kinds, this
/// is the first by name. A verification mismatch is fio's EILSEQ.
/// fio's `job_runtime`: the sum of the cell's jobs' own measured times (a
/// group_reporting cell of 4 clones that ran 1 s each: 4 s, as fio 3.33
/// reports it); the cell's time when the result did not keep them.
pub(crate) fn job_runtime_ns(c: &Cell) -> u64 {
    let own: Option<u64> = c.cpu.jobs.iter().map(|j| j.elapsed_ns).sum();
    match own {
        Some(ns) if !c.cpu.jobs.is_empty() => ns,
        _ => c.elapsed_ns,
    }
}

pub(crate) fn first_errno(c: &Cell) -> i32 {
    c.directions
        .iter()
        .flat_map(|d| d.errors.iter())
        .filter(|(_, &k)| k > 0)
        .find_map(|(name, _)| {
            if *name == crate::errno::errno_name(crate::errno::VERIFY_MISMATCH) {
                return Some(libc::EILSEQ);
            }
            (1..4096).find(|&e| crate::errno::errno_name(e) == *name)
        })
        .unwrap_or(0)
}

/// fio's job description, when the job file gave one.
pub(crate) fn description(c: &Cell) -> Option<&str> {
    c.plan
        .fio()?
        .options
        .get("description")
        .map(String::as_str)
        .filter(|d| !d.is_empty())
}

/// fio's `sync` total_ios: total_io_u[DDIR_SYNC], the fsyncs alone, while
/// lat_ns holds the fdatasyncs too (fio 3.33, sync, psync, libaio and
/// io_uring: fsync=8 over 128 writes gives 15 and 15, fdatasync=8 gives 0
/// and 15). fslab counts both as one kind: with both options the fsyncs
/// are those at the multiples of fsync=N among the writes but the last
/// (fio issues a sync when it picks the next I/O).
pub(crate) fn fsyncs(c: &Cell, syncs: u64) -> u64 {
    let Some(p) = c.plan.io() else {
        return 0;
    };
    match (p.shape.fsync_every, p.shape.fdatasync_every) {
        (0, _) => 0,
        (_, 0) => syncs,
        (every, _) => {
            let writes = c.dir(OpKind::Write).map_or(0, |d| d.ops);
            (writes.saturating_sub(1) / every).min(syncs)
        }
    }
}

/// A direction's bw (KiB/s) and iops samples, as fio's bw_stat and
/// iops_stat: the 500 ms samples the result holds, or for a result of a
/// version that did not take them, its per-second series (as those
/// versions reported); none with disable_bw.
pub(crate) fn rate_samples(c: &Cell, d: &crate::model::DirResult) -> (RateSamples, RateSamples) {
    let off = c.plan.fio().is_some_and(|f| f.report.disable_bw);
    match (off, d.bw_samples, d.iops_samples) {
        (true, ..) => Default::default(),
        (false, Some(b), Some(i)) => (b, i),
        _ => {
            let kib: Vec<f64> = c.series.iter().map(|p| p.dir(d.dir).bytes as f64 / 1024.0).collect();
            let ops: Vec<f64> = c.series.iter().map(|p| p.dir(d.dir).ops as f64).collect();
            (RateSamples::of_values(&kib), RateSamples::of_values(&ops))
        }
    }
}
