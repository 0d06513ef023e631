//! Cells under a kernel other than the host's: one guest per kernel per
//! segment of repeats (the repeats up to the next look of an adaptive run;
//! all of them for a fixed count), so a kernel's boot is paid once, not
//! once per cell. The segment's cells keep their random order: host cells
//! run one by one where they fall, and each VM kernel's cells run in one
//! guest, in their order, where the first of them falls. Each cell's tag
//! records the place it actually ran (`LabTag::order`), and its VM info
//! the boot it shared (`boot_id`, `boot_ns`, `boot_cells`).

use super::{cell_name, lab_tag, plan_for, say_failed, write, LabRun, TCG_WARNING};
use crate::app::AppError;
use crate::model::{Cell, KernelTag, LabTag, TargetInfo};
use crate::plan::lab::KernelPlan;
use crate::vm;
use std::ops::ControlFlow;
use std::sync::atomic::Ordering;

/// One cell of a segment: its repeat and its kernel, filesystem and
/// workload indexes.
pub(super) type Slot = (u32, usize, usize, usize);

/// A cell waiting for its guest.
struct Queued {
    rep: u32,
    fi: usize,
    wi: usize,
    name: String,
    tag: LabTag,
    plan: crate::model::CellPlan,
}

impl LabRun<'_> {
    /// The cells of one segment in their order: host cells one by one
    /// (`cell`), each VM kernel's cells together in one guest (`guests`)
    /// at the place of its first. `Break`: interrupted.
    pub(super) fn segment(
        &mut self,
        slots: &[Slot],
        kernels: &[Option<KernelPlan>],
    ) -> Result<ControlFlow<()>, AppError> {
        let lab = self.lab;
        let mut booted = vec![false; kernels.len()];
        for (n, &(rep, k, fi, wi)) in slots.iter().enumerate() {
            let flow = match kernels[k].as_ref().filter(|kp| !kp.is_host()) {
                None => self.cell(rep, kernels[k].as_ref(), fi, &lab.workloads[wi])?,
                Some(_) if booted[k] => continue,
                Some(kp) => {
                    booted[k] = true;
                    let mine: Vec<Slot> = slots[n..].iter().filter(|s| s.1 == k).copied().collect();
                    self.guests(kp, &mine)?
                }
            };
            if flow.is_break() {
                return Ok(flow);
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// A VM kernel's cells of the segment: those that run on their
    /// filesystem (`plan_for`), in guests of at most `vm::MAX_DISKS`
    /// filesystems each (one guest, unless the plan has more).
    fn guests(&mut self, k: &KernelPlan, slots: &[Slot]) -> Result<ControlFlow<()>, AppError> {
        let lab = self.lab;
        let mut queued: Vec<Queued> = Vec::new();
        for &(rep, _, fi, wi) in slots {
            let (fs, w) = (&lab.filesystems[fi], &lab.workloads[wi]);
            let Some(plan) = plan_for(fs, &w.plan) else {
                // its place in the run, as a host cell's that does not run
                self.i += 1;
                continue;
            };
            queued.push(Queued {
                rep,
                fi,
                wi,
                name: cell_name(lab, fs, w, Some(k)),
                tag: lab_tag(lab, fs, w, rep, Some(k)),
                plan,
            });
        }
        let mut rest = &queued[..];
        while !rest.is_empty() {
            let mut fss: Vec<usize> = Vec::new();
            let n = rest
                .iter()
                .take_while(|q| {
                    if !fss.contains(&q.fi) {
                        fss.push(q.fi);
                    }
                    fss.len() <= vm::MAX_DISKS
                })
                .count();
            if self.guest(k, &rest[..n])?.is_break() {
                return Ok(ControlFlow::Break(()));
            }
            rest = &rest[n..];
        }
        Ok(ControlFlow::Continue(()))
    }

    /// One guest under `k` running `cells` in their order: each announced
    /// when the guest starts it, recorded when its result arrives (or its
    /// failure, or the guest's death), then a line on the boot's cost.
    fn guest(&mut self, k: &KernelPlan, cells: &[Queued]) -> Result<ControlFlow<()>, AppError> {
        let lab = self.lab;
        if self.stop.load(Ordering::Relaxed) {
            return Ok(self.interrupted());
        }
        let g = vm::Guest {
            kernel: k,
            vm: &lab.vm,
            cells: cells
                .iter()
                .map(|q| vm::GuestCell {
                    fs: &lab.filesystems[q.fi],
                    workload: &lab.workloads[q.wi].name,
                })
                .collect(),
            guest_args: &lab.guest_args,
            guest_files: &lab.guest_files,
            scratch_dir: &lab.scratch_dir,
        };
        let names: Vec<String> = cells.iter().map(|q| q.name.clone()).collect();
        if !self.quiet {
            eprintln!(
                "fslab run: booting kernel {} once for {} cell{}",
                crate::units::shown(&k.name),
                cells.len(),
                if cells.len() == 1 { "" } else { "s" }
            );
        }
        self.next_guest_cell(&cells[0]);
        // the boot, and the overhead of the cells after the boot's first
        let (mut boot_ns, mut after_ns, mut after) = (0u64, 0u64, 0usize);
        let ended = vm::run_guest(&g, self.stop, |i, res| -> Result<(), AppError> {
            if res.is_err() && self.stop.load(Ordering::Relaxed) {
                // stopped: the guest's end is the interruption, not a failure
                return Ok(());
            }
            if let Ok(gr) = &res {
                boot_ns = gr.vm.boot_ns;
                if gr.vm.boot_place > 1 {
                    after_ns += gr.vm.overhead_ns;
                    after += 1;
                }
            }
            let q = &cells[i];
            let mut tag = q.tag.clone();
            tag.order = Some(self.i as u32);
            self.guest_result(&q.name, k, tag, q.plan.clone(), res, &names)?;
            if let Some(next) = cells.get(i + 1) {
                self.next_guest_cell(next);
            }
            Ok(())
        })?;
        if !self.quiet && boot_ns > 0 {
            let per_cell = match after {
                0 => String::new(),
                n => format!(
                    "; after it, {:.1} s per cell outside the timed cells",
                    after_ns as f64 / 1e9 / n as f64
                ),
            };
            eprintln!(
                "fslab run: kernel {}: one boot ({:.1} s) for {} cell{}{per_cell}",
                crate::units::shown(&k.name),
                boot_ns as f64 / 1e9,
                cells.len(),
                if cells.len() == 1 { "" } else { "s" }
            );
        }
        if ended == vm::Ended::Interrupted || self.stop.load(Ordering::Relaxed) {
            return Ok(self.interrupted());
        }
        Ok(ControlFlow::Continue(()))
    }

    /// The guest starts its next cell: its place in the run, its line on
    /// stderr, and its tag for an abort.
    fn next_guest_cell(&mut self, q: &Queued) {
        self.i += 1;
        self.announce(q.rep, &q.name);
        let mut tag = q.tag.clone();
        tag.order = Some(self.i as u32);
        crate::app::abort::next_cell_tag(&tag);
    }

    /// A guest cell's result (or failure) under kernel `k` as the run's
    /// cell: its name and tag, the guest's kernel and VM (the boot it
    /// shared with `boot_cells`), the TCG warning, and its line on stderr.
    fn guest_result(
        &mut self,
        name: &str,
        k: &KernelPlan,
        mut tag: LabTag,
        cell_plan: crate::model::CellPlan,
        res: vm::CellResult,
        boot_cells: &[String],
    ) -> Result<(), AppError> {
        let mut g = match res {
            Ok(g) => g,
            Err(e) => {
                let msg = format!("under kernel {}: {e}", k.name);
                say_failed(name, &msg);
                return self.push_guest(Cell::failed(name, cell_plan, TargetInfo::default(), msg), tag);
            }
        };
        let Some(mut cell) = g.report.cells.into_iter().next() else {
            let msg = format!(
                "the guest under kernel {} sent a result without a cell (status {})",
                k.name, g.status
            );
            say_failed(name, &msg);
            return self.push_guest(Cell::failed(name, cell_plan, TargetInfo::default(), msg), tag);
        };
        cell.name = name.to_string();
        tag.scratch = cell.lab.take().and_then(|l| l.scratch);
        if g.vm.emulated {
            cell.warnings.push(format!("{TCG_WARNING} ({})", g.vm.accel_reason));
        }
        if !self.quiet {
            say_cost(name, k, &g.vm, boot_cells.len());
        }
        g.vm.boot_cells = boot_cells.to_vec();
        tag.kernel = Some(KernelTag {
            name: k.name.clone(),
            release: g.vm.guest.kernel.clone(),
            version: g.vm.guest.kernel_version.clone(),
            vm: Some(g.vm),
        });
        // against the host's floors: a guest records no card
        crate::app::calibration::rate(&mut cell);
        self.push_guest(cell, tag)
    }

    fn push_guest(&mut self, mut cell: Cell, tag: LabTag) -> Result<(), AppError> {
        cell.lab = Some(tag);
        self.r.cells.push(cell);
        write(&mut self.r, &mut self.outputs, false)
    }
}

/// A guest cell's cost on stderr: the boot's first cell pays the boot.
fn say_cost(name: &str, k: &KernelPlan, v: &crate::model::VmInfo, of: usize) {
    let head = format!(
        "fslab run: {}: under {} ({}, {})",
        crate::units::shown(name),
        crate::units::shown(&k.name),
        v.guest.kernel,
        v.accel
    );
    let (to, over) = (v.boot_to_result_ns as f64 / 1e9, v.overhead_ns as f64 / 1e9);
    if v.boot_place <= 1 {
        eprintln!(
            "{head}: boot to result {to:.1} s (the boot {:.1} s, shared by {of} cell{}), {over:.1} s of it outside the timed cell (boot, modules, a fresh filesystem, layout)",
            v.boot_ns as f64 / 1e9,
            if of == 1 { "" } else { "s" }
        );
    } else {
        eprintln!(
            "{head}, cell {}/{of} of its boot: {to:.1} s after the previous result, {over:.1} s of it outside the timed cell (a fresh filesystem, layout)",
            v.boot_place
        );
    }
}
