//! The meta workload's plan: `fslab meta` flags, parsed and cross-checked,
//! including bonnie++'s `-n` shorthand.

use super::{seed, PlanError, Result};
use crate::cli::MetaArgs;
use crate::engine::{EngineKind, UringOpts};
use crate::units;
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::path::PathBuf;

/// Order of a pass over the files, as bonnie++ names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    Seq,
    Random,
}

impl Order {
    pub fn name(self) -> &'static str {
        match self {
            Order::Seq => "seq",
            Order::Random => "random",
        }
    }
}

/// Extra phases run after the stat phase of each order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ExtraPhase {
    Getxattr,
    Rename,
    Readdir,
    OpenClose,
}

/// One extended attribute written on every file.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct XattrSpec {
    #[serde(serialize_with = "cstring_str", deserialize_with = "str_cstring")]
    #[schemars(with = "String")]
    pub name: CString,
    pub size: usize,
}

fn cstring_str<S: serde::Serializer>(c: &CString, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&c.to_string_lossy())
}

fn str_cstring<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<CString, D::Error> {
    CString::new(String::deserialize(d)?).map_err(serde::de::Error::custom)
}

/// bonnie++'s `-n files:max:min:dirs`, kept for the CSV header fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BonnieSpec {
    /// In units of 1024 files.
    pub files_k: u64,
    pub max_size: Option<u64>,
    pub min_size: Option<u64>,
    pub dirs: Option<u64>,
}

impl BonnieSpec {
    /// Parses `N[:MAX[:MIN[:DIRS]]]` as bonnie++ `-n` does.
    pub fn parse(s: &str) -> Result<Self> {
        let err = |m: String| {
            PlanError::new(
                "--bonnie",
                format!("'{s}': {m} (format N:MAX:MIN:DIRS, N in 1024 files)"),
            )
        };
        let parts: Vec<&str> = s.split(':').collect();
        if parts.len() > 4 {
            return Err(err("too many fields".into()));
        }
        let num = |i: usize, what: &str| -> Result<Option<u64>> {
            match parts.get(i) {
                None => Ok(None),
                Some(p) if p.is_empty() && i > 0 => Ok(None),
                Some(p) => p
                    .parse::<u64>()
                    .map(Some)
                    .map_err(|_| err(format!("{what} '{p}' is not a whole number"))),
            }
        };
        let files_k = num(0, "file count")?.unwrap_or(0);
        if files_k == 0 {
            return Err(err("the file count must be at least 1".into()));
        }
        if files_k.checked_mul(1024).is_none() {
            return Err(err(format!("{files_k} × 1024 files is more than a 64-bit count holds")));
        }
        let (max_size, min_size, dirs) = (num(1, "max size")?, num(2, "min size")?, num(3, "directory count")?);
        if let (Some(max), Some(min)) = (max_size, min_size) {
            if min > max {
                return Err(err(format!("min size {min} is above max size {max}")));
            }
        }
        Ok(BonnieSpec {
            files_k,
            max_size,
            min_size,
            dirs,
        })
    }
}

/// File descriptors a meta run needs beside its directories' (the target,
/// stdio, io_uring, the result files).
const FD_HEADROOM: u64 = 64;

/// A validated `fslab meta` run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MetaPlan {
    pub target: PathBuf,
    /// Files per job.
    pub files: u64,
    /// Directories per job (files spread evenly).
    pub dirs: u64,
    pub size_min: u64,
    pub size_max: u64,
    pub xattrs: Vec<XattrSpec>,
    pub orders: Vec<Order>,
    pub extra_phases: Vec<ExtraPhase>,
    pub jobs: u32,
    pub shared_dirs: bool,
    pub fsync: bool,
    pub sync_after_phase: bool,
    pub engine: EngineKind,
    pub seed: u64,
    pub bonnie: Option<BonnieSpec>,
    /// --on-error stop.
    pub stop_on_error: bool,
    /// --stonewall.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stonewall: Option<crate::plan::Stonewall>,
}

