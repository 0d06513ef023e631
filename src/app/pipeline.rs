//! The one cell pipeline: every cell of every command (`fslab io`, `meta`,
//! `replay`, `fio`, `probe`, and each cell of `fslab run`) is measured by
//! [`run_cell`], and each workload kind says only what is its own by
//! implementing [`CellWork`].
//!
//! # Data flow of one cell
//!
//! 1. The command (or `fslab run`, per cell) builds its kind from a typed
//!    plan: [`CellWork`] values such as `IoCell`, `MetaCell`, `ReplayCell`
//!    or a fio segment.
//! 2. [`CellWork::prepare`] makes the target, untimed: the work directory,
//!    the laid-out files, the directories; it returns the [`Guard`] that
//!    removes them. In a distributed run every rank prepares and
//!    `target::ranks::agree` makes all go on or all stop; an interrupted
//!    layout ends the cell with nothing measured (`Ok(None)`).
//! 3. Every [`CellHook::before_timed`] runs.
//! 4. Each timed phase `i` in `0..phases()`: [`CellWork::begin_phase`] (may
//!    end the cell: a signal between meta's phases), the phase's
//!    `RunConfig` and `Progress`, [`CellWork::run_phase`] (by default
//!    `runner::run`, which releases the workers of every rank together and
//!    merges their results), then [`CellWork::end_phase`] summarises the
//!    `RunOut` into the kind's part of the cell. After each phase the cell so
//!    far ([`CellWork::partial`]) is published, so an abort during the next
//!    step writes what was measured.
//! 5. [`CellWork::summarise`] builds the cell(s); every
//!    [`CellHook::after_timed`] sees each one; [`CellWork::publish`] hands
//!    them to the abort (`app::abort::publish_cell`) before the guard removes
//!    the target's files (`Guard::finish`, a barrier in a distributed run).
//! 6. The command writes the report (`single_cell_report`, or `fslab run`
//!    after every cell).

use super::AppError;
use crate::engine::Engine;
use crate::model::{Cell, Report};
use crate::plan::Outputs;
use crate::runner::{self, Progress, RunConfig, RunOut};
use crate::target::{Guard, TargetError};
use crate::workload::Workload;
use std::ops::ControlFlow;
use std::sync::atomic::AtomicBool;

/// What one kind of workload contributes to the pipeline: its target, its
/// workers and its summary. [`run_cell`] does the rest, in the same order for
/// every kind.
///
/// Methods taking `&self` may be called from the worker threads (`worker`);
/// state that changes between phases (meta's rename direction, the files a
/// stonewalled create made) is updated in `begin_phase`/`end_phase`, which
/// take `&mut self` on the main thread.
pub trait CellWork: Sync {
    /// The workload one worker runs (io's `IoWorkload`, meta's
    /// `MetaWorkload`, replay's `ReplayClient`...).
    type Worker: Workload;

    /// The cell's name (the progress label, the hooks' argument).
    fn name(&self) -> &str;

    /// Makes the target ready, untimed: work directory, files, directories.
    /// Returns the guard that removes them (`Guard::default()` when the kind
    /// keeps its own guards, as a fio segment does). Every rank of a
    /// distributed run calls it; [`run_cell`] agrees on the outcome, so an
    /// error on one rank stops all of them.
    fn prepare(&mut self, stop: &AtomicBool) -> Result<Guard, AppError>;

    /// How many timed phases the cell has: 1 for io and replay, meta's
    /// phases (create, stat, ... per order), the probe's phases.
    fn phases(&self) -> usize {
        1
    }

    /// Before phase `phase`: `Break` ends the cell here (and the kind
    /// remembers why, e.g. interrupted). Every rank must decide alike.
    fn begin_phase(&mut self, _phase: usize, _stop: &AtomicBool) -> Result<ControlFlow<()>, AppError> {
        Ok(ControlFlow::Continue(()))
    }

