//! The system beside a cell (`cell.system`, model::system) as text: the
//! device stack with its `iostat -x` figures, where fslab's latency goes
//! (each device's await beside fslab's mean latency, and its share), the
//! CPU split, pressure, dirty memory and interference ("disturbed: ..." or
//! "quiet: ..."). Plain text, at most 100 columns, for mail. Used by
//! `text` (one block per cell, a compact one per lab cell), and its
//! helpers by `csv` and `html`.

use super::render::doc::Doc;
use crate::model::system::{DeviceData, DeviceRole, LatencyShare, SystemData, SystemPoint};
use crate::model::Cell;
use crate::stats::OpKind;
use crate::units::{Bytes, Nanos};
use std::fmt::Write;

/// "loop", "dm", "md", "partition", "disk".
pub fn role_name(r: DeviceRole) -> &'static str {
    match r {
        DeviceRole::Loop => "loop",
        DeviceRole::Dm => "dm",
        DeviceRole::Md => "md",
        DeviceRole::Partition => "partition",
        DeviceRole::Disk => "disk",
    }
}

/// "loop3 (loop over /var/tmp/x.img, dio on)", "vda (disk, mq-deadline)".
pub fn device_label(d: &DeviceData) -> String {
    let mut what = match (&d.role, &d.backing) {
        (DeviceRole::Loop, Some(b)) => format!("loop over {b}"),
        (r, _) => role_name(*r).to_string(),
    };
    if let Some(dio) = d.direct_io {
        let _ = write!(what, ", dio {}", if dio { "on" } else { "off" });
    }
    if let Some(sc) = d.scheduler.as_deref().filter(|s| !s.is_empty() && *s != "none") {
        let _ = write!(what, ", {sc}");
    }
    format!("{} ({what})", d.name)
}

/// The stack top first: "loop3 (loop over X) -> vda (disk, mq-deadline)";
/// members of the same device joined with " + ".
pub fn stack_line(sys: &SystemData) -> String {
    let mut s = String::new();
    let mut prev: Option<&DeviceData> = None;
    for d in &sys.devices {
        match prev {
            None => {}
            Some(p) if d.above.is_some() && d.above == p.above => s.push_str(" + "),
            Some(_) => s.push_str(" -> "),
        }
        s.push_str(&device_label(d));
        prev = Some(d);
    }
    s
}

/// Directions in the order read, write, then the rest as first seen.
fn share_dirs(sys: &SystemData) -> Vec<OpKind> {
    let mut dirs: Vec<OpKind> = Vec::new();
    for l in &sys.latency_share {
        if !dirs.contains(&l.dir) {
            dirs.push(l.dir);
        }
    }
    dirs.sort_by_key(|d| match d {
        OpKind::Read => 0,
        OpKind::Write => 1,
        _ => 2,
    });
    dirs
}

fn us(v: f64) -> String {
    Nanos((v * 1e3).max(0.0).round() as u64).to_string()
}

/// "read: fslab 412 µs, loop3 await 398 µs (97%), vda await 380 µs (93%)",
/// one per direction.
pub fn share_lines(sys: &SystemData) -> Vec<String> {
    let dirs = share_dirs(sys);
    let w = dirs.iter().map(|d| d.name().len() + 1).max().unwrap_or(0);
    dirs.into_iter()
        .map(|dir| {
            let of: Vec<&LatencyShare> = sys.latency_share.iter().filter(|l| l.dir == dir).collect();
            let mut line = format!("{:<w$} ", format!("{}:", dir.name()));
            match of.iter().find(|l| l.ops > 0) {
                Some(l) => {
                    let _ = write!(line, "fslab {}", us(l.mean_lat_us));
                }
                None => line.push_str("fslab -"),
            }
            for l in of {
                let _ = write!(line, ", {} await ", l.device);
                if l.device_ios == 0 {
                    line.push_str("- (no I/O)");
                    continue;
                }
                line.push_str(&us(l.await_us));
                if let Some(p) = l.share_pct {
                    let _ = write!(line, " ({p:.0}%)");
                } else if l.unattributed.is_some() {
                    line.push_str(" (share —, see below)");
                }
            }
            line
        })
        .collect()
}

