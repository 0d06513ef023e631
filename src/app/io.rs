//! `fslab io`: one cell, one timed phase, on files laid out by
//! `target::prepare`. The worker setup is shared with `fslab fio`.

use super::pipeline::{self, CellWork};
use super::AppError;
use crate::engine::{Engine, EngineKind};
use crate::model::Cell;
use crate::plan::io::region::{Fadvise, SyncMode};
use crate::plan::{IoPlan, Presentation};
use crate::runner::{Progress, RunConfig, RunOut};
use crate::target::{self, Guard, Prepared};
use crate::workload::io::IoWorkload;
use crate::workload::Workload;
use std::ops::ControlFlow;
use std::sync::atomic::AtomicBool;

/// How an io plan's phase is driven.
pub(crate) fn io_config(plan: &IoPlan, jobs: usize, stonewall: Option<crate::plan::Stonewall>) -> RunConfig {
    RunConfig {
        jobs,
        runtime: plan.limits.runtime,
        ramp: plan.limits.ramp,
        rate: plan.limits.rate_iops,
        bucket_ns: plan.lat_buckets_ns.clone(),
        depth: plan.ioengine.iodepth as usize,
        batch: plan.ioengine.iodepth_batch as usize,
        stop_on_error: plan.limits.stop_on_error,
        stonewall,
        pacing: plan.pacing.clone(),
        ..Default::default()
    }
}

/// One io worker, for `fslab io` and `fslab fio` alike: clone `clone` of
/// `plan` opens its files (`Prepared::open`: a device is checked to be the
/// claimed one), builds its workload and engine, and registers the files
/// and buffers with the engine. Errors start with `who` ("job 3", a fio job
/// name).
pub(crate) fn io_worker(
    plan: &IoPlan,
    prep: &Prepared,
    clone: u32,
    who: &str,
) -> Result<(Box<dyn Engine>, IoWorkload), String> {
    let r = &plan.region;
    // this clone's region of each file (fio's offset, offset_increment, size)
    let (start, len) = r.span(clone, prep.pct_base, prep.file_len, prep.file_size, plan.shape.bs);
    let mut files = Vec::new();
    if plan.ioengine.engine != EngineKind::Null {
        let flags = if plan.ioengine.direct { libc::O_DIRECT } else { 0 }
            | match r.sync {
                SyncMode::None => 0,
                SyncMode::Sync => libc::O_SYNC,
                SyncMode::Dsync => libc::O_DSYNC,
            };
        for path in prep.files_for(clone as usize) {
            let f = prep
                .open_with(path, plan.writes(), flags)
                .map_err(|e| format!("{who}: opening {}: {e}", path.display()))?;
            let at = prep.region_base + start;
            if r.pre_read {
                target::pre_read(path, at, len).map_err(|e| format!("{who}: pre_read {}: {e}", path.display()))?;
            } else if r.invalidate {
                // fio's invalidate: drop the region's cached pages before the job
                let _ = rustix::fs::fadvise(&f, at, std::num::NonZeroU64::new(len), rustix::fs::Advice::DontNeed);
            }
            if let Some(a) = hint(plan) {
                let _ = rustix::fs::fadvise(&f, at, std::num::NonZeroU64::new(len), a);
            }
            files.push(f);
        }
    }
    let shared = prep.files.len() == prep.per_job && plan.jobs > 1;
    let wl = IoWorkload::new(plan, clone, files, len, shared, plan.ioengine.iodepth as usize)
        .with_base(prep.region_base + start)
        .for_rank(crate::dist::coordinator().rank());
    let mut engine = plan
        .ioengine
        .engine
        .build(&plan.ioengine.uring)
        .map_err(|e| format!("{who}: {e}"))?;
    engine.advise(hint(plan).map(|a| a == rustix::fs::Advice::Random));
    // SAFETY: the buffers are the workload's heap allocations, which do not
    // move with it and live until the runner drops the workload, after the
    // engine (runner::drive); its files stay open as long.
    unsafe { engine.register(&wl.files(), &wl.buffers()) }.map_err(|e| format!("{who}: {e}"))?;
    Ok((engine, wl))
}

