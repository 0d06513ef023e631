//! The null engine: completes every operation at once without a syscall. It
//! measures fslab's own per-operation cost (fio's `null` ioengine does the same).

use super::{Caps, Engine, Op, Submit};

pub struct NullEngine;

impl Engine for NullEngine {
    fn name(&self) -> &'static str {
        "null"
    }
    fn caps(&self) -> Caps {
        Caps {
            inline: true,
            real_io: false,
            max_depth: 1,
            xattr_at: true,
        }
    }
    /// # Safety
    /// None needed: no pointer in `op` is touched.
    #[inline]
    unsafe fn submit(&mut self, op: &Op, _token: u64) -> Submit {
        Submit::Done(match *op {
            Op::Read { len, .. } | Op::Write { len, .. } | Op::Trim { len, .. } => len as i64,
            Op::OpenAt { .. } => 1_000_000,
            _ => 0,
        })
    }
}
