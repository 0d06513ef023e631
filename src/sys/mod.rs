//! The syscalls rustix does not wrap, behind safe functions: the one place
//! outside the engine where fslab writes `unsafe` for a system call.
//!
//! Everything else goes through rustix (safe, no libc errno round trip) or
//! through an engine (`crate::engine`), whose `Op`s carry raw buffers for
//! queueing engines and so are `unsafe` to submit. What is here takes
//! borrowed fds, `&CStr` and slices, so its callers need no `unsafe`:
//! getxattrat(2) (Linux 6.13, in neither rustix 1.1 nor libc), byte-range
//! `fcntl` locks (rustix has whole-file locks only), getdents64 into the
//! caller's buffer (rustix's `Dir` sizes its own), a close that reports its
//! error, the fd-walking tree removal both `target::rmtree` and replay's
//! Deltree use ([`tree`]), and FS_IOC_FIEMAP for where a file's xattrs live
//! ([`fiemap`]); and ctime(3)'s local time, through localtime_r.

pub mod fiemap;
pub mod tree;

use rustix::fd::{AsRawFd, BorrowedFd, IntoRawFd, OwnedFd};
use rustix::fs::AtFlags;
use rustix::io::Errno;
use std::ffi::CStr;

/// The errno of the libc call that just failed.
fn last_errno() -> Errno {
    Errno::from_raw_os_error(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO))
}

/// getxattrat(2)'s syscall number (Linux 6.13), the same on every
/// architecture; libc has no wrapper for it yet.
const SYS_GETXATTRAT: libc::c_long = 464;

/// `struct xattr_args`, version 0.
#[repr(C)]
struct XattrArgs {
    value: u64,
    size: u32,
    flags: u32,
}

/// getxattr of attribute `name` of `path` relative to `dirfd` (getxattrat(2)):
/// the value's size. `flags` may hold `AT_SYMLINK_NOFOLLOW` (lgetxattr
/// semantics). `dirfd` may be `rustix::fs::CWD`. Kernels before 6.13 say
/// ENOSYS: ask [`getxattrat_works`] first.
#[inline]
pub fn getxattrat(
    dirfd: BorrowedFd<'_>,
    path: &CStr,
    flags: AtFlags,
    name: &CStr,
    buf: &mut [u8],
) -> Result<usize, Errno> {
    let mut args = XattrArgs {
        value: buf.as_mut_ptr() as u64,
        size: buf.len().min(u32::MAX as usize) as u32,
        flags: 0,
    };
    // SAFETY: `path` and `name` are NUL-terminated and outlive the call;
    // `args` points at `buf`, writable for `size` bytes, and outlives it too;
    // a bad fd is EBADF, not undefined behaviour.
    let r = unsafe {
        libc::syscall(
            SYS_GETXATTRAT,
            dirfd.as_raw_fd(),
            path.as_ptr(),
            flags.bits() as libc::c_uint,
            name.as_ptr(),
            &mut args as *mut XattrArgs,
            std::mem::size_of::<XattrArgs>(),
        )
    };
    if r < 0 {
        Err(last_errno())
    } else {
        Ok(r as usize)
    }
}

/// Whether this kernel has getxattrat(2) (asked once).
pub fn getxattrat_works() -> bool {
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WORKS.get_or_init(|| {
        let r = getxattrat(
            rustix::fs::CWD,
            c"/",
            AtFlags::empty(),
            c"user.fslab-probe",
            &mut [0u8; 1],
        );
        // "no such attribute" (or it exists, or / has no user xattrs) means
        // the call ran; ENOSYS, or EPERM from a seccomp filter that does
        // not know it, means use paths
        matches!(r, Ok(_) | Err(Errno::NODATA | Errno::OPNOTSUPP | Errno::RANGE))
    })
}

/// getdents64(2) into `buf`: the bytes of `struct linux_dirent64` records
/// written, 0 at the end of the directory. rustix's `Dir` owns a buffer that
/// starts at 768 bytes and grows by as much per call; this reads with the
/// caller's (the metadata walk's 32 KiB, as glibc's readdir).
pub fn getdents(dir: BorrowedFd<'_>, buf: &mut [u8]) -> Result<usize, Errno> {
    // SAFETY: getdents64 writes at most buf.len() bytes into buf; a bad fd
    // is EBADF.
    let n = unsafe { libc::syscall(libc::SYS_getdents64, dir.as_raw_fd(), buf.as_mut_ptr(), buf.len()) };
    if n < 0 {
        Err(last_errno())
    } else {
        Ok(n as usize)
    }
}

