//! The text tables of what a distributed or stonewalled run adds: each
//! rank's rate with the spread, and the two rates of a stonewall.

use crate::model::{Cell, DirResult};
use crate::units::fmt_rate;
use comfy_table::{presets::UTF8_BORDERS_ONLY, CellAlignment, Table};

fn label(d: &DirResult) -> String {
    d.phase.clone().unwrap_or_else(|| d.dir.name().to_string())
}

fn secs(ns: u64) -> String {
    format!("{:.3} s", ns as f64 / 1e9)
}

fn right_aligned(mut tab: Table) -> Table {
    for (i, col) in tab.column_iter_mut().enumerate() {
        if i > 0 {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    tab
}

/// The text tables of a cell's ranks and stonewalls (empty when it has neither).
pub fn text(c: &Cell) -> String {
    let mut s = String::new();
    let ranked: Vec<_> = c
        .directions
        .iter()
        .filter_map(|d| Some((d, d.ranks.as_ref()?)))
        .collect();
    if let Some((_, first)) = ranked.first() {
        let mut tab = Table::new();
        tab.load_style(UTF8_BORDERS_ONLY);
        tab.set_header([
            "per rank",
            "ranks",
            "min ops/s",
            "mean ops/s",
            "max ops/s",
            "slowest rank",
        ]);
        for (d, r) in &ranked {
            let slow = &r.per_rank[r.slowest_rank.min(r.per_rank.len() - 1)];
            tab.add_row([
                label(d),
                r.per_rank.len().to_string(),
                fmt_rate(r.min_ops_per_s),
                fmt_rate(r.mean_ops_per_s),
                fmt_rate(r.max_ops_per_s),
                format!("{} on {} ({})", slow.rank, slow.host, secs(slow.elapsed_ns)),
            ]);
        }
        let hosts: std::collections::BTreeSet<&str> = first.per_rank.iter().map(|r| r.host.as_str()).collect();
        s.push_str(&format!(
            "{} MPI ranks on {} host(s); totals above are of every rank, percentiles from the merged histograms\n{}\n",
            first.per_rank.len(),
            hosts.len(),
            right_aligned(tab)
        ));
    }
    let walled: Vec<_> = c
        .directions
        .iter()
        .filter_map(|d| Some((d, d.stonewall.as_ref()?)))
        .collect();
    if !walled.is_empty() {
        let mut tab = Table::new();
        tab.load_style(UTF8_BORDERS_ONLY);
        tab.set_header([
            "stonewall",
            "fell",
            "at",
            "ops/s at stonewall",
            "last stopped",
            "ops/s at last",
        ]);
        for (d, w) in &walled {
            tab.add_row([
                label(d),
                w.describe(),
                secs(w.at_ns),
                fmt_rate(w.ops_per_s_at_stonewall),
                secs(w.last_ns),
                fmt_rate(w.ops_per_s_at_last),
            ]);
        }
        s.push_str(&format!("{}\n", right_aligned(tab)));
    }
    s
}
