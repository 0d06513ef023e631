//! Workloads decide which operation comes next; they never time anything.
//!
//! A worker asks its workload for the next `Op`, hands it to its engine, and
//! tells the workload the result. `prepare` (untimed layout) happens in
//! `target`, before any worker starts.

mod buf;
pub mod io;

pub use buf::AlignedBuf;

use crate::engine::Op;
use crate::stats::Dir;

/// The next operation and what it counts as.
#[derive(Clone, Copy, Debug)]
pub struct NextOp {
    pub op: Op,
    pub dir: Dir,
    /// Bytes the op moves when it fully succeeds.
    pub len: u64,
}

/// A per-worker stream of operations.
pub trait Workload {
    /// The next operation, using the resources of in-flight slot `slot`
    /// (`0..depth`; a slot is reused only after its operation completed), or
    /// None when the workload is done.
    fn next_op(&mut self, slot: usize) -> Option<NextOp>;

    /// Called with the result of every completed operation (`< 0` is -errno).
    fn on_complete(&mut self, _op: &NextOp, _result: i64) {}

    /// The open files, for engines that register them.
    fn files(&self) -> Vec<std::os::fd::RawFd> {
        Vec::new()
    }

    /// The I/O buffers, indexed as in `Op::Read::buf_index`, for engines that register them.
    fn buffers(&self) -> Vec<(*mut u8, usize)> {
        Vec::new()
    }
}
