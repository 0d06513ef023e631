//! Thin: parse -> validate -> run -> report. Exit codes: 0 ok, 1 the run
//! failed, 2 bad usage, 128 + the signal's number when interrupted (130
//! SIGINT, 143 SIGTERM; results so far are still written).

use clap::Parser;
use fslab::cli::{Cli, Command};
use fslab::{app, dist, plan};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn main() -> ExitCode {
    // a guest cell's VM (fslab run with kernels): fslab is its /init
    if fslab::vm::guest::is_guest_init() {
        fslab::vm::guest::init();
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_error(e),
    };
    // Started by mpirun/srun: every rank is a client (docs/distributed.md).
    // dropped after the run: MPI_Finalize
    let _session = match dist::init() {
        Ok(s) => s,
        Err(e) => {
            // every rank refuses; one says why
            if dist::launcher_rank() == 0 {
                eprintln!("fslab: error: {e}");
            }
            return ExitCode::from(2);
        }
    };
    let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(cli))).unwrap_or(ExitCode::from(101));
    // An abort that began writes its results and exits (128 + signal) itself:
    // returning now would end the process half-way through it. Held for
    // good: a signal from now on cannot start one either.
    std::mem::forget(fslab::interrupt::serial());
    code
}

fn run(cli: Cli) -> ExitCode {
    let stop = Arc::new(AtomicBool::new(false));
    app::abort::install();
    handle_signals(&stop);
    let coord = dist::coordinator();
    if coord.size() > 1
        && !matches!(
            cli.command,
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
        return ExitCode::from(2);
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
    let telemetry = match &cli.command {
        Command::Io(a) => Some(&a.common.telemetry),
        Command::Meta(a) => Some(&a.common.telemetry),
        Command::Probe(a) => Some(&a.common.telemetry),
        Command::Replay(a) => Some(&a.common.telemetry),
        Command::Run(a) => Some(&a.common.telemetry),
        Command::Fio(_) => fio_args.as_ref().map(|a| &a.telemetry),
        Command::Cleanup(_)
        | Command::Calibrate(_)
        | Command::Compare(_)
        | Command::Report(_)
        | Command::Schema
        | Command::Completions(_)
        | Command::Man(_) => None,
    };
    // hooks first: `fslab run` installs its plan's own over these
    if let Some(t) = telemetry {
        if let Err(e) = plan::TelemetryPlan::from_args(t).and_then(|t| app::telemetry::install(&t)) {
            return usage(e);
        }
    }
    let result = match &cli.command {
        Command::Io(a) => match validated(plan::IoPlan::from_args(a)) {
            Ok(p) => app::run_io(p, &stop),
            Err(code) => return code,
        },
        Command::Meta(a) => match validated(plan::MetaPlan::from_args(a)) {
            Ok(p) => app::run_meta(p, &stop),
            Err(code) => return code,
        },
        Command::Probe(a) => match plan::ProbePlan::from_args(a) {
            Ok(p) => app::run_probe(p, &stop),
            Err(e) => return usage(e),
        },
        Command::Replay(a) => match validated(plan::ReplayPlan::from_args(a)) {
            Ok(p) => app::run_replay(p, &stop),
            Err(code) => return code,
        },
        Command::Fio(a) => match plan::fio::FioPlan::from_args(fio_args.as_ref().unwrap_or(a)) {
            Ok(p) => app::run_fio(p, &stop),
            Err(e) => return usage(e),
        },
        Command::Cleanup(a) => return cleanup(a),
        Command::Calibrate(a) => {
            return match plan::calibrate::CalibratePlan::from_args(a) {
                Ok(p) => match app::run_calibrate(&p) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => {
                        eprintln!("fslab: error: {e}");
                        ExitCode::from(e.exit_code() as u8)
                    }
                },
                Err(e) => usage(e),
            }
        }
        Command::Compare(a) => return compare(a),
        Command::Report(a) => return report(a),
        Command::Schema => {
            print!("{}", fslab::model::result_schema_text());
            return ExitCode::SUCCESS;
        }
        Command::Completions(a) => return completions(a),
        Command::Man(a) => return man(a),
        Command::Run(a) => match plan::quick_suite(a)
            .and_then(|s| fslab::target::safety::check_plan_devices(&s, a.force_overwrite).map(|()| s))
            .and_then(|s| fslab::vm::check_plan(&s).map(|()| s))
        {
            Ok(s) => app::run_lab(s, &stop),
            Err(e) => return usage(e),
        },
    };
    match result {
        Ok(r) if r.interrupted => ExitCode::from(fslab::interrupt::exit_code()),
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
            if !e.is_other_rank() || coord.rank() == 0 {
                eprintln!("fslab: error: {}{e}", rank_prefix());
            }
            ExitCode::from(e.exit_code() as u8)
        }
    }
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

