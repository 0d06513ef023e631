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

/// The basic stats of `path` into a statx buffer, through fstatat(2): the
/// same information as statx(STATX_BASIC_STATS) and ~5 % cheaper in the
/// kernel (measured on tmpfs: 658 vs 692 ns), which shows in stat-bound phases.
unsafe fn stat_basic(dirfd: libc::c_int, path: *const libc::c_char, out: &mut libc::statx) -> i64 {
    let mut st: libc::stat = std::mem::zeroed();
    let r = libc_res(libc::fstatat(dirfd, path, &mut st, 0) as libc::c_long);
    if r < 0 {
        return r;
    }
    let ts = |sec: i64, nsec: i64| {
        // The struct has private padding: start from zeroes, set the fields.
        let mut t: libc::statx_timestamp = std::mem::zeroed();
        t.tv_sec = sec;
        t.tv_nsec = nsec as u32;
        t
    };
    out.stx_mask = libc::STATX_BASIC_STATS;
    out.stx_blksize = st.st_blksize as u32;
    out.stx_nlink = st.st_nlink as u32;
    out.stx_uid = st.st_uid;
    out.stx_gid = st.st_gid;
    out.stx_mode = st.st_mode as u16;
    out.stx_ino = st.st_ino;
    out.stx_size = st.st_size as u64;
    out.stx_blocks = st.st_blocks as u64;
    out.stx_atime = ts(st.st_atime, st.st_atime_nsec);
    out.stx_mtime = ts(st.st_mtime, st.st_mtime_nsec);
    out.stx_ctime = ts(st.st_ctime, st.st_ctime_nsec);
    0
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
                Op::Statx { dirfd, path, buf } => stat_basic(dirfd, path, &mut *buf),
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
