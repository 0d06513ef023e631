//! `fslab fio`: runs a fio job list segment by segment (a segment ends at
//! each stonewall), all jobs of a segment at once, and reports them as fio
//! does: one result per job clone, or one per reporting group with
//! group_reporting.

use super::AppError;
use crate::model::{CellPlan, FioCellPlan, FioJob, Report};
use crate::plan::fio::{FioFormat, FioPlan};
use crate::plan::{OutputFormat, OutputSpec, Outputs};
use crate::runner::{self, Progress, RunConfig, RunOut, WorkerOut};
use crate::target::{self, TargetError};
use crate::workload::io::IoWorkload;
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
    'segments: for seg in 0..segments {
        let jobs: Vec<_> = plan.jobs.iter().filter(|j| j.segment == seg).collect();
        if jobs.is_empty() {
            continue;
        }
        if stop.load(Ordering::Relaxed) {
            r.interrupted = true;
            break;
        }
        let mut prepared = Vec::new();
        for j in &jobs {
            match target::prepare(&j.plan, stop, &|_, _| {}) {
                Ok(p) => prepared.push(p),
                Err(TargetError::Interrupted) => {
                    r.interrupted = true;
                    break 'segments;
                }
                Err(e) if r.cells.is_empty() => return Err(e.into()),
                Err(e) => {
                    // earlier segments measured something: keep it
                    drop(prepared);
                    write(&mut r, &mut outputs)?;
                    return Err(e.into());
                }
            }
        }
        // worker index -> (job, clone)
        let slots: Vec<(usize, u32)> = jobs
            .iter()
            .enumerate()
            .flat_map(|(k, j)| (0..j.plan.jobs).map(move |c| (k, c)))
            .collect();
        let first = &jobs[0].plan;
        let cfg = RunConfig {
            jobs: slots.len(),
            runtime: first.runtime,
            ramp: first.ramp,
            rate: first.rate_iops,
            bucket_ns: first.lat_buckets_ns.clone(),
            depth: first.iodepth as usize,
            batch: first.iodepth_batch as usize,
            stop_on_error: first.stop_on_error,
            stonewall: None,
        };
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        let progress = Progress::new(!plan.quiet, names.join(","), None);
        let mut out = runner::run(&cfg, stop, &progress, |w| {
            let (k, c) = slots[w];
            let p = &jobs[k].plan;
            let prep = &prepared[k];
            let mut files = Vec::new();
            if p.engine != crate::engine::EngineKind::Null {
                for path in prep.files_for(c as usize) {
                    let f = prep
                        .open(path, p.writes(), p.direct)
                        .map_err(|e| format!("{}: opening {}: {e}", jobs[k].name, path.display()))?;
                    files.push(f);
                }
            }
            let shared = prep.files.len() == prep.per_job && p.jobs > 1;
            let wl = IoWorkload::new(p, c, files, prep.file_size, shared, p.iodepth as usize);
            let mut engine = p.engine.build(&p.uring).map_err(|e| format!("{}: {e}", jobs[k].name))?;
            // SAFETY: the buffers are the workload's heap allocations, which
            // do not move with it and live until the runner drops the
            // workload, after the engine (runner::drive); its files stay open as long.
            unsafe {
                engine.register(
                    &crate::workload::Workload::files(&wl),
                    &crate::workload::Workload::buffers(&wl),
                )
            }
            .map_err(|e| format!("{}: {e}", jobs[k].name))?;
            Ok((engine, wl))
        });
        let mut workers: Vec<Option<WorkerOut>> = std::mem::take(&mut out.jobs).into_iter().map(Some).collect();
        let groups: Vec<usize> = {
            let mut g: Vec<usize> = jobs.iter().map(|j| j.group).collect();
            g.dedup();
            g
        };
        for g in groups {
            let members: Vec<usize> = (0..jobs.len()).filter(|&k| jobs[k].group == g).collect();
            let grouped = members.iter().any(|&k| jobs[k].group_reporting);
            let emit = |k: usize, ws: Vec<WorkerOut>, series: bool, numjobs: usize| {
                let j = jobs[k];
                let fio = FioJob {
                    groupid: j.group,
                    jobs: numjobs,
                    options: j.options.iter().cloned().collect(),
                };
                let plan = CellPlan::Fio(FioCellPlan {
                    io: j.plan.clone(),
                    fio,
                });
                let sub = subset(ws, &out, series);
                super::cell::from_run(
                    &j.name,
                    plan,
                    prepared[k].info.clone(),
                    prepared[k].warnings.clone(),
                    sub,
                )
            };
            if grouped {
                let ws: Vec<WorkerOut> = (0..slots.len())
                    .filter(|&w| members.contains(&slots[w].0))
                    .filter_map(|w| workers[w].take())
                    .collect();
                let n = ws.len();
                r.cells.push(emit(members[0], ws, true, n));
            } else {
                for &k in &members {
                    for w in (0..slots.len()).filter(|&w| slots[w].0 == k) {
                        if let Some(ws) = workers[w].take() {
                            r.cells.push(emit(k, vec![ws], false, 1));
                        }
                    }
                }
            }
        }
        r.interrupted |= out.interrupted;
        // measured: an abort while the files go must not lose it
        crate::app::abort::publish_report(&r);
        drop(prepared);
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
