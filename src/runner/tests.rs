//! A worker that panics ends the run like a failed job: the others stop, the
//! run returns, nobody waits for the dead thread.

use super::*;
use crate::engine::NullEngine;
use crate::workload::{NextOp, Step};

/// Counts reads forever; panics at its third step when `panics`.
struct Boom {
    panics: bool,
    n: u64,
}

impl Workload for Boom {
    fn next_op(&mut self, _slot: usize) -> Option<NextOp> {
        None
    }

    fn step(&mut self, _engine: &mut dyn Engine) -> Option<Step> {
        self.n += 1;
        if self.panics && self.n == 3 {
            panic!("boom in a step");
        }
        Some(Step::new(OpKind::Read, 0))
    }

    fn queues(&self) -> bool {
        false
    }
}

fn cfg(jobs: usize) -> RunConfig {
    RunConfig {
        jobs,
        runtime: None,
        ramp: Duration::ZERO,
        rate: None,
        bucket_ns: vec![],
        depth: 1,
        batch: 1,
        stop_on_error: false,
        stonewall: None,
        ..Default::default()
    }
}

/// Runs `make` on `jobs` workers with no deadline: only a halt ends it. A
/// hang fails the test instead of stalling it.
fn run_until_halted<F>(jobs: usize, make: F) -> RunOut
where
    F: Fn(usize) -> Result<(Box<dyn Engine>, Boom), String> + Sync + Send + 'static,
{
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let stop = AtomicBool::new(false);
        let out = run(&cfg(jobs), &stop, &Progress::new(false, "t", None), make);
        let _ = tx.send(out);
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the run ended after a worker panicked")
}

fn engine() -> Box<dyn Engine> {
    Box::new(NullEngine)
}

#[test]
fn a_panicking_step_ends_the_run_with_the_job_failed() {
    for jobs in [1, 3] {
        let out = run_until_halted(jobs, |j| Ok((engine(), Boom { panics: j == 0, n: 0 })));
        let e = out.jobs[0].error.as_deref().unwrap_or_default();
        assert!(e.contains("panicked: boom in a step"), "{jobs} jobs: {e}");
        assert!(out.jobs[1..].iter().all(|o| o.error.is_none()), "{jobs} jobs");
        assert!(!out.interrupted);
    }
}

#[test]
fn a_panic_while_starting_a_worker_does_not_leave_the_others_waiting() {
    for jobs in [1, 2] {
        let out = run_until_halted(jobs, move |j| {
            if j == jobs - 1 {
                panic!("boom while starting");
            }
            Ok((engine(), Boom { panics: false, n: 0 }))
        });
        let e = out.jobs[jobs - 1].error.as_deref().unwrap_or_default();
        assert!(
            e.contains("panicked while starting: boom while starting"),
            "{jobs} jobs: {e}"
        );
    }
}

/// Reads until `0` steps are left (forever with u64::MAX).
struct Steps(u64);

impl Workload for Steps {
    fn next_op(&mut self, _slot: usize) -> Option<NextOp> {
        None
    }

    fn step(&mut self, _engine: &mut dyn Engine) -> Option<Step> {
        self.0 = self.0.checked_sub(1)?;
        Some(Step::new(OpKind::Read, 0))
    }

    fn queues(&self) -> bool {
        false
    }
}

#[test]
fn the_groups_after_the_first_stop_when_it_ends() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let lead = |_j: usize| -> Result<(Box<dyn Engine>, Steps), String> { Ok((engine(), Steps(5))) };
        let forever = |_j: usize| -> Result<(Box<dyn Engine>, Steps), String> { Ok((engine(), Steps(u64::MAX))) };
        let groups = [
            Group {
                cfg: cfg(1),
                make: &lead as &MakeFn<Steps>,
                pacing: None,
                windows: Vec::new(),
                ends_run: true,
            },
            Group {
                cfg: cfg(2),
                make: &forever,
                pacing: None,
                windows: Vec::new(),
                ends_run: false,
            },
        ];
        let stop = AtomicBool::new(false);
        let out = run_groups(&groups, &stop, &Progress::new(false, "t", None), None);
        let _ = tx.send(out.groups);
    });
    let outs = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the second group stopped with the first");
    assert_eq!(outs.len(), 2);
    assert_eq!(outs[0].stats[OpKind::Read.idx()].lat.count, 5, "the lead's own work");
    assert_eq!(outs[1].jobs.len(), 2, "the follower's jobs, each with its result");
    assert!(outs
        .iter()
        .all(|o| !o.interrupted && o.jobs.iter().all(|j| j.error.is_none())));
}
