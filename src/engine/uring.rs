//! The io_uring engine: operations are queued as SQEs, submitted in batches
//! with one `io_uring_enter`, and handed back from the completion queue by
//! token. Optional registered files and buffers, SQPOLL and IOPOLL (hipri).
//!
//! The kernel is probed once, before any worker starts (`probe_uring`): a
//! disabled io_uring or a missing opcode is one clear error, never a silent
//! fall back to another engine.

use super::{Caps, Completion, Engine, Op, Submit, NO_BUF_INDEX};
use io_uring::{opcode, squeue, types, IoUring, Probe};
use serde::Serialize;
use std::io;
use std::os::fd::RawFd;

/// How each worker's ring is set up.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct UringOpts {
    /// Ring size (and the most operations in flight).
    pub depth: u32,
    /// SQPOLL with this idle time in ms before the kernel thread sleeps.
    pub sqpoll_idle_ms: Option<u32>,
    /// IOPOLL: busy-poll completions (O_DIRECT on a device with poll queues).
    pub hipri: bool,
    pub fixed_files: bool,
    pub fixed_bufs: bool,
}

/// Why io_uring can't be used, in words that say what to change.
fn setup_error(e: io::Error) -> io::Error {
    let sysctl = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .ok()
        .map(|s| s.trim().to_string());
    let why = match (e.raw_os_error(), sysctl.as_deref()) {
        (Some(libc::EPERM), Some(v)) if v != "0" => {
            format!("io_uring is disabled by sysctl kernel.io_uring_disabled={v}")
        }
        (Some(libc::EPERM), _) => "io_uring_setup was refused (EPERM): a seccomp filter (container runtime?) or \
             security policy blocks io_uring"
            .to_string(),
        (Some(libc::ENOSYS), _) => "io_uring_setup is not available (ENOSYS): the kernel lacks io_uring or a seccomp \
             filter hides it"
            .to_string(),
        _ => format!("io_uring_setup failed: {e}"),
    };
    io::Error::new(e.kind(), format!("{why}; use --engine sync"))
}

fn build_ring(o: &UringOpts) -> io::Result<IoUring> {
    let mut b = IoUring::builder();
    if let Some(idle) = o.sqpoll_idle_ms {
        b.setup_sqpoll(idle);
    } else {
        // One thread submits and reaps: let the kernel skip cross-thread work.
        b.setup_single_issuer();
        b.setup_coop_taskrun();
    }
    if o.hipri {
        b.setup_iopoll();
    }
    b.build(o.depth.max(1).next_power_of_two()).map_err(setup_error)
}

/// Checks, once, that io_uring works here with these options and supports
/// every opcode in `needed` (names for the error). Returns a one-line reason otherwise.
pub fn probe_uring(o: &UringOpts, needed: &[(u8, &str)]) -> Result<(), String> {
    let ring = build_ring(o).map_err(|e| e.to_string())?;
    let mut p = Probe::new();
    ring.submitter()
        .register_probe(&mut p)
        .map_err(|e| format!("io_uring opcode probe failed: {e}"))?;
    let missing: Vec<&str> = needed
        .iter()
        .filter(|(code, _)| !p.is_supported(*code))
        .map(|(_, n)| *n)
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "this kernel's io_uring lacks the opcode(s) {}; use --engine sync",
            missing.join(", ")
        ));
    }
    Ok(())
}

/// The opcodes an io workload needs with these options.
pub fn io_opcodes(o: &UringOpts) -> Vec<(u8, &'static str)> {
    let mut v = vec![(opcode::Fsync::CODE, "FSYNC")];
    if o.fixed_bufs {
        v.push((opcode::ReadFixed::CODE, "READ_FIXED"));
        v.push((opcode::WriteFixed::CODE, "WRITE_FIXED"));
    } else {
        v.push((opcode::Read::CODE, "READ"));
        v.push((opcode::Write::CODE, "WRITE"));
    }
    v
}

