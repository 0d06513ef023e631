//! Command-line syntax (clap derive). Only strings and flags live here: every
//! value is parsed and checked in `plan`, so errors name the flag the same way
//! whether it came from the command line or, later, a plan file. Flags that
//! take one of a fixed set of words go through `words` (clap value enums).
//!
//! The examples below are kept under 80 columns, long commands split with a
//! shell continuation: clap wraps help text at the terminal's width and would
//! otherwise break a command in the middle (tests/cli_conventions.rs).

pub mod words;

use clap::{Args, Parser, Subcommand};
use words::Word;

/// Help headings of the measuring commands' flags.
const WORKLOAD: &str = "Workload";
const ENGINE: &str = "Engine";
const TARGET: &str = "Target";
const OUTPUT: &str = "Output";
const SAFETY: &str = "Safety";
const TELEMETRY: &str = "Telemetry";

/// `fslab --version` (and the version every result file records): the
/// package version, the git commit it was built from and the cargo profile
/// (build.rs; "unknown" for a build without git).
pub const LONG_VERSION: &str = env!("FSLAB_LONG_VERSION");

const IO_EXAMPLES: &str = "\
Examples:
  # 4 KiB random reads from a 1 GiB page-cached file, 10 seconds
  fslab io --target /mnt/test --rw randread --bs 4k --size 1g --runtime 10s

  # seed experiment 2: 16 jobs, 16 KiB, O_DIRECT, read:write 9:1
  fslab io --target /mnt/test --rw randrw --rwmixread 90 --bs 16k \\
           --jobs 16 --direct --runtime 10s

  # 4 KiB random reads at queue depth 32 with io_uring, batches of 8
  fslab io --target /mnt/test --engine uring --iodepth 32 --iodepth-batch 8 \\
           --direct --runtime 10s

  # paced at 500 IOPS per job, share of ops at or under 1 ms and 10 ms,
  # JSON to a file
  fslab io --target /mnt/test --rw randwrite --rate-iops 500 \\
           --lat-buckets 1ms,10ms --runtime 30s --output json:result.json

  # 4 MPI ranks x 4 jobs writing 1 GiB each to a shared filesystem, stopped
  # when the first job is done (a build with --features mpi; see
  # docs/distributed.md)
  mpirun -np 4 fslab io --target /mnt/nfs/bench --rw write --bs 1m --size 1g \\
                        --jobs 4 --stonewall first

  # a raw block device (refused when mounted or carrying a filesystem)
  fslab io --target /dev/sdX --allow-device --precondition --rw randrw \\
           --direct --runtime 30s";

const META_EXAMPLES: &str = "\
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

const PROBE_EXAMPLES: &str = "\
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

const REPLAY_EXAMPLES: &str = "\
Examples:
  # seed experiment 3: dbench's client.txt, 4 clients, 20 s, a 44-byte
  # user.DosAttrib per file
  fslab replay /usr/share/dbench/client.txt --target /mnt/ext4 --clients 4 \\
               --time 20s --xattr

  # as fast as possible, ignoring the load file's timestamps,
  # mismatches fatal
  fslab replay my.load --target /srv/share --clients 8 --timestamps ignore \\
               --strict";

const RUN_EXAMPLES: &str = "\
Examples:
  # the quick suite in the current directory (about a minute)
  fslab run

  # the quick suite on another filesystem, results as JSON too
  fslab run --target /mnt/xfs --output json:quick.json

  # the quick suite on a fresh ext4 and a fresh XFS, compared
  # (root: loop devices, mkfs, mount)
  fslab run --scratch ext4,xfs

  # a plan file (docs/plans.md): filesystems x workloads x repeats,
  # mean ± 95% CI, ratio, significance
  fslab run examples/seed-metadata-xattr.toml --output json:meta.json \\
            --output html:meta.html";

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

const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  fslab completions bash > /etc/bash_completion.d/fslab
  fslab completions zsh > \"${fpath[1]}/_fslab\"
  fslab completions fish > ~/.config/fish/completions/fslab.fish";

