//! A parsed command line to its exit code: the MPI guard, telemetry's
//! hooks, the plan (validated on every rank, so that one rank's refusal
//! never leaves the others waiting), the command, and the exit code its
//! result means. `main` only parses and calls `run`.
//!
//! Exit codes: 0 ok, 1 the run failed, 2 bad usage, 128 + the signal's
//! number when interrupted (130 SIGINT, 143 SIGTERM; results so far are
//! still written).

use super::usage;
use crate::cli::{Cli, Command};
use crate::{dist, plan};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Runs the parsed command line `cli` to its exit code.
pub fn run(cli: Cli) -> ExitCode {
    let stop = Arc::new(AtomicBool::new(false));
    super::abort::install();
    super::signals::handle_signals(&stop);
    if let Err(code) = distributable(&cli.command) {
        return code;
    }
    // fslab fio's own flags may follow its jobs (as fio's do): taken out of
    // the job arguments first, so that telemetry's are installed too
    let fio_args = match &cli.command {
        Command::Fio(a) => match plan::fio::effective_args(a) {
            Ok(eff) => Some(eff),
            Err(e) => return usage(e),
        },
        _ => None,
    };
    let telemetry = telemetry_args(&cli.command, fio_args.as_ref());
    // hooks first: `fslab run` installs its plan's own over these
    if let Some(t) = telemetry {
        let result = result_file(&cli.command, fio_args.as_ref());
        if let Err(e) = plan::TelemetryPlan::from_args(t).and_then(|t| super::telemetry::install(&t, result.as_deref()))
        {
            return usage(e);
        }
    }
    let result = match &cli.command {
        Command::Io(a) => match validated(presented(plan::IoPlan::from_args(a), &a.common, "io")) {
            Ok((p, show)) => super::run_io(p, show, &stop),
            Err(code) => return code,
        },
        Command::Meta(a) => match validated(presented(plan::MetaPlan::from_args(a), &a.common, "meta")) {
            Ok((p, show)) => super::run_meta(p, show, &stop),
            Err(code) => return code,
        },
        Command::Probe(a) => match validated(presented(plan::ProbePlan::from_args(a), &a.common, "probe")) {
            Ok((p, show)) => super::run_probe(p, show, &stop),
            Err(code) => return code,
        },
        Command::Replay(a) => match validated(presented(plan::ReplayPlan::from_args(a), &a.common, "replay")) {
            Ok((p, show)) => super::run_replay(p, show, &stop),
            Err(code) => return code,
        },
        Command::Fio(a) => match validated(plan::fio::FioPlan::from_args(fio_args.as_ref().unwrap_or(a))) {
            Ok((p, _)) if p.instead.is_some() => {
                if let Some(plan::fio::Instead::ShowCmd(line)) = &p.instead {
                    println!("{line}");
                }
                return ExitCode::SUCCESS;
            }
            Ok((p, show)) => super::run_fio(p, show, &stop),
            Err(code) => return code,
        },
        Command::Cleanup(a) => return super::cleanup::run_cleanup(a),
        Command::Calibrate(a) => {
            return match validated(plan::calibrate::CalibratePlan::from_args(a)) {
                Ok(p) => match super::run_calibrate(&p) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => {
                        eprintln!("fslab: error: {e}");
                        ExitCode::from(e.exit_code() as u8)
                    }
                },
                Err(code) => code,
            }
        }
        Command::Compare(a) => return super::documents::run_compare(a),
        Command::Check(a) => return super::check::run_check(a, &stop),
        Command::Report(a) => return super::documents::run_report(a),
        Command::Schema => return super::results::print_bytes(crate::model::result_schema_text().as_bytes()),
        Command::Completions(a) => return super::manual::run_completions(a),
        Command::Man(a) => return super::manual::run_man(a),
        Command::Examples(a) => return super::examples::run_examples(a),
        Command::Run(a) => match validated(
            plan::quick_suite(a)
                .and_then(|s| Ok((plan::Presentation::for_run(a, s.quiet_warnings)?, s)))
                .and_then(|(show, s)| {
                    crate::target::safety::check_plan_devices(&s, a.force_overwrite).map(|()| (s, show))
                })
                .and_then(|(s, show)| crate::vm::check_plan(&s).map(|()| (s, show))),
        ) {
            Ok((s, show)) => super::run_lab(s, show, &stop),
            Err(code) => return code,
        },
    };
    exit_code(result)
}

/// A validated plan and then (last: the output files are checked, and
/// created, only once everything else is valid) its presentation.
fn presented<P>(
    plan: plan::Result<P>,
    common: &crate::cli::CommonArgs,
    command: &str,
) -> plan::Result<(P, plan::Presentation)> {
    let plan = plan?;
    Ok((plan, plan::Presentation::from_args(common, command)?))
}

