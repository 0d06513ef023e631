//! How a fio job starts, ends and fails beside the others (startdelay,
//! exitall, error handling, wait_for, flow, latency_target, steadystate),
//! from `plan::fio::ControlOpts`.

use crate::plan::fio::control::ExitWhat;
use crate::plan::fio::FioJobPlan;
use crate::runner::RunConfig;
use std::time::Duration;

/// Job `job`'s runner config, from its io plan's (`cfg`) and its control options.
pub(super) fn config(job: &FioJobPlan, mut cfg: RunConfig) -> RunConfig {
    let c = &job.fio.control;
    // fio's rate and poisson gaps need the block size and a seed
    cfg.pacing.min_bs = [job.plan.shape.bs; 2];
    cfg.pacing.seed = job.plan.seed;
    // fio's rate_ddir switches direction only when both have a share of the mix
    let read_pct = job.plan.shape.rw.read_pct(job.plan.shape.rwmixread);
    cfg.pacing.mixed = (1..100).contains(&read_pct);
    if let Some((lo, hi)) = c.start_delay {
        cfg.start_delay = pick(lo, hi, job.plan.seed ^ name_hash(&job.name));
    }
    // fio: an error ends its job unless continue_on_error says otherwise;
    // a fio job always has a policy, so a verify mismatch is verify_fatal's
    cfg.stop_on_error = true;
    cfg.pacing.errors_mut();
    cfg.exit_on_error = c.exitall_on_error;
    cfg
}

/// A delay in `[lo, hi]`, the same for the same seed (fio's randrepeat).
fn pick(lo: Duration, hi: Duration, seed: u64) -> Duration {
    if hi <= lo {
        return lo;
    }
    let span = (hi - lo).as_micros().min(u64::MAX as u128) as u64;
    lo + Duration::from_micros(fastrand::Rng::with_seed(seed).u64(0..=span))
}

fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Whether the end of `job` ends every other job of its segment (exitall).
pub(super) fn ends_run(job: &FioJobPlan) -> bool {
    job.fio.control.exitall
}

/// The job (index among `jobs`, the segment's) that `jobs[k]` waits for.
pub(super) fn wait_for(jobs: &[&FioJobPlan], k: usize) -> Option<usize> {
    let (name, _) = jobs[k].fio.control.wait_for.as_ref()?;
    jobs[..k].iter().rposition(|j| &j.name == name)
}

/// Whether the jobs after this segment are skipped: an exitall job with
/// exit_what=all ran in it (fio marks every job, started or not, to end).
/// exit_what=stonewall ends only the running jobs (fio's `TD_RUNNING` and
/// later): execution continues with the next stonewalled group (HOWTO).
pub(super) fn ends_later(jobs: &[&FioJobPlan]) -> bool {
    jobs.iter()
        .any(|j| j.fio.control.exitall && j.fio.control.exit_what == ExitWhat::All)
}
