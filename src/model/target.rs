//! What a cell ran on: the target as found (`target::info` fills it) and,
//! for lab cells, how the scratch filesystem was made (`target::scratch`).

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Where and on what a run happened.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TargetInfo {
    /// The path given with --target.
    pub path: PathBuf,
    /// "directory", "file" or "block-device".
    pub kind: String,
    /// Filesystem type from mountinfo ("raw" for a block device target).
    pub fs_type: String,
    pub mount_point: Option<PathBuf>,
    /// Per-mount and superblock options, as mountinfo lists them.
    pub mount_options: Option<String>,
    /// The device: the mount source, or the block device itself.
    pub device: Option<String>,
    /// For a loop device: its backing file and whether it does direct I/O to it.
    pub loop_backing_file: Option<String>,
    pub loop_direct_io: Option<bool>,
    /// statx DIOALIGN (0 when the filesystem reports none).
    pub dio_mem_align: u32,
    pub dio_offset_align: u32,
    /// The run opened its files with O_DIRECT.
    pub direct: bool,
    /// With --direct: whether the target really bypasses the page cache (a
    /// misaligned O_DIRECT read is refused). tmpfs accepts O_DIRECT and ignores it.
    pub direct_honoured: Option<bool>,
    /// The block queue of the device under the target, as the cell found it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueInfo>,
}

/// A device's block queue (/sys/block/DISK/queue): what sits between the
/// filesystem and the device, and differs between two otherwise equal runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct QueueInfo {
    /// The disk whose queue it is (a partition's is its disk's).
    pub disk: String,
    /// The active I/O scheduler: none, mq-deadline, bfq, kyber.
    pub scheduler: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_ahead_kb: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_requests: Option<u64>,
    /// Writeback throttling's latency target (0: off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wbt_lat_usec: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_sectors_kb: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
}

/// What a scratch cell ran on, recorded in the result.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct ScratchInfo {
    /// ext4, xfs, btrfs, tmpfs, raw.
    pub fs_type: String,
    pub mkfs_args: Vec<String>,
    pub mount_options: Option<String>,
    /// Image size in bytes (the loop device's size).
    pub size: u64,
    pub device: Option<String>,
    /// Whether the loop device does direct I/O to its image.
    pub loop_direct_io: Option<bool>,
    /// The block-queue settings the plan set for the cell ("scheduler=mq-deadline").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queue_set: Vec<String>,
}
