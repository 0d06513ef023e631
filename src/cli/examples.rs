//! `fslab examples`: the example plans built into the binary (an installed
//! fslab has no source tree beside it), listed, printed or written out.

use clap::{Args, Subcommand};

pub(super) const EXAMPLES_EXAMPLES: &str = "\
The files are those of the source tree's examples/ as this build was made
from it: the seed experiments' plans and the script that fetches the
kernels seed-kernel-ab.toml boots.

Examples:
  fslab examples list                       # each file and what it is
  fslab examples show seed-metadata-xattr   # one plan on stdout
  fslab examples write ex                   # all of them into ./ex
  fslab run ex/seed-metadata-xattr.toml     # ... and one of them run";

/// `fslab examples`.
#[derive(Debug, Args, Clone)]
pub struct ExamplesArgs {
    #[command(subcommand)]
    pub action: ExamplesAction,
}

#[derive(Debug, Subcommand, Clone)]
pub enum ExamplesAction {
    /// Each example file's name and the first sentence of its leading comment.
    List,
    /// Print one example file to stdout, as shipped.
    Show {
        /// The file's name, with or without .toml (`fslab examples list`).
        #[arg(value_name = "NAME")]
        name: String,
    },
    /// Write every example file into DIR (made if missing); refuses, writing
    /// nothing, if any of the files is already there.
    Write {
        /// The directory to write the files into.
        #[arg(value_name = "DIR")]
        dir: String,
    },
}
