//! A cell's latency anatomy (`--anatomy`, `--explain-slow`): where each
//! operation kind's time went, layer by layer, the device's own queue and
//! service times, and for each slow operation why it stalled.

use crate::stats::anatomy::{Figure, KindAnatomy, Layer};
use crate::stats::OpKind;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Anatomy {
    /// Per operation kind of the cell's first group (the probe, not its
    /// load): end to end and each layer (`layer_names`' order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<KindEntry>,
    /// The layers' names, in the order of each kind's `layers`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layer_names: Vec<Layer>,
    /// Block requests per device and direction: queue (insert -> issue)
    /// and device (issue -> complete) time, from the block tracepoints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceLatency>,
    /// `--anatomy`: where each device's blocks landed over the cell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lba: Vec<LbaMap>,
    /// `--explain-slow`: the threshold, and each operation over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_threshold_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slow: Vec<SlowOperation>,
    /// Slow operations past the first `slow.len()` (only the slowest are kept).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub slow_dropped: u64,
    /// What could not be observed, one line each (no privileges, a
    /// tracepoint this kernel lacks, events lost).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unobserved: Vec<String>,
    /// What the tracing cost in the kernel over the cell, from the
    /// kernel's own BPF run statistics; absent where it keeps none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracer_cost: Option<TracerCost>,
}

/// The runs of fslab's BPF programs and their time on CPU over a cell
/// (BPF_ENABLE_STATS, held while the session is open). They run on every
/// task's context switches and block requests, not only fslab's, so this
/// bounds from above what the cell's operations paid in the kernel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TracerCost {
    pub runs: u64,
    /// Summed over CPUs.
    pub kernel_ns: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KindEntry {
    pub kind: OpKind,
    #[serde(flatten)]
    pub anatomy: KindAnatomy,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceLatency {
    /// "major:minor".
    pub dev: String,
    /// The kernel's name for it ("loop3", "vda"), when known.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// "read", "write" or "other" (flushes, discards).
    pub dir: String,
    pub requests: u64,
    /// Insert -> issue; requests the kernel issued directly have none.
    pub queue: Figure,
    /// Issue -> complete.
    pub device: Figure,
}

/// The classes of an LBA map's points, by index.
pub const LBA_CLASSES: [&str; 4] = ["data", "metadata", "journal/log", "read"];

/// Where a device's blocks landed over a cell (iowatcher-like), from
/// block_bio_queue: the bytes submitted per time step, offset step and
/// class. A write is journal/log when the journal thread (jbd2) submitted
/// it or it carries a preflush or FUA (a log's commit records), metadata
/// when marked REQ_META, else data; reads are one class.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LbaMap {
    pub dev: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// A point's time and offset span.
    pub time_step_ns: u64,
    pub offset_step_bytes: u64,
    /// The highest offset submitted, in bytes (the picture's height).
    pub extent_bytes: u64,
    /// Bytes per class (`LBA_CLASSES`' order).
    pub bytes: Vec<u64>,
    /// [time index from the cell's start, offset index, class, bytes].
    pub points: Vec<[u64; 4]>,
}

/// One operation over `--explain-slow`'s threshold, and where its time went.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SlowOperation {
    pub kind: OpKind,
    /// From the cell's first traced operation's second (the kernel's clock).
    pub at_ns: u64,
    pub latency_ns: u64,
    pub runqueue_ns: u64,
    /// Off the CPU, asleep: the sum of `sleeps` plus `unseen_ns`.
    pub asleep_ns: u64,
    /// Asleep in sleeps whose record was overwritten (more than 64 in
    /// one operation): no stack.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unseen_ns: u64,
    /// Each sleep of 1 ms or more, longest first; shorter ones are summed
    /// per class into `short_sleeps`.
    pub sleeps: Vec<Sleep>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub short_sleeps: Vec<ClassTime>,
    /// The time in sleeps whose kernel stack was captured and named.
    pub attributed_ns: u64,
    /// Block requests its own thread submitted that completed within it.
    pub own_requests: u64,
    pub own_queue_ns: u64,
    pub own_device_ns: u64,
    /// Every block request that completed on any device during it.
    pub device: WindowActivity,
    /// jbd2 commits that ran during it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commits: Vec<Commit>,
    /// XFS log forces during it, and how many its own thread issued.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub log_forces: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub own_log_forces: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClassTime {
    pub class: Layer,
    pub ns: u64,
    pub count: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sleep {
    pub ns: u64,
    pub class: Layer,
    /// "D" (uninterruptible) or "S".
    pub state: String,
    /// The first function under the scheduler (`jbd2_log_wait_commit`);
    /// empty when the stack was not captured.
    pub site: String,
    /// Innermost first, scheduler frames left out.
    pub stack: Vec<String>,
    /// Who woke it: "jbd2/loop3-8 (812)"; empty when nothing was seen.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub waker: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waker_stack: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WindowActivity {
    pub requests: u64,
    pub writes: u64,
    pub bytes: u64,
    pub queue_ns: u64,
    pub device_ns: u64,
    pub device_max_ns: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Commit {
    pub dev: String,
    pub tid: u32,
    /// Each phase's length, where seen: running until locked, locking,
    /// flushing data, logging; and from start to end.
    pub locking_ns: Option<u64>,
    pub flushing_ns: Option<u64>,
    pub logging_ns: Option<u64>,
    pub total_ns: Option<u64>,
    /// From jbd2_run_stats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handles: Option<u32>,
}

impl Anatomy {
    /// The kind's figures, if any.
    pub fn kind(&self, k: OpKind) -> Option<&KindAnatomy> {
        self.kinds.iter().find(|e| e.kind == k).map(|e| &e.anatomy)
    }
}

impl SlowOperation {
    /// The share of its time in named sleeps with stacks.
    pub fn attributed_share(&self) -> f64 {
        if self.latency_ns == 0 {
            return 0.0;
        }
        self.attributed_ns as f64 / self.latency_ns as f64
    }
}