    /// Phase `phase`'s name, as the result names it (meta's "create",
    /// "stat"...): the telemetry's phase spans and the profile's phases.
    fn phase_name(&self, _phase: usize) -> String {
        "run".to_string()
    }

    /// How phase `phase` is driven (jobs, runtime, pacing, stonewall).
    fn config(&self, phase: usize) -> RunConfig;

    /// The progress display of phase `phase`.
    fn progress(&self, phase: usize) -> Progress;

    /// Worker `job` of phase `phase`: its engine and workload, built on the
    /// worker's own thread (opening files, registering buffers: untimed).
    /// An error ends that job; its message is the cell's job error.
    fn worker(&self, phase: usize, job: usize) -> Result<(Box<dyn Engine>, Self::Worker), String>;

    /// Runs phase `phase`: by default `runner::run` with [`CellWork::worker`]
    /// (workers behind a barrier, on every rank, merged). A kind that runs
    /// several workloads at once (the probe beside its load) overrides it.
    fn run_phase(&self, phase: usize, cfg: &RunConfig, stop: &AtomicBool, progress: &Progress) -> RunOut {
        runner::run(cfg, stop, progress, |j| self.worker(phase, j))
    }

    /// Summarises what phase `phase` measured into the kind's part of the
    /// cell; `Break` ends the cell (interrupted, a failed phase).
    fn end_phase(&mut self, phase: usize, out: RunOut) -> ControlFlow<()>;

    /// The cell so far, published after each phase for an abort (meta's
    /// phases done, marked interrupted). None: nothing to publish between
    /// phases.
    fn partial(&self) -> Option<Cell> {
        None
    }

    /// The result: one cell for every kind but a fio segment, which reports
    /// one cell per job clone or reporting group.
    fn summarise(&mut self) -> Vec<Cell>;

    /// Hands the result to the abort (`app::abort::publish_cell`): from now
    /// on a signal that ends the process at once writes it. A load measured
    /// beside another cell publishes nothing; a fio segment publishes the
    /// report with its cells.
    fn publish(&self, cells: &[Cell]) {
        for c in cells {
            crate::app::abort::publish_cell(c);
        }
    }
}

/// Where later features attach to every cell of every workload: telemetry
/// beside the numbers, cache control, kernel and scheduler settings.
///
/// A command installs its hooks once ([`install_hooks`]: telemetry,
/// profiling); [`run_one`] and the fio segments use them. `fslab run` still
/// drops the page cache itself before each cell, before the target is
/// prepared (as it always has); cache control that must act on the prepared
/// target belongs in `before_timed`.
///
/// Every rank of a distributed run calls every method in the same order, so
/// a hook may use the coordinator's collectives in `after_timed`.
pub trait CellHook: Sync + Send {
    /// After the target is prepared (every rank agreed), before the first
    /// timed phase.
    fn before_timed(&self, _cell: &str) {}

    /// Right before phase `phase` (named `name`) runs its workers, after
    /// its `begin_phase`: the workers' threads start after this returns.
    fn phase_started(&self, _phase: usize, _name: &str) {}

    /// Right after phase `phase`'s workers ended, before `end_phase`.
    fn phase_ended(&self, _phase: usize) {}

    /// After the last timed phase, once the cell is built, before it is
    /// published and the target's files are removed: the hook may add to
    /// the cell (warnings, telemetry).
    fn after_timed(&self, _cell: &mut Cell) {}
}

/// No hooks (the pipeline's own tests).
pub const NO_HOOKS: &[&dyn CellHook] = &[];

static HOOKS: std::sync::RwLock<Vec<&'static dyn CellHook>> = std::sync::RwLock::new(Vec::new());

/// Installs the hooks every later cell of this process runs with (a command
/// calls it once, after validation). Leaked on purpose: they live as long as
/// the process, and an abort may still read them.
pub fn install_hooks(hooks: Vec<Box<dyn CellHook>>) {
    let mut h = HOOKS.write().unwrap_or_else(|e| e.into_inner());
    h.clear();
    h.extend(hooks.into_iter().map(|b| &*Box::leak(b)));
}

