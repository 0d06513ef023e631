//! What a cell is (`CellKind`) and its typed plan (`CellPlan`): the one
//! type a lab's workload, a runner's cell and a result's cell share.
//! Reporters match on these; they never look a plan's field up by name.

use super::fio::LatReport;
use super::{IoPlan, MetaPlan, ProbePlan, ReplayPlan};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The kinds of cell: which workload measured it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CellKind {
    Io,
    Meta,
    Replay,
    Probe,
    /// A job of `fslab fio`: an io workload with fio's job info.
    Fio,
}

impl CellKind {
    pub fn name(self) -> &'static str {
        match self {
            CellKind::Io => "io",
            CellKind::Meta => "meta",
            CellKind::Replay => "replay",
            CellKind::Probe => "probe",
            CellKind::Fio => "fio",
        }
    }
}

/// A cell's plan, tagged by its kind. In a result file it is two fields of
/// the cell, `"kind": "io"` and `"plan": {...}`; the plan object is the
/// workload's plan as it serialises, with its keys sorted (as schema 1
/// wrote it: it went through a `serde_json::Value`).
///
/// Built once per cell and never on a worker's path, so the io plan's size
/// (fio's parts) is not worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", content = "plan", rename_all = "lowercase")]
pub enum CellPlan {
    Io(IoPlan),
    Meta(MetaPlan),
    Replay(ReplayPlan),
    Probe(ProbePlan),
    Fio(FioCellPlan),
}

/// A `fslab fio` job's cell: the io plan it was mapped to, and under `fio`
/// what fio reports about the job.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FioCellPlan {
    #[serde(flatten)]
    pub io: IoPlan,
    pub fio: FioJob,
}

/// fio's view of a job: its reporting group, how many clones the cell
/// covers (numjobs, or the group's jobs with group_reporting) and the
/// options as written in the job file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FioJob {
    pub groupid: usize,
    pub jobs: usize,
    pub options: BTreeMap<String, String>,
    /// How its latencies are reported (clat/lat/slat_percentiles,
    /// disable_*lat, gtod_reduce); absent: fio's defaults.
    #[serde(default, skip_serializing_if = "LatReport::is_default")]
    pub report: LatReport,
    /// fio's latency_target search: the queue depth it found (fio's
    /// `latency_depth`); None without a target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_depth: Option<u32>,
}

impl CellPlan {
    pub fn kind(&self) -> CellKind {
        match self {
            CellPlan::Io(_) => CellKind::Io,
            CellPlan::Meta(_) => CellKind::Meta,
            CellPlan::Replay(_) => CellKind::Replay,
            CellPlan::Probe(_) => CellKind::Probe,
            CellPlan::Fio(_) => CellKind::Fio,
        }
    }

    /// The io plan of an io or fio cell.
    pub fn io(&self) -> Option<&IoPlan> {
        match self {
            CellPlan::Io(p) => Some(p),
            CellPlan::Fio(f) => Some(&f.io),
            _ => None,
        }
    }

    /// fio's job info of a fio cell.
    pub fn fio(&self) -> Option<&FioJob> {
        match self {
            CellPlan::Fio(f) => Some(&f.fio),
            _ => None,
        }
    }

    pub fn meta(&self) -> Option<&MetaPlan> {
        match self {
            CellPlan::Meta(p) => Some(p),
            _ => None,
        }
    }

    pub fn replay(&self) -> Option<&ReplayPlan> {
        match self {
            CellPlan::Replay(p) => Some(p),
            _ => None,
        }
    }

    /// The seed the plan's random choices came from.
    pub fn seed(&self) -> u64 {
        match self {
            CellPlan::Io(p) => p.seed,
            CellPlan::Meta(p) => p.seed,
            CellPlan::Replay(p) => p.seed,
            CellPlan::Probe(p) => p.seed,
            CellPlan::Fio(p) => p.io.seed,
        }
    }

    /// The same plan aimed at `target` (a mount point, directory or device).
    pub fn retarget(&mut self, target: &std::path::Path) {
        match self {
            CellPlan::Io(p) => p.target = target.to_path_buf(),
            CellPlan::Fio(p) => p.io.target = target.to_path_buf(),
            CellPlan::Meta(p) => p.target = target.to_path_buf(),
            CellPlan::Replay(p) => p.target = target.to_path_buf(),
            CellPlan::Probe(p) => {
                p.target = target.to_path_buf();
                if let Some(super::Load::Io { plan, .. }) = &mut p.load {
                    plan.target = target.to_path_buf();
                }
            }
        }
    }

    /// The plan object alone, as it appears under `plan`.
    pub fn to_value(&self) -> serde_json::Result<serde_json::Value> {
        match self {
            CellPlan::Io(p) => serde_json::to_value(p),
            CellPlan::Meta(p) => serde_json::to_value(p),
            CellPlan::Replay(p) => serde_json::to_value(p),
            CellPlan::Probe(p) => serde_json::to_value(p),
            CellPlan::Fio(p) => serde_json::to_value(p),
        }
    }
}

impl Serialize for CellPlan {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeStruct};
        // through a Value: sorted keys, the plan object exactly as schema 1 had it
        let plan = self.to_value().map_err(S::Error::custom)?;
        let mut st = s.serialize_struct("CellPlan", 2)?;
        st.serialize_field("kind", &self.kind())?;
        st.serialize_field("plan", &plan)?;
        st.end()
    }
}

/// A lab plan's workload as its JSON has always had it: `{"io": {...}}`,
/// the kind as the one key (a result's cell has `kind` and `plan` beside).
pub(crate) fn serialize_keyed<S: serde::Serializer>(p: &CellPlan, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::{Error, SerializeMap};
    let plan = p.to_value().map_err(S::Error::custom)?;
    let mut m = s.serialize_map(Some(1))?;
    m.serialize_entry(p.kind().name(), &plan)?;
    m.end()
}
