//! The first pass of a comparison: every cell's metrics gathered per
//! workload and filesystem, with its failures, disturbances, bounds and
//! differences from the table's first cell.

use super::metrics::{metrics, Unit};
use super::model::{Difference, Side};
use super::workload::{describe_fs, differing, flag, place, workload, ADAPTED_VALUE};
use crate::model::Report;

/// Values of one workload: per metric (name, unit, higher is better, values
/// per filesystem), and the (filesystem, reason) of cells that failed.
pub(super) struct Samples {
    pub(super) name: String,
    pub(super) rows: Vec<(String, Unit, bool, Vec<Vec<f64>>)>,
    pub(super) failed: Vec<(String, String)>,
    /// (filesystem, disturbed cells, cells with telemetry)
    pub(super) disturbed: Vec<(String, u32, u32)>,
    pub(super) bounds: Vec<(String, Vec<crate::model::verdict::Bound>)>,
    /// The first measured cell's (source, column, workload): the others are
    /// checked against it.
    pub(super) first: Option<(usize, String, serde_json::Value)>,
    pub(super) differs: Vec<Difference>,
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
pub(super) struct Collected {
    /// Columns in order of appearance.
    pub(super) filesystems: Vec<String>,
    pub(super) environment: Vec<(String, String)>,
    pub(super) workloads: Vec<Samples>,
    /// (column, why) of columns with a flagged cell.
    pub(super) flagged: Vec<(String, String)>,
    /// (column, the plan's filesystem name) of lab columns.
    pub(super) lab_fs: Vec<(String, String)>,
}

/// Every cell's metrics, grouped by workload and filesystem; with the
/// filesystems in order of appearance and what each was.
pub(super) fn collect(sources: &[(String, &Report)]) -> Collected {
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
