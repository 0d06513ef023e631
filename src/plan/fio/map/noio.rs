//! The options of fio's engines that do no I/O: cpuio's (cpuload,
//! cpuchunks, cpumode, exit_on_io_done). They are engine options in fio,
//! read once the job's engine is known: here in `finish`, from the job's
//! options as written; on a job of another engine they are refused, as
//! fio 3.33 refuses an option its engine does not have.

use super::State;
use crate::cli::FioArgs;
use crate::plan::fio::engines::CpuLoad;
use crate::plan::fio::FioEngine;
use crate::plan::fiojob::{Job, Opt};

const CPU: &[&str] = &["cpuload", "cpuchunks", "cpumode", "exit_on_io_done"];

/// One option of this group; None when `key` is not one of them.
pub(super) fn map(_st: &mut State, key: &str, _o: &Opt) -> Option<Result<(), String>> {
    // read in `finish`, when the job's engine is known
    CPU.contains(&key).then_some(Ok(()))
}

/// After the job's last option: the engine's options, checked and set.
pub(super) fn finish(st: &mut State, job: &Job, _fa: &FioArgs) {
    let engine = job.get("ioengine").and_then(|o| o.value.as_deref()).map(str::trim);
    if engine != Some("cpuio") {
        // fio parses an engine's option only while that engine is set (a
        // [global] ioengine=cpuio); one a later ioengine= replaced is moot
        let mut cpu = false;
        for o in &job.opts {
            if o.key == "ioengine" {
                cpu = o.value.as_deref().map(str::trim) == Some("cpuio");
            } else if CPU.contains(&o.key.as_str()) && !cpu {
                let e = engine.unwrap_or("psync");
                st.m.bad.push((
                    o.at.clone(),
                    format!("{}: an option of ioengine=cpuio, not of ioengine={e}", o.key),
                ));
                return;
            }
        }
        return;
    }
    if let Some(cpu) = cpu_load(st, job) {
        st.m.fio.engine = FioEngine::Cpu(cpu);
        noio_job(st, job, "cpuio");
    }
}

/// A whole number of an option as written, or its default.
fn number(st: &mut State, job: &Job, key: &str, default: u32) -> Option<u32> {
    let Some(o) = job.get(key) else {
        return Some(default);
    };
    match o.value.as_deref().map(str::trim).unwrap_or("1").parse::<u32>() {
        Ok(n) => Some(n),
        Err(_) => {
            let v = o.value.as_deref().unwrap_or("");
            st.m.bad
                .push((o.at.clone(), format!("{key}: '{v}' is not a whole number")));
            None
        }
    }
}

/// cpuio's options, as fio's `fio_cpuio_init` reads them: cpuload is
/// required (fio: "cpu thread needs rate (cpuload=)") and capped at 100.
fn cpu_load(st: &mut State, job: &Job) -> Option<CpuLoad> {
    let at = job.get("ioengine").map_or_else(|| job.at.clone(), |o| o.at.clone());
    let load = number(st, job, "cpuload", 0)?;
    if load == 0 {
        let at = job.get("cpuload").map_or(at, |o| o.at.clone());
        st.m.bad.push((
            at,
            "ioengine=cpuio needs cpuload= (the percent of a CPU to burn, 1-100), as fio does".into(),
        ));
        return None;
    }
    let chunk_us = number(st, job, "cpuchunks", 50_000)?;
    let qsort = match job.get("cpumode").map(|o| (o, o.value.as_deref().map(str::trim))) {
        None | Some((_, Some("noop"))) => false,
        Some((_, Some("qsort"))) => true,
        Some((o, v)) => {
            let v = v.unwrap_or("");
            st.m.bad
                .push((o.at.clone(), format!("cpumode: '{v}' is not noop or qsort")));
            return None;
        }
    };
    Some(CpuLoad {
        load: load.min(100),
        chunk_us,
        qsort,
        exit_on_io_done: job.flag("exit_on_io_done"),
    })
}

/// What every engine without I/O shares: no files (fslab's null engine
/// lays out none), reads as what fio counts, and a runtime to end it:
/// without one fio's job never ends. A rate or thinktime is fio's own
/// business there (the engine sets its thinktime), so fslab refuses them.
fn noio_job(st: &mut State, job: &Job, name: &str) {
    let at = job.get("ioengine").map_or_else(|| job.at.clone(), |o| o.at.clone());
    st.a.engine = "null".into();
    st.a.rw = "read".into();
    st.a.size.get_or_insert_with(|| "4k".into());
    let runtime =
        st.a.runtime
            .as_deref()
            .and_then(|r| crate::units::parse_duration(r).ok());
    if runtime.is_none_or(|r| r.is_zero()) {
        st.m.bad.push((
            at.clone(),
            format!("ioengine={name} without runtime=: fio's {name} job never ends"),
        ));
    }
    for key in ["thinktime", "rate", "rate_iops", "rate_min", "rate_iops_min"] {
        if let Some(o) = job.get(key) {
            st.m.bad.push((
                o.at.clone(),
                format!("{key} with ioengine={name}: the engine paces itself (fio overrides its thinktime); fslab does not mix the two"),
            ));
        }
    }
}
