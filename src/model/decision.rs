//! How a lab run decided its comparisons (`fslab run` with adaptive
//! repeats, `fslab check`): the repeats' range and looks, the level each
//! look used, the order the cells ran in, why the run stopped, and each
//! comparison's verdict (`stats::decide`).

use crate::stats::decide::Call;
use serde::{Deserialize, Serialize};

/// The decision rules a run followed and what they concluded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DecisionInfo {
    /// Repeats: at least `min`, at most `max` (equal: a fixed number).
    pub min: u32,
    pub max: u32,
    /// The equivalence margin, a fraction (0.02: ±2%).
    pub target: f64,
    /// The overall chance of a false `regressed` or `improved` per metric.
    pub alpha: f64,
    /// The repeats after which the run looked at its comparisons.
    pub looks: Vec<u32>,
    /// The two-sided level of every look's interval, calibrated so that
    /// over all `looks` the chance of a false call is `alpha`.
    pub nominal_alpha: f64,
    /// Seed of the order the cells of each repeat ran in (a random
    /// permutation per repeat: drift lands on every arm alike). Each
    /// cell's tag has its place in the run (`LabTag::order`).
    pub order_seed: u64,
    /// Repeats run (per cell).
    pub repeats_run: u32,
    /// Why the run stopped: "decided" (every headline comparison),
    /// "max" (undecided ones remain), "fixed" (a fixed number of
    /// repeats), "interrupted".
    pub stopped: String,
    /// One per (table, column, metric) compared with its baseline.
    pub verdicts: Vec<VerdictEntry>,
}

/// One comparison's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerdictEntry {
    /// The comparison's table (the workload) and column.
    pub table: String,
    pub column: String,
    pub baseline: String,
    pub metric: String,
    /// One of the metrics whose decision ends an adaptive run.
    pub headline: bool,
    pub call: Call,
    /// Relative change against the baseline (-0.05: 5% lower), and its
    /// interval at the look's level.
    pub change: f64,
    pub lo: f64,
    pub hi: f64,
    /// Repeats behind each side.
    pub n_base: u32,
    pub n_test: u32,
    /// Undecided: about how many more repeats would decide it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more: Option<u32>,
}
