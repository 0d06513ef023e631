//! The io workload's plan: `fslab io` flags, parsed and cross-checked.
//! fio's job options beyond those flags live in typed parts (`region`,
//! `buffers`, `pacing`) whose defaults are `fslab io`'s behaviour.

pub mod buffers;
pub mod pacing;
pub mod region;

pub use buffers::BufferPlan;
pub use pacing::PacingPlan;
pub use region::RegionPlan;

use super::{duration, seed, Outputs, PlanError, Result};
use crate::cli::IoArgs;
use crate::engine::{EngineKind, UringOpts};
use crate::stats::MAX_LAT_BUCKETS;
use crate::units;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// The access pattern, with fio's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    Rw,
    RandRw,
}

impl Rw {
    fn parse(s: &str) -> Option<Rw> {
        Some(match s {
            "read" => Rw::Read,
            "write" => Rw::Write,
            "randread" => Rw::RandRead,
            "randwrite" => Rw::RandWrite,
            "rw" | "readwrite" => Rw::Rw,
            "randrw" => Rw::RandRw,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::Rw => "rw",
            Rw::RandRw => "randrw",
        }
    }

    pub fn random(self) -> bool {
        matches!(self, Rw::RandRead | Rw::RandWrite | Rw::RandRw)
    }

    /// Percentage of reads given `rwmixread`.
    pub fn read_pct(self, rwmixread: u32) -> u32 {
        match self {
            Rw::Read | Rw::RandRead => 100,
            Rw::Write | Rw::RandWrite => 0,
            Rw::Rw | Rw::RandRw => rwmixread,
        }
    }
}

/// How jobs map to files in a directory target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FileMode {
    FilePerJob,
    SharedFile,
}

/// A validated `fslab io` run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IoPlan {
    pub target: PathBuf,
    pub rw: Rw,
    pub rwmixread: u32,
    /// The (smallest) block size: offsets are multiples of it.
    pub bs: u64,
    /// The largest block size (= bs unless a range or split was given).
    pub bs_max: u64,
    /// (size, percent of operations), summing to 100; empty = bs..=bs_max.
    pub bssplit: Vec<(u64, u32)>,
    /// Files per job (or shared), each of size / nrfiles bytes.
    pub nrfiles: u32,
    /// fdatasync after every N writes (0 = never).
    pub fdatasync_every: u64,
    /// fsync every file once a size-based job is done.
    pub end_fsync: bool,
    #[serde(with = "opt_dur")]
    #[schemars(with = "Option<dur::Text>")]
    pub thinktime: Option<Duration>,
    /// Stamp written blocks with a header and CRC32C; check every read.
    pub verify: bool,
    /// Read every block once and check it; write nothing.
    pub verify_only: bool,
    /// Bytes per job; None = the size of the device or existing file (or 256 MiB).
    pub size: Option<u64>,
    pub jobs: u32,
    pub file_mode: FileMode,
    pub direct: bool,
    pub engine: EngineKind,
    /// Operations in flight per job, and how many are submitted at once.
    pub iodepth: u32,
    pub iodepth_batch: u32,
    /// io_uring setup (used with `engine = uring`).
    pub uring: UringOpts,
    /// The run's time limit (after the ramp).
    #[serde(with = "opt_dur")]
    #[schemars(with = "Option<dur::Text>")]
    pub runtime: Option<Duration>,
    /// Jobs loop over their files until `runtime` (fio's time_based); otherwise
    /// each job moves its size once, or less when `runtime` ends it first.
    pub time_based: bool,
    #[serde(with = "dur")]
    #[schemars(with = "dur::Text")]
    pub ramp: Duration,
    /// fsync after every N writes (0 = never).
    pub fsync_every: u64,
    pub rate_iops: Option<u64>,
    pub seed: u64,
    pub lat_buckets_ns: Vec<u64>,
    /// Percentiles fio-json reports (fio's percentile_list); empty = fio's default list.
    pub lat_percentiles: Vec<f64>,
    pub allow_device: bool,
    pub force_overwrite: bool,
    pub precondition: bool,
    #[serde(skip)]
    pub outputs: Outputs,
    #[serde(skip)]
    pub quiet: bool,
    /// --on-error stop.
    pub stop_on_error: bool,
    /// --stonewall.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stonewall: Option<crate::plan::Stonewall>,
    /// Offsets, amounts and file choice beyond the flags (fio's options).
    #[serde(default, skip_serializing_if = "RegionPlan::is_default")]
    pub region: RegionPlan,
    /// Write buffer contents and verification beyond the flags.
    #[serde(default, skip_serializing_if = "BufferPlan::is_default")]
    pub buffers: BufferPlan,
    /// Pacing beyond --rate-iops and --thinktime.
    #[serde(default, skip_serializing_if = "PacingPlan::is_default")]
    pub pacing: PacingPlan,
}

