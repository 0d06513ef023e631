//! What an abort writes and removes: the results the run published so far,
//! marked interrupted, and fslab's mounts and directories
//! (`target::live`). `interrupt::abort` decides *when* (holding the serial
//! lock, or past its wait) and calls the action `install` sets.
//!
//! The results are published as they come: the report so far (each write of
//! the outputs publishes what it wrote) and the cell being finished, before
//! its files are removed. So an abort loses only a measurement in progress.

use crate::model::{Cell, LabTag, Report};
use crate::plan::Outputs;
use std::sync::{Mutex, MutexGuard};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What an abort writes.
struct Pending {
    outputs: Outputs,
    report: Report,
    /// The cell being finished, not yet in `report`.
    cell: Option<Cell>,
    /// Lab runs: the tag the cell being measured gets.
    tag: Option<LabTag>,
}

static PENDING: Mutex<Option<Pending>> = Mutex::new(None);

/// Makes `interrupt::abort` write the published results and remove fslab's
/// files: called once at start-up, before a signal can arrive.
pub fn install() {
    crate::interrupt::set_abort_action(Box::new(abort_action));
}

/// The final results are written: an abort from now on writes nothing (it
/// would mark a complete result interrupted).
pub fn results_written() {
    *lock(&PENDING) = None;
}

/// The run is validated and about to work: from now on an abort writes
/// `report` (and what is published later) to `outputs`.
pub fn expect_results(report: &Report, outputs: &Outputs) {
    *lock(&PENDING) = Some(Pending {
        outputs: outputs.clone(),
        report: report.clone(),
        cell: None,
        tag: None,
    });
}

/// The report so far (it holds every cell measured): called by every write
/// of the outputs.
pub fn publish_report(report: &Report) {
    if let Some(p) = lock(&PENDING).as_mut() {
        p.report = report.clone();
        p.cell = None;
    }
}

/// The cell being finished (or, marked interrupted, the part measured so
/// far), before its files are removed and it joins the report.
pub fn publish_cell(cell: &Cell) {
    if let Some(p) = lock(&PENDING).as_mut() {
        let mut c = cell.clone();
        if c.lab.is_none() {
            c.lab = p.tag.clone();
        }
        // the part measured so far gets its verdict too (stopped early)
        if c.verdict.is_none() {
            c.verdict = Some(crate::telemetry::verdict::judge(&c, crate::plan::host_memory()));
        }
        p.cell = Some(c);
    }
}

/// Lab runs: the place in the plan of the cell measured next.
pub fn next_cell_tag(tag: &LabTag) {
    if let Some(p) = lock(&PENDING).as_mut() {
        p.tag = Some(tag.clone());
    }
}

/// The abort action: `locked` says whether the abort holds the serial lock.
fn abort_action(locked: bool) {
    // results first: they are what the user waits for, and they are quick
    let pending = lock(&PENDING).take();
    if let Some(p) = pending {
        let mut r = p.report;
        r.cells.extend(p.cell);
        r.interrupted = true;
        r.max_rss_kib = crate::stats::cpu::max_rss_kib();
        // without the lock, stdout may be what blocks the main thread
        let written = super::outputs::write_files(&r, &p.outputs).and_then(|()| {
            if locked {
                super::outputs::write_stdout(&r, &p.outputs)
            } else {
                Ok(())
            }
        });
        if let Err(e) = written {
            eprintln!("fslab: error: writing results: {e}");
        }
    }
    crate::target::live::abort_cleanup();
}
