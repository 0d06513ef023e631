//! A cell's latency anatomy as text: per operation kind, each layer's
//! mean and share of the end-to-end time and its p99; the block layer per
//! device; and a paragraph per slow operation saying where it slept, who
//! woke it, and what the journal and the device did meanwhile.

use crate::model::anatomy::{Anatomy, SlowOperation};
use crate::model::Cell;
use crate::report::render::doc::Doc;
use crate::stats::anatomy::{Figure, KindAnatomy};
use crate::units::{Bytes, Nanos};
use std::fmt::Write;

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn p99(f: &Figure) -> u64 {
    f.hist.quantile(0.99, 0, u64::MAX)
}

fn mean(f: &Figure, n: u64) -> u64 {
    f.sum_ns.checked_div(n).unwrap_or(0)
}

/// "12.3 µs 28%": a layer's mean and its share of the end-to-end mean.
fn share(f: &Figure, k: &KindAnatomy) -> String {
    if f.sum_ns == 0 {
        return "—".into();
    }
    let pct = f.sum_ns as f64 * 100.0 / k.total.sum_ns.max(1) as f64;
    format!("{} {:.0}%", Nanos(mean(f, k.ops)), pct)
}

fn layers_table(s: &mut Doc, a: &Anatomy) {
    let mut head: Vec<String> = vec!["anatomy".into(), "ops".into(), "end to end".into()];
    head.extend(a.layer_names.iter().map(|l| l.name().to_string()));
    head.extend(["blk queue".to_string(), "blk device".to_string()]);
    let mut rows = Vec::new();
    for e in &a.kinds {
        let k = &e.anatomy;
        let mut mean_row = vec![
            format!("{} mean", e.kind.name()),
            k.ops.to_string(),
            Nanos(mean(&k.total, k.ops)).to_string(),
        ];
        mean_row.extend(k.layers.iter().map(|f| share(f, k)));
        let blk = |f: &Figure| {
            if k.block_requests == 0 {
                "—".to_string()
            } else {
                Nanos(mean(f, k.ops)).to_string()
            }
        };
        mean_row.extend([blk(&k.block_queue), blk(&k.block_device)]);
        rows.push(mean_row);
        let mut p99_row = vec!["  p99".to_string(), String::new(), Nanos(p99(&k.total)).to_string()];
        p99_row.extend(k.layers.iter().map(|f| {
            if f.nonzero == 0 {
                "—".into()
            } else {
                Nanos(p99(f)).to_string()
            }
        }));
        let bp = |f: &Figure| {
            if f.nonzero == 0 {
                "—".to_string()
            } else {
                Nanos(p99(f)).to_string()
            }
        };
        p99_row.extend([bp(&k.block_queue), bp(&k.block_device)]);
        rows.push(p99_row);
    }
    let _ = writeln!(
        s,
        "anatomy (BPF on tracepoints): each layer's mean per operation and share of end to end; on CPU is end to end less the time off the CPU; blk is the requests the operation's own thread submitted (part of its I/O wait)"
    );
    s.grid("  ", head, rows);
    for e in a.kinds.iter().filter(|e| e.anatomy.overshoot > 0) {
        let _ = writeln!(
            s,
            "anatomy: {} {} operations measured more time off the CPU than end to end (clocks disagree; their on-CPU share is 0)",
            e.anatomy.overshoot,
            e.kind.name()
        );
    }
}

fn devices_grid(s: &mut Doc, a: &Anatomy) {
    let head = [
        "device",
        "dir",
        "requests",
        "queue mean",
        "queue p99",
        "device mean",
        "device p99",
    ]
    .map(String::from);
    let rows = a
        .devices
        .iter()
        .map(|d| {
            let q_n = d.queue.nonzero;
            vec![
                if d.name.is_empty() {
                    d.dev.clone()
                } else {
                    format!("{} ({})", d.name, d.dev)
                },
                d.dir.clone(),
                d.requests.to_string(),
                if q_n == 0 {
                    "—".into()
                } else {
                    Nanos(mean(&d.queue, q_n)).to_string()
                },
                if q_n == 0 {
                    "—".into()
                } else {
                    Nanos(p99(&d.queue)).to_string()
                },
                Nanos(mean(&d.device, d.requests)).to_string(),
                Nanos(p99(&d.device)).to_string(),
            ]
        })
        .collect();
    let _ = writeln!(s, "block layer (every request on every device during the cell; queue: insert to issue, device: issue to complete):");
    s.grid("  ", head.to_vec(), rows);
}

/// The paragraph of one slow operation.
pub fn paragraph(o: &SlowOperation) -> String {
    let mut p = format!(
        "{} at {:.2} s took {}: asleep {}",
        o.kind.name(),
        o.at_ns as f64 / 1e9,
        Nanos(o.latency_ns),
        Nanos(o.asleep_ns)
    );
    let mut parts = Vec::new();
    for sl in o.sleeps.iter().take(4) {
        let mut w = format!("{} ", Nanos(sl.ns));
        if sl.site.is_empty() {
            w.push_str("with no stack captured");
        } else {
            let chain: Vec<&str> = sl.stack.iter().take(3).map(String::as_str).collect();
            let _ = write!(w, "in {} ({}, {})", chain.join(" ← "), sl.class.name(), sl.state);
        }
        if !sl.waker.is_empty() {
            let _ = write!(w, ", woken by {}", sl.waker);
            if let Some(f) = sl.waker_stack.iter().find(|f| !f.contains("wake")) {
                let _ = write!(w, " in {f}");
            }
        }
        parts.push(w);
    }
    if o.sleeps.len() > 4 {
        let rest: u64 = o.sleeps[4..].iter().map(|x| x.ns).sum();
        let n = o.sleeps.len() as u64 - 4;
        parts.push(format!("{n} more sleep{} {}", plural(n), Nanos(rest)));
    }
    for c in &o.short_sleeps {
        parts.push(format!(
            "{} sleep{} under 1 ms {} ({})",
            c.count,
            plural(c.count),
            Nanos(c.ns),
            c.class.name()
        ));
    }
    if o.unseen_ns > 0 {
        parts.push(format!("{} in sleeps not recorded", Nanos(o.unseen_ns)));
    }
    if !parts.is_empty() {
        let _ = write!(p, ": {}", parts.join("; "));
    }
    let _ = write!(p, ". Runqueue {}.", Nanos(o.runqueue_ns));
    meanwhile(&mut p, o);
    let _ = write!(
        p,
        " {:.0}% of its time is in named sleeps.",
        o.attributed_share() * 100.0
    );
    p
}

