//! The human report: what was measured, then one table row per direction.

use super::render::doc::Doc;
use crate::model::probe::ProbeData;
use crate::model::{Cell, CellKind, DirResult, Report};
use crate::plan::{TableFormat, TextStyle};
use crate::report::render::Reporter;
use crate::units::{fmt_rate, Bytes, Nanos};
use comfy_table::{presets::UTF8_BORDERS_ONLY, CellAlignment, Table};
use std::fmt::Write;

/// The report with boxed tables.
pub struct Text;

impl Reporter for Text {
    fn render(&self, r: &Report) -> Vec<u8> {
        render_as(r, TextStyle::default()).into_bytes()
    }
}

/// The report with its tables in another format (`fslab run --format`),
/// or its warnings kept in the JSON (`--quiet-warnings`). CSV is not a
/// layout of the report: it gives the comparison's rows (`compare_csv`)
/// for a plan of several filesystems, else `--output csv`'s.
pub struct TextAs(pub TextStyle);

impl Reporter for TextAs {
    fn render(&self, r: &Report) -> Vec<u8> {
        if self.0.tables != TableFormat::Csv {
            return render_as(r, self.0).into_bytes();
        }
        if r.lab.as_ref().is_some_and(|l| l.columns().len() > 1) {
            let c = super::compare::build(&[(String::new(), r)], None);
            super::compare::csv::render(&c).into_bytes()
        } else {
            super::csv::Csv.render(r)
        }
    }
}

/// The report laid out as `f` (not CSV).
fn render_as(r: &Report, style: TextStyle) -> String {
    let f = style.tables;
    let mut s = Doc::with_quiet_warnings(style.quiet_warnings);
    let s = &mut s;
    if let Some(l) = r.lab.as_ref().filter(|l| l.columns().len() > 1) {
        // A lab run: the comparison; every cell's detail is in the JSON.
        let kernels = if l.kernels.is_empty() {
            String::new()
        } else {
            format!(" x {} kernel(s)", l.kernels.len())
        };
        let _ = writeln!(
            s,
            "fslab run {}: {} filesystem(s) x {} workload(s){kernels} x {} repeat(s)",
            l.file.as_deref().unwrap_or("(quick suite)"),
            l.filesystems.len(),
            l.workloads.len(),
            l.repeat
        );
        super::compare::write(s, &super::compare::build(&[(String::new(), r)], None));
        s.push_str(&super::xattrs::lab_text(r));
        s.push('\n');
        super::system::lab_text(s, &r.cells);
    } else {
        for c in &r.cells {
            cell(s, c);
            s.push('\n');
        }
        if r.cells.len() > 1 {
            summary(s, r);
        }
    }
    let _ = writeln!(
        s,
        "host: {} {} ({} cores, {}), fslab {} peak RSS {}",
        r.host.kernel,
        r.host.cpu_model,
        r.host.cores,
        Bytes(r.host.memory_bytes),
        r.fslab_version,
        Bytes(r.max_rss_kib * 1024)
    );
    if r.interrupted {
        s.push_str("INTERRUPTED: results cover the time before the stop\n");
    }
    std::mem::take(s).render(f)
}