/// "— vda write: why its time is not fslab's", under the share lines, one
/// per device and direction whose share is "—".
fn unattributed_lines(s: &mut String, indent: &str, sys: &SystemData) {
    for l in &sys.latency_share {
        if let Some(why) = &l.unattributed {
            wrapped(s, indent, &format!("— {} {}: {why}", l.device, l.dir.name()));
        }
    }
}

/// "usr 12.0% sys 30.1% iowait 40.2% irq 0.1% soft 1.0% steal 0.0% idle 16.6%, fslab 38.5%"
pub fn cpu_line(p: &SystemPoint) -> String {
    let c = &p.cpu;
    let mut s = format!("usr {:.1}%", c.user);
    if c.nice >= 0.05 {
        let _ = write!(s, " nice {:.1}%", c.nice);
    }
    let _ = write!(
        s,
        " sys {:.1}% iowait {:.1}% irq {:.1}% soft {:.1}% steal {:.1}% idle {:.1}%, fslab {:.1}%",
        c.system, c.iowait, c.irq, c.softirq, c.steal, c.idle, p.fslab_pct
    );
    s
}

/// Dirty and Writeback at their peak over the samples (the total's without samples).
pub fn dirty_peaks(sys: &SystemData) -> (u64, u64) {
    let pts = || sys.samples.iter().chain(std::iter::once(&sys.total));
    (
        pts().map(|p| p.dirty_kib).max().unwrap_or(0),
        pts().map(|p| p.writeback_kib).max().unwrap_or(0),
    )
}

fn memory_line(sys: &SystemData) -> String {
    let (d, w) = dirty_peaks(sys);
    let mut s = format!("Dirty peak {}, Writeback peak {}", Bytes(d * 1024), Bytes(w * 1024));
    let t = &sys.total;
    if t.dirty_threshold_kib > 0 {
        let _ = write!(
            s,
            " (thresholds {}, background {})",
            Bytes(t.dirty_threshold_kib * 1024),
            Bytes(t.dirty_bg_threshold_kib * 1024)
        );
    }
    s
}

fn psi_line(p: &SystemPoint) -> Option<String> {
    let x = p.psi.as_ref()?;
    Some(format!(
        "io some {:.1}% full {:.1}%, memory some {:.1}% full {:.1}%, cpu some {:.1}%",
        x.io_some, x.io_full, x.memory_some, x.memory_full, x.cpu_some
    ))
}

/// "disturbed: reason; reason" or "quiet: others 1.2% CPU (threshold 10.0%)".
pub fn interference_line(sys: &SystemData) -> String {
    interference(sys, true)
}

fn interference(sys: &SystemData, threshold: bool) -> String {
    let i = &sys.interference;
    if i.disturbed {
        if i.reasons.is_empty() {
            format!(
                "disturbed: others {:.1}% CPU, steal {:.1}% (threshold {:.1}%)",
                i.other_cpu_pct, i.steal_pct, i.cpu_threshold_pct
            )
        } else {
            format!("disturbed: {}", i.reasons.join("; "))
        }
    } else {
        let mut s = format!("quiet: others {:.1}% CPU", i.other_cpu_pct);
        if i.steal_pct >= 0.05 {
            let _ = write!(s, ", steal {:.1}%", i.steal_pct);
        }
        if threshold && i.cpu_threshold_pct > 0.0 {
            let _ = write!(s, " (threshold {:.1}%)", i.cpu_threshold_pct);
        }
        s
    }
}

/// `--retry-disturbed`: "attempt 2 (reran after attempt 1: ...)", one line
/// per earlier attempt; nothing for a first attempt.
pub fn rerun_lines(sys: &SystemData) -> Vec<String> {
    if sys.attempts <= 1 && sys.rerun_reasons.is_empty() {
        return Vec::new();
    }
    let mut v = vec![format!(
        "attempt {} (--retry-disturbed reran the cell {} time(s)):",
        sys.attempts,
        sys.rerun_reasons.len()
    )];
    v.extend(sys.rerun_reasons.iter().map(|r| format!("  {r}")));
    v
}

