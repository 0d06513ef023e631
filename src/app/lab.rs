//! `fslab run`: every (repeat x filesystem x workload) cell of a lab plan,
//! each on a fresh scratch filesystem unless the plan says otherwise. Repeats
//! are the outer loop, so slow drift of the machine (other tenants, a
//! warming device) spreads over all filesystems instead of favouring one;
//! cells under another kernel run in one guest per kernel per segment of
//! repeats (`guest`).
//! The result files are rewritten after every cell; a cell that fails (mkfs
//! refuses an option, no O_DIRECT) is recorded with its reason and the run
//! goes on.

mod guest;

use super::adaptive::Adaptive;
use super::{run_one, AppError, IoCell, MetaCell, ProbeCell, ReplayCell};
use crate::model::TargetInfo;
use crate::model::{Cell, KernelTag, LabTag, Report};
use crate::plan::lab::KernelPlan;
use crate::plan::{CellPlan, FsKind, FsPlan, LabPlan, Outputs, Presentation, WorkloadPlan};
use crate::target::scratch::{self, Scratch, ScratchSpec};
use crate::target::TargetError;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

/// Every cell of a kernel run under TCG carries this warning.
pub const TCG_WARNING: &str = "timings are emulated (QEMU TCG, no KVM): they show that the cell works under this kernel, not how fast it is; they are not comparable with hardware or with KVM cells";

/// A filesystem ready for cells: a scratch guard, or an existing directory.
struct Ready {
    target: PathBuf,
    scratch: Option<Scratch>,
}

fn make_fs(fs: &FsPlan, lab: &LabPlan) -> Result<Ready, TargetError> {
    let (fs_type, device) = match &fs.kind {
        FsKind::Dir { path } => {
            return Ok(Ready {
                target: path.clone(),
                scratch: None,
            })
        }
        FsKind::Mkfs { fs_type, device } => (fs_type.as_str(), device.as_deref()),
        FsKind::Tmpfs => ("tmpfs", None),
        FsKind::Raw { device } => ("raw", device.as_deref()),
    };
    // Made whole or not at all as far as an abort is concerned: it waits
    // for mkfs and mount to end, then finds the mount recorded.
    let _serial = crate::interrupt::serial();
    let s = Scratch::create(
        &ScratchSpec {
            fs_type,
            mkfs_args: &fs.mkfs,
            mount_options: fs.mount.as_deref(),
            size: fs.size,
            device,
            queue: &fs.queue,
            loop_direct_io: fs.loop_direct_io,
        },
        &lab.scratch_dir,
    )?;
    Ok(Ready {
        target: s.target.clone(),
        scratch: Some(s),
    })
}

/// Runs one workload on a ready filesystem, through the one pipeline.
/// Ok(None): stopped before anything was measured.
/// The cell draws progress bars unless the lab is `quiet`.
fn measure(name: &str, plan: &CellPlan, quiet: bool, stop: &AtomicBool) -> Result<Option<Cell>, AppError> {
    match plan {
        CellPlan::Io(p) => run_one(&mut IoCell::new(name, p, quiet), stop),
        // a plan's workloads are built by `workload_from_args`, which makes
        // no fio cell (`fslab fio` runs its jobs itself); were one given,
        // its io plan is what it runs
        CellPlan::Fio(p) => run_one(&mut IoCell::new(name, &p.io, quiet), stop),
        CellPlan::Meta(p) => run_one(&mut MetaCell::new(name, p, quiet), stop),
        CellPlan::Replay(p) => run_one(&mut ReplayCell::new(name, p, quiet), stop),
        CellPlan::Probe(p) => run_one(&mut ProbeCell::new(name, p, quiet), stop),
    }
}

/// Adapts a plan for the raw device: io only, written fully first (the
/// image is fslab's own and new, so consent is implied).
fn for_raw(plan: &CellPlan) -> Option<CellPlan> {
    match plan {
        CellPlan::Io(p) => {
            let mut p = p.clone();
            p.consent.allow_device = true;
            p.consent.force_overwrite = true;
            p.consent.precondition = true;
            // The device is one "file" the jobs share: give it the bytes the
            // filesystems' per-job files hold together, so every target
            // spreads the same I/O over the same span.
            if p.shape.file_mode == crate::plan::FileMode::FilePerJob {
                p.shape.size = p.shape.size.map(|s| s.saturating_mul(p.jobs as u64));
            }
            p.shape.file_mode = crate::plan::FileMode::SharedFile;
            Some(CellPlan::Io(p))
        }
        _ => None,
    }
}

