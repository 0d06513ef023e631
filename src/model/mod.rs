//! The result model: everything a run measured and the context needed to
//! trust and repeat it, as typed data. The runner's output becomes a `Cell`
//! (`app::cell`), cells make a `Report`, and reporters (`report`) are pure
//! functions of it. This module knows nothing of how a run is made: it
//! imports plans (a cell records its plan), stats, units and errno only.
//!
//! Layout of a result file: docs/results.md (schema 2; `read` also takes
//! schema 1, see `v1`).

pub mod anatomy;
pub mod calibration;
pub mod decision;
mod dir;
mod fio_head;
mod host;
pub mod probe;
pub mod ranks;
mod read;
mod schema;
pub mod steady;
pub mod system;
mod target;
mod v1;
pub mod verdict;

pub use crate::plan::{CellKind, CellPlan, FioCellPlan, FioJob};
pub use dir::{pct_key, DirResult, LatBucket, LatSummary, RateSamples};
pub use fio_head::{FioJobHead, LaidOut};
pub use host::{HostInfo, KernelTag, VmInfo};
pub use read::{parse_report, read_results};
pub use schema::{result_schema, result_schema_text};
pub use target::{QueueInfo, ScratchInfo, TargetInfo};

use crate::stats::series::IntervalPoint;
use crate::stats::OpKind;
use serde::{Deserialize, Serialize};

/// Version of the result JSON layout (docs/results.md). 2: cells carry
/// their `kind` and a typed plan; 1 is still read (`v1`).
pub const SCHEMA_VERSION: u32 = 2;

/// Percentiles reported: fio's default list plus 99.999.
pub const PERCENTILES: [f64; 18] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 99.999,
];

/// A whole result file.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Report {
    pub schema_version: u32,
    pub fslab_version: String,
    /// The build that wrote the file, as `fslab --version` prints it: the
    /// version, the git commit ("unknown" for a build without git) and the
    /// cargo profile, e.g. "0.1.0 (commit <40 hex digits>, release)". Absent in
    /// files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fslab_build: Option<String>,
    /// The subcommand that produced it ("io", "run").
    pub command: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    /// `fslab fio`: when its last job ended (RFC 3339, UTC), the time fio
    /// prints on each job's line; absent for the other commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    pub host: HostInfo,
    pub interrupted: bool,
    pub cells: Vec<Cell>,
    /// Peak resident set size of fslab over the whole run.
    pub max_rss_kib: u64,
    /// Lab runs (`fslab run`): the plan and its shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab: Option<LabInfo>,
    /// The host's floors and noise, measured (or read from this boot's
    /// cache) before the first cell: `calibration::Calibration`. Absent in
    /// files of versions before it, and of a VM guest's cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<calibration::Calibration>,
    /// `fslab fio`: its jobs as fio announces them before the run (the
    /// normal output's first lines); empty for the other commands.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fio_jobs: Vec<FioJobHead>,
}

/// What a lab run was asked to do.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LabInfo {
    pub name: String,
    /// The plan file, None for the built-in quick suite.
    pub file: Option<String>,
    pub repeat: u32,
    /// The column others are compared with: a filesystem (the first one
    /// unless the plan names one), or with `compare` the baseline kernel or
    /// level of the compared factor (the first unless the plan names one).
    pub baseline: Option<String>,
    pub fresh: bool,
    pub filesystems: Vec<String>,
    pub workloads: Vec<String>,
    /// The kernels every cell ran under (plans with `kernels`); empty: the host's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<String>,
    /// The compared axis when it is not the filesystem (the default):
    /// "kernel" or a factor's name; `baseline` is then its baseline level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<String>,
    /// The plan's `[factors]`, with their levels as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub factors: Vec<FactorInfo>,
    /// The validated plan, so the run can be repeated (as `plan::LabPlan`
    /// serialises it; kept untyped: no reporter reads it).
    pub plan: serde_json::Value,
    /// The decision rules and verdicts (absent in files written before them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<decision::DecisionInfo>,
}

/// One factor of a plan (`[factors]`): a key given as a list of levels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FactorInfo {
    /// The key as written in `[factors]` ("xattr", "scheduler", "filesystem.size").
    pub name: String,
    /// Which tables it expands.
    pub of: FactorOf,
    pub levels: Vec<String>,
}