/// What the journal and the devices did during a slow operation.
fn meanwhile(p: &mut String, o: &SlowOperation) {
    for c in o.commits.iter().take(3) {
        let _ = write!(p, " jbd2 commit {} on {}", c.tid, c.dev);
        if let Some(t) = c.total_ns {
            let _ = write!(p, " took {}", Nanos(t));
        }
        let phases: Vec<String> = [
            ("locking", c.locking_ns),
            ("flushing", c.flushing_ns),
            ("logging", c.logging_ns),
        ]
        .iter()
        .filter_map(|(n, v)| v.map(|v| format!("{n} {}", Nanos(v))))
        .collect();
        if !phases.is_empty() {
            let _ = write!(p, " ({})", phases.join(", "));
        }
        if let Some(b) = c.blocks {
            let _ = write!(p, ", {b} blocks");
        }
        p.push('.');
    }
    if o.log_forces > 0 {
        let _ = write!(
            p,
            " XFS log forces: {} ({} by this thread).",
            o.log_forces, o.own_log_forces
        );
    }
    let d = &o.device;
    if d.requests > 0 {
        let _ = write!(
            p,
            " Devices meanwhile: {} requests ({} writes, {}), device time mean {} max {}, queue mean {}.",
            d.requests,
            d.writes,
            Bytes(d.bytes),
            Nanos(d.device_ns / d.requests),
            Nanos(d.device_max_ns),
            Nanos(d.queue_ns / d.requests)
        );
    } else {
        p.push_str(" No block request completed meanwhile.");
    }
    if o.own_requests > 0 {
        let _ = write!(
            p,
            " Its own {} requests: queue {}, device {}.",
            o.own_requests,
            Nanos(o.own_queue_ns),
            Nanos(o.own_device_ns)
        );
    }
}

fn slow_text(s: &mut Doc, a: &Anatomy) {
    let Some(t) = a.slow_threshold_ns else {
        return;
    };
    let total: u64 = a.slow.iter().map(|o| o.latency_ns).sum();
    let named: u64 = a.slow.iter().map(|o| o.attributed_ns).sum();
    let n = a.slow.len() as u64 + a.slow_dropped;
    let _ = write!(s, "explain-slow: {n} operation{} at or over {}", plural(n), Nanos(t));
    if a.slow_dropped > 0 {
        let _ = write!(s, " (the {} slowest explained)", a.slow.len());
    }
    if total > 0 {
        let _ = write!(
            s,
            "; {:.1}% of their time attributed to named wait sites with stacks",
            named as f64 * 100.0 / total as f64
        );
    }
    s.push('\n');
    for o in &a.slow {
        let _ = writeln!(s, "  {}", paragraph(o));
    }
}

/// The lab run's per-cell anatomy section (after the system's), or nothing
/// when no cell was traced.
pub fn lab_text(s: &mut Doc, cells: &[Cell]) {
    let with: Vec<&Cell> = cells.iter().filter(|c| c.anatomy.is_some()).collect();
    if with.is_empty() {
        return;
    }
    s.push_str("anatomy per cell:\n");
    for c in with {
        let place = match &c.lab {
            Some(l) => format!("{} #{} {}", l.column(), l.repeat, l.table()),
            None => c.name.clone(),
        };
        let _ = writeln!(s, "{place}:");
        text(s, c);
    }
    s.push('\n');
}

/// The anatomy lines of `c`, if it was traced.
pub fn text(s: &mut Doc, c: &Cell) {
    let Some(a) = &c.anatomy else {
        return;
    };
    if !a.kinds.is_empty() {
        layers_table(s, a);
    }
    if !a.devices.is_empty() {
        devices_grid(s, a);
    }
    slow_text(s, a);
    if let Some(line) = cost_line(a) {
        let _ = writeln!(s, "anatomy: {line}");
    }
    for u in &a.unobserved {
        let _ = writeln!(s, "anatomy: not observed: {u}");
    }
}

/// "tracing cost 1234 BPF runs, 1.2 ms on CPU in the kernel (every task's
/// events), at most 25 ns per traced operation".
pub fn cost_line(a: &Anatomy) -> Option<String> {
    let c = a.tracer_cost?;
    let ops: u64 = a.kinds.iter().map(|k| k.anatomy.ops).sum();
    let mut line = format!(
        "tracing cost {} BPF run{}, {} on CPU in the kernel (every task's events)",
        c.runs,
        plural(c.runs),
        Nanos(c.kernel_ns)
    );
    if let Some(per) = c.kernel_ns.checked_div(ops) {
        let per = if per == 0 {
            "under 1 ns".to_string()
        } else {
            Nanos(per).to_string()
        };
        let _ = write!(line, ", at most {per} per traced operation");
    }
    Some(line)
}
