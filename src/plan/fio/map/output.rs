//! The output options of a fio job (see `plan/fio/output.rs` for what they
//! become): the logs, and how latencies are reported.

use super::{on, val, State};
use crate::cli::FioArgs;
use crate::plan::fiojob::{Job, Opt};

/// The log prefix of write_*_log: its value, or the job's name without one.
fn prefix(o: &Opt, job_name: &str) -> Option<String> {
    match o.value.as_deref() {
        None | Some("") => Some(job_name.to_string()),
        Some(v) => Some(v.to_string()),
    }
}

/// A whole number of milliseconds (fio's int options: a bare number).
fn msec(st: &mut State, o: &Opt) -> Option<u64> {
    let v = o.value.as_deref().unwrap_or("");
    match crate::units::parse_size(v) {
        Ok(n) => Some(n),
        Err(_) => {
            st.m.bad.push((
                o.at.clone(),
                format!("{}: '{v}' is not a whole number of milliseconds", o.key),
            ));
            None
        }
    }
}

const NOTE: &str = "gtod_reduce/disable_*: fslab times every operation anyway (its clock costs ~9 ns); what is disabled is reported empty, as fio reports it";

/// One option of this group; None when `key` is not one of them.
pub(super) fn map(st: &mut State, key: &str, o: &Opt) -> Option<Result<(), String>> {
    let logs = &mut st.m.fio.logs;
    // the job's name is known in `finish`; a prefix-less log is named there
    const UNNAMED: &str = "\u{0}job";
    let r = &mut logs.report;
    match key {
        "write_bw_log" => logs.bw = prefix(o, UNNAMED),
        "write_lat_log" => logs.lat = prefix(o, UNNAMED),
        "write_iops_log" => logs.iops = prefix(o, UNNAMED),
        "write_hist_log" => logs.hist = prefix(o, UNNAMED),
        "log_avg_msec" => {
            if let Some(n) = msec(st, o) {
                st.m.fio.logs.avg_msec = n;
            }
        }
        "log_hist_msec" => {
            if let Some(n) = msec(st, o) {
                st.m.fio.logs.hist_msec = n;
            }
        }
        "log_max_value" | "log_max" => logs.max_value = on(o),
        "per_job_logs" => logs.shared = !on(o),
        "log_offset" => logs.offset = on(o),
        "log_hist_coarseness" => match o.value.as_deref() {
            Some("0") | None => {}
            Some(v) => {
                return Some(Err(format!(
                    "log_hist_coarseness={v}: fslab writes fio's full bins only (0)"
                )))
            }
        },
        "log_prio" => logs.prio = on(o),
        "log_compression" | "log_store_compressed" | "log_unix_epoch" | "log_alternate_epoch" => {
            if on(o) && o.value.as_deref() != Some("0") {
                return Some(Err(format!("{key} is not supported")));
            }
        }
        "log_entries" => {}
        "clat_percentiles" => r.clat_percentiles = on(o),
        "lat_percentiles" => r.lat_percentiles = on(o),
        "slat_percentiles" => r.slat_percentiles = on(o),
        "disable_lat" => r.disable_lat = on(o),
        "disable_clat" => r.disable_clat = on(o),
        "disable_slat" => r.disable_slat = on(o),
        "disable_bw_measurement" | "disable_bw" => r.disable_bw = on(o),
        "gtod_reduce" => {
            if on(o) {
                // fio: disable_clat, disable_slat, disable_bw_measurement
                // (and, in fio 3.33's options.c, disable_lat too)
                r.disable_clat = true;
                r.disable_slat = true;
                r.disable_lat = true;
                r.disable_bw = true;
                r.clat_percentiles = false;
                r.lat_percentiles = false;
                r.slat_percentiles = false;
                st.m.notes.push(NOTE.into());
            }
        }
        "percentile_list" => {
            let v = match val(o) {
                Ok(v) => v,
                Err(e) => return Some(Err(e)),
            };
            let mut list = Vec::new();
            for p in v.split(':') {
                match p.trim().parse::<f64>() {
                    Ok(x) if x > 0.0 && x <= 100.0 => list.push(x),
                    Ok(x) => {
                        st.m.bad
                            .push((o.at.clone(), format!("percentile_list: {x} is not in (0, 100]")));
                        return Some(Ok(()));
                    }
                    Err(_) => {
                        st.m.bad
                            .push((o.at.clone(), format!("percentile_list: '{p}' is not a number")));
                        return Some(Ok(()));
                    }
                }
            }
            if list.len() > 20 {
                st.m.bad.push((
                    o.at.clone(),
                    format!("percentile_list: {} percentiles, fio takes 20 at most", list.len()),
                ));
                return Some(Ok(()));
            }
            st.m.percentiles = list;
        }
        _ => return None,
    }
    if key.starts_with("disable_") && on(o) {
        st.m.notes.push(NOTE.into());
    }
    Some(Ok(()))
}

/// After the job's last option: the logs' default prefix (the job's name),
/// and log_hist_msec without write_hist_log.
pub(super) fn finish(st: &mut State, job: &Job, _fa: &FioArgs) {
    let logs = &mut st.m.fio.logs;
    for p in [&mut logs.bw, &mut logs.lat, &mut logs.iops, &mut logs.hist] {
        if p.as_deref() == Some("\u{0}job") {
            *p = Some(job.name.clone());
        }
    }
    if logs.hist.is_some() && logs.hist_msec == 0 {
        st.m.notes.push(format!(
            "[{}] write_hist_log without log_hist_msec: the histogram log is empty, as fio's",
            job.name
        ));
    }
    if let Some(p) = [&logs.bw, &logs.lat, &logs.iops, &logs.hist]
        .into_iter()
        .flatten()
        .find(|p| p.is_empty() || p.contains('\0'))
    {
        st.m.bad
            .push((job.at.clone(), format!("write_*_log: '{p}' names no file")));
    }
}
