//! `fslab fio`: runs a fio job list segment by segment (a segment ends at
//! each stonewall), all jobs of a segment at once, and reports them as fio
//! does: one result per job clone, or one per reporting group with
//! group_reporting.

use super::io::{io_config, io_worker};
use super::pipeline::{installed_hooks, run_cell, CellWork};
use super::AppError;
use crate::engine::Engine;
use crate::model::{Cell, CellPlan, FioCellPlan, FioJob, Report};
use crate::plan::fio::{FioFormat, FioJobPlan, FioPlan};
use crate::plan::{OutputFormat, OutputSpec, Outputs};
use crate::runner::{Progress, RunConfig, RunOut, WorkerOut};
use crate::target::{self, Guard, Prepared};
use crate::workload::io::IoWorkload;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

/// A RunOut for a subset of a run's workers (one clone, or a reporting group).
fn subset(workers: Vec<WorkerOut>, all: &RunOut, with_series: bool) -> RunOut {
    let mut stats: crate::stats::KindStats = Default::default();
    let mut cpu = crate::stats::cpu::CpuTimes::default();
    let mut depth: Vec<u64> = Vec::new();
    for w in &workers {
        for (a, b) in stats.iter_mut().zip(w.stats.iter()) {
            *a += b;
        }
        cpu += w.cpu;
        if depth.len() < w.depth_counts.len() {
            depth.resize(w.depth_counts.len(), 0);
        }
        for (a, b) in depth.iter_mut().zip(&w.depth_counts) {
            *a += b;
        }
    }
    RunOut {
        stats,
        elapsed_ns: workers.iter().map(|w| w.elapsed_ns).max().unwrap_or(0),
        jobs: workers,
        series: if with_series { all.series.clone() } else { Vec::new() },
        interrupted: all.interrupted,
        cpu_process: cpu,
        depth_counts: depth,
        halted_on_error: all.halted_on_error,
        host: all.host.clone(),
        ranks: Vec::new(),
        stonewall: None,
    }
}

/// One segment of a fio job list as a cell of the pipeline: every clone of
/// every job of the segment is one worker, all released together. Each
/// segment has its own target (files laid out after the previous
/// segment's are removed), so each is one `run_cell`, and its summary is a
/// cell per job clone, or per reporting group with group_reporting.
struct FioSegment<'a> {
    label: String,
    quiet: bool,
    jobs: Vec<&'a FioJobPlan>,
    /// worker index -> (job, clone)
    slots: Vec<(usize, u32)>,
    /// One per job; each removes its files when dropped.
    prepared: Vec<Prepared>,
    out: Option<RunOut>,
    interrupted: bool,
    /// The earlier segments' cells: an abort writes them with this one's.
    before: &'a Report,
}

impl<'a> FioSegment<'a> {
    fn new(plan: &'a FioPlan, seg: usize, before: &'a Report) -> Self {
        let jobs: Vec<_> = plan.jobs.iter().filter(|j| j.segment == seg).collect();
        let slots = jobs
            .iter()
            .enumerate()
            .flat_map(|(k, j)| (0..j.plan.jobs).map(move |c| (k, c)))
            .collect();
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        FioSegment {
            label: names.join(","),
            quiet: plan.quiet,
            jobs,
            slots,
            prepared: Vec::new(),
            out: None,
            interrupted: false,
            before,
        }
    }

    /// Job `k`'s cell from workers `ws` (`numjobs` of them).
    fn cell(&self, k: usize, ws: Vec<WorkerOut>, series: bool, numjobs: usize) -> Cell {
        let j = self.jobs[k];
        let out = self.out.as_ref().expect("the segment ran");
        let plan = CellPlan::Fio(FioCellPlan {
            io: j.plan.clone(),
            fio: FioJob {
                groupid: j.group,
                jobs: numjobs,
                options: j.options.iter().cloned().collect(),
            },
        });
        let sub = subset(ws, out, series);
        let p = &self.prepared[k];
        super::cell::from_run(&j.name, plan, p.info.clone(), p.warnings.clone(), sub)
    }
}

