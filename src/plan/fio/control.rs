//! How fio jobs start, end and fail, beyond running their I/O: startdelay,
//! exitall, exitall_on_error, exit_what, wait_for, flow, continue_on_error,
//! ignore_error, latency_target (fio's queue-depth search) and steadystate.
//! (continue_on_error and ignore_error go to the io plan's
//! `PacingPlan::errors`, which the runner applies.)

use std::time::Duration;

/// fio's exit_what: what a job's exitall ends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ExitWhat {
    /// The jobs of its reporting group (fio's default).
    #[default]
    Group,
    /// Its group and the jobs after the next stonewalls.
    Stonewall,
    /// Every job.
    All,
}

/// A job's control options. `Default`: start with the others, stop at the
/// first error of the job, never stop the others.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ControlOpts {
    /// startdelay: (low, high); a range picks a delay in it.
    pub start_delay: Option<(Duration, Duration)>,
    /// exitall: the end of this job ends the others.
    pub exitall: bool,
    /// exitall_on_error: a failure of this job ends the others.
    pub exitall_on_error: bool,
    pub exit_what: ExitWhat,
    /// wait_for: (job name, file:line of the option).
    pub wait_for: Option<(String, String)>,
}

/// The job `jobs[k]` waits for (wait_for): its index among the jobs, or an
/// error naming the option's file:line when the name is not that of a job
/// before it.
pub fn wait_target(jobs: &[super::FioJobPlan], k: usize) -> std::result::Result<Option<usize>, (String, String)> {
    let Some((name, at)) = &jobs[k].fio.control.wait_for else {
        return Ok(None);
    };
    match jobs[..k].iter().rposition(|j| &j.name == name) {
        Some(i) => Ok(Some(i)),
        None => Err((
            at.clone(),
            format!("[{}] wait_for={name}: no job of that name before it", jobs[k].name),
        )),
    }
}