/// The installed hooks.
pub fn installed_hooks() -> Vec<&'static dyn CellHook> {
    HOOKS.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Measures one cell of `work` (see the module's data flow). `Ok(None)`:
/// stopped before anything was measured (a signal while laying out files).
pub fn run_cell<K: CellWork>(
    work: &mut K,
    stop: &AtomicBool,
    hooks: &[&dyn CellHook],
) -> Result<Option<Vec<Cell>>, AppError> {
    let guard = match crate::target::ranks::agree(work.prepare(stop)) {
        Err(AppError::Target(TargetError::Interrupted)) => return Ok(None),
        g => g?,
    };
    for h in hooks {
        h.before_timed(work.name());
    }
    for phase in 0..work.phases() {
        if work.begin_phase(phase, stop)?.is_break() {
            break;
        }
        let cfg = work.config(phase);
        let progress = work.progress(phase);
        let name = work.phase_name(phase);
        for h in hooks {
            h.phase_started(phase, &name);
        }
        let out = work.run_phase(phase, &cfg, stop, &progress);
        for h in hooks {
            h.phase_ended(phase);
        }
        let flow = work.end_phase(phase, out);
        // an abort from now on (a signal during the sync of the next phase,
        // say) writes the phases done
        if let Some(c) = work.partial() {
            work.publish(std::slice::from_ref(&c));
        }
        if flow.is_break() {
            break;
        }
    }
    let mut cells = work.summarise();
    for h in hooks {
        for c in &mut cells {
            h.after_timed(c);
        }
    }
    cells.iter_mut().for_each(super::calibration::rate);
    // after the hooks: the verdict reads the cell's telemetry
    let ram = crate::plan::host_memory();
    for c in &mut cells {
        c.verdict = Some(crate::telemetry::verdict::judge(c, ram));
    }
    // measured: an abort while the files go must not lose it
    work.publish(&cells);
    guard.finish();
    Ok(Some(cells))
}

/// [`run_cell`] for a kind that makes one cell, with the installed hooks.
pub fn run_one<K: CellWork>(work: &mut K, stop: &AtomicBool) -> Result<Option<Cell>, AppError> {
    Ok(run_cell(work, stop, &installed_hooks())?.and_then(|mut c| c.pop()))
}

/// A one-cell command (`fslab io`, `meta`, `replay`): the report started
/// before the work (an abort writes it), the cell, every output written.
pub fn run_single<K: CellWork>(
    command: &str,
    mut outputs: Outputs,
    mut work: K,
    stop: &AtomicBool,
) -> Result<Report, AppError> {
    let r = super::start_report(command, &outputs);
    let cell = run_one(&mut work, stop)?;
    // the kind's remaining resources (a device claim) go before the report
    drop(work);
    super::single_cell_report(r, cell, &mut outputs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::NullEngine;
    use crate::stats::OpKind;
    use crate::workload::{NextOp, Step};
    use std::sync::Mutex;

    /// Three reads, then done.
    struct Three(u32);

    impl Workload for Three {
        fn next_op(&mut self, _slot: usize) -> Option<NextOp> {
            None
        }

        fn step(&mut self, _engine: &mut dyn Engine) -> Option<Step> {
            self.0 += 1;
            (self.0 <= 3).then_some(Step::new(OpKind::Read, 0))
        }

        fn queues(&self) -> bool {
            false
        }
    }

    /// A kind that logs every call the pipeline makes.
    struct Logged {
        log: Mutex<Vec<String>>,
        phases: usize,
        /// end_phase of this phase says Break.
        break_at: Option<usize>,
        ops: u64,
    }

    impl Logged {
        fn new(phases: usize, break_at: Option<usize>) -> Self {
            Logged {
                log: Mutex::new(Vec::new()),
                phases,
                break_at,
                ops: 0,
            }
        }

        fn say(&self, s: String) {
            self.log.lock().unwrap().push(s);
        }
    }

    impl CellWork for Logged {
        type Worker = Three;

        fn name(&self) -> &str {
            "t"
        }

        fn prepare(&mut self, _stop: &AtomicBool) -> Result<Guard, AppError> {
            self.say("prepare".into());
            Ok(Guard::default())
        }

        fn phases(&self) -> usize {
            self.phases
        }

        fn begin_phase(&mut self, phase: usize, _stop: &AtomicBool) -> Result<ControlFlow<()>, AppError> {
            self.say(format!("begin {phase}"));
            Ok(ControlFlow::Continue(()))
        }

        fn config(&self, _phase: usize) -> RunConfig {
            RunConfig {
                jobs: 2,
                runtime: None,
                ramp: std::time::Duration::ZERO,
                rate: None,
                bucket_ns: vec![],
                depth: 1,
                batch: 1,
                stop_on_error: false,
                stonewall: None,
                ..Default::default()
            }
        }

        fn progress(&self, _phase: usize) -> Progress {
            Progress::new(false, "t", None)
        }

        fn worker(&self, _phase: usize, _job: usize) -> Result<(Box<dyn Engine>, Three), String> {
            Ok((Box::new(NullEngine), Three(0)))
        }

        fn end_phase(&mut self, phase: usize, out: RunOut) -> ControlFlow<()> {
            self.ops += out.stats[OpKind::Read.idx()].lat.count;
            self.say(format!("end {phase}"));
            if self.break_at == Some(phase) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }

        fn partial(&self) -> Option<Cell> {
            self.say("partial".into());
            None
        }

        fn summarise(&mut self) -> Vec<Cell> {
            self.say("summarise".into());
            let mut a = crate::cli::IoArgs {
                engine: "null".into(),
                ..Default::default()
            };
            a.common.target = ".".into();
            let plan = crate::plan::IoPlan::from_args(&a).expect("a valid plan");
            let mut c = Cell::failed("t", crate::model::CellPlan::Io(plan), Default::default(), String::new());
            c.elapsed_ns = self.ops;
            vec![c]
        }

        fn publish(&self, cells: &[Cell]) {
            self.say(format!("publish {}", cells.len()));
        }
    }

    struct Hook(Mutex<Vec<String>>);

    impl CellHook for Hook {
        fn before_timed(&self, cell: &str) {
            self.0.lock().unwrap().push(format!("before {cell}"));
        }

        fn after_timed(&self, cell: &mut Cell) {
            self.0.lock().unwrap().push(format!("after {}", cell.name));
            cell.warnings.push("hooked".into());
        }
    }

    #[test]
    fn every_phase_runs_in_order_between_the_hooks() {
        let mut k = Logged::new(2, None);
        let hook = Hook(Mutex::new(Vec::new()));
        let cells = run_cell(&mut k, &AtomicBool::new(false), &[&hook]).unwrap().unwrap();
        assert_eq!(
            k.log.into_inner().unwrap(),
            [
                "prepare",
                "begin 0",
                "end 0",
                "partial",
                "begin 1",
                "end 1",
                "partial",
                "summarise",
                "publish 1"
            ]
        );
        assert_eq!(hook.0.into_inner().unwrap(), ["before t", "after t"]);
        assert_eq!(cells.len(), 1);
        assert_eq!(cells[0].warnings, ["hooked"]);
        // 2 jobs x 3 reads x 2 phases, all through the runner
        assert_eq!(cells[0].elapsed_ns, 12);
    }

    #[test]
    fn a_phase_that_breaks_ends_the_cell() {
        let mut k = Logged::new(3, Some(0));
        run_cell(&mut k, &AtomicBool::new(false), NO_HOOKS).unwrap().unwrap();
        assert_eq!(
            k.log.into_inner().unwrap(),
            ["prepare", "begin 0", "end 0", "partial", "summarise", "publish 1"]
        );
    }
}
