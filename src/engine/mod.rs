//! Engines execute operations; they never measure them.
//!
//! Modelled on fio's engine ops table: the worker timestamps an operation at
//! submit and at completion and matches completions by token, so an engine only
//! moves bytes. Sync engines (sync, mmap) complete inline (`Submit::Done`); a
//! queueing engine (io_uring, libaio, posixaio) returns `Queued` and hands
//! completions back from `reap`. ftruncate is fio's engine of that name: a
//! write truncates its file to the write's offset; falloc's reads, writes
//! and trims are fallocate(2) calls. A trim (`Op::Trim`) is a discard that
//! every engine runs inline, as fio's do (libaio and io_uring once their
//! queue is empty).

mod falloc;
mod ftruncate;
mod libaio;
mod mmap;
mod null;
mod posixaio;
mod sync;
pub mod uring;

pub use falloc::FallocEngine;
pub use ftruncate::FtruncateEngine;
pub use libaio::LibaioEngine;
pub use mmap::MmapEngine;
pub use null::NullEngine;
pub use posixaio::PosixAioEngine;
pub use sync::{discard, getxattrat_works, SyncEngine};
pub use uring::{probe_uring, UringEngine, UringOpts};

use serde::{Deserialize, Serialize};
use std::os::fd::RawFd;

/// Marks a buffer that is not in the engine's registered set.
pub const NO_BUF_INDEX: u16 = u16::MAX;

/// One operation. Buffers and paths are raw so queueing engines can hold them
/// across calls; whoever submits it guarantees they outlive the operation's
/// completion (the `# Safety` of [`Engine::submit`]). Paths and names are
/// NUL-terminated.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    /// `buf_index`: the buffer's index among those passed to `Engine::register`
    /// (engines with registered buffers use it), or `NO_BUF_INDEX`.
    Read {
        fd: RawFd,
        offset: u64,
        buf: *mut u8,
        len: usize,
        buf_index: u16,
    },
    Write {
        fd: RawFd,
        offset: u64,
        buf: *const u8,
        len: usize,
        buf_index: u16,
    },
    /// fio's trim: a discard of `len` bytes at `offset` (BLKDISCARD, which
    /// only a block device takes: a regular file's fd gets ENOTTY, as
    /// fio's os_trim does), run inline by every engine that takes it, as
    /// fio's do; the falloc engine punches a hole instead. The result is
    /// `len`.
    Trim {
        fd: RawFd,
        offset: u64,
        len: usize,
    },
    Fsync {
        fd: RawFd,
    },
    Fdatasync {
        fd: RawFd,
    },
    /// openat(2); the result is the new fd.
    OpenAt {
        dirfd: RawFd,
        path: *const libc::c_char,
        flags: i32,
        mode: u32,
    },
    Close {
        fd: RawFd,
    },
    /// statx(2) of `path` relative to `dirfd` (basic stats).
    Statx {
        dirfd: RawFd,
        path: *const libc::c_char,
        buf: *mut libc::statx,
    },
    /// unlinkat(2); `flags` may hold AT_REMOVEDIR.
    UnlinkAt {
        dirfd: RawFd,
        path: *const libc::c_char,
        flags: i32,
    },
    /// mkdirat(2).
    MkdirAt {
        dirfd: RawFd,
        path: *const libc::c_char,
        mode: u32,
    },
    /// renameat(2).
    RenameAt {
        olddirfd: RawFd,
        oldpath: *const libc::c_char,
        newdirfd: RawFd,
        newpath: *const libc::c_char,
    },
    /// fsetxattr(2) with flags 0 (create or replace).
    FSetXattr {
        fd: RawFd,
        name: *const libc::c_char,
        value: *const u8,
        len: usize,
    },
    /// getxattr(2) of a path relative to `dirfd` (getxattrat(2)); the
    /// result is the value's size. Engines without `Caps::xattr_at` take
    /// only `AT_FDCWD` (an absolute path).
    GetXattr {
        dirfd: RawFd,
        path: *const libc::c_char,
        name: *const libc::c_char,
        buf: *mut u8,
        len: usize,
    },
}

impl Op {
    /// The file offset of a read, write or trim (fio's log_offset column), else 0.
    #[inline]
    pub fn offset(&self) -> u64 {
        match *self {
            Op::Read { offset, .. } | Op::Write { offset, .. } | Op::Trim { offset, .. } => offset,
            _ => 0,
        }
    }
}

/// Runs one operation to completion on any engine (queueing engines at depth 1).
///
/// # Safety
/// As for [`Engine::submit`], until this call returns: `op`'s buffers and
/// paths valid and not otherwise accessed. Nothing else may be in flight on
/// `e` (the completion reaped is taken to be `op`'s). Should the engine fail
/// to reap (an error, not a completion), `op` may still be in flight: the
/// buffers must then stay valid until `e` is dropped, as a workload's own
/// buffers do (the worker drops its engine first).
#[inline]
pub unsafe fn exec(e: &mut dyn Engine, op: &Op) -> i64 {
    // SAFETY: the caller's contract is submit's, for the length of this call,
    // which reaps the completion before it returns.
    match unsafe { e.submit(op, 0) } {
        Submit::Done(r) => r,
        _ => exec_pending(e),
    }
}

/// Waits for the single operation just queued on `e`.
#[cold]
pub fn exec_pending(e: &mut dyn Engine) -> i64 {
    let mut out = Vec::with_capacity(1);
    match e.reap(1, &mut out) {
        Ok(()) => out.first().map_or(-(libc::EIO as i64), |c| c.result),
        Err(err) => -(err.raw_os_error().unwrap_or(libc::EIO) as i64),
    }
}

