//! fio's per-job log files (write_bw_log, write_lat_log, write_iops_log,
//! write_hist_log), in fio's format, from what the workers recorded.
