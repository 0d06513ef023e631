//! The summary table after several cells: one row per cell and direction,
//! disturbed cells marked.

use crate::model::{Cell, DirResult, Report};
use crate::report::render::doc::Doc;
use crate::units::{fmt_rate, Nanos};
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};

/// What the summary prints where a figure does not apply.
const NA: &str = "—";

/// One summary row: every cell's directions with the figures that mean
/// something for them. A probe's rate is its grid's (10 ops/s at 100 ms),
/// not a throughput, and metadata operations move no data: those columns
/// say `—`, and a probe row gives its own figures instead (max, stalls).
fn summary_row(c: &Cell, d: &DirResult, disturbed: bool) -> [String; 8] {
    use crate::stats::OpKind;
    let name = if disturbed {
        format!("{} !", c.name)
    } else {
        c.name.clone()
    };
    let data = matches!(d.dir, OpKind::Read | OpKind::Write | OpKind::ReadX | OpKind::WriteX) || d.bytes > 0;
    let lat = |v: u64| {
        if d.ops > 0 {
            Nanos(v).to_string()
        } else {
            NA.to_string()
        }
    };
    let (mean, p99, max) = (lat(d.lat.mean_ns as u64), lat(d.lat.p(99.0)), lat(d.lat.max_ns));
    match &c.probe {
        Some(p) => {
            let phase = d.phase.as_deref().unwrap_or_default();
            let stalls = p.phases.iter().find(|ph| ph.name == phase).map(|ph| ph.stalls);
            [
                name,
                format!("{} {phase}", p.op),
                NA.into(),
                NA.into(),
                mean,
                p99,
                max,
                stalls.map_or_else(|| NA.into(), |n| n.to_string()),
            ]
        }
        None => [
            name,
            d.phase.clone().unwrap_or_else(|| d.dir.name().to_string()),
            fmt_rate(d.iops),
            if data { format!("{:.1}", d.mb_s) } else { NA.into() },
            mean,
            p99,
            max,
            NA.into(),
        ],
    }
}

pub(super) fn summary(s: &mut Doc, r: &Report) {
    let mut tab = Table::new();
    tab.load_style(UTF8_BORDERS_ONLY);
    tab.set_header(["cell", "operation", "ops/s", "MB/s", "mean", "p99", "max", "stalls"]);
    let mut any_disturbed = false;
    for c in &r.cells {
        let disturbed = crate::report::system::disturbed(c);
        any_disturbed |= disturbed;
        for d in &c.directions {
            tab.add_row(summary_row(c, d, disturbed));
        }
    }
    s.push_str("summary\n");
    s.table(tab);
    if any_disturbed {
        s.push_str("!: disturbed (other processes or the hypervisor's steal took CPU; see the cell's system block)\n");
    }
}