/// A byte-range lock request for [`set_lock`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lock {
    Write,
    Unlock,
}

/// `fcntl(F_SETLK)` of bytes `start..start+len` (`len` 0: to the end of
/// the file): a POSIX record lock, non-blocking (EAGAIN/EACCES when held).
pub fn set_lock(fd: BorrowedFd<'_>, lock: Lock, start: u64, len: u64) -> Result<(), Errno> {
    // SAFETY: a zeroed flock is a valid value of the plain C struct.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = match lock {
        Lock::Write => libc::F_WRLCK,
        Lock::Unlock => libc::F_UNLCK,
    } as i16;
    fl.l_whence = libc::SEEK_SET as i16;
    fl.l_start = start.min(i64::MAX as u64) as i64;
    fl.l_len = len.min(i64::MAX as u64) as i64;
    // SAFETY: a live fd and a flock that outlives the call.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETLK, &fl) } != 0 {
        return Err(last_errno());
    }
    Ok(())
}

/// setsockopt(TCP_MAXSEG): fio's net engine's `mss` (rustix has no setter).
pub fn set_tcp_maxseg(fd: BorrowedFd<'_>, mss: u32) -> Result<(), Errno> {
    let v = mss as libc::c_int;
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: a live fd, and an int option read from a live int of its size
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_MAXSEG,
            (&v as *const libc::c_int).cast(),
            len,
        )
    };
    if r != 0 {
        return Err(last_errno());
    }
    Ok(())
}

/// Closes `fd` and says whether close(2) failed (dropping an `OwnedFd`
/// ignores that: an NFS write error can surface only here).
pub fn close(fd: OwnedFd) -> Result<(), Errno> {
    // SAFETY: `fd` is owned and consumed here, so it is closed exactly once
    // and used by no one afterwards, whatever close returns.
    unsafe { rustix::io::try_close(fd.into_raw_fd()) }
}

/// The local time of `secs` since the epoch as ctime(3) writes it, without
/// its newline ("Sat Dec  5 08:06:53 2026"); None where localtime_r fails.
pub fn ctime(secs: i64) -> Option<String> {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let t = secs as libc::time_t;
    // SAFETY: an all-zero `tm` is a valid value of the plain C struct
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: localtime_r reads `t` and writes only the `tm` it is given
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        return None;
    }
    Some(format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        DAYS[tm.tm_wday.clamp(0, 6) as usize],
        MONTHS[tm.tm_mon.clamp(0, 11) as usize],
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        tm.tm_year + 1900
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fd::AsFd;

    #[test]
    fn byte_range_locks_and_a_checked_close() {
        let f = tempfile::tempfile().unwrap();
        set_lock(f.as_fd(), Lock::Write, 10, 20).unwrap();
        set_lock(f.as_fd(), Lock::Unlock, 10, 20).unwrap();
        let fd: OwnedFd = f.into();
        close(fd).unwrap();
    }

    #[test]
    fn getdents_reads_the_entries() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("entry"), b"").unwrap();
        let d = rustix::fs::open(t.path(), tree::DIR_OPEN, rustix::fs::Mode::empty()).unwrap();
        let mut buf = vec![0u8; 4096];
        let n = getdents(d.as_fd(), &mut buf).unwrap();
        assert!(n > 0 && buf[..n].windows(6).any(|w| w == b"entry\0"));
        assert_eq!(getdents(d.as_fd(), &mut buf), Ok(0), "the end");
    }

    /// getxattrat where the kernel has it: a missing attribute is ENODATA
    /// (or the filesystem has none), the same answer as by path.
    #[test]
    fn getxattrat_agrees_with_getxattr() {
        if !getxattrat_works() {
            eprintln!("skipped: no getxattrat(2) on this kernel");
            return;
        }
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("f"), b"").unwrap();
        let d = rustix::fs::open(t.path(), tree::DIR_OPEN, rustix::fs::Mode::empty()).unwrap();
        let mut b = [0u8; 8];
        let at = getxattrat(d.as_fd(), c"f", AtFlags::SYMLINK_NOFOLLOW, c"user.none", &mut b);
        let by_path = rustix::fs::getxattr(t.path().join("f"), c"user.none", &mut b);
        assert_eq!(at, by_path);
    }
}
