//! `fslab meta`: lay out the directories, then run bonnie++'s phases one
//! after the other (all jobs start each phase together), `sync` between phases.

use super::pipeline::{self, CellWork};
use super::{io_err, refused, AppError};
use crate::engine::{Engine, UringOpts};
use crate::model::system::XattrPlacement;
use crate::model::TargetInfo;
use crate::model::{Cell, CpuSummary, DirResult, Report};
use crate::plan::{ExtraPhase, MetaPlan, Order, Presentation};
use crate::runner::{Progress, RunConfig, RunOut};
use crate::stats::cpu::CpuTimes;
use crate::sys::fiemap::{self, XattrFork};
use crate::target::{self, Guard};
use crate::workload::meta::{self as meta_wl, JobDirs, MetaWorkload, PhaseKind};
use std::ffi::CString;
use std::ops::ControlFlow;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Creates and opens each job's directories (untimed).
fn make_dirs(plan: &MetaPlan, work: &Path) -> Result<Vec<Arc<JobDirs>>, AppError> {
    let groups = if plan.shared_dirs { 1 } else { plan.jobs };
    let mut out = Vec::new();
    for g in 0..groups {
        let base = work.join(if plan.shared_dirs {
            "shared".to_string()
        } else {
            format!("job{g}")
        });
        // create_dir, not create_dir_all: a work directory an abort removed
        // meanwhile must not be made again (unmarked, it would stay)
        std::fs::create_dir(&base).map_err(io_err(format!("creating {}", base.display())))?;
        let mut dirs = JobDirs {
            fds: Vec::new(),
            paths: Vec::new(),
        };
        for d in 0..plan.dirs {
            let p = base.join(format!("{d:05}"));
            std::fs::create_dir(&p).map_err(io_err(format!("creating {}", p.display())))?;
            let f = std::fs::File::open(&p).map_err(io_err(format!("opening {}", p.display())))?;
            dirs.fds.push(f.into());
            dirs.paths
                .push(CString::new(p.as_os_str().as_bytes()).expect("paths have no NUL"));
        }
        out.push(Arc::new(dirs));
    }
    Ok(out)
}

/// Refuses early, with the flag, when the filesystem can't store the xattrs.
fn check_xattrs(plan: &MetaPlan, work: &Path, info: &TargetInfo) -> Result<(), AppError> {
    let Some(x) = plan.xattrs.first() else { return Ok(()) };
    let p = work.join(".xattr-probe");
    let f = std::fs::File::create(&p).map_err(io_err(format!("creating {}", p.display())))?;
    let value = vec![0u8; x.size];
    let r = rustix::fs::fsetxattr(&f, x.name.as_c_str(), &value, rustix::fs::XattrFlags::empty());
    drop(f);
    let _ = std::fs::remove_file(&p);
    if let Err(err) = r {
        let err = std::io::Error::from(err);
        let name = x.name.to_string_lossy();
        return Err(refused(
            "--xattr",
            format!(
                "{} ({}) refuses the extended attribute {name} of {} bytes: {err}",
                plan.target.display(),
                info.fs_type,
                x.size
            ),
        ));
    }
    Ok(())
}

/// The phases in bonnie++'s order: per order create, stat, the extras, delete.
fn phases(plan: &MetaPlan) -> Vec<(Order, PhaseKind)> {
    let mut v = Vec::new();
    for &o in &plan.orders {
        v.push((o, PhaseKind::Create));
        v.push((o, PhaseKind::Stat));
        for e in &plan.extra_phases {
            v.push((
                o,
                match e {
                    ExtraPhase::Getxattr => PhaseKind::Getxattr,
                    ExtraPhase::Rename => PhaseKind::Rename,
                    ExtraPhase::Readdir => PhaseKind::Readdir,
                    ExtraPhase::OpenClose => PhaseKind::OpenClose,
                },
            ));
        }
        v.push((o, PhaseKind::Delete));
    }
    v
}

fn phase_name(o: Order, k: PhaseKind) -> String {
    format!("{}-{}", o.name(), k.dir().name())
}

