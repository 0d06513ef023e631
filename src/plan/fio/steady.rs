//! fio's steady-state stop (`steadystate`, `ss_dur`, `ss_ramp`): a job (or
//! a reporting group under group_reporting) ends before its runtime once
//! its per-second IOPS or bandwidth has stayed within a limit for `ss_dur`
//! seconds. What the runner checks (`runner::steady`) and how fio 3.33
//! reports it (`report::fio::steady`) follow fio's steadystate.c.

use std::time::Duration;

/// What is measured: fio's `iops` / `bw` criteria.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SteadyMetric {
    Iops,
    Bw,
}

/// One job's steady-state criterion, as fio parses `steadystate=`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyCriterion {
    pub metric: SteadyMetric,
    /// `_slope`: the least-squares slope of the samples; otherwise their
    /// largest deviation from their mean.
    pub slope: bool,
    /// The limit is a percentage of the samples' mean (`iops:5%`).
    pub pct: bool,
    /// Attained when the slope's (or deviation's) size is below this.
    pub limit: f64,
}

impl Default for SteadyCriterion {
    /// fio's default, `iops_slope:0.01%`, which `ss_dur` alone uses.
    fn default() -> Self {
        SteadyCriterion {
            metric: SteadyMetric::Iops,
            slope: true,
            pct: true,
            limit: 0.01,
        }
    }
}

impl SteadyCriterion {
    /// fio's name of the criterion: iops, iops_slope, bw, bw_slope.
    pub fn name(&self) -> &'static str {
        match (self.metric, self.slope) {
            (SteadyMetric::Iops, false) => "iops",
            (SteadyMetric::Iops, true) => "iops_slope",
            (SteadyMetric::Bw, false) => "bw",
            (SteadyMetric::Bw, true) => "bw_slope",
        }
    }
}

/// A job's steady-state options as written; `plan()` is what runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SteadyOpts {
    pub criterion: SteadyCriterion,
    /// ss_dur (fio keeps whole seconds); zero: no steady-state check.
    pub dur: Duration,
    /// ss_ramp: how long after the job's measurement begins before samples count.
    pub ramp: Duration,
    /// file:line of the first steady-state option, for errors.
    pub at: Option<String>,
}

/// A job's steady-state check, when it has one (`ss_dur` of a second or more).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyPlan {
    pub criterion: SteadyCriterion,
    /// The window, in one-second samples.
    pub dur: u32,
    pub ramp: Duration,
}

impl SteadyOpts {
    /// The check that runs: fio divides ss_dur (µs) by a million, so under
    /// a second is none.
    pub fn plan(&self) -> Option<SteadyPlan> {
        let dur = u32::try_from(self.dur.as_secs()).unwrap_or(u32::MAX);
        (dur > 0).then_some(SteadyPlan {
            criterion: self.criterion,
            dur,
            ramp: self.ramp,
        })
    }
}

/// fio refuses a job whose steady-state options differ from those of an
/// earlier job of its group (group_reporting or not): the (file:line,
/// message) of the first such job.
pub fn check_groups(jobs: &[super::FioJobPlan]) -> std::result::Result<(), (String, String)> {
    for (k, j) in jobs.iter().enumerate() {
        let mine = j.fio.steady.plan();
        if let Some(first) = jobs[..k].iter().find(|e| e.group == j.group) {
            if first.fio.steady.plan() != mine {
                let at = j
                    .fio
                    .steady
                    .at
                    .clone()
                    .or_else(|| first.fio.steady.at.clone())
                    .unwrap_or_else(|| j.name.clone());
                return Err((
                    at,
                    format!(
                        "[{}] steadystate options must be consistent within reporting groups (as fio: job '{}' of the same group differs)",
                        j.name, first.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_a_second_is_no_check_and_seconds_are_whole() {
        let mut o = SteadyOpts {
            dur: Duration::from_millis(999),
            ..Default::default()
        };
        assert_eq!(o.plan(), None);
        o.dur = Duration::from_millis(3_700);
        assert_eq!(o.plan().map(|p| p.dur), Some(3));
        assert_eq!(o.plan().map(|p| p.criterion.name()), Some("iops_slope"));
    }
}