/// The exit code of a command's `result`, saying why it failed.
fn exit_code(result: Result<crate::model::Report, super::AppError>) -> ExitCode {
    match result {
        Ok(r) if r.interrupted => ExitCode::from(crate::interrupt::exit_code()),
        // Failed operations or failed jobs: the results are written, the run failed.
        Ok(r)
            if r.cells.iter().any(|c| {
                c.error.is_some() || !c.job_errors.is_empty() || c.directions.iter().any(|d| !d.errors.is_empty())
            }) =>
        {
            ExitCode::from(1)
        }
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            // Of a failure on another rank, rank 0 alone tells (that rank says why).
            if !e.is_other_rank() || dist::coordinator().rank() == 0 {
                eprintln!("fslab: error: {}{e}", rank_prefix());
            }
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

/// Refuses (exit code 2) a command that does not run distributed when
/// started as several MPI ranks.
fn distributable(command: &Command) -> Result<(), ExitCode> {
    let coord = dist::coordinator();
    if coord.size() > 1
        && !matches!(
            command,
            Command::Io(_) | Command::Meta(_) | Command::Replay(_) | Command::Probe(_)
        )
    {
        if coord.rank() == 0 {
            eprintln!(
                "fslab: error: started as {} MPI ranks, but only io, meta, replay and probe run distributed; \
                 run this command without mpirun/srun",
                coord.size()
            );
        }
        return Err(ExitCode::from(2));
    }
    Ok(())
}

/// The telemetry flags of a measuring command (`fslab fio`'s from its
/// effective arguments `fio`), None for the others.
fn telemetry_args<'a>(
    command: &'a Command,
    fio: Option<&'a crate::cli::FioArgs>,
) -> Option<&'a crate::cli::TelemetryArgs> {
    match command {
        Command::Io(a) => Some(&a.common.telemetry),
        Command::Meta(a) => Some(&a.common.telemetry),
        Command::Probe(a) => Some(&a.common.telemetry),
        Command::Replay(a) => Some(&a.common.telemetry),
        Command::Run(a) => Some(&a.common.telemetry),
        Command::Check(a) => Some(&a.run.common.telemetry),
        Command::Fio(_) => fio.map(|a| &a.telemetry),
        Command::Cleanup(_)
        | Command::Calibrate(_)
        | Command::Compare(_)
        | Command::Report(_)
        | Command::Schema
        | Command::Completions(_)
        | Command::Man(_)
        | Command::Examples(_) => None,
    }
}

/// The first result file the command line names (`--output FORMAT:PATH`,
/// fio's `--output=PATH`), before validation: where --profile's folded
/// stacks go by default. Not a path that exists as something other than a
/// regular file (fio's --output=/dev/null).
fn result_file(command: &Command, fio: Option<&crate::cli::FioArgs>) -> Option<std::path::PathBuf> {
    let common = match command {
        Command::Io(a) => &a.common,
        Command::Meta(a) => &a.common,
        Command::Probe(a) => &a.common,
        Command::Replay(a) => &a.common,
        Command::Run(a) => &a.common,
        Command::Check(a) => &a.run.common,
        _ => {
            let p = fio.and_then(|f| f.output.as_deref()).filter(|p| *p != "-")?;
            return Some(std::path::PathBuf::from(p)).filter(|p| std::fs::metadata(p).map_or(true, |m| m.is_file()));
        }
    };
    common
        .output
        .iter()
        .filter_map(|s| s.split_once(':').map(|(_, p)| p))
        .filter(|p| !p.is_empty() && *p != "-")
        .map(std::path::PathBuf::from)
        .find(|p| std::fs::metadata(p).map_or(true, |m| m.is_file()))
}

/// "rank 3 on host: " in a distributed run, nothing otherwise.
fn rank_prefix() -> String {
    let c = dist::coordinator();
    if c.size() > 1 {
        format!("rank {} on {}: ", c.rank(), c.host())
    } else {
        String::new()
    }
}

/// A plan every rank validated: when any rank refused its arguments, every
/// rank stops with exit code 2 and only the first refusing rank says why
/// (they run the same command line, so they usually refuse alike).
fn validated<T>(r: Result<T, plan::PlanError>) -> Result<T, ExitCode> {
    let coord = dist::coordinator();
    let failed = coord.all_gather_u64(r.is_err() as u64);
    let first = failed.iter().position(|&f| f == 1);
    match (r, first) {
        (Ok(v), None) => Ok(v),
        (Err(e), Some(f)) if f == coord.rank() => Err(usage(e)),
        _ => Err(ExitCode::from(2)),
    }
}
