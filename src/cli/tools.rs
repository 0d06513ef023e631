//! The commands around the measuring ones: `calibrate` (this host's
//! floors), `cleanup` (what a killed run left), `completions` and `man`;
//! their flags and help examples.

use clap::Args;

/// `fslab calibrate`.
#[derive(Debug, Args, Clone, Default)]
pub struct CalibrateArgs {
    /// Measure again, ignoring the card cached for this boot and build
    /// (the new card replaces it).
    #[arg(long)]
    pub fresh: bool,
    /// Output as FORMAT or FORMAT:PATH (repeatable): text, json. The text
    /// stays on stdout beside file outputs unless another format goes there.
    #[arg(long, value_name = "FORMAT[:PATH]")]
    pub output: Vec<String>,
}

pub(super) const CALIBRATE_EXAMPLES: &str = "\
Every run measures the card before its first cell, or reads the one this
fslab build measured since the last boot (in $XDG_RUNTIME_DIR/fslab, or
/run/fslab for root), and sets each cell against it: \"create 3.1x this
host's tmpfs floor\". It takes about a second.

Examples:
  fslab calibrate                          # the card (cached, or measured now)
  fslab calibrate --fresh                  # measured again, the cache replaced
  fslab calibrate --output json:card.json  # as JSON too";

#[derive(Debug, Args, Clone)]
pub struct CleanupArgs {
    /// Directories to look in (the --target or --scratch-dir of the killed runs).
    /// Default: the current directory and /var/tmp.
    pub paths: Vec<String>,
    /// Only list what would be removed.
    #[arg(long)]
    pub dry_run: bool,
}

pub(super) const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  fslab completions bash > /etc/bash_completion.d/fslab
  fslab completions zsh > \"${fpath[1]}/_fslab\"
  fslab completions fish > ~/.config/fish/completions/fslab.fish";

pub(super) const MAN_EXAMPLES: &str = "\
Examples:
  fslab man | man -l -                     # read it now
  fslab man io | man -l -                  # fslab-io(1)
  fslab man > /usr/local/share/man/man1/fslab.1";

/// `fslab completions`.
#[derive(Debug, Args, Clone)]
pub struct CompletionsArgs {
    /// The shell the script is for.
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// `fslab man`.
#[derive(Debug, Args, Clone)]
pub struct ManArgs {
    /// The subcommand whose page to print (fslab-io(1) for io); default fslab(1).
    #[arg(value_name = "SUBCOMMAND", value_parser = SUBCOMMANDS)]
    pub subcommand: Option<String>,
}

/// What `fslab man SUBCOMMAND` takes.
pub(super) const SUBCOMMANDS: [&str; 14] = [
    "run",
    "check",
    "io",
    "meta",
    "probe",
    "replay",
    "fio",
    "compare",
    "report",
    "cleanup",
    "calibrate",
    "examples",
    "completions",
    "man",
];
