//! fio's per-job log files (write_bw_log, write_lat_log, write_iops_log,
//! write_hist_log), in fio 3.33's format, from what the workers recorded
//! (`runner::oplog`, which spools each log's lines to an unnamed file as
//! they come). Written after the segment ran, each file replaced
//! atomically (a temporary file beside it, renamed over it: never written
//! through a symbolic link), at the paths validation checked, copied from
//! the spools (a log is never whole in memory).
//!
//! fio's lines (iolog.c flush_samples, flush_hist_samples):
//! `time, value, direction, block size, priority` (the priority is 0:
//! fslab sets none), and for histograms `time, direction, block size,
//! count of each of fio's 1856 bins`.

use crate::plan::fio::output::LogFiles;
use crate::plan::fio::FioJobPlan;
use crate::runner::oplog::{LogSpec, Recorded};
use crate::runner::RunOut;
use std::path::PathBuf;

/// What job `j`'s workers record; `files`: the paths of its clones' logs
/// (the spools go beside the first).
pub(super) fn spec(j: &FioJobPlan, files: &[LogFiles]) -> LogSpec {
    let l = &j.fio.logs;
    LogSpec {
        bw: l.bw.is_some(),
        iops: l.iops.is_some(),
        lat: l.lat.is_some(),
        hist: l.hist.is_some(),
        avg_ms: l.avg_msec,
        max_value: l.max_value,
        hist_ms: l.hist_msec,
        offset: l.offset,
        prio: l.prio,
        spool_dir: files
            .iter()
            .flatten()
            .next()
            .and_then(|(_, p)| p.parent())
            // a bare name's directory is the current one
            .map(|d| {
                if d.as_os_str().is_empty() {
                    ".".into()
                } else {
                    d.to_path_buf()
                }
            }),
    }
}

/// One log of one clone: (job, clone, kind).
type Part = (usize, usize, &'static str);

/// Whether job `j` measures what log `kind` holds: fio writes the logs of
/// what disable_lat, disable_clat, disable_slat and disable_bw_measurement
/// (all four by gtod_reduce) turn off, not at all (a latency log) or
/// empty (bw, iops); fslab measures everything anyway, and writes them as
/// fio does.
pub(super) fn measured(j: &FioJobPlan, kind: &str) -> bool {
    let r = &j.fio.logs.report;
    match kind {
        "lat" => !r.disable_lat,
        "clat" | "clat_hist" => !r.disable_clat,
        "slat" => !r.disable_slat,
        "bw" | "iops" => !r.disable_bw,
        _ => true,
    }
}

/// Writes every log of the segment's jobs: `files[k][c]` are job k's
/// clone c's (kind, path); `groups[k].jobs[c]` its recorded log, written
/// where `jobs[k]` measures its kind ([`measured`]). A path several clones
/// share (per_job_logs=0) gets them one after the other.
pub(super) fn write(files: &[Vec<LogFiles>], groups: &mut [RunOut], jobs: &[&FioJobPlan]) {
    // per path, in order: (job, clone, kind)
    let mut parts: Vec<(PathBuf, Vec<Part>)> = Vec::new();
    let mut recs: Vec<Vec<Recorded>> = Vec::new();
    for (k, clones) in files.iter().enumerate() {
        let mut mine = Vec::new();
        for (c, kinds) in clones.iter().enumerate() {
            let rec = groups
                .get_mut(k)
                .and_then(|g| g.jobs.get_mut(c))
                .and_then(|w| w.log.take())
                .map(|b| *b)
                .unwrap_or_default();
            if let Some(e) = &rec.error {
                let first = kinds.first().map(|(_, p)| p.display().to_string()).unwrap_or_default();
                eprintln!("fslab fio: error: the log {first} is incomplete: {e}");
            }
            mine.push(rec);
            for (kind, path) in kinds {
                let i = match parts.iter().position(|(p, _)| p == path) {
                    Some(i) => i,
                    None => {
                        parts.push((path.clone(), Vec::new()));
                        parts.len() - 1
                    }
                };
                parts[i].1.push((k, c, kind));
            }
        }
        recs.push(mine);
    }
    for (p, mut from) in parts {
        // fio makes no latency log of what it does not measure, and an
        // empty bw or iops log
        from.retain(|&(k, _, kind)| jobs.get(k).is_none_or(|j| measured(j, kind)) || kind == "bw" || kind == "iops");
        if from.is_empty() {
            continue;
        }
        let r = crate::plan::write_atomically_with(&p, &mut |f| {
            let mut w = std::io::BufWriter::new(f);
            for &(k, c, kind) in &from {
                if jobs.get(k).is_some_and(|j| !measured(j, kind)) {
                    continue;
                }
                recs[k][c].copy_to(kind, &mut w)?;
            }
            std::io::Write::flush(&mut w)
        });
        if let Err(e) = r {
            eprintln!("fslab fio: error: writing the log {}: {e}", p.display());
        }
    }
}
