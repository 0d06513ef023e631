//! `fslab io`: the data I/O command's flags (fio-class workload, engine,
//! safety, buffers) and its help examples. The largest argument struct, so
//! it has a file of its own.

use clap::{Args, Parser};

use super::common::{CommonArgs, ENGINE, OUTPUT, SAFETY, WORKLOAD};
use super::words::{self, Word};

pub(super) const IO_EXAMPLES: &str = "\
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

#[derive(Debug, Args, Clone)]
pub struct IoArgs {
    /// I/O pattern.
    #[arg(long, value_name = "PATTERN", default_value = "randread", value_parser = Word::<words::Rw>::one(), help_heading = WORKLOAD)]
    pub rw: String,
    /// Percentage of reads in rw/randrw.
    #[arg(long, value_name = "PCT", default_value = "50", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub rwmixread: String,
    /// Percentage of writes in rw/randrw (fio's rwmixwrite: the reads are the rest).
    #[arg(long, value_name = "PCT", conflicts_with = "rwmixread", allow_hyphen_values = true, help_heading = WORKLOAD)]
    pub rwmixwrite: Option<String>,
    /// Block size (binary units: 4k = 4096), or a range MIN-MAX: each operation
    /// picks a size in it, a multiple of MIN or MAX, drawn as fio's bsrange.
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
    #[arg(long, visible_alias = "numjobs", value_name = "N", default_value = "1", allow_hyphen_values = true, help_heading = WORKLOAD)]
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
    #[arg(long, visible_alias = "ramp_time", value_name = "DUR", allow_hyphen_values = true, help_heading = WORKLOAD)]
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
    /// I/O engine (fio's names are taken too: psync, io_uring).
    #[arg(long, visible_alias = "ioengine", value_name = "ENGINE", default_value = "sync", value_parser = Word::<words::IoEngine>::one(), help_heading = ENGINE)]
    pub engine: String,
    /// Open with O_DIRECT (bypass the page cache).
    #[arg(long, help_heading = ENGINE)]
    pub direct: bool,
    /// Operations in flight per job (--engine uring, libaio or posixaio).
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
