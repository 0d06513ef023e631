//! The steady-state options of a fio job (see `plan/fio/steady.rs`):
//! steadystate (ss), steadystate_duration (ss_dur), steadystate_ramp_time
//! (ss_ramp), parsed as fio 3.33's options.c does. fio 3.33 has no
//! steadystate_check_interval (ss_interval): later fio's, refused.

use super::{checked_time, val, State};
use crate::cli::FioArgs;
use crate::plan::fio::steady::{SteadyCriterion, SteadyMetric};
use crate::plan::fiojob::{Job, Opt};
use std::time::Duration;

/// A fio time, seconds when bare.
fn secs(v: &str) -> Result<Duration, String> {
    let t = checked_time(v.trim(), "s")?;
    crate::units::parse_duration(&t).map_err(|e| e.to_string())
}

/// `steadystate=`: `CRITERION:LIMIT`, the limit a percentage (`5%`), an
/// IOPS figure, or bytes per second with fio's size suffixes.
fn criterion(v: &str) -> Result<SteadyCriterion, String> {
    let (name, limit) = match v.split_once(':') {
        Some((n, l)) => (n.trim(), l.trim()),
        None => (v.trim(), ""),
    };
    let (metric, slope) = match name.to_ascii_lowercase().as_str() {
        "iops" => (SteadyMetric::Iops, false),
        "iops_slope" => (SteadyMetric::Iops, true),
        "bw" => (SteadyMetric::Bw, false),
        "bw_slope" => (SteadyMetric::Bw, true),
        _ => return Err(format!("'{name}' is not iops, iops_slope, bw or bw_slope")),
    };
    if limit.is_empty() {
        // fio's own words
        return Err(format!(
            "'{v}': the threshold must be given with the criterion ({name}:LIMIT, e.g. {name}:1%)"
        ));
    }
    let float = |s: &str, what: &str| {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("'{v}': '{s}' is not a {what}"))
    };
    let (pct, limit) = match limit.split_once('%') {
        Some((n, _)) => (true, float(n, "percentage")?),
        None if metric == SteadyMetric::Iops => (false, float(limit, "number of IOPS")?),
        // bandwidth in bytes per second, with fio's binary suffixes
        None => (
            false,
            crate::units::parse_size(limit).map_err(|e| format!("'{v}': {e}"))? as f64,
        ),
    };
    Ok(SteadyCriterion {
        metric,
        slope,
        pct,
        limit,
    })
}

/// One option of this group; None when `key` is not one of them.
pub(super) fn map(st: &mut State, key: &str, o: &Opt) -> Option<Result<(), String>> {
    let s = &mut st.m.fio.steady;
    let parsed = match key {
        "steadystate" | "ss" => val(o).map(|v| criterion(v).map(|c| s.criterion = c)),
        "steadystate_duration" | "ss_dur" => val(o).map(|v| secs(v).map(|d| s.dur = d)),
        "steadystate_ramp_time" | "ss_ramp" => val(o).map(|v| secs(v).map(|d| s.ramp = d)),
        "steadystate_check_interval" | "ss_interval" => {
            return Some(Err(format!(
                "{key} is not supported (fio 3.33 has no such option: it checks steady state every second)"
            )))
        }
        _ => return None,
    };
    s.at.get_or_insert_with(|| o.at.clone());
    match parsed {
        Err(e) => Some(Err(e)),
        Ok(Err(why)) => {
            st.m.bad.push((o.at.clone(), format!("{key}: {why}")));
            Some(Ok(()))
        }
        Ok(Ok(())) => Some(Ok(())),
    }
}

/// After the job's last option: nothing depends on other options.
pub(super) fn finish(_st: &mut State, _job: &Job, _fa: &FioArgs) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criteria_parse_as_fio_does() {
        let c = criterion("iops_slope:0.3%").unwrap();
        assert_eq!(
            (c.metric, c.slope, c.pct, c.limit),
            (SteadyMetric::Iops, true, true, 0.3)
        );
        let c = criterion("bw:1m").unwrap();
        assert_eq!(
            (c.metric, c.slope, c.pct, c.limit),
            (SteadyMetric::Bw, false, false, 1048576.0)
        );
        let c = criterion("iops:250").unwrap();
        assert_eq!((c.pct, c.limit), (false, 250.0));
        assert!(criterion("iops").unwrap_err().contains("threshold"));
        assert!(criterion("lat:5%").unwrap_err().contains("'lat'"));
        assert!(criterion("iops:x%").unwrap_err().contains("percentage"));
    }
}
