//! The refusals of an io target that need nothing made yet: what the
//! target is (directory, existing file, block device), whether the plan can
//! run on it (space, sizes, consent, --verify's needs), and the bytes each
//! job uses. `check_plan` runs them alone (`fslab fio` before its first
//! segment); `prepare` runs them first, on every rank.

use super::{info, io_err, refused, TargetError};
use crate::plan::{FileMode, IoPlan};
use crate::units::Bytes;
use std::fs::File;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

pub(super) enum Kind {
    Dir,
    File(u64),
    Device(u64),
    /// fio's filename=a:b:c over existing files (`RegionPlan::named`):
    /// the bytes of each the job uses, and the smallest file's length.
    Named {
        size: u64,
        len: u64,
    },
}

fn device_size(path: &Path) -> std::io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    File::open(path)?.seek(SeekFrom::End(0))
}

/// A directory target: the bytes of each file and how many files (one per
/// job, or one shared), times --nrfiles.
pub(super) fn dir_files(plan: &IoPlan) -> (u64, u64) {
    let size = plan.file_size(plan.shape.size.unwrap_or(crate::plan::io::DEFAULT_SIZE));
    let per_group = match plan.shape.file_mode {
        FileMode::FilePerJob if !plan.region.shared_files => plan.jobs as u64,
        _ => 1,
    };
    (size, plan.shape.nrfiles as u64 * per_group)
}

/// Bytes before the last clone's region in a file fslab creates (fio's
/// offset and offset_increment; their percentages are of a new file's size
/// before it is laid out: 0, as fio computes them).
pub(super) fn dir_extra(plan: &IoPlan) -> u64 {
    plan.region.max_start(plan.jobs, 0, plan.shape.bs)
}

/// A trim (fio's os_trim, ioctl BLKDISCARD) on anything but a block device
/// fails with ENOTTY in fio, every one of them: fslab refuses the job
/// instead, before it runs. The falloc engine punches holes in a file
/// instead, and the null engine touches nothing.
fn trim_refusal(plan: &IoPlan, kind: &Kind) -> Result<(), TargetError> {
    use crate::engine::EngineKind;
    let engine = plan.ioengine.engine;
    if !plan.shape.rw.trims()
        || matches!(kind, Kind::Device(_))
        || matches!(engine, EngineKind::Falloc | EngineKind::Null)
    {
        return Ok(());
    }
    let what = match kind {
        Kind::Dir => "files in a directory",
        _ => "a regular file",
    };
    Err(refused(
        "--rw",
        format!(
            "rw={}: a trim discards a block device's range (BLKDISCARD), and '{}' holds {what}: fio fails each such trim with ENOTTY (ioengine=falloc punches holes in files)",
            plan.shape.rw.name(),
            plan.target.display()
        ),
    ))
}

/// The refusals that need nothing made yet: what the target is, and whether
/// the plan can run on it.
pub(super) fn check(plan: &IoPlan) -> Result<Kind, TargetError> {
    if !plan.region.named.is_empty() {
        return named(plan);
    }
    let path = &plan.target;
    let meta = std::fs::metadata(path).map_err(|e| {
        refused(
            "--target",
            format!(
                "'{}': {e} (give an existing directory, file or block device)",
                path.display()
            ),
        )
    })?;
    let ft = meta.file_type();
    let kind = if ft.is_dir() {
        Kind::Dir
    } else if ft.is_file() {
        Kind::File(meta.len())
    } else if ft.is_block_device() {
        Kind::Device(device_size(path).map_err(io_err(format!("reading the size of {}", path.display())))?)
    } else {
        return Err(refused(
            "--target",
            format!("'{}' is not a directory, regular file or block device", path.display()),
        ));
    };
    if let (Kind::Dir | Kind::File(_), Some(fs)) = (&kind, info::pseudo_fs(path)) {
        return Err(refused(
            "--target",
            format!("'{}' is on {fs}, not a filesystem to measure", path.display()),
        ));
    }
    trim_refusal(plan, &kind)?;
    if crate::dist::is_distributed() && !matches!(kind, Kind::Dir) {
        return Err(refused(
            "--target",
            format!(
                "'{}' is not a directory: in a distributed run every rank works in its own \
                 subdirectory of a shared directory",
                path.display()
            ),
        ));
    }
    if plan.shape.verify_only && matches!(kind, Kind::Dir) {
        return Err(refused(
            "--verify-only",
            format!(
                "'{}' is a directory, and fslab removes its files after each run: give the file or device an earlier --verify run wrote",
                path.display()
            ),
        ));
    }
    if plan.shape.verify
        && !plan.shape.verify_only
        && !plan.consent.precondition
        && !plan.region.reused
        && !matches!(kind, Kind::Dir)
        && plan.shape.rw.read_pct(plan.shape.rwmixread) > 0
    {
        return Err(refused(
            "--verify",
            "reads of blocks this run did not write would fail the check: add --precondition (or use --verify-only on a file an earlier --verify run wrote)",
        ));
    }
    if let (Some(p), Kind::Dir) = (plan.region.size_percent, &kind) {
        return Err(refused(
            "--size",
            format!(
                "size={p}%: a percentage of a file that does not exist yet; give filename= an existing file or device (fio does no I/O here)"
            ),
        ));
    }
    if plan.shape.nrfiles > 1 && !matches!(kind, Kind::Dir) {
        return Err(refused(
            "--nrfiles",
            format!(
                "'{}' is one file or device: several files per job need a directory target",
                path.display()
            ),
        ));
    }
    // a fill_device job's size is the free space: it stops at ENOSPC
    if matches!(kind, Kind::Dir) && !plan.region.fill {
        dir_space(plan)?;
    }
    Ok(kind)
}