/// fio's fadvise_hint (td_io_open_file): readahead off for random I/O,
/// doubled for sequential.
fn hint(plan: &IoPlan) -> Option<rustix::fs::Advice> {
    match plan.region.fadvise {
        Fadvise::None => None,
        Fadvise::Pattern if plan.shape.rw.random() => Some(rustix::fs::Advice::Random),
        Fadvise::Pattern | Fadvise::Sequential => Some(rustix::fs::Advice::Sequential),
        Fadvise::Random => Some(rustix::fs::Advice::Random),
    }
}

/// An io plan as a cell of the pipeline.
pub struct IoCell<'a> {
    name: &'a str,
    plan: &'a IoPlan,
    /// No progress bars (`--quiet`, or the lab's).
    quiet: bool,
    prepared: Option<Prepared>,
    out: Option<RunOut>,
}

impl<'a> IoCell<'a> {
    /// The cell `name` of `plan`, with progress bars unless `quiet`.
    pub fn new(name: &'a str, plan: &'a IoPlan, quiet: bool) -> Self {
        IoCell {
            name,
            plan,
            quiet,
            prepared: None,
            out: None,
        }
    }

    fn prepared(&self) -> &Prepared {
        self.prepared.as_ref().expect("prepared before the timed phase")
    }
}

impl CellWork for IoCell<'_> {
    type Worker = IoWorkload;

    fn name(&self) -> &str {
        self.name
    }

    fn prepare(&mut self, stop: &AtomicBool) -> Result<Guard, AppError> {
        let progress = Progress::new(!self.quiet, self.name.to_string(), None);
        let layout_bar = std::cell::RefCell::new(None);
        let prepared = target::prepare(self.plan, stop, &|done, total| {
            let mut b = layout_bar.borrow_mut();
            if b.is_none() {
                *b = Some(progress.bytes_bar(total));
            }
            if let Some(Some(pb)) = &*b {
                pb.set_position(done);
            }
        });
        if let Some(Some(pb)) = layout_bar.into_inner() {
            pb.finish_and_clear();
        }
        let mut prepared = prepared?;
        let guard = std::mem::take(&mut prepared.guard);
        self.prepared = Some(prepared);
        Ok(guard)
    }

    fn config(&self, _phase: usize) -> RunConfig {
        io_config(self.plan, self.plan.jobs as usize, self.plan.limits.stonewall)
    }

    fn progress(&self, _phase: usize) -> Progress {
        let (plan, p) = (self.plan, self.prepared());
        let total = (!plan.limits.time_based)
            .then(|| p.file_size / plan.shape.bs * plan.shape.bs * (plan.jobs as usize * p.per_job) as u64);
        Progress::new(!self.quiet, self.name.to_string(), total)
    }

    fn worker(&self, _phase: usize, job: usize) -> Result<(Box<dyn Engine>, IoWorkload), String> {
        io_worker(self.plan, self.prepared(), job as u32, &format!("job {job}"))
    }

    fn end_phase(&mut self, _phase: usize, out: RunOut) -> ControlFlow<()> {
        self.out = Some(out);
        ControlFlow::Continue(())
    }

    fn summarise(&mut self) -> Vec<Cell> {
        let out = self.out.take().expect("the phase ran");
        let p = self.prepared();
        vec![super::cell::from_run(
            self.name,
            crate::model::CellPlan::Io(self.plan.clone()),
            p.info.clone(),
            p.warnings.clone(),
            out,
        )]
    }
}

/// `fslab io`: one cell, written to every output.
pub fn run_io(plan: IoPlan, presentation: Presentation, stop: &AtomicBool) -> Result<crate::model::Report, AppError> {
    pipeline::run_single(
        "io",
        presentation.outputs,
        IoCell::new("io", &plan, presentation.quiet),
        stop,
    )
}
