//! Side-by-side comparison of filesystems: for every workload, each metric's
//! mean over repeats with its 95% confidence interval, the ratio to the
//! baseline, and whether the difference is significant (Welch's t-test,
//! p < 0.05). A pure function of reports, shared by `fslab run` (at the end
//! of a plan) and `fslab compare` (from saved results).

use super::doc::Doc;
use crate::model::{Cell, CellKind, Report};
use crate::plan::TableFormat;
use crate::stats::confidence::{welch_p, Estimate};
use crate::units::{fmt_rate, Bytes, Nanos};
use comfy_table::{presets::UTF8_BORDERS_ONLY, CellAlignment, Table};
use std::fmt::Write;

/// Significance level for the `*` mark.
pub const ALPHA: f64 = 0.05;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Operations per second.
    Rate,
    /// 10^6 bytes per second.
    MBs,
    /// Nanoseconds.
    Ns,
    Count,
    Percent,
}

/// One number measured in one cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub name: String,
    pub value: f64,
    pub unit: Unit,
    pub higher_is_better: bool,
}

fn m(name: String, value: f64, unit: Unit, higher_is_better: bool) -> Metric {
    Metric {
        name,
        value,
        unit,
        higher_is_better,
    }
}

/// The metrics compared for a cell: per probe phase its latency and stalls;
/// for replay dbench's throughput; per metadata phase its rate, p99 and
/// CPU; per I/O direction IOPS, MB/s, mean and p99 latency, and the share
/// of operations within each requested latency bucket.
pub fn metrics(c: &Cell) -> Vec<Metric> {
    let mut out = Vec::new();
    if let Some(p) = &c.probe {
        for ph in &p.phases {
            let n = &ph.name;
            out.push(m(format!("{n} p50"), ph.lat.p(50.0) as f64, Unit::Ns, false));
            out.push(m(format!("{n} p99"), ph.lat.p(99.0) as f64, Unit::Ns, false));
            out.push(m(format!("{n} max"), ph.lat.max_ns as f64, Unit::Ns, false));
            out.push(m(format!("{n} stalls"), ph.stalls as f64, Unit::Count, false));
            if ph.load_bytes > 0 {
                out.push(m(format!("{n} writer MB/s"), ph.load_mb_s, Unit::MBs, true));
            }
        }
        return out;
    }
    if c.kind() == CellKind::Replay {
        out.push(m("throughput MB/s".into(), c.dbench_mb_s(), Unit::MBs, true));
        out.push(m(
            "operations/s".into(),
            c.directions.iter().map(|d| d.iops).sum(),
            Unit::Rate,
            true,
        ));
        let max = c.directions.iter().map(|d| d.lat.max_ns).max().unwrap_or(0);
        out.push(m("max latency".into(), max as f64, Unit::Ns, false));
        return out;
    }
    for d in &c.directions {
        if let Some(ph) = &d.phase {
            out.push(m(format!("{ph} ops/s"), d.iops, Unit::Rate, true));
            out.push(m(format!("{ph} p99"), d.lat.p(99.0) as f64, Unit::Ns, false));
            if let Some(cpu) = d.cpu_percent {
                out.push(m(format!("{ph} %CPU"), cpu, Unit::Percent, false));
            }
            continue;
        }
        let n = d.dir.name();
        out.push(m(format!("{n} IOPS"), d.iops, Unit::Rate, true));
        if d.bytes > 0 {
            out.push(m(format!("{n} MB/s"), d.mb_s, Unit::MBs, true));
        }
        out.push(m(format!("{n} mean"), d.lat.mean_ns, Unit::Ns, false));
        out.push(m(format!("{n} p99"), d.lat.p(99.0) as f64, Unit::Ns, false));
        for b in &d.lat_buckets {
            out.push(m(
                format!("{n} ≤{}", Nanos(b.le_ns)).replace(".00 ", " "),
                b.share * 100.0,
                Unit::Percent,
                true,
            ));
        }
    }
    out
}

/// One filesystem's value of one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Col {
    pub est: Estimate,
    /// Mean over the baseline's mean (None for the baseline itself).
    pub ratio: Option<f64>,
    /// Welch's p-value against the baseline.
    pub p: Option<f64>,
}

