//! Plans: command-line arguments turned into typed, immutable, serialisable
//! descriptions of the work. ALL validation happens here, and every error
//! names the flag, so bad input fails before any file is touched.

pub mod io;
pub mod loadfile;
pub mod meta;
mod output;
pub mod probe;
pub mod replay;

pub use io::{FileMode, IoPlan, Rw};
pub use meta::{ExtraPhase, MetaPlan, Order};
pub use output::{OutputFormat, OutputSpec, Outputs};
pub use probe::{Load, ProbeOp, ProbePlan};
pub use replay::ReplayPlan;

use crate::cli::{CommonArgs, IoArgs, RunArgs};
use crate::units;
use std::time::Duration;

/// A rejected input: the flag (or file:line) and why.
#[derive(Debug, thiserror::Error)]
#[error("{flag}: {msg}")]
pub struct PlanError {
    pub flag: String,
    pub msg: String,
}

impl PlanError {
    pub fn new(flag: impl Into<String>, msg: impl ToString) -> Self {
        PlanError {
            flag: flag.into(),
            msg: msg.to_string(),
        }
    }
}

pub type Result<T> = std::result::Result<T, PlanError>;

/// Seed used when none is given: fixed, so two runs draw the same offsets (as fio's randrepeat).
pub const DEFAULT_SEED: u64 = 0x0066_736c_6162;

pub(crate) fn seed(c: &CommonArgs) -> Result<u64> {
    match &c.seed {
        None => Ok(DEFAULT_SEED),
        Some(s) => s
            .parse()
            .map_err(|_| PlanError::new("--seed", format!("'{s}' is not a whole number"))),
    }
}

pub(crate) fn duration(flag: &str, s: &str) -> Result<Duration> {
    units::parse_duration(s).map_err(|e| PlanError::new(flag, e))
}

/// One cell of a suite: any workload's plan.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CellPlan {
    Io(IoPlan),
    Meta(MetaPlan),
}

/// The built-in quick suite: the cells `fslab run` measures without a plan file.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SuitePlan {
    pub cells: Vec<(String, CellPlan)>,
    #[serde(skip)]
    pub outputs: Outputs,
    pub quiet: bool,
}

/// Builds the quick suite: short cells that tell a newcomer how the filesystem
/// under the target does at small random and large sequential I/O, at seed
/// experiment 2's mixed O_DIRECT I/O, and at creating files with and without
/// a 256-byte xattr (seed experiment 1).
pub fn quick_suite(a: &RunArgs) -> Result<SuitePlan> {
    if let Some(p) = &a.plan {
        return Err(PlanError::new(
            "PLAN",
            format!("'{p}': plan files are not supported yet; run `fslab run` without one for the quick suite"),
        ));
    }
    let runtime = a.runtime.clone();
    duration("--runtime", &runtime)?;
    let cell = |rw: &str, bs: &str, direct: bool| IoArgs {
        common: CommonArgs {
            output: vec![],
            ..a.common.clone()
        },
        rw: rw.into(),
        rwmixread: "50".into(),
        bs: bs.into(),
        size: Some("256m".into()),
        jobs: "1".into(),
        engine: "sync".into(),
        runtime: Some(runtime.clone()),
        direct,
        ..Default::default()
    };
    let mut cells = Vec::new();
    // One page-cache cell (what applications mostly see), then the device
    // through the filesystem with O_DIRECT.
    for (name, rw, bs, direct) in [
        ("randread-4k-cached", "randread", "4k", false),
        ("randread-4k-direct", "randread", "4k", true),
        ("randwrite-4k-direct", "randwrite", "4k", true),
        ("randrw-16k-direct", "randrw", "16k", true),
        ("seqwrite-1m-direct", "write", "1m", true),
        ("seqread-1m-direct", "read", "1m", true),
    ] {
        let mut args = cell(rw, bs, direct);
        if rw == "randrw" {
            args.rwmixread = "90".into();
            args.jobs = "4".into();
            args.size = Some("64m".into());
        }
        cells.push((name.to_string(), CellPlan::Io(IoPlan::from_args(&args)?)));
    }
    for (name, xattr) in [("meta-16k", None), ("meta-16k-xattr256", Some("user.fslab:256"))] {
        let m = crate::cli::MetaArgs {
            common: CommonArgs {
                output: vec![],
                ..a.common.clone()
            },
            files: Some("16384".into()),
            xattr: xattr.into_iter().map(String::from).collect(),
            ..Default::default()
        };
        cells.push((name.to_string(), CellPlan::Meta(MetaPlan::from_args(&m)?)));
    }
    Ok(SuitePlan {
        cells,
        outputs: Outputs::from_args(&a.common, "run")?,
        quiet: a.common.quiet,
    })
}
