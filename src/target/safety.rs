//! Refusals that keep fslab from destroying data it did not create.
//!
//! A block device in use (mounted, a partition of it mounted, held by
//! device-mapper or md, active swap, or opened `O_EXCL` by anyone) cannot be
//! used at all: fslab claims every device it works on with `O_EXCL` (on a
//! block device, without `O_CREAT`, that is the kernel's exclusive claim
//! mount, swapon, dm and md take too) and keeps the claim while it uses the
//! device, so nothing can mount or claim it in the meantime either.
//!
//! A device that carries anything libblkid recognises (`blkid -p` and
//! `wipefs`: filesystems, RAID members, partition tables, volumes), or one of
//! fslab's own 9 magics, is written only with `--force-overwrite`; a probe
//! that cannot run or fails counts as a signature found.

mod probe;

pub use probe::{find_signature, Found, PROBE_LEN};

use super::info::MountEntry;
use crate::plan::lab::{FsKind, LabPlan};
use crate::plan::PlanError;
use rustix::fs::{FileType, Mode, OFlags};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

#[derive(Debug, thiserror::Error)]
pub enum SafetyError {
    /// In use by something else: refused, whatever the flags.
    #[error("{0}")]
    InUse(String),
    /// It carries data fslab did not make there (or could not be probed).
    #[error("{0}")]
    Data(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

/// An exclusive (`O_EXCL`) claim on a block device, released when the last
/// clone is dropped.
///
/// The kernel makes each `O_EXCL` open file its own holder, so a second
/// `O_EXCL` open of the same device fails with EBUSY even from this process:
/// one claim per device per process, shared by everything in fslab that
/// uses the device at once (several fio jobs on one device). Whoever does the
/// I/O opens the device without `O_EXCL` while the claim is held (a plain
/// open succeeds; mount, mkfs, dm, md and other `O_EXCL` openers fail).
#[derive(Debug, Clone)]
pub struct DeviceClaim(Arc<Held>);

#[derive(Debug)]
struct Held {
    fd: OwnedFd,
    rdev: u64,
    path: PathBuf,
}

/// The claims this process holds (dead entries are pruned on each claim).
static HELD: Mutex<Vec<Weak<Held>>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl DeviceClaim {
    /// Errors unless `f` is the device this claim holds: a path that names
    /// another device since it was claimed is not used.
    pub fn check_same(&self, f: &impl std::os::fd::AsFd) -> std::io::Result<()> {
        let st = rustix::fs::fstat(f)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::BlockDevice || st.st_rdev != self.0.rdev {
            return Err(std::io::Error::other(format!(
                "{} is no longer the block device fslab claimed",
                self.0.path.display()
            )));
        }
        Ok(())
    }

    /// A path to the claimed device itself for child processes (blkid,
    /// wipefs): the open descriptor in /proc, which no rename can redirect.
    fn proc_path(&self) -> PathBuf {
        fd_path(&self.0.fd)
    }

    /// A path that opens the claimed device itself, for this process and
    /// its children (without O_EXCL: the claim is shared, not taken again).
    pub fn path(&self) -> PathBuf {
        self.proc_path()
    }

    /// The claimed device's number.
    pub fn rdev(&self) -> u64 {
        self.0.rdev
    }

    /// A second, non-exclusive descriptor of the claimed device, opened
    /// through the claim's own descriptor (never through the path again), to
    /// hold for the rest of the cell: see [`HeldDevice`].
    pub fn hold(&self) -> std::io::Result<HeldDevice> {
        let fd = rustix::fs::open(self.proc_path(), OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())?;
        self.check_same(&fd)?;
        // the name the kernel resolved when fslab claimed it (/dev/loop3), for messages
        let shown = std::fs::read_link(fd_path(&fd)).unwrap_or_else(|_| self.0.path.clone());
        Ok(HeldDevice {
            fd,
            rdev: self.0.rdev,
            shown,
        })
    }

    /// The first `PROBE_LEN` bytes (fewer on a smaller device).
    fn head(&self) -> std::io::Result<Vec<u8>> {
        let mut head = vec![0u8; PROBE_LEN];
        let mut got = 0;
        while got < head.len() {
            match rustix::io::pread(&self.0.fd, &mut head[got..], got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        head.truncate(got);
        Ok(head)
    }
}

/// `/proc/<pid>/fd/<n>`: a path to what `fd` is open on, for a child process.
fn fd_path(fd: &OwnedFd) -> PathBuf {
    PathBuf::from(format!("/proc/{}/fd/{}", std::process::id(), fd.as_raw_fd()))
}

/// A plan's device, resolved once: a plain (non-exclusive) descriptor fslab
/// opened through its exclusive claim after the checks passed, and holds
/// for the whole cell. Every tool of the cell (mkfs, mount, the queue
/// settings, QEMU, the raw io cell) is given [`HeldDevice::path`], the
/// descriptor's `/proc/<pid>/fd/<n>`, which opens this very device whatever
/// the plan's path (a symlink, a node someone renames) points to by then.
///
/// Non-exclusive because mkfs and mount open the device `O_EXCL`
/// themselves, and the kernel refuses that while any other open file holds
/// the claim, fslab's own included; so the claim is released just before
/// them. In that gap a flipped path can do nothing: no path is resolved
/// again. Another program could claim the device itself (mkfs then fails
/// with EBUSY, and nothing is written), or open it without a claim, as it
/// could at any time; once mounted, the mount holds the claim.
#[derive(Debug)]
pub struct HeldDevice {
    fd: OwnedFd,
    rdev: u64,
    shown: PathBuf,
}

impl HeldDevice {
    /// The path child processes open the device by (see the type).
    pub fn path(&self) -> PathBuf {
        fd_path(&self.fd)
    }

    pub fn rdev(&self) -> u64 {
        self.rdev
    }

    /// The device's own name (`/dev/loop3`) as the kernel resolved it when
    /// fslab claimed it: for messages and records, never opened again.
    pub fn shown(&self) -> &Path {
        &self.shown
    }
}

fn io_err(what: String) -> impl FnOnce(std::io::Error) -> SafetyError {
    move |source| SafetyError::Io { what, source }
}

/// Claims block device `dev` exclusively, or says why it is in use
/// (`SafetyError::InUse`): mounted (itself or a partition), held by another
/// device (dm, md), active swap, or claimed by another program.
pub fn claim(dev: &Path, mounts: &[MountEntry]) -> Result<DeviceClaim, SafetyError> {
    let meta = std::fs::metadata(dev).map_err(io_err(format!("reading {}", dev.display())))?;
    if !meta.file_type().is_block_device() {
        return Err(SafetyError::Io {
            what: dev.display().to_string(),
            source: std::io::Error::other("not a block device"),
        });
    }
    let mut held = lock(&HELD);
    held.retain(|w| w.strong_count() > 0);
    if let Some(h) = held.iter().filter_map(Weak::upgrade).find(|h| h.rdev == meta.rdev()) {
        return Ok(DeviceClaim(h));
    }
    let fd = match rustix::fs::open(dev, OFlags::RDONLY | OFlags::EXCL | OFlags::CLOEXEC, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::BUSY) => {
            return Err(SafetyError::InUse(in_use(meta.rdev(), mounts).unwrap_or_else(|| {
                "another program or the kernel holds it (an exclusive open, O_EXCL, failed: device busy)".into()
            })))
        }
        Err(e) => return Err(io_err(format!("opening {} exclusively", dev.display()))(e.into())),
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| io_err(format!("reading {}", dev.display()))(e.into()))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::BlockDevice || st.st_rdev != meta.rdev() {
        return Err(SafetyError::Io {
            what: dev.display().to_string(),
            source: std::io::Error::other("it changed while fslab opened it"),
        });
    }
    let h = Arc::new(Held {
        fd,
        rdev: st.st_rdev,
        path: dev.to_path_buf(),
    });
    held.push(Arc::downgrade(&h));
    drop(held);
    // Claimed: nothing can mount or claim it now. What the claim does not
    // see is still refused: a mounted partition, a holder, swap.
    if let Some(why) = in_use(st.st_rdev, mounts) {
        return Err(SafetyError::InUse(why));
    }
    Ok(DeviceClaim(h))
}

/// Why the device `rdev` is in use, if it visibly is: mounted (itself or a
/// partition), held by another device (dm, md), or active swap.
fn in_use(rdev: u64, mounts: &[MountEntry]) -> Option<String> {
    let pair = (rustix::fs::major(rdev), rustix::fs::minor(rdev));
    let mut devs = vec![pair];
    let sys = format!("/sys/dev/block/{}:{}", pair.0, pair.1);
    if let Ok(rd) = std::fs::read_dir(&sys) {
        for e in rd.flatten() {
            // partitions appear as subdirectories holding a `partition` file
            if e.path().join("partition").exists() {
                if let Ok(d) = std::fs::read_to_string(e.path().join("dev")) {
                    if let Some((a, b)) = d.trim().split_once(':') {
                        if let (Ok(a), Ok(b)) = (a.parse(), b.parse()) {
                            devs.push((a, b));
                        }
                    }
                }
            }
        }
    }
    if let Some(m) = mounts.iter().find(|m| devs.contains(&m.dev)) {
        return Some(format!("it is mounted on {} ({})", m.mount_point.display(), m.fs_type));
    }
    if std::fs::read_dir(format!("{sys}/holders"))
        .map(|mut d| d.next().is_some())
        .unwrap_or(false)
    {
        return Some("another device (device-mapper, md) holds it".into());
    }
    if let Ok(swaps) = std::fs::read_to_string("/proc/swaps") {
        for line in swaps.lines().skip(1) {
            if let Some(p) = line.split_whitespace().next() {
                if std::fs::metadata(p).map(|m| m.rdev() == rdev).unwrap_or(false) {
                    return Some("it is in use as swap".into());
                }
            }
        }
    }
    None
}

/// Everything found on the claimed device, or why probing failed.
fn signatures(c: &DeviceClaim) -> Result<Vec<Found>, String> {
    let head = c.head().map_err(|e| format!("reading its first blocks failed: {e}"))?;
    probe::signatures(&c.proc_path(), &head)
}

fn data_message(found: Result<Vec<Found>, String>) -> Option<String> {
    match found {
        Err(why) => Some(format!("what it carries could not be probed ({why})")),
        Ok(f) if f.is_empty() => None,
        Ok(f) => Some(format!("its first blocks carry {}", probe::list(&f))),
    }
}

/// Why writing to the claimed device would destroy data, if it would: the
/// signatures blkid, wipefs or fslab's own check found (but those of what
/// fslab itself made on a plan's device in this run), or why probing failed.
/// `--force-overwrite` overrides it.
pub fn data_refusal(c: &DeviceClaim) -> Option<String> {
    let made = lock(&CONSENTED)
        .iter()
        .find(|(r, _)| *r == c.0.rdev)
        .and_then(|(_, m)| m.clone())
        .unwrap_or_default();
    data_message(signatures(c).map(|f| {
        f.into_iter()
            .filter(|f| !f.types.iter().any(|t| made.contains(t)))
            .collect()
    }))
}

/// Both checks at once, for a device not used yet: `Err(InUse)` when it
/// cannot be used at all, `Ok(Some(why))` when writing it would destroy
/// data; with the claim, held across the checks (released when dropped).
pub fn device_refusal(dev: &Path, mounts: &[MountEntry]) -> Result<(DeviceClaim, Option<String>), SafetyError> {
    let c = claim(dev, mounts)?;
    let why = data_refusal(&c);
    Ok((c, why))
}

/// Devices a plan names that passed the checks when it was validated, and
/// what fslab itself made on each since (its signatures are fslab's own);
/// `None`: `--force-overwrite` took the risk.
static CONSENTED: Mutex<Vec<(u64, Option<Vec<String>>)>> = Mutex::new(Vec::new());

/// Records that the claimed plan device passed the checks (`forced`: with
/// `--force-overwrite`), so its cells may format it: by the number of the
/// device claimed, not by what its path names afterwards.
pub fn consent(claimed: &DeviceClaim, forced: bool) {
    let rdev = claimed.rdev();
    let mut c = lock(&CONSENTED);
    c.retain(|(r, _)| *r != rdev);
    c.push((rdev, (!forced).then(Vec::new)));
}

/// Records that fslab made a `ty` filesystem on the plan device numbered
/// `rdev` (the one it held, not whatever a path names by now).
pub fn made(rdev: u64, ty: &str) {
    for (r, made) in lock(&CONSENTED).iter_mut() {
        if let (true, Some(m)) = (*r == rdev, made) {
            m.push(ty.to_string());
        }
    }
}

/// Claims plan device `dev` for a cell and checks it again: cells run long
/// after the plan was validated. Refused when it is in use, when it was not
/// consented to, or (without `--force-overwrite`) when it carries something
/// fslab did not make there in this run.
pub fn claim_consented(dev: &Path, mounts: &[MountEntry]) -> Result<DeviceClaim, SafetyError> {
    let c = claim(dev, mounts)?;
    let allowed = lock(&CONSENTED)
        .iter()
        .find(|(r, _)| *r == c.0.rdev)
        .map(|(_, m)| m.clone())
        .ok_or_else(|| SafetyError::Data("no plan check consented to it".into()))?;
    if allowed.is_some() {
        if let Some(why) = data_refusal(&c) {
            return Err(SafetyError::Data(why));
        }
    }
    Ok(c)
}

/// Checks every block device a validated plan names (claim, in-use check,
/// blkid signatures) and records the consent its cells need: called right
/// after plan validation, before anything runs, so a refusal is a usage
/// error (exit 2) naming the flag. The claim (O_EXCL) is held across the
/// checks and released before the run: each cell claims and checks the
/// device again (target::scratch), holds it for the whole cell through a
/// [`HeldDevice`], and gives every tool that descriptor, never the path.
pub fn check_plan_devices(lab: &LabPlan, force_overwrite: bool) -> Result<(), PlanError> {
    for f in &lab.filesystems {
        let dev = match &f.kind {
            FsKind::Mkfs { device: Some(d), .. } | FsKind::Raw { device: Some(d) } => d,
            _ => continue,
        };
        let verb = match f.kind {
            FsKind::Raw { .. } => "write to",
            _ => "format",
        };
        let refusal = |why: String| {
            format!(
                "refusing to {verb} {} for filesystem '{}': {why}",
                dev.display(),
                f.name
            )
        };
        let claimed = match device_refusal(dev, &super::info::mounts()) {
            Err(SafetyError::Io { what, source }) => {
                return Err(PlanError::new("--allow-device", format!("{what}: {source}")))
            }
            Err(why) => return Err(PlanError::new("--allow-device", refusal(why.to_string()))),
            Ok((_, Some(why))) if !force_overwrite => {
                return Err(PlanError::new(
                    "--force-overwrite",
                    format!("{}; add --force-overwrite if its data may be destroyed", refusal(why)),
                ))
            }
            Ok((c, _)) => c,
        };
        consent(&claimed, force_overwrite);
    }
    Ok(())
}
