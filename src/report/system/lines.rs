//! The system beside a cell in single lines: the device stack, where the
//! latency goes, the CPU split, memory, pressure, interference, reruns,
//! xattr placement and the profile. The text blocks, the CSV and the HTML
//! page's captions all print these.

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

pub(super) fn memory_line(sys: &SystemData) -> String {
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

pub(super) fn psi_line(p: &SystemPoint) -> Option<String> {
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

pub(super) fn interference(sys: &SystemData, threshold: bool) -> String {
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

/// True when the cell has telemetry that marked it disturbed.
pub fn disturbed(c: &Cell) -> bool {
    c.system.as_ref().is_some_and(|s| s.interference.disturbed)
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
