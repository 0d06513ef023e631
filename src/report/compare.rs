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
    /// The ratio involves a flagged column (`Comparison::flagged`), this
    /// one or the baseline: shown marked `†`, never as significant.
    pub marked: bool,
    /// The ratio is within the host's noise (`Comparison::noise_cv`):
    /// shown `≈`, never as significant.
    pub noise: bool,
}

impl Col {
    pub fn significant(&self) -> bool {
        !self.marked && !self.noise && self.p.is_some_and(|p| p < ALPHA)
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
    /// (filesystem, the bounds of its cells' verdicts, distinct, in order
    /// met): columns bounded by different limits are compared with a note.
    pub bounds: Vec<(String, Vec<crate::model::verdict::Bound>)>,
    /// How the cells side by side differ in what they ran (empty: the
    /// same workload): `fslab compare` refuses such a table without
    /// `--force`, and every table says it.
    pub differs: Vec<Difference>,
}

/// One key of the workload (`workload`) on which two cells of one table
/// differ: the table's first cell and the first that differs from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// The plan's key, dotted when nested ("bs", "uring.sqpoll"), or "kind".
    pub key: String,
    pub a: Side,
    pub b: Side,
}

/// One cell's side of a `Difference`.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    pub column: String,
    /// Index of the source (result file) the cell came from.
    pub source: usize,
    /// The value as shown ("4 KiB", "randread", "default" for a key its
    /// plan leaves at its default).
    pub value: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub filesystems: Vec<String>,
    pub baseline: String,
    pub workloads: Vec<WorkloadCmp>,
    /// One line per filesystem: what it was (type, mkfs, mount, device).
    pub environment: Vec<(String, String)>,
    /// Columns whose timings are not comparable with the others', with
    /// why (cells emulated under TCG): never the baseline unless asked
    /// for by name, and every ratio involving one is marked.
    pub flagged: Vec<(String, String)>,
    /// The baseline a source asked for (a plan's, or the first column)
    /// when it was flagged and another took its place.
    pub baseline_moved_from: Option<String>,
    /// The largest host noise of the sources' calibration cards (a
    /// coefficient of variation): a ratio closer to 1 than this is noise.
    pub noise_cv: Option<f64>,
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

/// Plan keys that are not the workload: where the cell ran (`target`,
/// the very thing a comparison compares), the random seed (repeats may
/// differ in it, the work does not), switches of error handling and safety,
/// and what is reported rather than done; a key without a dot matches at any
/// depth. For fio jobs: the job file's options as written (they name the
/// files; the io plan they were mapped to is compared) and fio's reporting.
const NOT_WORKLOAD: &[&str] = &[
    "target",
    "seed",
    "stop_on_error",
    "allow_device",
    "force_overwrite",
    "lat_buckets_ns",
    "lat_percentiles",
    "load_spec",
    "fio.options",
    "fio.groupid",
    "fio.report",
    "fio.latency_depth",
];

/// Plan keys holding a number of bytes, shown as sizes.
const BYTE_KEYS: &[&str] = &[
    "bs",
    "bs_max",
    "size",
    "size_min",
    "size_max",
    "read_file_size",
    "xattr_size",
];

fn not_workload(path: &str) -> bool {
    let last = path.rsplit('.').next().unwrap_or(path);
    NOT_WORKLOAD
        .iter()
        .any(|k| if k.contains('.') { *k == path } else { *k == last })
}

/// What a cell ran, as a comparison judges it: its kind and its typed
/// plan (re-serialised by this fslab, so every version's file reads the
/// same way; a field an older fslab did not write was filled in with the
/// value meaning what that version did, `model::v1` and the plans' serde
/// defaults), without the keys of `NOT_WORKLOAD`. A replay's load file
/// counts by its file name, not the directory it was read from.
///
/// A lab's raw-device cell ran its plan as fslab adapts it for the device
/// (`app::lab`'s `for_raw`: one shared span as large as the filesystems'
/// files together, written first): its `size`, `file_mode` and
/// `precondition` are left out, and `ADAPTED` says they are not compared.
pub fn workload(c: &Cell) -> serde_json::Value {
    let mut plan = c.plan.to_value().unwrap_or(serde_json::Value::Null);
    if let Some(lf) = plan.get_mut("loadfile") {
        if let Some(name) = lf.as_str() {
            let base = std::path::Path::new(name)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| name.to_string());
            *lf = base.into();
        }
    }
    if c.lab.as_ref().is_some_and(|t| t.fs_type == "raw") {
        if let Some(p) = plan.as_object_mut() {
            for k in ADAPTED {
                p.insert(k.to_string(), ADAPTED_VALUE.into());
            }
        }
    }
    serde_json::json!({ "kind": c.kind().name(), "plan": plan })
}

