//! One cell as text: what was measured (the plan's header line, or the
//! metadata phases' table), its directions' table, and what follows it
//! (target, verdict, warnings, calibration, system, ranks, profile).

use super::probe::probe_text;
use super::trailer::{target_line, trailer};
use crate::model::{Cell, CellKind, DirResult};
use crate::report::render::doc::Doc;
use crate::units::{fmt_rate, Bytes, Nanos};
use comfy_table::{presets::UTF8_BORDERS_ONLY, CellAlignment, Table};
use std::fmt::Write;

/// The header line of an io (or fio) cell.
fn describe_plan(c: &Cell) -> String {
    let Some(p) = c.plan.io() else {
        return c.kind().name().to_string();
    };
    let mut d = format!("{} {} ", p.shape.rw.name(), Bytes(p.shape.bs));
    if p.shape.rw.name().ends_with("rw") {
        let _ = write!(d, "({}% reads) ", p.shape.rwmixread);
    }
    let _ = write!(d, "{} job(s), {} engine", p.jobs, p.ioengine.engine.name());
    if matches!(p.ioengine.engine.name(), "uring" | "libaio" | "posixaio") {
        let _ = write!(
            d,
            " at depth {} (batch {})",
            p.ioengine.iodepth, p.ioengine.iodepth_batch
        );
    }
    if p.ioengine.direct {
        d.push_str(", O_DIRECT");
    }
    if let Some(r) = p.limits.rate_iops {
        let _ = write!(d, ", paced at {r} IOPS/job");
    }
    d
}

/// The header line of a metadata cell.
fn describe_meta(c: &Cell) -> String {
    let Some(p) = c.plan.meta() else {
        return c.kind().name().to_string();
    };
    let mut d = format!("{} files/job in {} dir(s)", p.files, p.dirs);
    let (lo, hi) = (p.size_min, p.size_max);
    if hi > 0 {
        if lo == hi {
            let _ = write!(d, ", {} each", Bytes(hi));
        } else {
            let _ = write!(d, ", {}..{}", Bytes(lo), Bytes(hi));
        }
    }
    if !p.xattrs.is_empty() {
        let names: Vec<String> = p
            .xattrs
            .iter()
            .map(|x| format!("{}:{}", x.name.to_string_lossy(), x.size))
            .collect();
        let _ = write!(d, ", xattr {}", names.join(" "));
    }
    let _ = write!(d, ", {} job(s), {} engine", p.jobs, p.engine.name());
    if p.fsync {
        d.push_str(", fsync");
    }
    d
}

/// A metadata cell: one row per phase, as bonnie++ lists them, with latency.
fn meta_table(c: &Cell) -> Table {
    let mut tab = Table::new();
    tab.load_style(UTF8_BORDERS_ONLY);
    tab.set_header([
        "phase",
        "files",
        "files/s",
        "%CPU",
        "files/CPU-s",
        "mean",
        "p50",
        "p99",
        "p99.9",
        "max",
        "errors",
    ]);
    for d in &c.directions {
        let cpu = d.cpu_percent.unwrap_or(0.0);
        let per_cpu = if cpu > 0.0 { d.iops / (cpu / 100.0) } else { 0.0 };
        tab.add_row([
            d.phase.clone().unwrap_or_else(|| d.dir.name().to_string()),
            d.ops.to_string(),
            fmt_rate(d.iops),
            format!("{cpu:.0}"),
            fmt_rate(per_cpu),
            Nanos(d.lat.mean_ns as u64).to_string(),
            Nanos(d.lat.p(50.0)).to_string(),
            Nanos(d.lat.p(99.0)).to_string(),
            Nanos(d.lat.p(99.9)).to_string(),
            Nanos(d.lat.max_ns).to_string(),
            errors_text(d),
        ]);
    }
    tab
}