impl CellWork for FioSegment<'_> {
    type Worker = IoWorkload;

    fn name(&self) -> &str {
        &self.label
    }

    fn prepare(&mut self, stop: &AtomicBool) -> Result<Guard, AppError> {
        // built whole or dropped whole: what an error leaves is removed at once
        let mut prepared = Vec::new();
        for j in &self.jobs {
            prepared.push(target::prepare(&j.plan, stop, &|_, _| {})?);
        }
        self.prepared = prepared;
        // each Prepared keeps its own guard
        Ok(Guard::default())
    }

    fn config(&self, _phase: usize) -> RunConfig {
        io_config(&self.jobs[0].plan, self.slots.len(), None)
    }

    fn progress(&self, _phase: usize) -> Progress {
        Progress::new(!self.quiet, self.label.clone(), None)
    }

    fn worker(&self, _phase: usize, w: usize) -> Result<(Box<dyn Engine>, IoWorkload), String> {
        let (k, c) = self.slots[w];
        io_worker(&self.jobs[k].plan, &self.prepared[k], c, &self.jobs[k].name)
    }

    fn end_phase(&mut self, _phase: usize, out: RunOut) -> ControlFlow<()> {
        self.interrupted = out.interrupted;
        self.out = Some(out);
        ControlFlow::Continue(())
    }

    fn summarise(&mut self) -> Vec<Cell> {
        let out = self.out.as_mut().expect("the segment ran");
        let mut workers: Vec<Option<WorkerOut>> = std::mem::take(&mut out.jobs).into_iter().map(Some).collect();
        let jobs = &self.jobs;
        let mut groups: Vec<usize> = jobs.iter().map(|j| j.group).collect();
        groups.dedup();
        let mut cells = Vec::new();
        for g in groups {
            let members: Vec<usize> = (0..jobs.len()).filter(|&k| jobs[k].group == g).collect();
            if members.iter().any(|&k| jobs[k].group_reporting) {
                let ws: Vec<WorkerOut> = (0..self.slots.len())
                    .filter(|&w| members.contains(&self.slots[w].0))
                    .filter_map(|w| workers[w].take())
                    .collect();
                let n = ws.len();
                cells.push(self.cell(members[0], ws, true, n));
            } else {
                for &k in &members {
                    for w in (0..self.slots.len()).filter(|&w| self.slots[w].0 == k) {
                        if let Some(ws) = workers[w].take() {
                            cells.push(self.cell(k, vec![ws], false, 1));
                        }
                    }
                }
            }
        }
        cells
    }

    fn publish(&self, cells: &[Cell]) {
        let mut r = self.before.clone();
        r.cells.extend(cells.iter().cloned());
        r.interrupted |= self.interrupted;
        crate::app::abort::publish_report(&r);
    }
}

/// Runs every job; the report has one cell per reported job or group.
pub fn run_fio(plan: FioPlan, stop: &AtomicBool) -> Result<Report, AppError> {
    for n in &plan.notes {
        eprintln!("fslab fio: note: {n}");
    }
    let mut r = Report::new("fio", SystemTime::now());
    let mut outputs = Outputs(vec![OutputSpec {
        format: match plan.format {
            FioFormat::Json => OutputFormat::FioJson,
            FioFormat::Normal => OutputFormat::FioText,
        },
        path: plan.output.clone(),
    }]);
    crate::app::abort::expect_results(&r, &outputs);
    let segments = plan.jobs.iter().map(|j| j.segment).max().unwrap_or(0) + 1;
    for seg in 0..segments {
        if !plan.jobs.iter().any(|j| j.segment == seg) {
            continue;
        }
        if stop.load(Ordering::Relaxed) {
            r.interrupted = true;
            break;
        }
        let mut work = FioSegment::new(&plan, seg, &r);
        let cells = run_cell(&mut work, stop, &installed_hooks());
        let interrupted = work.interrupted;
        // the segment's files go
        drop(work);
        match cells {
            Ok(Some(cells)) => r.cells.extend(cells),
            Ok(None) => r.interrupted = true,
            Err(e) if r.cells.is_empty() => return Err(e),
            Err(e) => {
                // earlier segments measured something: keep it
                write(&mut r, &mut outputs)?;
                return Err(e);
            }
        }
        r.interrupted |= interrupted;
        if r.interrupted {
            break;
        }
    }
    write(&mut r, &mut outputs)?;
    Ok(r)
}

fn write(r: &mut Report, outputs: &mut Outputs) -> Result<(), AppError> {
    r.max_rss_kib = crate::stats::cpu::max_rss_kib();
    crate::app::abort::write_outputs(r, outputs, true).map_err(AppError::Output)
}