/// The first SIGINT or SIGTERM asks the run to stop (it ends its cell,
/// removes what it made and writes the results so far); a second one, or a
/// first one while no phase polls the stop flag (validation, mkfs, mount),
/// aborts at once: the results so far are written, marked interrupted,
/// fslab's mounts detached and its directories removed (`interrupt::abort`,
/// `app::abort`).
fn handle_signals(stop: &Arc<AtomicBool>) {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for sig in [SIGINT, SIGTERM] {
        // which signal it was (the exit code), recorded before the flag is
        // set: signal-hook runs a signal's actions in registration order
        let _ = signal_hook::flag::register_usize(sig, fslab::interrupt::signal_record(), sig as usize);
        let _ = signal_hook::flag::register(sig, Arc::clone(stop));
    }
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    let (ready, wait) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // This thread gets a file table of its own, so that the main thread
        // is again the only user of the process's: the kernel then skips the
        // file reference counting it does on every fd syscall of a process
        // whose threads share one (~2 % of a 4 KiB page-cache read, ~2 % of
        // a bonnie++ stat). It keeps its signal pipe and the standard
        // streams; the abort opens what it writes and works on paths.
        // SAFETY: unshare(CLONE_FILES) affects this thread's file table only.
        unsafe { libc::unshare(libc::CLONE_FILES) };
        let _ = ready.send(());
        for (n, _) in signals.forever().enumerate() {
            if n >= 1 || !fslab::interrupt::is_polling() {
                eprintln!("fslab: aborted: writing the results so far, removing fslab's files and scratch filesystems");
                fslab::interrupt::abort();
            }
        }
    });
    // before the main thread opens anything the copy would keep open
    let _ = wait.recv();
}

fn usage(e: plan::PlanError) -> ExitCode {
    eprintln!("fslab: error: {e}");
    ExitCode::from(2)
}

fn cleanup(a: &fslab::cli::CleanupArgs) -> ExitCode {
    use fslab::target::cleanup;
    let places: Vec<std::path::PathBuf> = if a.paths.is_empty() {
        let mut v = vec![std::path::PathBuf::from(".")];
        let scratch = std::path::PathBuf::from(plan::lab::DEFAULT_SCRATCH_DIR);
        if scratch.is_dir() && scratch.canonicalize().ok() != std::path::Path::new(".").canonicalize().ok() {
            v.push(scratch);
        }
        v
    } else {
        a.paths.iter().map(Into::into).collect()
    };
    let found = match cleanup::scan(&places) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("fslab: error: cleanup: {e}");
            return ExitCode::from(2);
        }
    };
    for (d, why) in &found.live {
        println!("kept {} ({why})", fslab::units::shown(&d.display().to_string()));
    }
    for s in &found.stale {
        println!(
            "{} {}",
            if a.dry_run { "would remove" } else { "removing" },
            fslab::units::shown(&s.path.display().to_string())
        );
    }
    if a.dry_run {
        return ExitCode::SUCCESS;
    }
    let results = cleanup::remove(found);
    let mut removed = 0;
    for (_, r) in &results {
        match r {
            Ok(()) => removed += 1,
            Err(e) => eprintln!("fslab: error: {e}"),
        }
    }
    println!(
        "removed {removed} leftover work director{}",
        if removed == 1 { "y" } else { "ies" }
    );
    if removed == results.len() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn compare(a: &fslab::cli::CompareArgs) -> ExitCode {
    use fslab::model::{read_results, Report};
    use fslab::report::compare;
    let reports = match read_results(&a.files) {
        Ok(r) => r,
        Err(e) => return usage(e),
    };
    let sources: Vec<(String, &Report)> = reports.iter().map(|(l, r)| (l.clone(), r)).collect();
    let c = compare::build(&sources, a.baseline.as_deref());
    if let Some(b) = &a.baseline {
        if !c.filesystems.contains(b) {
            return usage(plan::PlanError::new(
                "--baseline",
                format!("'{b}' is none of the compared: {}", c.filesystems.join(", ")),
            ));
        }
    }
    if !a.force {
        if let Some(w) = c.workloads.iter().find(|w| !w.differs.is_empty()) {
            eprintln!(
                "fslab: error: {}",
                fslab::units::shown(&compare::refusal(w, &a.files, c.workloads.len() > 1))
            );
            return ExitCode::from(2);
        }
    }
    print_bytes(&fslab::report::terminal_bytes(
        compare::render_as(&c, a.format).into_bytes(),
    ))
}

