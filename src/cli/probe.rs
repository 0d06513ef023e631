//! `fslab probe` and `fslab replay`: the two commands that time one
//! operation stream against a schedule (a probe grid under a load, a load
//! file's clients), their flags and help examples.

use clap::Args;

use super::common::{CommonArgs, WORKLOAD};
use super::words::{self, Word};

pub(super) const PROBE_EXAMPLES: &str = "\
Examples:
  # seed experiment 4: create latency every 100 ms before, during and after
  # a 4 GiB dd
  fslab probe --target /mnt/xfs --op create --interval 100ms \\
              --phases idle:10s,load:20s,after:10s --load stream-write:4g

  # append+fdatasync latency under a random-write io load, timeline as CSV
  fslab probe --target /mnt/ext4 --op append-fsync --interval 50ms \\
              --phases idle:5s,load:30s \\
              --load io:'--rw randwrite --bs 64k --jobs 2 --size 1g' \\
              --output timeline-csv:t.csv";

pub(super) const REPLAY_EXAMPLES: &str = "\
Examples:
  # seed experiment 3: dbench's client.txt, 4 clients, 20 s, a 44-byte
  # user.DosAttrib per file
  fslab replay /usr/share/dbench/client.txt --target /mnt/ext4 --clients 4 \\
               --time 20s --xattr

  # as fast as possible, ignoring the load file's timestamps,
  # mismatches fatal
  fslab replay my.load --target /srv/share --clients 8 --timestamps ignore \\
               --strict";

#[derive(Debug, Args, Clone)]
pub struct ProbeArgs {
    /// The probed operation.
    #[arg(long, value_name = "OP", default_value = "create", value_parser = Word::<words::ProbeOp>::one(), help_heading = WORKLOAD)]
    pub op: String,
    /// Time between probes (a fixed grid).
    #[arg(long, value_name = "DUR", default_value = "1s", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub interval: String,
    /// Probe for this long (one phase; default 10s).
    #[arg(long, value_name = "DUR", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub runtime: Option<String>,
    /// Stop after N probes.
    #[arg(long, value_name = "N", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub count: Option<String>,
    /// Phases NAME:DUR,... ; the load runs during the one named `load`.
    #[arg(long, value_name = "PHASES", help_heading = WORKLOAD)]
    pub phases: Option<String>,
    /// Background load: stream-write:SIZE[,bs=1M][,direct][,fsync-end][,threads=N] or io:'<fslab io flags>'.
    #[arg(long, value_name = "LOAD", help_heading = WORKLOAD)]
    pub load: Option<String>,
    /// A probe slower than this is a stall.
    #[arg(long, value_name = "DUR", default_value = "100ms", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub stall: String,
    /// Size of the file the read probe reads.
    #[arg(long, value_name = "SIZE", default_value = "64m", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub read_file_size: String,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Where Debian's dbench package puts its NBENCH load file: what `fslab
/// replay` replays when given none.
pub const DBENCH_CLIENT_TXT: &str = "/usr/share/dbench/client.txt";

#[derive(Debug, Args, Clone)]
pub struct ReplayArgs {
    /// The NBENCH load file (dbench's client.txt format); by default the
    /// one Debian's dbench package installs.
    #[arg(value_name = "LOADFILE", default_value = DBENCH_CLIENT_TXT)]
    pub loadfile: String,
    /// Number of clients (threads), each in its own directory.
    #[arg(long, value_name = "N", default_value = "1", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub clients: String,
    /// Run this long (the load file loops, as in dbench).
    #[arg(long, value_name = "DUR", default_value = "20s", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub time: String,
    /// Run this long before measuring.
    #[arg(long, value_name = "DUR", default_value = "0s", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub warmup: String,
    /// dbench -x: a user.DosAttrib xattr written on create and set-info, read on queries.
    #[arg(long, help_heading = WORKLOAD)]
    pub xattr: bool,
    /// Size of that xattr.
    #[arg(long, value_name = "N", default_value = "44", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub xattr_size: String,
    /// Open every file with O_SYNC.
    #[arg(long, help_heading = WORKLOAD)]
    pub sync: bool,
    /// fsync after every WriteX.
    #[arg(long, help_heading = WORKLOAD)]
    pub fsync: bool,
    /// What the load file's leading timestamps do.
    #[arg(long, value_name = "MODE", default_value = "honour", value_parser = Word::<words::Timestamps>::one(), help_heading = WORKLOAD)]
    pub timestamps: String,
    /// An outcome other than the expected status ends the run instead of being counted.
    #[arg(long, help_heading = WORKLOAD)]
    pub strict: bool,
    #[command(flatten)]
    pub common: CommonArgs,
}
