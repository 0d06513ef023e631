//! fio's lines before the run, as the report keeps them
//! (`model::FioJobHead`): each job's announcement and the files each of
//! its clones laid out.

use crate::model::{FioJobHead, LaidOut};
use crate::plan::fio::{FioEngine, FioJobPlan};
use crate::target::Prepared;

fn option<'a>(j: &'a FioJobPlan, key: &str) -> Option<&'a str> {
    j.options.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// Job `j` as fio announces it (init.c add_job): its pattern, block
/// sizes, engine and iodepth as the job wrote them.
pub(super) fn head(j: &FioJobPlan) -> FioJobHead {
    let s = &j.plan.shape;
    let on = |v: Option<&str>| v.is_some_and(|v| !matches!(v.trim(), "0" | "false"));
    let iodepth = option(j, "iodepth").and_then(|v| v.trim().parse().ok()).unwrap_or(1);
    FioJobHead {
        name: j.name.clone(),
        groupid: j.group,
        rw: s.rw.name().to_string(),
        bs: [[s.bs, s.bs_max]; 3],
        ioengine: option(j, "ioengine").unwrap_or("psync").trim().to_string(),
        iodepth,
        clones: j.plan.jobs,
        thread: on(option(j, "thread")),
        kb_base: option(j, "kb_base").and_then(|v| v.trim().parse().ok()).unwrap_or(1024),
        laid_out: Vec::new(),
        engine_says: engine_says(j),
        // the plan's depth is 1 where fio caps a sync engine's
        depth_capped: iodepth > 1 && j.plan.ioengine.iodepth == 1,
    }
}

/// fio's log_info lines of its cpuio and exec engines, per clone
/// (engines/cpu.c noop_init/qsort_init; engines/exec.c fio_exec_init and
/// exec_background), with C's "(null)" for arguments not given.
fn engine_says(j: &FioJobPlan) -> Vec<String> {
    let n = &j.name;
    match &j.fio.engine {
        FioEngine::Cpu(c) => {
            let mode = if c.qsort { "qsort" } else { "noop" };
            vec![format!(
                "{n} ({mode}): ioengine=cpuio, cpuload={}, cpucycle={}",
                c.load, c.chunk_us
            )]
        }
        FioEngine::Exec(x) => {
            let program = option(j, "program").unwrap_or("");
            let args = option(j, "arguments");
            let expanded = args.map_or("(null)".to_string(), |a| {
                a.replace("%r", &x.runtime.as_secs().to_string()).replace("%n", n)
            });
            let run = if x.redirect.is_some() {
                format!("{n} : Saving output of {program} {expanded} : stdout={n}.stdout stderr={n}.stderr")
            } else {
                format!("{n} : Running {program} {expanded}")
            };
            vec![
                format!("{n} : program={program}, arguments={}", args.unwrap_or("(null)")),
                run,
            ]
        }
        _ => Vec::new(),
    }
}

/// The files each clone of a job laid out, in clone order: a clone with
/// files of its own lays them out; clones sharing files, the first.
pub(super) fn laid_out(p: &Prepared) -> Vec<LaidOut> {
    let Some(bytes) = p.laid_out else {
        return Vec::new();
    };
    let per = p.per_job.max(1);
    (0..p.files.len() / per)
        .map(|_| LaidOut {
            files: per as u32,
            bytes: bytes * per as u64,
        })
        .collect()
}
