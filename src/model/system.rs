//! What the system did beside a cell: the block devices under its target
//! (the `iostat -x` figures, per second and over the cell), the machine's CPU
//! split, memory and pressure, what other processes took (interference), the
//! share of fslab's latency the devices account for, and, with `--profile`,
//! where fslab's CPU time went. Measured by `telemetry` through the cell
//! pipeline's hooks; documented in docs/results.md.

use crate::stats::OpKind;
use serde::{Deserialize, Serialize};

/// The system part of a cell (`cell.system`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct SystemData {
    /// Length of one sample in ms (1000: one per second).
    pub interval_ms: u64,
    /// CPUs online (the denominator of every `*_pct` of the machine).
    pub ncpus: u32,
    /// The timed phases on the samples' clock (ms since the first phase started).
    pub phases: Vec<PhaseSpan>,
    /// The device stack under the target, top first: the target's device
    /// (a loop device, a partition, dm), then what it sits on (the disk under
    /// a loop device's backing file, dm and md members, a partition's disk).
    pub devices: Vec<DeviceData>,
    /// The machine, once per interval.
    pub samples: Vec<SystemPoint>,
    /// The machine over the whole cell (`t_ms` = its length).
    pub total: SystemPoint,
    pub interference: Interference,
    /// Per device of the stack and direction: the device's time against fslab's.
    pub latency_share: Vec<LatencyShare>,
    /// Per MPI rank (rank 0 first), in a distributed run; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankSystem>,
    /// What could not be measured and why ("no /proc/pressure: kernel without PSI").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// `fslab run --retry-disturbed`: which attempt this cell is (1: the
    /// first; 0 in results of older versions).
    #[serde(default)]
    pub attempts: u32,
    /// Why each earlier attempt was rerun (its disturbance reasons, joined).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rerun_reasons: Vec<String>,
}

/// One timed phase (meta's create, stat, ...; "run" for a one-phase cell).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct PhaseSpan {
    pub name: String,
    pub start_ms: u64,
    pub end_ms: u64,
}

/// What a device is in the stack.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DeviceRole {
    /// A loop device (its backing file is in `backing`).
    Loop,
    /// A device-mapper device (members below it).
    Dm,
    /// An md RAID device (members below it).
    Md,
    /// A partition of the next device.
    Partition,
    /// A whole disk (vda, sda, nvme0n1, zram0).
    #[default]
    Disk,
}

/// One block device of the stack.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct DeviceData {
    /// Kernel name ("loop3", "vda").
    pub name: String,
    /// "major:minor".
    pub dev: String,
    pub role: DeviceRole,
    /// The device above this one in the stack (None for the top).
    pub above: Option<String>,
    /// A loop device's backing file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing: Option<String>,
    /// A loop device: whether it does direct I/O to its backing file
    /// (`/sys/block/loopN/loop/dio`); without, the backing file's page cache
    /// and read-ahead stand between it and the device below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direct_io: Option<bool>,
    /// The active I/O scheduler (`/sys/block/X/queue/scheduler`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    /// Once per interval, on the same clock as `SystemData::samples`.
    pub samples: Vec<IostatPoint>,
    /// Over the whole cell.
    pub total: IostatPoint,
}

/// `iostat -x` figures of one device over one interval, computed from two
/// readings of `/sys/block/X/stat` as sysstat computes them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct IostatPoint {
    /// End of the interval, ms since the first phase started.
    pub t_ms: u64,
    /// Length of the interval, ms.
    pub len_ms: u64,
    pub r_s: f64,
    pub w_s: f64,
    pub rmb_s: f64,
    pub wmb_s: f64,
    pub rrqm_s: f64,
    pub wrqm_s: f64,
    pub r_await_ms: f64,
    pub w_await_ms: f64,
    /// Average request size, KiB (rareq-sz, wareq-sz).
    pub rareq_kib: f64,
    pub wareq_kib: f64,
    pub d_s: f64,
    pub dmb_s: f64,
    pub d_await_ms: f64,
    pub f_s: f64,
    pub f_await_ms: f64,
    /// aqu-sz: time in queue / interval.
    pub aqu_sz: f64,
    /// %util: io_ticks / interval.
    pub util_pct: f64,
    /// Raw deltas of the interval, for attribution.
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Time the interval's completed requests spent, ms (fields 4 and 8).
    pub read_ticks_ms: u64,
    pub write_ticks_ms: u64,
    /// Raw deltas fio's "Disk stats" prints: merged reads and writes, the
    /// weighted time in queue and the time the device was busy, ms
    /// (fields 2, 6, 11 and 10). 0 in results of versions before them.
    #[serde(default)]
    pub read_merges: u64,
    #[serde(default)]
    pub write_merges: u64,
    #[serde(default)]
    pub in_queue_ms: u64,
    #[serde(default)]
    pub io_ticks_ms: u64,
}

/// The machine over one interval.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct SystemPoint {
    /// End of the interval, ms since the first phase started.
    pub t_ms: u64,
    pub len_ms: u64,
    /// `/proc/stat`: % of all CPUs (as mpstat's "all" line).
    pub cpu: CpuSplit,
    /// fslab's own CPU (every thread), % of all CPUs.
    pub fslab_pct: f64,
    /// Context switches per second (machine).
    pub ctxt_s: f64,
    /// `/proc/meminfo` at the end of the interval.
    pub dirty_kib: u64,
    pub writeback_kib: u64,
    /// `/proc/vmstat` nr_dirty_threshold and nr_dirty_background_threshold, KiB.
    pub dirty_threshold_kib: u64,
    pub dirty_bg_threshold_kib: u64,
    /// `/proc/vmstat` pgpgin/pgpgout, KiB per second.
    pub pgpgin_kib_s: f64,
    pub pgpgout_kib_s: f64,
    /// `/proc/pressure/*`: % of the interval some (or all) tasks stalled.
    /// None when the kernel has no PSI.
    pub psi: Option<Pressure>,
}

