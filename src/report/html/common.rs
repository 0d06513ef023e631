//! What every section of the page uses: figure and number formats, the
//! cells grouped by workload, a filesystem's colour, a cell's heading.

use crate::model::{Cell, Report};
use crate::report::compare::{Comparison, Unit};
use crate::report::render::svg::{esc, PALETTE};
use crate::units::{fmt_rate, Nanos};
use std::fmt::Write;

pub(super) fn fmt_ns(v: f64) -> String {
    Nanos(v.max(0.0).round() as u64)
        .to_string()
        .replace(".00 ", " ")
        .replace(".0 ", " ")
}

pub(super) fn fmt_plain(v: f64) -> String {
    if v.abs() >= 1e4 {
        fmt_rate(v)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

pub(super) fn fmt_pct(v: f64) -> String {
    format!("{v:.0}%")
}

pub(super) fn fmt_unit(u: Unit) -> fn(f64) -> String {
    match u {
        Unit::Ns => fmt_ns,
        Unit::Percent => fmt_pct,
        Unit::Rate | Unit::MBs | Unit::Count => fmt_plain,
    }
}

/// A chart in its figure; `n` counts them.
pub(super) fn figure(s: &mut String, n: &mut usize, kind: &str, svg: &str, caption: &str) {
    *n += 1;
    let _ = write!(s, r#"<figure class="chart" data-kind="{kind}">{svg}"#);
    if !caption.is_empty() {
        let _ = write!(s, "<figcaption>{}</figcaption>", esc(caption));
    }
    s.push_str("</figure>\n");
}

/// Column (filesystem, factor level or file label) and table (workload)
/// of a cell, as the comparison names them.
pub(super) fn place(label: &str, c: &Cell) -> (String, String) {
    crate::report::compare::place(label, c)
}

/// Cells grouped by workload, in first-seen order: (workload, [(filesystem, repeat, cell)]).
pub(super) type Group<'a> = (String, Vec<(String, u32, &'a Cell)>);

pub(super) fn groups<'a>(sources: &[(String, &'a Report)]) -> Vec<Group<'a>> {
    let mut out: Vec<Group<'a>> = Vec::new();
    for (label, r) in sources {
        for c in r.cells.iter().filter(|c| c.error.is_none()) {
            let (fs, wl) = place(label, c);
            let rep = c.lab.as_ref().map(|l| l.repeat).unwrap_or(1);
            match out.iter_mut().find(|g| g.0 == wl) {
                Some(g) => g.1.push((fs, rep, c)),
                None => out.push((wl, vec![(fs, rep, c)])),
            }
        }
    }
    out
}

pub(super) fn color(cmp: &Comparison, fs: &str) -> String {
    let i = cmp.filesystems.iter().position(|f| f == fs).unwrap_or(0);
    PALETTE[i % PALETTE.len()].to_string()
}

/// Intervals (start, end, value) as a step line: each value held over its interval.
pub(super) fn steps(intervals: impl Iterator<Item = (f64, f64, f64)>) -> Vec<(f64, f64)> {
    intervals.flat_map(|(a, b, v)| [(a, v), (b, v)]).collect()
}

/// What a cell is called in a heading: its name and, in a plan run, which
/// repeat of how many ("ext4/meta, repeat 2 of 3"); a result given without
/// a plan gets its label in front.
pub(super) fn cell_heading(label: &str, r: &Report, c: &Cell) -> String {
    match (&c.lab, &r.lab) {
        (Some(t), Some(l)) => format!("{}, repeat {} of {}", c.name, t.repeat, l.repeat),
        (Some(t), None) => format!("{}, repeat {}", c.name, t.repeat),
        _ if label.is_empty() => c.name.clone(),
        _ => format!("{label}: {}", c.name),
    }
}