/// Bytes of the header every block written with `--verify` starts with
/// (its layout: `workload::verify`).
pub const VERIFY_HEADER: usize = 36;

/// Default bytes per job for a directory target.
pub const DEFAULT_SIZE: u64 = 256 << 20;

fn count(flag: &str, s: &str, min: u64) -> Result<u64> {
    let n = units::parse_count(s).map_err(|e| PlanError::new(flag, e))?;
    if n < min {
        return Err(PlanError::new(flag, format!("must be at least {min}, got {n}")));
    }
    Ok(n)
}

impl IoPlan {
    pub fn from_args(a: &IoArgs) -> Result<Self> {
        let rw = Rw::parse(&a.rw).ok_or_else(|| {
            PlanError::new(
                "--rw",
                format!(
                    "unknown pattern '{}' (known: read, write, randread, randwrite, rw, randrw)",
                    a.rw
                ),
            )
        })?;
        let rwmixread = units::parse_percent(&a.rwmixread).map_err(|e| PlanError::new("--rwmixread", e))?;
        let (bs, bs_max, bssplit) = block_sizes(a)?;
        let verify = verify(a, bs, bs_max, &bssplit)?;
        // --verify-only reads sequentially, whatever --rw says
        let rw = if a.verify_only { Rw::Read } else { rw };
        let (nrfiles, size, jobs) = files_and_jobs(a, bs)?;
        let engine = EngineKind::parse(&a.engine)
            .ok_or_else(|| PlanError::new("--engine", format!("unknown engine '{}' (known: sync, null)", a.engine)))?;
        let (iodepth, iodepth_batch, uring) = queue_opts(a, engine)?;
        let (runtime, ramp) = timing(a)?;
        let (fsync_every, fdatasync_every) = syncs(a, rw, rwmixread, runtime)?;
        let (thinktime, rate_iops) = pacing(a, iodepth, nrfiles)?;
        let lat_buckets_ns = lat_buckets(a)?;
        let buffers = buffers::from_args(a, rw.read_pct(rwmixread) > 0)?;
        let stonewall = target_and_stonewall(a, runtime)?;
        let (seed, stop_on_error) = (seed(&a.common)?, super::stop_on_error(&a.common)?);
        // last: the output files are checked once everything else is valid
        let outputs = Outputs::from_args(&a.common, "io")?;
        Ok(IoPlan {
            target: PathBuf::from(&a.common.target),
            rw,
            rwmixread,
            bs,
            bs_max,
            bssplit,
            nrfiles: nrfiles as u32,
            fdatasync_every,
            end_fsync: a.end_fsync,
            thinktime,
            verify,
            verify_only: a.verify_only,
            size,
            jobs: jobs as u32,
            file_mode: if a.shared_file {
                FileMode::SharedFile
            } else {
                FileMode::FilePerJob
            },
            direct: a.direct,
            engine,
            iodepth: iodepth as u32,
            iodepth_batch: iodepth_batch as u32,
            uring,
            runtime,
            time_based: runtime.is_some() && !a.size_based,
            ramp,
            fsync_every,
            rate_iops,
            seed,
            lat_buckets_ns,
            lat_percentiles: Vec::new(),
            allow_device: a.allow_device,
            force_overwrite: a.force_overwrite,
            precondition: a.precondition,
            outputs,
            quiet: a.common.quiet,
            stop_on_error,
            stonewall,
            region: RegionPlan::default(),
            buffers,
            pacing: PacingPlan::default(),
        })
    }