impl MetaPlan {
    pub fn from_args(a: &MetaArgs) -> Result<Self> {
        let bonnie = a.bonnie.as_deref().map(BonnieSpec::parse).transpose()?;
        if bonnie.is_some() {
            for (flag, set) in [
                ("--files", a.files.is_some()),
                ("--file-size", a.file_size.is_some()),
                ("--dirs", a.dirs.is_some()),
            ] {
                if set {
                    return Err(PlanError::new(flag, "conflicts with --bonnie, which sets it"));
                }
            }
        }
        let files = match (&bonnie, &a.files) {
            // parse checked that the product fits
            (Some(b), _) => b.files_k * 1024,
            (None, Some(f)) => units::parse_count(f).map_err(|e| PlanError::new("--files", e))?,
            (None, None) => 16 * 1024,
        };
        if files == 0 {
            return Err(PlanError::new("--files", "must be at least 1"));
        }
        let dirs = match (&bonnie, &a.dirs) {
            (Some(b), _) => b.dirs.unwrap_or(0).max(1),
            (None, Some(d)) => units::parse_count(d).map_err(|e| PlanError::new("--dirs", e))?,
            (None, None) => 1,
        };
        if dirs == 0 || dirs > files {
            return Err(match (&bonnie, &a.bonnie) {
                (Some(_), Some(b)) => PlanError::new(
                    "--bonnie",
                    format!("'{b}': {dirs} directories for {files} files: at most one directory per file"),
                ),
                _ => PlanError::new("--dirs", format!("must be between 1 and the file count {files}")),
            });
        }
        let (size_min, size_max) = file_sizes(&bonnie, a)?;
        let xattrs = xattrs(a)?;
        let orders = orders(a)?;
        let extra_phases = extra_phases(a, &xattrs)?;
        let jobs = units::parse_count(&a.jobs).map_err(|e| PlanError::new("--jobs", e))?;
        if !(1..=4096).contains(&jobs) {
            return Err(PlanError::new(
                "--jobs",
                format!("must be between 1 and 4096, got {jobs}"),
            ));
        }
        check_fd_limit(a, jobs, dirs, bonnie.is_some())?;
        let engine = engine(a)?;
        if a.common.target.is_empty() {
            return Err(PlanError::new("--target", "empty path"));
        }
        super::refuse_pseudo_fs("--target", a.common.target.as_ref())?;
        let stonewall = super::stonewall(a.stonewall.as_deref())?;
        let (seed, stop_on_error) = (seed(&a.common)?, super::stop_on_error(&a.common)?);
        Ok(MetaPlan {
            target: PathBuf::from(&a.common.target),
            files,
            dirs,
            size_min,
            size_max,
            xattrs,
            orders,
            extra_phases,
            jobs: jobs as u32,
            shared_dirs: a.shared_dirs,
            fsync: a.fsync,
            sync_after_phase: !a.no_sync_after_phase,
            engine,
            seed,
            bonnie,
            stop_on_error,
            stonewall,
        })
    }
}

/// --file-size (or --bonnie's sizes): the smallest and largest file.
fn file_sizes(bonnie: &Option<BonnieSpec>, a: &MetaArgs) -> Result<(u64, u64)> {
    Ok(match (bonnie, &a.file_size) {
        (Some(b), _) => {
            let max = b.max_size.unwrap_or(0);
            (b.min_size.unwrap_or(0).min(max), max)
        }
        (None, Some(s)) => {
            let (lo, hi) = match s.split_once('-') {
                // "-1" (negative) or "4k-": not a range, and no part is the mistake
                Some((lo, hi)) if lo.trim().is_empty() || hi.trim().is_empty() => {
                    return Err(PlanError::new(
                        "--file-size",
                        format!("'{s}' is neither a size nor a range MIN-MAX (examples: 4k, 0-64k)"),
                    ))
                }
                Some((lo, hi)) => (lo, hi),
                None => (s.as_str(), s.as_str()),
            };
            let p = |x: &str| units::parse_size(x).map_err(|e| PlanError::new("--file-size", e));
            let (lo, hi) = (p(lo)?, p(hi)?);
            if lo > hi {
                return Err(PlanError::new("--file-size", format!("'{s}': minimum above maximum")));
            }
            if hi > 1 << 30 {
                return Err(PlanError::new("--file-size", format!("'{s}': at most 1 GiB per file")));
            }
            (lo, hi)
        }
        (None, None) => (0, 0),
    })
}

/// --xattr NAME:SIZE, each checked.
fn xattrs(a: &MetaArgs) -> Result<Vec<XattrSpec>> {
    let mut xattrs = Vec::new();
    for x in &a.xattr {
        let (name, size) = x
            .rsplit_once(':')
            .ok_or_else(|| PlanError::new("--xattr", format!("'{x}': expected NAME:SIZE, e.g. user.test:256")))?;
        if !name.contains('.') || name.starts_with('.') {
            return Err(PlanError::new(
                "--xattr",
                format!("'{name}': an xattr name needs a namespace, e.g. user.{name}"),
            ));
        }
        let size = units::parse_size(size).map_err(|e| PlanError::new("--xattr", e))?;
        if size > 65536 {
            return Err(PlanError::new(
                "--xattr",
                format!("'{x}': the kernel limits xattr values to 64 KiB"),
            ));
        }
        let name = CString::new(name).map_err(|_| PlanError::new("--xattr", format!("'{name}': NUL in the name")))?;
        xattrs.push(XattrSpec {
            name,
            size: size as usize,
        });
    }
    Ok(xattrs)
}

