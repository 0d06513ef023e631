//! Which column and table a cell goes in, what each filesystem was, and
//! what a cell ran (its workload, the keys on which two cells differ): the
//! checks that keep a table comparing the same work.

use crate::model::Cell;
use crate::units::Bytes;
use std::fmt::Write;

/// Which column and table a cell belongs to: its lab tag's (the
/// filesystem and workload, or with factors `LabTag::column` and
/// `LabTag::table`), or for a single-command result, `label` (the file's
/// name) and the cell's name.
pub fn place(label: &str, c: &Cell) -> (String, String) {
    match &c.lab {
        Some(t) => (t.column(), t.table()),
        None => (label.to_string(), c.name.clone()),
    }
}

pub(super) fn describe_fs(c: &Cell) -> String {
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
    workload_of(&c.plan, c.lab.as_ref().is_some_and(|t| t.fs_type == "raw"))
}

/// `workload` of a cell that would run `plan` (on a raw device: `raw`).
pub fn workload_of(cell_plan: &crate::plan::CellPlan, raw: bool) -> serde_json::Value {
    let mut plan = cell_plan.to_value().unwrap_or(serde_json::Value::Null);
    if let Some(lf) = plan.get_mut("loadfile") {
        if let Some(name) = lf.as_str() {
            let base = std::path::Path::new(name)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| name.to_string());
            *lf = base.into();
        }
    }
    if raw {
        if let Some(p) = plan.as_object_mut() {
            for k in ADAPTED {
                p.insert(k.to_string(), ADAPTED_VALUE.into());
            }
        }
    }
    serde_json::json!({ "kind": cell_plan.kind().name(), "plan": plan })
}

/// The io plan's keys a lab adapts for a raw device (see `workload`).
const ADAPTED: [&str; 3] = ["size", "file_mode", "precondition"];

/// What `workload` puts in place of an adapted key's value: it matches
/// any value (a key no cell may hold: its values are numbers and words).
pub(super) const ADAPTED_VALUE: &str = "\u{0}adapted to the device";

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
/// `a`'s by name, then those only `b` has; `path` is the dotted key so far.
fn diff(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<(String, String, String)>) {
    use serde_json::Value;
    if !path.is_empty() && not_workload(path) {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            // by name, whatever order the plan's fields serialise in
            let mut keys: Vec<&String> = x.keys().collect();
            let mut only_b: Vec<&String> = y.keys().filter(|k| !x.contains_key(*k)).collect();
            keys.sort();
            only_b.sort();
            keys.extend(only_b);
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

/// The keys on which workloads `a` and `b` differ, with both values.
pub fn differing(a: &serde_json::Value, b: &serde_json::Value) -> Vec<(String, String, String)> {
    let mut keys = Vec::new();
    diff("", a, b, &mut keys);
    // bs_max is bs unless a range was given: bs says it
    let fixed = |v: &serde_json::Value| v["plan"]["bs"] == v["plan"]["bs_max"];
    if fixed(a) && fixed(b) {
        keys.retain(|k| k.0 != "bs_max");
    }
    keys
}
