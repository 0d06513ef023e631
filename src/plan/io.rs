//! The io workload's plan: `fslab io` flags, parsed and cross-checked.
//! fio's job options beyond those flags live in typed parts (`region`,
//! `buffers`, `pacing`) whose defaults are `fslab io`'s behaviour.

pub mod buffers;
mod flags;
pub mod pacing;
pub mod prio;
pub mod region;

pub use buffers::BufferPlan;
pub use pacing::PacingPlan;
pub use region::RegionPlan;

use super::{seed, PlanError, Result};
use crate::cli::IoArgs;
use crate::engine::{EngineKind, UringOpts};
use crate::units;
use flags::{
    block_sizes, files_and_jobs, lat_buckets, pacing, queue_opts, syncs, target_and_stonewall, timing, verify,
};
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
    // fio's trims: sequential or random discards (a hole punched with the
    // falloc engine), and trimwrite's pairs: each range trimmed, then
    // written (fio's td_trimwrite: the write goes where the trim went). A
    // plain comment: a doc comment would make the schema's enum a oneOf.
    Trim,
    RandTrim,
    TrimWrite,
    RandTrimWrite,
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
            "trim" => Rw::Trim,
            "randtrim" => Rw::RandTrim,
            "trimwrite" => Rw::TrimWrite,
            "randtrimwrite" => Rw::RandTrimWrite,
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
            Rw::Trim => "trim",
            Rw::RandTrim => "randtrim",
            Rw::TrimWrite => "trimwrite",
            Rw::RandTrimWrite => "randtrimwrite",
        }
    }

    pub fn random(self) -> bool {
        matches!(
            self,
            Rw::RandRead | Rw::RandWrite | Rw::RandRw | Rw::RandTrim | Rw::RandTrimWrite
        )
    }

    /// The job discards (trim, randtrim, trimwrite, randtrimwrite).
    pub fn trims(self) -> bool {
        matches!(self, Rw::Trim | Rw::RandTrim | Rw::TrimWrite | Rw::RandTrimWrite)
    }

    /// Each trim is followed by a write of its range (trimwrite, randtrimwrite).
    pub fn trim_writes(self) -> bool {
        matches!(self, Rw::TrimWrite | Rw::RandTrimWrite)
    }

    /// Percentage of reads given `rwmixread`.
    pub fn read_pct(self, rwmixread: u32) -> u32 {
        match self {
            Rw::Read | Rw::RandRead => 100,
            // a trim destroys data as a write does: `writes` holds
            Rw::Write | Rw::RandWrite | Rw::Trim | Rw::RandTrim | Rw::TrimWrite | Rw::RandTrimWrite => 0,
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

// A shared block (the target, the jobs, the seed, what the latencies are
// counted in) and the parts each layer takes. The parts are flattened: a
// result file keeps one flat object per plan, as before there were parts
// (and the schema's description of the plan stays the line below).
/// A validated `fslab io` run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IoPlan {
    pub target: PathBuf,
    pub jobs: u32,
    pub seed: u64,
    pub lat_buckets_ns: Vec<u64>,
    /// Percentiles fio-json reports (fio's percentile_list); empty = fio's default list.
    pub lat_percentiles: Vec<f64>,
    /// What each job does: the workload's operations and the files they go to.
    #[serde(flatten)]
    pub shape: IoShape,
    /// How the operations are submitted: the engine's setup.
    #[serde(flatten)]
    pub ioengine: IoEngine,
    /// How long the run goes, how fast, and when it stops: the runner's.
    #[serde(flatten)]
    pub limits: IoLimits,
    /// What the target layer may do to a device or an existing file.
    #[serde(flatten)]
    pub consent: IoConsent,
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

/// The shape of the I/O: the pattern, the block sizes, the files and the
/// syncs each job issues. Read by the workload (`workload::io`) and by the
/// target layer, which lays out the files this shape needs.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IoShape {
    pub rw: Rw,
    pub rwmixread: u32,
    /// The (smallest) block size: offsets are multiples of it.
    pub bs: u64,
    /// The largest block size (= bs unless a range or split was given).
    pub bs_max: u64,
    /// (size, percent of operations), summing to 100; empty = bs..=bs_max.
    pub bssplit: Vec<(u64, u32)>,
    /// Write's split when it differs from read's (fio's bssplit=R,W);
    /// empty: `bssplit`. `bs` and `bs_max` span both.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bssplit_write: Vec<(u64, u32)>,
    /// Files per job (or shared), each of size / nrfiles bytes.
    pub nrfiles: u32,
    /// Bytes per job; None = the size of the device or existing file (or 256 MiB).
    pub size: Option<u64>,
    pub file_mode: FileMode,
    /// fsync after every N writes (0 = never).
    pub fsync_every: u64,
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
    /// fio's blockalign: random offsets are multiples of this (a multiple
    /// of `bs`); None: of `bs`, the smallest block size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blockalign: Option<u64>,
}

/// The I/O engine and its queue: what `app::io` builds each job's engine
/// from (and the target opens files with, `direct`).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IoEngine {
    pub engine: EngineKind,
    /// Operations in flight per job, and how many are submitted at once.
    pub iodepth: u32,
    pub iodepth_batch: u32,
    /// io_uring setup (used with `engine = uring`).
    pub uring: UringOpts,
    pub direct: bool,
    /// fio's cmdprio options: each I/O's own priority (libaio, io_uring).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdprio: Option<prio::CmdPrio>,
}