/// The opcodes metadata workloads need.
pub fn meta_opcodes() -> Vec<(u8, &'static str)> {
    vec![
        (opcode::OpenAt::CODE, "OPENAT"),
        (opcode::Close::CODE, "CLOSE"),
        (opcode::Statx::CODE, "STATX"),
        (opcode::UnlinkAt::CODE, "UNLINKAT"),
        (opcode::RenameAt::CODE, "RENAMEAT"),
        (opcode::FSetXattr::CODE, "FSETXATTR"),
        (opcode::GetXattr::CODE, "GETXATTR"),
        (opcode::Write::CODE, "WRITE"),
        (opcode::Read::CODE, "READ"),
        (opcode::Fsync::CODE, "FSYNC"),
    ]
}

pub struct UringEngine {
    ring: IoUring,
    depth: usize,
    /// Registered fds, in registration order (index = fixed file slot).
    fixed_fds: Vec<RawFd>,
    fixed_bufs: bool,
    want_fixed_files: bool,
    /// The next reads' and writes' sqe ioprio (`Engine::set_prio`).
    prio: u16,
}

impl UringEngine {
    pub fn new(o: &UringOpts) -> io::Result<Self> {
        let ring = build_ring(o)?;
        Ok(UringEngine {
            depth: ring.params().sq_entries() as usize,
            ring,
            fixed_fds: Vec::new(),
            fixed_bufs: o.fixed_bufs,
            want_fixed_files: o.fixed_files,
            prio: 0,
        })
    }

    #[inline]
    fn sqe_rw(&self, fd: RawFd, read: bool, offset: u64, buf: *mut u8, len: usize, bi: u16) -> squeue::Entry {
        macro_rules! with_fd {
            ($t:expr) => {
                match (read, self.fixed_bufs && bi != NO_BUF_INDEX) {
                    (true, true) => opcode::ReadFixed::new($t, buf, len as u32, bi)
                        .offset(offset)
                        .ioprio(self.prio)
                        .build(),
                    (true, false) => opcode::Read::new($t, buf, len as u32)
                        .offset(offset)
                        .ioprio(self.prio)
                        .build(),
                    (false, true) => opcode::WriteFixed::new($t, buf, len as u32, bi)
                        .offset(offset)
                        .ioprio(self.prio)
                        .build(),
                    (false, false) => opcode::Write::new($t, buf, len as u32)
                        .offset(offset)
                        .ioprio(self.prio)
                        .build(),
                }
            };
        }
        match self.fixed_index(fd) {
            Some(i) => with_fd!(types::Fixed(i)),
            None => with_fd!(types::Fd(fd)),
        }
    }

    #[inline]
    fn fixed_index(&self, fd: RawFd) -> Option<u32> {
        self.fixed_fds.iter().position(|&f| f == fd).map(|i| i as u32)
    }

    fn sqe(&self, op: &Op) -> squeue::Entry {
        match *op {
            Op::Read {
                fd,
                offset,
                buf,
                len,
                buf_index,
            } => self.sqe_rw(fd, true, offset, buf, len, buf_index),
            Op::Write {
                fd,
                offset,
                buf,
                len,
                buf_index,
            } => self.sqe_rw(fd, false, offset, buf as *mut u8, len, buf_index),
            Op::Trim { .. } => unreachable!("trims run inline (submit)"),
            Op::Fsync { fd } | Op::Fdatasync { fd } => {
                let flags = if matches!(op, Op::Fdatasync { .. }) {
                    types::FsyncFlags::DATASYNC
                } else {
                    types::FsyncFlags::empty()
                };
                match self.fixed_index(fd) {
                    Some(i) => opcode::Fsync::new(types::Fixed(i)).flags(flags).build(),
                    None => opcode::Fsync::new(types::Fd(fd)).flags(flags).build(),
                }
            }
            Op::OpenAt {
                dirfd,
                path,
                flags,
                mode,
            } => opcode::OpenAt::new(types::Fd(dirfd), path)
                .flags(flags | libc::O_CLOEXEC)
                .mode(mode)
                .build(),
            Op::Close { fd } => opcode::Close::new(types::Fd(fd)).build(),
            Op::Statx { dirfd, path, buf } => opcode::Statx::new(types::Fd(dirfd), path, buf as *mut types::statx)
                .mask(libc::STATX_BASIC_STATS)
                .build(),
            Op::UnlinkAt { dirfd, path, flags } => opcode::UnlinkAt::new(types::Fd(dirfd), path).flags(flags).build(),
            Op::MkdirAt { dirfd, path, mode } => opcode::MkDirAt::new(types::Fd(dirfd), path).mode(mode).build(),
            Op::RenameAt {
                olddirfd,
                oldpath,
                newdirfd,
                newpath,
            } => opcode::RenameAt::new(types::Fd(olddirfd), oldpath, types::Fd(newdirfd), newpath).build(),
            Op::FSetXattr { fd, name, value, len } => {
                opcode::FSetXattr::new(types::Fd(fd), name, value as *const libc::c_void, len as u32).build()
            }
            Op::GetXattr {
                dirfd,
                path,
                name,
                buf,
                len,
            } => {
                debug_assert_eq!(
                    dirfd,
                    libc::AT_FDCWD,
                    "no getxattrat on io_uring: caps().xattr_at is false"
                );
                opcode::GetXattr::new(name, buf as *mut libc::c_void, path, len as u32).build()
            }
        }
    }
}