/// A metadata plan as a cell of the pipeline: one timed phase per
/// (order, phase), all jobs starting each phase together.
pub struct MetaCell<'a> {
    name: &'a str,
    plan: &'a MetaPlan,
    /// No progress bars (`--quiet`, or the lab's).
    quiet: bool,
    phases: Vec<(Order, PhaseKind)>,
    /// Once prepared: the target and each job's directories.
    info: TargetInfo,
    dirs: Vec<Arc<JobDirs>>,
    cell_plan: crate::model::CellPlan,
    // what the phases so far measured
    directions: Vec<DirResult>,
    cpu_total: CpuTimes,
    elapsed_total: u64,
    job_errors: Vec<String>,
    warnings: Vec<String>,
    interrupted: bool,
    // between phases: the rename direction, and the files each of this
    // rank's jobs made when a stonewall cut the create short
    renamed: bool,
    last_order: Option<Order>,
    created: Option<Vec<u64>>,
    /// Where the xattrs live, sampled after the first create phase.
    xattrs: Option<XattrPlacement>,
}

impl<'a> MetaCell<'a> {
    /// The cell `name` of `plan`, with progress bars unless `quiet`.
    pub fn new(name: &'a str, plan: &'a MetaPlan, quiet: bool) -> Self {
        MetaCell {
            name,
            plan,
            quiet,
            phases: phases(plan),
            info: TargetInfo::default(),
            dirs: Vec::new(),
            cell_plan: crate::model::CellPlan::Meta(plan.clone()),
            directions: Vec::new(),
            cpu_total: CpuTimes::default(),
            elapsed_total: 0,
            job_errors: Vec::new(),
            warnings: Vec::new(),
            interrupted: false,
            renamed: false,
            last_order: None,
            created: None,
            xattrs: None,
        }
    }

    /// The phases so far as a cell.
    fn cell(&self, interrupted: bool) -> Cell {
        let (cpu, elapsed) = (self.cpu_total, self.elapsed_total);
        Cell {
            warnings: self.warnings.clone(),
            interrupted,
            elapsed_ns: elapsed,
            directions: self.directions.clone(),
            cpu: CpuSummary::of_process(cpu, elapsed),
            job_errors: self.job_errors.clone(),
            xattrs: self.xattrs.clone(),
            ..Cell::new(self.name, self.cell_plan.clone(), self.info.clone())
        }
    }

    /// bonnie++ calls sync() before it stops the clock of each phase that
    /// changes the filesystem (create, delete; not stat): fslab does the
    /// same with syncfs(2) on the target's filesystem, or the rates would
    /// not be comparable. sync() would also wait for every other
    /// filesystem's dirty data (another tenant's copy, a previous cell's
    /// stream), which is not the target's work. Returns the phase's time and
    /// CPU with the sync's.
    fn sync_phase(&self, kind: PhaseKind, out: &RunOut) -> (u64, CpuTimes) {
        let mut elapsed = out.elapsed_ns;
        let mut cpu = out.cpu_process;
        let modifies = matches!(kind, PhaseKind::Create | PhaseKind::Delete | PhaseKind::Rename);
        if self.plan.sync_after_phase && modifies && !out.interrupted {
            let (t, c) = (std::time::Instant::now(), CpuTimes::process());
            if rustix::fs::syncfs(&self.dirs[0].fds[0]).is_err() {
                rustix::fs::sync();
            }
            // every rank syncs the target on its machine; the phase ends with the slowest
            let took = crate::dist::coordinator().all_gather_u64(t.elapsed().as_nanos() as u64);
            elapsed += took.into_iter().max().unwrap_or(0);
            cpu += CpuTimes::process() - c;
        }
        (elapsed, cpu)
    }
}

/// How many files the xattr placement looks at.
const XATTR_SAMPLE: u64 = 64;

