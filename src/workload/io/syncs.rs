//! The io workload's syncs: fsync=N / fdatasync=N between writes, and
//! end_fsync once every I/O completed, each as fio issues them.

use super::IoWorkload;
use crate::engine::Op;
use crate::stats::OpKind;
use crate::workload::NextOp;

impl IoWorkload {
    /// fsync=N / fdatasync=N: fio decides on a sync when it picks the next
    /// I/O (io_u.c `get_rw_ddir`), so none follows the job's last write
    /// (fsync=8 over 128 writes: 15 syncs), and of a sync and a datasync
    /// due together only the sync is issued.
    pub(super) fn cadence_sync(&mut self) -> Option<NextOp> {
        let fsync = self.fsync_every > 0 && self.writes_since_fsync >= self.fsync_every;
        let datasync = self.fdatasync_every > 0 && self.writes_since_fdatasync >= self.fdatasync_every;
        if !(fsync || datasync) || self.fill.stopped() || !self.region.continues() {
            return None;
        }
        if datasync {
            self.writes_since_fdatasync = 0;
        }
        let fd = self.fds[self.next_file];
        Some(if fsync {
            self.writes_since_fsync = 0;
            NextOp {
                op: Op::Fsync { fd },
                dir: OpKind::Fsync,
                len: 0,
                prio: 0,
            }
        } else {
            NextOp {
                op: Op::Fdatasync { fd },
                // counted with fsync, as fio's "sync" statistics are
                dir: OpKind::Fsync,
                len: 0,
                prio: 0,
            }
        })
    }

    /// fio's end_fsync (backend.c, `fio_file_fsync`): an fsync(2) of each
    /// file once every I/O completed, inside the job's runtime but in none
    /// of its statistics (fio 3.33's sync lat_ns.N stays 0).
    pub(super) fn end_fsync(&mut self) {
        for &fd in &self.fds[..self.end_fsyncs] {
            // SAFETY: the workload's own files, open until it is dropped.
            let fd = unsafe { rustix::fd::BorrowedFd::borrow_raw(fd) };
            if let Err(e) = rustix::fs::fsync(fd) {
                self.end_error.get_or_insert(format!("end_fsync: {e}"));
            }
        }
        self.end_fsyncs = 0;
    }
}
