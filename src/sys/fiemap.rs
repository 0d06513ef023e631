//! FS_IOC_FIEMAP with `FIEMAP_FLAG_XATTR`: where a file's extended
//! attributes live (rustix has no FIEMAP, libc no `struct fiemap`).
//!
//! What the two filesystems fslab meets most report (Linux's
//! `ext4_iomap_xattr_fiemap` in fs/ext4/extents.c, `xfs_xattr_iomap_begin`
//! in fs/xfs/xfs_iomap.c, through `iomap_fiemap`):
//!
//! - ext4: xattrs in the inode body give one extent flagged
//!   `FIEMAP_EXTENT_DATA_INLINE` (and only that one, even when an external
//!   block holds more); an external xattr block gives one physical extent of
//!   one block without that flag; neither gives no extent (ENOENT inside the
//!   kernel, 0 extents to us).
//! - XFS: shortform attributes (in the inode's literal area) give no extent:
//!   the attribute fork has no blocks; leaf, node or remote attributes give
//!   the attribute fork's physical extents. XFS never says DATA_INLINE.
//!
//! A filesystem without fiemap (tmpfs) says EOPNOTSUPP; one whose fiemap
//! does not take `FIEMAP_FLAG_XATTR` (btrfs) says EBADR.

use rustix::fd::AsFd;
use rustix::io::Errno;
use rustix::ioctl::{opcode, Opcode, Updater};

/// `FIEMAP_FLAG_XATTR`: map the xattr fork instead of the data.
const FIEMAP_FLAG_XATTR: u32 = 0x2;
/// `FIEMAP_EXTENT_DATA_INLINE`: the data lives inside metadata (the inode).
pub const FIEMAP_EXTENT_DATA_INLINE: u32 = 0x200;

/// `struct fiemap` (linux/fiemap.h) without its flexible array.
#[repr(C)]
#[derive(Default)]
struct Fiemap {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
}

/// `struct fiemap_extent`.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct FiemapExtent {
    fe_logical: u64,
    fe_physical: u64,
    fe_length: u64,
    fe_reserved64: [u64; 2],
    fe_flags: u32,
    fe_reserved: [u32; 3],
}

/// How many extents one call asks for: an xattr fork is one extent on ext4
/// and a few on XFS (a remote value or a leaf block each).
const EXTENTS: usize = 32;

/// The header with room for [`EXTENTS`] extents right after it, as the
/// kernel expects them.
#[repr(C)]
#[derive(Default)]
struct FiemapBuf {
    hdr: Fiemap,
    extents: [FiemapExtent; EXTENTS],
}

/// `_IOWR('f', 11, struct fiemap)`: the size in the opcode is the header's.
const FS_IOC_FIEMAP: Opcode = opcode::read_write::<Fiemap>(b'f', 11);

/// One extent of a file's xattrs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XattrExtent {
    /// Byte address on the device (for inline data: of the inode's xattr area).
    pub physical: u64,
    pub length: u64,
    /// `FIEMAP_EXTENT_*` flags.
    pub flags: u32,
}

impl XattrExtent {
    /// Inside the inode (`FIEMAP_EXTENT_DATA_INLINE`).
    pub fn inline(&self) -> bool {
        self.flags & FIEMAP_EXTENT_DATA_INLINE != 0
    }
}

/// Where FIEMAP says one file's xattrs are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XattrFork {
    /// An extent flagged `FIEMAP_EXTENT_DATA_INLINE` (ext4's in-inode area).
    InInode,
    /// Physical extents, none inline: an external block (or XFS's attribute
    /// fork blocks).
    External,
    /// No extent: no xattrs on ext4; XFS's shortform (in-inode) attributes.
    NoExtent,
}

/// Classifies a file's xattr extents: any inline extent means in the inode
/// (ext4 reports only that one when both exist), else any physical extent an
/// external block, else none.
pub fn xattr_fork(extents: &[XattrExtent]) -> XattrFork {
    if extents.iter().any(XattrExtent::inline) {
        XattrFork::InInode
    } else if extents.is_empty() {
        XattrFork::NoExtent
    } else {
        XattrFork::External
    }
}

/// The extents of the xattrs of the open file `fd` (FS_IOC_FIEMAP with
/// `FIEMAP_FLAG_XATTR`, without `FIEMAP_FLAG_SYNC`: nothing is written back).
/// At most the first 32 extents.
pub fn xattr_extents(fd: impl AsFd) -> Result<Vec<XattrExtent>, Errno> {
    let mut buf = FiemapBuf {
        hdr: Fiemap {
            fm_start: 0,
            fm_length: u64::MAX,
            fm_flags: FIEMAP_FLAG_XATTR,
            fm_extent_count: EXTENTS as u32,
            ..Default::default()
        },
        ..Default::default()
    };
    // SAFETY: FS_IOC_FIEMAP reads the header and writes at most
    // `fm_extent_count` extents right after it; `buf` is a repr(C) header
    // followed by that many extents, borrowed mutably for the call only. A
    // bad fd or a filesystem without fiemap is an errno, not undefined
    // behaviour.
    unsafe { rustix::ioctl::ioctl(fd, Updater::<FS_IOC_FIEMAP, FiemapBuf>::new(&mut buf)) }?;
    let n = (buf.hdr.fm_mapped_extents as usize).min(EXTENTS);
    Ok(buf.extents[..n]
        .iter()
        .map(|e| XattrExtent {
            physical: e.fe_physical,
            length: e.fe_length,
            flags: e.fe_flags,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `FIEMAP_EXTENT_LAST`, `FIEMAP_EXTENT_NOT_ALIGNED`.
    const FIEMAP_EXTENT_LAST: u32 = 0x1;
    const FIEMAP_EXTENT_NOT_ALIGNED: u32 = 0x100;

    #[test]
    fn layout_matches_the_kernel_headers() {
        assert_eq!(std::mem::size_of::<Fiemap>(), 32);
        assert_eq!(std::mem::size_of::<FiemapExtent>(), 56);
        assert_eq!(std::mem::offset_of!(FiemapBuf, extents), 32);
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        assert_eq!(FS_IOC_FIEMAP as u64, 0xC020_660B);
    }

    #[test]
    fn classification() {
        let ext = |flags| XattrExtent {
            physical: 4096,
            length: 4096,
            flags,
        };
        assert_eq!(xattr_fork(&[]), XattrFork::NoExtent);
        assert_eq!(
            xattr_fork(&[ext(FIEMAP_EXTENT_LAST
                | FIEMAP_EXTENT_DATA_INLINE
                | FIEMAP_EXTENT_NOT_ALIGNED)]),
            XattrFork::InInode
        );
        assert_eq!(xattr_fork(&[ext(FIEMAP_EXTENT_LAST)]), XattrFork::External);
        assert_eq!(xattr_fork(&[ext(0), ext(FIEMAP_EXTENT_LAST)]), XattrFork::External);
    }

    #[test]
    fn a_device_is_refused_not_undefined() {
        let f = std::fs::File::open("/dev/null").unwrap();
        assert!(xattr_extents(&f).is_err());
    }
}