impl MetaCell<'_> {
    /// Where the xattrs of up to [`XATTR_SAMPLE`] of the files the create
    /// phase of `order` made live, from FIEMAP (`FIEMAP_FLAG_XATTR`): the
    /// sample spread over the jobs and, within each job, evenly over its
    /// files (and so its directories). Untimed, between the create phase and
    /// the next; each file opened read-only relative to its directory, never
    /// following a symlink. The first error (a filesystem without fiemap for
    /// xattrs, EOPNOTSUPP on tmpfs) ends the sample and is reported, not a
    /// failure. Each rank samples its own files (rank 0's are the cell's).
    fn sample_xattrs(&self, order: Order) -> XattrPlacement {
        let plan = self.plan;
        let jobs = plan.jobs as usize;
        let made: Vec<u64> = (0..jobs)
            .map(|j| match &self.created {
                Some(c) => c.get(j).copied().unwrap_or(0).min(plan.files),
                None => plan.files,
            })
            .collect();
        let n = made.iter().sum::<u64>().min(XATTR_SAMPLE);
        let mut quota = vec![0u64; jobs];
        for slot in 0..n {
            quota[(slot * jobs as u64 / n) as usize] += 1;
        }
        // XFS keeps shortform attributes in the inode and reports them as no
        // extent (xfs_xattr_iomap_begin: no attribute fork blocks); every
        // sampled file has the plan's xattrs, so no extent means in the inode
        let xfs = self.info.fs_type == "xfs";
        let mut p = XattrPlacement::default();
        for (j, (&q, &m)) in quota.iter().zip(&made).enumerate() {
            let q = q.min(m);
            let dirs = &self.dirs[if plan.shared_dirs { 0 } else { j }];
            for k in 0..q {
                let idx = ((2 * k + 1) as u128 * m as u128 / (2 * q) as u128) as u64;
                let (d, name) = meta_wl::created_file(plan, j as u32, order, idx, dirs.fds.len());
                match xattr_fork(&dirs.fds[d], &name) {
                    Ok(f) => {
                        p.sampled += 1;
                        match f {
                            XattrFork::InInode => p.in_inode += 1,
                            XattrFork::External => p.external += 1,
                            XattrFork::NoExtent if xfs => p.in_inode += 1,
                            XattrFork::NoExtent => p.none += 1,
                        }
                    }
                    Err(e) => {
                        p.error = Some(self.fiemap_error(&name, e));
                        return p;
                    }
                }
            }
        }
        p
    }

    fn fiemap_error(&self, name: &std::ffi::CStr, e: rustix::io::Errno) -> String {
        let why = match e {
            rustix::io::Errno::OPNOTSUPP => " (the filesystem has no fiemap)",
            rustix::io::Errno::BADR => " (the filesystem's fiemap does not map xattrs)",
            _ => "",
        };
        format!(
            "FIEMAP (FIEMAP_FLAG_XATTR) of {} on {}: {}{why}",
            name.to_string_lossy(),
            self.info.fs_type,
            std::io::Error::from(e)
        )
    }
}

/// Opens `name` in `dir` read-only without following a symlink (nor
/// blocking on a FIFO) and asks FIEMAP where its xattrs are.
fn xattr_fork(dir: &std::os::fd::OwnedFd, name: &std::ffi::CStr) -> Result<XattrFork, rustix::io::Errno> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, name, flags, Mode::empty())?;
    Ok(fiemap::xattr_fork(&fiemap::xattr_extents(&fd)?))
}

