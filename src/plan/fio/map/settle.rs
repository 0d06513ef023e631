//! The options whose meaning depends on several others, settled once the
//! job's last option is read: the job's size (size, filesize, nrfiles, or
//! an existing file's), its runtime (runtime, time_based, ramp_time) and
//! where it runs (filename, directory).

use super::{fio_time, State};
use crate::cli::FioArgs;
use crate::plan::fiojob::Job;
use std::path::{Path, PathBuf};

/// Sizes, runtime and target, after the job's last option.
pub(super) fn settle(st: &mut State, job: &Job, fa: &FioArgs) {
    job_size(st, fa);
    job_runtime(st, job, fa);
    let sizeless = st.a.size.is_none()
        && st.filename.is_none()
        && !st.m.region.fill
        && ["size", "filesize", "io_size", "io_limit"]
            .iter()
            .all(|k| job.get(k).is_none());
    if !matches!(st.m.fio.engine, crate::plan::fio::FioEngine::Net(_)) {
        job_target(st, job, fa);
    }
    // after the job's other refusals, which say more
    let refused = !st.m.bad.is_empty() || !st.m.unsupported.is_empty() || st.refused_engine.is_some();
    if sizeless && !refused && matches!(st.m.fio.engine, crate::plan::fio::FioEngine::Io) {
        existing_file(st, job, fa);
    }
    // fio leaves the files it lays out (a later run reads them: OpenZFS's
    // suite makes its data set so); fslab removes its own: said, not silent
    let lays_out = std::fs::metadata(&st.a.common.target).map_or(true, |m| m.is_dir());
    let io = matches!(st.m.fio.engine, crate::plan::fio::FioEngine::Io) && st.a.engine != "null";
    if lays_out && io && !refused && st.m.bad.is_empty() {
        st.m.notes.push(
            "files: fslab lays out the jobs' files in a work directory of its own and removes them when the run ends; fio leaves them in the job's directory"
                .into(),
        );
        // fio's extend_file: a job that only writes, without overwrite,
        // gets a new file made as its fallocate says (allocated and
        // unwritten by default), not written: its writes allocate or
        // convert extents, which a file written fully first spares them
        // (fslab's writes ran at 1.2-2x fio's IOPS so)
        let overwrite = job
            .get("overwrite")
            .is_some_and(|o| o.value.as_deref().map(|v| v != "0" && v != "false").unwrap_or(true));
        if matches!(st.a.rw.as_str(), "write" | "randwrite") && !overwrite && !st.a.verify_only {
            use crate::plan::io::region::FreshFile;
            let mode = job.get("fallocate").and_then(|o| o.value.as_deref()).map(str::trim);
            st.m.region.fresh = Some(match mode {
                Some("none" | "0") => FreshFile::Empty,
                Some("truncate") => FreshFile::Truncate,
                Some("keep") => FreshFile::Keep,
                _ => FreshFile::Fallocate,
            });
        }
    }
}

/// fio: size is the job's total over its files; filesize is each file's.
fn job_size(st: &mut State, fa: &FioArgs) {
    let State {
        a,
        m,
        size,
        filesize,
        nrfiles,
        ..
    } = st;
    match (&*filesize, &*size) {
        (Some((fs, at)), _) => match crate::units::parse_size(fs) {
            Ok(v) => match v.checked_mul((*nrfiles).max(1)).filter(|t| *t <= crate::units::MAX_SIZE) {
                Some(total) => {
                    a.size = Some(total.to_string());
                    m.flag_at.push(("--size", at.clone(), "filesize".into()));
                }
                None => m.bad.push((
                    at.clone(),
                    format!(
                        "filesize={fs} × nrfiles={nrfiles}: the job's size is more than 8 EiB, the largest file size Linux has"
                    ),
                )),
            },
            Err(e) => m.bad.push((at.clone(), format!("filesize: {e}"))),
        },
        (None, Some((s, at))) => {
            a.size = Some(s.clone());
            m.flag_at.push(("--size", at.clone(), "size".into()));
        }
        (None, None) => {}
    }
    if let Some(s) = &fa.size {
        a.size = Some(s.clone());
    }
}