/// The io plan's keys a lab adapts for a raw device (see `workload`).
const ADAPTED: [&str; 3] = ["size", "file_mode", "precondition"];

/// What `workload` puts in place of an adapted key's value: it matches
/// any value (a key no cell may hold: its values are numbers and words).
const ADAPTED_VALUE: &str = "\u{0}adapted to the device";

/// A plan value as a difference shows it.
fn show_value(key: &str, v: Option<&serde_json::Value>) -> String {
    use serde_json::Value;
    let last = key.rsplit('.').next().unwrap_or(key);
    let s = match v {
        None => return "default".into(),
        Some(Value::Null) => return "none".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) if BYTE_KEYS.contains(&last) => match n.as_u64() {
            Some(b) => size(b),
            None => n.to_string(),
        },
        Some(v) => v.to_string(),
    };
    // a value is a word or two in a one-line message
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// Bytes in the largest binary unit that divides them exactly ("4 KiB",
/// "1536 B"): a difference must never round two values into one.
fn size(b: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut out = format!("{b} B");
    let mut v = b;
    for u in UNITS {
        if v == 0 || !v.is_multiple_of(1024) {
            break;
        }
        v /= 1024;
        out = format!("{v} {u}");
    }
    out
}

/// The keys on which workloads `a` and `b` differ, with each side's value,
/// in `a`'s order (then `b`'s); `path` is the dotted key so far.
fn diff(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<(String, String, String)>) {
    use serde_json::Value;
    if !path.is_empty() && not_workload(path) {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys = x.keys().chain(y.keys().filter(|k| !x.contains_key(*k)));
            for k in keys {
                // the plan's own keys are named without the "plan." wrapper
                let p = match path {
                    "" | "plan" => k.clone(),
                    _ => format!("{path}.{k}"),
                };
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => diff(&p, u, v, out),
                    // left out when at its default (serde's skip_serializing_if)
                    (u, v) if !not_workload(&p) => out.push((p.clone(), show_value(&p, u), show_value(&p, v))),
                    _ => {}
                }
            }
        }
        _ if a == b => {}
        _ if a == ADAPTED_VALUE || b == ADAPTED_VALUE => {}
        _ => out.push((path.to_string(), show_value(path, Some(a)), show_value(path, Some(b)))),
    }
}

/// Why a cell's timings are not comparable with other cells', if they are
/// not: it ran in a VM under TCG, where every instruction is emulated.
pub fn flag(c: &Cell) -> Option<String> {
    let vm = c.lab.as_ref()?.kernel.as_ref()?.vm.as_ref()?;
    vm.emulated.then(|| "timings emulated (TCG)".to_string())
}

/// Values of one workload: per metric (name, unit, higher is better, values
/// per filesystem), and the (filesystem, reason) of cells that failed.
struct Samples {
    name: String,
    rows: Vec<(String, Unit, bool, Vec<Vec<f64>>)>,
    failed: Vec<(String, String)>,
    /// (filesystem, disturbed cells, cells with telemetry)
    disturbed: Vec<(String, u32, u32)>,
    bounds: Vec<(String, Vec<crate::model::verdict::Bound>)>,
    /// The first measured cell's (source, column, workload): the others are
    /// checked against it.
    first: Option<(usize, String, serde_json::Value)>,
    differs: Vec<Difference>,
}

/// "bounds differ: ext4 device, xfs page-cache: ..." when the columns of a
/// table were bounded by different limits (each column's cells' bounds).
pub fn bounds_line(w: &WorkloadCmp) -> Option<String> {
    let name = |v: &[crate::model::verdict::Bound]| v.iter().map(|b| b.name()).collect::<Vec<_>>().join("/");
    let first = w.bounds.first()?;
    if w.bounds.iter().all(|b| b.1 == first.1) {
        return None;
    }
    let each: Vec<String> = w.bounds.iter().map(|(f, b)| format!("{f} {}", name(b))).collect();
    Some(format!(
        "bounds differ: {}: a ratio between these columns compares different limits, not only the filesystems",
        each.join(", ")
    ))
}

