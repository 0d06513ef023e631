//! The lines around any cell's tables, whatever its kind: the target it
//! ran on, and the trailer (ranks, CPU, profile, in-flight depths,
//! verdict, warnings, calibration, system).

use crate::model::Cell;
use crate::report::render::doc::Doc;
use std::fmt::Write;

pub(super) fn target_line(s: &mut String, c: &Cell) {
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

/// CPU, queue depths, warnings and errors under a cell's table.
pub(super) fn trailer(s: &mut Doc, c: &Cell) {
    let quiet = s.quiet_warnings();
    s.push_str(&crate::report::ranks::text(c));
    let _ = writeln!(
        s,
        "cpu: user {:.2} s, sys {:.2} s, {:.0}% of one core",
        c.cpu.user_ns as f64 / 1e9,
        c.cpu.sys_ns as f64 / 1e9,
        c.cpu.percent_of_core
    );
    crate::report::profile::text(s, c);
    if c.inflight_depth.len() > 2 {
        let _ = writeln!(s, "in flight at submit: {}", depth_levels(&c.inflight_depth));
    }
    if let Some(l) = crate::report::verdict::line(c, quiet) {
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
    crate::report::calibration::cell_text(s, c);
    crate::report::system::text_block(s, c);
    if let Some(l) = crate::report::system::profile_line(c) {
        let _ = writeln!(s, "{l}");
    }
    crate::report::anatomy::text(s, c);
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
