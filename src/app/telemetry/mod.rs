//! Telemetry and profiling as hooks of the cell pipeline: every cell of
//! every command gets the system beside it (`cell.system`) and, with
//! `--profile`, its CPU profile (`cell.profile`).

mod profile;
mod system;

use super::pipeline::{install_hooks, CellHook};
use crate::plan::TelemetryPlan;

/// Installs the hooks `t` asks for; every later cell runs with them. An
/// error names the flag (exit 2): the kernel forbids profiling, say.
pub fn install(t: &TelemetryPlan) -> Result<(), crate::plan::PlanError> {
    let mut hooks: Vec<Box<dyn CellHook>> = Vec::new();
    if t.enabled {
        hooks.push(Box::new(system::SystemHook::new(t)));
    }
    if t.profile {
        hooks.push(Box::new(profile::ProfileHook::new(t)?));
    }
    install_hooks(hooks);
    Ok(())
}