const MAN_EXAMPLES: &str = "\
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
const SUBCOMMANDS: [&str; 12] = [
    "run",
    "io",
    "meta",
    "probe",
    "replay",
    "fio",
    "compare",
    "report",
    "cleanup",
    "calibrate",
    "completions",
    "man",
];

/// Flags every measuring command shares.
#[derive(Debug, Args, Clone, Default)]
pub struct CommonArgs {
    /// Where the work runs: a directory (fslab works in a fresh subdirectory it
    /// removes afterwards), a regular file, or a block device (--allow-device).
    #[arg(long, value_name = "PATH", default_value = ".", help_heading = TARGET)]
    pub target: String,
    /// Output as FORMAT or FORMAT:PATH (repeatable): text, json, csv, html, fio-json (io, run),
    /// bonnie-csv (meta), timeline-csv (probe). The text report stays on stdout
    /// beside file outputs unless another format goes there (FORMAT or FORMAT:-).
    #[arg(long, value_name = "FORMAT[:PATH]", help_heading = OUTPUT)]
    pub output: Vec<String>,
    /// No progress bar and no text report unless asked for with --output text.
    #[arg(long, short, help_heading = OUTPUT)]
    pub quiet: bool,
    /// Keep each cell's flags and warnings (and each table's summary of
    /// them) in the JSON: the text says only the cell's bound and how many
    /// there are. A plan's `quiet-warnings = true` does the same.
    #[arg(long, help_heading = OUTPUT)]
    pub quiet_warnings: bool,
    /// What a failed operation does. Either way the results so far are
    /// written and the exit code is 1.
    #[arg(long, value_name = "WHAT", default_value = "continue", value_parser = Word::<words::OnError>::one(), help_heading = WORKLOAD)]
    pub on_error: String,
    /// Seed of the random offsets and data (default: fixed, so runs repeat).
    #[arg(long, value_name = "N", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub seed: Option<String>,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
}

/// What is measured beside the numbers (every measuring command).
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = TELEMETRY)]
pub struct TelemetryArgs {
    /// Do not sample the devices, CPU, memory and pressure beside each cell.
    #[arg(long)]
    pub no_telemetry: bool,
    /// Mark a cell disturbed when other processes (or the hypervisor's
    /// steal) took more than PCT % of all CPUs during it [default: 10].
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub disturbed_cpu: Option<String>,
    /// Sample fslab's CPU with kernel stacks in each timed phase
    /// (perf_event_open, cpu-clock): top symbols in the report, a
    /// folded-stacks file per cell, a flame graph in the HTML report.
    #[arg(long)]
    pub profile: bool,
    /// Where --profile writes its folded-stacks files [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub profile_dir: Option<String>,
    /// Profile samples per second and CPU [default: 999].
    #[arg(long, value_name = "HZ", allow_hyphen_values = true)]
    pub profile_hz: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Plan file (TOML). Without one, the built-in quick suite runs.
    pub plan: Option<String>,
    /// Duration of each cell of the quick suite [default: 5s].
    #[arg(long, value_name = "DUR", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub runtime: Option<String>,
    /// Repeat every cell N times (overrides the plan's repeat).
    #[arg(long, value_name = "N", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub repeat: Option<String>,
    /// Run a cell marked disturbed (other processes' CPU, steal, foreign
    /// device I/O) again, up to N more times (overrides the plan's retry-disturbed).
    #[arg(long, value_name = "N", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub retry_disturbed: Option<String>,
    /// Run the quick suite on fresh scratch filesystems of these types (a
    /// comma list: image file, loop device, mkfs, mount) and compare them.
    #[arg(long, value_name = "TYPES", value_delimiter = ',', value_parser = Word::<words::ScratchFs>::one(), help_heading = TARGET)]
    pub scratch: Vec<String>,
    /// Where scratch images and mount points go (default /var/tmp, or the plan's scratch-dir).
    #[arg(long, value_name = "DIR", help_heading = TARGET)]
    pub scratch_dir: Option<String>,
    #[command(flatten)]
    pub common: CommonArgs,
    /// Allow a plan to format block devices that are not fslab's own loop devices.
    #[arg(long, help_heading = SAFETY)]
    pub allow_device: bool,
    /// With --allow-device: format a device even though it carries a filesystem or partition table.
    #[arg(long, help_heading = SAFETY)]
    pub force_overwrite: bool,
    /// How the text report (stdout, --output text) draws its tables.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = TableFormat::Text, help_heading = OUTPUT)]
    pub format: TableFormat,
    /// Run every cell under this kernel: `host` (the running one) or
    /// IMAGE[,modules=DIR][,name=NAME], booted in a QEMU virtual machine with
    /// the cell's scratch image as its disk. Repeatable; replaces the plan's kernels.
    #[arg(long = "kernel", value_name = "KERNEL", help_heading = TARGET)]
    pub kernels: Vec<String>,
    /// Inside a guest: run only this filesystem of the plan, on the VM's disk.
    #[arg(long, hide = true, value_name = "NAME")]
    pub guest_filesystem: Option<String>,
    /// Inside a guest: run only this workload of the plan.
    #[arg(long, hide = true, value_name = "NAME")]
    pub guest_workload: Option<String>,
}