impl Col {
    pub fn significant(&self) -> bool {
        self.p.is_some_and(|p| p < ALPHA)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub metric: String,
    pub unit: Unit,
    pub higher_is_better: bool,
    /// One per filesystem, in `Comparison::filesystems` order.
    pub cols: Vec<Option<Col>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadCmp {
    pub name: String,
    pub rows: Vec<Row>,
    /// (filesystem, reason) of cells that could not run.
    pub failed: Vec<(String, String)>,
    /// (filesystem, cells of it that telemetry marked disturbed, its cells).
    pub disturbed: Vec<(String, u32, u32)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub filesystems: Vec<String>,
    pub baseline: String,
    pub workloads: Vec<WorkloadCmp>,
    /// One line per filesystem: what it was (type, mkfs, mount, device).
    pub environment: Vec<(String, String)>,
}

impl Comparison {
    /// The most repeats behind any one figure (0 with none): what decides
    /// whether a reader is told of confidence intervals or of single runs.
    pub fn max_repeats(&self) -> usize {
        self.workloads
            .iter()
            .flat_map(|w| &w.rows)
            .flat_map(|r| r.cols.iter().flatten())
            .map(|c| c.est.n)
            .max()
            .unwrap_or(0)
    }
}

/// Which filesystem and workload a cell belongs to: its lab tag, or for a
/// single-command result, `label` (the file's name) and the cell's name.
fn place(label: &str, c: &Cell) -> (String, String) {
    match &c.lab {
        Some(t) => (t.column(), t.workload.clone()),
        None => (label.to_string(), c.name.clone()),
    }
}

fn describe_fs(c: &Cell) -> String {
    let t = &c.target;
    let scratch = c.lab.as_ref().and_then(|l| l.scratch.as_ref());
    let mut d = match scratch {
        Some(s) if s.fs_type == "raw" => format!("raw loop device, {} image", Bytes(s.size)),
        Some(s) if s.fs_type == "tmpfs" => format!("tmpfs size={}", Bytes(s.size)),
        Some(s) => format!(
            "mkfs.{}{}{}, {} image",
            s.fs_type,
            if s.mkfs_args.is_empty() { "" } else { " " },
            s.mkfs_args.join(" "),
            Bytes(s.size),
        ),
        None => format!("{} at {}", t.fs_type, t.path.display()),
    };
    if let Some(dev) = scratch.and_then(|s| s.device.as_ref()).or(t.device.as_ref()) {
        let _ = write!(d, " on {dev}");
    }
    if let Some(dio) = scratch.and_then(|s| s.loop_direct_io) {
        let _ = write!(d, " (loop dio {})", if dio { "on" } else { "off" });
    }
    if let Some(q) = &t.queue {
        let _ = write!(d, ", scheduler {}", q.scheduler);
    }
    if let Some(set) = scratch.map(|s| &s.queue_set).filter(|v| !v.is_empty()) {
        let _ = write!(d, " (set: {})", set.join(" "));
    }
    if let Some(o) = &t.mount_options {
        let _ = write!(d, ", mounted {o}");
    }
    if let Some(k) = kernel_note(c) {
        let _ = write!(d, ", {k}");
    }
    d
}

/// The kernel a cell ran under, where the plan names kernels: its release,
/// its VM, and whether the timings are emulated.
pub fn kernel_note(c: &Cell) -> Option<String> {
    let k = c.lab.as_ref()?.kernel.as_ref()?;
    let mut d = format!("kernel {}", k.release);
    if let Some(vm) = &k.vm {
        let _ = write!(
            d,
            " in a VM ({}, {} vCPUs, {})",
            vm.accel,
            vm.cpus,
            Bytes(vm.memory_bytes)
        );
        if vm.emulated {
            d.push_str(": timings emulated (TCG), they show the cell works, not how fast; not comparable");
        }
    }
    Some(d)
}

/// Values of one workload: per metric (name, unit, higher is better, values
/// per filesystem), and the (filesystem, reason) of cells that failed.
struct Samples {
    name: String,
    rows: Vec<(String, Unit, bool, Vec<Vec<f64>>)>,
    failed: Vec<(String, String)>,
    /// (filesystem, disturbed cells, cells with telemetry)
    disturbed: Vec<(String, u32, u32)>,
}

/// Every cell's metrics, grouped by workload and filesystem; with the
/// filesystems in order of appearance and what each was.
fn collect(sources: &[(String, &Report)]) -> (Vec<String>, Vec<(String, String)>, Vec<Samples>) {
    let mut filesystems: Vec<String> = Vec::new();
    let mut environment: Vec<(String, String)> = Vec::new();
    let mut workloads: Vec<Samples> = Vec::new();
    for (label, r) in sources {
        if let Some(l) = &r.lab {
            for f in l.columns() {
                if !filesystems.contains(&f) {
                    filesystems.push(f);
                }
            }
        }
        for c in &r.cells {
            let (fs, wl) = place(label, c);
            if !filesystems.contains(&fs) {
                filesystems.push(fs.clone());
            }
            let fi = filesystems.iter().position(|f| *f == fs).expect("added");
            let wi = match workloads.iter().position(|w| w.name == wl) {
                Some(i) => i,
                None => {
                    workloads.push(Samples {
                        name: wl.clone(),
                        rows: Vec::new(),
                        failed: Vec::new(),
                        disturbed: Vec::new(),
                    });
                    workloads.len() - 1
                }
            };
            if let Some(e) = &c.error {
                workloads[wi].failed.push((fs, e.clone()));
                continue;
            }
            if c.interrupted {
                continue;
            }
            if let Some(sys) = &c.system {
                let d = &mut workloads[wi].disturbed;
                let k = match d.iter().position(|x| x.0 == fs) {
                    Some(k) => k,
                    None => {
                        d.push((fs.clone(), 0, 0));
                        d.len() - 1
                    }
                };
                d[k].1 += u32::from(sys.interference.disturbed);
                d[k].2 += 1;
            }
            if !environment.iter().any(|(f, _)| *f == fs) {
                environment.push((fs.clone(), describe_fs(c)));
            }
            for mt in metrics(c) {
                let rows = &mut workloads[wi].rows;
                let ri = match rows.iter().position(|r| r.0 == mt.name) {
                    Some(i) => i,
                    None => {
                        rows.push((mt.name.clone(), mt.unit, mt.higher_is_better, Vec::new()));
                        rows.len() - 1
                    }
                };
                let per_fs = &mut rows[ri].3;
                if per_fs.len() <= fi {
                    per_fs.resize(fi + 1, Vec::new());
                }
                per_fs[fi].push(mt.value);
            }
        }
    }
    (filesystems, environment, workloads)
}

/// One metric's row: each filesystem's estimate, with its ratio to the
/// baseline (`bi`) and the p-value of the difference.
fn row(metric: String, unit: Unit, hib: bool, per_fs: &[Vec<f64>], n_fs: usize, bi: Option<usize>) -> Row {
    let ests: Vec<Option<Estimate>> = (0..n_fs).map(|i| per_fs.get(i).and_then(|v| Estimate::of(v))).collect();
    let base = bi.and_then(|b| ests[b]);
    let cols = ests
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let est = (*e)?;
            let vs_base = base.filter(|_| Some(i) != bi);
            Some(Col {
                est,
                ratio: vs_base.filter(|b| b.mean != 0.0).map(|b| est.mean / b.mean),
                p: vs_base.and_then(|b| welch_p(&est, &b)),
            })
        })
        .collect();
    Row {
        metric,
        unit,
        higher_is_better: hib,
        cols,
    }
}

