//! The probed operations: one small, complete filesystem operation each, as
//! the seed thread's hand-written C probe did, executed by the engine like
//! every other operation; and the probe's `stream-write` background load.

use super::{AlignedBuf, Step, Workload};
use crate::engine::{exec, Engine, Op, NO_BUF_INDEX};
use crate::plan::ProbeOp;
use crate::stats::OpKind;
use std::ffi::CStr;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

const NAME: &CStr = c"probe";
const STAT_TARGET: &CStr = c"stat-target";

/// What a probe counts as.
pub fn kind(op: ProbeOp) -> OpKind {
    match op {
        ProbeOp::Create => OpKind::Create,
        ProbeOp::Stat => OpKind::Stat,
        ProbeOp::Mkdir => OpKind::NbMkdir,
        ProbeOp::AppendFsync => OpKind::Fsync,
        ProbeOp::Read => OpKind::Read,
    }
}

/// Performs probes of one kind in a work directory; each `step` is one
/// probe (several syscalls for create and mkdir), its result 0 or -errno.
pub struct ProbeWorkload {
    op: ProbeOp,
    dir: OwnedFd,
    /// append-fsync's file, or read's O_DIRECT file.
    file: Option<OwnedFd>,
    file_blocks: u64,
    buf: AlignedBuf,
    /// Room for one `struct statx` (the stat probe's result, unread).
    statx: AlignedBuf,
    rng: fastrand::Rng,
}

impl ProbeWorkload {
    /// `dir` is fslab's work directory; `file` the prepared file for
    /// append-fsync (opened O_APPEND) or read (opened O_DIRECT, `file_size` bytes).
    pub fn new(op: ProbeOp, dir: OwnedFd, file: Option<OwnedFd>, file_size: u64, seed: u64) -> Self {
        let mut buf = AlignedBuf::new(4096, 4096);
        fastrand::Rng::with_seed(seed).fill(buf.as_mut_slice());
        ProbeWorkload {
            op,
            dir,
            file,
            file_blocks: (file_size / 4096).max(1),
            buf,
            statx: AlignedBuf::new(std::mem::size_of::<libc::statx>(), 8),
            rng: fastrand::Rng::with_seed(seed),
        }
    }

    fn file_fd(&self) -> RawFd {
        self.file.as_ref().map_or(-1, |f| f.as_raw_fd())
    }

    /// One probe: 0, or the negated errno of the call that failed.
    fn probe(&mut self, e: &mut dyn Engine) -> i64 {
        let dirfd = self.dir.as_raw_fd();
        let ok = |r: i64| if r < 0 { Err(r) } else { Ok(r) };
        let r = match self.op {
            ProbeOp::Create => (|| {
                let open = Op::OpenAt {
                    dirfd,
                    path: NAME.as_ptr(),
                    flags: libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC | libc::O_WRONLY | libc::O_CLOEXEC,
                    mode: 0o644,
                };
                let fd = ok(complete(e, &open))?;
                ok(complete(e, &Op::Close { fd: fd as RawFd }))?;
                let unlink = Op::UnlinkAt {
                    dirfd,
                    path: NAME.as_ptr(),
                    flags: 0,
                };
                ok(complete(e, &unlink))
            })(),
            ProbeOp::Stat => {
                let stat = Op::Statx {
                    dirfd,
                    path: STAT_TARGET.as_ptr(),
                    buf: self.statx.as_ptr() as *mut libc::statx,
                };
                ok(complete(e, &stat))
            }
            ProbeOp::Mkdir => (|| {
                let mkdir = Op::MkdirAt {
                    dirfd,
                    path: NAME.as_ptr(),
                    mode: 0o755,
                };
                ok(complete(e, &mkdir))?;
                let rmdir = Op::UnlinkAt {
                    dirfd,
                    path: NAME.as_ptr(),
                    flags: libc::AT_REMOVEDIR,
                };
                ok(complete(e, &rmdir))
            })(),
            ProbeOp::AppendFsync => (|| {
                let fd = self.file_fd();
                let write = Op::Write {
                    fd,
                    // O_APPEND: the offset is ignored
                    offset: 0,
                    buf: self.buf.as_ptr(),
                    len: 4096,
                    buf_index: NO_BUF_INDEX,
                };
                // a short append is a failure, as in the C probe
                if ok(complete(e, &write))? != 4096 {
                    return Err(-(libc::EIO as i64));
                }
                ok(complete(e, &Op::Fdatasync { fd }))
            })(),
            ProbeOp::Read => {
                let off = self.rng.u64(0..self.file_blocks) * 4096;
                let read = Op::Read {
                    fd: self.file_fd(),
                    offset: off,
                    buf: self.buf.as_ptr(),
                    len: 4096,
                    buf_index: NO_BUF_INDEX,
                };
                ok(complete(e, &read))
            }
        };
        r.map_or_else(|e| e, |_| 0)
    }
}

impl Workload for ProbeWorkload {
    fn next_op(&mut self, _slot: usize) -> Option<super::NextOp> {
        None
    }