/// --order: seq, random, or both in the order given.
fn orders(a: &MetaArgs) -> Result<Vec<Order>> {
    let mut orders = Vec::new();
    for o in a.order.split(',') {
        let o = match o.trim() {
            "seq" | "sequential" => Order::Seq,
            "random" | "rand" => Order::Random,
            other => {
                return Err(PlanError::new(
                    "--order",
                    format!("unknown order '{other}' (known: seq, random)"),
                ));
            }
        };
        if !orders.contains(&o) {
            orders.push(o);
        }
    }
    Ok(orders)
}

/// --phases beyond bonnie++'s (getxattr needs an --xattr).
fn extra_phases(a: &MetaArgs, xattrs: &[XattrSpec]) -> Result<Vec<ExtraPhase>> {
    let mut extra_phases = Vec::new();
    if let Some(p) = &a.phases {
        for ph in p.split(',') {
            let ph = match ph.trim() {
                "getxattr" => ExtraPhase::Getxattr,
                "rename" => ExtraPhase::Rename,
                "readdir" => ExtraPhase::Readdir,
                "open-close" => ExtraPhase::OpenClose,
                other => {
                    return Err(PlanError::new(
                        "--phases",
                        format!("unknown phase '{other}' (known: getxattr, rename, readdir, open-close)"),
                    ));
                }
            };
            if ph == ExtraPhase::Getxattr && xattrs.is_empty() {
                return Err(PlanError::new("--phases", "getxattr needs at least one --xattr"));
            }
            if !extra_phases.contains(&ph) {
                extra_phases.push(ph);
            }
        }
    }
    Ok(extra_phases)
}

/// Every job keeps its directories open: the open-file limit must allow it.
fn check_fd_limit(a: &MetaArgs, jobs: u64, dirs: u64, bonnie: bool) -> Result<()> {
    // every job keeps its directories open (one fd each) for the *at calls
    let groups = if a.shared_dirs { 1 } else { jobs };
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::MAX);
    if groups.saturating_mul(dirs).saturating_add(FD_HEADROOM) > limit {
        return Err(PlanError::new(
            if bonnie { "--bonnie" } else { "--dirs" },
            format!(
                "{dirs} directories{} are kept open, one file descriptor each: more than the \
                 open-file limit of {limit} (ulimit -n) allows",
                if groups > 1 {
                    format!(" × {groups} jobs")
                } else {
                    String::new()
                }
            ),
        ));
    }
    Ok(())
}

/// --engine for meta: sync or uring (probed for the opcodes meta uses).
fn engine(a: &MetaArgs) -> Result<EngineKind> {
    let engine = match a.engine.as_str() {
        "sync" => EngineKind::Sync,
        "uring" | "io_uring" => EngineKind::Uring,
        other => {
            return Err(PlanError::new(
                "--engine",
                format!("unknown engine '{other}' for meta (known: sync, uring)"),
            ));
        }
    };
    if engine == EngineKind::Uring {
        let o = UringOpts {
            depth: 1,
            ..Default::default()
        };
        crate::engine::probe_uring(&o, &crate::engine::uring::meta_opcodes())
            .map_err(|e| PlanError::new("--engine", e))?;
    }
    Ok(engine)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bonnie_specs() {
        let b = BonnieSpec::parse("100:256:256:10").unwrap();
        assert_eq!(
            (b.files_k, b.max_size, b.min_size, b.dirs),
            (100, Some(256), Some(256), Some(10))
        );
        let b = BonnieSpec::parse("8").unwrap();
        assert_eq!((b.files_k, b.max_size, b.dirs), (8, None, None));
        for bad in [
            "",
            "0",
            "x",
            "1:a",
            "1:10:20",
            "1:2:3:4:5",
            "-1",
            "1:2:1:z",
            "18446744073709551615",
            "18014398509481984",
        ] {
            let e = BonnieSpec::parse(bad).unwrap_err();
            assert_eq!(e.flag, "--bonnie", "{bad}");
        }
    }
}
