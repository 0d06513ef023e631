//! The system beside a cell as text blocks, laid out at the report's width: the full
//! block under a cell's table (devices, shares, CPU, pressure, per-phase
//! table, memory, interference, ranks, notes), and the compact one per
//! cell of a lab run.

use super::lines::{
    cpu_line, dirty_peaks, interference, interference_line, memory_line, psi_line, rerun_lines, share_lines, stack_line,
};
use crate::model::system::{DeviceData, SystemData, SystemPoint};
use crate::model::Cell;
use crate::report::render::doc::Doc;
use crate::units::Bytes;
use std::fmt::Write;

/// Per timed phase (when there are several), from the samples whose
/// interval's middle falls inside it: the CPU split and the top device's
/// %util and awaits. Phases shorter than a sample have no row.
pub(super) fn phase_table(s: &mut Doc, sys: &SystemData) {
    if sys.phases.len() < 2 {
        return;
    }
    let inside = |t_ms: u64, len_ms: u64, a: u64, b: u64| {
        let mid = t_ms.saturating_sub(len_ms / 2);
        mid >= a && mid < b
    };
    let top = sys.devices.first();
    let mut rows = Vec::new();
    for ph in &sys.phases {
        let pts: Vec<&SystemPoint> = sys
            .samples
            .iter()
            .filter(|p| inside(p.t_ms, p.len_ms, ph.start_ms, ph.end_ms))
            .collect();
        let len: u64 = pts.iter().map(|p| p.len_ms).sum();
        if len == 0 {
            continue;
        }
        let avg =
            |f: &dyn Fn(&SystemPoint) -> f64| pts.iter().map(|p| f(p) * p.len_ms as f64).sum::<f64>() / len as f64;
        let mut row = vec![
            ph.name.clone(),
            format!("{:.1}", (ph.end_ms - ph.start_ms) as f64 / 1e3),
            format!("{:.1}", avg(&|p| p.cpu.user + p.cpu.nice)),
            format!("{:.1}", avg(&|p| p.cpu.system)),
            format!("{:.1}", avg(&|p| p.cpu.iowait)),
            format!("{:.1}", avg(&|p| p.cpu.idle)),
            format!("{:.1}", avg(&|p| p.fslab_pct)),
        ];
        if let Some(d) = top {
            let dp: Vec<_> = d
                .samples
                .iter()
                .filter(|p| inside(p.t_ms, p.len_ms, ph.start_ms, ph.end_ms))
                .collect();
            let dlen: u64 = dp.iter().map(|p| p.len_ms).sum::<u64>().max(1);
            let util = dp.iter().map(|p| p.util_pct * p.len_ms as f64).sum::<f64>() / dlen as f64;
            let aw = |ios: &dyn Fn(&&crate::model::system::IostatPoint) -> u64,
                      ticks: &dyn Fn(&&crate::model::system::IostatPoint) -> u64| {
                let n: u64 = dp.iter().map(ios).sum();
                if n == 0 {
                    0.0
                } else {
                    dp.iter().map(ticks).sum::<u64>() as f64 / n as f64
                }
            };
            row.push(format!("{util:.1}"));
            row.push(format!("{:.2}", aw(&|p| p.read_ios, &|p| p.read_ticks_ms)));
            row.push(format!("{:.2}", aw(&|p| p.write_ios, &|p| p.write_ticks_ms)));
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return;
    }
    let mut head: Vec<String> = ["phase", "secs", "usr%", "sys%", "iowait%", "idle%", "fslab%"]
        .map(String::from)
        .to_vec();
    if let Some(d) = top {
        head.extend([format!("{} %util", d.name), "r_await".into(), "w_await".into()]);
    }
    s.push_str("  per phase (awaits in ms):\n");
    s.grid("    ", head, rows);
}

/// Writes `text` after `first` (the indent of the line) as one line: the
/// layout wraps it at the report's width (`--width`), continued under
/// `first` plus two spaces.
pub(super) fn wrapped(s: &mut String, first: &str, text: &str) {
    let _ = writeln!(s, "{first}{text}");
}

/// The device table: one row per device of the stack, as iostat -x.
fn device_table(s: &mut Doc, indent: &str, devs: &[DeviceData]) {
    let head = [
        "device",
        "r/s",
        "w/s",
        "rMB/s",
        "wMB/s",
        "r_await ms",
        "w_await ms",
        "aqu-sz",
        "%util",
    ]
    .map(String::from)
    .to_vec();
    let rows = devs
        .iter()
        .map(|d| {
            let t = &d.total;
            vec![
                d.name.clone(),
                format!("{:.1}", t.r_s),
                format!("{:.1}", t.w_s),
                format!("{:.2}", t.rmb_s),
                format!("{:.2}", t.wmb_s),
                format!("{:.2}", t.r_await_ms),
                format!("{:.2}", t.w_await_ms),
                format!("{:.2}", t.aqu_sz),
                format!("{:.1}", t.util_pct),
            ]
        })
        .collect();
    s.grid(indent, head, rows);
}

fn foreign_lines(s: &mut String, indent: &str, sys: &SystemData) {
    for f in &sys.interference.foreign_io {
        let _ = writeln!(
            s,
            "{indent}foreign I/O on {}: {} read, {} written (not issued by the device above)",
            f.device,
            Bytes(f.read_bytes),
            Bytes(f.write_bytes)
        );
    }
}

/// The full "system" block of a cell, under its table.
pub fn text_block(s: &mut Doc, c: &Cell) {
    let Some(sys) = &c.system else { return };
    let _ = writeln!(
        s,
        "system ({} CPU(s), {} ms samples, {}):",
        sys.ncpus,
        sys.interval_ms,
        if sys.interference.disturbed {
            "DISTURBED"
        } else {
            "quiet"
        }
    );
    if !sys.devices.is_empty() {
        let _ = writeln!(s, "  stack: {}", stack_line(sys));
        device_table(s, "  ", &sys.devices);
    }
    let shares = share_lines(sys);
    if !shares.is_empty() {
        s.push_str("  where the time goes (device await beside fslab's mean; share = device time / fslab's):\n");
        for l in shares {
            let _ = writeln!(s, "    {l}");
        }
        unattributed_lines(s, "    ", sys);
    }
    let _ = writeln!(s, "  cpu: {}", cpu_line(&sys.total));
    if let Some(p) = psi_line(&sys.total) {
        let _ = writeln!(s, "  pressure: {p}");
    }
    phase_table(s, sys);
    let _ = writeln!(s, "  memory: {}", memory_line(sys));
    // a disturbance's reasons (naming the processes) are said once, in the
    // cell's verdict line; without a verdict (older files) here; with
    // --quiet-warnings in the JSON only (the verdict line counts them)
    let said = sys.interference.disturbed
        && (s.quiet_warnings()
            || c.verdict
                .as_ref()
                .is_some_and(|v| v.has(crate::model::verdict::FlagKind::Disturbed)));
    if !said {
        wrapped(s, "  ", &interference_line(sys));
    }
    if !said && !sys.interference.top_others.is_empty() {
        let top: Vec<String> = sys
            .interference
            .top_others
            .iter()
            .take(3)
            .map(|o| format!("{} {}: {:.1}%", o.comm, o.pid, o.cpu_pct))
            .collect();
        let _ = writeln!(s, "  others: {}", top.join(", "));
    }
    foreign_lines(s, "  ", sys);
    for l in rerun_lines(sys) {
        wrapped(s, "  ", &l);
    }
    for r in &sys.ranks {
        let line = format!(
            "rank {} ({}): busy {:.1}%, fslab {:.1}%, {}",
            r.rank,
            r.host,
            100.0 - r.total.cpu.idle - r.total.cpu.iowait,
            r.total.fslab_pct,
            if r.interference.disturbed {
                format!("disturbed: {}", r.interference.reasons.join("; "))
            } else {
                format!("quiet: others {:.1}% CPU", r.interference.other_cpu_pct)
            }
        );
        wrapped(s, "  ", &line);
    }
    for n in &sys.notes {
        wrapped(s, "  ", &format!("note: {n}"));
    }
}

/// The compact block of one lab cell: its place, disturbed or quiet and the
/// dirty memory peaks; the device stack when it differs from `prev_stack`;
/// the device rows (under the section's header), where the time goes, the
/// CPU. Returns the stack line.
pub fn text_compact(s: &mut Doc, c: &Cell, prev_stack: &str) -> String {
    let Some(sys) = &c.system else {
        return prev_stack.to_string();
    };
    let place = match &c.lab {
        // column, repeat, table ("ext4 #1 randread"; "false #1 nbench · xfs")
        Some(l) => format!("{} #{} {}", l.column(), l.repeat, l.table()),
        None => c.name.clone(),
    };
    // the disturbance's reasons are said once, in the verdict line below
    // (with --quiet-warnings, in the JSON)
    let head = match &c.verdict {
        Some(v)
            if sys.interference.disturbed
                && (s.quiet_warnings() || v.has(crate::model::verdict::FlagKind::Disturbed)) =>
        {
            format!("{place}: DISTURBED")
        }
        _ => format!("{place}: {}", interference(sys, false)),
    };
    let (d, w) = dirty_peaks(sys);
    let mem = format!("peak Dirty {}, Writeback {}", Bytes(d * 1024), Bytes(w * 1024));
    let _ = writeln!(s, "{head}; {mem}");
    let stack = stack_line(sys);
    if !sys.devices.is_empty() {
        if stack != prev_stack {
            let _ = writeln!(s, "  stack: {stack}");
        }
        device_table(s, "  ", &sys.devices);
    }
    for l in share_lines(sys) {
        let _ = writeln!(s, "  {l}");
    }
    unattributed_lines(s, "  ", sys);
    let _ = writeln!(s, "  cpu: {}", cpu_line(&sys.total));
    foreign_lines(s, "  ", sys);
    if let Some(l) = crate::report::verdict::line(c, s.quiet_warnings()) {
        wrapped(s, "  ", &l);
    }
    for l in rerun_lines(sys) {
        wrapped(s, "  ", &l);
    }
    stack
}

/// The lab run's per-cell system section (after the comparison), or nothing
/// when no cell has telemetry.
pub fn lab_text(s: &mut Doc, cells: &[Cell]) {
    let with: Vec<&Cell> = cells.iter().filter(|c| c.system.is_some()).collect();
    if with.is_empty() {
        return;
    }
    s.push_str("system per cell (device figures over the cell as iostat -x; per direction each device's await beside fslab's mean latency, and its share: device time / fslab's):\n");
    let mut stack = String::new();
    for c in with {
        stack = text_compact(s, c, &stack);
    }
    s.push('\n');
}

/// "— vda write: why its time is not fslab's", under the share lines, one
/// per device and direction whose share is "—".
pub(super) fn unattributed_lines(s: &mut String, indent: &str, sys: &SystemData) {
    for l in &sys.latency_share {
        if let Some(why) = &l.unattributed {
            wrapped(s, indent, &format!("— {} {}: {why}", l.device, l.dir.name()));
        }
    }
}
