//! Where the work runs: a fresh directory of fslab's own under a directory
//! target, an existing regular file, or a block device. Preparing lays the files
//! out (fully written, so reads never hit holes), runs the safety checks, probes
//! whether O_DIRECT is honoured, and returns a guard whose `Drop` removes
//! whatever fslab created, on every path out.

pub mod cache;
pub mod cleanup;
pub mod info;
mod layout;
pub mod live;
pub mod queue;
pub mod ranks;
pub mod rmtree;
pub mod safety;
pub mod scratch;
pub mod workdir;

use crate::model::TargetInfo;
pub use layout::lay_out_file;
use layout::{check_direct, lay_out_blocks};
pub use workdir::make_workdir;
pub(crate) use workdir::remove_marked;

use crate::plan::{FileMode, IoPlan};
use crate::units::Bytes;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

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

/// A prepared target: files ready for the timed phase.
#[derive(Debug)]
pub struct Prepared {
    /// One per job, or a single shared one.
    pub files: Vec<PathBuf>,
    /// Bytes of each file the workload uses.
    pub file_size: u64,
    /// Files per job (--nrfiles).
    pub per_job: usize,
    /// Bytes of each file in all (`file_size` plus the largest region start
    /// of fio's offset/offset_increment when fslab made the files).
    pub file_len: u64,
    /// The base of fio's percentage offsets: the existing file's or
    /// device's size, 0 for files fslab creates.
    pub pct_base: u64,
    /// Where this process's region starts: a distributed --shared-file run
    /// gives each rank its own `file_size` bytes of one file.
    pub region_base: u64,
    pub info: TargetInfo,
    pub warnings: Vec<String>,
    /// Keeps the target's files until dropped.
    pub guard: Guard,
    /// A device target's exclusive claim, held until dropped.
    pub claim: Option<safety::DeviceClaim>,
}

impl Prepared {
    /// The files job `j` works on (`per_job` of them: --nrfiles).
    pub fn files_for(&self, j: usize) -> &[PathBuf] {
        let groups = (self.files.len() / self.per_job).max(1);
        let g = j % groups;
        &self.files[g * self.per_job..(g + 1) * self.per_job]
    }

    /// Opens one of the files for a worker. A device is opened without
    /// O_EXCL: `prepare` claimed it for the cell (a second O_EXCL open from
    /// this process would fail), and the open is checked to reach the device
    /// the claim holds. Once per worker, before the timed phase.
    pub fn open(&self, path: &Path, write: bool, direct: bool) -> std::io::Result<File> {
        self.open_with(path, write, if direct { libc::O_DIRECT } else { 0 })
    }

    /// `open` with these open flags (O_DIRECT, O_SYNC, O_DSYNC).
    pub fn open_with(&self, path: &Path, write: bool, flags: i32) -> std::io::Result<File> {
        let f = OpenOptions::new()
            .read(true)
            .write(write)
            .custom_flags(flags)
            .open(path)?;
        if let Some(c) = &self.claim {
            c.check_same(&f)?;
        }
        Ok(f)
    }
}

enum Kind {
    Dir,
    File(u64),
    Device(u64),
}

fn device_size(path: &Path) -> std::io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    File::open(path)?.seek(SeekFrom::End(0))
}

/// A directory target: the bytes of each file and how many files (one per
/// job, or one shared), times --nrfiles.
fn dir_files(plan: &IoPlan) -> (u64, u64) {
    let size = plan.file_size(plan.size.unwrap_or(crate::plan::io::DEFAULT_SIZE));
    let per_group = match plan.file_mode {
        FileMode::FilePerJob if !plan.region.shared_files => plan.jobs as u64,
        _ => 1,
    };
    (size, plan.nrfiles as u64 * per_group)
}

/// Bytes before the last clone's region in a file fslab creates (fio's
/// offset and offset_increment; their percentages are of a new file's size
/// before it is laid out: 0, as fio computes them).
fn dir_extra(plan: &IoPlan) -> u64 {
    plan.region.max_start(plan.jobs, 0, plan.bs)
}

