//! `fslab compare --format csv` (and `fslab run --format csv` of a plan of
//! several filesystems): the comparison as one row per (workload, metric,
//! filesystem), for scripts:
//! `workload,metric,unit,higher_is_better,filesystem,baseline,n,mean,ci95,ratio,p_value,significant,flagged,verdict,change,change_lo,change_hi`
//! (ci95 is empty below 2 repeats; ratio, p_value, significant and flagged
//! are empty for the baseline; figures in the unit named, latencies in ns;
//! flagged: the ratio involves a column not comparable with the others, an
//! emulated (TCG) one, as the text marks it `†`; verdict: regressed,
//! improved, equivalent or undecided, with the relative change and its
//! interval, empty where no verdict applies).

use super::metrics::Unit;
use super::model::Comparison;
use crate::report::csv::field;
use std::fmt::Write;

/// The header, in order.
pub const COLUMNS: [&str; 17] = [
    "workload",
    "metric",
    "unit",
    "higher_is_better",
    "filesystem",
    "baseline",
    "n",
    "mean",
    "ci95",
    "ratio",
    "p_value",
    "significant",
    "flagged",
    "verdict",
    "change",
    "change_lo",
    "change_hi",
];

fn unit(u: Unit) -> &'static str {
    match u {
        Unit::Rate => "ops/s",
        Unit::MBs => "MB/s",
        Unit::Ns => "ns",
        Unit::Count => "count",
        Unit::Percent => "%",
    }
}

/// The comparison as CSV.
pub fn render(c: &Comparison) -> String {
    let mut s = format!("{}\n", COLUMNS.join(","));
    let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    for w in &c.workloads {
        for r in &w.rows {
            for (fs, col) in c.filesystems.iter().zip(&r.cols) {
                let Some(col) = col else { continue };
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    field(&w.name),
                    field(&r.metric),
                    field(unit(r.unit)),
                    r.higher_is_better,
                    field(fs),
                    *fs == c.baseline,
                    col.est.n,
                    col.est.mean,
                    opt(col.est.ci95),
                    opt(col.ratio),
                    opt(col.p),
                    if col.p.is_some() {
                        col.significant().to_string()
                    } else {
                        String::new()
                    },
                    if col.ratio.is_some() {
                        col.marked.to_string()
                    } else {
                        String::new()
                    },
                    col.verdict.map(|v| v.call.name()).unwrap_or_default(),
                    opt(col.verdict.map(|v| v.change)),
                    opt(col.verdict.map(|v| v.lo)),
                    opt(col.verdict.map(|v| v.hi)),
                );
            }
        }
    }
    s
}