    /// Bytes of each file: the job's size spread over its files.
    pub fn file_size(&self, size: u64) -> u64 {
        (size / self.nrfiles as u64).max(self.bs_max)
    }

    /// True when the run writes to its files.
    pub fn writes(&self) -> bool {
        self.rw.read_pct(self.rwmixread) < 100
    }
}

/// fio's bssplit: `4k/60:64k/30:1m` (sizes without a share split the rest evenly).
fn parse_bssplit(t: &str) -> Result<Vec<(u64, u32)>> {
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

/// A duration as humantime writes it ("1m 30s"), and back: result files
/// keep plans in this form, and `compare`/`report` read them again.
pub(crate) mod dur {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    /// A duration as a result file writes it, in humantime's words ("1s",
    /// "1m 30s", "250ms"): what the schema says of a `dur` field.
    #[derive(schemars::JsonSchema)]
    #[schemars(rename = "Duration")]
    #[allow(dead_code)] // never built: only its schema is used
    pub struct Text(String);

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&humantime::format_duration(*d).to_string())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let s = String::deserialize(d)?;
        humantime::parse_duration(&s).map_err(serde::de::Error::custom)
    }
}

/// `dur` for an optional duration (null when absent).
pub(crate) mod opt_dur {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::dur::serialize(d, s),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|s| humantime::parse_duration(&s).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// (block size, weight percent) pairs of --bssplit.
type BsSplit = Vec<(u64, u32)>;

/// --bs (a size or a range) and --bssplit: the smallest and largest block.
fn block_sizes(a: &IoArgs) -> Result<(u64, u64, BsSplit)> {
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
fn verify(a: &IoArgs, bs: u64, bs_max: u64, bssplit: &[(u64, u32)]) -> Result<bool> {
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
fn queue_opts(a: &IoArgs, engine: EngineKind) -> Result<(u64, u64, UringOpts)> {
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
        let uring_only = [
            ("--iodepth", iodepth > 1),
            ("--iodepth-batch", a.iodepth_batch.is_some()),
            ("--fixed-files", a.fixed_files),
            ("--fixed-bufs", a.fixed_bufs),
            ("--sqpoll", a.sqpoll.is_some()),
            ("--hipri", a.hipri),
        ];
        if let Some((flag, _)) = uring_only.iter().find(|(_, set)| *set) {
            return Err(PlanError::new(
                *flag,
                format!(
                    "needs --engine uring (the {} engine does one operation at a time)",
                    a.engine
                ),
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
fn timing(a: &IoArgs) -> Result<(Option<Duration>, Duration)> {
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
fn lat_buckets(a: &IoArgs) -> Result<Vec<u64>> {
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
fn files_and_jobs(a: &IoArgs, bs: u64) -> Result<(u64, Option<u64>, u64)> {
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
fn syncs(a: &IoArgs, rw: Rw, rwmixread: u32, runtime: Option<Duration>) -> Result<(u64, u64)> {
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
fn pacing(a: &IoArgs, iodepth: u64, nrfiles: u64) -> Result<(Option<Duration>, Option<u64>)> {
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
fn target_and_stonewall(a: &IoArgs, runtime: Option<Duration>) -> Result<Option<crate::plan::Stonewall>> {
    if a.common.target.is_empty() {
        return Err(PlanError::new("--target", "empty path"));
    }
    super::refuse_pseudo_fs("--target", a.common.target.as_ref())?;
    let stonewall = super::stonewall(a.stonewall.as_deref())?;
    if stonewall == Some(crate::plan::Stonewall::First) && runtime.is_some() && !a.size_based {
        return Err(PlanError::new(
            "--stonewall",
            "`first` waits for a job to finish its --size, and jobs of a time-based run (--runtime) never do: \
             give a deadline (--stonewall 30s) or add --size-based",
        ));
    }
    Ok(stonewall)
}
