//! Thin: parse the command line, hand it to `app::command::run`, exit with
//! its code (see there). A guest VM's /init and MPI's start and end are the
//! process's, so they stay here.

use clap::Parser;
use fslab::cli::Cli;
use fslab::{app, dist};
use std::process::ExitCode;

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
    let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| app::command::run(cli)))
        .unwrap_or(ExitCode::from(101));
    // An abort that began writes its results and exits (128 + signal) itself:
    // returning now would end the process half-way through it. Held for
    // good: a signal from now on cannot start one either.
    std::mem::forget(fslab::interrupt::serial());
    code
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