/// The keys on which workloads `a` and `b` differ, with both values.
fn differing(a: &serde_json::Value, b: &serde_json::Value) -> Vec<(String, String, String)> {
    let mut keys = Vec::new();
    diff("", a, b, &mut keys);
    // bs_max is bs unless a range was given: bs says it
    let fixed = |v: &serde_json::Value| v["plan"]["bs"] == v["plan"]["bs_max"];
    if fixed(a) && fixed(b) {
        keys.retain(|k| k.0 != "bs_max");
    }
    keys
}

/// Records the differences `keys` of cell (`source`, `column`) from the
/// workload's first cell, each key once.
fn push_differences(w: &mut Samples, mut keys: Vec<(String, String, String)>, source: usize, column: &str) {
    let Some((fsi, fcol, _)) = &w.first else { return };
    // another kind of cell differs in everything: its kind says it
    if keys.iter().any(|k| k.0 == "kind") {
        keys.retain(|k| k.0 == "kind");
    }
    for (key, a, b) in keys {
        if w.differs.iter().all(|d| d.key != key) {
            w.differs.push(Difference {
                key,
                a: Side {
                    column: fcol.clone(),
                    source: *fsi,
                    value: a,
                },
                b: Side {
                    column: column.to_string(),
                    source,
                    value: b,
                },
            });
        }
    }
}

/// Everything `collect` gathers from the sources.
struct Collected {
    /// Columns in order of appearance.
    filesystems: Vec<String>,
    environment: Vec<(String, String)>,
    workloads: Vec<Samples>,
    /// (column, why) of columns with a flagged cell.
    flagged: Vec<(String, String)>,
    /// (column, the plan's filesystem name) of lab columns.
    lab_fs: Vec<(String, String)>,
}

