//! What `fslab fio` writes: the output formats (normal, json, json+, terse,
//! --minimal), and each job's logs (write_bw_log, write_lat_log,
//! write_iops_log, write_hist_log with log_avg_msec, log_max_value,
//! log_hist_msec, per_job_logs) and status_interval.

use crate::plan::{PlanError, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The primary (first) fio output format fslab writes; `FioFormats` holds
/// every one asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FioFormat {
    /// fio's human text.
    Normal,
    /// fio's JSON (json+ adds the latency bins: `FioFormats::json_plus`).
    Json,
    /// fio's terse (minimal) format, version 3.
    Terse,
}

/// fio's `--output-format`: a comma list of normal, json, json+, terse
/// (fio's `--minimal` is terse). Written as fio writes them to one output:
/// terse lines, then the normal text, then the JSON document.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FioFormats {
    pub normal: bool,
    pub json: bool,
    /// json+: the JSON with each latency's `bins`.
    pub json_plus: bool,
    pub terse: bool,
}

impl FioFormats {
    /// Parses fio's --output-format value (e.g. `json,normal`).
    pub fn parse(v: &str) -> std::result::Result<FioFormats, String> {
        let mut f = FioFormats::default();
        for p in v.split(',') {
            match p.trim() {
                "normal" => f.normal = true,
                "json" => f.json = true,
                "json+" => {
                    f.json = true;
                    f.json_plus = true
                }
                "terse" | "minimal" => f.terse = true,
                other => {
                    return Err(format!(
                        "'{other}' is not supported (normal, json, json+, terse; a comma list of them)"
                    ))
                }
            }
        }
        Ok(f)
    }

    /// The first format of the set, as fio's order writes them.
    pub fn primary(&self) -> FioFormat {
        if self.terse {
            FioFormat::Terse
        } else if self.normal || !self.json {
            FioFormat::Normal
        } else {
            FioFormat::Json
        }
    }
}

/// How a job's latencies are reported (fio's clat_percentiles,
/// lat_percentiles, slat_percentiles, disable_lat/clat/slat, gtod_reduce).
/// `Default` is fio's: completion-latency percentiles only, every latency kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatReport {
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    pub disable_lat: bool,
    pub disable_clat: bool,
    pub disable_slat: bool,
    /// disable_bw_measurement (gtod_reduce): no bw/iops samples.
    pub disable_bw: bool,
}

impl Default for LatReport {
    fn default() -> Self {
        LatReport {
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            disable_lat: false,
            disable_clat: false,
            disable_slat: false,
            disable_bw: false,
        }
    }
}

impl LatReport {
    pub fn is_default(&self) -> bool {
        *self == LatReport::default()
    }
}

/// One clone's log files: (kind, path), kind one of bw, lat, clat, slat,
/// iops, clat_hist.
pub type LogFiles = Vec<(&'static str, PathBuf)>;

/// A job's logs. `Default`: none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogOpts {
    /// write_bw_log's prefix (the job's name when given without a value).
    pub bw: Option<String>,
    /// write_lat_log: _lat, _clat and _slat files.
    pub lat: Option<String>,
    pub iops: Option<String>,
    /// write_hist_log: the _clat_hist file (empty unless log_hist_msec).
    pub hist: Option<String>,
    /// log_avg_msec: 0 = one entry per I/O.
    pub avg_msec: u64,
    /// log_max_value: the window's maximum instead of its mean.
    pub max_value: bool,
    /// log_hist_msec.
    pub hist_msec: u64,
    /// per_job_logs=0: the clones of a job share one file (no `.N`).
    pub shared: bool,
    /// log_offset: the offset column.
    pub offset: bool,
    /// log_prio: the priority column holds the whole ioprio value.
    pub prio: bool,
    /// How the job's latencies are reported.
    pub report: LatReport,
}

