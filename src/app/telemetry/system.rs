//! The system hook: samples the machine once per second from the first
//! timed phase to the last, and puts `model::system::SystemData` into the
//! cell. SCAFFOLD: filled in by the telemetry work.

use crate::app::pipeline::CellHook;
use crate::plan::TelemetryPlan;

pub struct SystemHook {
    _plan: TelemetryPlan,
}

impl SystemHook {
    pub fn new(t: &TelemetryPlan) -> Self {
        SystemHook { _plan: t.clone() }
    }
}

impl CellHook for SystemHook {}
