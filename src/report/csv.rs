//! `--output csv`: one row per (cell, operation, metric), with stable column
//! names, for spreadsheets and pandas:
//! `cell,filesystem,workload,repeat,operation,phase,metric,value`
//! (filesystem, workload and repeat are empty outside `fslab run`; cells that
//! could not run have no rows).

use super::Reporter;
use crate::model::Report;
use std::fmt::Write;

pub struct Csv;

/// The header, in order (documented in docs/results.md).
pub const COLUMNS: [&str; 8] = [
    "cell",
    "filesystem",
    "workload",
    "repeat",
    "operation",
    "phase",
    "metric",
    "value",
];

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Reporter for Csv {
    fn render(&self, r: &Report) -> Vec<u8> {
        let mut s = format!("{}\n", COLUMNS.join(","));
        for c in &r.cells {
            let (fs, wl, rep) = match &c.lab {
                Some(l) => (field(&l.filesystem), field(&l.workload), l.repeat.to_string()),
                None => Default::default(),
            };
            for d in &c.directions {
                let (cell, op, phase) = (
                    field(&c.name),
                    field(d.dir.name()),
                    field(d.phase.as_deref().unwrap_or("")),
                );
                let mut row = |metric: &str, v: f64| {
                    let _ = writeln!(s, "{cell},{fs},{wl},{rep},{op},{phase},{metric},{v}");
                };
                row("ops", d.ops as f64);
                row("bytes", d.bytes as f64);
                row("errors", d.errors.values().sum::<u64>() as f64);
                row("ops_per_s", d.iops);
                row("mb_per_s", d.mb_s);
                row("mib_per_s", d.mib_s);
                row("lat_min_ns", d.lat.min_ns as f64);
                row("lat_mean_ns", d.lat.mean_ns);
                row("lat_stddev_ns", d.lat.stddev_ns);
                row("lat_max_ns", d.lat.max_ns as f64);
                for p in ["50", "90", "99", "99.9", "99.99", "99.999"] {
                    row(
                        &format!("lat_p{p}_ns"),
                        d.lat.percentiles.get(p).copied().unwrap_or(0) as f64,
                    );
                }
                for b in &d.lat_buckets {
                    row(&format!("share_le_{}ns", b.le_ns), b.share);
                }
                if let Some(cpu) = d.cpu_percent {
                    row("cpu_percent", cpu);
                }
                if let Some(l) = &d.sched_lat {
                    row("sched_lat_p99_ns", l.p(99.0) as f64);
                    row("sched_lat_max_ns", l.max_ns as f64);
                }
                if let Some(r) = &d.ranks {
                    row("ranks", r.per_rank.len() as f64);
                    row("rank_min_ops_per_s", r.min_ops_per_s);
                    row("rank_mean_ops_per_s", r.mean_ops_per_s);
                    row("rank_max_ops_per_s", r.max_ops_per_s);
                    row("slowest_rank", r.slowest_rank as f64);
                }
                if let Some(w) = &d.stonewall {
                    row("stonewall_s", w.at_ns as f64 / 1e9);
                    row("stonewall_ops_per_s", w.ops_per_s_at_stonewall);
                    row("last_stopped_s", w.last_ns as f64 / 1e9);
                    row("last_stopped_ops_per_s", w.ops_per_s_at_last);
                }
            }
        }
        s.into_bytes()
    }
}
