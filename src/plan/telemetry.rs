//! What is measured beside each cell: telemetry (devices, CPU, memory,
//! pressure, interference) and the CPU profile. From the common flags
//! (`--no-telemetry`, `--disturbed-cpu`, `--profile`, `--profile-dir`,
//! `--profile-hz`) and, for `fslab run`, the plan's keys.

use super::{PlanError, Result};
use crate::cli::TelemetryArgs;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Default of `--disturbed-cpu`: other processes' CPU, % of all CPUs.
pub const DEFAULT_DISTURBED_CPU_PCT: f64 = 10.0;
/// Default of `--profile-hz` (perf's default frequency is 4000; 999 keeps
/// the cost near 1% and avoids beating with 1 kHz timers).
pub const DEFAULT_PROFILE_HZ: u32 = 999;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TelemetryPlan {
    /// Sample devices, CPU, memory and pressure beside each cell.
    pub enabled: bool,
    /// Above this share of all CPUs taken by others, a cell is disturbed.
    pub disturbed_cpu_pct: f64,
    /// Profile each timed phase.
    pub profile: bool,
    pub profile_hz: u32,
    /// Where folded-stacks files go (--profile-dir); None: beside the
    /// result file (`app::telemetry::install` decides).
    pub profile_dir: Option<PathBuf>,
    /// --anatomy: per-layer histograms per operation kind.
    #[serde(default)]
    pub anatomy: bool,
    /// --explain-slow: operations at or over this many ns are explained.
    #[serde(default)]
    pub explain_slow_ns: Option<u64>,
}

impl Default for TelemetryPlan {
    fn default() -> Self {
        TelemetryPlan {
            enabled: true,
            disturbed_cpu_pct: DEFAULT_DISTURBED_CPU_PCT,
            profile: false,
            profile_hz: DEFAULT_PROFILE_HZ,
            profile_dir: None,
            anatomy: false,
            explain_slow_ns: None,
        }
    }
}

impl TelemetryPlan {
    pub fn from_args(a: &TelemetryArgs) -> Result<Self> {
        let mut t = TelemetryPlan {
            enabled: !a.no_telemetry,
            profile: a.profile,
            ..Default::default()
        };
        if let Some(s) = &a.disturbed_cpu {
            t.disturbed_cpu_pct = s
                .trim_end_matches('%')
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0 && *v <= 100.0)
                .ok_or_else(|| PlanError::new("--disturbed-cpu", format!("'{s}' is not a percentage in (0, 100]")))?;
        }
        if let Some(s) = &a.profile_hz {
            t.profile_hz = s
                .parse::<u32>()
                .ok()
                .filter(|v| (1..=100_000).contains(v))
                .ok_or_else(|| PlanError::new("--profile-hz", format!("'{s}' is not a frequency in 1..=100000")))?;
        }
        t.anatomy = a.anatomy;
        if let Some(s) = &a.explain_slow {
            let d = crate::units::parse_duration(s)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    PlanError::new(
                        "--explain-slow",
                        format!("'{s}' is not a duration above 0 (e.g. 100ms)"),
                    )
                })?;
            t.explain_slow_ns = Some(d.as_nanos().min(u64::MAX as u128) as u64);
        }
        if let Some(d) = &a.profile_dir {
            if d.is_empty() {
                return Err(PlanError::new("--profile-dir", "is empty"));
            }
            t.profile_dir = Some(PathBuf::from(d));
        }
        if (a.profile_dir.is_some() || a.profile_hz.is_some()) && !a.profile {
            let flag = if a.profile_dir.is_some() {
                "--profile-dir"
            } else {
                "--profile-hz"
            };
            return Err(PlanError::new(flag, "needs --profile"));
        }
        if a.profile && a.no_telemetry {
            return Err(PlanError::new("--profile", "cannot be combined with --no-telemetry"));
        }
        Ok(t)
    }
}
