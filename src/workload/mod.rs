//! Workloads decide which operation comes next; they never time anything.
//!
//! A worker asks its workload for the next `Op`, hands it to its engine, and
//! tells the workload the result. `prepare` (untimed layout) happens in
//! `target`, before any worker starts.

mod buf;
pub mod fill;
pub mod io;
pub mod meta;
pub mod offsets;
pub mod probe;
pub mod replay;
pub mod verify;

pub use buf::AlignedBuf;

use crate::engine::{Engine, Op, Submit};
use crate::stats::OpKind;

/// The next operation and what it counts as.
#[derive(Clone, Copy, Debug)]
pub struct NextOp {
    pub op: Op,
    pub dir: OpKind,
    /// Bytes the op moves when it fully succeeds.
    pub len: u64,
    /// The I/O's priority (ioprio value; 0: none): fio's cmdprio.
    pub prio: u16,
}

/// One unit of work done by `Workload::step`: its kind and its result
/// (bytes moved, or a negated errno), and for a read or write its file
/// offset (fio's log_offset; 0 for everything else).
#[derive(Clone, Copy, Debug)]
pub struct Step {
    pub dir: OpKind,
    pub result: i64,
    pub offset: u64,
    /// A read or write that succeeded moving fewer bytes than it asked
    /// for (fio's short_ios).
    pub short: bool,
    /// The I/O's priority (`NextOp::prio`), for fio's logs.
    pub prio: u16,
    /// Whether the step is an operation to count (fio's net engine also
    /// waits for its peer in steps, so that a stop is seen while it waits).
    pub mark: StepMark,
}

/// What the runner makes of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepMark {
    /// An operation, timed and counted.
    Op,
    /// Nothing was done (a wait that timed out): neither timed nor counted.
    Idle,
    /// The workload has just become ready (a connection accepted): its
    /// statistics and runtime start again here, as fio's reset_all_stats.
    Restart,
}

impl Step {
    /// A step that is not a read or write of one offset.
    pub fn new(dir: OpKind, result: i64) -> Self {
        Step {
            dir,
            result,
            offset: 0,
            short: false,
            prio: 0,
            mark: StepMark::Op,
        }
    }

    /// A step that is not an operation (`StepMark::Idle` or `Restart`).
    pub fn marked(mark: StepMark) -> Self {
        Step {
            mark,
            ..Step::new(OpKind::Read, 0)
        }
    }

    /// The step of `next`'s operation, which returned `result`.
    #[inline]
    pub fn of(next: &NextOp, result: i64) -> Self {
        let rw = matches!(next.op, Op::Read { .. } | Op::Write { .. } | Op::Trim { .. });
        Step {
            dir: next.dir,
            result,
            offset: next.op.offset(),
            short: rw && result >= 0 && (result as u64) < next.len,
            prio: next.prio,
            mark: StepMark::Op,
        }
    }
}

/// A per-worker stream of operations.
pub trait Workload {
    /// The next operation, using the resources of in-flight slot `slot`
    /// (`0..depth`; a slot is reused only after its operation completed), or
    /// None when the workload is done.
    ///
    /// The runner submits the op to its engine (`unsafe`, see
    /// [`Engine::submit`]) relying on this: every buffer and path in it
    /// belongs to the workload, stays valid while the workload lives, and is
    /// not touched by the workload until the op's result came back through
    /// [`Workload::on_complete`].
    fn next_op(&mut self, slot: usize) -> Option<NextOp>;

    /// Called with the result of every completed operation (`< 0` is -errno);
    /// returns the result to record (a read whose data fails verification
    /// becomes an error).
    fn on_complete(&mut self, _op: &NextOp, result: i64) -> i64 {
        result
    }

    /// What the workload has to say after the run (verification mismatches),
    /// reported as the cell's warnings.
    fn notes(&mut self) -> Vec<String> {
        Vec::new()
    }

    /// Does the next unit of work to completion, or None when done. The worker
    /// times the whole call, so a workload whose unit is several syscalls (a
    /// file create: open, write, setxattr, close) overrides this.
    #[inline]
    fn step(&mut self, engine: &mut dyn Engine) -> Option<Step> {
        let next = self.next_op(0)?;
        // SAFETY: the op names this workload's own buffers, left alone until
        // `on_complete` (next_op's contract); it completes before this returns.
        let result = match unsafe { engine.submit(&next.op, 0) } {
            Submit::Done(r) => r,
            _ => crate::engine::exec_pending(engine),
        };
        let result = self.on_complete(&next, result);
        Some(Step::of(&next, result))
    }

    /// The direction of the next read or write as the mix draws it (kept
    /// for `next_op`), for a pacer that may switch it; None when the
    /// workload has no mix to draw from.
    fn next_dir(&mut self) -> Option<OpKind> {
        None
    }

    /// Makes the next read or write go `dir` instead (fio's rate_ddir: the
    /// direction that is behind its rate is issued).
    fn set_next_dir(&mut self, _dir: OpKind) {}

    /// Whether `next_op` can keep several operations in flight (false for
    /// workloads built from dependent steps, which always use `step`).
    fn queues(&self) -> bool {
        true
    }

    /// When the next step is due, for workloads paced by their own schedule
    /// (a load file's timestamps): the worker sleeps until then and also
    /// measures latency from that instant.
    fn next_due(&mut self) -> Option<crate::stats::Instant> {
        None
    }

    /// How many of its items (files of a metadata phase) the workload has
    /// worked through, counting one that completed after the deadline and so
    /// is not in the statistics: what a stonewalled create left on disk.
    fn items_done(&self) -> u64 {
        0
    }

    /// True when `next_op` returned None only because what comes next
    /// waits for operations of its own still in flight (a block is read
    /// back once its write completed): the queue asks again after a
    /// completion instead of ending the workload.
    fn waits(&self) -> bool {
        false
    }

    /// Datagrams found missing from the peer's sequence (fio's drop_ios),
    /// by direction: only fio's net engine has them.
    fn dropped(&self) -> Option<(OpKind, u64)> {
        None
    }

    /// Why the workload stopped early, if it did (it then returns None).
    fn error(&self) -> Option<String> {
        None
    }

    /// The open files, for engines that register them.
    fn files(&self) -> Vec<std::os::fd::RawFd> {
        Vec::new()
    }

    /// The I/O buffers, indexed as in `Op::Read::buf_index`, for engines that register them.
    fn buffers(&self) -> Vec<(*mut u8, usize)> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's short_ios: a read or write that succeeded with fewer bytes
    /// than asked; a full one, a failed one or another kind of op is not.
    #[test]
    fn a_step_is_short_when_it_moved_less_than_asked() {
        let read = NextOp {
            op: Op::Read {
                fd: -1,
                offset: 8192,
                buf: std::ptr::null_mut(),
                len: 4096,
                buf_index: 0,
            },
            dir: OpKind::Read,
            len: 4096,
            prio: 0,
        };
        let short = |r: i64| Step::of(&read, r).short;
        assert!(short(2048) && short(0));
        assert!(!short(4096) && !short(-(libc::EIO as i64)));
        assert_eq!(Step::of(&read, 2048).offset, 8192);
        let sync = NextOp {
            op: Op::Fsync { fd: -1 },
            dir: OpKind::Fsync,
            len: 4096,
            prio: 0,
        };
        assert!(!Step::of(&sync, 0).short);
        assert!(!Step::new(OpKind::Read, 10).short);
    }
}
