//! The checks of `fslab io`'s flags, one function per concern (block
//! sizes, verify, queue, timing, files and jobs, syncs, pacing, target):
//! `IoPlan::from_args` calls them in order and assembles the plan from
//! their results. Kept apart from the plan's type so io.rs reads as what an
//! io plan is, and this file as how a command line becomes one.

use super::{Rw, VERIFY_HEADER};
use crate::cli::IoArgs;
use crate::engine::{EngineKind, UringOpts};
use crate::plan::{duration, PlanError, Result};
use crate::stats::MAX_LAT_BUCKETS;
use crate::units;
use std::time::Duration;

pub(super) fn count(flag: &str, s: &str, min: u64) -> Result<u64> {
    let n = units::parse_count(s).map_err(|e| PlanError::new(flag, e))?;
    if n < min {
        return Err(PlanError::new(flag, format!("must be at least {min}, got {n}")));
    }
    Ok(n)
}

/// fio's bssplit: `4k/60:64k/30:1m` (sizes without a share split the rest evenly).
pub(super) fn parse_bssplit(t: &str) -> Result<Vec<(u64, u32)>> {
    let bad = |m: String| PlanError::new("--bssplit", m);
    let mut parts: Vec<(u64, Option<u32>)> = Vec::new();
    for p in t.split(':') {
        let (size, pct) = match p.split_once('/') {
            Some((s, pct)) => (
                s,
                Some(units::parse_percent(pct).map_err(|e| bad(format!("'{p}': {e}")))?),
            ),
            None => (p, None),
        };
        let v = units::parse_size(size).map_err(|e| bad(format!("'{p}': {e}")))?;
        if v == 0 || v > 64 << 20 {
            return Err(bad(format!("'{p}': block size out of range (1 byte to 64 MiB)")));
        }
        parts.push((v, pct));
    }
    let given: u32 = parts.iter().filter_map(|p| p.1).sum();
    if given > 100 {
        return Err(bad(format!("shares add up to {given}%, more than 100")));
    }
    let open = parts.iter().filter(|p| p.1.is_none()).count() as u32;
    if open == 0 && given != 100 {
        return Err(bad(format!("shares add up to {given}%, not 100")));
    }
    let mut left = 100 - given;
    let mut out = Vec::new();
    let mut k = 0;
    for (v, pct) in parts {
        let pct = pct.unwrap_or_else(|| {
            k += 1;
            // the last open size takes the rounding remainder
            let share = if k == open { left } else { (100 - given) / open };
            left -= share;
            share
        });
        if pct > 0 {
            out.push((v, pct));
        }
    }
    Ok(out)
}

/// (block size, weight percent) pairs of --bssplit.
type BsSplit = Vec<(u64, u32)>;

/// --bs (a size or a range) and --bssplit: the smallest and largest block.
pub(super) fn block_sizes(a: &IoArgs) -> Result<(u64, u64, BsSplit)> {
    let one_bs = |flag: &str, t: &str| -> Result<u64> {
        let v = units::parse_size(t).map_err(|e| PlanError::new(flag, e))?;
        if v == 0 || v > 64 << 20 {
            return Err(PlanError::new(flag, format!("{v} is out of range (1 byte to 64 MiB)")));
        }
        Ok(v)
    };
    let (mut bs, mut bs_max) = match a.bs.split_once('-') {
        // "-4k" (negative) or "4k-": not a range, and no part is the mistake
        Some((lo, hi)) if lo.trim().is_empty() || hi.trim().is_empty() => {
            return Err(PlanError::new(
                "--bs",
                format!(
                    "'{}' is neither a size nor a range MIN-MAX (examples: 4k, 4k-64k)",
                    a.bs
                ),
            ))
        }
        Some((lo, hi)) => {
            let (lo, hi) = (one_bs("--bs", lo)?, one_bs("--bs", hi)?);
            if hi < lo {
                return Err(PlanError::new(
                    "--bs",
                    format!("range {} has its maximum below its minimum", a.bs),
                ));
            }
            (lo, hi)
        }
        None => {
            let v = one_bs("--bs", &a.bs)?;
            (v, v)
        }
    };
    let bssplit = match &a.bssplit {
        None => Vec::new(),
        Some(t) => {
            let split = parse_bssplit(t)?;
            bs = split.iter().map(|x| x.0).min().unwrap_or(bs);
            bs_max = split.iter().map(|x| x.0).max().unwrap_or(bs_max);
            split
        }
    };
    Ok((bs, bs_max, bssplit))
}

