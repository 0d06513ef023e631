//! `fslab fio`: fio's own command-line flags (the job options themselves
//! are parsed in `plan::fio`), and the help text listing the supported
//! fio options.

use clap::Args;

use super::common::{TelemetryArgs, OUTPUT, SAFETY, WORKLOAD};
use super::words::{self, Word};

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
    /// As fio's --eta: always, never (no progress on stderr, as --quiet) or auto.
    #[arg(long, value_name = "WHEN", help_heading = OUTPUT)]
    pub eta: Option<String>,
    /// fio's ETA line options: accepted (fslab's progress line is its own).
    #[arg(long, value_name = "TIME", help_heading = OUTPUT)]
    pub eta_newline: Option<String>,
    #[arg(long, value_name = "TIME", help_heading = OUTPUT, hide = true)]
    pub eta_interval: Option<String>,
    /// As fio's: read and check the jobs, run nothing.
    #[arg(long, help_heading = WORKLOAD)]
    pub parse_only: bool,
    /// As fio's: print the jobs as one fio command line, run nothing.
    #[arg(long, help_heading = WORKLOAD)]
    pub showcmd: bool,
    /// As fio's: refuse any job that writes or trims.
    #[arg(long, help_heading = SAFETY)]
    pub readonly: bool,
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

pub(super) const FIO_EXAMPLES: &str = "\
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
  engines   sync, psync, vsync, pvsync, pvsync2, io_uring, libaio, posixaio,
            mmap, null; net (tcp, udp, multicast, pingpong; hostname, port,
            listen, nodelay, interface, ttl, window_size, mss);
            filecreate, filestat, filedelete,
            dircreate, dirstat, dirdelete; cmdprio_percentage,
            cmdprio_class, cmdprio, cmdprio_bssplit (libaio, io_uring)
  region    offset, offset_increment, size=N%, io_size/io_limit, number_ios,
            loops, random_distribution (zipf, pareto, normal, zoned,
            zoned_abs), norandommap, random_generator, file_service_type,
            openfiles, filename_format, unique_filename, invalidate,
            pre_read, create_only, sync, fsync_on_close, fallocate,
            write_barrier, zonemode (none, strided), zonesize, zonerange,
            zoneskip, fill_device/fill_fs
  buffers   scramble_buffers, refill_buffers, zero_buffers, buffer_pattern,
            buffer_compress_percentage/chunk, dedupe_percentage,
            dedupe_mode, dedupe_working_set_percentage, dedupe_global; verify
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
            log_offset, log_prio, clat/lat/slat_percentiles, percentile_list,
            disable_lat/clat/slat/bw_measurement, gtod_reduce;
            --output-format normal, json, json+, terse (comma lists),
            --minimal
  files     include, ${ENV}, $ncpus, $mb_memory, $pagesize, (arithmetic),
            inline ; and # comments
Anything else is refused with its file:line (or warned about with
--ignore-unsupported).";
