//! fio's per-job log files (write_bw_log, write_lat_log, write_iops_log,
//! write_hist_log), in fio 3.33's format, from what the workers recorded
//! (`runner::oplog`). Written after the segment ran, each file replaced
//! atomically (a temporary file beside it, renamed over it: never written
//! through a symbolic link), at the paths validation checked.
//!
//! fio's lines (iolog.c flush_samples, flush_hist_samples):
//! `time, value, direction, block size, priority` (the priority is 0:
//! fslab sets none), and for histograms `time, direction, block size,
//! count of each of fio's 1856 bins`.

use crate::plan::fio::output::LogFiles;
use crate::plan::fio::FioJobPlan;
use crate::runner::oplog::{HistRow, LogSpec, Recorded, Sample, PLAT_NR};
use crate::runner::RunOut;
use std::fmt::Write;
use std::path::PathBuf;

/// What job `j`'s workers record.
pub(super) fn spec(j: &FioJobPlan) -> LogSpec {
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
    }
}

/// fio 3.33's lines: `time, value, direction, bs, prio`, with log_offset
/// `time, value, direction, bs, offset, prio` (fio's own output, checked).
fn samples(out: &mut String, v: &[Sample], offset: bool) {
    for s in v {
        let _ = if offset {
            writeln!(out, "{}, {}, {}, {}, {}, 0", s.t_ms, s.val, s.dir, s.bs, s.offset)
        } else {
            writeln!(out, "{}, {}, {}, {}, 0", s.t_ms, s.val, s.dir, s.bs)
        };
    }
}

fn hist(out: &mut String, v: &[HistRow]) {
    for h in v {
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
}

/// One log kind of one worker, as fio writes it.
fn text(kind: &str, r: &Recorded, out: &mut String) {
    match kind {
        "bw" => samples(out, &r.bw, r.offset),
        "iops" => samples(out, &r.iops, r.offset),
        "lat" => samples(out, &r.lat, r.offset),
        "clat" => samples(out, &r.clat, r.offset),
        "slat" => samples(out, &r.slat, r.offset),
        _ => hist(out, &r.hist),
    }
}

/// Writes every log of the segment's jobs: `files[k][c]` are job k's
/// clone c's (kind, path); `groups[k].jobs[c]` its recorded log. A path
/// several clones share (per_job_logs=0) gets them one after the other.
pub(super) fn write(files: &[Vec<LogFiles>], groups: &mut [RunOut]) {
    let mut texts: Vec<(PathBuf, String)> = Vec::new();
    for (k, clones) in files.iter().enumerate() {
        for (c, kinds) in clones.iter().enumerate() {
            let rec = groups
                .get_mut(k)
                .and_then(|g| g.jobs.get_mut(c))
                .and_then(|w| w.log.take())
                .map(|b| *b)
                .unwrap_or_default();
            for (kind, path) in kinds {
                let i = match texts.iter().position(|(p, _)| p == path) {
                    Some(i) => i,
                    None => {
                        texts.push((path.clone(), String::new()));
                        texts.len() - 1
                    }
                };
                text(kind, &rec, &mut texts[i].1);
            }
        }
    }
    for (p, t) in texts {
        if let Err(e) = crate::plan::write_atomically(&p, t.as_bytes()) {
            eprintln!("fslab fio: error: writing the log {}: {e}", p.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_fios() {
        let r = Recorded {
            bw: vec![Sample {
                t_ms: 86,
                val: 47,
                dir: 0,
                bs: 4096,
                offset: 12288,
            }],
            hist: vec![HistRow {
                t_ms: 186,
                dir: 0,
                bs: 4096,
                bins: vec![(1, 2), (1855, 3)],
            }],
            ..Default::default()
        };
        let mut s = String::new();
        text("bw", &r, &mut s);
        assert_eq!(s, "86, 47, 0, 4096, 0\n");
        let mut o = String::new();
        text(
            "bw",
            &Recorded {
                offset: true,
                ..r.clone()
            },
            &mut o,
        );
        assert_eq!(o, "86, 47, 0, 4096, 12288, 0\n");
        let mut h = String::new();
        text("clat_hist", &r, &mut h);
        let cols: Vec<&str> = h.trim_end().split(", ").collect();
        assert_eq!(cols.len(), 3 + PLAT_NR);
        assert_eq!(&cols[..5], &["186", "0", "4096", "0", "2"]);
        assert_eq!(cols[3 + 1855], "3");
    }
}
