//! Engines execute operations; they never measure them.
//!
//! Modelled on fio's engine ops table: the worker timestamps an operation at
//! submit and at completion and matches completions by token, so an engine only
//! moves bytes. Sync engines (sync, mmap) complete inline (`Submit::Done`); a
//! queueing engine (io_uring, libaio, posixaio) returns `Queued` and hands
//! completions back from `reap`. ftruncate is fio's engine of that name: a
//! write truncates its file to the write's offset.

mod ftruncate;
mod libaio;
mod mmap;
mod null;
mod posixaio;
mod sync;
pub mod uring;

pub use ftruncate::FtruncateEngine;
pub use libaio::LibaioEngine;
pub use mmap::MmapEngine;
pub use null::NullEngine;
pub use posixaio::PosixAioEngine;
pub use sync::{getxattrat_works, SyncEngine};
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
    /// The file offset of a read or write (fio's log_offset column), else 0.
    #[inline]
    pub fn offset(&self) -> u64 {
        match *self {
            Op::Read { offset, .. } | Op::Write { offset, .. } => offset,
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
        })
    }
}

#[cfg(test)]
mod conformance {
    //! The same checks against every engine: round trip, short reads at EOF,
    //! errno propagation, Busy handling, completions matched by token, and the
    //! metadata operations.
    use super::*;
    use std::ffi::CString;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    fn engines() -> Vec<Box<dyn Engine>> {
        let o = UringOpts {
            depth: 8,
            ..Default::default()
        };
        [
            EngineKind::Null,
            EngineKind::Sync,
            EngineKind::Uring,
            EngineKind::Libaio,
            EngineKind::Mmap,
            EngineKind::Posixaio,
        ]
        .iter()
        .map(|k| k.build(&o).expect("engine builds (io_uring enabled?)"))
        .collect()
    }

    /// Runs one operation to completion on any engine.
    ///
    /// # Safety
    /// As [`Engine::submit`] until this returns (it reaps the completion).
    unsafe fn run(e: &mut dyn Engine, op: Op, token: u64) -> i64 {
        // SAFETY: the caller's contract, and the completion is reaped below.
        match unsafe { e.submit(&op, token) } {
            Submit::Done(r) => r,
            Submit::Queued => {
                let mut out = Vec::new();
                e.reap(1, &mut out).unwrap();
                assert_eq!(out.len(), 1, "{}", e.name());
                assert_eq!(out[0].token, token, "{}: completion carries its token", e.name());
                out[0].result
            }
            Submit::Busy => panic!("{}: busy with nothing in flight", e.name()),
        }
    }

    fn read(fd: RawFd, offset: u64, buf: &mut [u8]) -> Op {
        Op::Read {
            fd,
            offset,
            buf: buf.as_mut_ptr(),
            len: buf.len(),
            buf_index: NO_BUF_INDEX,
        }
    }