/// Builds the comparison of every (label, report) given; `baseline`
/// overrides the reports' own.
pub fn build(sources: &[(String, &Report)], baseline: Option<&str>) -> Comparison {
    let (filesystems, environment, workloads) = collect(sources);
    let baseline = baseline
        .map(String::from)
        .or_else(|| sources.iter().find_map(|(_, r)| r.lab.as_ref()?.baseline_column()))
        .filter(|b| filesystems.contains(b))
        .or_else(|| filesystems.first().cloned())
        .unwrap_or_default();
    let bi = filesystems.iter().position(|f| *f == baseline);
    let workloads = workloads
        .into_iter()
        .map(|w| {
            let mut failed = w.failed;
            failed.dedup();
            let rows = w
                .rows
                .into_iter()
                .map(|(metric, unit, hib, per_fs)| row(metric, unit, hib, &per_fs, filesystems.len(), bi))
                .collect();
            WorkloadCmp {
                name: w.name,
                rows,
                failed,
                disturbed: w.disturbed.into_iter().filter(|d| d.1 > 0).collect(),
            }
        })
        .collect();
    Comparison {
        filesystems,
        baseline,
        workloads,
        environment,
    }
}

/// A value in its unit as the comparison tables print it (`fslab compare`,
/// and the HTML report's comparison table).
pub fn fmt_value(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Rate => fmt_rate(v),
        Unit::MBs => format!("{v:.1}"),
        Unit::Ns => Nanos(v.max(0.0).round() as u64).to_string(),
        Unit::Count => {
            if v.fract() == 0.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.1}")
            }
        }
        Unit::Percent => format!("{v:.1}%"),
    }
}