/// Outcome of `submit`. Results follow io_uring's convention: `>= 0` is the
/// byte count (0 for fsync), `< 0` is a negated errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Submit {
    Done(i64),
    Queued,
    Busy,
}

/// A completion handed back by `reap`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub token: u64,
    pub result: i64,
}

/// What an engine can do; validation rejects workloads that need more.
#[derive(Clone, Copy, Debug, Default)]
pub struct Caps {
    /// Completes every operation inside `submit`.
    pub inline: bool,
    /// Touches real files (the null engine does not).
    pub real_io: bool,
    /// Operations it can keep in flight at once.
    pub max_depth: usize,
    /// Resolves `GetXattr` paths against a directory fd.
    pub xattr_at: bool,
}

/// The engine table: every engine implements these.
pub trait Engine {
    fn name(&self) -> &'static str;
    fn caps(&self) -> Caps;

    /// Starts `op`. Sync engines perform it and return `Done`; queueing
    /// engines return `Queued` (its completion, carrying `token`, comes from
    /// `reap`) or `Busy` (not started: submit it again after a reap).
    ///
    /// # Safety
    /// As io-uring's `SubmissionQueue::push`: every pointer in `op` (data
    /// buffer, path, xattr name and value, statx buffer) must be valid for
    /// its length, paths and names NUL-terminated, and the memory must not be
    /// accessed otherwise (the kernel writes a read's buffer, and may read a
    /// write's at any time) from this call until `op`'s completion has been
    /// handed back: by this call (`Done`), or by `reap` (`Queued`), or, if
    /// `reap` fails, until the engine is dropped. A `buf_index` other than
    /// [`NO_BUF_INDEX`] names the registered buffer (see
    /// [`Engine::register`]) that holds `buf..buf+len`. Fds need not be
    /// valid (a bad one is EBADF), but `Close` only of an fd the caller owns.
    unsafe fn submit(&mut self, op: &Op, token: u64) -> Submit;

    /// The priority (ioprio value; 0: the thread's own) of the reads and
    /// writes submitted next: fio's cmdprio, which only the libaio and
    /// io_uring engines carry per I/O.
    fn set_prio(&mut self, _prio: u16) {}

    /// Pushes queued operations to the kernel.
    fn commit(&mut self) -> std::io::Result<()> {
        Ok(())
    }

    /// Collects at least `min` completions into `out` (submitting what is queued).
    fn reap(&mut self, _min: usize, _out: &mut Vec<Completion>) -> std::io::Result<()> {
        Ok(())
    }

    /// Registers the files and buffers the worker will use, for engines that
    /// can pre-register them (io_uring's fixed files and buffers).
    ///
    /// # Safety
    /// As io-uring's `Submitter::register_buffers`: each `(ptr, len)` of
    /// `bufs` must be valid for `len` bytes until the engine is dropped (the
    /// kernel pins and may use it for any op naming its index), and be
    /// accessed otherwise only while no op using it is in flight. The `fds`
    /// must stay open while ops use them.
    unsafe fn register(&mut self, _fds: &[RawFd], _bufs: &[(*mut u8, usize)]) -> std::io::Result<()> {
        Ok(())
    }

    /// The job's access pattern, for engines that advise the kernel
    /// themselves (mmap: fio's fadvise_hint as posix_madvise): random
    /// (Some(true)), sequential (Some(false)) or no advice.
    fn advise(&mut self, _random: Option<bool>) {}
}

/// Engine names accepted by `--engine`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Null,
    Sync,
    Uring,
    Libaio,
    Mmap,
    Posixaio,
    Ftruncate,
    Falloc,
}

impl EngineKind {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "null" => Some(EngineKind::Null),
            "sync" | "psync" => Some(EngineKind::Sync),
            "uring" | "io_uring" => Some(EngineKind::Uring),
            "libaio" => Some(EngineKind::Libaio),
            "mmap" => Some(EngineKind::Mmap),
            "posixaio" => Some(EngineKind::Posixaio),
            "ftruncate" => Some(EngineKind::Ftruncate),
            "falloc" => Some(EngineKind::Falloc),
            _ => None,
        }
    }

    /// The name `--engine` takes and result files record.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Null => "null",
            EngineKind::Sync => "sync",
            EngineKind::Uring => "uring",
            EngineKind::Libaio => "libaio",
            EngineKind::Mmap => "mmap",
            EngineKind::Posixaio => "posixaio",
            EngineKind::Ftruncate => "ftruncate",
            EngineKind::Falloc => "falloc",
        }
    }

    /// Builds the engine for one worker.
    pub fn build(self, uring: &UringOpts) -> std::io::Result<Box<dyn Engine>> {
        Ok(match self {
            EngineKind::Null => Box::new(NullEngine),
            EngineKind::Sync => Box::new(SyncEngine),
            EngineKind::Uring => Box::new(UringEngine::new(uring)?),
            // the queue depth is the ring's
            EngineKind::Libaio => Box::new(LibaioEngine::new(uring.depth)?),
            EngineKind::Mmap => Box::new(MmapEngine::new()),
            EngineKind::Posixaio => Box::new(PosixAioEngine::new(uring.depth)),
            EngineKind::Ftruncate => Box::new(FtruncateEngine),
            EngineKind::Falloc => Box::new(FallocEngine),
        })
    }
}

#[cfg(test)]
mod conformance;