/// Every cell's metrics, grouped by workload and filesystem; with the
/// filesystems in order of appearance and what each was.
fn collect(sources: &[(String, &Report)]) -> Collected {
    let mut filesystems: Vec<String> = Vec::new();
    let mut environment: Vec<(String, String)> = Vec::new();
    let mut workloads: Vec<Samples> = Vec::new();
    let mut flagged: Vec<(String, String)> = Vec::new();
    let mut lab_fs: Vec<(String, String)> = Vec::new();
    for (si, (label, r)) in sources.iter().enumerate() {
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
                        bounds: Vec::new(),
                        first: None,
                        differs: Vec::new(),
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
            if let Some(t) = &c.lab {
                if !lab_fs.iter().any(|(f, _)| *f == fs) {
                    lab_fs.push((fs.clone(), t.filesystem.clone()));
                }
            }
            if let Some(why) = flag(c) {
                if !flagged.iter().any(|(f, _)| *f == fs) {
                    flagged.push((fs.clone(), why));
                }
            }
            let wl = workload(c);
            let w = &mut workloads[wi];
            let adapted = |v: &serde_json::Value| v["plan"]["size"] == ADAPTED_VALUE;
            match &w.first {
                None => w.first = Some((si, fs.clone(), wl)),
                // a raw cell matches any size: the first cell that is not
                // one is what the others must match
                Some((_, _, first)) if adapted(first) && !adapted(&wl) => {
                    let keys = differing(first, &wl);
                    if keys.is_empty() {
                        w.first = Some((si, fs.clone(), wl));
                    } else {
                        push_differences(w, keys, si, &fs);
                    }
                }
                Some(_) => {
                    let keys = differing(&w.first.as_ref().expect("matched").2, &wl);
                    push_differences(w, keys, si, &fs);
                }
            }
            if let Some(v) = &c.verdict {
                let b = &mut workloads[wi].bounds;
                match b.iter_mut().find(|x| x.0 == fs) {
                    Some(x) if !x.1.contains(&v.bound) => x.1.push(v.bound),
                    Some(_) => {}
                    None => b.push((fs.clone(), vec![v.bound])),
                }
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
    Collected {
        filesystems,
        environment,
        workloads,
        flagged,
        lab_fs,
    }
}

/// One metric's row: each filesystem's estimate, with its ratio to the
/// baseline (`bi`) and the p-value of the difference; a ratio involving a
/// flagged column (`flagged[i]`) is marked.
fn row(
    metric: String,
    unit: Unit,
    hib: bool,
    per_fs: &[Vec<f64>],
    flagged: &[bool],
    bi: Option<usize>,
    noise_cv: Option<f64>,
) -> Row {
    let n_fs = flagged.len();
    let ests: Vec<Option<Estimate>> = (0..n_fs).map(|i| per_fs.get(i).and_then(|v| Estimate::of(v))).collect();
    let base = bi.and_then(|b| ests[b]);
    let cols = ests
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let est = (*e)?;
            let vs_base = base.filter(|_| Some(i) != bi);
            let ratio = vs_base.filter(|b| b.mean != 0.0).map(|b| est.mean / b.mean);
            Some(Col {
                est,
                ratio,
                p: vs_base.and_then(|b| welch_p(&est, &b)),
                marked: ratio.is_some() && (flagged[i] || bi.is_some_and(|b| flagged[b])),
                noise: ratio.is_some_and(|r| noise_cv.is_some_and(|n| (r - 1.0).abs() < n)),
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
/// overrides the reports' own. Without it, the reports' baseline (a plan's,
/// else the first column) is used unless it is flagged: then the same
/// filesystem's first column that is not (a kernel A/B plan's host kernel),
/// else the first column that is not, else none (no ratios).
pub fn build(sources: &[(String, &Report)], baseline: Option<&str>) -> Comparison {
    let Collected {
        filesystems,
        environment,
        workloads,
        flagged,
        lab_fs,
    } = collect(sources);
    let is_flagged = |f: &str| flagged.iter().any(|(c, _)| c == f);
    // the noisiest host among the sources decides what is noise
    let noise_cv = sources
        .iter()
        .filter_map(|(_, r)| r.calibration.as_ref()?.noise_cv())
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    let preferred = sources
        .iter()
        .find_map(|(_, r)| r.lab.as_ref()?.baseline_column())
        .filter(|b| filesystems.contains(b))
        .or_else(|| filesystems.first().cloned());
    let (baseline, baseline_moved_from) = match (baseline, preferred) {
        (Some(b), _) => (b.to_string(), None),
        (None, Some(p)) if is_flagged(&p) => {
            let fs_of = |c: &str| lab_fs.iter().find(|(x, _)| x == c).map(|(_, f)| f.as_str());
            let pick = filesystems
                .iter()
                .filter(|f| !is_flagged(f))
                .find(|f| fs_of(&p).is_some() && fs_of(f) == fs_of(&p))
                .or_else(|| filesystems.iter().find(|f| !is_flagged(f)));
            (pick.cloned().unwrap_or_default(), Some(p))
        }
        (None, p) => (p.unwrap_or_default(), None),
    };
    let bi = filesystems.iter().position(|f| *f == baseline);
    let fl: Vec<bool> = filesystems.iter().map(|f| is_flagged(f)).collect();
    let workloads = workloads
        .into_iter()
        .map(|w| {
            let mut failed = w.failed;
            failed.dedup();
            let rows = w
                .rows
                .into_iter()
                .map(|(metric, unit, hib, per_fs)| row(metric, unit, hib, &per_fs, &fl, bi, noise_cv))
                .collect();
            WorkloadCmp {
                name: w.name,
                rows,
                failed,
                disturbed: w.disturbed.into_iter().filter(|d| d.1 > 0).collect(),
                bounds: w.bounds,
                differs: w.differs,
            }
        })
        .collect();
    Comparison {
        filesystems,
        baseline,
        workloads,
        environment,
        flagged,
        baseline_moved_from,
        noise_cv,
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
        if c.marked {
            s.push(MARK);
        } else if c.noise {
            s.push('≈');
        } else if c.significant() {
            s.push('*');
        }
    }
    s
}

/// The mark of a ratio involving a flagged column.
pub const MARK: char = '†';

/// A workload's differences as one note: "bs 4 KiB (a) vs 64 KiB (b); ...".
pub fn differences(w: &WorkloadCmp) -> String {
    w.differs
        .iter()
        .map(|d| {
            format!(
                "{} {} ({}) vs {} ({})",
                d.key, d.a.value, d.a.column, d.b.value, d.b.column
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `fslab compare`'s refusal of workload `w`, whose cells differ: the two
/// files (or the columns of one file) and each differing key, e.g. "a.json
/// and b.json ran different workloads (bs: 4 KiB vs 64 KiB); --force
/// compares them anyway". `files` are the sources' names; `named` adds
/// the workload's name (when there are several).
pub fn refusal(w: &WorkloadCmp, files: &[String], named: bool) -> String {
    let Some(d) = w.differs.first() else {
        return String::new();
    };
    let file = |i: usize| files.get(i).cloned().unwrap_or_default();
    let who = if d.a.source != d.b.source {
        format!("{} and {}", file(d.a.source), file(d.b.source))
    } else if d.a.column != d.b.column {
        format!("{} and {} in {}", d.a.column, d.b.column, file(d.a.source))
    } else {
        format!("cells of {} in {}", d.a.column, file(d.a.source))
    };
    let keys: Vec<String> = w
        .differs
        .iter()
        .map(|d| format!("{}: {} vs {}", d.key, d.a.value, d.b.value))
        .collect();
    format!(
        "{who} ran different workloads{} ({}); --force compares them anyway",
        if named {
            format!(" in '{}'", w.name)
        } else {
            String::new()
        },
        keys.join(", ")
    )
}

/// The footer's lines on flagged columns and the baseline they could not be.
pub fn flag_notes(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    if c.flagged.is_empty() {
        return out;
    }
    let mut by_why: Vec<(&str, Vec<&str>)> = Vec::new();
    for (f, why) in &c.flagged {
        match by_why.iter_mut().find(|(w, _)| *w == why.as_str()) {
            Some((_, cols)) => cols.push(f),
            None => by_why.push((why, vec![f])),
        }
    }
    for (why, cols) in by_why {
        out.push(format!(
            "{MARK} {}: {why}, not comparable with the other columns; a ratio involving one is marked {MARK}",
            cols.join(", ")
        ));
    }
    match (&c.baseline_moved_from, c.baseline.is_empty()) {
        (Some(from), false) => out.push(format!(
            "baseline {} instead of {from}: a flagged column is never the baseline unless named (fslab compare --baseline)",
            c.baseline
        )),
        (_, true) => out.push(
            "no ratios: every column is flagged, and a flagged column is never the baseline unless named (fslab compare --baseline)"
                .to_string(),
        ),
        _ => {}
    }
    out
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
            if c.flagged.iter().any(|x| x.0 == *f) {
                h.push(' ');
                h.push(MARK);
            }
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
        if !w.differs.is_empty() {
            let _ = writeln!(
                s,
                "  ≠ not the same workload, the figures measure different work: {}",
                differences(w)
            );
        }
        // with --quiet-warnings the per-table summaries stay in the JSON
        // (each cell's verdict and interference are there); what makes a
        // ratio meaningless (≠ above, flagged columns below) is always said
        if let Some(l) = bounds_line(w).filter(|_| !s.quiet_warnings()) {
            let _ = writeln!(s, "  {l}");
        }
        // one line per table, whatever the number of disturbed columns
        if !w.disturbed.is_empty() && !s.quiet_warnings() {
            let each: Vec<String> = w
                .disturbed
                .iter()
                .map(|(f, n, of)| format!("{f} {n} of {of}"))
                .collect();
            let _ = writeln!(
                s,
                "  ! disturbed cells: {} (other processes or the hypervisor took CPU or I/O; see each cell's verdict)",
                each.join(", ")
            );
        }
    }
    let notes = flag_notes(c);
    if !notes.is_empty() {
        s.push('\n');
    }
    for l in notes {
        let _ = writeln!(s, "{l}");
    }
    let n = c.max_repeats();
    if let Some(cv) = c.noise_cv.filter(|_| !c.baseline.is_empty()) {
        let _ = writeln!(
            s,
            "\n≈: the ratio is within this host's noise ({:.1}%, the calibration card's): not a difference",
            cv * 100.0
        );
    }
    if c.baseline.is_empty() {
        if n > 1 {
            let _ = writeln!(
                s,
                "\nmean ± 95% confidence interval over up to {n} repeats (Student t); ↑/↓: higher/lower is better"
            );
        }
    } else if n > 1 {
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
            marked: false,
            noise: false,
        };
        assert!(c.significant());
        assert_eq!(fmt_col(&c, Unit::Rate), "50 ± 2  0.50×*");
        let same = Col {
            est: est(&[99.0, 103.0, 97.0]),
            ratio: Some(0.997),
            p: welch_p(&est(&[99.0, 103.0, 97.0]), &base),
            marked: false,
            noise: false,
        };
        assert!(!same.significant());
        // a 2% difference on a host whose noise is 5%: noise, never significant
        let noisy = Col {
            noise: true,
            ratio: Some(0.98),
            ..c
        };
        assert!(!noisy.significant());
        assert!(fmt_col(&noisy, Unit::Rate).ends_with("0.98×≈"));
    }
}