/// Per timed phase (when there are several), from the samples whose
/// interval's middle falls inside it: the CPU split and the top device's
/// %util and awaits. Phases shorter than a sample have no row.
fn phase_table(s: &mut String, sys: &SystemData) {
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
        let mut row = format!(
            "{:<14.14} {:>6.1} {:>6.1} {:>6.1} {:>7.1} {:>6.1} {:>6.1}",
            ph.name,
            (ph.end_ms - ph.start_ms) as f64 / 1e3,
            avg(&|p| p.cpu.user + p.cpu.nice),
            avg(&|p| p.cpu.system),
            avg(&|p| p.cpu.iowait),
            avg(&|p| p.cpu.idle),
            avg(&|p| p.fslab_pct)
        );
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
            let _ = write!(
                row,
                " {:>7.1} {:>8.2} {:>8.2}",
                util,
                aw(&|p| p.read_ios, &|p| p.read_ticks_ms),
                aw(&|p| p.write_ios, &|p| p.write_ticks_ms)
            );
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return;
    }
    let mut head = format!(
        "{:<14} {:>6} {:>6} {:>6} {:>7} {:>6} {:>6}",
        "phase", "secs", "usr%", "sys%", "iowait%", "idle%", "fslab%"
    );
    if let Some(d) = top {
        let _ = write!(
            head,
            " {:>7} {:>8} {:>8}",
            format!("{} %util", d.name),
            "r_await",
            "w_await"
        );
    }
    let _ = writeln!(s, "  per phase (awaits in ms):\n    {head}");
    for r in rows {
        let _ = writeln!(s, "    {r}");
    }
}

/// Width of the text report's lines.
const WIDTH: usize = 100;

/// Writes `text` after `first` (the indent of the first line), broken at
/// spaces into lines of at most WIDTH columns, continued under `first` plus
/// two spaces (a word longer than a line stays whole).
fn wrapped(s: &mut String, first: &str, text: &str) {
    let cont = format!("{first}  ");
    let mut line = first.to_string();
    let mut fresh = true;
    for word in text.split(' ') {
        if !fresh && line.chars().count() + 1 + word.chars().count() > WIDTH {
            let _ = writeln!(s, "{line}");
            line = cont.clone();
            fresh = true;
        }
        if !fresh {
            line.push(' ');
        }
        line.push_str(word);
        fresh = false;
    }
    let _ = writeln!(s, "{line}");
}

/// True when the cell has telemetry that marked it disturbed.
pub fn disturbed(c: &Cell) -> bool {
    c.system.as_ref().is_some_and(|s| s.interference.disturbed)
}

/// Width of the device column.
const DEV_W: usize = 8;

fn device_header(s: &mut String, indent: &str) {
    let _ = writeln!(
        s,
        "{indent}{:<DEV_W$} {:>9} {:>9} {:>8} {:>8} {:>10} {:>10} {:>7} {:>6}",
        "device", "r/s", "w/s", "rMB/s", "wMB/s", "r_await ms", "w_await ms", "aqu-sz", "%util"
    );
}

/// The device table: one row per device of the stack.
fn device_table(s: &mut String, indent: &str, devs: &[DeviceData]) {
    device_header(s, indent);
    device_rows(s, indent, devs);
}

