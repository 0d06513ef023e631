//! How a job's operations are spaced in time beyond `--rate-iops` and
//! `--thinktime`: fio's rate (bytes per second, per direction), rate_iops
//! per direction, rate_min / rate_iops_min, rate_process=poisson,
//! rate_cycle, rate_ignore_thinktime, thinktime with thinktime_blocks,
//! thinktime_blocks_type and thinktime_spin, fio's flow between jobs (flow,
//! flow_id, flow_sleep), and which errors end the job (continue_on_error,
//! ignore_error).
//!
//! Indices `[0]` and `[1]` are reads and writes (fio's DDIR_READ, DDIR_WRITE);
//! 0 means "no limit" as in fio.

use serde::{Deserialize, Serialize};

/// A job's pacing beyond `rate_iops`. `Default` is `fslab io`'s behaviour.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PacingPlan {
    /// fio's `rate`: bytes per second per direction.
    #[serde(default, skip_serializing_if = "is_zero2")]
    pub rate: [u64; 2],
    /// fio's `rate_iops`: operations per second per direction (fio turns them
    /// into bytes per second with the smallest block size; `rate` wins).
    #[serde(default, skip_serializing_if = "is_zero2")]
    pub rate_iops: [u64; 2],
    /// fio's `rate_min`: bytes per second below which the job fails.
    #[serde(default, skip_serializing_if = "is_zero2")]
    pub rate_min: [u64; 2],
    /// fio's `rate_iops_min`.
    #[serde(default, skip_serializing_if = "is_zero2")]
    pub rate_iops_min: [u64; 2],
    /// rate_process=poisson: exponential gaps of the same mean.
    #[serde(default, skip_serializing_if = "is_false")]
    pub poisson: bool,
    /// fio's `rate_cycle` in ms (0: fio's default, 1000).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rate_cycle_ms: u32,
    /// rate_ignore_thinktime: the rate's schedule goes on during a think.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ignore_thinktime: bool,
    /// fio's `thinktime` in µs (0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub thinktime_us: u64,
    /// fio's `thinktime_spin` in µs: spun, the rest of the thinktime slept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub thinktime_spin_us: u64,
    /// fio's `thinktime_blocks` (0: fio's default, 1).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub thinktime_blocks: u32,
    /// thinktime_blocks_type=issue: count issued operations, not completed ones.
    #[serde(default, skip_serializing_if = "is_false")]
    pub thinktime_issue: bool,
    /// fio's `thinktime_iotime` in µs (0: none): a think also comes after
    /// this long of I/O (fio 3.33: once iotime + thinktime have passed since
    /// the last think began, or the job began). Without `thinktime_blocks`
    /// it is the only trigger, as in fio.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub thinktime_iotime_us: u64,
    /// A mixed job (rw/randrw) that issues both directions: when one
    /// direction is ahead of its rate the other is issued (fio's rate_ddir).
    #[serde(default, skip_serializing_if = "is_false")]
    pub mixed: bool,
    /// fio's `flow`: this job's weight in its flow (0: not in one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flow: u32,
    /// fio's `flow_id`: the jobs of one flow share its counter.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flow_id: u32,
    /// fio's `flow_sleep` in µs: the sleep of a job held back by its flow.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flow_sleep_us: u64,
    /// The job's smallest block size per direction (set from the io plan).
    #[serde(default, skip_serializing_if = "is_zero2")]
    pub min_bs: [u64; 2],
    /// Seed of the poisson gaps (the job's seed).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seed: u64,
    /// Which failed operations end the job (fio's continue_on_error and ignore_error).
    /// None: every error ends the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Box<ErrorPolicy>>,
    /// fio's latency_target search: the runner moves the job's in-flight
    /// limit to find the deepest queue that meets the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencyTarget>,
}

/// fio's latency_target, latency_window, latency_percentile and latency_run
/// (io_u.c lat_target_*): the queue depth starts at 1 and doubles after
/// each window that meets the target, bisects once one has not, and once
/// it settles the job runs one more window with fresh statistics and ends
/// (unless `run`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyTarget {
    /// The total latency (submission to completion) an operation must not
    /// exceed, in ns (fio keeps it in whole µs).
    pub target_ns: u64,
    /// How long each queue depth is tried, in µs (fio's latency_window).
    pub window_us: u64,
    /// The share of a window's operations, in percent, that must meet the
    /// target (100: one miss lowers the depth at once).
    pub percentile: f64,
    /// latency_run: keep searching until the job ends instead of stopping
    /// after the final window.
    pub run: bool,
}