/// The refusals that need nothing made yet: what the target is, and whether
/// the plan can run on it.
fn check(plan: &IoPlan) -> Result<Kind, TargetError> {
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
    if plan.verify_only && matches!(kind, Kind::Dir) {
        return Err(refused(
            "--verify-only",
            format!(
                "'{}' is a directory, and fslab removes its files after each run: give the file or device an earlier --verify run wrote",
                path.display()
            ),
        ));
    }
    if plan.verify
        && !plan.verify_only
        && !plan.precondition
        && !matches!(kind, Kind::Dir)
        && plan.rw.read_pct(plan.rwmixread) > 0
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
    if plan.nrfiles > 1 && !matches!(kind, Kind::Dir) {
        return Err(refused(
            "--nrfiles",
            format!(
                "'{}' is one file or device: several files per job need a directory target",
                path.display()
            ),
        ));
    }
    if matches!(kind, Kind::Dir) {
        let (size, n_files) = dir_files(plan);
        if plan.engine != crate::engine::EngineKind::Null {
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
    }
    Ok(kind)
}

/// The refusals of [`prepare`] that need nothing made: what the target is
/// and whether the plan can run on it (`fslab fio` checks every job's
/// before its first segment runs).
pub fn check_plan(plan: &IoPlan) -> Result<(), TargetError> {
    match check(plan)? {
        Kind::File(len) => file_checks(plan, len).map(|_| ()),
        Kind::Device(_) if !plan.allow_device => Err(no_device_consent(plan)),
        _ => Ok(()),
    }
}

fn no_device_consent(plan: &IoPlan) -> TargetError {
    refused(
        "--target",
        format!(
            "'{}' is a block device; add --allow-device to use it",
            plan.target.display()
        ),
    )
}

/// Prepares `plan.target` for the io workload.
pub fn prepare(plan: &IoPlan, stop: &AtomicBool, progress: &dyn Fn(u64, u64)) -> Result<Prepared, TargetError> {
    let path = &plan.target;
    // Every rank of a distributed run passes the checks or none goes on, so
    // that no rank is left waiting in a collective the others never reach.
    let kind = ranks::agree(check(plan))?;
    let mounts = info::mounts();
    let mut info = TargetInfo {
        path: path.clone(),
        direct: plan.direct,
        ..Default::default()
    };
    let mut warnings = Vec::new();
    let f = match kind {
        Kind::Dir => dir_target(plan, &mut info)?,
        Kind::File(len) => file_target(plan, len, &mut info)?,
        Kind::Device(len) => device_target(plan, len, &mounts, &mut info, &mut warnings)?,
    };
    if info.kind != "block-device" {
        describe_mount(&mut info, &mounts);
    }
    lay_out_all(plan, &f, stop, progress)?;
    // an existing file or device: all of it; fslab's files: as laid out
    let file_len = if f.pct_base > 0 { f.pct_base } else { f.size + f.extra };
    if let Some(w) = overlapping_verify(plan, &f, file_len) {
        warnings.push(w);
    }
    if plan.direct && plan.engine != crate::engine::EngineKind::Null {
        check_direct(&f.files[0], plan, f.size, &mut info, &mut warnings)?;
    }
    Ok(Prepared {
        files: f.files,
        file_size: f.size,
        per_job: plan.nrfiles as usize,
        file_len,
        pct_base: f.pct_base,
        region_base: f.region_base,
        info,
        warnings,
        guard: f.guard,
        claim: f.claim,
    })
}

/// --verify with random jobs whose regions of one shared file overlap: a
/// read that races another job's write of the same block can copy it out of
/// the page cache half-written (buffered reads take no lock against writes)
/// and count a mismatch that is no corruption: 2 CRC mismatches in 1.75 M
/// reads of four 4 KiB randrw jobs on one 2 MiB file in 60 s (ext4, loaded
/// machine); a distributed test of two such jobs per rank failed in CI so.
fn overlapping_verify(plan: &IoPlan, f: &Files, file_len: u64) -> Option<String> {
    let shared = f.files.len() == plan.nrfiles as usize;
    if !(plan.verify && plan.writes() && plan.rw.random() && shared && plan.jobs > 1) {
        return None;
    }
    let (a, alen) = plan.region.span(0, f.pct_base, file_len, f.size, plan.bs);
    let (b, _) = plan.region.span(1, f.pct_base, file_len, f.size, plan.bs);
    (b < a + alen).then(|| {
        format!(
            "--verify: the {} jobs write random blocks of one shared file's same region; a read racing \
             another job's write of a block can see it half-written and count a mismatch that is not \
             corruption (give each job its own file, or its own region with fio's offset_increment)",
            plan.jobs
        )
    })
}

/// What preparing one kind of target decided.
#[derive(Default)]
struct Files {
    files: Vec<PathBuf>,
    /// Bytes of each file this rank works on.
    size: u64,
    /// Whether fslab writes the files before the timed run.
    lay_out: bool,
    /// Bytes laid out before the regions (fio's offset in fslab's files).
    extra: u64,
    /// The base of fio's percentage offsets (an existing file's size).
    pct_base: u64,
    /// A file every rank shares: where this rank's region starts, and the
    /// whole file's size (0: not shared).
    region_base: u64,
    layout_size: u64,
    guard: Guard,
    claim: Option<safety::DeviceClaim>,
}

/// A directory target: fslab's files in its own work directory.
fn dir_target(plan: &IoPlan, info: &mut TargetInfo) -> Result<Files, TargetError> {
    let path = &plan.target;
    info.kind = "directory".into();
    let (size, n_files) = dir_files(plan);
    let (mut dir, guard) = ranks::run_workdir(path)?;
    let (mut region_base, mut layout_size) = (0, 0);
    let coord = crate::dist::coordinator();
    if coord.size() > 1 && plan.file_mode == FileMode::SharedFile {
        // one file for every rank, beside the ranks' directories;
        // rank 0 lays it out whole, each rank works in its region
        dir = dir.parent().expect("a rank directory has a parent").to_path_buf();
        region_base = coord.rank() as u64 * size;
        layout_size = size * coord.size() as u64;
    }
    let per = plan.nrfiles as u64;
    let files: Vec<PathBuf> = (0..n_files)
        .map(|i| match per {
            1 => dir.join(format!("job{i}.dat")),
            _ => dir.join(format!("job{}.{}.dat", i / per, i % per)),
        })
        .collect();
    // a file all ranks share is laid out by rank 0 (region 0)
    let lay_out = plan.engine != crate::engine::EngineKind::Null && (layout_size == 0 || region_base == 0);
    Ok(Files {
        files,
        size,
        lay_out,
        extra: dir_extra(plan),
        pct_base: 0,
        region_base,
        layout_size,
        guard,
        claim: None,
    })
}

/// An existing file fslab did not create.
fn file_target(plan: &IoPlan, len: u64, info: &mut TargetInfo) -> Result<Files, TargetError> {
    info.kind = "file".into();
    let size = file_checks(plan, len)?;
    Ok(Files {
        files: vec![plan.target.clone()],
        size,
        lay_out: plan.precondition,
        pct_base: len,
        ..Files::default()
    })
}

/// The refusals of an existing file as the target (nothing made or
/// opened): the job's size in it.
fn file_checks(plan: &IoPlan, len: u64) -> Result<u64, TargetError> {
    let path = &plan.target;
    let size = job_size(plan, len);
    if size < plan.bs {
        return Err(refused(
            "--target",
            format!("'{}' holds {len} bytes, less than one block", path.display()),
        ));
    }
    if (plan.writes() || plan.precondition) && !plan.force_overwrite {
        return Err(refused(
            "--target",
            format!("'{}' is an existing file fslab did not create and this run writes to it; add --force-overwrite to allow it", path.display()),
        ));
    }
    if size > len && !plan.precondition {
        return Err(refused(
            "--size",
            format!("{size} bytes is more than the {len} bytes '{}' holds; add --precondition (with --force-overwrite) to write it fully first", path.display()),
        ));
    }
    let last = plan.region.max_start(plan.jobs, len, plan.bs);
    if plan.size.is_some() && last.saturating_add(size) > len.max(size) {
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

/// A block device, claimed for the whole cell.
fn device_target(
    plan: &IoPlan,
    len: u64,
    mounts: &[info::MountEntry],
    info: &mut TargetInfo,
    warnings: &mut Vec<String>,
) -> Result<Files, TargetError> {
    let path = &plan.target;
    info.kind = "block-device".into();
    info.fs_type = "raw".into();
    info.device = Some(path.display().to_string());
    (info.loop_backing_file, info.loop_direct_io) = info::loop_backing(&path.display().to_string());
    info.queue = queue::read(path);
    if !plan.allow_device {
        return Err(no_device_consent(plan));
    }
    let size = job_size(plan, len);
    if size > len || (plan.size.is_some() && plan.region.max_start(plan.jobs, len, plan.bs).saturating_add(size) > len)
    {
        return Err(refused(
            "--size",
            format!("{size} bytes (from the job's offset) is more than the device's {len}"),
        ));
    }
    // Claimed (O_EXCL) for the whole cell, checks and I/O alike: a
    // device mounted or claimed by anything else is refused, and
    // nothing can mount or claim it while fslab uses it.
    let c = safety::claim(path, mounts).map_err(|e| match e {
        safety::SafetyError::Io { what, source } => TargetError::Io { what, source },
        why => refused("--target", format!("refusing to use {}: {why}", path.display())),
    })?;
    if plan.writes() || plan.precondition {
        if let Some(why) = safety::data_refusal(&c) {
            if !plan.force_overwrite {
                return Err(refused(
                    "--target",
                    format!(
                        "refusing to write to {}: {why}; add --force-overwrite if its data may be destroyed",
                        path.display()
                    ),
                ));
            }
            warnings.push(format!(
                "writing to {} although {why} (--force-overwrite)",
                path.display()
            ));
        }
    }
    if !plan.precondition && plan.rw.read_pct(plan.rwmixread) > 0 {
        warnings.push(format!(
            "{} was not preconditioned: reads of never-written blocks may be served without I/O (add --precondition)",
            path.display()
        ));
    }
    Ok(Files {
        // The claimed device itself (its descriptor's /proc path), not the
        // path again: the layout and the workers open what was checked,
        // whatever a flipped symlink names by then.
        files: vec![c.path()],
        size,
        lay_out: plan.precondition,
        claim: Some(c),
        pct_base: len,
        ..Files::default()
    })
}

/// An existing file's or device's bytes the job uses: --size, fio's size=N%
/// of `len`, or all of it.
fn job_size(plan: &IoPlan, len: u64) -> u64 {
    match (plan.size, plan.region.size_percent) {
        (Some(s), _) => s,
        (None, Some(p)) => ((len as f64 * p / 100.0) as u64).max(plan.bs),
        (None, None) => len,
    }
}

/// Writes the files fslab lays out (a file every rank shares: rank 0 does).
fn lay_out_all(plan: &IoPlan, f: &Files, stop: &AtomicBool, progress: &dyn Fn(u64, u64)) -> Result<(), TargetError> {
    let (files, size, lay_out, layout_size) = (&f.files, f.size + f.extra, f.lay_out, f.layout_size);
    let mut laid = Ok(());
    if lay_out {
        let layout_size = layout_size.max(size);
        let total = layout_size * files.len() as u64;
        let mut done = 0;
        laid = files.iter().enumerate().try_for_each(|(i, f)| {
            let vbs = if plan.verify { plan.bs } else { 0 };
            lay_out_blocks(f, layout_size, plan.seed.wrapping_add(i as u64), vbs, stop, &mut |n| {
                done += n;
                progress(done, total)
            })
        });
    }
    if layout_size > 0 {
        // a file every rank shares: the others wait for rank 0 to lay it out
        laid = ranks::agree(laid);
    }
    laid
}

/// fio's pre_read: reads `len` bytes of `path` from `at` through the page
/// cache (a buffered open of its own), before the job's timed phase.
pub fn pre_read(path: &Path, at: u64, len: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let f = File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut done = 0;
    while done < len {
        let n = (len - done).min(buf.len() as u64) as usize;
        match f.read_at(&mut buf[..n], at + done)? {
            0 => break,
            got => done += got as u64,
        }
    }
    Ok(())
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
