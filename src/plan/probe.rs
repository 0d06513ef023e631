//! The probe's plan: which operation, on what grid, in which phases, under
//! which background load.

use super::{duration, seed, IoPlan, PlanError, Result};
use crate::cli::{IoArgs, ProbeArgs};
use crate::units;
use clap::Parser;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// The operation each probe performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeOp {
    /// open(O_CREAT|O_EXCL|O_TRUNC) + close + unlink, as in the seed thread.
    Create,
    Stat,
    /// mkdir + rmdir.
    Mkdir,
    /// append 4 KiB + fdatasync.
    AppendFsync,
    /// random 4 KiB O_DIRECT read of a laid-out file.
    Read,
}

/// The background load.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Load {
    /// A `dd` per thread into its own file, in `bs` blocks: `size` bytes
    /// and done (size-based), or, time-based, writing until its phase ends,
    /// its files holding at most `size` bytes together (the cap), rewritten
    /// from the start once full, as fio's time_based loops over its file.
    StreamWrite {
        size: u64,
        bs: u64,
        direct: bool,
        fsync_end: bool,
        threads: u32,
        /// Writes until the phase ends; `size` is the cap. Written only when
        /// set, so a size-based load's plan keeps the shape it always had.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        time_based: bool,
    },
    /// Any io workload.
    Io { args: String, plan: Box<IoPlan> },
}

/// A named phase and its length.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PhaseSpec {
    pub name: String,
    #[serde(with = "super::io::dur")]
    #[schemars(with = "super::io::dur::Text")]
    pub duration: Duration,
    /// The load runs during this phase.
    pub load: bool,
}

/// A validated `fslab probe` run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbePlan {
    pub target: PathBuf,
    pub op: ProbeOp,
    #[serde(with = "super::io::dur")]
    #[schemars(with = "super::io::dur::Text")]
    pub interval: Duration,
    pub phases: Vec<PhaseSpec>,
    /// Probes stop after this many (in addition to the phases' end).
    pub count: Option<u64>,
    #[serde(with = "super::io::dur")]
    #[schemars(with = "super::io::dur::Text")]
    pub stall: Duration,
    pub load: Option<Load>,
    /// `--load` as given.
    pub load_spec: Option<String>,
    /// Size of the file the read probe reads.
    pub read_file_size: u64,
    pub seed: u64,
    /// --on-error stop.
    pub stop_on_error: bool,
}

/// The cap of a time-based stream when `cap=` is not given: past the dirty
/// limits of most machines (so the writer is throttled as a `dd` is), and
/// lowered at run time to half the target's free space.
pub const DEFAULT_STREAM_CAP: u64 = 4 << 30;

fn parse_load(s: &str, target: &str) -> Result<Load> {
    let bad = |m: String| PlanError::new("--load", format!("'{s}': {m}"));
    let stream = match s.strip_prefix("stream-write") {
        Some("") => Some(""),
        Some(rest) => rest.strip_prefix(':'),
        None => None,
    };
    if let Some(rest) = stream {
        return stream_load(s, rest);
    }
    if let Some(rest) = s.strip_prefix("io:") {
        return io_load(s, rest, target);
    }
    Err(bad(
        "expected stream-write[:SIZE][,bs=1M][,cap=SIZE][,direct][,fsync-end][,threads=N] or io:'<fslab io flags>'"
            .into(),
    ))
}