fn device_rows(s: &mut String, indent: &str, devs: &[DeviceData]) {
    let w = devs.iter().map(|d| d.name.len()).max().unwrap_or(0).max(DEV_W);
    for d in devs {
        let t = &d.total;
        let _ = writeln!(
            s,
            "{indent}{:<w$} {:>9.1} {:>9.1} {:>8.2} {:>8.2} {:>10.2} {:>10.2} {:>7.2} {:>6.1}",
            d.name, t.r_s, t.w_s, t.rmb_s, t.wmb_s, t.r_await_ms, t.w_await_ms, t.aqu_sz, t.util_pct
        );
    }
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
        Some(l) => format!("{} #{} {}", l.column(), l.repeat, l.workload),
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
    if head.chars().count() + mem.len() + 2 <= WIDTH {
        let _ = writeln!(s, "{head}; {mem}");
    } else {
        wrapped(s, "", &head);
        let _ = writeln!(s, "  {mem}");
    }
    let stack = stack_line(sys);
    if !sys.devices.is_empty() {
        if stack != prev_stack {
            let _ = writeln!(s, "  stack: {stack}");
        }
        device_rows(s, "  ", &sys.devices);
    }
    for l in share_lines(sys) {
        let _ = writeln!(s, "  {l}");
    }
    unattributed_lines(s, "  ", sys);
    let _ = writeln!(s, "  cpu: {}", cpu_line(&sys.total));
    foreign_lines(s, "  ", sys);
    if let Some(l) = super::verdict::line(c, s.quiet_warnings()) {
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
    s.push_str("system per cell (device figures over the cell as iostat -x; per direction each device's\nawait beside fslab's mean latency, and its share: device time / fslab's):\n");
    device_header(s, "  ");
    let mut stack = String::new();
    for c in with {
        stack = text_compact(s, c, &stack);
    }
    s.push('\n');
}

/// `cell.xattrs` as one line.
pub fn xattrs_line(c: &Cell) -> Option<String> {
    let x = c.xattrs.as_ref()?;
    Some(match &x.error {
        Some(e) => format!("xattrs: placement not sampled: {e}"),
        None => format!(
            "xattrs: {} file(s) sampled: {} in the inode, {} in an external block, {} without",
            x.sampled, x.in_inode, x.external, x.none
        ),
    })
}

/// `cell.profile` as one line (the top symbols are rendered beside it).
pub fn profile_line(c: &Cell) -> Option<String> {
    let p = c.profile.as_ref()?;
    let samples: u64 = p.phases.iter().map(|ph| ph.samples).sum();
    let lost: u64 = p.phases.iter().map(|ph| ph.lost).sum();
    let mut s = format!(
        "profile: {} at {} Hz, {} sample(s) in {} phase(s)",
        p.event,
        p.frequency_hz,
        samples,
        p.phases.len()
    );
    if lost > 0 {
        let _ = write!(s, " ({lost} lost)");
    }
    let _ = write!(s, ", overhead {:.1}% of fslab's CPU", p.overhead_pct);
    if let Some(f) = &p.folded_file {
        let _ = write!(s, ", folded stacks in {f}");
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::system::{Interference, XattrPlacement};

    fn share(device: &str, dir: OpKind, ops: u64, ios: u64, share_pct: Option<f64>) -> LatencyShare {
        LatencyShare {
            device: device.into(),
            dir,
            ops,
            mean_lat_us: 412.0,
            device_ios: ios,
            await_us: 398.0,
            share_pct,
            unattributed: None,
        }
    }

    #[test]
    fn shares_read_first_and_say_what_is_missing() {
        let sys = SystemData {
            latency_share: vec![
                share("loop0", OpKind::Write, 0, 0, None),
                share("loop0", OpKind::Read, 10, 10, Some(96.6)),
                share("vda", OpKind::Read, 10, 0, None),
            ],
            ..SystemData::default()
        };
        assert_eq!(
            share_lines(&sys),
            [
                "read:  fslab 412 µs, loop0 await 398 µs (97%), vda await - (no I/O)",
                "write: fslab -, loop0 await - (no I/O)"
            ]
        );
    }

    #[test]
    fn labels_and_stack() {
        let dev = |name: &str, role, above: Option<&str>| DeviceData {
            name: name.into(),
            role,
            above: above.map(String::from),
            backing: (role == DeviceRole::Loop).then(|| "/var/tmp/x.img".to_string()),
            scheduler: Some(
                if role == DeviceRole::Loop {
                    "none"
                } else {
                    "mq-deadline"
                }
                .into(),
            ),
            ..DeviceData::default()
        };
        let sys = SystemData {
            devices: vec![
                dev("md0", DeviceRole::Md, None),
                dev("vdb", DeviceRole::Disk, Some("md0")),
                dev("vdc", DeviceRole::Disk, Some("md0")),
            ],
            ..SystemData::default()
        };
        assert_eq!(
            stack_line(&sys),
            "md0 (md, mq-deadline) -> vdb (disk, mq-deadline) + vdc (disk, mq-deadline)"
        );
        assert_eq!(
            device_label(&dev("loop3", DeviceRole::Loop, None)),
            "loop3 (loop over /var/tmp/x.img)"
        );
        let dio = DeviceData {
            direct_io: Some(false),
            ..dev("loop3", DeviceRole::Loop, None)
        };
        assert_eq!(device_label(&dio), "loop3 (loop over /var/tmp/x.img, dio off)");
    }

    #[test]
    fn phases_get_their_samples() {
        use crate::model::system::{IostatPoint, PhaseSpan};
        let pt = |t_ms: u64, user: f64| SystemPoint {
            t_ms,
            len_ms: 1000,
            cpu: crate::model::system::CpuSplit {
                user,
                idle: 100.0 - user,
                ..Default::default()
            },
            ..SystemPoint::default()
        };
        let io = |t_ms: u64, w: u64, ticks: u64| IostatPoint {
            t_ms,
            len_ms: 1000,
            util_pct: 50.0,
            write_ios: w,
            write_ticks_ms: ticks,
            ..IostatPoint::default()
        };
        let sys = SystemData {
            phases: vec![
                PhaseSpan {
                    name: "seq-create".into(),
                    start_ms: 0,
                    end_ms: 2000,
                },
                PhaseSpan {
                    name: "seq-stat".into(),
                    start_ms: 2000,
                    end_ms: 2300,
                },
                PhaseSpan {
                    name: "seq-delete".into(),
                    start_ms: 2300,
                    end_ms: 3400,
                },
            ],
            samples: vec![pt(1000, 10.0), pt(2000, 30.0), pt(3000, 80.0)],
            devices: vec![DeviceData {
                name: "vda".into(),
                samples: vec![io(1000, 100, 100), io(2000, 300, 900), io(3000, 0, 0)],
                ..DeviceData::default()
            }],
            ..SystemData::default()
        };
        let mut s = String::new();
        phase_table(&mut s, &sys);
        assert_eq!(
            s,
            "  per phase (awaits in ms):
    phase            secs   usr%   sys% iowait%  idle% fslab% vda %util  r_await  w_await
    seq-create        2.0   20.0    0.0     0.0   80.0    0.0    50.0     0.00     2.50
    seq-delete        1.1   80.0    0.0     0.0   20.0    0.0    50.0     0.00     0.00
"
        );
    }

    #[test]
    fn long_lines_wrap_at_100_columns() {
        let mut s = String::new();
        let reason = "other processes used 76.5% of the CPUs (rustc 26752: 26.3%, rustc 28296: 22.4%, rustc 28509: 19.0%), steal 9.0%: above 10%";
        wrapped(&mut s, "  ", &format!("disturbed: {reason}"));
        assert!(s.lines().all(|l| l.chars().count() <= 100), "{s}");
        assert_eq!(s.lines().count(), 2);
        assert!(s.lines().nth(1).unwrap().starts_with("    "), "{s}");
        assert_eq!(
            s.split_whitespace().collect::<Vec<_>>().join(" "),
            format!("disturbed: {reason}")
        );
    }

    #[test]
    fn interference_says_disturbed_or_quiet() {
        let mut sys = SystemData {
            interference: Interference {
                other_cpu_pct: 1.24,
                cpu_threshold_pct: 10.0,
                ..Interference::default()
            },
            ..SystemData::default()
        };
        assert_eq!(interference_line(&sys), "quiet: others 1.2% CPU (threshold 10.0%)");
        sys.interference.disturbed = true;
        sys.interference.other_cpu_pct = 48.0;
        assert_eq!(
            interference_line(&sys),
            "disturbed: others 48.0% CPU, steal 0.0% (threshold 10.0%)"
        );
        sys.interference.reasons = vec!["a".into(), "b".into()];
        assert_eq!(interference_line(&sys), "disturbed: a; b");
    }

    #[test]
    fn a_cell_without_devices_or_psi_has_a_short_block() {
        let r = crate::model::parse_report(include_str!("../../tests/fixtures/meta.json")).unwrap();
        let mut c = r.cells[0].clone();
        let mut s = Doc::new();
        text_block(&mut s, &c);
        assert!(s.is_empty(), "no system, no block");
        c.system = Some(SystemData {
            ncpus: 2,
            interval_ms: 1000,
            ..SystemData::default()
        });
        c.xattrs = Some(XattrPlacement {
            error: Some("EOPNOTSUPP".into()),
            ..XattrPlacement::default()
        });
        text_block(&mut s, &c);
        assert_eq!(
            *s,
            "system (2 CPU(s), 1000 ms samples, quiet):\n  cpu: usr 0.0% sys 0.0% iowait 0.0% irq 0.0% soft 0.0% steal 0.0% idle 0.0%, fslab 0.0%\n  memory: Dirty peak 0 B, Writeback peak 0 B\n  quiet: others 0.0% CPU\n"
        );
        assert_eq!(xattrs_line(&c).unwrap(), "xattrs: placement not sampled: EOPNOTSUPP");
    }
}