/// --verify and --verify-only: whether blocks carry a checked header.
pub(super) fn verify(a: &IoArgs, bs: u64, bs_max: u64, bssplit: &[(u64, u32)]) -> Result<bool> {
    let verify = match a.verify.as_deref() {
        None => a.verify_only,
        Some("crc32c") => true,
        Some(m) => {
            return Err(PlanError::new(
                "--verify",
                format!("unknown method '{m}' (known: crc32c)"),
            ))
        }
    };
    if verify && (bs != bs_max || !bssplit.is_empty()) {
        return Err(PlanError::new(
            "--verify",
            "needs one block size (no range or --bssplit)",
        ));
    }
    if verify && bs < VERIFY_HEADER as u64 {
        return Err(PlanError::new(
            "--verify",
            format!("blocks of {bs} bytes cannot hold the {}-byte header", VERIFY_HEADER),
        ));
    }
    if a.verify_only && a.runtime.is_some() {
        return Err(PlanError::new(
            "--verify-only",
            "reads every block once: leave out --runtime",
        ));
    }
    Ok(verify)
}

/// --iodepth, --iodepth-batch and the io_uring options (refused for other engines).
pub(super) fn queue_opts(a: &IoArgs, engine: EngineKind) -> Result<(u64, u64, UringOpts)> {
    let iodepth = count("--iodepth", &a.iodepth, 1)?;
    if iodepth > 4096 {
        return Err(PlanError::new("--iodepth", format!("{iodepth} is more than 4096")));
    }
    let iodepth_batch = match &a.iodepth_batch {
        None => 1,
        Some(s) => count("--iodepth-batch", s, 1)?,
    };
    if iodepth_batch > iodepth {
        return Err(PlanError::new(
            "--iodepth-batch",
            format!("{iodepth_batch} is more than --iodepth {iodepth}"),
        ));
    }
    let sqpoll_idle_ms = match &a.sqpoll {
        None => None,
        Some(s) => Some(duration("--sqpoll", s)?.as_millis().min(u32::MAX as u128) as u32),
    };
    let uring = UringOpts {
        depth: iodepth as u32,
        sqpoll_idle_ms,
        hipri: a.hipri,
        fixed_files: a.fixed_files,
        fixed_bufs: a.fixed_bufs,
    };
    if engine != EngineKind::Uring {
        let queues = matches!(engine, EngineKind::Libaio | EngineKind::Posixaio);
        let uring_only = [
            ("--iodepth", iodepth > 1 && !queues),
            ("--iodepth-batch", a.iodepth_batch.is_some() && !queues),
            ("--fixed-files", a.fixed_files),
            ("--fixed-bufs", a.fixed_bufs),
            ("--sqpoll", a.sqpoll.is_some()),
            ("--hipri", a.hipri),
        ];
        if let Some((flag, _)) = uring_only.iter().find(|(_, set)| *set) {
            return Err(PlanError::new(
                *flag,
                if queues {
                    "needs --engine uring (an io_uring option)".to_string()
                } else {
                    format!(
                        "needs --engine uring, libaio or posixaio (the {} engine does one operation at a time)",
                        a.engine
                    )
                },
            ));
        }
    }
    if a.hipri && !a.direct {
        return Err(PlanError::new("--hipri", "polled completions need --direct"));
    }
    if engine == EngineKind::Uring {
        crate::engine::probe_uring(&uring, &crate::engine::uring::io_opcodes(&uring))
            .map_err(|e| PlanError::new("--engine", e))?;
    }
    Ok((iodepth, iodepth_batch, uring))
}

/// --runtime and --ramp.
pub(super) fn timing(a: &IoArgs) -> Result<(Option<Duration>, Duration)> {
    let runtime = match &a.runtime {
        None => None,
        Some(s) => {
            let d = duration("--runtime", s)?;
            if d.is_zero() {
                return Err(PlanError::new("--runtime", "must be longer than 0"));
            }
            Some(d)
        }
    };
    let ramp = match &a.ramp {
        None => Duration::ZERO,
        Some(s) => duration("--ramp", s)?,
    };
    if !ramp.is_zero() && (runtime.is_none() || a.size_based) {
        return Err(PlanError::new(
            "--ramp",
            "needs --runtime (a ramp excludes time, so the run must be time-based)",
        ));
    }
    Ok((runtime, ramp))
}