/// What `fslab run` asked for, as the report says it. The plan's JSON
/// keeps the run's `quiet` (presentation, no longer in the plan) so that
/// result files stay as they were.
fn lab_info(lab: &LabPlan, quiet: bool) -> crate::model::LabInfo {
    let mut plan = serde_json::to_value(lab).expect("plans serialise");
    if let Some(m) = plan.as_object_mut() {
        m.insert("quiet".into(), quiet.into());
    }
    crate::model::LabInfo {
        name: lab.name.clone(),
        file: lab.file.as_ref().map(|f| f.display().to_string()),
        repeat: lab.repeat.max,
        baseline: lab.baseline_level(),
        fresh: lab.fresh,
        filesystems: lab.filesystem_tables(),
        workloads: lab.workload_tables(),
        kernels: lab.kernels.iter().map(|k| k.name.clone()).collect(),
        compare: lab.compare.tag(),
        factors: lab
            .factors
            .iter()
            .map(|f| crate::model::FactorInfo {
                name: f.name.clone(),
                of: f.of.into(),
                levels: f.levels.clone(),
            })
            .collect(),
        plan,
        decision: None,
    }
}

/// The run's state across cells.
struct LabRun<'a> {
    lab: &'a LabPlan,
    stop: &'a AtomicBool,
    r: Report,
    outputs: Outputs,
    /// No progress bars or notes on stderr (`--quiet`).
    quiet: bool,
    /// With fresh = false, each filesystem is made once and kept for the run.
    kept: Vec<Option<Ready>>,
    can_drop: bool,
    /// Cells started so far, and of the whole run.
    i: usize,
    total: usize,
}

/// Runs the whole plan; returns the report with every cell.
pub fn run_lab(lab: LabPlan, presentation: Presentation, stop: &AtomicBool) -> Result<Report, AppError> {
    run_lab_until(lab, presentation, stop, None)
}

/// Decides after each repeat (its number, the cells so far) whether an
/// adaptive run has decided what it was run for (`fslab check`'s rule);
/// without one, the run's own comparisons (`Adaptive::decided`).
pub type Until<'a> = &'a mut dyn FnMut(u32, &Report) -> bool;

/// `run_lab`, stopping by `until`'s rule.
pub fn run_lab_until(
    lab: LabPlan,
    presentation: Presentation,
    stop: &AtomicBool,
    mut until: Option<Until>,
) -> Result<Report, AppError> {
    // the plan's telemetry (its keys under the command line's flags)
    let result_file = presentation.outputs.0.iter().find_map(|o| o.path.clone());
    crate::app::telemetry::install(&lab.telemetry, result_file.as_deref())
        .map_err(|e| crate::app::refused(Box::leak(e.flag.into_boxed_str()), e.msg))?;
    let Presentation { outputs, quiet } = presentation;
    let mut r = Report::new("run", SystemTime::now());
    r.lab = Some(lab_info(&lab, quiet));
    r.calibration = crate::app::calibration::for_run(lab.in_guest);
    crate::app::abort::expect_results(&r, &outputs);
    let can_drop = scratch::is_root();
    if lab.drop_caches && !can_drop && !quiet {
        eprintln!("fslab run: not root: the page cache is not dropped between cells");
    }
    // no kernels: the host's, and no kernel dimension
    let kernels: Vec<Option<KernelPlan>> = if lab.kernels.is_empty() {
        vec![None]
    } else {
        lab.kernels.iter().cloned().map(Some).collect()
    };
    let mut run = LabRun {
        lab: &lab,
        stop,
        r,
        outputs,
        quiet,
        kept: lab.filesystems.iter().map(|_| None).collect(),
        can_drop,
        i: 0,
        total: lab.repeat.max as usize * kernels.len() * lab.filesystems.len() * lab.workloads.len(),
    };
    let mut order = Adaptive::new(&lab);
    let (mut repeats_run, mut stopped) = (0, if lab.repeat.adaptive() { "max" } else { "fixed" });
    // a guest boots once per segment (guest.rs); host-only runs look after each repeat
    let in_vm = kernels.iter().flatten().any(|k| !k.is_host());
    for rep in order.segment_ends(in_vm) {
        let mut slots = Vec::new();
        for r in repeats_run + 1..=rep {
            let table = |&(k, fi, wi): &(usize, usize, usize)| {
                lab_tag(&lab, &lab.filesystems[fi], &lab.workloads[wi], r, kernels[k].as_ref()).table()
            };
            let block = order.block(kernels.len(), lab.filesystems.len(), lab.workloads.len(), table);
            slots.extend(block.into_iter().map(|(k, fi, wi)| (r, k, fi, wi)));
        }
        if run.segment(&slots, &kernels)?.is_break() {
            stopped = "interrupted";
            break;
        }
        repeats_run = rep;
        let done = match until.as_mut() {
            Some(f) => lab.repeat.adaptive() && f(rep, &run.r),
            None => order.decided(rep, &run.r),
        };
        if done {
            stopped = "decided";
            break;
        }
    }
    // Scratch filesystems go before the final report is printed.
    drop(std::mem::take(&mut run.kept));
    let LabRun { mut r, mut outputs, .. } = run;
    let info = order.info(&r, repeats_run, stopped);
    if let Some(l) = r.lab.as_mut() {
        l.repeat = repeats_run.max(1);
        l.decision = Some(info);
    }
    write(&mut r, &mut outputs, true)?;
    Ok(r)
}

