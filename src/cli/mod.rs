//! Command-line syntax (clap derive). Only strings and flags live here: every
//! value is parsed and checked in `plan`, so errors name the flag the same way
//! whether it came from the command line or, later, a plan file.

use clap::{Args, Parser, Subcommand};

const IO_EXAMPLES: &str = "\
Examples:
  # 4 KiB random reads from a 1 GiB page-cached file, 10 seconds
  fslab io --target /mnt/test --rw randread --bs 4k --size 1g --runtime 10s

  # seed experiment 2: 16 jobs, 16 KiB, O_DIRECT, read:write 9:1
  fslab io --target /mnt/test --rw randrw --rwmixread 90 --bs 16k --jobs 16 --direct --runtime 10s

  # 4 KiB random reads at queue depth 32 with io_uring, submitted in batches of 8
  fslab io --target /mnt/test --engine uring --iodepth 32 --iodepth-batch 8 --direct --runtime 10s

  # paced at 500 IOPS per job, share of ops at or under 1 ms and 10 ms, JSON to a file
  fslab io --target /mnt/test --rw randwrite --rate-iops 500 --lat-buckets 1ms,10ms \\
           --runtime 30s --output json:result.json

  # 4 MPI ranks x 4 jobs writing 1 GiB each to a shared filesystem, stopped when
  # the first job is done (a build with --features mpi; see docs/distributed.md)
  mpirun -np 4 fslab io --target /mnt/nfs/bench --rw write --bs 1m --size 1g --jobs 4 --stonewall first

  # a raw block device (refused when mounted or carrying a filesystem)
  fslab io --target /dev/sdX --allow-device --precondition --rw randrw --direct --runtime 30s";

const META_EXAMPLES: &str = "\
Phases, as bonnie++ 1.98 runs them (one op is one file):
  create  open(O_CREAT|O_EXCL|O_WRONLY) + write the data + setxattr... + close
  stat    stat + (open, read the data, close when the file has some) + getxattr...,
          by readdir in the sequential pass, by name in the random one
  delete  unlink
  The random pass creates in numeric order too, the random characters of each
  name in front (\"an order that will appear random to the file system\"), then
  stats and deletes in a random order. Create and delete end with a syncfs(2)
  of the target, inside the phase's time.

Examples:
  # seed experiment 1: bonnie++ -n 100:256:256:10, with a 256-byte xattr per file
  fslab meta --target /mnt/xfs --bonnie 100:256:256:10 --xattr user.test:256

  # 1M empty files in 100 directories, 2 jobs, random order only, bonnie++ CSV too
  fslab meta --target /mnt/ext4 --files 1m --dirs 100 --jobs 2 --order random \\
             --output text --output bonnie-csv:meta.csv

  # Samba-like: a 44-byte DOS attribute on every file, plus a getxattr phase
  fslab meta --target /srv/share --files 50k --xattr user.DosAttrib:44 --phases getxattr

  # where the CPU goes per phase (kernel stacks, flame graph in the HTML report)
  fslab meta --target /mnt/xfs --files 20k --xattr user.test:256 --profile --output html:meta.html

  # 8 MPI ranks on a shared filesystem (a build with --features mpi), creates
  # stonewalled at the first rank to finish; see docs/distributed.md
  mpirun -np 8 fslab meta --target /mnt/lustre/bench --files 10k --stonewall first";

const PROBE_EXAMPLES: &str = "\
Examples:
  # seed experiment 4: create latency every 100 ms before, during and after a 4 GiB dd
  fslab probe --target /mnt/xfs --op create --interval 100ms \\
              --phases idle:10s,load:20s,after:10s --load stream-write:4g

  # append+fdatasync latency under a random-write io load, timeline as CSV
  fslab probe --target /mnt/ext4 --op append-fsync --interval 50ms --phases idle:5s,load:30s \\
              --load io:'--rw randwrite --bs 64k --jobs 2 --size 1g' --output timeline-csv:t.csv";

const REPLAY_EXAMPLES: &str = "\
Examples:
  # seed experiment 3: dbench's client.txt, 4 clients, 20 s, a 44-byte user.DosAttrib per file
  fslab replay /usr/share/dbench/client.txt --target /mnt/ext4 --clients 4 --time 20s --xattr

  # as fast as possible, ignoring the load file's timestamps, mismatches fatal
  fslab replay my.load --target /srv/share --clients 8 --timestamps ignore --strict";

const RUN_EXAMPLES: &str = "\
Examples:
  # the quick suite in the current directory (about a minute)
  fslab run

  # the quick suite on another filesystem, results as JSON too
  fslab run --target /mnt/xfs --output json:quick.json

  # the quick suite on a fresh ext4 and a fresh XFS, compared (root: loop devices, mkfs, mount)
  fslab run --scratch ext4,xfs

  # a plan file (docs/plans.md): filesystems x workloads x repeats, mean ± 95% CI, ratio, significance
  fslab run examples/seed-metadata-xattr.toml --output json:meta.json --output html:meta.html";

const TOP_EXAMPLES: &str = "\
Examples:
  fslab run                                              # the quick suite in the current directory
  fslab run --scratch ext4,xfs                           # ... on fresh scratch filesystems, compared
  fslab run examples/seed-metadata-xattr.toml --output json:r.json   # a plan file (docs/plans.md)
  fslab compare r.json; fslab report r.json -o r.html    # saved results: table, HTML page
  fslab io --target /mnt/x --rw randrw --rwmixread 90 --bs 16k --jobs 16 --direct --runtime 10s
  fslab meta --target /mnt/x --bonnie 100:256:256:10 --xattr user.test:256
  fslab replay /usr/share/dbench/client.txt --target /mnt/x --clients 4 --xattr
  fslab probe --target /mnt/x --op create --interval 100ms --phases idle:10s,load:20s,after:10s \\
              --load stream-write:4g

Every measuring command takes --target, --output FORMAT[:PATH] (repeatable), --quiet and --seed.
Exit codes: 0 ok, 1 the run failed (results still written), 2 bad usage, 130 interrupted.";

/// fslab: a filesystem and storage laboratory.
#[derive(Debug, Parser)]
#[command(name = "fslab", version, about, propagate_version = true, after_help = TOP_EXAMPLES)]
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
    /// Print the JSON Schema of the result file (docs/result.schema.json).
    #[command(hide = true)]
    Schema,
}