/// runtime (or --runtime) and time_based.
fn job_runtime(st: &mut State, job: &Job, fa: &FioArgs) {
    let State {
        a,
        m,
        time_based,
        runtime,
        ..
    } = st;
    if let Some(r) = fa.runtime.as_ref().map(|r| fio_time(r, "s")).or(runtime.take()) {
        a.runtime = Some(r);
        a.size_based = !*time_based;
    } else if *time_based {
        m.unsupported.push(format!("{}: time_based needs a runtime", job.at));
    }
    if a.ramp.is_some() && !*time_based {
        // fio also ramps a size-based job; fslab's ramp is a stretch of a
        // time-based run: name the option that is missing, not --runtime
        let at = job.get("ramp_time").map_or_else(|| job.at.clone(), |o| o.at.clone());
        m.bad.push((
            at,
            "ramp_time: fslab ramps only a time-based job (add time_based and a runtime)".into(),
        ));
    }
}

/// A job with no size= and no filename=: fio reads the files already in
/// its directory under its default names (`JOB.0.0`), at their size, and
/// refuses the job ("you need to specify size=") when there are none
/// (OpenZFS's suite lays files out in one job and reads them in the next).
/// fslab reads such a file as fio does; with several clones or files, or
/// none there, it refuses rather than lay out files of its own size.
fn existing_file(st: &mut State, job: &Job, fa: &FioArgs) {
    let dir = PathBuf::from(&st.a.common.target);
    let name = format!("{}.0.0", job.name);
    let at = job.get("directory").map_or_else(|| job.at.clone(), |o| o.at.clone());
    let one = st.a.jobs.trim() == "1" && st.nrfiles <= 1;
    // the name is looked up in the directory itself, never through a
    // symlink another user planted there, nor out of it by a section named
    // with a '/': only a regular file fslab was pointed at by directory=
    let p = dir.join(&name);
    let found = std::fs::symlink_metadata(&p).ok().map(|m| m.file_type());
    match found {
        Some(t) if one && t.is_file() && !job.name.contains('/') => {
            st.a.common.target = p.display().to_string();
            // as for an existing filename=: writing it needs --force-overwrite
            st.a.force_overwrite = fa.force_overwrite;
            st.m.flag_at.push(("--target", at, "directory".into()));
        }
        Some(t) if t.is_symlink() || job.name.contains('/') => st.m.bad.push((
            at,
            format!(
                "size: not given, and {} is not a regular file in the job's directory (a symlink, or a section name with '/'): \
                 fslab reads an existing file under fio's name only then (give size= or filename=)",
                crate::units::excerpt(&name)
            ),
        )),
        Some(_) => st.m.bad.push((
            at,
            format!(
                "size: not given, so fio would use the existing files ({}...) of each clone and file at their sizes; fslab reads one existing regular file only (give size=, or one job and one file)",
                crate::units::excerpt(&name)
            ),
        )),
        _ => st.m.bad.push((
            at,
            format!(
                "size: not given, and {} has no file {} to read (fio refuses this job too: \"you need to specify size=\")",
                crate::units::excerpt(&dir.display().to_string()),
                crate::units::excerpt(&name)
            ),
        )),
    }
}

/// filename and directory: where the job runs (a list of names:
/// `files::list_target`).
fn job_target(st: &mut State, job: &Job, fa: &FioArgs) {
    if !super::files::directory(st) {
        return;
    }
    if st.filename.as_ref().is_some_and(|(n, _)| n.len() > 1) {
        let (names, at) = st.filename.take().expect("a list of names");
        return super::files::list_target(st, job, names, at, fa);
    }
    if st.filename.is_some() && st.nrfiles != 1 {
        super::files::counted(st, 1, fa);
    }
    let State {
        a,
        m,
        filename,
        directory,
        ..
    } = st;
    if let Some((mut names, at)) = filename.take() {
        let f = names.remove(0);
        let p = super::files::joined(directory.as_ref().map(|(d, _)| d.as_str()), &f);
        if p.exists() {
            a.common.target = p.display().to_string();
            m.flag_at.push(("--target", at, "filename".into()));
            a.allow_device = fa.allow_device;
            a.force_overwrite = fa.force_overwrite;
        } else {
            // fio would create it: fslab creates its own work file beside
            // it, one file that the job's clones share, as fio's share `f`
            m.region.shared_files = true;
            a.common.target = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .display()
                .to_string();
            m.notes.push(format!(
                "filename={f}: fslab works in a file of its own directory in {} instead, shared by the job's clones (and removes it afterwards)",
                a.common.target
            ));
            m.flag_at.push(("--target", at, "filename".into()));
        }
    } else if let Some((d, at)) = directory.take() {
        a.common.target = d;
        m.flag_at.push(("--target", at, "directory".into()));
    }
}
