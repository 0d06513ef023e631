//! The workload a fio job's worker runs: reads and writes (the io
//! workload) or, for fio's metadata engines (filecreate, filestat,
//! filedelete, dircreate, dirstat, dirdelete), fslab's metadata operations.

use super::super::io::io_worker;
use crate::engine::Engine;
use crate::plan::fio::FioJobPlan;
use crate::target::Prepared;
use crate::workload::io::IoWorkload;
use crate::workload::{NextOp, Step, Workload};
use std::os::fd::RawFd;

/// One fio worker's workload.
pub enum FioWorker {
    Io(IoWorkload),
}

/// Clone `clone` of `job`: its engine and workload, built on its thread.
pub(super) fn worker(job: &FioJobPlan, prep: &Prepared, clone: u32) -> Result<(Box<dyn Engine>, FioWorker), String> {
    let (e, w) = io_worker(&job.plan, prep, clone, &job.name)?;
    Ok((e, FioWorker::Io(w)))
}

impl Workload for FioWorker {
    #[inline]
    fn next_op(&mut self, slot: usize) -> Option<NextOp> {
        match self {
            FioWorker::Io(w) => w.next_op(slot),
        }
    }

    #[inline]
    fn on_complete(&mut self, op: &NextOp, result: i64) -> i64 {
        match self {
            FioWorker::Io(w) => w.on_complete(op, result),
        }
    }

    fn notes(&mut self) -> Vec<String> {
        match self {
            FioWorker::Io(w) => w.notes(),
        }
    }

    #[inline]
    fn step(&mut self, engine: &mut dyn Engine) -> Option<Step> {
        match self {
            FioWorker::Io(w) => w.step(engine),
        }
    }

    fn queues(&self) -> bool {
        match self {
            FioWorker::Io(w) => w.queues(),
        }
    }

    #[inline]
    fn next_due(&mut self) -> Option<crate::stats::Instant> {
        match self {
            FioWorker::Io(w) => w.next_due(),
        }
    }

    fn items_done(&self) -> u64 {
        match self {
            FioWorker::Io(w) => w.items_done(),
        }
    }

    fn waits(&self) -> bool {
        match self {
            FioWorker::Io(w) => w.waits(),
        }
    }

    fn error(&self) -> Option<String> {
        match self {
            FioWorker::Io(w) => w.error(),
        }
    }

    fn files(&self) -> Vec<RawFd> {
        match self {
            FioWorker::Io(w) => w.files(),
        }
    }

    fn buffers(&self) -> Vec<(*mut u8, usize)> {
        match self {
            FioWorker::Io(w) => w.buffers(),
        }
    }
}