/// How tables are printed (`fslab compare --format`, `fslab run --format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TableFormat {
    /// Boxed tables (Unicode box drawing, µs, ±, ×).
    #[default]
    Text,
    /// ASCII only, at most 80 columns (wide tables split into column blocks): for mail.
    Plain,
    /// GitHub pipe tables, for issues and wikis.
    Markdown,
    /// Comma-separated values, one row per figure, for scripts.
    Csv,
}

#[derive(Debug, Args, Clone)]
pub struct IoArgs {
    /// I/O pattern.
    #[arg(long, value_name = "PATTERN", default_value = "randread", value_parser = Word::<words::Rw>::one(), help_heading = WORKLOAD)]
    pub rw: String,
    /// Percentage of reads in rw/randrw.
    #[arg(long, value_name = "PCT", default_value = "50", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub rwmixread: String,
    /// Block size (binary units: 4k = 4096), or a range MIN-MAX: each operation
    /// picks a size in it, a multiple of MIN (fio's bsrange).
    #[arg(long, value_name = "SIZE", default_value = "4k", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub bs: String,
    /// Block sizes by share of operations, as fio's bssplit: 4k/60:64k/30:1m/10
    /// (a size without a share splits what is left evenly). Overrides --bs.
    #[arg(long, value_name = "SIZE/PCT:...", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub bssplit: Option<String>,
    /// Files per job (one per job with --shared-file: all jobs share them); each
    /// holds --size / N bytes, and operations go to them in turn (fio's nrfiles).
    #[arg(long, value_name = "N", default_value = "1", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub nrfiles: String,
    /// Bytes per job: the file size, and the amount moved when --runtime is not given.
    /// Default 256m; for a device or existing file, its size.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub size: Option<String>,
    /// Number of jobs (threads).
    #[arg(long, value_name = "N", default_value = "1", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub jobs: String,
    /// Each job has its own file (default).
    #[arg(long, conflicts_with = "shared_file", help_heading = WORKLOAD)]
    pub file_per_job: bool,
    /// All jobs share one file of --size bytes.
    #[arg(long, help_heading = WORKLOAD)]
    pub shared_file: bool,
    /// Run for this long (time-based); without it, each job moves --size bytes once.
    #[arg(long, value_name = "DUR", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub runtime: Option<String>,
    /// Run this long before measuring; excluded from the statistics.
    #[arg(long, value_name = "DUR", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub ramp: Option<String>,
    /// With --runtime: still move --size only once, ending at whichever comes
    /// first (fio's runtime without time_based).
    #[arg(long, requires = "runtime", help_heading = WORKLOAD)]
    pub size_based: bool,
    /// fsync the file after every N writes.
    #[arg(long, value_name = "N", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub fsync: Option<String>,
    /// fdatasync after every N writes.
    #[arg(long, value_name = "N", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub fdatasync: Option<String>,
    /// fsync every file once the job has moved its --size (size-based runs; timed as an fsync).
    #[arg(long, help_heading = WORKLOAD)]
    pub end_fsync: bool,
    /// Verify data: written blocks carry a header and a checksum that reads
    /// check. Mismatches are errors, described in the report.
    #[arg(long, value_name = "METHOD", value_parser = Word::<words::Verify>::one(), help_heading = WORKLOAD)]
    pub verify: Option<String>,
    /// Only read back and check every block of a file or device an earlier
    /// --verify run wrote (implies --verify crc32c and --rw read).
    #[arg(long, help_heading = WORKLOAD)]
    pub verify_only: bool,
    /// Stop every job (of every MPI rank) at a deadline (DUR after the start)
    /// or when the first job has done its work (`first`), as IOR -D / mdtest -W;
    /// the report gives the rate at the stonewall and when the last job stopped.
    #[arg(long, value_name = "first|DUR", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub stonewall: Option<String>,
    /// Pause this long after each operation completes before issuing the next (fio's thinktime).
    #[arg(long, value_name = "DUR", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub thinktime: Option<String>,
    /// Pace each job at N operations per second (latency is also measured from the scheduled start).
    #[arg(long, value_name = "N", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub rate_iops: Option<String>,
    /// I/O engine.
    #[arg(long, value_name = "ENGINE", default_value = "sync", value_parser = Word::<words::IoEngine>::one(), help_heading = ENGINE)]
    pub engine: String,
    /// Open with O_DIRECT (bypass the page cache).
    #[arg(long, help_heading = ENGINE)]
    pub direct: bool,
    /// Operations in flight per job (--engine uring).
    #[arg(long, value_name = "N", default_value = "1", allow_hyphen_values = true, help_heading = ENGINE)]
    pub iodepth: String,
    /// Submit when N operations are queued (default 1: each at once, as fio's iodepth_batch).
    #[arg(long, value_name = "N", allow_hyphen_values = true, help_heading = ENGINE)]
    pub iodepth_batch: Option<String>,
    /// Register the files with io_uring (fewer lookups per operation).
    #[arg(long, help_heading = ENGINE)]
    pub fixed_files: bool,
    /// Register the buffers with io_uring (no page pinning per operation).
    #[arg(long, help_heading = ENGINE)]
    pub fixed_bufs: bool,
    /// A kernel thread polls the submission queue; it sleeps after IDLE without work (default 1s).
    #[arg(long, value_name = "IDLE", num_args = 0..=1, default_missing_value = "1s", help_heading = ENGINE)]
    pub sqpoll: Option<String>,
    /// Poll for completions (IOPOLL): needs --direct and a device with poll queues.
    #[arg(long, help_heading = ENGINE)]
    pub hipri: bool,
    // after the workload and engine flags: --help lists its headings
    // (target, output, telemetry) after theirs
    #[command(flatten)]
    pub common: CommonArgs,
    /// Report the share of operations at or under each latency (default 2ms).
    #[arg(long, value_name = "DUR,...", allow_hyphen_values = true, help_heading = OUTPUT)]
    pub lat_buckets: Option<String>,
    /// Allow a block device as --target.
    #[arg(long, help_heading = SAFETY)]
    pub allow_device: bool,
    /// Allow writing to a device that is mounted or carries a filesystem
    /// signature, or to an existing file fslab did not create.
    #[arg(long, help_heading = SAFETY)]
    pub force_overwrite: bool,
    /// Write a device or existing file fully before measuring (reads never hit holes).
    #[arg(long, help_heading = SAFETY)]
    pub precondition: bool,
    /// Fill write buffers with this pattern, repeated (fio's buffer_pattern:
    /// 0x hex bytes, decimal numbers, "strings"). Every write then carries the
    /// same bytes, which a deduplicating or compressing device flatters;
    /// without it, writes carry non-repeating data.
    #[arg(long, value_name = "PATTERN", allow_hyphen_values = true)]
    pub buffer_pattern: Option<String>,
    /// Make write buffers compress by about this percentage (fio's
    /// buffer_compress_percentage): in each block, the first (100 - PCT)% random,
    /// the rest zeros (or --buffer-pattern).
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub buffer_compress_percentage: Option<String>,
}