/// Each cell the plan runs in a repeat: its tag and its plan as the cell
/// records it (`fslab check` compares them with a baseline's before it
/// runs anything).
pub fn planned_cells(lab: &LabPlan) -> Vec<(LabTag, CellPlan)> {
    let kernels: Vec<Option<&KernelPlan>> = if lab.kernels.is_empty() {
        vec![None]
    } else {
        lab.kernels.iter().map(Some).collect()
    };
    let mut cells = Vec::new();
    for k in kernels {
        for fs in &lab.filesystems {
            for w in &lab.workloads {
                if let Some(p) = plan_for(fs, &w.plan) {
                    cells.push((lab_tag(lab, fs, w, 1, k), p));
                }
            }
        }
    }
    cells
}

/// The workload's plan on filesystem `fs`: as written, or adapted for a
/// raw device (`for_raw`). None: it does not run there (only io runs on a
/// bare device).
fn plan_for(fs: &FsPlan, plan: &CellPlan) -> Option<CellPlan> {
    if matches!(fs.kind, FsKind::Raw { .. }) {
        for_raw(plan)
    } else {
        Some(plan.clone())
    }
}

/// The cell's name: the workload's, after the filesystem's when the plan
/// has several, after the kernel's when it has several.
fn cell_name(lab: &LabPlan, fs: &FsPlan, w: &WorkloadPlan, kernel: Option<&KernelPlan>) -> String {
    let mut name = if lab.filesystems.len() == 1 {
        w.name.clone()
    } else {
        format!("{}/{}", fs.name, w.name)
    };
    if let Some(k) = kernel.filter(|_| lab.kernels.len() > 1) {
        name = format!("{}/{name}", k.name);
    }
    name
}

/// The cell's place in the run, as the report tags it (the scratch
/// filesystem and the kernel's release are filled in once known): the
/// tables' names, and its levels of the plan's factors in `[factors]` order.
fn lab_tag(lab: &LabPlan, fs: &FsPlan, w: &WorkloadPlan, rep: u32, kernel: Option<&KernelPlan>) -> LabTag {
    let levels = lab
        .levels_of(fs, w)
        .map(|(f, level)| crate::model::Level {
            factor: f.name.clone(),
            level: level.to_string(),
            of: f.of.into(),
        })
        .collect();
    LabTag {
        filesystem: fs.base.clone(),
        fs_type: fs.type_name().to_string(),
        workload: w.base.clone(),
        kind: w.kind.clone(),
        repeat: rep,
        scratch: None,
        kernel: kernel.map(|k| KernelTag {
            name: k.name.clone(),
            ..Default::default()
        }),
        order: None,
        compare: lab.compare.tag(),
        levels,
    }
}

/// The host's kernel, for a tag that names one (a plan with kernels).
fn host_kernel(tag: &mut LabTag) {
    if let Some(k) = tag.kernel.as_mut() {
        let u = rustix::system::uname();
        k.release = u.release().to_string_lossy().into_owned();
        k.version = u.version().to_string_lossy().into_owned();
    }
}

