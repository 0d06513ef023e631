//! Command-line syntax (clap derive). Only strings and flags live here: every
//! value is parsed and checked in `plan`, so errors name the flag the same way
//! whether it came from the command line or, later, a plan file. Flags that
//! take one of a fixed set of words go through `words` (clap value enums).
//!
//! The examples in these files are kept under 80 columns, long commands split with a
//! shell continuation: clap wraps help text at the terminal's width and would
//! otherwise break a command in the middle (tests/cli_conventions.rs).
//!
//! One file per command (or per group of related commands), each holding its
//! argument struct and help examples; `common` has what they share. Everything
//! is re-exported here, so callers name `crate::cli::IoArgs` as before.

mod check;
mod common;
mod examples;
mod fio;
mod io;
mod meta;
mod probe;
mod results;
mod run;
mod tools;
pub mod words;

use clap::{Parser, Subcommand};

pub use check::CheckArgs;
pub use common::{CommonArgs, LayoutArgs, TableFormat, TelemetryArgs};
pub use examples::{ExamplesAction, ExamplesArgs};
pub use fio::FioArgs;
pub use io::IoArgs;
pub use meta::MetaArgs;
pub use probe::{ProbeArgs, ReplayArgs, DBENCH_CLIENT_TXT};
pub use results::{CompareArgs, ReportArgs};
pub use run::RunArgs;
pub use tools::{CalibrateArgs, CleanupArgs, CompletionsArgs, ManArgs};

use fio::FIO_EXAMPLES;
use io::IO_EXAMPLES;
use meta::META_EXAMPLES;
use probe::{PROBE_EXAMPLES, REPLAY_EXAMPLES};
use results::{COMPARE_EXAMPLES, REPORT_EXAMPLES};
use run::RUN_EXAMPLES;
use tools::{CALIBRATE_EXAMPLES, COMPLETIONS_EXAMPLES, MAN_EXAMPLES};

/// `fslab --version` (and the version every result file records): the
/// package version, the git commit it was built from and the cargo profile
/// (build.rs; "unknown" for a build without git).
pub const LONG_VERSION: &str = env!("FSLAB_LONG_VERSION");

const TOP_EXAMPLES: &str = "\
Examples:
  fslab run                        # the quick suite in the current directory
  fslab run --scratch ext4,xfs     # ... on fresh scratch filesystems, compared
  fslab run examples/seed-metadata-xattr.toml --output json:r.json
                                   # a plan file (docs/plans.md)
  fslab compare r.json             # saved results: a table
  fslab report r.json -o r.html    # ... an HTML page
  fslab io --target /mnt/x --rw randrw --rwmixread 90 --bs 16k --jobs 16 \\
           --direct --runtime 10s
  fslab meta --target /mnt/x --bonnie 100:256:256:10 --xattr user.test:256
  fslab replay /usr/share/dbench/client.txt --target /mnt/x --clients 4 \\
               --xattr
  fslab probe --target /mnt/x --op create --interval 100ms \\
              --phases idle:10s,load:20s,after:10s --load stream-write:4g

Every measuring command takes --target, --output FORMAT[:PATH] (repeatable),
--quiet and --seed.
Exit codes: 0 ok, 1 the run failed (results still written), 2 bad usage,
130 interrupted by SIGINT, 143 by SIGTERM (results so far still written).";

/// fslab: a filesystem and storage laboratory.
#[derive(Debug, Parser)]
#[command(
    name = "fslab",
    version = LONG_VERSION,
    about,
    propagate_version = true,
    after_help = TOP_EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the main job: a plan file (filesystems x workloads x repeats, compared), or the quick suite.
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// A plan's cells now against a stored baseline: exit 0 (not worse by the threshold), 1 (regressed), 125 (undecided; git bisect skips it).
    #[command(after_help = check::CHECK_EXAMPLES)]
    Check(Box<CheckArgs>),
    /// fio-class data I/O: sequential or random reads and writes with truthful latency.
    #[command(after_help = IO_EXAMPLES)]
    Io(Box<IoArgs>),
    /// bonnie++-class metadata: create, stat and delete files, with extended attributes.
    #[command(after_help = META_EXAMPLES)]
    Meta(Box<MetaArgs>),
    /// Latency of one operation, probed on a fixed grid, before, during and after a load.
    #[command(after_help = PROBE_EXAMPLES)]
    Probe(Box<ProbeArgs>),
    /// Replay a dbench/NBENCH load file (Samba-like) with N clients.
    #[command(after_help = REPLAY_EXAMPLES)]
    Replay(Box<ReplayArgs>),
    /// Run fio job files (and fio command-line jobs) with fslab's io workload.
    #[command(after_help = FIO_EXAMPLES)]
    Fio(FioArgs),
    /// Side-by-side table of saved results: mean ± 95% CI, ratio to the baseline, significance.
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(CompareArgs),
    /// One self-contained HTML page with charts from saved results.
    #[command(after_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// Remove work directories and scratch filesystems a killed fslab left behind (only fslab's own, only of dead processes).
    Cleanup(CleanupArgs),
    /// This host's floors (null syscall, clock read, tmpfs create/stat/unlink, cached pread, page-cache copy) and noise, as every result records them.
    #[command(after_help = CALIBRATE_EXAMPLES)]
    Calibrate(CalibrateArgs),
    /// The example plans built into this binary: list them, print one, or write them into a directory.
    #[command(after_help = examples::EXAMPLES_EXAMPLES)]
    Examples(ExamplesArgs),
    /// Print the JSON Schema of the result file (docs/result.schema.json).
    #[command(hide = true)]
    Schema,
    /// Print a shell completion script to stdout.
    #[command(after_help = COMPLETIONS_EXAMPLES)]
    Completions(CompletionsArgs),
    /// Print a manual page (roff) to stdout: fslab's, or a subcommand's.
    #[command(after_help = MAN_EXAMPLES)]
    Man(ManArgs),
}

/// clap's refusal as one line: the complaint, its indented continuation
/// (the possible values) and its tips in parentheses, without clap's
/// "error: " and usage lines. What `fslab` prints for bad usage, and what a
/// plan file's or a probe load's flags are refused with.
pub fn one_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let mut lines = text.lines();
    let mut msg = lines
        .next()
        .unwrap_or("")
        .trim_start_matches("error: ")
        .trim()
        .to_string();
    let mut in_first = true;
    for l in lines {
        let t = l.trim();
        if t.is_empty() {
            in_first = false;
        } else if let Some(tip) = t.strip_prefix("tip: ") {
            msg.push_str(&format!(" ({tip})"));
        } else if in_first && !t.starts_with("Usage: ") {
            msg.push(' ');
            msg.push_str(t);
        }
    }
    msg
}

/// The command whose `--help` tells more about clap's refusal `e` of
/// `args` (the process's arguments): "fslab io", or "fslab".
pub fn help_command(e: &clap::Error, args: &[String]) -> String {
    let text = e.render().to_string();
    if let Some(u) = text.lines().find_map(|l| l.trim().strip_prefix("Usage: ")) {
        let words: Vec<&str> = u
            .split_whitespace()
            .take_while(|w| !w.starts_with(['[', '<', '-']))
            .collect();
        return words.join(" ");
    }
    // the subcommand, when the first argument names one (clap's usage line may not come)
    match args.get(1) {
        Some(a) if <Cli as clap::CommandFactory>::command().find_subcommand(a).is_some() => format!("fslab {a}"),
        _ => "fslab".to_string(),
    }
}
