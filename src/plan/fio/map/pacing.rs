//! The pacing options of a fio job (see `plan/io/pacing.rs` for what they
//! become): rate, rate_iops, rate_min, rate_iops_min (each per direction,
//! `read,write[,trim]`), rate_process, rate_cycle, rate_ignore_thinktime,
//! thinktime, thinktime_spin, thinktime_blocks, thinktime_blocks_type,
//! thinktime_iotime;
//! flow, flow_id, flow_sleep (fio's weighted flow between jobs).

use super::{checked_time, on, val, State};
use crate::cli::FioArgs;
use crate::plan::fiojob::{Job, Opt};

/// A per-direction value as fio parses it: one value sets reads and writes
/// (and trims); `a,b[,c]` sets each, an empty part leaves that direction
/// unlimited. Returns (read, write) and the trim value.
fn per_dir(v: &str, one: impl Fn(&str) -> Result<u64, String>) -> Result<([u64; 2], u64), String> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!("'{v}' has more than three values (read,write,trim)"));
    }
    let get = |i: usize| -> Result<u64, String> {
        match parts.get(i) {
            Some(p) if !p.is_empty() => one(p),
            _ => Ok(0),
        }
    };
    if parts.len() == 1 {
        let x = get(0)?;
        return Ok(([x, x], x));
    }
    Ok(([get(0)?, get(1)?], get(2)?))
}

fn size(p: &str) -> Result<u64, String> {
    crate::units::parse_size(p).map_err(|e| e.to_string())
}

fn count(p: &str) -> Result<u64, String> {
    p.parse::<u64>().map_err(|_| format!("'{p}' is not a whole number"))
}

/// A fio time in µs, a bare number in `bare` units (thinktime_iotime's are
/// seconds: fio's is_seconds).
fn micros_in(v: &str, bare: &str) -> Result<u64, String> {
    let t = checked_time(v, bare)?;
    crate::units::parse_duration(&t)
        .map(|d| d.as_micros() as u64)
        .map_err(|e| e.to_string())
}

/// One option of this group; None when `key` is not one of them.
pub(super) fn map(st: &mut State, key: &str, o: &Opt) -> Option<Result<(), String>> {
    let p = &mut st.m.pacing;
    let r: Result<(), String> = match key {
        "rate" | "rate_min" | "ratemin" | "rate_iops" | "rate_iops_min" => {
            let v = match val(o) {
                Ok(v) => v,
                Err(e) => return Some(Err(e)),
            };
            let parsed = if key.starts_with("rate_iops") {
                per_dir(v, count)
            } else {
                per_dir(v, size)
            };
            match parsed {
                Ok((rw, trim)) => {
                    let slot = match key {
                        "rate" => &mut p.rate,
                        "rate_min" | "ratemin" => &mut p.rate_min,
                        "rate_iops" => &mut p.rate_iops,
                        _ => &mut p.rate_iops_min,
                    };
                    *slot = rw;
                    if trim > 0 && v.contains(',') {
                        st.m.notes
                            .push(format!("{key}={v}: the trim value is not used (the job does not trim)"));
                    }
                    Ok(())
                }
                Err(e) => {
                    st.m.bad.push((o.at.clone(), format!("{key}: {e}")));
                    Ok(())
                }
            }
        }
        "rate_process" => match val(o) {
            Ok("linear") => {
                p.poisson = false;
                Ok(())
            }
            Ok("poisson") => {
                p.poisson = true;
                Ok(())
            }
            Ok(other) => {
                st.m.bad.push((
                    o.at.clone(),
                    format!("rate_process: '{other}' is neither linear nor poisson"),
                ));
                Ok(())
            }
            Err(e) => Err(e),
        },
        "rate_cycle" | "ratecycle" => match val(o).map(|v| (v, count(v))) {
            Ok((_, Ok(ms))) if ms > 0 && ms <= u32::MAX as u64 => {
                p.rate_cycle_ms = ms as u32;
                Ok(())
            }
            Ok((v, _)) => {
                st.m.bad
                    .push((o.at.clone(), format!("{key}: '{v}' is not a number of ms above 0")));
                Ok(())
            }
            Err(e) => Err(e),
        },
        "rate_ignore_thinktime" => {
            p.ignore_thinktime = on(o);
            Ok(())
        }
        "thinktime" | "thinktime_spin" | "thinktime_iotime" => {
            match val(o).map(|v| micros_in(v, if key == "thinktime_iotime" { "s" } else { "us" })) {
                Ok(Ok(us)) => {
                    match key {
                        "thinktime" => p.thinktime_us = us,
                        "thinktime_spin" => p.thinktime_spin_us = us,
                        _ => p.thinktime_iotime_us = us,
                    }
                    Ok(())
                }
                Ok(Err(e)) => {
                    st.m.bad.push((o.at.clone(), format!("{key}: {e}")));
                    Ok(())
                }
                Err(e) => Err(e),
            }
        }
        "thinktime_blocks" => match val(o).map(|v| (v, count(v))) {
            Ok((_, Ok(n))) if n > 0 && n <= u32::MAX as u64 => {
                p.thinktime_blocks = n as u32;
                Ok(())
            }
            Ok((v, _)) => {
                st.m.bad.push((
                    o.at.clone(),
                    format!("thinktime_blocks: '{v}' is not a whole number above 0"),
                ));
                Ok(())
            }
            Err(e) => Err(e),
        },
        "thinktime_blocks_type" => match val(o) {
            Ok("complete") => {
                p.thinktime_issue = false;
                Ok(())
            }
            Ok("issue") => {
                p.thinktime_issue = true;
                Ok(())
            }
            Ok(other) => {
                st.m.bad.push((
                    o.at.clone(),
                    format!("thinktime_blocks_type: '{other}' is neither complete nor issue"),
                ));
                Ok(())
            }
            Err(e) => Err(e),
        },
        "flow" | "flow_id" | "flow_sleep" => match val(o).map(|v| (v, count(v))) {
            // fio's ranges: a weight of 0 to 1000, an id and a sleep of any u32
            Ok((_, Ok(n))) if (key != "flow" || n <= 1000) && n <= u32::MAX as u64 => {
                match key {
                    "flow" => p.flow = n as u32,
                    "flow_id" => p.flow_id = n as u32,
                    _ => p.flow_sleep_us = n,
                }
                Ok(())
            }
            Ok((v, _)) => {
                let range = if key == "flow" { "0 to 1000" } else { "a whole number" };
                st.m.bad.push((o.at.clone(), format!("{key}: '{v}' is not {range}")));
                Ok(())
            }
            Err(e) => Err(e),
        },
        _ => return None,
    };
    Some(r)
}

/// After the job's last option: values that depend on several options.
pub(super) fn finish(st: &mut State, _job: &Job, _fa: &FioArgs) {
    let p = &st.m.pacing;
    if p.poisson && p.rate == [0, 0] && p.rate_iops == [0, 0] {
        st.m.notes
            .push("rate_process=poisson without rate or rate_iops: nothing to pace, as in fio".into());
    }
}
