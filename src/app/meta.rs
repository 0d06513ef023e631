//! `fslab meta`: lay out the directories, then run bonnie++'s phases one
//! after the other (all jobs start each phase together), `sync` between phases.

use super::{io_err, refused, AppError};
use crate::engine::UringOpts;
use crate::model::{Cell, CellPlan, CpuSummary, DirResult, Report, TargetInfo};
use crate::plan::{ExtraPhase, MetaPlan, Order};
use crate::runner::{self, Progress, RunConfig};
use crate::stats::cpu::CpuTimes;
use crate::target;
use crate::workload::meta::{JobDirs, MetaWorkload, PhaseKind};
use std::ffi::CString;
use std::os::fd::AsRawFd;
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
    // SAFETY: valid fd, NUL-terminated name, buffer of `size` bytes.
    let r = unsafe { libc::fsetxattr(f.as_raw_fd(), x.name.as_ptr(), value.as_ptr() as *const _, x.size, 0) };
    let err = std::io::Error::last_os_error();
    drop(f);
    let _ = std::fs::remove_file(&p);
    if r != 0 {
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

/// `fslab meta`: one cell, written to every output.
pub fn run_meta(mut plan: MetaPlan, stop: &AtomicBool) -> Result<Report, AppError> {
    let r = super::start_report("meta", &plan.outputs);
    let cell = meta_cell("meta", &plan, stop)?;
    super::single_cell_report(r, Some(cell), &mut plan.outputs)
}

/// Measures one metadata plan: one cell whose directions are the phases.
pub fn meta_cell(cell_name: &str, plan: &MetaPlan, stop: &AtomicBool) -> Result<Cell, AppError> {
    let target::WorkDir {
        info,
        path: work,
        guard,
    } = target::work_dir(&plan.target)?;
    target::ranks::agree(check_xattrs(plan, &work, &info))?;
    let dirs = target::ranks::agree(make_dirs(plan, &work))?;
    let cfg = RunConfig {
        jobs: plan.jobs as usize,
        runtime: None,
        ramp: std::time::Duration::ZERO,
        rate: None,
        bucket_ns: vec![2_000_000],
        depth: 1,
        batch: 1,
        stop_on_error: plan.stop_on_error,
        stonewall: None,
    };
    let uring = UringOpts {
        depth: 1,
        ..Default::default()
    };
    let mut directions = Vec::new();
    let mut cpu_total = CpuTimes::default();
    let mut elapsed_total = 0;
    let mut job_errors = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let mut interrupted = false;
    let mut renamed = false;
    let mut last_order = None;
    // Files each of this rank's jobs made, when a stonewall cut the create short.
    let mut created: Option<Vec<u64>> = None;
    let cell_plan = CellPlan::Meta(plan.clone());
    // the phases so far, as an interrupted cell
    let partial =
        |directions: &[DirResult], job_errors: &[String], warnings: &[String], cpu: CpuTimes, elapsed: u64| Cell {
            name: cell_name.into(),
            plan: cell_plan.clone(),
            target: info.clone(),
            warnings: warnings.to_vec(),
            interrupted: true,
            elapsed_ns: elapsed,
            directions: directions.to_vec(),
            cpu: CpuSummary {
                user_ns: cpu.user_ns,
                sys_ns: cpu.sys_ns,
                percent_of_core: cpu.percent_of_core(elapsed),
                jobs: Vec::new(),
            },
            series: Vec::new(),
            job_errors: job_errors.to_vec(),
            inflight_depth: Vec::new(),
            probe: None,
            lab: None,
            error: None,
        };
    for (order, kind) in phases(plan) {
        if crate::dist::any(stop.load(Ordering::Relaxed)) {
            interrupted = true;
            break;
        }
        if last_order != Some(order) {
            renamed = false;
            last_order = Some(order);
            created = None;
        }
        let cfg = RunConfig {
            stonewall: if kind == PhaseKind::Create {
                plan.stonewall
            } else {
                None
            },
            ..cfg.clone()
        };
        let name = phase_name(order, kind);
        let progress = Progress::new(!plan.quiet, name.clone(), None);
        let out = runner::run(&cfg, stop, &progress, |j| {
            let d = Arc::clone(&dirs[if plan.shared_dirs { 0 } else { j }]);
            let made = created.as_ref().map(|c| c[j]);
            let wl = MetaWorkload::new(plan, j as u32, d, kind, order, renamed, made);
            let engine = plan.engine.build(&uring).map_err(|e| format!("job {j}: {e}"))?;
            Ok((engine, wl))
        });
        if kind == PhaseKind::Rename {
            renamed = !renamed;
        }
        if kind == PhaseKind::Create && out.stonewall.is_some() {
            created = Some(out.local_jobs().iter().map(|o| o.items).collect());
        }
        // bonnie++ calls sync() before it stops the clock of each phase that
        // changes the filesystem (create, delete; not stat): fslab does the
        // same with syncfs(2) on the target's filesystem, or the rates would
        // not be comparable. sync() would also wait for every other
        // filesystem's dirty data (another tenant's copy, a previous cell's
        // stream), which is not the target's work.
        let mut elapsed = out.elapsed_ns;
        let mut cpu = out.cpu_process;
        let modifies = matches!(kind, PhaseKind::Create | PhaseKind::Delete | PhaseKind::Rename);
        if plan.sync_after_phase && modifies && !out.interrupted {
            let (t, c) = (std::time::Instant::now(), CpuTimes::process());
            if rustix::fs::syncfs(&dirs[0].fds[0]).is_err() {
                rustix::fs::sync();
            }
            // every rank syncs the target on its machine; the phase ends with the slowest
            let took = crate::dist::coordinator().all_gather_u64(t.elapsed().as_nanos() as u64);
            elapsed += took.into_iter().max().unwrap_or(0);
            cpu += CpuTimes::process() - c;
        }
        let st = &out.stats[kind.dir().idx()];
        let mut d = super::cell::with_ranks(DirResult::of(kind.dir(), st, elapsed), &out);
        d.phase = Some(name);
        d.elapsed_ns = Some(elapsed);
        d.cpu_percent = Some(cpu.percent_of_core(elapsed));
        let failed = !st.errors.is_empty();
        directions.push(d);
        cpu_total += cpu;
        elapsed_total += elapsed;
        job_errors.extend(out.jobs.iter().filter_map(|o| o.error.clone()));
        for n in out.jobs.iter().flat_map(|o| &o.notes) {
            if !warnings.contains(n) {
                warnings.push(n.clone());
            }
        }
        // an abort from now on (a signal during the sync of the next phase,
        // say) writes the phases done
        crate::app::abort::publish_cell(&partial(&directions, &job_errors, &warnings, cpu_total, elapsed_total));
        if out.interrupted {
            interrupted = true;
            break;
        }
        // A phase with errors ends the run in either --on-error mode: later
        // phases would stat and delete files that were never made.
        if failed || !job_errors.is_empty() {
            break;
        }
    }
    let cell = Cell {
        interrupted,
        ..partial(&directions, &job_errors, &warnings, cpu_total, elapsed_total)
    };
    // measured: an abort while the files go must not lose it
    crate::app::abort::publish_cell(&cell);
    guard.finish();
    Ok(cell)
}