/// Which tables of a plan a factor's key belongs to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FactorOf {
    /// A `[[filesystem]]` key: every filesystem was made at each level.
    #[default]
    Filesystem,
    /// A workload key: every workload ran at each level.
    Workload,
}

impl From<crate::plan::lab::FactorOf> for FactorOf {
    fn from(of: crate::plan::lab::FactorOf) -> Self {
        match of {
            crate::plan::lab::FactorOf::Filesystem => FactorOf::Filesystem,
            crate::plan::lab::FactorOf::Workload => FactorOf::Workload,
        }
    }
}

/// A lab cell's level of one factor of its plan.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Level {
    pub factor: String,
    /// The level as written in the plan ("true", "mq-deadline", "4k").
    pub level: String,
    pub of: FactorOf,
}

/// One measured configuration (a single `fslab io` run is one cell).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cell {
    pub name: String,
    /// What the cell is and its exact plan, so it can be re-run: in the
    /// JSON, `"kind": "io"` and `"plan": {...}` beside the name.
    #[serde(flatten)]
    pub plan: CellPlan,
    pub target: TargetInfo,
    pub warnings: Vec<String>,
    pub interrupted: bool,
    /// Measured time (after ramp), the longest job's.
    pub elapsed_ns: u64,
    pub directions: Vec<DirResult>,
    pub cpu: CpuSummary,
    /// Per second since measurement started, all jobs merged.
    pub series: Vec<IntervalPoint>,
    /// Errors that ended a job early.
    pub job_errors: Vec<String>,
    /// Queueing engines: operations in flight at each submission, counting
    /// the new one (`inflight_depth[d]` = submissions that made the depth d).
    pub inflight_depth: Vec<u64>,
    /// Queueing engines: how many operations each submit call handed to
    /// the engine (`submit_batches[n]` = calls of n) and each reap call
    /// brought back; empty for a sync engine, whose every operation is a
    /// submit and a completion of one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub submit_batches: Vec<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub complete_batches: Vec<u64>,
    /// Probe runs: samples, stalls, context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<probe::ProbeData>,
    /// Lab runs: which filesystem, workload and repeat this cell is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab: Option<LabTag>,
    /// Set when the cell could not run (mkfs refused an option, the
    /// filesystem lacks O_DIRECT): nothing was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The system beside the cell: devices, CPU, memory, interference
    /// (None with --no-telemetry, and in results of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<system::SystemData>,
    /// `--profile`: where fslab's CPU time went, per phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<system::Profile>,
    /// `--anatomy`, `--explain-slow`: where each operation's time went, layer
    /// by layer, and why the slow ones stalled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anatomy: Option<anatomy::Anatomy>,
    /// Metadata cells with xattrs: where the xattrs live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xattrs: Option<system::XattrPlacement>,
    /// fio jobs with steadystate/ss_dur: fio's steady-state detection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steadystate: Option<steady::SteadyState>,
    /// What bounded the cell's figures and what makes them suspect (absent
    /// in files written before verdicts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<verdict::Verdict>,
    /// Each figure against this host's floor (`Report::calibration`):
    /// metadata phases against tmpfs's, reads and writes against a cached
    /// pread of the same size. Empty without a card.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub efficiency: Vec<calibration::Efficiency>,
}

/// A lab cell's place in the plan.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct LabTag {
    /// The filesystem's name in the plan ("ext4-i512").
    pub filesystem: String,
    /// ext4, xfs, btrfs, tmpfs, dir, raw.
    pub fs_type: String,
    pub workload: String,
    /// io, meta, replay, probe.
    pub kind: String,
    /// 1-based.
    pub repeat: u32,
    /// How the scratch filesystem was made (None for an existing directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scratch: Option<ScratchInfo>,
    /// The kernel it ran under, where the plan names kernels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelTag>,
    /// Its place in the run's order (1-based; the cells of a repeat run in
    /// a random order, `DecisionInfo::order_seed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<u32>,
    /// The plan's compared axis when it is not the filesystem: "kernel" or
    /// a factor's name (`LabInfo::compare`, here so that each cell finds its
    /// column and table alone, whichever files are compared together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<String>,
    /// The cell's level of each of the plan's factors, in `[factors]` order
    /// (`filesystem` and `workload` stay the tables' names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<Level>,
}

