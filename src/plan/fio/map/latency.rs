//! fio's queue-depth search for a latency target: latency_target,
//! latency_window, latency_percentile, latency_run (see
//! `plan::io::pacing::LatencyTarget` for what the runner does with them).

use super::{checked_time, on, val, State};
use crate::cli::FioArgs;
use crate::plan::fiojob::{Job, Opt};
use crate::plan::io::pacing::LatencyTarget;

/// fio's time options of this group are in µs without a unit.
fn micros(v: &str) -> Result<u64, String> {
    let t = checked_time(v.trim(), "us")?;
    let d = crate::units::parse_duration(&t).map_err(|e| e.to_string())?;
    // fio keeps these in whole µs; a non-zero target never rounds to "off"
    let us = d.as_micros().min(u64::MAX as u128) as u64;
    Ok(if us == 0 && !d.is_zero() { 1 } else { us })
}

/// One option of this group; None when `key` is not one of them.
pub(super) fn map(st: &mut State, key: &str, o: &Opt) -> Option<Result<(), String>> {
    if !matches!(
        key,
        "latency_target" | "latency_window" | "latency_percentile" | "latency_run"
    ) {
        return None;
    }
    let v = if key == "latency_run" {
        None
    } else {
        match val(o) {
            Ok(v) => Some(v.trim()),
            Err(e) => return Some(Err(e)),
        }
    };
    let l = st.m.pacing.latency.get_or_insert(LatencyTarget {
        target_ns: 0,
        window_us: 0,
        percentile: 100.0,
        run: false,
    });
    let r = match (key, v) {
        ("latency_target", Some(v)) => micros(v).map(|us| l.target_ns = us.saturating_mul(1000)),
        ("latency_window", Some(v)) => micros(v).map(|us| l.window_us = us),
        ("latency_percentile", Some(v)) => match v.trim_end_matches('%').parse::<f64>() {
            Ok(p) if (0.0..=100.0).contains(&p) => {
                l.percentile = p;
                Ok(())
            }
            _ => Err(format!("'{v}' is not a percentage from 0 to 100")),
        },
        _ => {
            l.run = on(o);
            Ok(())
        }
    };
    if let Err(why) = r {
        st.m.bad.push((o.at.clone(), format!("{key}: {why}")));
    }
    Some(Ok(()))
}

/// After the job's last option: the search runs only with a target (as in
/// fio, the other three alone do nothing).
pub(super) fn finish(st: &mut State, job: &Job, _fa: &FioArgs) {
    if st.m.pacing.latency.as_ref().is_some_and(|l| l.target_ns == 0) {
        st.m.pacing.latency = None;
        return;
    }
    if st.m.pacing.latency.is_none() {
        return;
    }
    // The sync loop that paces (rate, thinktime) is not the one that
    // searches: refused rather than one of them silently ignored.
    if !matches!(st.a.engine.as_str(), "uring" | "io_uring" | "libaio" | "posixaio")
        && (st.m.pacing.paces() || st.a.rate_iops.is_some())
    {
        let at = job.get("latency_target").map_or_else(String::new, |o| o.at.clone());
        st.m.bad.push((
            at,
            "latency_target: not supported together with rate or thinktime on a synchronous engine".into(),
        ));
    }
}