/// The run's limits: its time, its ramp, its rate, and when it stops.
/// What the runner's configuration is made of (`app::io::io_config`).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IoLimits {
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
    pub rate_iops: Option<u64>,
    /// --on-error stop.
    pub stop_on_error: bool,
    /// --stonewall.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stonewall: Option<crate::plan::Stonewall>,
}

/// The device consent: what the target layer (`target::check`,
/// `target::prepare`) may overwrite, and whether it fills the target first.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IoConsent {
    pub allow_device: bool,
    pub force_overwrite: bool,
    pub precondition: bool,
}

/// Bytes of the header every block written with `--verify` starts with
/// (its layout: `workload::verify`).
pub const VERIFY_HEADER: usize = 36;

/// A `--bssplit` value (`SIZE/PCT:...`), checked as the flag's.
pub fn parse_bssplit(t: &str) -> Result<Vec<(u64, u32)>> {
    flags::parse_bssplit(t)
}

/// Default bytes per job for a directory target.
pub const DEFAULT_SIZE: u64 = 256 << 20;

impl IoPlan {
    pub fn from_args(a: &IoArgs) -> Result<Self> {
        let rw = Rw::parse(&a.rw).ok_or_else(|| {
            PlanError::new(
                "--rw",
                format!(
                    "unknown pattern '{}' (known: read, write, randread, randwrite, rw, randrw, trim, randtrim, trimwrite, randtrimwrite)",
                    a.rw
                ),
            )
        })?;
        let rwmixread = match &a.rwmixwrite {
            Some(w) => 100 - units::parse_percent(w).map_err(|e| PlanError::new("--rwmixwrite", e))?,
            None => units::parse_percent(&a.rwmixread).map_err(|e| PlanError::new("--rwmixread", e))?,
        };
        let (bs, bs_max, bssplit) = block_sizes(a)?;
        let verify = verify(a, bs, bs_max, &bssplit)?;
        if verify && rw.trims() && !a.verify_only {
            return Err(PlanError::new(
                "--verify",
                format!("rw={}: fslab does not verify what a trim job leaves", rw.name()),
            ));
        }
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
        Ok(IoPlan {
            target: PathBuf::from(&a.common.target),
            jobs: jobs as u32,
            seed,
            lat_buckets_ns,
            lat_percentiles: Vec::new(),
            shape: IoShape {
                rw,
                rwmixread,
                bs,
                bs_max,
                bssplit,
                bssplit_write: Vec::new(),
                nrfiles: nrfiles as u32,
                size,
                file_mode: if a.shared_file {
                    FileMode::SharedFile
                } else {
                    FileMode::FilePerJob
                },
                fsync_every,
                fdatasync_every,
                end_fsync: a.end_fsync,
                thinktime,
                verify,
                verify_only: a.verify_only,
                blockalign: None,
            },
            ioengine: IoEngine {
                engine,
                iodepth: iodepth as u32,
                iodepth_batch: iodepth_batch as u32,
                uring,
                direct: a.direct,
                cmdprio: None,
            },
            limits: IoLimits {
                runtime,
                time_based: runtime.is_some() && !a.size_based,
                ramp,
                rate_iops,
                stop_on_error,
                stonewall,
            },
            consent: IoConsent {
                allow_device: a.allow_device,
                force_overwrite: a.force_overwrite,
                precondition: a.precondition,
            },
            region: RegionPlan::default(),
            buffers,
            pacing: PacingPlan::default(),
        })
    }

    /// Bytes of each file: the job's size spread over its files.
    pub fn file_size(&self, size: u64) -> u64 {
        self.shape.file_size(size)
    }

    /// True when the run writes to its files.
    pub fn writes(&self) -> bool {
        self.shape.writes()
    }
}

impl IoShape {
    /// Bytes of each file: the job's size spread over its files.
    pub fn file_size(&self, size: u64) -> u64 {
        (size / self.nrfiles as u64).max(self.bs_max)
    }

    /// True when the run writes to its files.
    pub fn writes(&self) -> bool {
        self.rw.read_pct(self.rwmixread) < 100
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The parts are flattened: a result file's plan is one flat object with
    /// every field at the top, as before there were parts, and reads back
    /// to the same object.
    #[test]
    fn parts_are_flat_in_the_json_and_read_back() {
        let mut a = IoArgs {
            rw: "randrw".into(),
            rwmixread: "70".into(),
            bs: "4k".into(),
            jobs: "2".into(),
            engine: "null".into(),
            runtime: Some("1s".into()),
            thinktime: Some("1ms".into()),
            ..Default::default()
        };
        a.common.target = ".".into();
        let p = IoPlan::from_args(&a).unwrap();
        let v = serde_json::to_value(&p).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        for part in ["shape", "ioengine", "limits", "consent"] {
            assert!(!keys.contains(&part), "{part} is flattened: {keys:?}");
        }
        for field in [
            "rw",
            "bs",
            "engine",
            "iodepth",
            "runtime",
            "ramp",
            "allow_device",
            "thinktime",
        ] {
            assert!(keys.contains(&field), "{field} at the top: {keys:?}");
        }
        assert_eq!((v["rw"].as_str(), v["rwmixread"].as_u64()), (Some("randrw"), Some(70)));
        assert_eq!(
            (v["runtime"].as_str(), v["thinktime"].as_str()),
            (Some("1s"), Some("1ms"))
        );
        let back: IoPlan = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&back).unwrap(), v);
    }
}