impl LogOpts {
    /// True when the job writes any log.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.lat.is_some() || self.iops.is_some() || self.hist.is_some()
    }

    /// The files this job writes for its clone numbered `thread` (fio's
    /// thread_number, from 1 over every job): (kind, path), kind one of
    /// bw, lat, clat, slat, iops, clat_hist.
    pub fn files(&self, thread: usize) -> LogFiles {
        let name = |pre: &str, kind: &str| {
            if self.shared {
                PathBuf::from(format!("{pre}_{kind}.log"))
            } else {
                PathBuf::from(format!("{pre}_{kind}.{thread}.log"))
            }
        };
        let mut v = Vec::new();
        if let Some(p) = &self.bw {
            v.push(("bw", name(p, "bw")));
        }
        if let Some(p) = &self.lat {
            for k in ["lat", "clat", "slat"] {
                v.push((k, name(p, k)));
            }
        }
        if let Some(p) = &self.iops {
            v.push(("iops", name(p, "iops")));
        }
        if let Some(p) = &self.hist {
            v.push(("clat_hist", name(p, "clat_hist")));
        }
        v
    }
}

/// Checks every log path of every job (`(logs, first thread, clones)`) as
/// `--output` paths are checked: nothing is created, a symbolic link or a
/// missing directory is refused. Returns each clone's checked files.
pub fn check_log_paths(jobs: &[(&LogOpts, usize, usize)]) -> Result<Vec<Vec<LogFiles>>> {
    let mut out = Vec::new();
    for (logs, first, clones) in jobs {
        let mut per = Vec::new();
        for c in 0..*clones {
            let mut files = Vec::new();
            for (k, p) in logs.files(first + c) {
                let checked = crate::plan::check_path(&format!("write_{}_log", log_option(k)), Path::new(&p))
                    .map_err(|e| PlanError::new(e.flag.as_str(), e.msg))?;
                files.push((k, checked));
            }
            per.push(files);
        }
        out.push(per);
    }
    Ok(out)
}

/// The option that asks for a log kind.
fn log_option(kind: &str) -> &'static str {
    match kind {
        "bw" => "bw",
        "iops" => "iops",
        "clat_hist" => "hist",
        _ => "lat",
    }
}

/// `--output-format` (and `--minimal`, `--terse-version`,
/// `--status-interval`) of `fslab fio`; notes where fslab differs.
pub fn formats(fa: &crate::cli::FioArgs, notes: &mut Vec<String>) -> Result<FioFormats> {
    let mut f = if fa.minimal {
        FioFormats {
            terse: true,
            ..Default::default()
        }
    } else {
        FioFormats::parse(&fa.output_format).map_err(|e| PlanError::new("--output-format", e))?
    };
    if let Some(v) = &fa.terse_version {
        if v.trim() != "3" {
            return Err(PlanError::new(
                "--terse-version",
                format!("'{v}': fslab writes fio's terse version 3 only"),
            ));
        }
        // fio: a terse version asks for terse output
        if !fa.minimal && fa.output_format == "normal" {
            f = FioFormats {
                terse: true,
                ..Default::default()
            };
        }
    }
    if let Some(v) = &fa.status_interval {
        crate::units::parse_duration(&if v.chars().all(|c| c.is_ascii_digit()) {
            format!("{v}s")
        } else {
            v.clone()
        })
        .map_err(|e| PlanError::new("--status-interval", e.to_string()))?;
        notes.push(format!(
            "--status-interval={v}: fslab shows its progress line on stderr instead of fio's periodic status; the output is written once, at the end"
        ));
    }
    if f.terse {
        notes.push("terse: fslab writes no disk utilization fields (fio adds them for the devices it saw)".into());
    }
    Ok(f)
}

/// Every job's log paths checked (nothing created), numbered as fio numbers
/// its jobs: one `thread_number` per clone, from 1, in job order.
pub fn check_logs(jobs: &[super::FioJobPlan]) -> Result<()> {
    let mut first = 1;
    let mut v = Vec::new();
    for j in jobs {
        v.push((&j.fio.logs, first, j.plan.jobs as usize));
        first += j.plan.jobs as usize;
    }
    check_log_paths(&v).map(|_| ())
}

/// The log files of every clone of every job, checked: per job, per clone,
/// (kind, path).
pub fn log_files(jobs: &[&super::FioJobPlan], all: &[super::FioJobPlan]) -> Vec<Vec<LogFiles>> {
    let mut first = 1;
    let mut firsts = Vec::new();
    for j in all {
        firsts.push(first);
        first += j.plan.jobs as usize;
    }
    jobs.iter()
        .map(|j| {
            let k = all.iter().position(|a| std::ptr::eq(a, *j)).unwrap_or(0);
            (0..j.plan.jobs as usize)
                .map(|c| j.fio.logs.files(firsts[k] + c))
                .collect()
        })
        .collect()
}