/// `--load stream-write[:SIZE][,OPTION...]` (`s` whole, `rest` after the
/// colon): a `dd`-like writer, size-based or time-based.
fn stream_load(s: &str, rest: &str) -> Result<Load> {
    let bad = |m: String| PlanError::new("--load", format!("'{s}': {m}"));
    let mut parts = rest.split(',').filter(|p| !p.is_empty()).peekable();
    // a first part that is a size: size-based, as `dd count=`
    let size = match parts.peek() {
        Some(p) if !p.contains('=') && p.starts_with(|c: char| c.is_ascii_digit()) => {
            let v = units::parse_size(p).map_err(|e| bad(e.to_string()))?;
            parts.next();
            Some(v)
        }
        _ => None,
    };
    let (mut bs, mut direct, mut fsync_end, mut threads) = (1u64 << 20, false, false, 1u32);
    let mut cap = None;
    for p in parts {
        match p.split_once('=') {
            Some(("bs", v)) => bs = units::parse_size(v).map_err(|e| bad(e.to_string()))?,
            Some(("cap", v)) => cap = Some(units::parse_size(v).map_err(|e| bad(e.to_string()))?),
            Some(("threads", v)) => {
                threads = v
                    .parse()
                    .ok()
                    .filter(|&t| (1..=64).contains(&t))
                    .ok_or_else(|| bad(format!("threads={v}: 1 to 64")))?
            }
            None if p == "direct" => direct = true,
            None if p == "fsync-end" => fsync_end = true,
            _ => {
                return Err(bad(format!(
                    "unknown option '{p}' (known: bs=SIZE, cap=SIZE, direct, fsync-end, threads=N)"
                )))
            }
        }
    }
    if size.is_some() && cap.is_some() {
        return Err(bad(
            "cap= bounds a time-based stream (no SIZE); with a SIZE the stream writes that much and stops".into(),
        ));
    }
    if size.is_none() && fsync_end {
        return Err(bad(
            "fsync-end needs a SIZE: a time-based stream writes until its phase ends, and an fsync after it \
             would run in the next phase"
                .into(),
        ));
    }
    let total = size.or(cap).unwrap_or(DEFAULT_STREAM_CAP);
    if bs == 0 || bs > 64 << 20 || total < bs {
        let what = if size.is_some() { "SIZE" } else { "cap" };
        return Err(bad(format!(
            "needs 0 < bs <= 64 MiB and bs <= {what} (bs {bs}, {what} {total})"
        )));
    }
    Ok(Load::StreamWrite {
        size: total,
        bs,
        direct,
        fsync_end,
        threads,
        time_based: size.is_none(),
    })
}

/// `--load io:'<fslab io flags>'` (`s` whole, `rest` the flags): an io
/// workload in the probe's target, time-based unless told otherwise.
fn io_load(s: &str, rest: &str, target: &str) -> Result<Load> {
    let bad = |m: String| PlanError::new("--load", format!("'{s}': {m}"));
    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        a: IoArgs,
    }
    let mut argv = vec![
        "fslab-io".to_string(),
        "--target".into(),
        target.into(),
        "--quiet".into(),
    ];
    argv.extend(rest.split_whitespace().map(String::from));
    let w = Wrap::try_parse_from(&argv).map_err(|e| bad(crate::cli::one_line(&e)))?;
    if w.a.common.target != target || !w.a.common.output.is_empty() {
        return Err(bad(
            "the io load runs in the probe's --target and writes no output of its own".into(),
        ));
    }
    let mut a = w.a;
    // time-based: the load runs as long as its phase
    a.runtime.get_or_insert_with(|| "1h".into());
    let plan = IoPlan::from_args(&a).map_err(|e| bad(e.to_string()))?;
    Ok(Load::Io {
        args: rest.to_string(),
        plan: Box::new(plan),
    })
}

fn parse_op(op: &str) -> Result<ProbeOp> {
    Ok(match op {
        "create" => ProbeOp::Create,
        "stat" => ProbeOp::Stat,
        "mkdir" => ProbeOp::Mkdir,
        "append-fsync" => ProbeOp::AppendFsync,
        "read" => ProbeOp::Read,
        o => {
            return Err(PlanError::new(
                "--op",
                format!("unknown probe '{o}' (known: create, stat, mkdir, append-fsync, read)"),
            ))
        }
    })
}

