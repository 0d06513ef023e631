//! fio's per-job logs (write_bw_log, write_lat_log, write_iops_log,
//! write_hist_log): what a worker records beside its statistics when a log
//! is asked for. Without one nothing here runs on the hot path.

/// Which logs a group's workers keep, and how they average. `Default`: none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogSpec {}

impl LogSpec {
    /// True when no log is asked for.
    pub fn is_off(&self) -> bool {
        *self == LogSpec::default()
    }
}
