//! `fslab fio`: runs a fio job list segment by segment (a segment ends at
//! each stonewall), all jobs of a segment at once, and reports them as fio
//! does: one result per job clone, or one per reporting group with
//! group_reporting.
//!
//! The jobs of a segment differ as fio's may (engine, iodepth, rate,
//! runtime, ramp, block sizes, mix, files, thinktime): each job is its own
//! group of the runner (`runner::run_groups`), with its own config, and all
//! groups are released together. The segment ends when every job has
//! (unless one's `exitall` ends the others: `control::ends_run`).

mod control;
mod engines;
mod exec;
mod head;
mod logs;
mod net;
mod noio;

use super::io::io_config;
use super::pipeline::{installed_hooks, run_cell, CellWork};
use super::AppError;
use crate::engine::Engine;
use crate::model::{Cell, CellPlan, FioCellPlan, FioJob, Report};
use crate::plan::fio::{FioEngine, FioJobPlan, FioPlan};
use crate::plan::{Outputs, Presentation};
use crate::runner::{self, Group, MakeFn, Progress, RunConfig, RunOut, WorkerOut};
use crate::target::{self, Guard, Prepared, TargetError};
use engines::FioWorker;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
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

/// A job's run-wide figures without its workers.
fn summary_of(r: &RunOut) -> RunOut {
    RunOut {
        stats: r.stats.clone(),
        jobs: Vec::new(),
        elapsed_ns: r.elapsed_ns,
        series: r.series.clone(),
        interrupted: r.interrupted,
        cpu_process: r.cpu_process,
        depth_counts: r.depth_counts.clone(),
        halted_on_error: r.halted_on_error,
        host: r.host.clone(),
        ranks: Vec::new(),
        stonewall: r.stonewall.clone(),
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
    /// Each job's run (a group of the runner), set by `run_phase`.
    runs: Mutex<Vec<RunOut>>,
    out: Option<RunOut>,
    interrupted: bool,
    /// The earlier segments' cells: an abort writes them with this one's.
    before: &'a Report,
    /// Each job's log files, per clone (`logs::write`).
    log_files: Vec<Vec<crate::plan::fio::output::LogFiles>>,
    /// The token every worker doing I/O holds (cpuio's exit_on_io_done);
    /// None when a later segment does I/O: fio counts a job yet to run.
    io_alive: Option<Arc<()>>,
}

/// Whether a job does I/O, as fio's fio_running_or_pending_io_threads
/// counts it (every engine but those without I/O).
fn does_io(j: &FioJobPlan) -> bool {
    !matches!(j.fio.engine, FioEngine::Cpu(_) | FioEngine::Exec(_))
}

/// The token of segment `seg`'s workers doing I/O, as fio 3.33's
/// fio_running_or_pending_io_threads decides exit_on_io_done: a job of a
/// later segment is pending whatever its engine (its engine is not set up
/// yet), so it never ends then (None); nor when no job of the run does
/// I/O (fio: "we only had cpuio threads"). With I/O jobs only in earlier
/// segments, they have exited: the token is the segment's alone, and a
/// cpuio job with exit_on_io_done ends at once, as fio's.
fn io_token(plan: &FioPlan, seg: usize) -> Option<Arc<()>> {
    let later = plan.jobs.iter().any(|j| j.segment > seg);
    let io = plan.jobs.iter().any(|j| j.segment <= seg && does_io(j));
    (!later && io).then(|| Arc::new(()))
}

/// The jobs of segment `seg` that work on an earlier job's file
/// (`FioJobPlan::reuse`, kept in `kept` past its segment), by index: each
/// with that file as its target, at its size now (fio sizes such a job
/// from its file as it starts). The file is fslab's own, so writing it
/// needs no --force-overwrite.
fn reused_plans(plan: &FioPlan, seg: usize, kept: &[(usize, target::Prepared)]) -> Vec<(usize, FioJobPlan)> {
    let mut out = Vec::new();
    for (i, j) in plan.jobs.iter().enumerate().filter(|(_, j)| j.segment == seg) {
        let Some(k) = j.reuse else { continue };
        let Some(file) = kept.iter().find(|(x, _)| *x == k).and_then(|(_, p)| p.files.first()) else {
            continue;
        };
        let mut j = j.clone();
        j.plan.shape.size = Some(std::fs::metadata(file).map_or(0, |m| m.len()));
        j.plan.target = file.clone();
        j.plan.region.reused = true;
        j.plan.region.fresh = None;
        j.plan.consent.force_overwrite = true;
        out.push((i, j));
    }
    out
}

impl<'a> FioSegment<'a> {
    /// The segment of `jobs` (its jobs, some with their target settled at
    /// run time: `reused_plans`) among `plan`'s.
    fn new(plan: &'a FioPlan, jobs: Vec<&'a FioJobPlan>, quiet: bool, before: &'a Report) -> Self {
        let slots = jobs
            .iter()
            .enumerate()
            .flat_map(|(k, j)| (0..j.plan.jobs).map(move |c| (k, c)))
            .collect();
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        FioSegment {
            label: names.join(","),
            quiet,
            slots,
            prepared: Vec::new(),
            runs: Mutex::new(Vec::new()),
            out: None,
            interrupted: false,
            before,
            log_files: crate::plan::fio::output::log_files(&jobs, &plan.jobs),
            io_alive: io_token(plan, jobs.first().map_or(0, |j| j.segment)),
            jobs,
        }
    }

    /// The first worker of job `k` among the segment's workers.
    fn first_slot(&self, k: usize) -> usize {
        self.jobs[..k].iter().map(|j| j.plan.jobs as usize).sum()
    }

    /// How job `k` is driven: its own engine, depth, rate, runtime, ramp.
    fn job_config(&self, k: usize) -> RunConfig {
        let j = self.jobs[k];
        let mut cfg = control::config(j, io_config(&j.plan, j.plan.jobs as usize, None));
        cfg.log = logs::spec(j, &self.log_files[k]);
        cfg.wait_for = control::wait_for(&self.jobs, k);
        // under group_reporting the group's jobs are checked as one (fio)
        let shared = self.jobs.iter().any(|o| o.group == j.group && o.group_reporting);
        cfg.steady = j.fio.steady.plan().map(|plan| runner::SteadyCheck {
            plan,
            shared: shared.then_some(j.group),
        });
        cfg
    }

    /// Job `k`'s cell from workers `ws` (`numjobs` of them); `out` holds the
    /// run-wide figures (series, interruption) of the jobs it covers.
    fn cell(&self, k: usize, ws: Vec<WorkerOut>, out: &RunOut, series: bool, numjobs: usize) -> Cell {
        let j = self.jobs[k];
        let plan = CellPlan::Fio(FioCellPlan {
            io: j.plan.clone(),
            fio: FioJob {
                groupid: j.group,
                jobs: numjobs,
                options: j.options.iter().cloned().collect(),
                report: j.fio.logs.report,
                // as fio's group report: the last job's depth
                latency_depth: ws.iter().rev().find_map(|w| w.latency_depth),
            },
        });
        let sub = subset(ws, out, series);
        let p = &self.prepared[k];
        super::cell::from_run(&j.name, plan, p.info.clone(), p.warnings.clone(), sub)
    }
}

impl CellWork for FioSegment<'_> {
    type Worker = FioWorker;

    fn name(&self) -> &str {
        &self.label
    }

    fn prepare(&mut self, stop: &AtomicBool) -> Result<Guard, AppError> {
        // built whole or dropped whole: what an error leaves is removed at once
        let mut prepared = Vec::new();
        for j in &self.jobs {
            prepared.push(target::prepare(&j.plan, stop, &|_, _| {}).map_err(|e| located(j, e))?);
        }
        self.prepared = prepared;
        // each Prepared keeps its own guard
        Ok(Guard::default())
    }

    /// The segment as a whole: every job's workers; each job's own config
    /// is `job_config`, used by `run_phase`.
    fn config(&self, _phase: usize) -> RunConfig {
        let mut cfg = self.job_config(0);
        cfg.jobs = self.slots.len();
        cfg.runtime = (0..self.jobs.len())
            .map(|k| self.job_config(k))
            .map(|c| c.runtime.map(|r| r + c.ramp + c.start_delay))
            .collect::<Option<Vec<_>>>()
            .and_then(|v| v.into_iter().max());
        cfg
    }

    fn progress(&self, _phase: usize) -> Progress {
        Progress::new(!self.quiet, self.label.clone(), None)
    }

    fn worker(&self, _phase: usize, w: usize) -> Result<(Box<dyn Engine>, FioWorker), String> {
        let (k, c) = self.slots[w];
        engines::worker(self.jobs[k], &self.prepared[k], c, self.io_alive.as_ref())
    }

    /// Every job as its own group, released together.
    fn run_phase(&self, _phase: usize, _cfg: &RunConfig, stop: &AtomicBool, progress: &Progress) -> RunOut {
        let makes: Vec<_> = (0..self.jobs.len())
            .map(|k| {
                let first = self.first_slot(k);
                move |c: usize| self.worker(0, first + c)
            })
            .collect();
        let groups: Vec<Group<FioWorker>> = makes
            .iter()
            .enumerate()
            .map(|(k, make)| Group {
                cfg: self.job_config(k),
                make: make as &MakeFn<FioWorker>,
                pacing: None,
                windows: Vec::new(),
                ends_run: control::ends_run(self.jobs[k]),
            })
            .collect();
        let mut out = runner::run_groups(&groups, stop, progress, None);
        logs::write(&self.log_files, &mut out.groups, &self.jobs);
        let mut all = runner::merge_groups(out.groups.iter().map(summary_of).collect());
        all.jobs.clear();
        *self.runs.lock().unwrap_or_else(|e| e.into_inner()) = out.groups;
        all
    }

    fn end_phase(&mut self, _phase: usize, out: RunOut) -> ControlFlow<()> {
        self.interrupted = out.interrupted;
        self.out = Some(out);
        ControlFlow::Continue(())
    }

    fn summarise(&mut self) -> Vec<Cell> {
        let mut runs = std::mem::take(self.runs.get_mut().unwrap_or_else(|e| e.into_inner()));
        // the run-wide figures of each job, and its workers
        let mut workers: Vec<Option<WorkerOut>> = Vec::new();
        for r in &mut runs {
            workers.extend(std::mem::take(&mut r.jobs).into_iter().map(Some));
        }
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
                let out = runner::merge_groups(members.iter().map(|&k| summary_of(&runs[k])).collect());
                cells.push(self.cell(members[0], ws, &out, true, n));
            } else {
                for &k in &members {
                    // one clone's own series is its job's when it is alone
                    let alone = jobs[k].plan.jobs == 1;
                    for w in (0..self.slots.len()).filter(|&w| self.slots[w].0 == k) {
                        if let Some(ws) = workers[w].take() {
                            cells.push(self.cell(k, vec![ws], &runs[k], alone, 1));
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
/// A refusal of the target code (which names `fslab io`'s flags) told as
/// the fio option and file:line the flag came from.
fn located(j: &FioJobPlan, e: TargetError) -> AppError {
    match e {
        TargetError::Refused { flag, msg } => {
            let e = j.locate(&flag, &msg);
            AppError::Target(TargetError::Refused {
                flag: e.flag.into(),
                msg: e.msg,
            })
        }
        e => AppError::Target(e),
    }
}

pub fn run_fio(plan: FioPlan, presentation: Presentation, stop: &AtomicBool) -> Result<Report, AppError> {
    let mut r = Report::new("fio", SystemTime::now());
    r.fio_jobs = plan.jobs.iter().map(head::head).collect();
    let Presentation { mut outputs, quiet } = presentation;
    // every job's target, before the first segment runs; a refusal names
    // the fio option and line the target (or size) came from
    for j in plan.jobs.iter().filter(|j| j.reuse.is_none()) {
        target::check_plan(&j.plan).map_err(|e| located(j, e))?;
    }
    // the files later jobs work on (`FioJobPlan::reuse`), past their segment
    let mut kept: Vec<(usize, target::Prepared)> = Vec::new();
    // after the refusals: a refused run says one line
    for n in &plan.notes {
        eprintln!("fslab fio: note: {}", crate::units::shown(n));
    }
    // after the refusals, before the first segment
    r.calibration = crate::app::calibration::for_run(false);
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
        let reused = reused_plans(&plan, seg, &kept);
        let idxs: Vec<usize> = (0..plan.jobs.len()).filter(|&i| plan.jobs[i].segment == seg).collect();
        let jobs = (idxs.iter())
            .map(|&i| reused.iter().find(|(k, _)| *k == i).map_or(&plan.jobs[i], |(_, j)| j))
            .collect();
        let mut work = FioSegment::new(&plan, jobs, quiet, &r);
        let cells = run_cell(&mut work, stop, &installed_hooks());
        let interrupted = work.interrupted;
        let ends_later = control::ends_later(&work.jobs);
        // what each job of the segment laid out, for fio's lines before the run
        let laid: Vec<(Option<usize>, Vec<crate::model::LaidOut>)> = (work.prepared.iter().zip(&work.jobs))
            .map(|(p, j)| (plan.jobs.iter().position(|o| std::ptr::eq(o, *j)), head::laid_out(p)))
            .collect();
        // the segment's files go, but for those a later job works on
        for (p, i) in std::mem::take(&mut work.prepared).into_iter().zip(&idxs) {
            if plan.jobs.iter().any(|j| j.reuse == Some(*i)) {
                kept.push((*i, p));
            }
        }
        drop(work);
        for (i, l) in laid {
            if let Some(h) = i.and_then(|i| r.fio_jobs.get_mut(i)) {
                h.laid_out = l;
            }
        }
        match cells {
            Ok(Some(cells)) => {
                // as fio, a verify failure is told on stderr whatever the
                // output format; so are fslab's warnings, which fio's
                // outputs have no line for
                for c in &cells {
                    for w in c.warnings.iter().chain(&c.job_errors) {
                        eprintln!(
                            "fslab fio: {}: {}",
                            crate::units::shown(&c.name),
                            crate::units::shown(w)
                        );
                    }
                }
                r.cells.extend(cells)
            }
            Ok(None) => r.interrupted = true,
            Err(e) if r.cells.is_empty() => return Err(e),
            Err(e) => {
                // earlier segments measured something: keep it (after the
                // kept files go: they may have filled the filesystem)
                kept.clear();
                write(&mut r, &mut outputs)?;
                return Err(e);
            }
        }
        r.interrupted |= interrupted;
        if r.interrupted || ends_later {
            break;
        }
    }
    // a fill_device job's file may have filled the filesystem the
    // results go to: it is removed first
    drop(kept);
    write(&mut r, &mut outputs)?;
    Ok(r)
}

fn write(r: &mut Report, outputs: &mut Outputs) -> Result<(), AppError> {
    r.max_rss_kib = crate::stats::cpu::max_rss_kib();
    r.finished_at = Some(humantime::format_rfc3339_seconds(SystemTime::now()).to_string());
    crate::app::results::write_outputs(r, outputs, true).map_err(AppError::Output)
}
