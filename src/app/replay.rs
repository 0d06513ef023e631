//! `fslab replay`: every client replays the shared, parsed load file in its
//! own directory, looping until the time is up, as dbench's clients do.

use super::AppError;
use crate::engine::NullEngine;
use crate::plan::ReplayPlan;
use crate::report::{self, Cell, Report};
use crate::runner::{self, Progress, RunConfig};
use crate::target::{self, Guard, TargetError, TargetInfo};
use crate::workload::replay::ReplayClient;
use std::sync::atomic::AtomicBool;
use std::time::SystemTime;

fn refused(flag: &'static str, msg: String) -> AppError {
    AppError::Target(TargetError::Refused { flag, msg })
}

/// dbench's throughput: bytes of ReadX and WriteX per second, in 10^6 B/s.
pub fn throughput_mb_s(c: &Cell) -> f64 {
    c.directions
        .iter()
        .filter(|d| matches!(d.dir, crate::stats::Dir::ReadX | crate::stats::Dir::WriteX))
        .map(|d| d.mb_s)
        .sum()
}

/// Replays one plan: one cell with a direction per operation type.
pub fn replay_cell(cell_name: &str, plan: &ReplayPlan, stop: &AtomicBool) -> Result<Cell, AppError> {
    let meta = std::fs::metadata(&plan.target).map_err(|e| {
        refused(
            "--target",
            format!("'{}': {e} (give an existing directory)", plan.target.display()),
        )
    })?;
    if !meta.is_dir() {
        return Err(refused(
            "--target",
            format!("'{}' is not a directory", plan.target.display()),
        ));
    }
    let mut info = TargetInfo {
        path: plan.target.clone(),
        kind: "directory".into(),
        ..Default::default()
    };
    target::describe_mount(&mut info, &target::info::mounts());
    let work = target::make_workdir(&plan.target)?;
    let _guard = Guard::for_workdir(work.clone());
    for n in 0..plan.clients {
        let d = work.join(format!("c{n}"));
        std::fs::create_dir(&d).map_err(|source| {
            AppError::Target(TargetError::Io {
                what: format!("creating {}", d.display()),
                source,
            })
        })?;
    }
    let cfg = RunConfig {
        jobs: plan.clients as usize,
        runtime: Some(plan.time),
        ramp: plan.warmup,
        rate: None,
        bucket_ns: vec![2_000_000],
        depth: 1,
        batch: 1,
    };
    let progress = Progress::with_lines(!plan.quiet, cell_name.to_string());
    let out = runner::run(&cfg, stop, &progress, |n| {
        let wl = ReplayClient::new(plan, n as u32, &work.join(format!("c{n}")));
        // replay issues its POSIX calls itself; the engine slot is unused
        Ok((Box::new(NullEngine) as Box<dyn crate::engine::Engine>, wl))
    });
    let mut warnings = Vec::new();
    if plan.timestamps && !plan.loadfile.has_timestamps {
        warnings.push("the load file has no timestamps: clients ran flat out".into());
    }
    let plan_json = serde_json::to_value(plan).expect("plans serialise");
    Ok(Cell::from_run(cell_name, plan_json, info, warnings, out))
}

/// `fslab replay`: one cell, written to every output.
pub fn run_replay(mut plan: ReplayPlan, stop: &AtomicBool) -> Result<Report, AppError> {
    let mut r = Report::new("replay", SystemTime::now());
    let cell = replay_cell("replay", &plan, stop)?;
    r.interrupted = cell.interrupted;
    r.cells.push(cell);
    r.max_rss_kib = crate::stats::cpu::max_rss_kib();
    report::write_outputs(&r, &mut plan.outputs, true).map_err(AppError::Output)?;
    Ok(r)
}
