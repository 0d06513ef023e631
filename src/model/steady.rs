//! fio's steady-state detection (`steadystate`/`ss_dur`) of one fio job, or
//! of a reporting group under group_reporting: what fio's JSON
//! "steadystate" object and its text line report.

use serde::{Deserialize, Serialize};

/// The criterion, its limit, the per-second samples of the window and
/// whether (and when) the job or group attained steady state.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct SteadyState {
    /// fio's criterion: iops, iops_slope, bw or bw_slope.
    pub criterion: String,
    /// The limit (and `value`) is a percentage of the samples' mean.
    pub pct: bool,
    pub limit: f64,
    /// The window, in one-second samples (ss_dur).
    pub duration: u32,
    pub attained: bool,
    /// When it was attained (the job or group then stopped), from the start
    /// of the run of groups; None when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attained_at_ns: Option<u64>,
    /// The last check's figure compared with the limit (a slope or a
    /// deviation, as a percentage with `pct`); None when it is not a number
    /// (fio's nan: the slope of a one-second window, a percentage of a zero
    /// mean).
    pub value: Option<f64>,
    /// The largest deviation from the mean (deviation criteria; 0 otherwise).
    pub max_deviation: Option<f64>,
    /// The slope of the samples per second (slope criteria; 0 otherwise).
    pub slope: Option<f64>,
    /// The window's samples, oldest first, in fio's order (zeros until it
    /// has filled): operations per second, and bytes per second.
    pub iops: Vec<u64>,
    pub bw: Vec<u64>,
}

impl SteadyState {
    /// fio's steadystate_iops_mean: the window's mean, in whole IOPS.
    pub fn iops_mean(&self) -> u64 {
        mean(&self.iops, self.duration)
    }

    /// fio's steadystate_bw_mean, in whole bytes per second.
    pub fn bw_mean(&self) -> u64 {
        mean(&self.bw, self.duration)
    }
}

fn mean(v: &[u64], dur: u32) -> u64 {
    if dur == 0 {
        return 0;
    }
    v.iter().fold(0u64, |a, b| a.wrapping_add(*b)) / dur as u64
}