impl LabTag {
    /// The comparison's column of this cell: its filesystem, or with
    /// kernels in the plan `filesystem@kernel` (a column group per
    /// filesystem); with a compared factor its level of it, comparing
    /// kernels its kernel.
    pub fn column(&self) -> String {
        match self.compare.as_deref() {
            Some("kernel") => self.kernel.as_ref().map(|k| k.name.clone()).unwrap_or_default(),
            Some(f) => self.level(f).unwrap_or_default().to_string(),
            None => match &self.kernel {
                Some(k) => column(&self.filesystem, &k.name),
                None => self.filesystem.clone(),
            },
        }
    }

    /// Whether the compared axis is a factor of the workload: the columns
    /// then ran different workloads by design, in that key.
    pub fn compares_workload_key(&self) -> bool {
        let Some(c) = self.compare.as_deref() else { return false };
        self.levels.iter().any(|l| l.factor == c && l.of == FactorOf::Workload)
    }

    /// The cell's level of factor `f`.
    pub fn level(&self, f: &str) -> Option<&str> {
        self.levels.iter().find(|l| l.factor == f).map(|l| l.level.as_str())
    }

    /// The comparison's table of this cell: its workload, then (for a
    /// compared axis other than the filesystem) its filesystem, its levels
    /// of the factors not compared, and the kernel where that is not the
    /// column either ("replay · xfs", "randrw · ext4 · bs=4k"). Without
    /// factors and `compare`, the workload's name as ever.
    pub fn table(&self) -> String {
        let mut parts = vec![self.workload.clone()];
        let compared = self.compare.as_deref();
        if compared.is_some() {
            parts.push(self.filesystem.clone());
        }
        for l in self.levels.iter().filter(|l| Some(l.factor.as_str()) != compared) {
            parts.push(format!("{}={}", l.factor, l.level));
        }
        if let (Some(k), Some(c)) = (&self.kernel, compared) {
            if c != "kernel" {
                parts.push(k.name.clone());
            }
        }
        parts.join(" · ")
    }

    /// What made this cell's filesystem differ from the other columns':
    /// the column, or where the filesystem is not the column or has
    /// levels, the plan's filesystem with its levels ("ext4[scheduler=none]",
    /// after the kernel's `@` where there is one).
    pub fn environment(&self) -> String {
        let fs_levels: Vec<(String, String)> = self
            .levels
            .iter()
            .filter(|l| l.of == FactorOf::Filesystem)
            .map(|l| (l.factor.clone(), l.level.clone()))
            .collect();
        if self.compare.is_none() && fs_levels.is_empty() {
            return self.column();
        }
        let fs = crate::plan::lab::named(&self.filesystem, &fs_levels);
        match &self.kernel {
            Some(k) => column(&fs, &k.name),
            None => fs,
        }
    }
}

/// The column of filesystem `fs` under kernel `kernel`.
pub fn column(fs: &str, kernel: &str) -> String {
    format!("{fs}@{kernel}")
}

impl LabInfo {
    /// The comparison's columns in plan order: each filesystem, or each
    /// filesystem under each kernel; each kernel or each level of the
    /// compared factor.
    pub fn columns(&self) -> Vec<String> {
        match self.compare.as_deref() {
            Some("kernel") => return self.kernels.clone(),
            Some(c) => {
                return self
                    .factors
                    .iter()
                    .find(|f| f.name == c)
                    .map(|f| f.levels.clone())
                    .unwrap_or_default()
            }
            None => {}
        }
        if self.kernels.is_empty() {
            return self.filesystems.clone();
        }
        self.filesystems
            .iter()
            .flat_map(|f| self.kernels.iter().map(move |k| column(f, k)))
            .collect()
    }

    /// The baseline's column: the baseline filesystem under the first kernel.
    pub fn baseline_column(&self) -> Option<String> {
        let b = self.baseline.clone()?;
        if self.compare.is_some() {
            return Some(b);
        }
        Some(match self.kernels.first() {
            Some(k) => column(&b, k),
            None => b,
        })
    }
}

