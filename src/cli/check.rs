//! `fslab check`: a plan's cells now against a stored baseline, with an
//! exit code for CI and `git bisect run` (its man page's EXIT STATUS).

use clap::Args;

use super::run::RunArgs;

pub(super) const CHECK_EXAMPLES: &str = "\
Examples:
  # store a baseline once (2 repeats at least), then check the system now
  fslab run plan.toml --repeat 6 --output json:base.json
  fslab check base.json plan.toml --threshold 3%

  # find the commit that made it slower: 0 good, 1 bad, 125 skip (undecided)
  git bisect start BAD GOOD
  git bisect run sh -c 'make install && fslab check base.json plan.toml'
";

#[derive(Debug, Args, Clone)]
pub struct CheckArgs {
    /// The baseline: a result file of `fslab run` of the same plan (two
    /// repeats at least).
    #[arg(value_name = "BASELINE")]
    pub baseline: String,
    /// Regressed: worse than the baseline by this much or more (default 5%).
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub threshold: Option<String>,
    /// The plan and `fslab run`'s flags; --repeat defaults to 3..12 (the
    /// test side's repeats; the baseline's are what it stored).
    #[command(flatten)]
    pub run: RunArgs,
}
