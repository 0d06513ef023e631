//! Engines execute operations; they never measure them.
//!
//! Modelled on fio's engine ops table: the worker timestamps an operation at
//! submit and at completion and matches completions by token, so an engine only
//! moves bytes. Sync engines complete inline (`Submit::Done`); a queueing engine
//! (io_uring) returns `Queued` and hands completions back from `reap`.

mod null;
mod sync;

pub use null::NullEngine;
pub use sync::SyncEngine;

use serde::{Deserialize, Serialize};
use std::os::fd::RawFd;

/// One operation. Buffers are raw so queueing engines can hold them across
/// calls; the caller guarantees a buffer outlives the operation's completion.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    Read {
        fd: RawFd,
        offset: u64,
        buf: *mut u8,
        len: usize,
    },
    Write {
        fd: RawFd,
        offset: u64,
        buf: *const u8,
        len: usize,
    },
    Fsync {
        fd: RawFd,
    },
    Fdatasync {
        fd: RawFd,
    },
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
}

/// The engine table: every engine implements these.
pub trait Engine {
    fn name(&self) -> &'static str;
    fn caps(&self) -> Caps;

    /// Starts `op`. Sync engines perform it and return `Done`.
    ///
    /// # Safety contract
    /// The buffer in `op` must stay valid until the op completes.
    fn submit(&mut self, op: &Op, token: u64) -> Submit;

    /// Pushes queued operations to the kernel.
    fn commit(&mut self) -> std::io::Result<()> {
        Ok(())
    }

    /// Collects at least `min` completions into `out`.
    fn reap(&mut self, _min: usize, _out: &mut Vec<Completion>) -> std::io::Result<()> {
        Ok(())
    }
}

/// Engine names accepted by `--engine`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Null,
    Sync,
}

impl EngineKind {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "null" => Some(EngineKind::Null),
            "sync" | "psync" => Some(EngineKind::Sync),
            _ => None,
        }
    }

    pub fn build(self) -> Box<dyn Engine> {
        match self {
            EngineKind::Null => Box::new(NullEngine),
            EngineKind::Sync => Box::new(SyncEngine),
        }
    }
}

#[cfg(test)]
mod conformance {
    //! The same checks against every engine.
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    fn engines() -> Vec<Box<dyn Engine>> {
        vec![EngineKind::Null.build(), EngineKind::Sync.build()]
    }

    #[test]
    fn round_trip_and_errno() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[7u8; 8192]).unwrap();
        let fd = f.as_raw_fd();
        for mut e in engines() {
            let data = [9u8; 4096];
            let mut back = [0u8; 4096];
            let w = Op::Write {
                fd,
                offset: 4096,
                buf: data.as_ptr(),
                len: 4096,
            };
            assert_eq!(e.submit(&w, 1), Submit::Done(4096), "{}", e.name());
            let r = Op::Read {
                fd,
                offset: 4096,
                buf: back.as_mut_ptr(),
                len: 4096,
            };
            assert_eq!(e.submit(&r, 2), Submit::Done(4096), "{}", e.name());
            assert_eq!(e.submit(&Op::Fsync { fd }, 3), Submit::Done(0));
            if e.caps().real_io {
                assert_eq!(back, data);
                // short read at EOF
                let r = Op::Read {
                    fd,
                    offset: 6144,
                    buf: back.as_mut_ptr(),
                    len: 4096,
                };
                assert_eq!(e.submit(&r, 4), Submit::Done(2048));
                // errno propagates as a negative result
                let bad = Op::Read {
                    fd: 999_999,
                    offset: 0,
                    buf: back.as_mut_ptr(),
                    len: 16,
                };
                assert_eq!(e.submit(&bad, 5), Submit::Done(-(libc::EBADF as i64)));
            }
        }
    }
}