/// The CPU split of `/proc/stat`, % of all CPUs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct CpuSplit {
    pub user: f64,
    pub nice: f64,
    pub system: f64,
    pub iowait: f64,
    pub irq: f64,
    pub softirq: f64,
    pub steal: f64,
    pub idle: f64,
}

/// Pressure stall information over an interval, % of its time.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Pressure {
    pub cpu_some: f64,
    pub io_some: f64,
    pub io_full: f64,
    pub memory_some: f64,
    pub memory_full: f64,
}

/// What others did to the machine during the cell.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Interference {
    /// CPU other processes used (busy minus fslab's own, kernel threads and
    /// interrupts excluded), % of all CPUs, over the cell.
    pub other_cpu_pct: f64,
    /// Steal time (a hypervisor's other guests), % of all CPUs.
    pub steal_pct: f64,
    /// Kernel threads' CPU (writeback, journal, kworkers: mostly fslab's own
    /// work done on its behalf), % of all CPUs; not counted as interference.
    pub kernel_threads_pct: f64,
    /// The largest other consumers.
    pub top_others: Vec<OtherProcess>,
    /// I/O on a device of the stack that the device above it did not issue
    /// (a disk's bytes beyond its loop device's), where it can be attributed.
    pub foreign_io: Vec<ForeignIo>,
    /// Thresholds applied: other CPU and steal, % of all CPUs.
    pub cpu_threshold_pct: f64,
    /// Above a threshold: the run was disturbed.
    pub disturbed: bool,
    /// Why, one line each ("other processes used 48.2% of the CPUs (stress 1234: 47.9%)").
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct OtherProcess {
    pub pid: u32,
    pub comm: String,
    /// % of all CPUs over the cell.
    pub cpu_pct: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct ForeignIo {
    pub device: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// The device's share of fslab's latency in one direction: its total request
/// time (completed requests × await) against fslab's total operation time.
/// With O_DIRECT at depth 1 this is await / mean latency.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct LatencyShare {
    pub device: String,
    /// Read or Write.
    pub dir: OpKind,
    /// fslab's operations and mean latency in that direction.
    pub ops: u64,
    pub mean_lat_us: f64,
    /// The device's completed requests and their mean await.
    pub device_ios: u64,
    pub await_us: f64,
    /// device_ios × await / (ops × mean latency), %: the part of fslab's
    /// operation time the device spent on its requests. None without
    /// operations, and when the device's time is not fslab's alone
    /// (`unattributed` says why): a share is never above 100%.
    pub share_pct: Option<f64>,
    /// Why the device's time cannot be attributed to fslab's operations
    /// (it served other I/O, or more request time than fslab waited for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unattributed: Option<String>,
}

/// One MPI rank's machine, summarised.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct RankSystem {
    pub rank: usize,
    pub host: String,
    pub total: SystemPoint,
    pub devices: Vec<DeviceData>,
    pub interference: Interference,
}

/// `--profile`: where fslab's CPU time went, per timed phase (`cell.profile`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Profile {
    /// "cpu-clock" (software event: works without PMU counters).
    pub event: String,
    pub frequency_hz: u64,
    pub phases: Vec<PhaseProfile>,
    /// The folded-stacks file written for this cell, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folded_file: Option<String>,
    /// What the profiler cost: its own CPU time (the reader thread that
    /// empties the ring buffers), % of fslab's CPU time in the timed phases.
    /// The kernel's work per sample, done in the sampled threads, is not in
    /// it (bench/profile-cost.sh measures the whole).
    pub overhead_pct: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct PhaseProfile {
    pub name: String,
    pub samples: u64,
    /// Samples the kernel dropped (ring buffer full).
    pub lost: u64,
    /// Top symbols by inclusive share (the 25 most inclusive, and the 10
    /// hottest by self share if not among them).
    pub top: Vec<SymbolShare>,
    /// Folded stacks ("a;b;c" root first, count), the heaviest first, pruned
    /// to what a flame graph can show.
    pub stacks: Vec<FoldedStack>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct SymbolShare {
    pub symbol: String,
    /// "kernel" or "user".
    pub space: String,
    /// % of the phase's samples with it on top of the stack.
    pub self_pct: f64,
    /// % of the phase's samples with it anywhere on the stack.
    pub total_pct: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct FoldedStack {
    pub stack: String,
    pub count: u64,
}

/// Where a metadata cell's xattrs live, from a sample of its files
/// (FIEMAP with FIEMAP_FLAG_XATTR), `cell.xattrs`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct XattrPlacement {
    /// Files sampled (after the create phase).
    pub sampled: u64,
    /// Xattrs inside the inode (FIEMAP_EXTENT_DATA_INLINE; on XFS, which
    /// reports shortform attributes as no extent, a file without one).
    pub in_inode: u64,
    /// In an external block.
    pub external: u64,
    /// FIEMAP reported no xattr extent.
    pub none: u64,
    /// Why nothing could be sampled (the filesystem refuses FIEMAP_FLAG_XATTR).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
