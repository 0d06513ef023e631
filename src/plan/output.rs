//! `--output FORMAT[:PATH]`: which reporters run and where their bytes go.
//! Files are created here, during validation, so an unwritable path fails in
//! the first millisecond rather than after a ten-minute run.

use super::{PlanError, Result};
use crate::cli::CommonArgs;
use std::fs::File;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    Text,
    Json,
    /// bonnie++ 1.98 CSV: metadata runs only.
    BonnieCsv,
    /// Every probe sample as CSV: probe runs only.
    TimelineCsv,
    /// fio's JSON shape: io runs and the quick suite.
    FioJson,
    /// One row per (cell, operation, metric).
    Csv,
    /// A self-contained page with charts.
    Html,
}

#[derive(Debug)]
pub struct OutputSpec {
    pub format: OutputFormat,
    /// None = stdout.
    pub path: Option<PathBuf>,
    /// Opened (and truncated) during validation.
    pub file: Option<File>,
}

/// Every requested output.
#[derive(Debug, Default)]
pub struct Outputs(pub Vec<OutputSpec>);

impl Clone for Outputs {
    fn clone(&self) -> Self {
        // Files are single-owner; clones carry the specs only.
        Outputs(
            self.0
                .iter()
                .map(|o| OutputSpec {
                    format: o.format,
                    path: o.path.clone(),
                    file: None,
                })
                .collect(),
        )
    }
}

impl Outputs {
    /// Parses every `--output` of `command` and creates the files.
    pub fn from_args(c: &CommonArgs, command: &str) -> Result<Self> {
        let mut v = Vec::new();
        for s in &c.output {
            let (fmt, path) = match s.split_once(':') {
                Some((f, p)) => (f, Some(p)),
                None => (s.as_str(), None),
            };
            let format = match fmt {
                "text" => OutputFormat::Text,
                "json" => OutputFormat::Json,
                "bonnie-csv" if command == "meta" => OutputFormat::BonnieCsv,
                "bonnie-csv" => {
                    return Err(PlanError::new(
                        "--output",
                        format!("bonnie-csv is for `fslab meta`, not `fslab {command}`"),
                    ))
                }
                "timeline-csv" if command == "probe" => OutputFormat::TimelineCsv,
                "fio-json" if command == "io" || command == "run" => OutputFormat::FioJson,
                "fio-json" => {
                    return Err(PlanError::new(
                        "--output",
                        format!("fio-json is for `fslab io` and `fslab run`, not `fslab {command}`"),
                    ))
                }
                "csv" => OutputFormat::Csv,
                "html" => OutputFormat::Html,
                "timeline-csv" => {
                    return Err(PlanError::new(
                        "--output",
                        format!("timeline-csv is for `fslab probe`, not `fslab {command}`"),
                    ))
                }
                _ => {
                    return Err(PlanError::new(
                        "--output",
                        format!(
                            "unknown format '{fmt}' (known: text, json, csv, html, fio-json, bonnie-csv, timeline-csv)"
                        ),
                    ))
                }
            };
            let path = match path {
                None | Some("-") => None,
                Some("") => return Err(PlanError::new("--output", format!("'{s}': empty path"))),
                Some(p) => Some(PathBuf::from(p)),
            };
            if path.is_none() && v.iter().any(|o: &OutputSpec| o.path.is_none()) {
                return Err(PlanError::new(
                    "--output",
                    "only one output can go to stdout; give the others a :PATH",
                ));
            }
            let file = match &path {
                // in a distributed run rank 0 alone writes the results
                Some(_) if crate::dist::coordinator().rank() != 0 => None,
                Some(p) => Some(
                    File::create(p)
                        .map_err(|e| PlanError::new("--output", format!("cannot create '{}': {e}", p.display())))?,
                ),
                None => None,
            };
            v.push(OutputSpec { format, path, file });
        }
        if v.is_empty() && !c.quiet {
            v.push(OutputSpec {
                format: OutputFormat::Text,
                path: None,
                file: None,
            });
        }
        if crate::dist::coordinator().rank() != 0 {
            // rank 0 writes the merged results of every rank
            v.clear();
        }
        Ok(Outputs(v))
    }
}
