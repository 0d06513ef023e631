//! Glue between the layers for each command: plan -> target -> runner ->
//! report. Kept apart from `main` so tests and later commands reuse it.

mod fio;
mod lab;
mod meta;
mod probe;
mod replay;

pub use fio::run_fio;
pub use lab::run_lab;
pub use meta::{meta_cell, run_meta};
pub use probe::{probe_cell, run_probe};
pub use replay::{replay_cell, run_replay, throughput_mb_s};

use crate::engine::EngineKind;
use crate::plan::IoPlan;
use crate::report::{self, Cell, Report};
use crate::runner::{self, Progress, RunConfig};
use crate::target::{self, TargetError};
use crate::workload::io::IoWorkload;
use crate::workload::Workload;
use std::sync::atomic::AtomicBool;
use std::time::SystemTime;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("writing results: {0}")]
    Output(std::io::Error),
}

/// A refusal naming the flag (exit code 2).
pub(crate) fn refused(flag: &'static str, msg: String) -> AppError {
    AppError::Target(TargetError::Refused { flag, msg })
}

/// An I/O failure while preparing (exit code 1).
pub(crate) fn io_err(what: String) -> impl FnOnce(std::io::Error) -> AppError {
    move |source| AppError::Target(TargetError::Io { what, source })
}

/// A one-cell command's report, made as the command starts: from then on a
/// signal that ends the process at once writes it, marked interrupted, with
/// the cell as far as it got (see `interrupt`).
pub(crate) fn start_report(command: &str, outputs: &crate::plan::Outputs) -> Report {
    let r = Report::new(command, SystemTime::now());
    crate::interrupt::expect_results(&r, outputs);
    r
}

/// A one-cell result: `r` with `cell` (None: stopped before anything was
/// measured), written to every output.
pub(crate) fn single_cell_report(
    mut r: Report,
    cell: Option<Cell>,
    outputs: &mut crate::plan::Outputs,
) -> Result<Report, AppError> {
    match cell {
        Some(cell) => {
            r.interrupted = cell.interrupted;
            r.cells.push(cell);
        }
        None => r.interrupted = true,
    }
    r.max_rss_kib = crate::stats::cpu::max_rss_kib();
    report::write_outputs(&r, outputs, true).map_err(AppError::Output)?;
    Ok(r)
}

impl AppError {
    /// Another rank of a distributed run failed, not this one.
    pub fn is_other_rank(&self) -> bool {
        matches!(self, AppError::Target(TargetError::OtherRank(_)))
    }

    /// Exit code: 2 for refused usage, 1 for failures.
    pub fn exit_code(&self) -> i32 {
        match self {
            AppError::Target(TargetError::Refused { .. }) => 2,
            _ => 1,
        }
    }
}

/// Measures one io plan and returns its cell, or None when stopped before
/// anything was measured (Ctrl-C while laying out files).
pub fn io_cell(name: &str, plan: &IoPlan, stop: &AtomicBool) -> Result<Option<Cell>, AppError> {
    measure_io(name, plan, stop, true)
}

fn measure_io(name: &str, plan: &IoPlan, stop: &AtomicBool, publish: bool) -> Result<Option<Cell>, AppError> {
    let progress = Progress::new(!plan.quiet, name.to_string(), None);
    let layout_bar = std::cell::RefCell::new(None);
    let prepared = target::prepare(plan, stop, &|done, total| {
        let mut b = layout_bar.borrow_mut();
        if b.is_none() {
            *b = Some(progress.bytes_bar(total));
        }
        if let Some(Some(pb)) = &*b {
            pb.set_position(done);
        }
    });
    if let Some(Some(pb)) = layout_bar.into_inner() {
        pb.finish_and_clear();
    }
    let prepared = match target::ranks::agree(prepared) {
        Err(TargetError::Interrupted) => return Ok(None),
        p => p?,
    };
    let cfg = RunConfig {
        jobs: plan.jobs as usize,
        runtime: plan.runtime,
        ramp: plan.ramp,
        rate: plan.rate_iops,
        bucket_ns: plan.lat_buckets_ns.clone(),
        depth: plan.iodepth as usize,
        batch: plan.iodepth_batch as usize,
        stop_on_error: plan.stop_on_error,
        stonewall: plan.stonewall,
    };
    let shared = prepared.files.len() == prepared.per_job && plan.jobs > 1;
    let total = (!plan.time_based)
        .then(|| prepared.file_size / plan.bs * plan.bs * (plan.jobs as usize * prepared.per_job) as u64);
    let progress = Progress::new(!plan.quiet, name.to_string(), total);
    let out = runner::run(&cfg, stop, &progress, |j| {
        let mut files = Vec::new();
        if plan.engine != EngineKind::Null {
            for path in prepared.files_for(j) {
                let f = prepared
                    .open(path, plan.writes(), plan.direct)
                    .map_err(|e| format!("job {j}: opening {}: {e}", path.display()))?;
                files.push(f);
            }
        }
        let wl = IoWorkload::new(plan, j as u32, files, prepared.file_size, shared, plan.iodepth as usize)
            .with_base(prepared.region_base)
            .for_rank(crate::dist::coordinator().rank());
        let mut engine = plan.engine.build(&plan.uring).map_err(|e| format!("job {j}: {e}"))?;
        engine
            .register(&wl.files(), &wl.buffers())
            .map_err(|e| format!("job {j}: {e}"))?;
        Ok((engine, wl))
    });
    let plan_json = serde_json::to_value(plan).expect("plans serialise");
    let cell = Cell::from_run(name, plan_json, prepared.info.clone(), prepared.warnings.clone(), out);
    if publish {
        // measured: an abort while the files go must not lose it
        crate::interrupt::publish_cell(&cell);
    }
    prepared.guard.finish();
    Ok(Some(cell))
}

/// `fslab io`: one cell, written to every output.
pub fn run_io(mut plan: IoPlan, stop: &AtomicBool) -> Result<Report, AppError> {
    let r = start_report("io", &plan.outputs);
    let cell = io_cell("io", &plan, stop)?;
    single_cell_report(r, cell, &mut plan.outputs)
}
