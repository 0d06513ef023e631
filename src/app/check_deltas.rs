//! What changed beside a checked workload, from fslab's own telemetry: the
//! means over the baseline's cells and over now's of the machine's figures
//! (CPU split, pressure, context switches, writeback), each device's
//! await, the profile's hottest symbols, and what bounded the cells
//! (their verdicts), sorted by how much each moved. A regression's cause
//! is usually among the first lines: a symbol that doubled its share, an
//! await that tripled, a bound that moved from the page cache to the device.

use crate::model::Cell;
use std::collections::BTreeMap;

/// How many figures a workload's deltas list at most.
const SHOWN: usize = 6;

/// (figure, value) of one cell's telemetry, summed per name.
fn figures(c: &Cell) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    if let Some(s) = &c.system {
        let t = &s.total;
        for (k, v) in [
            ("CPU user %", t.cpu.user),
            ("CPU system %", t.cpu.system),
            ("CPU iowait %", t.cpu.iowait),
            ("context switches/s", t.ctxt_s),
            ("page-out KiB/s", t.pgpgout_kib_s),
            ("dirty KiB", t.dirty_kib as f64),
        ] {
            m.insert(k.to_string(), v);
        }
        if let Some(p) = &t.psi {
            m.insert("PSI cpu some %".into(), p.cpu_some);
            m.insert("PSI io some %".into(), p.io_some);
            m.insert("PSI memory some %".into(), p.memory_some);
        }
        for l in &s.latency_share {
            m.insert(format!("{} {} await µs", l.device, l.dir.name()), l.await_us);
        }
    }
    if let Some(p) = &c.profile {
        for ph in &p.phases {
            for s in ph.top.iter().take(10) {
                *m.entry(format!("{} {} self %", ph.name, s.symbol)).or_default() += s.self_pct;
            }
        }
    }
    m
}

/// Means of every figure over `cells`, a figure missing from a cell
/// counting as absent there (not as zero).
fn means(cells: &[&Cell]) -> BTreeMap<String, f64> {
    let mut sum: BTreeMap<String, (f64, u32)> = BTreeMap::new();
    for c in cells {
        for (k, v) in figures(c) {
            let e = sum.entry(k).or_default();
            e.0 += v;
            e.1 += 1;
        }
    }
    sum.into_iter().map(|(k, (s, n))| (k, s / n as f64)).collect()
}

/// The bounds of `cells` ("device", "cpu"), distinct, in order.
fn bounds(cells: &[&Cell]) -> Vec<&'static str> {
    let mut v = Vec::new();
    for b in cells.iter().filter_map(|c| c.verdict.as_ref()).map(|v| v.bound.name()) {
        if !v.contains(&b) {
            v.push(b);
        }
    }
    v
}

/// The lines under a checked workload: the bounds when they moved, then
/// the figures that moved most (both sides measured, the larger above a
/// floor that keeps idle counters out).
pub(super) fn lines(base: &[&Cell], now: &[&Cell]) -> Vec<String> {
    let mut out = Vec::new();
    let (bb, bn) = (bounds(base), bounds(now));
    if !bb.is_empty() && !bn.is_empty() && bb != bn {
        out.push(format!("bounded by: {} → {}", bb.join("/"), bn.join("/")));
    }
    let (mb, mn) = (means(base), means(now));
    let mut moved: Vec<(f64, String)> = mb
        .iter()
        .filter_map(|(k, &b)| {
            let n = *mn.get(k)?;
            let top = b.abs().max(n.abs());
            // below 1 (a %, a µs, a KiB) a figure is noise, whatever its ratio
            (top >= 1.0 && b != n).then(|| {
                let rel = (n - b) / b.abs().max(n.abs() / 100.0).max(1e-9);
                (rel.abs(), format!("{k}: {b:.1} → {n:.1} ({:+.0}%)", rel * 100.0))
            })
        })
        .collect();
    moved.sort_by(|a, b| b.0.total_cmp(&a.0));
    out.extend(moved.into_iter().take(SHOWN).map(|(_, l)| l));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::system::{Pressure, SystemData};
    use crate::model::verdict::{Bound, Verdict};

    fn cell(iowait: f64, io_some: f64, bound: Bound) -> Cell {
        let mut a = crate::cli::IoArgs {
            engine: "null".into(),
            ..Default::default()
        };
        a.common.target = ".".into();
        let plan = crate::plan::IoPlan::from_args(&a).expect("a valid plan");
        let mut c = Cell::new("c", crate::model::CellPlan::Io(plan), Default::default());
        let mut s = SystemData::default();
        s.total.cpu.iowait = iowait;
        s.total.cpu.user = 40.0;
        s.total.psi = Some(Pressure {
            io_some,
            ..Default::default()
        });
        c.system = Some(s);
        c.verdict = Some(Verdict {
            bound,
            evidence: String::new(),
            flags: Vec::new(),
        });
        c
    }

    #[test]
    fn the_figures_that_moved_most_come_first_and_the_still_ones_stay_out() {
        let (b1, b2) = (cell(5.0, 10.0, Bound::PageCache), cell(7.0, 10.0, Bound::PageCache));
        let (n1, n2) = (cell(30.0, 12.0, Bound::Device), cell(30.0, 12.0, Bound::Device));
        let l = lines(&[&b1, &b2], &[&n1, &n2]);
        assert_eq!(l[0], "bounded by: page-cache → device", "{l:?}");
        // iowait 6 → 30 (+400%) before PSI io 10 → 12 (+20%); user 40 → 40 not listed
        assert_eq!(l[1], "CPU iowait %: 6.0 → 30.0 (+400%)", "{l:?}");
        assert_eq!(l[2], "PSI io some %: 10.0 → 12.0 (+20%)", "{l:?}");
        assert!(!l.iter().any(|x| x.contains("CPU user")), "{l:?}");
        // nothing measured: nothing said
        let (e1, e2) = (
            Cell::new("e", b1.plan.clone(), Default::default()),
            Cell::new("e", b1.plan.clone(), Default::default()),
        );
        assert!(lines(&[&e1], &[&e2]).is_empty());
    }
}