/// How many attempts the cell took and why each before it ran again: in
/// its system part and, after a rerun, as a warning.
fn record_attempts(cell: &mut Cell, attempt: u32, rerun_reasons: &[String], retry_disturbed: u32) {
    if let Some(s) = cell.system.as_mut() {
        s.attempts = attempt;
        s.rerun_reasons = rerun_reasons.to_vec();
    }
    if attempt > 1 {
        cell.warnings.push(format!(
            "rerun because disturbed: this is attempt {attempt} of at most {} ({})",
            retry_disturbed + 1,
            rerun_reasons.join("; ")
        ));
    }
}

/// A failed cell's line on stderr.
fn say_failed(name: &str, msg: &str) {
    eprintln!(
        "fslab run: {} failed: {}",
        crate::units::shown(name),
        crate::units::shown(msg)
    );
}

impl LabRun<'_> {
    /// Cell `w` on filesystem `fi` in repeat `rep` on the host's kernel
    /// (cells under other kernels run in guests: `guest`), written with
    /// the cells before it. `Break`: the run stops here (interrupted). The
    /// steps: the workload's plan for this filesystem (`plan_for`), the
    /// cell's name and its line on stderr (`cell_name`, `announce`), its
    /// tag in the report (`lab_tag`), then the cell itself (`host_cell`).
    fn cell(
        &mut self,
        rep: u32,
        kernel: Option<&KernelPlan>,
        fi: usize,
        w: &WorkloadPlan,
    ) -> Result<ControlFlow<()>, AppError> {
        let (lab, fs) = (self.lab, &self.lab.filesystems[fi]);
        self.i += 1;
        if self.stop.load(Ordering::Relaxed) {
            return Ok(self.interrupted());
        }
        let Some(plan) = plan_for(fs, &w.plan) else {
            return Ok(ControlFlow::Continue(()));
        };
        let name = cell_name(lab, fs, w, kernel);
        self.announce(rep, &name);
        let mut tag = lab_tag(lab, fs, w, rep, kernel);
        tag.order = Some(self.i as u32);
        let cell_plan = plan.clone();
        self.host_cell(fi, &name, &plan, tag, cell_plan)
    }

    /// The cell's line on stderr: `[i/total] name (repeat r/n)`.
    fn announce(&self, rep: u32, name: &str) {
        let lab = self.lab;
        if self.quiet {
            return;
        }
        let r = lab.repeat;
        let rep_note = match (r.adaptive(), r.max > 1) {
            (true, _) => format!(" (repeat {rep}, {}..{} until decided)", r.min, r.max),
            (false, true) => format!(" (repeat {rep}/{})", r.max),
            (false, false) => String::new(),
        };
        eprintln!(
            "fslab run: [{}/{}{}] {}{rep_note}",
            self.i,
            if r.adaptive() { "≤" } else { "" },
            self.total,
            crate::units::shown(name)
        );
    }

    /// A cell on the host's kernel: its filesystem (`filesystem`; one that
    /// cannot be made is the cell's failure), one attempt (`attempt`) and,
    /// while the cell was disturbed, up to retry-disturbed more (a fresh
    /// filesystem each when the plan asks for fresh ones); the attempts
    /// recorded in the cell (`record_attempts`), written with the others.
    fn host_cell(
        &mut self,
        fi: usize,
        name: &str,
        plan: &CellPlan,
        tag: LabTag,
        cell_plan: crate::model::CellPlan,
    ) -> Result<ControlFlow<()>, AppError> {
        let lab = self.lab;
        let mut attempt: u32 = 1;
        let mut rerun_reasons: Vec<String> = Vec::new();
        let mut cell = loop {
            let tag = tag.clone();
            let fresh = match self.filesystem(fi) {
                Ok(f) => f,
                Err(_) if self.stop.load(Ordering::Relaxed) => return Ok(self.interrupted()),
                Err(e) => {
                    say_failed(name, &e.to_string());
                    return self.push_failed(name, cell_plan, tag, format!("making the filesystem: {e}"));
                }
            };
            let Some(cell) = self.attempt(fi, fresh.as_ref(), name, plan, tag, &cell_plan) else {
                return Ok(self.interrupted());
            };
            // a disturbed cell runs again (a fresh filesystem when the plan
            // asks for fresh ones), up to retry-disturbed more times
            let reasons = cell
                .system
                .as_ref()
                .filter(|s| s.interference.disturbed)
                .map(|s| s.interference.reasons.join("; "));
            match reasons {
                Some(why) if attempt <= lab.retry_disturbed && !self.stop.load(Ordering::Relaxed) => {
                    if !self.quiet {
                        eprintln!(
                            "fslab run: {} was disturbed ({why}): running it again ({}/{})",
                            crate::units::shown(name),
                            attempt + 1,
                            lab.retry_disturbed + 1
                        );
                    }
                    rerun_reasons.push(format!("attempt {attempt}: {why}"));
                    attempt += 1;
                }
                _ => break cell,
            }
        };
        record_attempts(&mut cell, attempt, &rerun_reasons, lab.retry_disturbed);
        self.r.interrupted |= cell.interrupted;
        self.r.cells.push(cell);
        write(&mut self.r, &mut self.outputs, false)?;
        Ok(if self.r.interrupted {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        })
    }

    /// One attempt at a host cell on its filesystem (`fresh`, or the one
    /// kept for the run): the tag's scratch filesystem and kernel, the page
    /// cache dropped between cells, and the measurement through the one
    /// pipeline (`measure`); a measurement that fails is a failed cell.
    /// None: stopped before anything was measured.
    fn attempt(
        &self,
        fi: usize,
        fresh: Option<&Ready>,
        name: &str,
        plan: &CellPlan,
        mut tag: LabTag,
        cell_plan: &crate::model::CellPlan,
    ) -> Option<Cell> {
        let lab = self.lab;
        let ready = fresh.unwrap_or_else(|| self.kept[fi].as_ref().expect("made above"));
        tag.scratch = ready.scratch.as_ref().map(|s| s.info.clone());
        host_kernel(&mut tag);
        crate::app::abort::next_cell_tag(&tag);
        if lab.drop_caches && self.can_drop {
            let _ = scratch::drop_caches();
        }
        let mut plan = plan.clone();
        plan.retarget(&ready.target);
        Some(match measure(name, &plan, self.quiet, self.stop) {
            Ok(Some(mut c)) => {
                if let Some(s) = &ready.scratch {
                    s.relabel(&mut c.target);
                }
                c.lab = Some(tag);
                c
            }
            Ok(None) => return None,
            Err(_) if self.stop.load(Ordering::Relaxed) => return None,
            Err(e) => {
                say_failed(name, &e.to_string());
                let mut c = Cell::failed(name, cell_plan.clone(), TargetInfo::default(), e.to_string());
                c.lab = Some(tag);
                c
            }
        })
    }

    /// The filesystem of an attempt: a fresh one (Some, removed when
    /// dropped) when the plan asks for fresh filesystems; else the one kept
    /// for the run in `kept[fi]` (None), made now for its first cell.
    fn filesystem(&mut self, fi: usize) -> Result<Option<Ready>, TargetError> {
        let (lab, fs) = (self.lab, &self.lab.filesystems[fi]);
        if lab.fresh {
            return make_fs(fs, lab).map(Some);
        }
        if self.kept[fi].is_none() {
            self.kept[fi] = Some(make_fs(fs, lab)?);
        }
        Ok(None)
    }

    fn push_failed(
        &mut self,
        name: &str,
        plan: crate::model::CellPlan,
        tag: LabTag,
        msg: String,
    ) -> Result<ControlFlow<()>, AppError> {
        let mut c = Cell::failed(name, plan, TargetInfo::default(), msg);
        c.lab = Some(tag);
        self.r.cells.push(c);
        write(&mut self.r, &mut self.outputs, false)?;
        Ok(ControlFlow::Continue(()))
    }

    /// The run was interrupted before this cell measured anything.
    fn interrupted(&mut self) -> ControlFlow<()> {
        self.r.interrupted = true;
        ControlFlow::Break(())
    }
}

fn write(r: &mut Report, outputs: &mut Outputs, final_: bool) -> Result<(), AppError> {
    r.max_rss_kib = crate::stats::cpu::max_rss_kib();
    crate::app::results::write_outputs(r, outputs, final_).map_err(AppError::Output)
}