fn report(a: &fslab::cli::ReportArgs) -> ExitCode {
    use fslab::model::{read_results, Report};
    use fslab::report::html;
    // checked before anything is read; written only once the page is whole
    let out = match plan::check_path("--output", std::path::Path::new(&a.output)) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let reports = match read_results(&a.files) {
        Ok(r) => r,
        Err(e) => return usage(e),
    };
    let sources: Vec<(String, &Report)> = reports.iter().map(|(l, r)| (l.clone(), r)).collect();
    let page = html::render(&sources);
    if let Err(e) = plan::write_atomically(&out, page.as_bytes()) {
        eprintln!("fslab: error: --output: cannot write '{}': {e}", a.output);
        return ExitCode::from(1);
    }
    println!("wrote {}", a.output);
    ExitCode::SUCCESS
}

/// `fslab completions SHELL`: the script on stdout.
fn completions(a: &fslab::cli::CompletionsArgs) -> ExitCode {
    let mut script = Vec::new();
    clap_complete::generate(
        a.shell,
        &mut <Cli as clap::CommandFactory>::command(),
        "fslab",
        &mut script,
    );
    print_bytes(&script)
}

/// `fslab man [SUBCOMMAND]`: fslab(1), or fslab-SUBCOMMAND(1), as roff on stdout.
fn man(a: &fslab::cli::ManArgs) -> ExitCode {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    // names the subcommands fslab-io etc. and gives them the version
    cmd.build();
    let page = match &a.subcommand {
        None => cmd,
        Some(name) => match cmd.find_subcommand(name) {
            Some(sub) => sub.clone(),
            None => {
                eprintln!("fslab: error: man: no subcommand '{name}'; see 'fslab man --help'");
                return ExitCode::from(2);
            }
        },
    };
    let mut roff = Vec::new();
    // the footer names fslab's build, whichever page it is
    let page = clap_mangen::Man::new(page).source(format!("fslab {}", fslab::cli::LONG_VERSION));
    if let Err(e) = page.render(&mut roff) {
        eprintln!("fslab: error: man: {e}");
        return ExitCode::from(1);
    }
    print_bytes(&roff)
}

/// Writes generated text to stdout; a reader that went away (`| head`) is
/// no error of ours.
fn print_bytes(b: &[u8]) -> ExitCode {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(b).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fslab: error: stdout: {e}");
            ExitCode::from(1)
        }
    }
}

/// clap's refusals in one line, as every other refusal: `fslab: error:`, the
/// complaint (with its indented continuation and tips), and the command whose
/// --help tells more. Help, version and the bare `fslab` print as clap has them.
fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    // lossy: an argument that is not UTF-8 is what clap may be refusing
    let args: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    let (msg, command) = (fslab::cli::one_line(&e), fslab::cli::help_command(&e, &args));
    eprintln!("fslab: error: {msg}; see '{command} --help'");
    ExitCode::from(2)
}