impl Engine for UringEngine {
    fn name(&self) -> &'static str {
        "uring"
    }

    fn caps(&self) -> Caps {
        Caps {
            inline: false,
            real_io: true,
            max_depth: self.depth,
            xattr_at: false,
        }
    }

    fn set_prio(&mut self, prio: u16) {
        self.prio = prio;
    }

    /// # Safety
    /// As [`Engine::submit`]: the kernel uses `op`'s memory until its
    /// completion is reaped.
    #[inline]
    unsafe fn submit(&mut self, op: &Op, token: u64) -> Submit {
        if let Op::Trim { fd, offset, len } = *op {
            // fio's io_uring: a trim waits for what is queued to be
            // submitted, then runs inline (do_io_u_trim)
            if !self.ring.submission().is_empty() {
                return Submit::Busy;
            }
            return Submit::Done(super::discard(fd, offset, len));
        }
        let sqe = self.sqe(op).user_data(token);
        // SAFETY: Engine's contract keeps buffers, paths and fds valid until
        // the completion for `token` has been reaped.
        match unsafe { self.ring.submission().push(&sqe) } {
            Ok(()) => Submit::Queued,
            Err(_) => Submit::Busy,
        }
    }

    fn commit(&mut self) -> io::Result<()> {
        loop {
            match self.ring.submit() {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                // EBUSY: the CQ is full; the caller reaps, then commits again.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        let have = self.ring.completion().len();
        if have < min {
            loop {
                match self.ring.submit_and_wait(min - have) {
                    Ok(_) => break,
                    Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                    Err(e) if e.raw_os_error() == Some(libc::EBUSY) => break,
                    Err(e) => return Err(e),
                }
            }
        }
        out.extend(self.ring.completion().map(|c| Completion {
            token: c.user_data(),
            result: c.result() as i64,
        }));
        Ok(())
    }

    /// # Safety
    /// As [`Engine::register`]: the buffers outlive the ring.
    unsafe fn register(&mut self, fds: &[RawFd], bufs: &[(*mut u8, usize)]) -> io::Result<()> {
        if self.want_fixed_files && !fds.is_empty() {
            self.ring.submitter().register_files(fds)?;
            self.fixed_fds = fds.to_vec();
        }
        if self.fixed_bufs && !bufs.is_empty() {
            let iov: Vec<libc::iovec> = bufs
                .iter()
                .map(|&(p, l)| libc::iovec {
                    iov_base: p as *mut libc::c_void,
                    iov_len: l,
                })
                .collect();
            // SAFETY: the caller keeps these buffers valid until the engine,
            // and so the ring, is dropped (register's contract).
            unsafe { self.ring.submitter().register_buffers(&iov) }.map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "registering {} buffers for --fixed-bufs: {e} (RLIMIT_MEMLOCK?)",
                        iov.len()
                    ),
                )
            })?;
        }
        Ok(())
    }
}