/// `--phases` (or the single phase of --runtime / --count), checked against `--load`.
fn parse_phases(a: &ProbeArgs, count: Option<u64>, has_load: bool) -> Result<Vec<PhaseSpec>> {
    let load = has_load.then_some(());
    let phases = match &a.phases {
        Some(p) => {
            if a.runtime.is_some() {
                return Err(PlanError::new(
                    "--runtime",
                    "conflicts with --phases, which give each phase its duration",
                ));
            }
            let mut v = Vec::new();
            for part in p.split(',') {
                let (name, d) = part.split_once(':').ok_or_else(|| {
                    PlanError::new(
                        "--phases",
                        format!("'{part}': expected NAME:DURATION, e.g. idle:10s,load:20s,after:10s"),
                    )
                })?;
                let name = name.trim();
                if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') || name.is_empty() {
                    return Err(PlanError::new(
                        "--phases",
                        format!("'{name}': phase names are letters, digits, - and _"),
                    ));
                }
                let d = duration("--phases", d)?;
                v.push(PhaseSpec {
                    name: name.to_string(),
                    duration: d,
                    load: name == "load",
                });
            }
            if load.is_some() && !v.iter().any(|p| p.load) {
                return Err(PlanError::new(
                    "--phases",
                    "--load runs during a phase named 'load'; there is none",
                ));
            }
            if load.is_none() && v.iter().any(|p| p.load) {
                return Err(PlanError::new("--phases", "a 'load' phase needs --load"));
            }
            v
        }
        None => {
            let d = match (&a.runtime, count) {
                (Some(r), _) => duration("--runtime", r)?,
                // until N probes are done, however many slots slow ones miss
                // (the phase is cut to the real time when reported)
                (None, Some(_)) => Duration::from_secs(365 * 24 * 3600),
                (None, None) => Duration::from_secs(10),
            };
            vec![PhaseSpec {
                name: if load.is_some() { "load" } else { "idle" }.into(),
                duration: d,
                load: load.is_some(),
            }]
        }
    };
    if phases.iter().any(|p| p.duration.is_zero()) {
        return Err(PlanError::new("--phases", "every phase needs a duration above 0"));
    }
    if let Some(p) = &a.phases {
        // the probe's clock adds the phases up: bounded like one duration
        let total = phases
            .iter()
            .try_fold(Duration::ZERO, |t, p| t.checked_add(p.duration))
            .filter(|t| *t <= units::MAX_DURATION);
        if total.is_none() {
            return Err(PlanError::new(
                "--phases",
                format!(
                    "'{p}' adds up to more than the {}-day maximum",
                    units::MAX_DURATION_DAYS
                ),
            ));
        }
    }
    Ok(phases)
}

impl ProbePlan {
    pub fn from_args(a: &ProbeArgs) -> Result<Self> {
        let op = parse_op(&a.op)?;
        let interval = duration("--interval", &a.interval)?;
        if interval < Duration::from_millis(1) {
            return Err(PlanError::new("--interval", "must be at least 1ms"));
        }
        let stall = duration("--stall", &a.stall)?;
        let count = a
            .count
            .as_deref()
            .map(|c| units::parse_count(c).map_err(|e| PlanError::new("--count", e)))
            .transpose()?;
        if count == Some(0) {
            return Err(PlanError::new("--count", "must be at least 1"));
        }
        let load = a.load.as_deref().map(|l| parse_load(l, &a.common.target)).transpose()?;
        let phases = parse_phases(a, count, load.is_some())?;
        super::refuse_pseudo_fs("--target", a.common.target.as_ref())?;
        let read_file_size = units::parse_size(&a.read_file_size).map_err(|e| PlanError::new("--read-file-size", e))?;
        if read_file_size < 1 << 20 {
            return Err(PlanError::new("--read-file-size", "at least 1 MiB"));
        }
        let (seed, stop_on_error) = (seed(&a.common)?, super::stop_on_error(&a.common)?);
        Ok(ProbePlan {
            target: PathBuf::from(&a.common.target),
            op,
            interval,
            phases,
            count,
            stall,
            load,
            load_spec: a.load.clone(),
            read_file_size,
            seed,
            stop_on_error,
        })
    }
}