/// fio's error classes (`enum error_type_bit`): read, write, verify.
pub const ERR_READ: usize = 0;
pub const ERR_WRITE: usize = 1;
pub const ERR_VERIFY: usize = 2;

/// Which errors do not end a job. `Default` (not set): fslab io's own rule
/// (`--on-error`) applies.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ErrorPolicy {
    /// Set by a fio job: its errors are judged here (fio's rule).
    pub fio: bool,
    /// continue_on_error, a bit per class (`1 << ERR_*`).
    pub continue_mask: u8,
    /// ignore_error: per class, the errnos that do not end the job; None:
    /// fio's default list (EIO, EILSEQ).
    pub ignore: [Option<Vec<i32>>; 3],
}

impl ErrorPolicy {
    pub fn is_default(&self) -> bool {
        *self == ErrorPolicy::default()
    }

    /// fio's td_non_fatal_error: an error of class `class` with `errno`
    /// lets the job go on only when continue_on_error covers the class and
    /// the errno is in the class's ignore list.
    /// A verification mismatch never ends the job here: fio keeps checking
    /// every block unless verify_fatal, which the workload applies itself.
    pub fn non_fatal(&self, class: usize, errno: i32) -> bool {
        const DEFAULT: &[i32] = &[5, 84]; // EIO, EILSEQ
        if class == ERR_VERIFY {
            return true;
        }
        if class > ERR_VERIFY || self.continue_mask & (1 << class) == 0 {
            return false;
        }
        match &self.ignore[class] {
            Some(l) => l.contains(&errno),
            None => DEFAULT.contains(&errno),
        }
    }
}

fn is_zero<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

fn is_zero2(v: &[u64; 2]) -> bool {
    *v == [0, 0]
}

fn is_false(v: &bool) -> bool {
    !*v
}

impl PacingPlan {
    /// True when nothing differs from `fslab io`'s default.
    pub fn is_default(&self) -> bool {
        *self == PacingPlan::default()
    }

    /// fio's td_non_fatal_error (see `ErrorPolicy::non_fatal`); with no
    /// policy (`fslab io --on-error stop`) every error is fatal.
    pub fn non_fatal(&self, class: usize, errno: i32) -> bool {
        self.errors.as_ref().is_some_and(|e| e.non_fatal(class, errno))
    }

    /// The error policy, made on first use.
    pub fn errors_mut(&mut self) -> &mut ErrorPolicy {
        self.errors.get_or_insert_with(Default::default)
    }

    /// fio's rate_bps per direction (`__setup_rate`): `rate`, else
    /// `rate_iops` × the smallest block size.
    pub fn bps(&self) -> [u64; 2] {
        std::array::from_fn(|d| {
            if self.rate[d] > 0 {
                self.rate[d]
            } else {
                self.rate_iops[d].saturating_mul(self.min_bs[d].max(1))
            }
        })
    }

    /// Anything the runner must pace or check (fio's TD_F_CHECK_RATE, thinktime).
    pub fn paces(&self) -> bool {
        self.checks_rate() || self.thinktime_us > 0 || self.flow > 0
    }

    /// fio's rate_ddir may switch directions: a mixed job with a rate.
    pub fn switches(&self) -> bool {
        self.mixed && self.checks_rate()
    }

    /// fio's should_check_rate: a rate or a minimum is set.
    pub fn checks_rate(&self) -> bool {
        [self.rate, self.rate_iops, self.rate_min, self.rate_iops_min]
            .iter()
            .any(|r| *r != [0, 0])
    }
}

/// fio's error class of a failed operation of `dir` with `errno`: a
/// verification failure is `ERR_VERIFY`, a read's `ERR_READ`, the rest `ERR_WRITE`.
pub fn error_class(dir: crate::stats::OpKind, errno: i64) -> usize {
    if errno == crate::errno::VERIFY_MISMATCH as i64 {
        ERR_VERIFY
    } else if dir == crate::stats::OpKind::Read {
        ERR_READ
    } else {
        ERR_WRITE
    }
}
