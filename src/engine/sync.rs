//! The sync engine: one blocking syscall per operation (pread, pwrite, fsync,
//! fdatasync, openat, close, statx, unlinkat), like fio's `psync`. Syscalls
//! go through rustix's raw backend where it has them: no libc errno round trip
//! on the hot path.

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

/// A libc return value (-1 + errno) in the engine's convention.
fn libc_res(r: libc::c_long) -> i64 {
    if r < 0 {
        -(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) as i64)
    } else {
        r
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
            max_depth: 1,
        }
    }
    #[inline]
    fn submit(&mut self, op: &Op, _token: u64) -> Submit {
        // SAFETY: the caller guarantees fds are open for the call and buffers
        // and paths valid (Engine's contract); a bad fd yields EBADF.
        Submit::Done(unsafe {
            match *op {
                Op::Read {
                    fd, offset, buf, len, ..
                } => res(rustix::io::pread(
                    BorrowedFd::borrow_raw(fd),
                    std::slice::from_raw_parts_mut(buf, len),
                    offset,
                )),
                Op::Write {
                    fd, offset, buf, len, ..
                } => res(rustix::io::pwrite(
                    BorrowedFd::borrow_raw(fd),
                    std::slice::from_raw_parts(buf, len),
                    offset,
                )),
                Op::Fsync { fd } => res(rustix::fs::fsync(BorrowedFd::borrow_raw(fd)).map(|_| 0)),
                Op::Fdatasync { fd } => res(rustix::fs::fdatasync(BorrowedFd::borrow_raw(fd)).map(|_| 0)),
                Op::OpenAt {
                    dirfd,
                    path,
                    flags,
                    mode,
                } => libc_res(libc::openat(dirfd, path, flags | libc::O_CLOEXEC, mode) as libc::c_long),
                Op::Close { fd } => libc_res(libc::close(fd) as libc::c_long),
                Op::Statx { dirfd, path, buf } => {
                    libc_res(libc::statx(dirfd, path, 0, libc::STATX_BASIC_STATS, buf) as libc::c_long)
                }
                Op::UnlinkAt { dirfd, path, flags } => libc_res(libc::unlinkat(dirfd, path, flags) as libc::c_long),
                Op::RenameAt {
                    olddirfd,
                    oldpath,
                    newdirfd,
                    newpath,
                } => libc_res(libc::renameat(olddirfd, oldpath, newdirfd, newpath) as libc::c_long),
                Op::FSetXattr { fd, name, value, len } => {
                    libc_res(libc::fsetxattr(fd, name, value as *const libc::c_void, len, 0) as libc::c_long)
                }
                Op::GetXattr { path, name, buf, len } => {
                    libc_res(libc::getxattr(path, name, buf as *mut libc::c_void, len) as libc::c_long)
                }
            }
        })
    }
}
