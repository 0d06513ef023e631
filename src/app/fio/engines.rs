//! The workload a fio job's worker runs: reads and writes (the io
//! workload) or, for fio's metadata engines (filecreate, filestat,
//! filedelete, dircreate, dirstat, dirdelete), fslab's metadata operations.

use super::super::io::io_worker;
use crate::engine::{Engine, EngineKind, NullEngine, Op, Submit};
use crate::plan::fio::engines::MetaOp;
use crate::plan::fio::{FioEngine, FioJobPlan, Placement};
use crate::stats::OpKind;
use crate::target::Prepared;
use crate::workload::io::IoWorkload;
use crate::workload::{NextOp, Step, Workload};
use std::ffi::CString;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

/// One fio worker's workload. The io workload stays unboxed (it is the hot
/// path, and there is one per worker: the size difference costs nothing).
#[allow(clippy::large_enum_variant)]
pub enum FioWorker {
    /// Each worker doing I/O holds its segment's token (`Alive`), so that
    /// cpuio's exit_on_io_done sees when none is left.
    Io(IoWorkload, #[allow(dead_code)] Alive),
    Meta(FioMeta, #[allow(dead_code)] Alive),
    /// An engine without I/O (cpuio): its own workload.
    NoIo(Box<dyn Workload>),
}

/// A clone of the segment's token of workers doing I/O, dropped with the
/// worker (None: nobody asks).
pub type Alive = Option<Arc<()>>;

/// Clone `clone` of `job`: its engine and workload, built on its thread.
pub(super) fn worker(
    job: &FioJobPlan,
    prep: &Prepared,
    clone: u32,
    io_alive: Option<&Arc<()>>,
) -> Result<(Box<dyn Engine>, FioWorker), String> {
    place(&job.fio.placement, clone).map_err(|e| format!("{}: {e}", job.name))?;
    if let FioEngine::Meta {
        op,
        bytes_per_file,
        write,
        ..
    } = job.fio.engine
    {
        let per_file = match bytes_per_file {
            // filestat, filedelete: fio counts the laid-out file, in blocks of bs
            0 => (prep.file_size / job.plan.shape.bs.max(1) * job.plan.shape.bs).max(job.plan.shape.bs),
            n => n,
        };
        let w = FioMeta::new(op, prep, clone, per_file, write).map_err(|e| format!("{}: {e}", job.name))?;
        // fio's metadata engines are synchronous system calls
        let e = EngineKind::Sync
            .build(&job.plan.ioengine.uring)
            .map_err(|e| format!("{}: {e}", job.name))?;
        return Ok((e, FioWorker::Meta(w, io_alive.cloned())));
    }
    if let FioEngine::Cpu(c) = &job.fio.engine {
        let w = super::noio::CpuBurn::new(c, io_alive);
        return Ok((Box::new(NullEngine), FioWorker::NoIo(Box::new(w))));
    }
    if let FioEngine::Exec(x) = &job.fio.engine {
        let w = super::exec::ExecJob::new(x)?;
        return Ok((Box::new(NullEngine), FioWorker::NoIo(Box::new(w))));
    }
    if let FioEngine::Net(n) = &job.fio.engine {
        let w = super::net::NetJob::new(n, clone, &job.name)?;
        return Ok((Box::new(NullEngine), FioWorker::NoIo(Box::new(w))));
    }
    let (e, w) = io_worker(&job.plan, prep, clone, &job.name)?;
    Ok((e, FioWorker::Io(w, io_alive.cloned())))
}

/// Puts the calling thread (clone `clone`'s, before its first I/O) where
/// the job says, as fio's thread_main does: its CPUs (split: one each, in
/// turn), its I/O priority (ioprio_set of the thread) and its nice value.
fn place(p: &Placement, clone: u32) -> Result<(), String> {
    if let Some(cpus) = &p.cpus {
        let mut set = rustix::thread::CpuSet::new();
        if p.split {
            set.set(cpus[clone as usize % cpus.len()]);
        } else {
            cpus.iter().for_each(|&c| set.set(c));
        }
        rustix::thread::sched_setaffinity(None, &set).map_err(|e| format!("cpus_allowed: sched_setaffinity: {e}"))?;
    }
    if let Some(class) = p.prioclass {
        // fio's ioprio_value: no class is best-effort (2), no level 0;
        // IOPRIO_WHO_PROCESS of tid 0 is the calling thread
        let class = if class == 0 { 2 } else { class };
        let value = (class as libc::c_long) << 13 | p.prio.unwrap_or(0) as libc::c_long;
        // SAFETY: ioprio_set takes plain integers.
        if unsafe { libc::syscall(libc::SYS_ioprio_set, 1, 0, value) } < 0 {
            return Err(format!("prio: ioprio_set: {}", std::io::Error::last_os_error()));
        }
    }
    if let Some(nice) = p.nice {
        // on Linux a thread id names the thread alone
        // SAFETY: setpriority takes plain integers.
        if unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, nice) } < 0 {
            return Err(format!("nice: setpriority: {}", std::io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// fio's metadata engines: one timed operation per file of the clone, in
/// fslab's work directory (the files `target::prepare` names, laid out by
/// it for filestat and filedelete).
pub struct FioMeta {
    op: MetaOp,
    paths: Vec<CString>,
    next: usize,
    /// What fio counts for one file (its fake I/Os of bs).
    per_file: i64,
    dir: OpKind,
    failed: Option<String>,
    /// The stat buffer, kept across files.
    st: Box<libc::statx>,
}

impl FioMeta {
    fn new(op: MetaOp, prep: &Prepared, clone: u32, per_file: u64, write: bool) -> Result<FioMeta, String> {
        let mut paths = Vec::new();
        for p in prep.files_for(clone as usize) {
            let c =
                CString::new(p.as_os_str().as_bytes()).map_err(|_| format!("{}: a NUL in the path", p.display()))?;
            if op.makes_dirs_first() {
                // fio's setup_dirs: made before the timed run (in fslab's own
                // work directory, removed with it)
                match std::fs::create_dir(p) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && p.is_dir() => {}
                    Err(e) => return Err(format!("making {}: {e}", p.display())),
                }
            }
            paths.push(c);
        }
        Ok(FioMeta {
            op,
            paths,
            next: 0,
            per_file: per_file.min(i64::MAX as u64) as i64,
            dir: if write { OpKind::Write } else { OpKind::Read },
            failed: None,
            // SAFETY: statx is plain integers; all-zero is a valid value.
            st: Box::new(unsafe { std::mem::zeroed() }),
        })
    }

    /// `op` on `e`, to completion.
    fn run(e: &mut dyn Engine, op: &Op) -> i64 {
        // SAFETY: the op's path and stat buffer are this workload's own,
        // untouched until the call returns; it completes before this returns.
        match unsafe { e.submit(op, 0) } {
            Submit::Done(r) => r,
            _ => crate::engine::exec_pending(e),
        }
    }
}

impl Workload for FioMeta {
    fn next_op(&mut self, _slot: usize) -> Option<NextOp> {
        None
    }

    fn queues(&self) -> bool {
        false
    }

    fn items_done(&self) -> u64 {
        self.next as u64
    }

    fn error(&self) -> Option<String> {
        self.failed.clone()
    }

    fn step(&mut self, e: &mut dyn Engine) -> Option<Step> {
        if self.failed.is_some() {
            return None;
        }
        let path = self.paths.get(self.next)?.as_ptr();
        let r = match self.op {
            MetaOp::FileCreate => {
                let fd = Self::run(
                    e,
                    &Op::OpenAt {
                        dirfd: libc::AT_FDCWD,
                        path,
                        flags: libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC,
                        mode: 0o600,
                    },
                );
                if fd >= 0 {
                    let c = Self::run(e, &Op::Close { fd: fd as RawFd });
                    c.min(0)
                } else {
                    fd
                }
            }
            MetaOp::FileStat | MetaOp::DirStat => Self::run(
                e,
                &Op::Statx {
                    dirfd: libc::AT_FDCWD,
                    path,
                    buf: &mut *self.st,
                },
            ),
            MetaOp::FileDelete => Self::run(
                e,
                &Op::UnlinkAt {
                    dirfd: libc::AT_FDCWD,
                    path,
                    flags: 0,
                },
            ),
            MetaOp::DirDelete => Self::run(
                e,
                &Op::UnlinkAt {
                    dirfd: libc::AT_FDCWD,
                    path,
                    flags: libc::AT_REMOVEDIR,
                },
            ),
            MetaOp::DirCreate => Self::run(
                e,
                &Op::MkdirAt {
                    dirfd: libc::AT_FDCWD,
                    path,
                    mode: 0o700,
                },
            ),
        };
        let name = self.paths[self.next].to_string_lossy().into_owned();
        self.next += 1;
        if r < 0 {
            // fio: the job ends with its error (td_verror)
            self.failed = Some(format!(
                "{} {name}: {}",
                self.op.name(),
                std::io::Error::from_raw_os_error((-r).min(i32::MAX as i64) as i32)
            ));
            return Some(Step::new(self.dir, r));
        }
        Some(Step::new(self.dir, self.per_file))
    }
}

impl Workload for FioWorker {
    #[inline]
    fn next_op(&mut self, slot: usize) -> Option<NextOp> {
        match self {
            FioWorker::Io(w, _) => w.next_op(slot),
            FioWorker::Meta(w, _) => w.next_op(slot),
            FioWorker::NoIo(w) => w.next_op(slot),
        }
    }

    #[inline]
    fn on_complete(&mut self, op: &NextOp, result: i64) -> i64 {
        match self {
            FioWorker::Io(w, _) => w.on_complete(op, result),
            FioWorker::Meta(w, _) => w.on_complete(op, result),
            FioWorker::NoIo(w) => w.on_complete(op, result),
        }
    }

    fn notes(&mut self) -> Vec<String> {
        match self {
            FioWorker::Io(w, _) => w.notes(),
            FioWorker::Meta(w, _) => w.notes(),
            FioWorker::NoIo(w) => w.notes(),
        }
    }

    fn dropped(&self) -> Option<(OpKind, u64)> {
        match self {
            FioWorker::NoIo(w) => w.dropped(),
            _ => None,
        }
    }

    #[inline]
    fn step(&mut self, engine: &mut dyn Engine) -> Option<Step> {
        match self {
            FioWorker::Io(w, _) => w.step(engine),
            FioWorker::Meta(w, _) => w.step(engine),
            FioWorker::NoIo(w) => w.step(engine),
        }
    }

    fn next_dir(&mut self) -> Option<crate::stats::OpKind> {
        match self {
            FioWorker::Io(w, _) => w.next_dir(),
            FioWorker::Meta(w, _) => w.next_dir(),
            FioWorker::NoIo(w) => w.next_dir(),
        }
    }

    fn set_next_dir(&mut self, dir: crate::stats::OpKind) {
        match self {
            FioWorker::Io(w, _) => w.set_next_dir(dir),
            FioWorker::Meta(w, _) => w.set_next_dir(dir),
            FioWorker::NoIo(w) => w.set_next_dir(dir),
        }
    }

    fn queues(&self) -> bool {
        match self {
            FioWorker::Io(w, _) => w.queues(),
            FioWorker::Meta(w, _) => w.queues(),
            FioWorker::NoIo(w) => w.queues(),
        }
    }

    #[inline]
    fn next_due(&mut self) -> Option<crate::stats::Instant> {
        match self {
            FioWorker::Io(w, _) => w.next_due(),
            FioWorker::Meta(w, _) => w.next_due(),
            FioWorker::NoIo(w) => w.next_due(),
        }
    }

    fn items_done(&self) -> u64 {
        match self {
            FioWorker::Io(w, _) => w.items_done(),
            FioWorker::Meta(w, _) => w.items_done(),
            FioWorker::NoIo(w) => w.items_done(),
        }
    }

    fn waits(&self) -> bool {
        match self {
            FioWorker::Io(w, _) => w.waits(),
            FioWorker::Meta(w, _) => w.waits(),
            FioWorker::NoIo(w) => w.waits(),
        }
    }

    fn error(&self) -> Option<String> {
        match self {
            FioWorker::Io(w, _) => w.error(),
            FioWorker::Meta(w, _) => w.error(),
            FioWorker::NoIo(w) => w.error(),
        }
    }

    fn files(&self) -> Vec<RawFd> {
        match self {
            FioWorker::Io(w, _) => w.files(),
            FioWorker::Meta(w, _) => w.files(),
            FioWorker::NoIo(w) => w.files(),
        }
    }

    fn buffers(&self) -> Vec<(*mut u8, usize)> {
        match self {
            FioWorker::Io(w, _) => w.buffers(),
            FioWorker::Meta(w, _) => w.buffers(),
            FioWorker::NoIo(w) => w.buffers(),
        }
    }
}