impl CellWork for MetaCell<'_> {
    type Worker = MetaWorkload;

    fn name(&self) -> &str {
        self.name
    }

    fn prepare(&mut self, _stop: &AtomicBool) -> Result<Guard, AppError> {
        let target::WorkDir { info, path, guard } = target::work_dir(&self.plan.target)?;
        target::ranks::agree(check_xattrs(self.plan, &path, &info))?;
        self.dirs = make_dirs(self.plan, &path)?;
        self.info = info;
        Ok(guard)
    }

    fn phases(&self) -> usize {
        self.phases.len()
    }

    fn begin_phase(&mut self, phase: usize, stop: &AtomicBool) -> Result<ControlFlow<()>, AppError> {
        if crate::dist::any(stop.load(Ordering::Relaxed)) {
            self.interrupted = true;
            return Ok(ControlFlow::Break(()));
        }
        let (order, _) = self.phases[phase];
        if self.last_order != Some(order) {
            self.renamed = false;
            self.last_order = Some(order);
            self.created = None;
        }
        Ok(ControlFlow::Continue(()))
    }

    fn phase_name(&self, phase: usize) -> String {
        let (o, k) = self.phases[phase];
        phase_name(o, k)
    }

    fn config(&self, phase: usize) -> RunConfig {
        let (_, kind) = self.phases[phase];
        RunConfig {
            jobs: self.plan.jobs as usize,
            runtime: None,
            ramp: std::time::Duration::ZERO,
            rate: None,
            bucket_ns: vec![2_000_000],
            depth: 1,
            batch: 1,
            stop_on_error: self.plan.stop_on_error,
            stonewall: if kind == PhaseKind::Create {
                self.plan.stonewall
            } else {
                None
            },
            ..Default::default()
        }
    }

    fn progress(&self, phase: usize) -> Progress {
        let (order, kind) = self.phases[phase];
        Progress::new(!self.quiet, phase_name(order, kind), None)
    }

    fn worker(&self, phase: usize, j: usize) -> Result<(Box<dyn Engine>, MetaWorkload), String> {
        let (order, kind) = self.phases[phase];
        let plan = self.plan;
        let d = Arc::clone(&self.dirs[if plan.shared_dirs { 0 } else { j }]);
        let made = self.created.as_ref().map(|c| c[j]);
        let wl = MetaWorkload::new(plan, j as u32, d, kind, order, self.renamed, made);
        let uring = UringOpts {
            depth: 1,
            ..Default::default()
        };
        let engine = plan.engine.build(&uring).map_err(|e| format!("job {j}: {e}"))?;
        Ok((engine, wl))
    }

    fn end_phase(&mut self, phase: usize, out: RunOut) -> ControlFlow<()> {
        let (order, kind) = self.phases[phase];
        if kind == PhaseKind::Rename {
            self.renamed = !self.renamed;
        }
        if kind == PhaseKind::Create && out.stonewall.is_some() {
            self.created = Some(out.local_jobs().iter().map(|o| o.items).collect());
        }
        let (elapsed, cpu) = self.sync_phase(kind, &out);
        let st = &out.stats[kind.dir().idx()];
        let mut d = super::cell::with_ranks(DirResult::of(kind.dir(), st, elapsed), &out);
        d.phase = Some(phase_name(order, kind));
        d.elapsed_ns = Some(elapsed);
        d.cpu_percent = Some(cpu.percent_of_core(elapsed));
        let failed = !st.errors.is_empty();
        let whole = !failed && !out.interrupted && out.jobs.iter().all(|o| o.error.is_none());
        if kind == PhaseKind::Create && whole && self.xattrs.is_none() && !self.plan.xattrs.is_empty() {
            self.xattrs = Some(self.sample_xattrs(order));
        }
        self.directions.push(d);
        self.cpu_total += cpu;
        self.elapsed_total += elapsed;
        self.job_errors.extend(out.jobs.iter().filter_map(|o| o.error.clone()));
        for n in out.jobs.iter().flat_map(|o| &o.notes) {
            if !self.warnings.contains(n) {
                self.warnings.push(n.clone());
            }
        }
        if out.interrupted {
            self.interrupted = true;
            return ControlFlow::Break(());
        }
        // A phase with errors ends the run in either --on-error mode: later
        // phases would stat and delete files that were never made.
        if failed || !self.job_errors.is_empty() {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    fn partial(&self) -> Option<Cell> {
        Some(self.cell(true))
    }

    fn summarise(&mut self) -> Vec<Cell> {
        vec![self.cell(self.interrupted)]
    }
}

/// `fslab meta`: one cell, written to every output.
pub fn run_meta(plan: MetaPlan, presentation: Presentation, stop: &AtomicBool) -> Result<Report, AppError> {
    pipeline::run_single(
        "meta",
        presentation.outputs,
        MetaCell::new("meta", &plan, presentation.quiet),
        stop,
    )
}
