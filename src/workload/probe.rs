//! The probed operations: one small, complete filesystem operation each, as
//! the seed thread's hand-written C probe did.

use crate::plan::ProbeOp;
use crate::workload::AlignedBuf;
use std::ffi::CStr;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// Performs probes of one kind in a work directory.
pub struct Prober {
    op: ProbeOp,
    dir: OwnedFd,
    /// append-fsync's file, or read's O_DIRECT file.
    file: Option<OwnedFd>,
    file_blocks: u64,
    buf: AlignedBuf,
    rng: fastrand::Rng,
}

fn check(r: libc::c_int) -> Result<(), i32> {
    if r < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO))
    } else {
        Ok(())
    }
}

const NAME: &CStr = c"probe";

impl Prober {
    /// `dir` is fslab's work directory; `file` the prepared file for
    /// append-fsync (opened O_APPEND) or read (opened O_DIRECT, `file_size` bytes).
    pub fn new(op: ProbeOp, dir: OwnedFd, file: Option<OwnedFd>, file_size: u64, seed: u64) -> Self {
        let mut buf = AlignedBuf::new(4096, 4096);
        fastrand::Rng::with_seed(seed).fill(buf.as_mut_slice());
        Prober {
            op,
            dir,
            file,
            file_blocks: (file_size / 4096).max(1),
            buf,
            rng: fastrand::Rng::with_seed(seed),
        }
    }

    fn dirfd(&self) -> RawFd {
        self.dir.as_raw_fd()
    }

    /// One probe; Err(errno) when it failed.
    pub fn probe(&mut self) -> Result<(), i32> {
        let d = self.dirfd();
        // SAFETY: valid fds, NUL-terminated names, a buffer of 4096 bytes.
        unsafe {
            match self.op {
                ProbeOp::Create => {
                    let fd = libc::openat(
                        d,
                        NAME.as_ptr(),
                        libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC | libc::O_WRONLY | libc::O_CLOEXEC,
                        0o644,
                    );
                    check(fd)?;
                    check(libc::close(fd))?;
                    check(libc::unlinkat(d, NAME.as_ptr(), 0))
                }
                ProbeOp::Stat => {
                    let mut st: libc::stat = std::mem::zeroed();
                    check(libc::fstatat(d, c"stat-target".as_ptr(), &mut st, 0))
                }
                ProbeOp::Mkdir => {
                    check(libc::mkdirat(d, NAME.as_ptr(), 0o755))?;
                    check(libc::unlinkat(d, NAME.as_ptr(), libc::AT_REMOVEDIR))
                }
                ProbeOp::AppendFsync => {
                    let fd = self.file.as_ref().map_or(-1, |f| f.as_raw_fd());
                    let n = libc::write(fd, self.buf.as_ptr() as *const libc::c_void, 4096);
                    if n != 4096 {
                        return Err(if n < 0 {
                            std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
                        } else {
                            libc::EIO
                        });
                    }
                    check(libc::fdatasync(fd))
                }
                ProbeOp::Read => {
                    let fd = self.file.as_ref().map_or(-1, |f| f.as_raw_fd());
                    let off = self.rng.u64(0..self.file_blocks) * 4096;
                    let n = libc::pread(fd, self.buf.as_ptr() as *mut libc::c_void, 4096, off as libc::off_t);
                    if n < 0 {
                        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO));
                    }
                    Ok(())
                }
            }
        }
    }
}
