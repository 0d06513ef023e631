//! Telemetry and profiling as hooks of the cell pipeline: every cell of
//! every command gets the system beside it (`cell.system`) and, with
//! `--profile`, its CPU profile (`cell.profile`).

mod anatomy;
mod profile;
mod system;

use super::pipeline::{install_hooks, CellHook};
use crate::plan::TelemetryPlan;
use std::path::{Path, PathBuf};

/// Where --profile's folded stacks go: --profile-dir, else the result
/// file's directory. Without either (the results only on stdout) the
/// current directory, and `true`: the caller says so on stderr, so that a
/// file fslab writes on its own never lands there silently (a source
/// checkout once got an untracked `fslab-profile-meta.folded`).
fn profile_dir(t: &TelemetryPlan, result: Option<&Path>) -> (PathBuf, bool) {
    if let Some(d) = &t.profile_dir {
        return (d.clone(), false);
    }
    match result.and_then(Path::parent) {
        Some(p) if !p.as_os_str().is_empty() => (p.to_path_buf(), false),
        Some(_) => (PathBuf::from("."), false),
        None => (PathBuf::from("."), true),
    }
}

/// Installs the hooks `t` asks for; every later cell runs with them. An
/// error names the flag (exit 2): the kernel forbids profiling, say.
/// `result` is the run's first result file: the folded stacks go beside it
/// unless --profile-dir says where.
pub fn install(t: &TelemetryPlan, result: Option<&Path>) -> Result<(), crate::plan::PlanError> {
    let mut hooks: Vec<Box<dyn CellHook>> = Vec::new();
    if t.enabled {
        hooks.push(Box::new(system::SystemHook::new(t)));
    }
    if t.profile {
        let (dir, fallback) = profile_dir(t, result);
        hooks.push(Box::new(profile::ProfileHook::new(t, dir)?));
        if fallback {
            eprintln!(
                "fslab: note: --profile writes its folded stacks into the current directory (no result file; --profile-dir sets where)"
            );
        }
    }
    if t.anatomy || t.explain_slow_ns.is_some() {
        hooks.push(Box::new(anatomy::AnatomyHook::open(t)));
    }
    install_hooks(hooks);
    Ok(())
}