/// The header line of an io (or fio) cell.
fn describe_plan(c: &Cell) -> String {
    let Some(p) = c.plan.io() else {
        return c.kind().name().to_string();
    };
    let mut d = format!("{} {} ", p.rw.name(), Bytes(p.bs));
    if p.rw.name().ends_with("rw") {
        let _ = write!(d, "({}% reads) ", p.rwmixread);
    }
    let _ = write!(d, "{} job(s), {} engine", p.jobs, p.engine.name());
    if p.engine.name() == "uring" {
        let _ = write!(d, " at depth {} (batch {})", p.iodepth, p.iodepth_batch);
    }
    if p.direct {
        d.push_str(", O_DIRECT");
    }
    if let Some(r) = p.rate_iops {
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

/// A probe cell: one row per phase, the stalls, then the worst probe of
/// every second as a sparkline (log scale) with the page cache beside it.
fn probe_text(s: &mut Doc, c: &Cell, p: &ProbeData) {
    let _ = writeln!(
        s,
        "{}: {} probe every {} (stall ≥ {}){}, measured {:.2} s",
        c.name,
        p.op,
        Nanos(p.interval_ns),
        Nanos(p.stall_ns),
        p.load.as_ref().map(|l| format!(", load {l}")).unwrap_or_default(),
        c.elapsed_ns as f64 / 1e9
    );
    target_line(s, c);
    s.table(probe_table(p));
    s.push_str("(sched: from the scheduled slot; a probe that overran counts the slots it missed)\n");
    for st in p.stalls.iter().take(10) {
        let _ = writeln!(
            s,
            "stall at {:.3} s ({}): {} at most, {} at least, {} slot(s) missed",
            st.start_ns as f64 / 1e9,
            st.phase,
            Nanos(st.max_ns),
            Nanos(st.min_ns),
            st.missed
        );
    }
    if p.stalls.len() > 10 {
        let _ = writeln!(s, "... {} stalls in all (see the JSON)", p.stalls.len());
    }
    sparkline(s, c, p);
    if let Some(m) = p.context.iter().map(|x| x.dirty_kib).max() {
        let wb = p.context.iter().map(|x| x.writeback_kib).max().unwrap_or(0);
        let _ = writeln!(
            s,
            "page cache: Dirty up to {}, Writeback up to {}",
            Bytes(m * 1024),
            Bytes(wb * 1024)
        );
    }
    trailer(s, c);
}

/// A probe cell's phases, one row each.
fn probe_table(p: &ProbeData) -> Table {
    let mut tab = Table::new();
    tab.load_style(UTF8_BORDERS_ONLY);
    tab.set_header([
        "phase",
        "probes",
        "missed",
        "stalls",
        "p50",
        "p99",
        "max",
        "p99 sched",
        "max sched",
        "load MB/s",
        "errors",
    ]);
    for ph in &p.phases {
        tab.add_row([
            ph.name.clone(),
            ph.probes.to_string(),
            ph.missed.to_string(),
            ph.stalls.to_string(),
            Nanos(ph.lat.p(50.0)).to_string(),
            Nanos(ph.lat.p(99.0)).to_string(),
            Nanos(ph.lat.max_ns).to_string(),
            Nanos(ph.sched_lat.p(99.0)).to_string(),
            Nanos(ph.sched_lat.max_ns).to_string(),
            format!("{:.1}", ph.load_mb_s),
            if ph.errors.is_empty() {
                "0".into()
            } else {
                ph.errors
                    .iter()
                    .map(|(e, n)| format!("{e}:{n}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            },
        ]);
    }
    for (i, col) in tab.column_iter_mut().enumerate() {
        if i > 0 {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    tab
}

/// The worst probe of every second as a sparkline, the phases marked under it.
fn sparkline(s: &mut String, c: &Cell, p: &ProbeData) {
    // worst probe per second, on a log scale from 10 µs to 10 s
    let secs = (c.elapsed_ns / 1_000_000_000 + 1) as usize;
    let mut worst = vec![0u64; secs];
    for x in &p.samples {
        let i = ((x.t_ns / 1_000_000_000) as usize).min(secs - 1);
        worst[i] = worst[i].max(x.sched_lat_ns);
    }
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let spark: String = worst
        .iter()
        .map(|&w| {
            if w == 0 {
                ' '
            } else {
                let l = ((w as f64).log10() - 4.0) / 6.0 * 8.0;
                BARS[(l.max(0.0) as usize).min(7)]
            }
        })
        .collect();
    let _ = writeln!(s, "worst probe per second (▁ 10 µs .. █ ≥ 1 s, log scale):");
    let _ = writeln!(s, "  {spark}");
    let mut marks = String::new();
    for ph in &p.phases {
        let at = (ph.start_ns / 1_000_000_000) as usize;
        while marks.chars().count() < at {
            marks.push(' ');
        }
        marks.push('^');
        marks.push_str(&ph.name);
    }
    let _ = writeln!(s, "  {marks}");
}

fn target_line(s: &mut String, c: &Cell) {
    let t = &c.target;
    let mut on = format!(
        "target: {} ({}",
        t.path.display(),
        if t.fs_type.is_empty() { "?" } else { &t.fs_type }
    );
    if let Some(d) = &t.device {
        let _ = write!(on, " on {d}");
    }
    if let Some(b) = &t.loop_backing_file {
        let _ = write!(on, ", backed by {b}");
        if let Some(dio) = t.loop_direct_io {
            let _ = write!(on, " with direct-io {}", if dio { "on" } else { "off" });
        }
    }
    if let Some(q) = &t.queue {
        let _ = write!(on, ", scheduler {}", q.scheduler);
    }
    on.push(')');
    if let Some(o) = &t.mount_options {
        let _ = write!(on, " mount options {o}");
    }
    let _ = writeln!(s, "{on}");
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

fn cell(s: &mut Doc, c: &Cell) {
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
        s.push_str(&super::xattrs::text(c));
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

/// CPU, queue depths, warnings and errors under a cell's table.
fn trailer(s: &mut Doc, c: &Cell) {
    let quiet = s.quiet_warnings();
    s.push_str(&super::ranks::text(c));
    let _ = writeln!(
        s,
        "cpu: user {:.2} s, sys {:.2} s, {:.0}% of one core",
        c.cpu.user_ns as f64 / 1e9,
        c.cpu.sys_ns as f64 / 1e9,
        c.cpu.percent_of_core
    );
    super::profile::text(s, c);
    if c.inflight_depth.len() > 2 {
        let _ = writeln!(s, "in flight at submit: {}", depth_levels(&c.inflight_depth));
    }
    if let Some(l) = super::verdict::line(c, quiet) {
        let _ = writeln!(s, "{l}");
    }
    for w in c.warnings.iter().filter(|_| !quiet) {
        let _ = writeln!(s, "warning: {w}");
    }
    for e in &c.job_errors {
        let _ = writeln!(s, "job error: {e}");
    }
    extras(s, c);
    if c.interrupted {
        s.push_str("interrupted\n");
    }
}

/// Per-cell extras under the trailer, in this order: the figures against
/// the host's floors (`cell.efficiency`), the system block (`cell.system`), the profile (`cell.profile`; its top symbols go right
/// after its line). Where the xattrs live is printed under a meta cell's
/// table (report::xattrs).
fn extras(s: &mut Doc, c: &Cell) {
    super::calibration::cell_text(s, c);
    super::system::text_block(s, c);
    if let Some(l) = super::system::profile_line(c) {
        let _ = writeln!(s, "{l}");
    }
}

fn depth_levels(counts: &[u64]) -> String {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return String::new();
    }
    let mut out = Vec::new();
    let mut lo = 0usize;
    for hi in [1usize, 2, 4, 8, 16, 32, 64, usize::MAX] {
        if lo >= counts.len() {
            break;
        }
        let n: u64 = counts[(lo + 1).min(counts.len())..(hi.saturating_add(1)).min(counts.len())]
            .iter()
            .sum();
        let label = if hi == usize::MAX {
            format!(">{lo}")
        } else {
            hi.to_string()
        };
        out.push(format!("{label}={:.1}%", n as f64 * 100.0 / total as f64));
        lo = hi;
    }
    out.join(" ")
}

/// What the summary prints where a figure does not apply.
const NA: &str = "—";

/// One summary row: every cell's directions with the figures that mean
/// something for them. A probe's rate is its grid's (10 ops/s at 100 ms),
/// not a throughput, and metadata operations move no data: those columns
/// say `—`, and a probe row gives its own figures instead (max, stalls).
fn summary_row(c: &Cell, d: &DirResult, disturbed: bool) -> [String; 8] {
    use crate::stats::OpKind;
    let name = if disturbed {
        format!("{} !", c.name)
    } else {
        c.name.clone()
    };
    let data = matches!(d.dir, OpKind::Read | OpKind::Write | OpKind::ReadX | OpKind::WriteX) || d.bytes > 0;
    let lat = |v: u64| {
        if d.ops > 0 {
            Nanos(v).to_string()
        } else {
            NA.to_string()
        }
    };
    let (mean, p99, max) = (lat(d.lat.mean_ns as u64), lat(d.lat.p(99.0)), lat(d.lat.max_ns));
    match &c.probe {
        Some(p) => {
            let phase = d.phase.as_deref().unwrap_or_default();
            let stalls = p.phases.iter().find(|ph| ph.name == phase).map(|ph| ph.stalls);
            [
                name,
                format!("{} {phase}", p.op),
                NA.into(),
                NA.into(),
                mean,
                p99,
                max,
                stalls.map_or_else(|| NA.into(), |n| n.to_string()),
            ]
        }
        None => [
            name,
            d.phase.clone().unwrap_or_else(|| d.dir.name().to_string()),
            fmt_rate(d.iops),
            if data { format!("{:.1}", d.mb_s) } else { NA.into() },
            mean,
            p99,
            max,
            NA.into(),
        ],
    }
}

fn summary(s: &mut Doc, r: &Report) {
    let mut tab = Table::new();
    tab.load_style(UTF8_BORDERS_ONLY);
    tab.set_header(["cell", "operation", "ops/s", "MB/s", "mean", "p99", "max", "stalls"]);
    let mut any_disturbed = false;
    for c in &r.cells {
        let disturbed = super::system::disturbed(c);
        any_disturbed |= disturbed;
        for d in &c.directions {
            tab.add_row(summary_row(c, d, disturbed));
        }
    }
    s.push_str("summary\n");
    s.table(tab);
    if any_disturbed {
        s.push_str("!: disturbed (other processes or the hypervisor's steal took CPU; see the cell's system block)\n");
    }
}