    #[test]
    // one SAFETY comment for the many calls of one kind below
    #[allow(clippy::undocumented_unsafe_blocks)]
    fn round_trip_short_read_and_errno() {
        // SAFETY (each `run` below): the ops' buffers and paths are locals
        // that outlive the call, which reaps the op's completion before it
        // returns, and nothing else touches them meanwhile.
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[7u8; 8192]).unwrap();
        let fd = f.as_raw_fd();
        for mut e in engines() {
            let e = e.as_mut();
            let data = [9u8; 4096];
            let mut back = [0u8; 4096];
            let w = Op::Write {
                fd,
                offset: 4096,
                buf: data.as_ptr(),
                len: 4096,
                buf_index: NO_BUF_INDEX,
            };
            assert_eq!(unsafe { run(e, w, 1) }, 4096, "{}", e.name());
            assert_eq!(unsafe { run(e, read(fd, 4096, &mut back), 2) }, 4096, "{}", e.name());
            assert_eq!(unsafe { run(e, Op::Fsync { fd }, 3) }, 0, "{}", e.name());
            assert_eq!(unsafe { run(e, Op::Fdatasync { fd }, 4) }, 0, "{}", e.name());
            if e.caps().real_io {
                assert_eq!(back, data, "{}", e.name());
                assert_eq!(
                    unsafe { run(e, read(fd, 6144, &mut back), 5) },
                    2048,
                    "{}: short read at EOF",
                    e.name()
                );
                assert_eq!(
                    unsafe { run(e, read(fd, 8192, &mut back), 6) },
                    0,
                    "{}: read at EOF",
                    e.name()
                );
                let bad = read(999_999, 0, &mut back);
                assert_eq!(
                    unsafe { run(e, bad, 7) },
                    -(libc::EBADF as i64),
                    "{}: errno propagates",
                    e.name()
                );
            }
        }
    }

    #[test]
    fn busy_when_full_and_completions_matched_by_token() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&(0..32768u32).map(|i| (i / 512) as u8).collect::<Vec<_>>())
            .unwrap();
        let fd = f.as_raw_fd();
        for mut e in engines() {
            let e = e.as_mut();
            let mut bufs = vec![[0u8; 512]; 64];
            let mut results = std::collections::HashMap::new();
            let mut queued = 0;
            let mut saw_busy = false;
            for (i, b) in bufs.iter_mut().enumerate() {
                // token i reads block i: its first byte tells the block
                let op = read(fd, i as u64 * 512, b);
                loop {
                    // SAFETY: `bufs` outlives every op, each op its own
                    // buffer, and all are reaped before `bufs` is read.
                    match unsafe { e.submit(&op, 1000 + i as u64) } {
                        Submit::Done(r) => {
                            results.insert(1000 + i as u64, r);
                            break;
                        }
                        Submit::Queued => {
                            queued += 1;
                            break;
                        }
                        Submit::Busy => {
                            saw_busy = true;
                            assert!(queued >= 8, "{}: busy only when full", e.name());
                            let mut out = Vec::new();
                            e.reap(queued, &mut out).unwrap();
                            queued -= out.len();
                            results.extend(out.iter().map(|c| (c.token, c.result)));
                        }
                    }
                }
            }
            let mut out = Vec::new();
            if queued > 0 {
                e.reap(queued, &mut out).unwrap();
            }
            results.extend(out.iter().map(|c| (c.token, c.result)));
            assert_eq!(results.len(), 64, "{}: every token completes once", e.name());
            assert!(results.values().all(|&r| r == 512), "{}", e.name());
            assert_eq!(saw_busy, !e.caps().inline, "{}: a full ring says Busy", e.name());
            if e.caps().real_io {
                for (i, b) in bufs.iter().enumerate() {
                    assert_eq!(b[0] as usize, i, "{}: token {} got its own data", e.name(), 1000 + i);
                }
            }
        }
    }

    #[test]
    // one SAFETY comment for the many calls of one kind below
    #[allow(clippy::undocumented_unsafe_blocks)]
    fn metadata_operations() {
        // SAFETY (each `run` below): the ops' buffers and paths are locals
        // that outlive the call, which reaps the op's completion before it
        // returns, and nothing else touches them meanwhile.
        let dir = tempfile::tempdir().unwrap();
        let d = std::fs::File::open(dir.path()).unwrap();
        let dfd = d.as_raw_fd();
        let name = CString::new("f").unwrap();
        for mut e in engines() {
            let e = e.as_mut();
            if !e.caps().real_io {
                continue;
            }
            let open = Op::OpenAt {
                dirfd: dfd,
                path: name.as_ptr(),
                flags: libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY,
                mode: 0o644,
            };
            let fd = unsafe { run(e, open, 1) };
            assert!(fd >= 0, "{}: openat {fd}", e.name());
            assert_eq!(
                unsafe { run(e, open, 2) },
                -(libc::EEXIST as i64),
                "{}: O_EXCL",
                e.name()
            );
            let mut st: libc::statx = unsafe { std::mem::zeroed() };
            let stat = Op::Statx {
                dirfd: dfd,
                path: name.as_ptr(),
                buf: &mut st,
            };
            assert_eq!(unsafe { run(e, stat, 3) }, 0, "{}", e.name());
            assert_eq!(st.stx_mode as u32 & libc::S_IFMT, libc::S_IFREG, "{}", e.name());
            assert_eq!(unsafe { run(e, Op::Close { fd: fd as RawFd }, 4) }, 0, "{}", e.name());
            let unlink = Op::UnlinkAt {
                dirfd: dfd,
                path: name.as_ptr(),
                flags: 0,
            };
            assert_eq!(unsafe { run(e, unlink, 5) }, 0, "{}", e.name());
            assert_eq!(unsafe { run(e, unlink, 6) }, -(libc::ENOENT as i64), "{}", e.name());
            assert_eq!(unsafe { run(e, stat, 7) }, -(libc::ENOENT as i64), "{}", e.name());
            let mkdir = Op::MkdirAt {
                dirfd: dfd,
                path: name.as_ptr(),
                mode: 0o755,
            };
            assert_eq!(unsafe { run(e, mkdir, 8) }, 0, "{}", e.name());
            assert_eq!(unsafe { run(e, mkdir, 9) }, -(libc::EEXIST as i64), "{}", e.name());
            let rmdir = Op::UnlinkAt {
                dirfd: dfd,
                path: name.as_ptr(),
                flags: libc::AT_REMOVEDIR,
            };
            assert_eq!(unsafe { run(e, rmdir, 10) }, 0, "{}", e.name());
        }
    }

    #[test]
    // one SAFETY comment for the many calls of one kind below
    #[allow(clippy::undocumented_unsafe_blocks)]
    fn ftruncate_truncates_on_write_and_refuses_the_rest() {
        // SAFETY (each `run` below): the ops' buffers are locals that
        // outlive the call, which completes inline.
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[7u8; 8192]).unwrap();
        let fd = f.as_raw_fd();
        let mut e = EngineKind::Ftruncate.build(&UringOpts::default()).unwrap();
        let e = e.as_mut();
        let data = [9u8; 4096];
        let w = |offset| Op::Write {
            fd,
            offset,
            buf: data.as_ptr(),
            len: 4096,
            buf_index: NO_BUF_INDEX,
        };
        // counted as the write's bytes; the file's size is the offset
        assert_eq!(unsafe { run(e, w(12288), 1) }, 4096);
        assert_eq!(f.metadata().unwrap().len(), 12288);
        assert_eq!(unsafe { run(e, w(0), 2) }, 4096);
        assert_eq!(f.metadata().unwrap().len(), 0);
        let mut back = [0u8; 16];
        let einval = -(libc::EINVAL as i64);
        assert_eq!(
            unsafe { run(e, read(fd, 0, &mut back), 3) },
            einval,
            "fio: reads are EINVAL"
        );
        assert_eq!(unsafe { run(e, Op::Fsync { fd }, 4) }, einval, "fio: no sync either");
        let bad = Op::Write {
            fd: 999_999,
            offset: 0,
            buf: data.as_ptr(),
            len: 4096,
            buf_index: NO_BUF_INDEX,
        };
        assert_eq!(unsafe { run(e, bad, 5) }, -(libc::EBADF as i64));
    }

    #[test]
    fn uring_registered_files_and_buffers() {
        // SAFETY (each `run` below): the ops' buffers and paths are locals
        // that outlive the call, which reaps the op's completion before it
        // returns, and nothing else touches them meanwhile.
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[5u8; 8192]).unwrap();
        let fd = f.as_raw_fd();
        let o = UringOpts {
            depth: 4,
            fixed_files: true,
            fixed_bufs: true,
            ..Default::default()
        };
        let mut e = EngineKind::Uring.build(&o).unwrap();
        let mut buf = crate::workload::AlignedBuf::new(4096, 4096);
        // SAFETY: `buf` stays valid until `e` is dropped (explicitly, below)
        // and is read only after the op's completion.
        unsafe { e.register(&[fd], &[(buf.as_ptr(), 4096)]) }.unwrap();
        let op = Op::Read {
            fd,
            offset: 0,
            buf: buf.as_ptr(),
            len: 4096,
            buf_index: 0,
        };
        // SAFETY: `buf` is registered and outlives the op, reaped before `run` returns
        assert_eq!(unsafe { run(e.as_mut(), op, 9) }, 4096);
        assert!(buf.as_mut_slice().iter().all(|&b| b == 5));
        drop(e);
        drop(buf);
    }
}
