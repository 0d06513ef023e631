//! fio's lines before the run, as the report keeps them
//! (`model::FioJobHead`): each job's announcement and the files each of
//! its clones laid out.

use crate::model::{FioJobHead, LaidOut};
use crate::plan::fio::FioJobPlan;
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
        // the plan's depth is 1 where fio caps a sync engine's
        depth_capped: iodepth > 1 && j.plan.ioengine.iodepth == 1,
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
