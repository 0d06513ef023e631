//! The page's tables after the charts: every phase or operation of a cell,
//! and each rank's rate and stonewall of a distributed run.

use super::common::cell_heading;
use crate::model::{Cell, CellKind, Report};
use crate::report::render::svg::esc;
use crate::units::{fmt_rate, Nanos};
use std::fmt::Write;

pub(super) fn op_tables(s: &mut String, sources: &[(String, &Report)]) {
    let cells: Vec<(&String, &Report, &Cell)> = sources
        .iter()
        .flat_map(|(l, r)| r.cells.iter().map(move |c| (l, *r, c)))
        .filter(|(_, _, c)| {
            c.error.is_none() && (c.kind() == CellKind::Replay || c.directions.iter().any(|d| d.phase.is_some()))
        })
        .filter(|(_, _, c)| c.probe.is_none())
        .collect();
    if cells.is_empty() {
        return;
    }
    s.push_str("<h2 id=\"operations\">Operations</h2>\n<p class=\"note\">Per cell, each repeat on its own: every phase or operation with its rate, CPU and latency.</p>\n");
    for (label, r, c) in cells {
        let replay = c.kind() == CellKind::Replay;
        let _ = write!(
            s,
            "<details open><summary>{}{}</summary>\n<table class=\"ops\"><tr><th>{}</th><th>ops</th><th>ops/s</th>{}<th>mean</th><th>p99</th><th>max</th><th>errors</th></tr>\n",
            esc(&cell_heading(label, r, c)),
            if replay {
                format!(": {:.1} MB/s (dbench throughput)", c.dbench_mb_s())
            } else {
                String::new()
            },
            if replay { "operation" } else { "phase" },
            if replay { "" } else { "<th>%CPU</th>" },
        );
        for d in &c.directions {
            let errors: u64 = d.errors.values().sum();
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td>{}<td>{}</td><td>{}</td><td>{}</td><td{}>{}</td></tr>",
                esc(&d.phase.clone().unwrap_or_else(|| d.dir.name().to_string())),
                d.ops,
                fmt_rate(d.iops),
                if replay {
                    String::new()
                } else {
                    format!("<td>{:.0}%</td>", d.cpu_percent.unwrap_or(0.0))
                },
                Nanos(d.lat.mean_ns as u64),
                Nanos(d.lat.p(99.0)),
                Nanos(d.lat.max_ns),
                if errors > 0 { " class=\"fail\"" } else { "" },
                errors
            );
        }
        s.push_str("</table></details>\n");
    }
}

/// Distributed and stonewalled cells: each rank's rate and where the stonewall fell.
pub(super) fn ranks(s: &mut String, sources: &[(String, &Report)]) {
    let cells: Vec<(&String, &Report, &Cell)> = sources
        .iter()
        .flat_map(|(l, r)| r.cells.iter().map(move |c| (l, *r, c)))
        .filter(|(_, _, c)| c.directions.iter().any(|d| d.ranks.is_some() || d.stonewall.is_some()))
        .collect();
    if cells.is_empty() {
        return;
    }
    s.push_str("<h2 id=\"ranks\">Ranks and stonewalls</h2>\n<p class=\"note\">Distributed runs: each rank's rate over its own time (the totals above merge every rank's counters and histograms). Stonewalled phases: all operations over the time the stonewall fell, and over the time the last job stopped.</p>\n");
    for (label, r, c) in cells {
        let _ = writeln!(
            s,
            "<details open><summary>{}</summary>\n<table><tr><th>operation</th><th>ranks</th><th>min ops/s</th><th>mean ops/s</th><th>max ops/s</th><th>slowest rank</th><th>stonewall</th><th>at</th><th>ops/s then</th><th>last stopped</th><th>ops/s then</th></tr>",
            esc(&cell_heading(label, r, c))
        );
        for d in &c.directions {
            let mut row = vec![esc(&d.phase.clone().unwrap_or_else(|| d.dir.name().to_string()))];
            match &d.ranks {
                Some(r) => {
                    let slow = r.per_rank.iter().find(|p| p.rank == r.slowest_rank);
                    row.extend([
                        r.per_rank.len().to_string(),
                        fmt_rate(r.min_ops_per_s),
                        fmt_rate(r.mean_ops_per_s),
                        fmt_rate(r.max_ops_per_s),
                        slow.map_or_else(String::new, |p| format!("{} on {}", p.rank, esc(&p.host))),
                    ]);
                }
                None => row.extend(["1".into(), String::new(), String::new(), String::new(), String::new()]),
            }
            match &d.stonewall {
                Some(w) => row.extend([
                    esc(&w.describe()),
                    format!("{:.3} s", w.at_ns as f64 / 1e9),
                    fmt_rate(w.ops_per_s_at_stonewall),
                    format!("{:.3} s", w.last_ns as f64 / 1e9),
                    fmt_rate(w.ops_per_s_at_last),
                ]),
                None => row.extend(std::iter::repeat_n(String::new(), 5)),
            }
            let _ = writeln!(s, "<tr><td>{}</td></tr>", row.join("</td><td>"));
        }
        s.push_str("</table></details>\n");
    }
}
