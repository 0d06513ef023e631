//! What `fslab fio` writes: the output formats (normal, json, json+, terse,
//! --minimal), and each job's logs (write_bw_log, write_lat_log,
//! write_iops_log, write_hist_log with log_avg_msec, log_max_value,
//! log_hist_msec, per_job_logs) and status_interval.

/// fio output formats fslab writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FioFormat {
    /// fio's human text.
    Normal,
    /// fio's JSON (json+ is written as json, with a note).
    Json,
}

/// A job's logs. `Default`: none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogOpts {}
