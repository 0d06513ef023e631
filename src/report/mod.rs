//! The Report: everything a run measured and the context needed to trust and
//! repeat it. Reporters (one file per format) are pure functions of it;
//! writing their bytes happens once, in `write_outputs`.

pub mod bonnie_csv;
pub mod compare;
pub mod csv;
pub mod fio_json;
pub mod fio_text;
mod host;
pub mod html;
pub mod json;
pub mod probe;
pub mod ranks;
pub mod svg;
pub mod text;
pub mod timeline_csv;

pub use host::HostInfo;

use crate::errno::errno_name;
use crate::plan::{OutputFormat, Outputs};
use crate::runner::RunOut;
use crate::stats::series::IntervalPoint;
use crate::stats::{cpu::CpuTimes, LatStats, OpKind, OpStats, SparseHist};
use crate::target::TargetInfo;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;

/// Version of the result JSON layout (docs/results.md).
pub const SCHEMA_VERSION: u32 = 1;

/// Percentiles reported: fio's default list plus 99.999.
pub const PERCENTILES: [f64; 18] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 99.999,
];

/// A whole result file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub schema_version: u32,
    pub fslab_version: String,
    /// The subcommand that produced it ("io", "run").
    pub command: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub host: HostInfo,
    pub interrupted: bool,
    pub cells: Vec<Cell>,
    /// Peak resident set size of fslab over the whole run.
    pub max_rss_kib: u64,
    /// Lab runs (`fslab run`): the plan and its shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab: Option<LabInfo>,
}

/// What a lab run was asked to do.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LabInfo {
    pub name: String,
    /// The plan file, None for the built-in quick suite.
    pub file: Option<String>,
    pub repeat: u32,
    /// The filesystem others are compared with (the first one unless the plan names one).
    pub baseline: Option<String>,
    pub fresh: bool,
    pub filesystems: Vec<String>,
    pub workloads: Vec<String>,
    /// The validated plan, so the run can be repeated.
    pub plan: serde_json::Value,
}

/// One measured configuration (a single `fslab io` run is one cell).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    pub name: String,
    /// The exact plan, so the cell can be re-run.
    pub plan: serde_json::Value,
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
}

/// A lab cell's place in the plan.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
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
    pub scratch: Option<crate::target::scratch::ScratchInfo>,
}

/// CPU use: total and per job, as user/sys time and % of one core.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CpuSummary {
    pub user_ns: u64,
    pub sys_ns: u64,
    /// (user+sys)/elapsed*100 for the whole process (bonnie++'s %CP).
    pub percent_of_core: f64,
    pub jobs: Vec<JobCpu>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobCpu {
    pub job: usize,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub percent_of_core: f64,
}

/// Results of one kind of operation: a direction of data I/O (read, write,
/// fsync), or one phase of a metadata run (`phase` set: "seq-create", ...).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DirResult {
    pub dir: OpKind,
    /// Metadata runs: the phase, with its own elapsed time and CPU use
    /// (rates are over the phase's time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_percent: Option<f64>,
    pub ops: u64,
    pub bytes: u64,
    /// Failed operations by errno name ("EIO": 3).
    pub errors: BTreeMap<String, u64>,
    pub iops: f64,
    pub bytes_per_s: f64,
    /// 10^6 bytes per second.
    pub mb_s: f64,
    /// 2^20 bytes per second.
    pub mib_s: f64,
    /// Submit to completion.
    pub lat: LatSummary,
    /// Paced runs: from the scheduled start (includes time spent behind schedule).
    pub sched_lat: Option<LatSummary>,
    /// Queueing engines: submission latency (fio's slat) and completion latency (clat);
    /// `lat` is their sum per operation.
    pub slat: Option<LatSummary>,
    pub clat: Option<LatSummary>,
    /// Share of ops at or under each threshold (exact counts).
    pub lat_buckets: Vec<LatBucket>,
    /// Distributed runs: each rank's rate, and the spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<ranks::RankRates>,
    /// --stonewall: the rate at the stonewall and when the last job stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stonewall: Option<ranks::StonewallRates>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LatBucket {
    pub le_ns: u64,
    pub count: u64,
    pub share: f64,
}

/// Latency of one measure.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LatSummary {
    pub min_ns: u64,
    pub mean_ns: f64,
    pub stddev_ns: f64,
    pub max_ns: u64,
    /// Keys are percentiles as text ("50", "99.9", "99.999"), values ns.
    pub percentiles: BTreeMap<String, u64>,
    pub histogram: SparseHist,
}

