//! Side-by-side comparison of filesystems: for every workload, each metric's
//! mean over repeats with its 95% confidence interval, the ratio to the
//! baseline, and whether the difference is significant (Welch's t-test,
//! p < 0.05). A pure function of reports, shared by `fslab run` (at the end
//! of a plan) and `fslab compare` (from saved results).
//!
//! Built in two passes (`collect`, then `build`) from each cell's
//! `metrics` and `workload`, into the `model`; rendered as `text` or `csv`
//! here, and as HTML by `report::html`. This file only names the parts.

mod build;
mod collect;
pub mod csv;
mod metrics;
mod model;
mod text;
mod workload;

pub use build::{build, build_deciding};
pub use metrics::{metrics, Metric, Unit, ALPHA};
pub use model::{Col, Comparison, Deciding, Difference, Row, Side, WorkloadCmp};
pub use text::{
    bounds_line, differences, flag_notes, fmt_value, interval_words, pct, refusal, render, render_as, verdict_legend,
    verdict_mark, verdict_words, write, MARK,
};
pub use workload::{differing, flag, kernel_note, place, workload, workload_of};
