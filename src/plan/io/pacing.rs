//! How a job's operations are spaced in time beyond `--rate-iops` and
//! `--thinktime`: fio's rate (bytes per second, per direction), rate_min,
//! rate_process=poisson, rate_cycle, rate_ignore_thinktime,
//! thinktime_blocks and thinktime_spin.

use serde::{Deserialize, Serialize};

/// A job's pacing beyond `rate_iops`. `Default` is `fslab io`'s behaviour.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PacingPlan {}

impl PacingPlan {
    /// True when nothing differs from `fslab io`'s default.
    pub fn is_default(&self) -> bool {
        *self == PacingPlan::default()
    }
}
