//! `fslab meta`: the metadata command's flags (bonnie++-class files,
//! directories, xattrs, phases) and its help text.

use clap::{Args, Parser};

use super::common::{CommonArgs, ENGINE, WORKLOAD};
use super::words::{self, Word};

pub(super) const META_EXAMPLES: &str = "\
Phases, as bonnie++ 1.98 runs them (one op is one file):
  create  open(O_CREAT|O_EXCL|O_WRONLY) + write the data + setxattr... + close
  stat    stat + (open, read the data, close when the file has some)
          + getxattr..., by readdir in the sequential pass, by name in the
          random one
  delete  unlink
  The random pass creates in numeric order too, the random characters of
  each name in front (\"an order that will appear random to the file
  system\"), then stats and deletes in a random order. Create and delete
  end with a syncfs(2) of the target, inside the phase's time.

Examples:
  # seed experiment 1: bonnie++ -n 100:256:256:10, a 256-byte xattr per file
  fslab meta --target /mnt/xfs --bonnie 100:256:256:10 --xattr user.test:256

  # 1M empty files in 100 directories, 2 jobs, random order only,
  # bonnie++ CSV too
  fslab meta --target /mnt/ext4 --files 1m --dirs 100 --jobs 2 \\
             --order random --output text --output bonnie-csv:meta.csv

  # Samba-like: a 44-byte DOS attribute on every file, a getxattr phase
  fslab meta --target /srv/share --files 50k --xattr user.DosAttrib:44 \\
             --phases getxattr

  # where the CPU goes per phase (kernel stacks, flame graph in the HTML)
  fslab meta --target /mnt/xfs --files 20k --xattr user.test:256 \\
             --profile --output html:meta.html

  # 8 MPI ranks on a shared filesystem (a build with --features mpi),
  # creates stonewalled at the first rank to finish; see docs/distributed.md
  mpirun -np 8 fslab meta --target /mnt/lustre/bench --files 10k \\
                          --stonewall first";

#[derive(Debug, Args, Clone)]
pub struct MetaArgs {
    /// Files per job (decimal multiples: 100k = 100000). Default 16k (16384).
    #[arg(long, value_name = "N", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub files: Option<String>,
    /// Directories per job the files are spread over.
    #[arg(long, value_name = "D", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub dirs: Option<String>,
    /// Data written into each file at create: a size or MIN-MAX (random per file).
    #[arg(long, value_name = "MIN[-MAX]", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub file_size: Option<String>,
    /// An extended attribute set on every file at create (repeatable).
    #[arg(long, value_name = "NAME:SIZE", help_heading = WORKLOAD)]
    pub xattr: Vec<String>,
    /// Passes over the files (a comma list), as bonnie++.
    #[arg(long, value_name = "ORDERS", default_value = "seq,random", value_parser = Word::<words::Order>::list(), help_heading = WORKLOAD)]
    pub order: String,
    /// Extra phases after each stat phase (a comma list).
    #[arg(long, value_name = "PHASES", value_parser = Word::<words::MetaPhase>::list(), help_heading = WORKLOAD)]
    pub phases: Option<String>,
    /// Number of jobs (threads); each has its own directories unless --shared-dirs.
    #[arg(long, value_name = "N", default_value = "1", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub jobs: String,
    /// All jobs work in the same directories.
    #[arg(long, help_heading = WORKLOAD)]
    pub shared_dirs: bool,
    /// Stop the create phases of every job (of every MPI rank) at a deadline
    /// or when the first job has created all its files (`first`), as mdtest -W;
    /// later phases work on the files each job made.
    #[arg(long, value_name = "first|DUR", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub stonewall: Option<String>,
    /// fsync each file and its directory after create (bonnie++ -b).
    #[arg(long, help_heading = WORKLOAD)]
    pub fsync: bool,
    /// Do not syncfs(2) the target at the end of each create and delete
    /// phase (bonnie++ syncs, inside the phase's time).
    #[arg(long, help_heading = WORKLOAD)]
    pub no_sync_after_phase: bool,
    /// bonnie++ -n shorthand N:MAX:MIN:DIRS: N*1024 files of MIN..MAX bytes in DIRS directories.
    #[arg(long, value_name = "N:MAX:MIN:DIRS", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub bonnie: Option<String>,
    /// Engine.
    #[arg(long, value_name = "ENGINE", default_value = "sync", value_parser = Word::<words::MetaEngine>::one(), help_heading = ENGINE)]
    pub engine: String,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl Default for MetaArgs {
    /// The values `fslab meta` gets with no flags.
    fn default() -> Self {
        #[derive(Parser)]
        struct Wrap {
            #[command(flatten)]
            a: MetaArgs,
        }
        Wrap::parse_from(["fslab"]).a
    }
}
