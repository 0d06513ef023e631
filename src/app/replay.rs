//! `fslab replay`: every client replays the shared, parsed load file in its
//! own directory, looping until the time is up, as dbench's clients do.

use super::pipeline::{self, CellWork};
use super::{io_err, AppError};
use crate::engine::{Engine, NullEngine};
use crate::model::TargetInfo;
use crate::model::{Cell, Report};
use crate::plan::{Presentation, ReplayPlan};
use crate::runner::{Progress, RunConfig, RunOut};
use crate::target::{self, Guard};
use crate::workload::replay::ReplayClient;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// dbench's throughput: bytes of ReadX and WriteX per second, in 10^6 B/s.
pub fn throughput_mb_s(c: &Cell) -> f64 {
    c.directions
        .iter()
        .filter(|d| matches!(d.dir, crate::stats::OpKind::ReadX | crate::stats::OpKind::WriteX))
        .map(|d| d.mb_s)
        .sum()
}

/// A replay plan as a cell of the pipeline: one client per job, each in
/// its own directory `c<N>` of the work directory.
pub struct ReplayCell<'a> {
    name: &'a str,
    plan: &'a ReplayPlan,
    /// No progress bars (`--quiet`, or the lab's).
    quiet: bool,
    /// The work directory and its description, once prepared.
    work: Option<(PathBuf, TargetInfo)>,
    out: Option<RunOut>,
}

impl<'a> ReplayCell<'a> {
    /// The cell `name` of `plan`, with progress bars unless `quiet`.
    pub fn new(name: &'a str, plan: &'a ReplayPlan, quiet: bool) -> Self {
        ReplayCell {
            name,
            plan,
            quiet,
            work: None,
            out: None,
        }
    }

    fn work(&self) -> &(PathBuf, TargetInfo) {
        self.work.as_ref().expect("prepared before the timed phase")
    }
}

impl CellWork for ReplayCell<'_> {
    type Worker = ReplayClient;

    fn name(&self) -> &str {
        self.name
    }

    fn prepare(&mut self, _stop: &AtomicBool) -> Result<Guard, AppError> {
        let target::WorkDir { info, path, guard } = target::work_dir(&self.plan.target)?;
        for n in 0..self.plan.clients {
            let d = path.join(format!("c{n}"));
            std::fs::create_dir(&d).map_err(io_err(format!("creating {}", d.display())))?;
        }
        self.work = Some((path, info));
        Ok(guard)
    }

    fn config(&self, _phase: usize) -> RunConfig {
        RunConfig {
            jobs: self.plan.clients as usize,
            runtime: Some(self.plan.time),
            ramp: self.plan.warmup,
            rate: None,
            bucket_ns: vec![2_000_000],
            depth: 1,
            batch: 1,
            stop_on_error: self.plan.stop_on_error,
            stonewall: None,
            ..Default::default()
        }
    }

    fn progress(&self, _phase: usize) -> Progress {
        Progress::with_lines(!self.quiet, self.name.to_string())
    }

    fn worker(&self, _phase: usize, n: usize) -> Result<(Box<dyn Engine>, ReplayClient), String> {
        let d = self.work().0.join(format!("c{n}"));
        let wl = ReplayClient::new(self.plan, n as u32, &d).map_err(|e| format!("opening {}: {e}", d.display()))?;
        // replay issues its POSIX calls itself; the engine slot is unused
        Ok((Box::new(NullEngine) as Box<dyn Engine>, wl))
    }

    fn end_phase(&mut self, _phase: usize, out: RunOut) -> ControlFlow<()> {
        self.out = Some(out);
        ControlFlow::Continue(())
    }

    fn summarise(&mut self) -> Vec<Cell> {
        let out = self.out.take().expect("the phase ran");
        let mut warnings = Vec::new();
        if self.plan.timestamps && !self.plan.loadfile.has_timestamps {
            warnings.push("the load file has no timestamps: clients ran flat out".into());
        }
        vec![super::cell::from_run(
            self.name,
            crate::model::CellPlan::Replay(self.plan.clone()),
            self.work().1.clone(),
            warnings,
            out,
        )]
    }
}

/// `fslab replay`: one cell, written to every output.
pub fn run_replay(plan: ReplayPlan, presentation: Presentation, stop: &AtomicBool) -> Result<Report, AppError> {
    pipeline::run_single(
        "replay",
        presentation.outputs,
        ReplayCell::new("replay", &plan, presentation.quiet),
        stop,
    )
}