impl Default for IoArgs {
    /// The values `fslab io` gets with no flags: clap's defaults, from one place.
    fn default() -> Self {
        #[derive(Parser)]
        struct Wrap {
            #[command(flatten)]
            a: IoArgs,
        }
        Wrap::parse_from(["fslab"]).a
    }
}

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

#[derive(Debug, Args, Clone)]
pub struct ReplayArgs {
    /// The NBENCH load file (dbench's client.txt format).
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

#[derive(Debug, Args, Clone, Default)]
pub struct FioArgs {
    /// Every job's runtime (a bare number is seconds, as in fio).
    #[arg(long, value_name = "DUR", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub runtime: Option<String>,
    /// Every job's size.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub size: Option<String>,
    /// Run only the job sections with this name.
    #[arg(long, value_name = "NAME", help_heading = WORKLOAD)]
    pub section: Option<String>,
    /// Warn about options fslab does not support instead of refusing the job file.
    #[arg(long, help_heading = WORKLOAD)]
    pub ignore_unsupported: bool,
    /// As fio's: one format or a comma list of them (json,normal).
    #[arg(long, value_name = "FORMAT", default_value = "normal", value_parser = Word::<words::FioFormat>::list(), help_heading = OUTPUT)]
    pub output_format: String,
    /// As fio's --minimal: --output-format=terse.
    #[arg(long, help_heading = OUTPUT)]
    pub minimal: bool,
    /// fio's terse version: 3 (the only one fslab writes).
    #[arg(long, value_name = "N", help_heading = OUTPUT)]
    pub terse_version: Option<String>,
    /// fio's periodic status output: accepted with a note (fslab shows its progress line).
    #[arg(long, value_name = "TIME", help_heading = OUTPUT)]
    pub status_interval: Option<String>,
    /// Write the output to FILE instead of stdout, as fio's --output.
    #[arg(long, value_name = "FILE", help_heading = OUTPUT)]
    pub output: Option<String>,
    /// Also write fslab's own result file to FILE (what `--output json:FILE`
    /// writes for the other commands: docs/results.md), beside fio's output.
    #[arg(long, value_name = "FILE", help_heading = OUTPUT)]
    pub results: Option<String>,
    /// No progress on stderr.
    #[arg(long, short, help_heading = OUTPUT)]
    pub quiet: bool,
    /// Let jobs whose filename is a block device use it (safety checks as fslab io).
    #[arg(long, help_heading = SAFETY)]
    pub allow_device: bool,
    /// Let jobs write to existing files and devices with data.
    #[arg(long, help_heading = SAFETY)]
    pub force_overwrite: bool,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
    /// Job files, then command-line jobs (--name=NAME --rw=randread ...). fio's flags
    /// above may also come after the files, written --flag=VALUE.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "JOBFILE | --name=NAME --OPTION=VALUE"
    )]
    pub args: Vec<String>,
}