/// fio's filename=a:b:c over existing files: each is checked as a single
/// existing file target is (what it is, its filesystem, the consent to
/// write it, its share of the job's size within it: never extended), as
/// the job's one file of `size / files` bytes. A device or directory among
/// them is refused. fslab's workload gives every file of a job one size:
/// files whose sizes give them different shares are refused, not cut.
fn named(plan: &IoPlan) -> Result<Kind, TargetError> {
    let mut seen: Option<(u64, u64)> = None;
    for path in &plan.region.named {
        let mut one = plan.clone();
        one.target = path.clone();
        one.region.named.clear();
        one.shape.nrfiles = 1;
        one.shape.size = plan.shape.size.map(|s| plan.file_size(s));
        let len = match check(&one)? {
            Kind::File(len) => len,
            _ => {
                return Err(refused(
                    "--target",
                    format!(
                        "'{}' is not a regular file: a job runs over several named files only when each is one",
                        path.display()
                    ),
                ))
            }
        };
        let size = file_checks(&one, len)?;
        let pct = matches!(plan.region.offset, Some(crate::plan::io::region::Amount::Percent(_)))
            || matches!(
                plan.region.offset_increment,
                Some(crate::plan::io::region::Amount::Percent(_))
            );
        seen = match seen {
            None => Some((size, len)),
            Some((s, l)) if s == size && (l == len || !pct) => Some((s, l.min(len))),
            Some((s, _)) => {
                return Err(refused(
                    "--size",
                    format!(
                        "'{}' gives the job {size} bytes where its first file gives {s}: fslab works on each file of a job over the same bytes (give size=)",
                        path.display()
                    ),
                ))
            }
        };
    }
    let (size, len) = seen.expect("a named list has files");
    Ok(Kind::Named { size, len })
}

/// A directory target must have room for the files fslab lays out in it
/// (none for the null engine, which lays out nothing).
fn dir_space(plan: &IoPlan) -> Result<(), TargetError> {
    let path = &plan.target;
    let (size, n_files) = dir_files(plan);
    if plan.ioengine.engine != crate::engine::EngineKind::Null {
        if let Ok(st) = rustix::fs::statvfs(path) {
            let free = st.f_bavail * st.f_frsize;
            let need = (size + dir_extra(plan)).saturating_mul(n_files);
            if need > free {
                return Err(refused(
                    "--size",
                    format!(
                        "{n_files} file(s) of {} need {} but {} has {} free; lower --size or --jobs",
                        Bytes(size),
                        Bytes(need),
                        path.display(),
                        Bytes(free)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The refusals of [`prepare`] that need nothing made: what the target is
/// and whether the plan can run on it (`fslab fio` checks every job's
/// before its first segment runs).
pub fn check_plan(plan: &IoPlan) -> Result<(), TargetError> {
    match check(plan)? {
        Kind::File(len) => file_checks(plan, len).map(|_| ()),
        Kind::Device(_) if !plan.consent.allow_device => Err(no_device_consent(plan)),
        _ => Ok(()),
    }
}

pub(super) fn no_device_consent(plan: &IoPlan) -> TargetError {
    refused(
        "--target",
        format!(
            "'{}' is a block device; add --allow-device to use it",
            plan.target.display()
        ),
    )
}

/// The refusals of an existing file as the target (nothing made or
/// opened): the job's size in it.
pub(super) fn file_checks(plan: &IoPlan, len: u64) -> Result<u64, TargetError> {
    let path = &plan.target;
    let size = job_size(plan, len);
    if size < plan.shape.bs {
        return Err(refused(
            "--target",
            format!("'{}' holds {len} bytes, less than one block", path.display()),
        ));
    }
    if (plan.writes() || plan.consent.precondition) && !plan.consent.force_overwrite {
        return Err(refused(
            "--target",
            format!("'{}' is an existing file fslab did not create and this run writes to it; add --force-overwrite to allow it", path.display()),
        ));
    }
    if size > len && !plan.consent.precondition {
        return Err(refused(
            "--size",
            format!("{size} bytes is more than the {len} bytes '{}' holds; add --precondition (with --force-overwrite) to write it fully first", path.display()),
        ));
    }
    let last = plan.region.max_start(plan.jobs, len, plan.shape.bs);
    if plan.shape.size.is_some() && last.saturating_add(size) > len.max(size) {
        return Err(refused(
            "--size",
            format!(
                "offset {last} + size {size} is beyond the {len} bytes '{}' holds (fslab does not extend a file it did not create)",
                path.display()
            ),
        ));
    }
    Ok(size)
}

/// An existing file's or device's bytes the job uses: --size, fio's size=N%
/// of `len`, or all of it.
pub(super) fn job_size(plan: &IoPlan, len: u64) -> u64 {
    match (plan.shape.size, plan.region.size_percent) {
        (Some(s), _) => s,
        (None, Some(p)) => ((len as f64 * p / 100.0) as u64).max(plan.shape.bs),
        (None, None) => len,
    }
}
