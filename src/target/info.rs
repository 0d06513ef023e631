//! What the target is: filesystem type, mount options and device from
//! `/proc/self/mountinfo`, the loop device's backing file, and statx's O_DIRECT
//! alignment. Results must say what was measured, so this is recorded in every
//! result file.

pub(crate) use crate::host_facts::unescape;
pub use crate::host_facts::{mount_of, mounts, parse_mountinfo, pseudo_fs, MountEntry};

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
