//! What `fslab probe` records beside the per-phase latency: every sample,
//! the stalls, the context per second, and the load's own throughput.

use super::LatSummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The probe part of a cell.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbeData {
    pub op: String,
    pub interval_ns: u64,
    pub stall_ns: u64,
    /// Wall clock (Unix ns) of the grid's start: sample times are relative to it.
    pub start_unix_ns: u64,
    pub phases: Vec<ProbePhase>,
    /// Every probe, in order.
    pub samples: Vec<ProbeSample>,
    pub stalls: Vec<Stall>,
    /// Once per second: page cache and I/O pressure, and the load's progress.
    pub context: Vec<ContextPoint>,
    /// The load's description (`stream-write:...` or `io:...`).
    pub load: Option<String>,
}

/// One phase of a probe run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbePhase {
    pub name: String,
    pub start_ns: u64,
    pub end_ns: u64,
    pub probes: u64,
    /// Grid slots skipped because a probe was still running.
    pub missed: u64,
    /// Probes that took longer than the stall threshold.
    pub stalls: u64,
    /// From the probe's actual start.
    pub lat: LatSummary,
    /// From its scheduled slot; missed slots count with the time until the
    /// blocking probe finished (coordinated omission corrected).
    pub sched_lat: LatSummary,
    pub errors: BTreeMap<String, u64>,
    /// Bytes the load wrote during the phase, and its rate over the time it
    /// was writing (the phase, or less when it finished early).
    pub load_bytes: u64,
    pub load_mb_s: f64,
    /// When a stream load finished its SIZE within this phase (since the
    /// grid's start); probes after it ran without load. None: it wrote to
    /// the phase's end, or the phase had no load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_end_ns: Option<u64>,
}

/// One probe.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct ProbeSample {
    /// Scheduled start, since the grid's start.
    pub t_ns: u64,
    pub phase: String,
    /// From the actual start.
    pub lat_ns: u64,
    /// From the scheduled start.
    pub sched_lat_ns: u64,
    /// Slots skipped right after this probe because it overran.
    pub missed_after: u64,
    /// 0, or the errno the probe failed with.
    pub errno: i32,
}

/// A stretch during which the probed operation did not complete.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Stall {
    /// The last moment the filesystem was seen working: the end of the last
    /// probe that completed in time (since the grid's start).
    pub start_ns: u64,
    /// Scheduled start of the first slow probe.
    pub first_slot_ns: u64,
    /// When the slow probe(s) completed.
    pub end_ns: u64,
    /// end - start: the stall is at most this long...
    pub max_ns: u64,
    /// ...and at least this long (the slow probe's own latency).
    pub min_ns: u64,
    pub missed: u64,
    pub phase: String,
}

/// The context of one second.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct ContextPoint {
    pub t_s: u64,
    /// /proc/meminfo
    pub dirty_kib: u64,
    pub writeback_kib: u64,
    /// /proc/pressure/io: microseconds of stall in this second (some, full).
    pub io_some_us: Option<u64>,
    pub io_full_us: Option<u64>,
    /// Bytes the load wrote in this second (stream-write loads).
    pub load_bytes: u64,
}