const FIO_EXAMPLES: &str = "\
Examples:
  fslab fio randread.fio                   # fio's normal text output
  fslab fio jobs.fio --section seqread --output-format=json \\
            --output seqread.json
  fslab fio --runtime=10 --name=rr --rw=randread --bs=4k --size=256m \\
            --directory=/mnt/x --ioengine=io_uring --iodepth=32

Supported options (docs/fio.md has the whole table and where fslab differs
from fio):
  workload  rw, rwmixread/rwmixwrite, bs/bsrange/bssplit, size, filesize,
            filename, directory, nrfiles, numjobs, iodepth, iodepth_batch,
            direct/buffered, fsync, fdatasync, end_fsync, runtime,
            time_based, ramp_time, randseed, randrepeat
  engines   sync, psync, vsync, pvsync, pvsync2, io_uring, null (libaio,
            posixaio as io_uring); filecreate, filestat, filedelete,
            dircreate, dirstat, dirdelete
  region    offset, offset_increment, size=N%, io_size/io_limit, number_ios,
            loops, random_distribution (zipf, pareto, normal, zoned,
            zoned_abs), norandommap, random_generator, file_service_type,
            openfiles, filename_format, unique_filename, invalidate,
            pre_read, create_only, sync, fsync_on_close, fallocate,
            write_barrier
  buffers   scramble_buffers, refill_buffers, zero_buffers, buffer_pattern,
            buffer_compress_percentage/chunk, dedupe_percentage; verify
            (md5, crc64, sha256, crc32c, meta, pattern), verify_pattern,
            do_verify, verify_backlog, verify_fatal, verify_only
  pacing    rate, rate_iops, rate_min, rate_iops_min, rate_process,
            rate_cycle, rate_ignore_thinktime, thinktime, thinktime_spin,
            thinktime_blocks(_type), thinktime_iotime
  control   startdelay, exitall, exitall_on_error, exit_what, wait_for,
            continue_on_error, ignore_error, stonewall, wait_for_previous,
            new_group, group_reporting
  output    write_bw_log, write_lat_log, write_iops_log, write_hist_log,
            log_avg_msec, log_max_value, log_hist_msec, per_job_logs,
            log_offset, clat/lat/slat_percentiles, percentile_list,
            disable_lat/clat/slat/bw_measurement, gtod_reduce;
            --output-format normal, json, json+, terse (comma lists),
            --minimal
  files     include, ${ENV}, $ncpus, $mb_memory, $pagesize, (arithmetic),
            inline ; and # comments
