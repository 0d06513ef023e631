//! How a fio job starts, ends and fails beside the others (startdelay,
//! exitall, error handling, wait_for, flow, latency_target, steadystate),
//! from `plan::fio::ControlOpts`.

use crate::plan::fio::FioJobPlan;
use crate::runner::RunConfig;

/// Job `job`'s runner config, from its io plan's (`cfg`) and its control options.
pub(super) fn config(_job: &FioJobPlan, cfg: RunConfig) -> RunConfig {
    cfg
}

/// Whether the end of `job` ends every other job of its segment (exitall).
pub(super) fn ends_run(_job: &FioJobPlan) -> bool {
    false
}