/// Flags every measuring command shares.
#[derive(Debug, Args, Clone, Default)]
pub struct CommonArgs {
    /// Where the work runs: a directory (fslab works in a fresh subdirectory it
    /// removes afterwards), a regular file, or a block device (--allow-device).
    #[arg(long, value_name = "PATH", default_value = ".")]
    pub target: String,
    /// Output as FORMAT or FORMAT:PATH (repeatable): text, json, csv, html, fio-json (io, run),
    /// bonnie-csv (meta), timeline-csv (probe). The text report stays on stdout
    /// beside file outputs unless another format goes there (FORMAT or FORMAT:-).
    #[arg(long, value_name = "FORMAT[:PATH]")]
    pub output: Vec<String>,
    /// No progress bar and no text report unless asked for with --output text.
    #[arg(long, short)]
    pub quiet: bool,
    /// On a failed operation: count it and go on (continue), or end the run
    /// there (stop). Either way the results so far are written and the exit code is 1.
    #[arg(long, value_name = "continue|stop", default_value = "continue")]
    pub on_error: String,
    /// Seed of the random offsets and data (default: fixed, so runs repeat).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub seed: Option<String>,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
}

/// What is measured beside the numbers (every measuring command).
#[derive(Debug, Args, Clone, Default)]
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
    #[command(flatten)]
    pub common: CommonArgs,
    /// Duration of each cell of the quick suite [default: 5s].
    #[arg(long, value_name = "DUR", allow_hyphen_values = true)]
    pub runtime: Option<String>,
    /// Run the quick suite on fresh scratch filesystems of these types
    /// (ext4,xfs,btrfs,tmpfs: image file, loop device, mkfs, mount) and compare them.
    #[arg(long, value_name = "TYPES", value_delimiter = ',')]
    pub scratch: Vec<String>,
    /// Where scratch images and mount points go (default /var/tmp, or the plan's scratch-dir).
    #[arg(long, value_name = "DIR")]
    pub scratch_dir: Option<String>,
    /// Repeat every cell N times (overrides the plan's repeat).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub repeat: Option<String>,
    /// Allow a plan to format block devices that are not fslab's own loop devices.
    #[arg(long)]
    pub allow_device: bool,
    /// With --allow-device: format a device even though it carries a filesystem or partition table.
    #[arg(long)]
    pub force_overwrite: bool,
    /// Run a cell marked disturbed (other processes' CPU, steal, foreign
    /// device I/O) again, up to N more times (overrides the plan's retry-disturbed).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub retry_disturbed: Option<String>,
    /// How the text report (stdout, --output text) draws its tables.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = TableFormat::Text)]
    pub format: TableFormat,
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
    #[command(flatten)]
    pub common: CommonArgs,
    /// I/O pattern: read, write, randread, randwrite, rw, randrw.
    #[arg(long, value_name = "PATTERN", default_value = "randread")]
    pub rw: String,
    /// Percentage of reads in rw/randrw.
    #[arg(long, value_name = "PCT", default_value = "50", allow_hyphen_values = true)]
    pub rwmixread: String,
    /// Block size (binary units: 4k = 4096), or a range MIN-MAX: each operation
    /// picks a size in it, a multiple of MIN (fio's bsrange).
    #[arg(long, value_name = "SIZE", default_value = "4k", allow_hyphen_values = true)]
    pub bs: String,
    /// Block sizes by share of operations, as fio's bssplit: 4k/60:64k/30:1m/10
    /// (a size without a share splits what is left evenly). Overrides --bs.
    #[arg(long, value_name = "SIZE/PCT:...", allow_hyphen_values = true)]
    pub bssplit: Option<String>,
    /// Files per job (one per job with --shared-file: all jobs share them); each
    /// holds --size / N bytes, and operations go to them in turn (fio's nrfiles).
    #[arg(long, value_name = "N", default_value = "1", allow_hyphen_values = true)]
    pub nrfiles: String,
    /// Bytes per job: the file size, and the amount moved when --runtime is not given.
    /// Default 256m; for a device or existing file, its size.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub size: Option<String>,
    /// Number of jobs (threads).
    #[arg(long, value_name = "N", default_value = "1", allow_hyphen_values = true)]
    pub jobs: String,
    /// Each job has its own file (default).
    #[arg(long, conflicts_with = "shared_file")]
    pub file_per_job: bool,
    /// All jobs share one file of --size bytes.
    #[arg(long)]
    pub shared_file: bool,
    /// Open with O_DIRECT (bypass the page cache).
    #[arg(long)]
    pub direct: bool,
    /// I/O engine: sync (pread/pwrite), uring (io_uring, with --iodepth) or null (no I/O: measures fslab itself).
    #[arg(long, value_name = "ENGINE", default_value = "sync")]
    pub engine: String,
    /// Operations in flight per job (--engine uring).
    #[arg(long, value_name = "N", default_value = "1", allow_hyphen_values = true)]
    pub iodepth: String,
    /// Submit when N operations are queued (default 1: each at once, as fio's iodepth_batch).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub iodepth_batch: Option<String>,
    /// Register the files with io_uring (fewer lookups per operation).
    #[arg(long)]
    pub fixed_files: bool,
    /// Register the buffers with io_uring (no page pinning per operation).
    #[arg(long)]
    pub fixed_bufs: bool,
    /// A kernel thread polls the submission queue; it sleeps after IDLE without work (default 1s).
    #[arg(long, value_name = "IDLE", num_args = 0..=1, default_missing_value = "1s")]
    pub sqpoll: Option<String>,
    /// Poll for completions (IOPOLL): needs --direct and a device with poll queues.
    #[arg(long)]
    pub hipri: bool,
    /// Run for this long (time-based); without it, each job moves --size bytes once.
    #[arg(long, value_name = "DUR", allow_hyphen_values = true)]
    pub runtime: Option<String>,
    /// Run this long before measuring; excluded from the statistics.
    #[arg(long, value_name = "DUR", allow_hyphen_values = true)]
    pub ramp: Option<String>,
    /// fsync the file after every N writes.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub fsync: Option<String>,
    /// fdatasync after every N writes.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub fdatasync: Option<String>,
    /// fsync every file once the job has moved its --size (size-based runs; timed as an fsync).
    #[arg(long)]
    pub end_fsync: bool,
    /// Verify data: written blocks carry a header and a CRC32C that reads check
    /// (the only method: crc32c). Mismatches are errors, described in the report.
    #[arg(long, value_name = "METHOD")]
    pub verify: Option<String>,
    /// Only read back and check every block of a file or device an earlier
    /// --verify run wrote (implies --verify crc32c and --rw read).
    #[arg(long)]
    pub verify_only: bool,
    /// Stop every job (of every MPI rank) at a deadline (DUR after the start)
    /// or when the first job has done its work (`first`), as IOR -D / mdtest -W;
    /// the report gives the rate at the stonewall and when the last job stopped.
    #[arg(long, value_name = "first|DUR", allow_hyphen_values = true)]
    pub stonewall: Option<String>,
    /// With --runtime: still move --size only once, ending at whichever comes
    /// first (fio's runtime without time_based).
    #[arg(long, requires = "runtime")]
    pub size_based: bool,
    /// Pause this long after each operation completes before issuing the next (fio's thinktime).
    #[arg(long, value_name = "DUR", allow_hyphen_values = true)]
    pub thinktime: Option<String>,
    /// Pace each job at N operations per second (latency is also measured from the scheduled start).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub rate_iops: Option<String>,
    /// Report the share of operations at or under each latency (default 2ms).
    #[arg(long, value_name = "DUR,...", allow_hyphen_values = true)]
    pub lat_buckets: Option<String>,
    /// Allow a block device as --target.
    #[arg(long)]
    pub allow_device: bool,
    /// Allow writing to a device that is mounted or carries a filesystem
    /// signature, or to an existing file fslab did not create.
    #[arg(long)]
    pub force_overwrite: bool,
    /// Write a device or existing file fully before measuring (reads never hit holes).
    #[arg(long)]
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
    #[command(flatten)]
    pub common: CommonArgs,
    /// Files per job (decimal multiples: 100k = 100000). Default 16k (16384).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub files: Option<String>,
    /// Directories per job the files are spread over.
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    pub dirs: Option<String>,
    /// Data written into each file at create: a size or MIN-MAX (random per file).
    #[arg(long, value_name = "MIN[-MAX]", allow_hyphen_values = true)]
    pub file_size: Option<String>,
    /// An extended attribute set on every file at create (repeatable).
    #[arg(long, value_name = "NAME:SIZE")]
    pub xattr: Vec<String>,
    /// Passes over the files: seq, random or both, as bonnie++.
    #[arg(long, value_name = "ORDERS", default_value = "seq,random")]
    pub order: String,
    /// Extra phases after each stat phase: getxattr, rename, readdir, open-close.
    #[arg(long, value_name = "PHASES")]
    pub phases: Option<String>,
    /// Number of jobs (threads); each has its own directories unless --shared-dirs.
    #[arg(long, value_name = "N", default_value = "1", allow_hyphen_values = true)]
    pub jobs: String,
    /// All jobs work in the same directories.
    #[arg(long)]
    pub shared_dirs: bool,
    /// Stop the create phases of every job (of every MPI rank) at a deadline
    /// or when the first job has created all its files (`first`), as mdtest -W;
    /// later phases work on the files each job made.
    #[arg(long, value_name = "first|DUR", allow_hyphen_values = true)]
    pub stonewall: Option<String>,
    /// fsync each file and its directory after create (bonnie++ -b).
    #[arg(long)]
    pub fsync: bool,
    /// Do not syncfs(2) the target at the end of each create and delete
    /// phase (bonnie++ syncs, inside the phase's time).
    #[arg(long)]
    pub no_sync_after_phase: bool,
    /// Engine: sync, or uring (one operation at a time through io_uring).
    #[arg(long, value_name = "ENGINE", default_value = "sync")]
    pub engine: String,
    /// bonnie++ -n shorthand N:MAX:MIN:DIRS: N*1024 files of MIN..MAX bytes in DIRS directories.
    #[arg(long, value_name = "N:MAX:MIN:DIRS", allow_hyphen_values = true)]
    pub bonnie: Option<String>,
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
    #[command(flatten)]
    pub common: CommonArgs,
    /// The probed operation: create, stat, mkdir, append-fsync, read.
    #[arg(long, value_name = "OP", default_value = "create")]
    pub op: String,
    /// Time between probes (a fixed grid).
    #[arg(long, value_name = "DUR", default_value = "1s", allow_hyphen_values = true)]
    pub interval: String,
    /// Probe for this long (one phase; default 10s).
    #[arg(long, value_name = "DUR", allow_hyphen_values = true)]
    pub runtime: Option<String>,
    /// Stop after N probes.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub count: Option<String>,
    /// Phases NAME:DUR,... ; the load runs during the one named `load`.
    #[arg(long, value_name = "PHASES")]
    pub phases: Option<String>,
    /// Background load: stream-write:SIZE[,bs=1M][,direct][,fsync-end][,threads=N] or io:'<fslab io flags>'.
    #[arg(long, value_name = "LOAD")]
    pub load: Option<String>,
    /// A probe slower than this is a stall.
    #[arg(long, value_name = "DUR", default_value = "100ms", allow_hyphen_values = true)]
    pub stall: String,
    /// Size of the file the read probe reads.
    #[arg(long, value_name = "SIZE", default_value = "64m", allow_hyphen_values = true)]
    pub read_file_size: String,
}

