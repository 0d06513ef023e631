//! A probe cell as text: per phase its latency table, the stalls, and a
//! sparkline of the probe's latencies over time.

use super::trailer::{target_line, trailer};
use crate::model::probe::ProbeData;
use crate::model::Cell;
use crate::report::render::doc::Doc;
use crate::units::{Bytes, Nanos};
use comfy_table::{presets::UTF8_BORDERS_ONLY, CellAlignment, Table};
use std::fmt::Write;

/// A probe cell: one row per phase, the stalls, then the worst probe of
/// every second as a sparkline (log scale) with the page cache beside it.
pub(super) fn probe_text(s: &mut Doc, c: &Cell, p: &ProbeData) {
    let _ = writeln!(
        s,
        "{}: {} probe every {} (stall ≥ {}){}, measured {:.2} s",
        c.name,
        p.op,
        Nanos(p.interval_ns),
        Nanos(p.stall_ns),
        p.load.as_ref().map(|l| format!(", load {l}")).unwrap_or_default(),
        c.elapsed_ns as f64 / 1e9
    );
    target_line(s, c);
    s.table(probe_table(p));
    s.push_str("(sched: from the scheduled slot; a probe that overran counts the slots it missed)\n");
    for st in p.stalls.iter().take(10) {
        let _ = writeln!(
            s,
            "stall at {:.3} s ({}): {} at most, {} at least, {} slot(s) missed",
            st.start_ns as f64 / 1e9,
            st.phase,
            Nanos(st.max_ns),
            Nanos(st.min_ns),
            st.missed
        );
    }
    if p.stalls.len() > 10 {
        let _ = writeln!(s, "... {} stalls in all (see the JSON)", p.stalls.len());
    }
    sparkline(s, c, p);
    if let Some(m) = p.context.iter().map(|x| x.dirty_kib).max() {
        let wb = p.context.iter().map(|x| x.writeback_kib).max().unwrap_or(0);
        let _ = writeln!(
            s,
            "page cache: Dirty up to {}, Writeback up to {}",
            Bytes(m * 1024),
            Bytes(wb * 1024)
        );
    }
    trailer(s, c);
}

/// A probe cell's phases, one row each.
fn probe_table(p: &ProbeData) -> Table {
    let mut tab = Table::new();
    tab.load_style(UTF8_BORDERS_ONLY);
    tab.set_header([
        "phase",
        "probes",
        "missed",
        "stalls",
        "p50",
        "p99",
        "max",
        "p99 sched",
        "max sched",
        "load MB/s",
        "errors",
    ]);
    for ph in &p.phases {
        tab.add_row([
            ph.name.clone(),
            ph.probes.to_string(),
            ph.missed.to_string(),
            ph.stalls.to_string(),
            Nanos(ph.lat.p(50.0)).to_string(),
            Nanos(ph.lat.p(99.0)).to_string(),
            Nanos(ph.lat.max_ns).to_string(),
            Nanos(ph.sched_lat.p(99.0)).to_string(),
            Nanos(ph.sched_lat.max_ns).to_string(),
            format!("{:.1}", ph.load_mb_s),
            if ph.errors.is_empty() {
                "0".into()
            } else {
                ph.errors
                    .iter()
                    .map(|(e, n)| format!("{e}:{n}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            },
        ]);
    }
    for (i, col) in tab.column_iter_mut().enumerate() {
        if i > 0 {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    tab
}

/// The worst probe of every second as a sparkline, the phases marked under it.
fn sparkline(s: &mut String, c: &Cell, p: &ProbeData) {
    // worst probe per second, on a log scale from 10 µs to 10 s
    let secs = (c.elapsed_ns / 1_000_000_000 + 1) as usize;
    let mut worst = vec![0u64; secs];
    for x in &p.samples {
        let i = ((x.t_ns / 1_000_000_000) as usize).min(secs - 1);
        worst[i] = worst[i].max(x.sched_lat_ns);
    }
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let spark: String = worst
        .iter()
        .map(|&w| {
            if w == 0 {
                ' '
            } else {
                let l = ((w as f64).log10() - 4.0) / 6.0 * 8.0;
                BARS[(l.max(0.0) as usize).min(7)]
            }
        })
        .collect();
    let _ = writeln!(s, "worst probe per second (▁ 10 µs .. █ ≥ 1 s, log scale):");
    let _ = writeln!(s, "  {spark}");
    let mut marks = String::new();
    for ph in &p.phases {
        let at = (ph.start_ns / 1_000_000_000) as usize;
        while marks.chars().count() < at {
            marks.push(' ');
        }
        marks.push('^');
        marks.push_str(&ph.name);
    }
    let _ = writeln!(s, "  {marks}");
}