/// --lat-buckets: latency thresholds in ns, sorted, without repeats.
pub(super) fn lat_buckets(a: &IoArgs) -> Result<Vec<u64>> {
    let lat_buckets_ns = match &a.lat_buckets {
        None => vec![2_000_000],
        Some(s) => {
            let mut v = Vec::new();
            for part in s.split(',') {
                let d = duration("--lat-buckets", part)?;
                if d.is_zero() {
                    return Err(PlanError::new("--lat-buckets", "thresholds must be above 0"));
                }
                v.push(d.as_nanos().min(u64::MAX as u128) as u64);
            }
            v.sort_unstable();
            v.dedup();
            if v.len() > MAX_LAT_BUCKETS {
                return Err(PlanError::new(
                    "--lat-buckets",
                    format!("at most {MAX_LAT_BUCKETS} thresholds"),
                ));
            }
            v
        }
    };
    Ok(lat_buckets_ns)
}

/// --nrfiles, --size (at least one block) and --jobs.
pub(super) fn files_and_jobs(a: &IoArgs, bs: u64) -> Result<(u64, Option<u64>, u64)> {
    let nrfiles = count("--nrfiles", &a.nrfiles, 1)?;
    if nrfiles > 4096 {
        return Err(PlanError::new("--nrfiles", format!("{nrfiles} is more than 4096")));
    }
    let size = match &a.size {
        None => None,
        Some(s) => {
            let v = units::parse_size(s).map_err(|e| PlanError::new("--size", e))?;
            if v < bs {
                return Err(PlanError::new(
                    "--size",
                    format!("{v} bytes is smaller than one block (--bs {bs})"),
                ));
            }
            Some(v)
        }
    };
    let jobs = count("--jobs", &a.jobs, 1)?;
    if jobs > 4096 {
        return Err(PlanError::new("--jobs", format!("{jobs} is more than 4096")));
    }
    Ok((nrfiles, size, jobs))
}

/// --fsync and --fdatasync (only with writes), and --end-fsync (only size-based).
pub(super) fn syncs(a: &IoArgs, rw: Rw, rwmixread: u32, runtime: Option<Duration>) -> Result<(u64, u64)> {
    let fsync_every = match &a.fsync {
        None => 0,
        Some(s) => count("--fsync", s, 1)?,
    };
    if fsync_every > 0 && rw.read_pct(rwmixread) == 100 {
        return Err(PlanError::new(
            "--fsync",
            format!("--rw {} does no writes to fsync", rw.name()),
        ));
    }
    let fdatasync_every = match &a.fdatasync {
        None => 0,
        Some(s) => count("--fdatasync", s, 1)?,
    };
    if fdatasync_every > 0 && rw.read_pct(rwmixread) == 100 {
        return Err(PlanError::new(
            "--fdatasync",
            format!("--rw {} does no writes to fdatasync", rw.name()),
        ));
    }
    if a.end_fsync && runtime.is_some() && !a.size_based {
        return Err(PlanError::new(
            "--end-fsync",
            "needs a size-based run (without --runtime): a timed run has no end of its data",
        ));
    }
    Ok((fsync_every, fdatasync_every))
}

/// --thinktime (iodepth 1 only), --fixed-files (one file only) and --rate-iops.
pub(super) fn pacing(a: &IoArgs, iodepth: u64, nrfiles: u64) -> Result<(Option<Duration>, Option<u64>)> {
    let thinktime = match &a.thinktime {
        None => None,
        Some(s) => Some(duration("--thinktime", s)?).filter(|d| !d.is_zero()),
    };
    if thinktime.is_some() && iodepth > 1 {
        return Err(PlanError::new("--thinktime", "works with --iodepth 1 only"));
    }
    if nrfiles > 1 && a.fixed_files {
        return Err(PlanError::new("--fixed-files", "works with --nrfiles 1 only"));
    }
    let rate_iops = match &a.rate_iops {
        None => None,
        Some(s) => Some(count("--rate-iops", s, 1)?),
    };
    Ok((thinktime, rate_iops))
}

/// --target (not empty, not a pseudo filesystem), then --stonewall.
pub(super) fn target_and_stonewall(a: &IoArgs, runtime: Option<Duration>) -> Result<Option<crate::plan::Stonewall>> {
    if a.common.target.is_empty() {
        return Err(PlanError::new("--target", "empty path"));
    }
    crate::plan::refuse_pseudo_fs("--target", a.common.target.as_ref())?;
    let stonewall = crate::plan::stonewall(a.stonewall.as_deref())?;
    if stonewall == Some(crate::plan::Stonewall::First) && runtime.is_some() && !a.size_based {
        return Err(PlanError::new(
            "--stonewall",
            "`first` waits for a job to finish its --size, and jobs of a time-based run (--runtime) never do: \
             give a deadline (--stonewall 30s) or add --size-based",
        ));
    }
    Ok(stonewall)
}