#[derive(Debug, Args, Clone)]
pub struct ReplayArgs {
    /// The NBENCH load file (dbench's client.txt format).
    pub loadfile: String,
    #[command(flatten)]
    pub common: CommonArgs,
    /// Number of clients (threads), each in its own directory.
    #[arg(long, value_name = "N", default_value = "1", allow_hyphen_values = true)]
    pub clients: String,
    /// Run this long (the load file loops, as in dbench).
    #[arg(long, value_name = "DUR", default_value = "20s", allow_hyphen_values = true)]
    pub time: String,
    /// Run this long before measuring.
    #[arg(long, value_name = "DUR", default_value = "0s", allow_hyphen_values = true)]
    pub warmup: String,
    /// dbench -x: a user.DosAttrib xattr written on create and set-info, read on queries.
    #[arg(long)]
    pub xattr: bool,
    /// Size of that xattr.
    #[arg(long, value_name = "N", default_value = "44", allow_hyphen_values = true)]
    pub xattr_size: String,
    /// Open every file with O_SYNC.
    #[arg(long)]
    pub sync: bool,
    /// fsync after every WriteX.
    #[arg(long)]
    pub fsync: bool,
    /// Pace by the load file's leading timestamps (honour) or run flat out (ignore).
    #[arg(long, value_name = "MODE", default_value = "honour")]
    pub timestamps: String,
    /// An outcome other than the expected status ends the run instead of being counted.
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Args, Clone, Default)]
pub struct FioArgs {
    /// As fio's: normal, json, json+ or terse, or a comma list of them (json,normal).
    #[arg(long, value_name = "FORMAT", default_value = "normal")]
    pub output_format: String,
    /// As fio's --minimal: --output-format=terse.
    #[arg(long)]
    pub minimal: bool,
    /// fio's terse version: 3 (the only one fslab writes).
    #[arg(long, value_name = "N")]
    pub terse_version: Option<String>,
    /// fio's periodic status output: accepted with a note (fslab shows its progress line).
    #[arg(long, value_name = "TIME")]
    pub status_interval: Option<String>,
    /// Write the output to FILE instead of stdout, as fio's --output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<String>,
    /// Also write fslab's own result file to FILE (what `--output json:FILE`
    /// writes for the other commands: docs/results.md), beside fio's output.
    #[arg(long, value_name = "FILE")]
    pub results: Option<String>,
    /// Every job's runtime (a bare number is seconds, as in fio).
    #[arg(long, value_name = "DUR", allow_hyphen_values = true)]
    pub runtime: Option<String>,
    /// Every job's size.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub size: Option<String>,
    /// Run only the job sections with this name.
    #[arg(long, value_name = "NAME")]
    pub section: Option<String>,
    /// Warn about options fslab does not support instead of refusing the job file.
    #[arg(long)]
    pub ignore_unsupported: bool,
    /// Let jobs whose filename is a block device use it (safety checks as fslab io).
    #[arg(long)]
    pub allow_device: bool,
    /// Let jobs write to existing files and devices with data.
    #[arg(long)]
    pub force_overwrite: bool,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
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

const FIO_EXAMPLES: &str = "Examples:
  fslab fio randread.fio                                   # fio's normal text output
  fslab fio jobs.fio --section seqread --output-format=json --output seqread.json
  fslab fio --runtime=10 --name=rr --rw=randread --bs=4k --size=256m --directory=/mnt/x --ioengine=io_uring --iodepth=32

Supported options (docs/fio.md has the whole table and where fslab differs from fio):
  workload  rw, rwmixread/rwmixwrite, bs/bsrange/bssplit, size, filesize, filename, directory,
            nrfiles, numjobs, iodepth, iodepth_batch, direct/buffered, fsync, fdatasync, end_fsync,
            runtime, time_based, ramp_time, randseed, randrepeat
  engines   sync, psync, vsync, pvsync, pvsync2, io_uring, null (libaio, posixaio as io_uring);
            filecreate, filestat, filedelete, dircreate, dirstat, dirdelete
  region    offset, offset_increment, size=N%, io_size/io_limit, number_ios, loops,
            random_distribution (zipf, pareto, normal, zoned, zoned_abs), norandommap,
            random_generator, file_service_type, openfiles, filename_format, unique_filename,
            invalidate, pre_read, create_only, sync, fsync_on_close, fallocate, write_barrier
  buffers   scramble_buffers, refill_buffers, zero_buffers, buffer_pattern,
            buffer_compress_percentage/chunk, dedupe_percentage; verify (md5, crc64, sha256,
            crc32c, meta, pattern), verify_pattern, do_verify, verify_backlog, verify_fatal,
            verify_only
  pacing    rate, rate_iops, rate_min, rate_iops_min, rate_process, rate_cycle,
            rate_ignore_thinktime, thinktime, thinktime_spin, thinktime_blocks(_type)
  control   startdelay, exitall, exitall_on_error, exit_what, wait_for, continue_on_error,
            ignore_error, stonewall, wait_for_previous, new_group, group_reporting
  output    write_bw_log, write_lat_log, write_iops_log, write_hist_log, log_avg_msec,
            log_max_value, log_hist_msec, per_job_logs, clat/lat/slat_percentiles,
            percentile_list, disable_lat/clat/slat/bw_measurement, gtod_reduce;
            --output-format normal, json, json+, terse (comma lists), --minimal
  files     include, ${ENV}, $ncpus, $mb_memory, $pagesize, (arithmetic), inline ; and # comments
Anything else is refused with its file:line (or warned about with --ignore-unsupported).";

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

const REPORT_EXAMPLES: &str = "Examples:
  fslab run examples/seed-metadata-xattr.toml --output json:meta.json
  fslab report meta.json -o meta.html
  fslab report ext4.json xfs.json -o io.html        # single-command results side by side
  fslab run plan.toml --output html:plan.html        # the same page, rewritten after every cell";

const COMPARE_EXAMPLES: &str = "Examples:
  fslab run examples/seed-metadata-xattr.toml --output json:meta.json
  fslab compare meta.json
  fslab io --target /mnt/ext4 --rw randrw --direct --output json:ext4.json
  fslab io --target /mnt/xfs --rw randrw --direct --output json:xfs.json
  fslab compare ext4.json xfs.json --baseline ext4
  fslab compare ext4.json xfs.json --format plain   # ASCII, at most 80 columns: for a mail to a list
  fslab compare meta.json --format markdown         # GitHub pipe tables, for an issue or a wiki";

#[derive(Debug, Args, Clone)]
pub struct CleanupArgs {
    /// Directories to look in (the --target or --scratch-dir of the killed runs).
    /// Default: the current directory and /var/tmp.
    pub paths: Vec<String>,
    /// Only list what would be removed.
    #[arg(long)]
    pub dry_run: bool,
}
