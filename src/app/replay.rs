//! `fslab replay`: every client replays the shared, parsed load file in its
//! own directory, looping until the time is up, as dbench's clients do.

use super::{io_err, AppError};
use crate::engine::NullEngine;
use crate::model::{Cell, CellPlan, Report};
use crate::plan::ReplayPlan;
use crate::runner::{self, Progress, RunConfig};
use crate::target;
use crate::workload::replay::ReplayClient;
use std::sync::atomic::AtomicBool;

/// Replays one plan: one cell with a direction per operation type.
pub fn replay_cell(cell_name: &str, plan: &ReplayPlan, stop: &AtomicBool) -> Result<Cell, AppError> {
    let target::WorkDir {
        info,
        path: work,
        guard,
    } = target::work_dir(&plan.target)?;
    let made: Result<(), AppError> = (0..plan.clients).try_for_each(|n| {
        let d = work.join(format!("c{n}"));
        std::fs::create_dir(&d).map_err(io_err(format!("creating {}", d.display())))
    });
    target::ranks::agree(made)?;
    let cfg = RunConfig {
        jobs: plan.clients as usize,
        runtime: Some(plan.time),
        ramp: plan.warmup,
        rate: None,
        bucket_ns: vec![2_000_000],
        depth: 1,
        batch: 1,
        stop_on_error: plan.stop_on_error,
        stonewall: None,
    };
    let progress = Progress::with_lines(!plan.quiet, cell_name.to_string());
    let out = runner::run(&cfg, stop, &progress, |n| {
        let d = work.join(format!("c{n}"));
        let wl = ReplayClient::new(plan, n as u32, &d).map_err(|e| format!("opening {}: {e}", d.display()))?;
        // replay issues its POSIX calls itself; the engine slot is unused
        Ok((Box::new(NullEngine) as Box<dyn crate::engine::Engine>, wl))
    });
    let mut warnings = Vec::new();
    if plan.timestamps && !plan.loadfile.has_timestamps {
        warnings.push("the load file has no timestamps: clients ran flat out".into());
    }
    let cell = super::cell::from_run(cell_name, CellPlan::Replay(plan.clone()), info, warnings, out);
    // measured: an abort while the files go must not lose it
    crate::app::abort::publish_cell(&cell);
    guard.finish();
    Ok(cell)
}

/// `fslab replay`: one cell, written to every output.
pub fn run_replay(mut plan: ReplayPlan, stop: &AtomicBool) -> Result<Report, AppError> {
    let r = super::start_report("replay", &plan.outputs);
    let cell = replay_cell("replay", &plan, stop)?;
    super::single_cell_report(r, Some(cell), &mut plan.outputs)
}