/// CPU use: total and per job, as user/sys time and % of one core.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuSummary {
    pub user_ns: u64,
    pub sys_ns: u64,
    /// (user+sys)/elapsed*100 for the whole process (bonnie++'s %CP).
    pub percent_of_core: f64,
    pub jobs: Vec<JobCpu>,
    /// Context switches and page faults over the same span as the CPU
    /// time (None in results of versions that did not count them: a
    /// reporter then leaves the figures out rather than print a zero).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rusage: Option<RusageCounts>,
}

/// What getrusage counts besides CPU time, as fio's `cpu` line prints it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RusageCounts {
    /// Voluntary plus involuntary context switches.
    pub ctx: u64,
    /// Major page faults (a page read from a device).
    pub majf: u64,
    /// Minor page faults.
    pub minf: u64,
}

impl RusageCounts {
    pub fn of(c: &crate::stats::cpu::CpuTimes) -> Self {
        RusageCounts {
            ctx: c.ctx,
            majf: c.majf,
            minf: c.minf,
        }
    }
}

impl CpuSummary {
    /// The whole process's CPU time over `elapsed_ns`, without per-job figures.
    pub fn of_process(cpu: crate::stats::cpu::CpuTimes, elapsed_ns: u64) -> Self {
        CpuSummary {
            user_ns: cpu.user_ns,
            sys_ns: cpu.sys_ns,
            percent_of_core: cpu.percent_of_core(elapsed_ns),
            jobs: Vec::new(),
            rusage: Some(RusageCounts::of(&cpu)),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JobCpu {
    pub job: usize,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub percent_of_core: f64,
    /// The job's threads' context switches and page faults (None in
    /// results of versions that did not count them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rusage: Option<RusageCounts>,
    /// The job's own measured time, from the end of the ramp to its last
    /// completion (None in results of versions that did not keep it): fio
    /// sums its clones' times as a group's `job_runtime`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ns: Option<u64>,
}

impl Cell {
    /// A cell of `plan` on `target` with nothing measured yet: kinds that
    /// summarise their own directions (meta's phases, the probe's) fill in
    /// what they measured with `..Cell::new(..)`.
    pub fn new(name: &str, plan: CellPlan, target: TargetInfo) -> Self {
        Cell {
            name: name.to_string(),
            plan,
            target,
            warnings: vec![],
            interrupted: false,
            elapsed_ns: 0,
            directions: vec![],
            cpu: CpuSummary::default(),
            series: vec![],
            job_errors: vec![],
            inflight_depth: vec![],
            submit_batches: vec![],
            complete_batches: vec![],
            probe: None,
            lab: None,
            error: None,
            system: None,
            profile: None,
            anatomy: None,
            xattrs: None,
            steadystate: None,
            verdict: None,
            efficiency: Vec::new(),
        }
    }

    /// A cell that could not run: the reason, nothing measured.
    pub fn failed(name: &str, plan: CellPlan, target: TargetInfo, error: String) -> Self {
        Cell {
            error: Some(error),
            ..Cell::new(name, plan, target)
        }
    }

    /// What the cell measured: io, meta, replay, probe or fio.
    pub fn kind(&self) -> CellKind {
        self.plan.kind()
    }

    pub fn dir(&self, d: OpKind) -> Option<&DirResult> {
        self.directions.iter().find(|r| r.dir == d)
    }

    /// dbench's throughput: bytes of ReadX and WriteX per second, in 10^6 B/s.
    pub fn dbench_mb_s(&self) -> f64 {
        self.directions
            .iter()
            .filter(|d| matches!(d.dir, OpKind::ReadX | OpKind::WriteX))
            .map(|d| d.mb_s)
            .sum()
    }
}

impl Report {
    pub fn new(command: &str, started: std::time::SystemTime) -> Self {
        Report {
            schema_version: SCHEMA_VERSION,
            fslab_version: env!("CARGO_PKG_VERSION").to_string(),
            // set by build.rs, the string the CLI's --version prints
            fslab_build: Some(env!("FSLAB_LONG_VERSION").to_string()),
            command: command.to_string(),
            started_at: humantime::format_rfc3339_seconds(started).to_string(),
            finished_at: None,
            host: HostInfo::read(),
            interrupted: false,
            cells: Vec::new(),
            max_rss_kib: 0,
            lab: None,
            calibration: None,
            fio_jobs: Vec::new(),
        }
    }
}