impl LatSummary {
    pub fn of(l: &LatStats) -> Self {
        LatSummary {
            min_ns: l.min_ns,
            mean_ns: l.mean_ns(),
            stddev_ns: l.stddev_ns(),
            max_ns: l.max_ns,
            percentiles: PERCENTILES.iter().map(|&p| (pct_key(p), l.percentile(p))).collect(),
            histogram: l.hist.to_sparse(),
        }
    }

    /// Percentile `p` as stored (0 when absent).
    pub fn p(&self, p: f64) -> u64 {
        self.percentiles.get(&pct_key(p)).copied().unwrap_or(0)
    }
}

/// "50", "99.9", "99.999": the shortest exact text of a percentile.
pub fn pct_key(p: f64) -> String {
    let s = format!("{p:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl DirResult {
    pub fn of(dir: OpKind, s: &OpStats, elapsed_ns: u64) -> Self {
        let secs = elapsed_ns as f64 / 1e9;
        let rate = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
        let bps = rate(s.bytes);
        DirResult {
            dir,
            phase: None,
            elapsed_ns: None,
            cpu_percent: None,
            ops: s.lat.count,
            bytes: s.bytes,
            errors: s.errors.iter().map(|(e, c)| (errno_name(*e), *c)).collect(),
            iops: rate(s.lat.count),
            bytes_per_s: bps,
            mb_s: bps / 1e6,
            mib_s: bps / 1048576.0,
            lat: LatSummary::of(&s.lat),
            sched_lat: s.sched_lat.as_ref().map(LatSummary::of),
            slat: s.slat.as_ref().filter(|l| l.count > 0).map(LatSummary::of),
            clat: s.clat.as_ref().filter(|l| l.count > 0).map(LatSummary::of),
            lat_buckets: s
                .bucket_ns
                .iter()
                .enumerate()
                .map(|(i, &t)| LatBucket {
                    le_ns: t,
                    count: s.bucket_counts[i],
                    share: s.bucket_share(i),
                })
                .collect(),
            ranks: None,
            stonewall: None,
        }
    }

    /// Adds the per-rank rates and the stonewall of `out`, if it has them.
    pub fn with_ranks(mut self, out: &RunOut) -> Self {
        self.ranks = ranks::RankRates::of(self.dir, &out.ranks);
        self.stonewall = out
            .stonewall
            .as_ref()
            .map(|s| ranks::StonewallRates::of(s, self.ops, self.bytes));
        self
    }
}

impl Cell {
    /// Builds a cell from a run; directions with no operation and no error are left out.
    pub fn from_run(
        name: &str,
        plan: serde_json::Value,
        target: TargetInfo,
        warnings: Vec<String>,
        out: RunOut,
    ) -> Self {
        let elapsed = out.elapsed_ns;
        let directions = OpKind::ALL
            .iter()
            .filter(|d| {
                let s = &out.stats[d.idx()];
                s.lat.count > 0 || !s.errors.is_empty()
            })
            .map(|&d| DirResult::of(d, &out.stats[d.idx()], elapsed).with_ranks(&out))
            .collect();
        let pct = |c: CpuTimes| c.percent_of_core(elapsed);
        let mut warnings = warnings;
        warnings.extend(out.jobs.iter().flat_map(|o| o.notes.iter().cloned()));
        if out.halted_on_error {
            warnings.push("stopped at the first failed operation (--on-error stop)".into());
        }
        Cell {
            name: name.to_string(),
            plan,
            target,
            warnings,
            interrupted: out.interrupted,
            elapsed_ns: elapsed,
            directions,
            cpu: CpuSummary {
                user_ns: out.cpu_process.user_ns,
                sys_ns: out.cpu_process.sys_ns,
                percent_of_core: pct(out.cpu_process),
                jobs: out
                    .jobs
                    .iter()
                    .enumerate()
                    .map(|(j, o)| JobCpu {
                        job: j,
                        user_ns: o.cpu.user_ns,
                        sys_ns: o.cpu.sys_ns,
                        percent_of_core: pct(o.cpu),
                    })
                    .collect(),
            },
            series: out.series,
            job_errors: out.jobs.iter().filter_map(|o| o.error.clone()).collect(),
            inflight_depth: out.depth_counts,
            probe: None,
            lab: None,
            error: None,
        }
    }

    /// A cell that could not run: the reason, nothing measured.
    pub fn failed(name: &str, plan: serde_json::Value, target: TargetInfo, error: String) -> Self {
        Cell {
            name: name.to_string(),
            plan,
            target,
            warnings: vec![],
            interrupted: false,
            elapsed_ns: 0,
            directions: vec![],
            cpu: CpuSummary {
                user_ns: 0,
                sys_ns: 0,
                percent_of_core: 0.0,
                jobs: vec![],
            },
            series: vec![],
            job_errors: vec![],
            inflight_depth: vec![],
            probe: None,
            lab: None,
            error: Some(error),
        }
    }

    pub fn dir(&self, d: OpKind) -> Option<&DirResult> {
        self.directions.iter().find(|r| r.dir == d)
    }
}

impl Report {
    pub fn new(command: &str, started: std::time::SystemTime) -> Self {
        Report {
            schema_version: SCHEMA_VERSION,
            fslab_version: env!("CARGO_PKG_VERSION").to_string(),
            command: command.to_string(),
            started_at: humantime::format_rfc3339_seconds(started).to_string(),
            host: HostInfo::read(),
            interrupted: false,
            cells: Vec::new(),
            max_rss_kib: 0,
            lab: None,
        }
    }
}

/// Largest result file `compare` and `report` read.
const MAX_RESULT_BYTES: u64 = 1 << 30;

/// Reads saved result files for `fslab compare` and `fslab report`: each
/// with its label (the file name without `.json`). An unreadable or foreign
/// file is an error naming it (and the line, for bad JSON), as are a layout
/// this fslab does not know (`schema_version`) and one file given twice
/// (it would count as two repeats).
pub fn read_results(files: &[String]) -> Result<Vec<(String, Report)>, crate::plan::PlanError> {
    use crate::plan::PlanError;
    use std::os::unix::fs::MetadataExt;
    #[derive(Deserialize)]
    struct Version {
        schema_version: Option<serde_json::Value>,
    }
    let mut seen: Vec<((u64, u64), &String)> = Vec::new();
    files
        .iter()
        .map(|f| {
            let text = crate::plan::read_regular_file(std::path::Path::new(f), f, MAX_RESULT_BYTES)?;
            if let Ok(m) = std::fs::metadata(f) {
                let id = (m.dev(), m.ino());
                if let Some((_, first)) = seen.iter().find(|(i, _)| *i == id) {
                    return Err(PlanError::new(
                        f.as_str(),
                        format!("is the same file as '{first}': each result file counts once"),
                    ));
                }
                seen.push((id, f));
            }
            let not_ours = |e: serde_json::Error| {
                PlanError::new(format!("{f}:{}", e.line()), format!("not an fslab result file: {e}"))
            };
            // the version first: a newer layout may not parse as this one
            let v: Version = serde_json::from_str(&text).map_err(not_ours)?;
            match v.schema_version {
                Some(serde_json::Value::Number(n)) if n.as_u64() == Some(SCHEMA_VERSION as u64) => {}
                // none: the strict parse below says which line lacks it
                None => {}
                Some(other) => {
                    return Err(PlanError::new(
                        f.as_str(),
                        format!(
                            "schema_version {other} is not one this fslab reads (it reads {SCHEMA_VERSION}, docs/results.md)"
                        ),
                    ))
                }
            }
            let r: Report = serde_json::from_str(&text).map_err(not_ours)?;
            let label = std::path::Path::new(f)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| f.clone());
            Ok((label, r))
        })
        .collect()
}

