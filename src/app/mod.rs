//! Glue between the layers for each command: plan -> target -> runner ->
//! report. Every cell goes through `pipeline::run_cell`; the files here
//! say what each workload kind does in it. Kept apart from `main` so tests
//! and later commands reuse it.

pub mod abort;
mod adaptive;
pub mod calibration;
pub mod cell;
mod check;
mod check_deltas;
mod cleanup;
pub mod command;
mod documents;
mod examples;
mod fio;
mod io;
mod lab;
mod manual;
mod meta;
mod outputs;
pub mod pipeline;
mod probe;
mod replay;
pub mod results;
mod signals;
pub mod telemetry;

pub use calibration::run_calibrate;
pub use fio::run_fio;
pub use io::{run_io, IoCell};
pub use lab::{run_lab, run_lab_until};
pub use meta::{run_meta, MetaCell};
pub use pipeline::{run_cell, run_one, CellHook, CellWork};
pub use probe::{run_probe, ProbeCell};
pub use replay::{run_replay, throughput_mb_s, ReplayCell};

use crate::model::{Cell, Report};
use crate::target::TargetError;
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
    AppError::Target(TargetError::Refused { flag: flag.into(), msg })
}

/// An I/O failure while preparing (exit code 1).
pub(crate) fn io_err(what: String) -> impl FnOnce(std::io::Error) -> AppError {
    move |source| AppError::Target(TargetError::Io { what, source })
}

/// A one-cell command's report, made as the command starts: from then on a
/// signal that ends the process at once writes it, marked interrupted, with
/// the cell as far as it got (see `interrupt`).
pub(crate) fn start_report(command: &str, outputs: &crate::plan::Outputs) -> Report {
    let mut r = Report::new(command, SystemTime::now());
    r.calibration = calibration::for_run(false);
    crate::app::abort::expect_results(&r, outputs);
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
    crate::app::results::write_outputs(&r, outputs, true).map_err(AppError::Output)?;
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

/// A refusal of the command line: one line, exit code 2.
pub(crate) fn usage(e: crate::plan::PlanError) -> std::process::ExitCode {
    eprintln!("fslab: error: {e}");
    std::process::ExitCode::from(2)
}
