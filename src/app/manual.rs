//! fslab about itself: shell completions and man pages, generated from
//! the command line's definition (`cli`), so they never drift from it.

use super::results::print_bytes;
use crate::cli::Cli;
use std::process::ExitCode;

/// `fslab completions SHELL`: the script on stdout.
pub fn run_completions(a: &crate::cli::CompletionsArgs) -> ExitCode {
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
pub fn run_man(a: &crate::cli::ManArgs) -> ExitCode {
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
    let page = clap_mangen::Man::new(page).source(format!("fslab {}", crate::cli::LONG_VERSION));
    if let Err(e) = page.render(&mut roff) {
        eprintln!("fslab: error: man: {e}");
        return ExitCode::from(1);
    }
    print_bytes(&roff)
}
