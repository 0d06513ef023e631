//! How a command shows what it does: where its results go (`--output`) and
//! whether progress bars are drawn (`--quiet`). Kept beside the plan, not in
//! it: a plan says what is measured and is what a result file records; the
//! presentation is the command line's business and reaches only `app`,
//! which writes the outputs and draws the bars.

use super::{Outputs, Result};
use crate::cli::{CommonArgs, RunArgs};

/// A command's outputs and its progress bars.
#[derive(Debug, Clone, Default)]
pub struct Presentation {
    pub outputs: Outputs,
    /// --quiet: no progress bars.
    pub quiet: bool,
}

impl Presentation {
    /// `command`'s presentation from its common flags. Called last when a
    /// plan is validated: the output paths are checked (nothing is created)
    /// once everything else is valid, so a refused run creates nothing.
    pub fn from_args(c: &CommonArgs, command: &str) -> Result<Self> {
        Ok(Presentation {
            outputs: Outputs::from_args(c, command)?,
            quiet: c.quiet,
        })
    }

    /// `fslab run`'s presentation: its flags and the plan's
    /// `quiet-warnings` key (`quiet_warnings`).
    pub fn for_run(a: &RunArgs, quiet_warnings: bool) -> Result<Self> {
        Ok(Presentation {
            outputs: Outputs::from_args(&a.common, "run")?.with_quiet_warnings(quiet_warnings),
            quiet: a.common.quiet,
        })
    }
}