Anything else is refused with its file:line (or warned about with
--ignore-unsupported).";

#[derive(Debug, Args, Clone)]
pub struct CompareArgs {
    /// Result files (--output json) of fslab run, io, meta, replay or probe.
    #[arg(required = true, value_name = "RESULTS.json")]
    pub files: Vec<String>,
    /// The filesystem (or, for single-command results, the file name without .json) others are compared with.
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// Table format: text (boxed), plain (ASCII, 80 columns, for mail), markdown or csv.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = TableFormat::Text)]
    pub format: TableFormat,
    /// Compare cells that ran different workloads (another bs, rw, kind...);
    /// without it they are refused, naming the keys. The table then says what differs.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// Result files (--output json) of fslab run, io, meta, replay or probe.
    #[arg(required = true, value_name = "RESULTS.json")]
    pub files: Vec<String>,
    /// Where to write the page.
    #[arg(short, long, value_name = "FILE", default_value = "report.html")]
    pub output: String,
}

const REPORT_EXAMPLES: &str = "\
Examples:
  fslab run examples/seed-metadata-xattr.toml --output json:meta.json
  fslab report meta.json -o meta.html
  # single-command results side by side
  fslab report ext4.json xfs.json -o io.html
  # the same page, rewritten after every cell
  fslab run plan.toml --output html:plan.html";

const COMPARE_EXAMPLES: &str = "Examples:
  fslab run examples/seed-metadata-xattr.toml --output json:meta.json
  fslab compare meta.json
  fslab io --target /mnt/ext4 --rw randrw --direct --output json:ext4.json
  fslab io --target /mnt/xfs --rw randrw --direct --output json:xfs.json
  fslab compare ext4.json xfs.json --baseline ext4
  fslab compare a.json b.json --format plain   # ASCII, <= 80 columns, for mail
  fslab compare 4k.json 64k.json --force  # differing workloads (bs)
  fslab compare meta.json --format markdown    # pipe tables: an issue, a wiki";

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

const CALIBRATE_EXAMPLES: &str = "\
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
