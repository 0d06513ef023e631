//! The comparison as data: per workload one row per metric, per filesystem
//! its estimate, ratio to the baseline and significance; what the text,
//! CSV and HTML renderings all read.

use super::metrics::{Unit, ALPHA};
use crate::stats::confidence::Estimate;
use crate::stats::decide::{Decision, Grows};

/// One filesystem's value of one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Col {
    pub est: Estimate,
    /// Mean over the baseline's mean (None for the baseline itself).
    pub ratio: Option<f64>,
    /// Welch's p-value against the baseline.
    pub p: Option<f64>,
    /// The ratio involves a flagged column (`Comparison::flagged`), this
    /// one or the baseline: shown marked `†`, never as significant.
    pub marked: bool,
    /// The ratio is within the host's noise (`Comparison::noise_cv`):
    /// shown `≈`, never as significant.
    pub noise: bool,
    /// The verdict against the baseline (`stats::decide`): None for the
    /// baseline, a marked column, or a metric with a zero among its values.
    pub verdict: Option<Decision>,
}

impl Col {
    pub fn significant(&self) -> bool {
        !self.marked && !self.noise && self.p.is_some_and(|p| p < ALPHA)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub metric: String,
    pub unit: Unit,
    pub higher_is_better: bool,
    /// An adaptive run repeats until this row is decided (`Metric::headline`).
    pub headline: bool,
    /// One per filesystem, in `Comparison::filesystems` order.
    pub cols: Vec<Option<Col>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadCmp {
    pub name: String,
    pub rows: Vec<Row>,
    /// (filesystem, reason) of cells that could not run.
    pub failed: Vec<(String, String)>,
    /// (filesystem, cells of it that telemetry marked disturbed, its cells).
    pub disturbed: Vec<(String, u32, u32)>,
    /// (filesystem, the bounds of its cells' verdicts, distinct, in order
    /// met): columns bounded by different limits are compared with a note.
    pub bounds: Vec<(String, Vec<crate::model::verdict::Bound>)>,
    /// How the cells side by side differ in what they ran (empty: the
    /// same workload): `fslab compare` refuses such a table without
    /// `--force`, and every table says it.
    pub differs: Vec<Difference>,
}

/// One key of the workload (`workload`) on which two cells of one table
/// differ: the table's first cell and the first that differs from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// The plan's key, dotted when nested ("bs", "uring.sqpoll"), or "kind".
    pub key: String,
    pub a: Side,
    pub b: Side,
}

/// One cell's side of a `Difference`.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    pub column: String,
    /// Index of the source (result file) the cell came from.
    pub source: usize,
    /// The value as shown ("4 KiB", "randread", "default" for a key its
    /// plan leaves at its default).
    pub value: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub filesystems: Vec<String>,
    pub baseline: String,
    pub workloads: Vec<WorkloadCmp>,
    /// One line per filesystem: what it was (type, mkfs, mount, device).
    pub environment: Vec<(String, String)>,
    /// Columns whose timings are not comparable with the others', with
    /// why (cells emulated under TCG): never the baseline unless asked
    /// for by name, and every ratio involving one is marked.
    pub flagged: Vec<(String, String)>,
    /// The baseline a source asked for (a plan's, or the first column)
    /// when it was flagged and another took its place.
    pub baseline_moved_from: Option<String>,
    /// The largest host noise of the sources' calibration cards (a
    /// coefficient of variation): a ratio closer to 1 than this is noise.
    pub noise_cv: Option<f64>,
    /// How the verdicts were drawn.
    pub deciding: Deciding,
}

/// The rules of the columns' verdicts: each look's nominal level (see
/// `stats::decide::nominal_alpha`), the equivalence margin, which arms
/// grow, and the repeats' range when a run was adaptive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Deciding {
    pub nominal: f64,
    pub target: f64,
    pub grows: Grows,
    /// (min, max) of an adaptive run: its looks are `decide::looks(min, max)`.
    pub range: Option<(u32, u32)>,
}

impl Comparison {
    /// Every headline comparison with a verdict is decided (true with none).
    pub fn all_decided(&self) -> bool {
        self.workloads
            .iter()
            .flat_map(|w| &w.rows)
            .filter(|r| r.headline)
            .flat_map(|r| r.cols.iter().flatten())
            .filter_map(|c| c.verdict)
            .all(|d| d.call.decided())
    }

    /// The most repeats behind any one figure (0 with none): what decides
    /// whether a reader is told of confidence intervals or of single runs.
    pub fn max_repeats(&self) -> usize {
        self.workloads
            .iter()
            .flat_map(|w| &w.rows)
            .flat_map(|r| r.cols.iter().flatten())
            .map(|c| c.est.n)
            .max()
            .unwrap_or(0)
    }
}
