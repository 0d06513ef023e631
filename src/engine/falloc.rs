//! The falloc engine (fio's engines/falloc.c): every I/O is fallocate(2)
//! of its range, counted as the I/O's `len` bytes: a write allocates it
//! (mode 0, growing the file as a write would), a read allocates it
//! without changing the size (FALLOC_FL_KEEP_SIZE), a trim punches a hole
//! (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE). No data is moved. Every
//! other operation fails with EINVAL, as fio's queue makes a sync a
//! fallocate of zero bytes (EINVAL); fslab refuses such a job before it
//! runs (`plan::fio::map::engines`).

use super::{Caps, Engine, Op, Submit};
use rustix::fd::BorrowedFd;
use rustix::fs::FallocateFlags;

pub struct FallocEngine;

impl Engine for FallocEngine {
    fn name(&self) -> &'static str {
        "falloc"
    }
    fn caps(&self) -> Caps {
        Caps {
            inline: true,
            real_io: true,
            max_depth: 1,
            xattr_at: false,
        }
    }
    /// # Safety
    /// None needed beyond the fd's: no pointer in `op` is touched.
    #[inline]
    unsafe fn submit(&mut self, op: &Op, _token: u64) -> Submit {
        let (fd, offset, len, mode) = match *op {
            Op::Read { fd, offset, len, .. } => (fd, offset, len, FallocateFlags::KEEP_SIZE),
            Op::Write { fd, offset, len, .. } => (fd, offset, len, FallocateFlags::empty()),
            Op::Trim { fd, offset, len } => (fd, offset, len, FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE),
            _ => return Submit::Done(-(libc::EINVAL as i64)),
        };
        // SAFETY: a bad fd is EBADF, as the Engine contract allows
        let f = unsafe { BorrowedFd::borrow_raw(fd) };
        Submit::Done(match rustix::fs::fallocate(f, mode, offset, len as u64) {
            Ok(()) => len as i64,
            Err(e) => -(e.raw_os_error() as i64),
        })
    }
}
