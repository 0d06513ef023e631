//! What the system did beside a cell, read from the kernel: the block
//! device stack under a target and its `/sys/block/*/stat` counters (the
//! `iostat -x` figures as sysstat computes them), `/proc/stat`,
//! `/proc/pressure/*`, `/proc/meminfo` and `/proc/vmstat`, other processes'
//! CPU (interference), and the CPU profile (perf_event_open). It produces the
//! result model's `model::system` types; `app::telemetry` attaches it to
//! every cell through the pipeline's hooks.

pub mod anatomy;
pub mod diskstats;
pub mod interference;
pub mod latency;
pub mod procstat;
pub mod profile;
pub mod sampler;
pub mod stack;
pub mod verdict;
