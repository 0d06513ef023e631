//! Where the work runs: a fresh directory of fslab's own under a directory
//! target, an existing regular file, or a block device. Preparing lays the files
//! out (fully written, so reads never hit holes), runs the safety checks, probes
//! whether O_DIRECT is honoured, and returns a guard whose `Drop` removes
//! whatever fslab created, on every path out.

pub mod cache;
mod check;
pub mod cleanup;
pub mod info;
mod layout;
pub mod live;
pub mod marker;
mod prepare;
pub mod queue;
pub mod ranks;
pub mod rmtree;
pub mod safety;
pub mod scratch;
pub mod workdir;

use crate::model::TargetInfo;
pub use check::check_plan;
pub use layout::lay_out_file;
pub use prepare::{pre_read, prepare, Prepared};
pub use workdir::make_workdir;
pub(crate) use workdir::remove_marked;

use std::path::{Path, PathBuf};

/// Name of the marker file in every work directory fslab creates; `fslab
/// cleanup` removes only directories that carry it.
pub const MARKER: &str = ".fslab-workdir";

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The target can't be used as asked: bad usage, exit code 2. Shown
    /// with control characters escaped (paths and names may hold them).
    #[error("{}: {}", crate::units::shown(flag), crate::units::shown(msg))]
    Refused {
        /// The flag, or the file:line a plan's option came from.
        flag: std::borrow::Cow<'static, str>,
        msg: String,
    },
    /// Something failed while preparing: exit code 1.
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("interrupted while laying out files")]
    Interrupted,
    /// Another rank of a distributed run failed (it says why): exit code 1.
    #[error("{0}")]
    OtherRank(String),
}

fn refused(flag: &'static str, msg: impl Into<String>) -> TargetError {
    TargetError::Refused {
        flag: flag.into(),
        msg: msg.into(),
    }
}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> TargetError {
    let what = what.into();
    move |source| TargetError::Io { what, source }
}

/// Removes the work directory fslab created when dropped.
///
/// In a distributed run rank 0's guard holds the run's directory and every
/// rank's guard its own `rank<R>` inside it. `finish` ends a cell normally:
/// each rank removes its directory, all meet on a barrier, rank 0 removes the
/// rest. Dropping a guard without `finish` (an error every rank agreed on)
/// makes no MPI call: each rank removes its own directory and rank 0 waits a
/// little for the others' to go before it removes the run's directory.
#[derive(Debug, Default)]
pub struct Guard {
    dir: Option<PathBuf>,
    /// Distributed runs: this rank's directory inside the run's.
    rank_dir: Option<PathBuf>,
    /// Distributed runs: every rank has passed `finish`.
    finished: bool,
}

impl Guard {
    /// A guard that removes work directory `dir` (made by `make_workdir`).
    pub fn for_workdir(dir: PathBuf) -> Self {
        Guard {
            dir: Some(dir),
            rank_dir: None,
            finished: false,
        }
    }

    /// The normal end of a cell (every rank calls it in a distributed run).
    pub fn finish(mut self) {
        if let Some(r) = self.rank_dir.take() {
            // not over the barrier: a rank that aborted never reaches it
            let serial = crate::interrupt::serial();
            remove_marked(&r);
            drop(serial);
            crate::dist::coordinator().barrier();
            self.finished = true;
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // an abort must not remove the same directory at the same time
        let _serial = crate::interrupt::serial();
        let distributed = self.rank_dir.is_some() || self.finished;
        let mut left = Vec::new();
        if let Some(r) = self.rank_dir.take() {
            left.extend(workdir::remove_work_dir(&r));
        }
        if let Some(d) = self.dir.take() {
            if distributed && !self.finished {
                ranks::wait_for_ranks_to_leave(&d);
            }
            if let Some(w) = workdir::remove_work_dir(&d) {
                // the run's directory took the rank's with it: one warning
                if w.vanished {
                    left.retain(|l| !l.vanished);
                }
                left.push(w);
            }
        }
        for w in left {
            eprintln!("fslab: warning: {w}");
        }
    }
}

/// An existing directory target with fslab's own work directory in it.
pub struct WorkDir {
    pub info: TargetInfo,
    pub path: PathBuf,
    /// Removes `path` when dropped.
    pub guard: Guard,
}

/// Checks that `target` is a directory, describes its filesystem, and makes
/// fslab's work directory in it: the start of every file-creating workload.
pub fn work_dir(target: &Path) -> Result<WorkDir, TargetError> {
    let meta = std::fs::metadata(target).map_err(|e| {
        refused(
            "--target",
            format!("'{}': {e} (give an existing directory)", target.display()),
        )
    })?;
    if !meta.is_dir() {
        return Err(refused(
            "--target",
            format!("'{}' is not a directory", target.display()),
        ));
    }
    if let Some(fs) = info::pseudo_fs(target) {
        return Err(refused(
            "--target",
            format!("'{}' is on {fs}, not a filesystem to measure", target.display()),
        ));
    }
    let mut info = TargetInfo {
        path: target.to_path_buf(),
        kind: "directory".into(),
        ..Default::default()
    };
    describe_mount(&mut info, &info::mounts());
    let (path, guard) = ranks::run_workdir(target)?;
    Ok(WorkDir { info, guard, path })
}

/// Fills in the filesystem, mount options and device of `info.path`.
pub fn describe_mount(info: &mut TargetInfo, mounts: &[info::MountEntry]) {
    if let Some(m) = info::mount_of(&info.path, mounts) {
        info.fs_type = m.fs_type.clone();
        info.mount_point = Some(m.mount_point.clone());
        info.mount_options = Some(m.options.clone());
        (info.loop_backing_file, info.loop_direct_io) = info::loop_backing(&m.source);
        if m.source.starts_with("/dev/") {
            info.queue = queue::read(Path::new(&m.source));
        }
        info.device = Some(m.source);
    }
}
