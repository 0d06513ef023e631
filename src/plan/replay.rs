//! The replay plan: a parsed load file and how clients replay it.

use super::loadfile::LoadFile;
use super::{duration, seed, PlanError, Result};
use crate::cli::ReplayArgs;
use crate::units;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

fn ser_loadfile<S: serde::Serializer>(l: &Arc<LoadFile>, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&l.name)
}

/// A result file records the load file by its name only: read back, the
/// plan's load file has that name and no lines (it cannot be replayed from
/// the result; the name says which file to replay again).
fn de_loadfile<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Arc<LoadFile>, D::Error> {
    Ok(Arc::new(LoadFile {
        name: String::deserialize(d)?,
        ..LoadFile::default()
    }))
}

/// A validated `fslab replay` run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReplayPlan {
    #[serde(serialize_with = "ser_loadfile", deserialize_with = "de_loadfile")]
    /// The load file's name (its lines are not recorded).
    #[schemars(with = "String")]
    pub loadfile: Arc<LoadFile>,
    pub target: PathBuf,
    pub clients: u32,
    #[serde(with = "super::io::dur")]
    #[schemars(with = "super::io::dur::Text")]
    pub time: Duration,
    #[serde(with = "super::io::dur")]
    #[schemars(with = "super::io::dur::Text")]
    pub warmup: Duration,
    /// dbench -x: `user.DosAttrib` of `xattr_size` bytes on create and
    /// SET_FILE_INFORMATION, read by the QUERY operations.
    pub xattr: bool,
    pub xattr_size: usize,
    /// O_SYNC on every open.
    pub sync: bool,
    /// fsync after every WriteX.
    pub fsync: bool,
    /// Sleep until each line's leading timestamp.
    pub timestamps: bool,
    pub strict: bool,
    pub seed: u64,
    /// --on-error stop.
    pub stop_on_error: bool,
}

impl ReplayPlan {
    pub fn from_args(a: &ReplayArgs) -> Result<Self> {
        let clients = units::parse_count(&a.clients).map_err(|e| PlanError::new("--clients", e))?;
        if !(1..=1024).contains(&clients) {
            return Err(PlanError::new(
                "--clients",
                format!("must be between 1 and 1024, got {clients}"),
            ));
        }
        let time = duration("--time", &a.time)?;
        if time.is_zero() {
            return Err(PlanError::new("--time", "must be longer than 0"));
        }
        // bounded by units::MAX_DURATION: the runner adds them to an Instant
        let warmup = duration("--warmup", &a.warmup)?;
        let xattr_size = units::parse_size(&a.xattr_size).map_err(|e| PlanError::new("--xattr-size", e))?;
        if xattr_size == 0 || xattr_size > 65536 {
            return Err(PlanError::new("--xattr-size", "between 1 byte and 64 KiB"));
        }
        let timestamps = match a.timestamps.as_str() {
            "honour" | "honor" => true,
            "ignore" => false,
            o => return Err(PlanError::new("--timestamps", format!("'{o}': honour or ignore"))),
        };
        // Parsed once, before any client starts; every error names file:line.
        let lf = LoadFile::read(std::path::Path::new(&a.loadfile)).map_err(|e| {
            let at = if e.line == 0 {
                e.file.clone()
            } else {
                format!("{}:{}", e.file, e.line)
            };
            let hint = if a.loadfile == crate::cli::DBENCH_CLIENT_TXT && !std::path::Path::new(&a.loadfile).exists() {
                " (the default load file: install Debian's dbench package, or name one)"
            } else {
                ""
            };
            PlanError::new(at, format!("{}{hint}", e.msg))
        })?;
        let seed = seed(&a.common)?;
        let stop_on_error = super::stop_on_error(&a.common)?;
        Ok(ReplayPlan {
            loadfile: Arc::new(lf),
            target: PathBuf::from(&a.common.target),
            clients: clients as u32,
            time,
            warmup,
            xattr: a.xattr,
            xattr_size: xattr_size as usize,
            sync: a.sync,
            fsync: a.fsync,
            timestamps,
            strict: a.strict,
            seed,
            stop_on_error,
        })
    }
}
