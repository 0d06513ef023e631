//! What is compared of a cell: its metrics (name, value, unit, which way is
//! better), the raw numbers every comparison row is built from.

use crate::model::{Cell, CellKind};
use crate::units::Nanos;

/// Significance level for the `*` mark.
pub const ALPHA: f64 = 0.05;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Operations per second.
    Rate,
    /// 10^6 bytes per second.
    MBs,
    /// Nanoseconds.
    Ns,
    Count,
    Percent,
}

/// One number measured in one cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub name: String,
    pub value: f64,
    pub unit: Unit,
    pub higher_is_better: bool,
    /// What the cell is for (io's IOPS per direction, a metadata phase's
    /// rate, replay's throughput, a probe phase's p99): an adaptive run
    /// repeats until these are decided.
    pub headline: bool,
}

fn m(name: String, value: f64, unit: Unit, higher_is_better: bool) -> Metric {
    Metric {
        name,
        value,
        unit,
        higher_is_better,
        headline: false,
    }
}

/// A headline metric (`Metric::headline`).
fn h(name: String, value: f64, unit: Unit, higher_is_better: bool) -> Metric {
    Metric {
        headline: true,
        ..m(name, value, unit, higher_is_better)
    }
}

/// The metrics compared for a cell: per probe phase its latency and stalls;
/// for replay dbench's throughput; per metadata phase its rate, p99 and
/// CPU; per I/O direction IOPS, MB/s, mean and p99 latency, and the share
/// of operations within each requested latency bucket.
pub fn metrics(c: &Cell) -> Vec<Metric> {
    let mut out = Vec::new();
    if let Some(p) = &c.probe {
        for ph in &p.phases {
            let n = &ph.name;
            out.push(m(format!("{n} p50"), ph.lat.p(50.0) as f64, Unit::Ns, false));
            out.push(h(format!("{n} p99"), ph.lat.p(99.0) as f64, Unit::Ns, false));
            out.push(m(format!("{n} max"), ph.lat.max_ns as f64, Unit::Ns, false));
            out.push(m(format!("{n} stalls"), ph.stalls as f64, Unit::Count, false));
            if ph.load_bytes > 0 {
                out.push(m(format!("{n} writer MB/s"), ph.load_mb_s, Unit::MBs, true));
            }
        }
        return out;
    }
    if c.kind() == CellKind::Replay {
        out.push(h("throughput MB/s".into(), c.dbench_mb_s(), Unit::MBs, true));
        out.push(m(
            "operations/s".into(),
            c.directions.iter().map(|d| d.iops).sum(),
            Unit::Rate,
            true,
        ));
        let max = c.directions.iter().map(|d| d.lat.max_ns).max().unwrap_or(0);
        out.push(m("max latency".into(), max as f64, Unit::Ns, false));
        return out;
    }
    for d in &c.directions {
        if let Some(ph) = &d.phase {
            out.push(h(format!("{ph} ops/s"), d.iops, Unit::Rate, true));
            out.push(m(format!("{ph} p99"), d.lat.p(99.0) as f64, Unit::Ns, false));
            if let Some(cpu) = d.cpu_percent {
                out.push(m(format!("{ph} %CPU"), cpu, Unit::Percent, false));
            }
            continue;
        }
        let n = d.dir.name();
        out.push(h(format!("{n} IOPS"), d.iops, Unit::Rate, true));
        if d.bytes > 0 {
            out.push(m(format!("{n} MB/s"), d.mb_s, Unit::MBs, true));
        }
        out.push(m(format!("{n} mean"), d.lat.mean_ns, Unit::Ns, false));
        out.push(m(format!("{n} p99"), d.lat.p(99.0) as f64, Unit::Ns, false));
        for b in &d.lat_buckets {
            out.push(m(
                format!("{n} ≤{}", Nanos(b.le_ns)).replace(".00 ", " "),
                b.share * 100.0,
                Unit::Percent,
                true,
            ));
        }
    }
    out
}