/// A reporter turns a Report into bytes.
pub trait Reporter {
    fn render(&self, r: &Report) -> Vec<u8>;
}

fn reporter(f: OutputFormat) -> Box<dyn Reporter> {
    match f {
        OutputFormat::Text => Box::new(text::Text),
        OutputFormat::Json => Box::new(json::Json),
        OutputFormat::BonnieCsv => Box::new(bonnie_csv::BonnieCsv),
        OutputFormat::TimelineCsv => Box::new(timeline_csv::TimelineCsv),
        OutputFormat::FioJson => Box::new(fio_json::FioJson),
        OutputFormat::Csv => Box::new(csv::Csv),
        OutputFormat::Html => Box::new(html::Html),
        OutputFormat::FioText => Box::new(fio_text::FioText),
    }
}

/// The outputs that go to files, each replaced atomically. The caller holds
/// the serial lock (or is an abort that gave up waiting for it).
pub fn write_files(r: &Report, outputs: &Outputs) -> std::io::Result<()> {
    for o in &outputs.0 {
        if let Some(p) = &o.path {
            crate::plan::write_atomically(p, &reporter(o.format).render(r))?;
        }
    }
    Ok(())
}

/// The output that goes to stdout, if one does.
pub fn write_stdout(r: &Report, outputs: &Outputs) -> std::io::Result<()> {
    for o in outputs.0.iter().filter(|o| o.path.is_none()) {
        let mut out = std::io::stdout().lock();
        out.write_all(&reporter(o.format).render(r))?;
        out.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_keys() {
        assert_eq!(pct_key(50.0), "50");
        assert_eq!(pct_key(99.9), "99.9");
        assert_eq!(pct_key(99.999), "99.999");
        assert_eq!(pct_key(99.95), "99.95");
    }
}
