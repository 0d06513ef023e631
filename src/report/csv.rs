//! `--output csv`: one row per (cell, operation, metric), with stable column
//! names, for spreadsheets and pandas:
//! `cell,filesystem,workload,repeat,operation,phase,metric,value`
//! (filesystem, workload and repeat are empty outside `fslab run`; cells that
//! could not run have no rows).

use crate::model::Report;
use crate::report::render::Reporter;
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

/// A text cell (a name, never a figure): quoted when it holds a comma, a
/// quote or a line break; and when it begins with `=`, `+`, `-`, `@`, a
/// tab or a carriage return, which a spreadsheet reads as a formula (a
/// plan's workload named `=HYPERLINK(...)` would run in whoever opens the
/// file), prefixed with a single quote inside the quotes, as OWASP's CSV
/// injection advice says. Figures are written as numbers, never through
/// here, so a negative one stays a number. (bonnie++'s CSV keeps its own
/// format: bon_csv2txt must read it.)
pub(crate) fn field(s: &str) -> String {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("\"'{}\"", s.replace('"', "\"\""))
    } else if s.contains([',', '"', '\n', '\r']) {
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
                // against this host's floor (the calibration card)
                let op_name = d.phase.as_deref().unwrap_or(d.dir.name());
                if let Some(e) = c.efficiency.iter().find(|e| e.op == op_name) {
                    row("floor_ns", e.floor_ns as f64);
                    row("floor_ratio", e.ratio);
                }
            }
            if c.error.is_none() {
                let cell = field(&c.name);
                system_rows(&mut s, c, &format!("{cell},{fs},{wl},{rep}"));
            }
        }
        s.into_bytes()
    }
}

/// The rows of `cell.system`, `cell.xattrs` and `cell.profile` (after the
/// cell's direction rows; docs/results.md): operation `system` for the
/// machine and interference, `device:NAME` per device of the stack (its
/// `iostat -x` figures over the cell, and per direction the device's await
/// and share of fslab's latency), `xattrs` and `profile`.
fn system_rows(s: &mut String, c: &crate::model::Cell, prefix: &str) {
    let mut row = |op: &str, metric: &str, v: f64| {
        let _ = writeln!(s, "{prefix},{},,{metric},{v}", field(op));
    };
    if let Some(sys) = &c.system {
        let t = &sys.total;
        let i = &sys.interference;
        for (m, v) in [
            ("cpu_user_pct", t.cpu.user),
            ("cpu_nice_pct", t.cpu.nice),
            ("cpu_system_pct", t.cpu.system),
            ("cpu_iowait_pct", t.cpu.iowait),
            ("cpu_irq_pct", t.cpu.irq),
            ("cpu_softirq_pct", t.cpu.softirq),
            ("cpu_steal_pct", t.cpu.steal),
            ("cpu_idle_pct", t.cpu.idle),
            ("fslab_cpu_pct", t.fslab_pct),
            ("ctxt_per_s", t.ctxt_s),
            ("pgpgin_kib_per_s", t.pgpgin_kib_s),
            ("pgpgout_kib_per_s", t.pgpgout_kib_s),
        ] {
            row("system", m, v);
        }
        let (dirty, wb) = super::system::dirty_peaks(sys);
        row("system", "dirty_peak_kib", dirty as f64);
        row("system", "writeback_peak_kib", wb as f64);
        if let Some(p) = &t.psi {
            row("system", "psi_cpu_some_pct", p.cpu_some);
            row("system", "psi_io_some_pct", p.io_some);
            row("system", "psi_io_full_pct", p.io_full);
            row("system", "psi_memory_some_pct", p.memory_some);
            row("system", "psi_memory_full_pct", p.memory_full);
        }
        row("system", "other_cpu_pct", i.other_cpu_pct);
        row("system", "steal_pct", i.steal_pct);
        row("system", "kernel_threads_pct", i.kernel_threads_pct);
        row("system", "disturbed", if i.disturbed { 1.0 } else { 0.0 });
        if sys.attempts > 0 {
            row("system", "attempts", sys.attempts as f64);
        }
        for d in &sys.devices {
            let op = format!("device:{}", d.name);
            let t = &d.total;
            for (m, v) in [
                ("r_per_s", t.r_s),
                ("w_per_s", t.w_s),
                ("rmb_per_s", t.rmb_s),
                ("wmb_per_s", t.wmb_s),
                ("r_await_ms", t.r_await_ms),
                ("w_await_ms", t.w_await_ms),
                ("rareq_kib", t.rareq_kib),
                ("wareq_kib", t.wareq_kib),
                ("d_per_s", t.d_s),
                ("d_await_ms", t.d_await_ms),
                ("f_per_s", t.f_s),
                ("f_await_ms", t.f_await_ms),
                ("aqu_sz", t.aqu_sz),
                ("util_pct", t.util_pct),
            ] {
                row(&op, m, v);
            }
            for l in sys.latency_share.iter().filter(|l| l.device == d.name) {
                let dir = l.dir.name();
                row(&op, &format!("{dir}_await_us"), l.await_us);
                row(&op, &format!("{dir}_fslab_mean_us"), l.mean_lat_us);
                if let Some(p) = l.share_pct {
                    row(&op, &format!("{dir}_share_pct"), p);
                }
            }
        }
    }
    if let Some(x) = c.xattrs.as_ref().filter(|x| x.error.is_none()) {
        row("xattrs", "sampled", x.sampled as f64);
        row("xattrs", "in_inode", x.in_inode as f64);
        row("xattrs", "external", x.external as f64);
        row("xattrs", "none", x.none as f64);
    }
    if let Some(p) = &c.profile {
        row(
            "profile",
            "samples",
            p.phases.iter().map(|ph| ph.samples).sum::<u64>() as f64,
        );
        row("profile", "overhead_pct", p.overhead_pct);
    }
}
