//! The text report's lines for a profiled cell (`--profile`): what the
//! profiler cost, where the folded stacks are, and per phase the top
//! symbols by inclusive share and the hottest by self share.

use crate::model::system::{PhaseProfile, SymbolShare};
use crate::model::Cell;
use std::fmt::Write;

/// Symbols per text line.
const PER_LINE: usize = 8;

fn name(t: &SymbolShare) -> String {
    if t.space == "kernel" {
        format!("{} [k]", t.symbol)
    } else {
        t.symbol.clone()
    }
}

/// A caller and its callee with (nearly) the same share say the same
/// thing: within this many points only the first of a run is listed.
const SAME_SHARE: f64 = 1.0;

/// The most inclusive symbols, runs of (nearly) equal shares merged
/// (`__x64_sys_openat` 51.4%, `do_sys_openat2` 51.4%... shows the first).
fn top_line(ph: &PhaseProfile) -> String {
    let mut last = f64::INFINITY;
    ph.top
        .iter()
        .filter(|t| {
            let new_run = last - t.total_pct > SAME_SHARE;
            if new_run {
                last = t.total_pct;
            }
            new_run
        })
        .take(PER_LINE)
        .map(|t| format!("{:.1}% {}", t.total_pct, name(t)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn self_line(ph: &PhaseProfile) -> String {
    let mut v: Vec<&SymbolShare> = ph.top.iter().filter(|t| t.self_pct > 0.0).collect();
    v.sort_by(|a, b| b.self_pct.total_cmp(&a.self_pct));
    v.iter()
        .take(PER_LINE)
        .map(|t| format!("{:.1}% {}", t.self_pct, name(t)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The profile lines of `c`, if it was profiled.
pub fn text(s: &mut String, c: &Cell) {
    let Some(p) = &c.profile else {
        return;
    };
    let _ = write!(
        s,
        "profile: {} at {} Hz, profiling cost ~{:.1}% of fslab's CPU",
        p.event, p.frequency_hz, p.overhead_pct
    );
    if let Some(f) = &p.folded_file {
        let _ = write!(s, ", folded stacks in {f}");
    }
    s.push('\n');
    for ph in &p.phases {
        let _ = write!(s, "top symbols ({}, {} samples", ph.name, ph.samples);
        if ph.lost > 0 {
            let _ = write!(s, ", {} lost", ph.lost);
        }
        let _ = writeln!(s, "): {}", top_line(ph));
        let hot = self_line(ph);
        if !hot.is_empty() {
            let _ = writeln!(s, "  hottest ({}, self): {hot}", ph.name);
        }
    }
    for n in &p.notes {
        let _ = writeln!(s, "profile: {n}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::system::Profile;

    #[test]
    fn a_profiled_cell_gets_its_lines() {
        let mut a = crate::cli::IoArgs {
            engine: "null".into(),
            ..Default::default()
        };
        a.common.target = ".".into();
        let plan = crate::plan::IoPlan::from_args(&a).unwrap();
        let mut c = Cell::failed(
            "meta",
            crate::model::CellPlan::Io(plan),
            Default::default(),
            String::new(),
        );
        let mut s = String::new();
        text(&mut s, &c);
        assert!(s.is_empty());
        let sym = |n: &str, k: bool, own: f64, total: f64| SymbolShare {
            symbol: n.into(),
            space: if k { "kernel" } else { "user" }.into(),
            self_pct: own,
            total_pct: total,
        };
        c.profile = Some(Profile {
            event: "cpu-clock".into(),
            frequency_hz: 999,
            phases: vec![PhaseProfile {
                name: "seq-create".into(),
                samples: 1200,
                lost: 3,
                top: vec![
                    sym("entry_SYSCALL_64", true, 0.0, 91.0),
                    sym("do_syscall_64", true, 0.0, 90.5),
                    sym("xfs_attr_set", true, 2.0, 23.1),
                    sym("memcpy", false, 5.5, 5.5),
                ],
                stacks: vec![],
            }],
            folded_file: Some("/tmp/p.folded".into()),
            overhead_pct: 0.84,
            notes: vec![],
        });
        text(&mut s, &c);
        assert_eq!(
            s,
            "profile: cpu-clock at 999 Hz, profiling cost ~0.8% of fslab's CPU, folded stacks in /tmp/p.folded\n\
             top symbols (seq-create, 1200 samples, 3 lost): 91.0% entry_SYSCALL_64 [k], 23.1% xfs_attr_set [k], 5.5% memcpy\n  \
             hottest (seq-create, self): 5.5% memcpy, 2.0% xfs_attr_set [k]\n"
        );
    }
}