    #[inline]
    fn step(&mut self, engine: &mut dyn Engine) -> Option<Step> {
        let result = self.probe(engine);
        Some(Step::new(kind(self.op), result))
    }

    fn queues(&self) -> bool {
        false
    }
}

/// The `stream-write` load of one thread: a `dd` of its share of SIZE into
/// its own file in `bs` blocks, then an fsync when asked; or, time-based, a
/// `dd` that goes on until the runner stops it at its phase's end, starting
/// over at offset 0 whenever its file holds its share of the cap.
pub struct StreamWrite {
    file: OwnedFd,
    path: String,
    buf: AlignedBuf,
    bs: u64,
    /// Where its share ends (whole blocks).
    end: u64,
    off: u64,
    fsync_end: bool,
    synced: bool,
    /// Wraps at `end` instead of stopping.
    time_based: bool,
    error: Option<String>,
}

impl StreamWrite {
    /// Opens (creates, truncates) `path`; thread `i` writes `per` bytes
    /// (time-based: its file holds at most `per` bytes, and at least one block).
    pub fn open(
        path: &std::path::Path,
        i: u32,
        per: u64,
        bs: u64,
        direct: bool,
        fsync_end: bool,
        time_based: bool,
    ) -> Result<Self, String> {
        use std::os::unix::fs::OpenOptionsExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(if direct { libc::O_DIRECT } else { 0 })
            .open(path)
            .map_err(|e| format!("load: opening {}: {e}", path.display()))?;
        let mut buf = AlignedBuf::new(bs as usize, 4096);
        fastrand::Rng::with_seed(i as u64).fill(buf.as_mut_slice());
        Ok(StreamWrite {
            file: f.into(),
            path: path.display().to_string(),
            buf,
            bs,
            end: if time_based {
                (per / bs).max(1) * bs
            } else {
                per / bs * bs
            },
            off: 0,
            fsync_end,
            synced: false,
            time_based,
            error: None,
        })
    }

    fn failed(&mut self, what: &str, r: i64) -> Option<Step> {
        let e = std::io::Error::from_raw_os_error(-r as i32);
        self.error = Some(format!("load: {what} {}: {e}", self.path));
        None
    }
}

impl Workload for StreamWrite {
    fn next_op(&mut self, _slot: usize) -> Option<super::NextOp> {
        None
    }

    fn step(&mut self, engine: &mut dyn Engine) -> Option<Step> {
        let fd = self.file.as_raw_fd();
        if self.time_based && self.off >= self.end {
            // full: over again, as fio's time_based loops over its file
            self.off = 0;
        }
        if self.off < self.end {
            let write = Op::Write {
                fd,
                offset: self.off,
                buf: self.buf.as_ptr(),
                len: (self.end - self.off).min(self.bs) as usize,
                buf_index: NO_BUF_INDEX,
            };
            let r = complete(engine, &write);
            if r < 0 {
                return self.failed("writing", r);
            }
            self.off += r as u64;
            return Some(Step::new(OpKind::Write, r));
        }
        if self.fsync_end && !self.synced {
            self.synced = true;
            let r = complete(engine, &Op::Fsync { fd });
            if r < 0 {
                return self.failed("fsync", r);
            }
            return Some(Step::new(OpKind::Fsync, r));
        }
        None
    }

    fn queues(&self) -> bool {
        false
    }

    fn error(&self) -> Option<String> {
        self.error.clone()
    }
}

/// Groups of a run that mix workloads (the probe and its load) hold them boxed.
impl Workload for Box<dyn Workload> {
    fn next_op(&mut self, slot: usize) -> Option<super::NextOp> {
        (**self).next_op(slot)
    }
    fn on_complete(&mut self, op: &super::NextOp, result: i64) -> i64 {
        (**self).on_complete(op, result)
    }
    fn notes(&mut self) -> Vec<String> {
        (**self).notes()
    }
    #[inline]
    fn step(&mut self, engine: &mut dyn Engine) -> Option<Step> {
        (**self).step(engine)
    }
    fn queues(&self) -> bool {
        (**self).queues()
    }
    fn next_dir(&mut self) -> Option<OpKind> {
        (**self).next_dir()
    }
    fn set_next_dir(&mut self, dir: OpKind) {
        (**self).set_next_dir(dir)
    }
    fn next_due(&mut self) -> Option<crate::stats::Instant> {
        (**self).next_due()
    }
    fn items_done(&self) -> u64 {
        (**self).items_done()
    }
    fn error(&self) -> Option<String> {
        (**self).error()
    }
    fn dropped(&self) -> Option<(OpKind, u64)> {
        (**self).dropped()
    }
    fn files(&self) -> Vec<RawFd> {
        (**self).files()
    }
    fn buffers(&self) -> Vec<(*mut u8, usize)> {
        (**self).buffers()
    }
}

/// Runs one of the prober's operations to completion.
fn complete(e: &mut dyn Engine, op: &Op) -> i64 {
    // SAFETY: every op the prober and the stream writer build points at their own buffers (`buf`,
    // `statx`), its open fds or static NUL-terminated names, all of which
    // outlive this call, and `exec` returns only once the op has completed.
    unsafe { exec(e, op) }
}