fn errors_text(d: &DirResult) -> String {
    if d.errors.is_empty() {
        "0".into()
    } else {
        d.errors
            .iter()
            .map(|(e, n)| format!("{e}:{n}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A replay cell, shaped like dbench's summary: per operation Count, mean,
/// p99 and max latency in ms, and mismatches; then the throughput line.
fn replay_text(s: &mut Doc, c: &Cell) {
    let Some(p) = c.plan.replay() else { return };
    let mut what = format!(
        "{} with {} client(s) for {}",
        p.loadfile.name,
        p.clients,
        humantime::format_duration(p.time)
    );
    if p.xattr {
        let _ = write!(what, ", {}-byte user.DosAttrib", p.xattr_size);
    }
    for (set, label) in [(p.sync, "O_SYNC"), (p.fsync, "fsync after writes")] {
        if set {
            let _ = write!(what, ", {label}");
        }
    }
    let _ = writeln!(s, "{}: {}, measured {:.2} s", c.name, what, c.elapsed_ns as f64 / 1e9);
    target_line(s, c);
    let mut tab = Table::new();
    tab.load_style(UTF8_BORDERS_ONLY);
    tab.set_header(["Operation", "Count", "AvgLat ms", "p99 ms", "MaxLat ms", "mismatches"]);
    let ms = |ns: f64| format!("{:.3}", ns / 1e6);
    for d in &c.directions {
        let mism: u64 = d.errors.values().sum();
        tab.add_row([
            d.dir.name().to_string(),
            (d.ops + mism).to_string(),
            ms(d.lat.mean_ns),
            ms(d.lat.p(99.0) as f64),
            ms(d.lat.max_ns as f64),
            if mism == 0 {
                "0".into()
            } else {
                format!("{mism} ({})", errors_text(d))
            },
        ]);
    }
    for (i, col) in tab.column_iter_mut().enumerate() {
        if i > 0 {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    s.table(tab);
    let mb = c.dbench_mb_s();
    let max = c.directions.iter().map(|d| d.lat.max_ns).max().unwrap_or(0);
    let _ = writeln!(
        s,
        "Throughput {mb:.2} MB/sec  {} clients  {} procs  max_latency={:.3} ms",
        p.clients,
        p.clients,
        max as f64 / 1e6
    );
    s.push_str("(as dbench: bytes of ReadX and WriteX per second, 1 MB = 10^6 bytes)\n");
    trailer(s, c);
}

pub(super) fn cell(s: &mut Doc, c: &Cell) {
    if let Some(e) = &c.error {
        let _ = writeln!(s, "{}: failed: {e}", c.name);
        return;
    }
    if let Some(p) = &c.probe {
        probe_text(s, c, p);
        return;
    }
    if c.kind() == CellKind::Replay {
        replay_text(s, c);
        return;
    }
    let t = &c.target;
    let is_meta = c.kind() == CellKind::Meta || c.directions.iter().any(|d| d.phase.is_some());
    let what = if is_meta { describe_meta(c) } else { describe_plan(c) };
    let _ = writeln!(s, "{}: {}, measured {:.2} s", c.name, what, c.elapsed_ns as f64 / 1e9);
    target_line(s, c);
    if t.direct {
        match t.direct_honoured {
            Some(true) => {
                let _ = writeln!(
                    s,
                    "O_DIRECT: honoured (DIOALIGN memory {} offset {})",
                    t.dio_mem_align, t.dio_offset_align
                );
            }
            Some(false) => {
                let _ = writeln!(
                    s,
                    "O_DIRECT: NOT honoured (the target ignores it; data went through the page cache)"
                );
            }
            None => {}
        }
    }
    if is_meta {
        let mut tab = meta_table(c);
        for (i, col) in tab.column_iter_mut().enumerate() {
            if i > 0 {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
        s.table(tab);
        s.push_str(&crate::report::xattrs::text(c));
        trailer(s, c);
        return;
    }
    s.table(io_table(c));
    trailer(s, c);
}

/// An io cell: one row per direction (and its scheduled, submission and
/// completion latency under it), with the share within each latency bucket.
fn io_table(c: &Cell) -> Table {
    let buckets: Vec<u64> = c
        .directions
        .first()
        .map(|d| d.lat_buckets.iter().map(|b| b.le_ns).collect())
        .unwrap_or_default();
    let mut tab = Table::new();
    tab.load_style(UTF8_BORDERS_ONLY);
    let mut head: Vec<String> = ["", "ops", "IOPS", "MB/s", "MiB/s", "mean", "p50", "p99", "p99.9", "max"]
        .iter()
        .map(|x| x.to_string())
        .collect();
    head.extend(buckets.iter().map(|&b| format!("≤{}", Nanos(b))));
    head.push("errors".into());
    tab.set_header(head);
    for d in &c.directions {
        let mut row = vec![
            d.dir.name().to_string(),
            d.ops.to_string(),
            fmt_rate(d.iops),
            format!("{:.1}", d.mb_s),
            format!("{:.1}", d.mib_s),
            Nanos(d.lat.mean_ns as u64).to_string(),
            Nanos(d.lat.p(50.0)).to_string(),
            Nanos(d.lat.p(99.0)).to_string(),
            Nanos(d.lat.p(99.9)).to_string(),
            Nanos(d.lat.max_ns).to_string(),
        ];
        row.extend(d.lat_buckets.iter().map(|b| format!("{:.2}%", b.share * 100.0)));
        row.push(errors_text(d));
        tab.add_row(row);
        for (what, l) in [("from schedule", &d.sched_lat), ("slat", &d.slat), ("clat", &d.clat)] {
            if let Some(l) = l {
                let mut row = vec![
                    format!("  {what}"),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                ];
                row.extend([l.mean_ns as u64, l.p(50.0), l.p(99.0), l.p(99.9), l.max_ns].map(|v| Nanos(v).to_string()));
                tab.add_row(row);
            }
        }
    }
    for (i, col) in tab.column_iter_mut().enumerate() {
        if i > 0 {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    tab
}