fn fmt_col(c: &Col, unit: Unit) -> String {
    let mut s = fmt_value(c.est.mean, unit);
    if let Some(ci) = c.est.ci95 {
        let _ = write!(s, " ± {}", fmt_value(ci, unit));
    }
    if let Some(r) = c.ratio {
        let _ = write!(s, "  {r:.2}×");
        if c.significant() {
            s.push('*');
        }
    }
    s
}

/// The comparison as boxed text tables, one per workload.
pub fn render(c: &Comparison) -> String {
    render_as(c, TableFormat::Text)
}

/// The comparison in format `f` (`fslab compare --format`).
pub fn render_as(c: &Comparison, f: TableFormat) -> String {
    if f == TableFormat::Csv {
        return super::compare_csv::render(c);
    }
    let mut d = Doc::new();
    write(&mut d, c);
    d.render(f)
}

/// Writes the comparison's lines and tables, one table per workload, into `s`.
pub fn write(s: &mut Doc, c: &Comparison) {
    for (fs, env) in &c.environment {
        let _ = writeln!(s, "{fs}: {env}");
    }
    for w in &c.workloads {
        // only the filesystems this workload ran on, or failed on
        let used: Vec<usize> = (0..c.filesystems.len())
            .filter(|&i| {
                w.rows.iter().any(|r| r.cols.get(i).is_some_and(|c| c.is_some()))
                    || w.failed.iter().any(|(f, _)| *f == c.filesystems[i])
            })
            .collect();
        if used.is_empty() {
            continue;
        }
        let mut t = Table::new();
        t.load_style(UTF8_BORDERS_ONLY);
        let mut head = vec![w.name.clone()];
        for &i in &used {
            let f = &c.filesystems[i];
            let mut h = if *f == c.baseline && used.len() > 1 {
                format!("{f} (baseline)")
            } else {
                f.clone()
            };
            if w.disturbed.iter().any(|d| d.0 == *f) {
                h.push_str(" !");
            }
            head.push(h);
        }
        t.set_header(head);
        for r in &w.rows {
            let mut row = vec![format!("{} {}", r.metric, if r.higher_is_better { "↑" } else { "↓" })];
            for &i in &used {
                row.push(match r.cols.get(i).and_then(|c| c.as_ref()) {
                    Some(col) => fmt_col(col, r.unit),
                    None if w.failed.iter().any(|(f, _)| *f == c.filesystems[i]) => "failed".into(),
                    None => "–".into(),
                });
            }
            t.add_row(row);
        }
        if w.rows.is_empty() {
            let mut row = vec!["(no result)".to_string()];
            row.extend(used.iter().map(|_| "failed".to_string()));
            t.add_row(row);
        }
        for col in t.column_iter_mut().skip(1) {
            col.set_cell_alignment(CellAlignment::Right);
        }
        s.push('\n');
        s.table(t);
        for (f, e) in &w.failed {
            let _ = writeln!(s, "  {f}: failed: {e}");
        }
        for (f, n, of) in &w.disturbed {
            let _ = writeln!(
                s,
                "  ! {f}: {n} of {of} cell(s) disturbed (other processes or the hypervisor's steal took CPU; see the system blocks)"
            );
        }
    }
    let n = c.max_repeats();
    if n > 1 {
        let _ = writeln!(
            s,
            "\nmean ± 95% confidence interval over up to {n} repeats (Student t); ×: ratio to {}; \
             *: differs from it with p < {ALPHA} (Welch's t-test); ↑/↓: higher/lower is better",
            c.baseline
        );
    } else if c.filesystems.len() > 1 {
        let _ = writeln!(
            s,
            "\none run per cell: no confidence interval or significance (give repeat = 3 or more); ×: ratio to {}; ↑/↓: higher/lower is better",
            c.baseline
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(xs: &[f64]) -> Estimate {
        Estimate::of(xs).unwrap()
    }

    #[test]
    fn columns_carry_ratio_and_significance() {
        let base = est(&[100.0, 102.0, 98.0]);
        let slow = est(&[50.0, 51.0, 49.0]);
        let p = welch_p(&slow, &base).unwrap();
        assert!(p < 0.001, "{p}");
        let c = Col {
            est: slow,
            ratio: Some(0.5),
            p: Some(p),
        };
        assert!(c.significant());
        assert_eq!(fmt_col(&c, Unit::Rate), "50 ± 2  0.50×*");
        let same = Col {
            est: est(&[99.0, 103.0, 97.0]),
            ratio: Some(0.997),
            p: welch_p(&est(&[99.0, 103.0, 97.0]), &base),
        };
        assert!(!same.significant());
    }
}
