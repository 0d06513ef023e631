//! The first pass of a comparison: every cell's metrics gathered per
//! workload and filesystem, with its failures, disturbances, bounds and
//! differences from the table's first cell.

use super::metrics::{metrics, Unit};
use super::model::{Difference, Side};
use super::workload::{describe_fs, differing, flag, place, workload, ADAPTED_VALUE};
use crate::model::{Cell, Report};

/// One metric's values: (metric, unit, higher is better, headline, per column).
pub(super) type RowIn = (String, Unit, bool, bool, Vec<Vec<f64>>);

/// Values of one workload: per metric (name, unit, higher is better, values
/// per filesystem), and the (filesystem, reason) of cells that failed.
pub(super) struct Samples {
    pub(super) name: String,
    /// (metric, unit, higher is better, headline, values per column)
    pub(super) rows: Vec<RowIn>,
    pub(super) failed: Vec<(String, String)>,
    /// (filesystem, disturbed cells, cells with telemetry)
    pub(super) disturbed: Vec<(String, u32, u32)>,
    pub(super) bounds: Vec<(String, Vec<crate::model::verdict::Bound>)>,
    /// The first measured cell's (source, column, workload): the others are
    /// checked against it; keyed by column where a compared factor is a
    /// workload key (the columns differ in it by design), else by "".
    pub(super) first: Vec<(String, First)>,
    pub(super) differs: Vec<Difference>,
}

/// A table's first measured cell: (source, column, workload).
pub(super) type First = (usize, String, serde_json::Value);

/// Records the differences `keys` of cell (`source`, `column`) from the
/// workload's first cell (`first`), each key once.
fn push_differences(
    w: &mut Samples,
    first: &First,
    mut keys: Vec<(String, String, String)>,
    source: usize,
    column: &str,
) {
    let (fsi, fcol, _) = first;
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
    let mut acc = Collected {
        filesystems: Vec::new(),
        environment: Vec::new(),
        workloads: Vec::new(),
        flagged: Vec::new(),
        lab_fs: Vec::new(),
    };
    for (si, (label, r)) in sources.iter().enumerate() {
        if let Some(l) = &r.lab {
            for f in l.columns() {
                if !acc.filesystems.contains(&f) {
                    acc.filesystems.push(f);
                }
            }
        }
        for c in &r.cells {
            acc.add(si, label, c);
        }
    }
    acc
}

impl Collected {
    /// Adds cell `c` of source `si` (named `label`).
    fn add(&mut self, si: usize, label: &str, c: &Cell) {
        let (fs, wl) = place(label, c);
        if !self.filesystems.contains(&fs) {
            self.filesystems.push(fs.clone());
        }
        let fi = self.filesystems.iter().position(|f| *f == fs).expect("added");
        let wi = self.workload_index(&wl);
        if let Some(e) = &c.error {
            self.workloads[wi].failed.push((fs, e.clone()));
            return;
        }
        if c.interrupted {
            return;
        }
        if let Some(t) = &c.lab {
            if !self.lab_fs.iter().any(|(f, _)| *f == fs) {
                self.lab_fs.push((fs.clone(), t.filesystem.clone()));
            }
        }
        if let Some(why) = flag(c) {
            if !self.flagged.iter().any(|(f, _)| *f == fs) {
                self.flagged.push((fs.clone(), why));
            }
        }
        let w = &mut self.workloads[wi];
        let by_column = c.lab.as_ref().is_some_and(|t| t.compares_workload_key());
        w.check_workload(si, &fs, workload(c), by_column);
        w.add_verdict_and_system(&fs, c);
        let env = c.lab.as_ref().map(|t| t.environment()).unwrap_or_else(|| fs.clone());
        if !self.environment.iter().any(|(f, _)| *f == env) {
            self.environment.push((env, describe_fs(c)));
        }
        for mt in metrics(c) {
            let rows = &mut self.workloads[wi].rows;
            let ri = match rows.iter().position(|r| r.0 == mt.name) {
                Some(i) => i,
                None => {
                    rows.push((mt.name.clone(), mt.unit, mt.higher_is_better, mt.headline, Vec::new()));
                    rows.len() - 1
                }
            };
            let per_fs = &mut rows[ri].4;
            if per_fs.len() <= fi {
                per_fs.resize(fi + 1, Vec::new());
            }
            per_fs[fi].push(mt.value);
        }
    }

    /// The index of workload `wl`, added when new.
    fn workload_index(&mut self, wl: &str) -> usize {
        match self.workloads.iter().position(|w| w.name == wl) {
            Some(i) => i,
            None => {
                self.workloads.push(Samples {
                    name: wl.to_string(),
                    rows: Vec::new(),
                    failed: Vec::new(),
                    disturbed: Vec::new(),
                    bounds: Vec::new(),
                    first: Vec::new(),
                    differs: Vec::new(),
                });
                self.workloads.len() - 1
            }
        }
    }
}

impl Samples {
    /// Checks the workload `wl` of a cell of column `fs` (source `si`)
    /// against the table's first cell (its column's, `by_column`),
    /// recording how it differs.
    fn check_workload(&mut self, si: usize, fs: &str, wl: serde_json::Value, by_column: bool) {
        let adapted = |v: &serde_json::Value| v["plan"]["size"] == ADAPTED_VALUE;
        let group = if by_column { fs } else { "" };
        let Some(gi) = self.first.iter().position(|(g, _)| g == group) else {
            self.first.push((group.to_string(), (si, fs.to_string(), wl)));
            return;
        };
        let first = self.first[gi].1.clone();
        let keys = differing(&first.2, &wl);
        // a raw cell matches any size: the first cell that is not
        // one is what the others must match
        if adapted(&first.2) && !adapted(&wl) && keys.is_empty() {
            self.first[gi].1 = (si, fs.to_string(), wl);
            return;
        }
        push_differences(self, &first, keys, si, fs);
    }

    /// Records the bound of a cell of column `fs`, and whether it was disturbed.
    fn add_verdict_and_system(&mut self, fs: &str, c: &Cell) {
        if let Some(v) = &c.verdict {
            let b = &mut self.bounds;
            match b.iter_mut().find(|x| x.0 == fs) {
                Some(x) if !x.1.contains(&v.bound) => x.1.push(v.bound),
                Some(_) => {}
                None => b.push((fs.to_string(), vec![v.bound])),
            }
        }
        if let Some(sys) = &c.system {
            let d = &mut self.disturbed;
            let k = match d.iter().position(|x| x.0 == fs) {
                Some(k) => k,
                None => {
                    d.push((fs.to_string(), 0, 0));
                    d.len() - 1
                }
            };
            d[k].1 += u32::from(sys.interference.disturbed);
            d[k].2 += 1;
        }
    }
}
