//! The ftruncate engine (fio's engines/ftruncate.c): a write of `len` bytes
//! at `offset` is ftruncate(2) of its file to `offset`, counted as the
//! write's `len` bytes, so a sequential write grows the file block by block
//! and a random one keeps changing its size. Every other operation fails
//! with EINVAL, as fio's queue fails every io_u that is not a write (a read,
//! trim, or a sync: the engine has no fsync). The file is opened as any
//! sync engine's (O_DIRECT with direct=1); no data is moved.

use super::{Caps, Engine, Op, Submit};
use rustix::fd::BorrowedFd;

pub struct FtruncateEngine;

impl Engine for FtruncateEngine {
    fn name(&self) -> &'static str {
        "ftruncate"
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
        Submit::Done(match *op {
            Op::Write { fd, offset, len, .. } => {
                // SAFETY: a bad fd is EBADF, as the Engine contract allows
                let fd = unsafe { BorrowedFd::borrow_raw(fd) };
                match rustix::fs::ftruncate(fd, offset) {
                    Ok(()) => len as i64,
                    Err(e) => -(e.raw_os_error() as i64),
                }
            }
            _ => -(libc::EINVAL as i64),
        })
    }
}
