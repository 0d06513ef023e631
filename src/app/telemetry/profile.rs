//! The profile hook: samples fslab's CPU with kernel stacks during each
//! timed phase and puts `model::system::Profile` into the cell.
//! SCAFFOLD: filled in by the profiling work.

use crate::app::pipeline::CellHook;
use crate::plan::{PlanError, TelemetryPlan};

pub struct ProfileHook {
    _plan: TelemetryPlan,
}

impl ProfileHook {
    pub fn new(t: &TelemetryPlan) -> Result<Self, PlanError> {
        Ok(ProfileHook { _plan: t.clone() })
    }
}

impl CellHook for ProfileHook {}
