//! What the target is: filesystem type, mount options and device from
//! `/proc/self/mountinfo`, the loop device's backing file, and statx's O_DIRECT
//! alignment. Results must say what was measured, so this is recorded in every
//! result file.

pub(crate) use crate::host_facts::unescape;
pub use crate::host_facts::{mount_of, mounts, parse_mountinfo, pseudo_fs, MountEntry};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Where and on what a run happened.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
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
}

/// Backing file and direct-I/O flag of a loop device (`/dev/loopN`), from sysfs.
pub fn loop_backing(device: &str) -> (Option<String>, Option<bool>) {
    let Some(name) = device.strip_prefix("/dev/").filter(|n| n.starts_with("loop")) else {
        return (None, None);
    };
    let base = format!("/sys/block/{name}/loop");
    let backing = std::fs::read_to_string(format!("{base}/backing_file"))
        .ok()
        .map(|s| s.trim().to_string());
    let dio = std::fs::read_to_string(format!("{base}/dio"))
        .ok()
        .map(|s| s.trim() == "1");
    (backing, dio)
}

/// statx DIOALIGN of an open file or device: (memory, offset) alignment, 0 when unknown.
pub fn dio_align(fd: impl rustix::fd::AsFd) -> (u32, u32) {
    use rustix::fs::{statx, AtFlags, StatxFlags};
    match statx(fd, "", AtFlags::EMPTY_PATH, StatxFlags::DIOALIGN) {
        Ok(st) if st.stx_mask & StatxFlags::DIOALIGN.bits() != 0 => (st.stx_dio_mem_align, st.stx_dio_offset_align),
        _ => (0, 0),
    }
}
