//! The sync engine: one blocking syscall per operation (pread, pwrite, fsync,
//! fdatasync), like fio's `psync`. Syscalls go through rustix's raw backend:
//! no libc errno round trip on the hot path.

use super::{Caps, Engine, Op, Submit};
use rustix::fd::BorrowedFd;

pub struct SyncEngine;

#[inline]
fn res(r: rustix::io::Result<usize>) -> i64 {
    match r {
        Ok(n) => n as i64,
        Err(e) => -(e.raw_os_error() as i64),
    }
}

impl Engine for SyncEngine {
    fn name(&self) -> &'static str {
        "sync"
    }
    fn caps(&self) -> Caps {
        Caps {
            inline: true,
            real_io: true,
        }
    }
    #[inline]
    fn submit(&mut self, op: &Op, _token: u64) -> Submit {
        // SAFETY: the caller guarantees fds are open for the call and buffers
        // valid for `len` bytes (Engine's contract); a bad fd yields EBADF.
        Submit::Done(unsafe {
            match *op {
                Op::Read { fd, offset, buf, len } => res(rustix::io::pread(
                    BorrowedFd::borrow_raw(fd),
                    std::slice::from_raw_parts_mut(buf, len),
                    offset,
                )),
                Op::Write { fd, offset, buf, len } => res(rustix::io::pwrite(
                    BorrowedFd::borrow_raw(fd),
                    std::slice::from_raw_parts(buf, len),
                    offset,
                )),
                Op::Fsync { fd } => res(rustix::fs::fsync(BorrowedFd::borrow_raw(fd)).map(|_| 0)),
                Op::Fdatasync { fd } => res(rustix::fs::fdatasync(BorrowedFd::borrow_raw(fd)).map(|_| 0)),
            }
        })
    }
}
