//! `fslab cleanup`: removes work directories and scratch filesystems an
//! fslab killed with SIGKILL left behind, and nothing else. A directory
//! qualifies only when its name is `fslab-<pid>-<n>`, it carries fslab's
//! marker file, and the marker's lock is free: the fslab that made it holds
//! that lock for the directory's life, whatever its pid or name (see
//! `workdir`). Markers of fslab versions that took no lock also need their
//! pid to run no fslab. Cleanup holds the lock while it removes a directory,
//! so two cleanups never race on one.
//!
//! Removal unmounts only the mounts the marker records, detaches only the
//! loop device over the directory's own image, and never crosses a mount
//! boundary: anything else mounted inside stops it, with the directory intact.

use super::marker::{self, Marker};
use super::rmtree::{self, RemoveError};
use super::MARKER;
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FlockOperation, CWD};
use rustix::io::Errno;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum CleanupError {
    /// A place to look in that cannot be read: bad usage, exit code 2.
    #[error("'{path}': {source}")]
    Place {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("'{0}' is not a directory (give the directory a killed run's --target or --scratch-dir named)")]
    NotADirectory(PathBuf),
}

/// A directory left by a dead fslab, locked by this cleanup until dropped.
#[derive(Debug)]
pub struct Stale {
    pub path: PathBuf,
    marker: Marker,
    /// Held (when the filesystem allows locks) while the directory goes.
    _lock: OwnedFd,
}

/// What cleanup found in one place.
#[derive(Debug, Default)]
pub struct Found {
    /// Left behind by a dead fslab: removed (or would be, with --dry-run).
    pub stale: Vec<Stale>,
    /// In use or not ours to judge: kept, with why.
    pub live: Vec<(PathBuf, String)>,
}

/// True when `pid` is a running fslab: the check of markers that hold no lock.
fn fslab_running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.trim().starts_with("fslab"))
        .unwrap_or(false)
}

enum Verdict {
    /// Not fslab's (no marker, or one being written): not mentioned.
    Skip,
    Live(String),
    Stale(Marker, OwnedFd),
}

/// Tries the lock of the marker at `path`, open as `fd`: Ok(true) taken,
/// Ok(false) held by a live fslab, Err when this filesystem cannot lock. The
/// descriptor returned is the one that holds the lock.
fn try_lock(path: &Path, fd: OwnedFd) -> (OwnedFd, Result<bool, Errno>) {
    match marker::lock_marker(path, fd, FlockOperation::NonBlockingLockExclusive) {
        (fd, Ok(())) => (fd, Ok(true)),
        (fd, Err(Errno::WOULDBLOCK)) => (fd, Ok(false)),
        (fd, Err(e)) => (fd, Err(e)),
    }
}

/// Whether the fslab that made `dir` is gone.
fn judge(dir: &Path, this_host: &str) -> Verdict {
    let mpath = dir.join(MARKER);
    let fd = match marker::open_marker(&mpath) {
        Ok(fd) => fd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Verdict::Skip,
        // a symlink or FIFO in place of a marker: not fslab's
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) || e.kind() == std::io::ErrorKind::InvalidData => {
            return Verdict::Skip
        }
        Err(e) => return Verdict::Live(format!("cannot read its marker: {e}")),
    };
    let (fd, locked) = try_lock(&mpath, fd);
    if locked == Ok(false) {
        return Verdict::Live("its fslab is still running: it holds the marker's lock".into());
    }
    // Read under the lock: fslab writes its marker only while holding it.
    let Some(marker) = marker::read_fd(&fd).ok().and_then(|t| marker::parse_marker(&t)) else {
        return Verdict::Skip;
    };
    if marker.pid.is_none() {
        return Verdict::Skip;
    }
    if let Some(h) = marker.host.as_deref().filter(|h| *h != this_host) {
        // a shared filesystem: neither lock nor pid can be told from here
        return Verdict::Live(format!("made on host {h}, where its fslab may still run"));
    }
    // Its fslab removed it meanwhile (the marker went, or was replaced).
    let same = |a: rustix::fs::Stat, b: rustix::fs::Stat| (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino);
    match (
        rustix::fs::statat(CWD, &mpath, AtFlags::SYMLINK_NOFOLLOW),
        rustix::fs::fstat(&fd),
    ) {
        (Ok(a), Ok(b)) if same(a, b) => {}
        _ => return Verdict::Skip,
    }
    if let Some(why) = live_rank(dir, this_host) {
        return Verdict::Live(why);
    }
    let pid = marker.pid.unwrap_or(0);
    match locked {
        Ok(true) if marker.locked => Verdict::Stale(marker, fd),
        // a marker its fslab held locked, whose lock cannot be tested here
        // (read-only view, NFS without a writable descriptor): the pid may
        // be another namespace's, so it proves nothing
        Err(_) if marker.locked => Verdict::Live("its lock cannot be tested from here".into()),
        // an older fslab, or a filesystem without locks: the pid must agree
        _ if fslab_running(pid) => Verdict::Live(format!("its marker holds no lock and pid {pid} is a running fslab")),
        _ => Verdict::Stale(marker, fd),
    }
}

/// Why a distributed run's directory is still in use by one of its ranks.
fn live_rank(dir: &Path, this_host: &str) -> Option<String> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let name = e.file_name();
        if !name.to_string_lossy().starts_with("rank") || !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let rpath = e.path().join(MARKER);
        let Ok(fd) = marker::open_marker(&rpath) else {
            continue;
        };
        let (fd, locked) = try_lock(&rpath, fd);
        if locked == Ok(false) {
            return Some(format!("{} of its run still works in it", name.to_string_lossy()));
        }
        let host = marker::read_fd(&fd)
            .ok()
            .and_then(|t| marker::parse_marker(&t))
            .and_then(|m| m.host);
        if let Some(h) = host.filter(|h| h != this_host) {
            return Some(format!(
                "{} of its run is on host {h}, where it may still run",
                name.to_string_lossy()
            ));
        }
    }
    None
}

/// Looks for fslab work directories directly under each of `places`.
pub fn scan(places: &[PathBuf]) -> Result<Found, CleanupError> {
    let mut f = Found::default();
    let this_host = crate::host_facts::hostname();
    for place in places {
        let place_err = |e| CleanupError::Place {
            path: place.clone(),
            source: e,
        };
        let meta = std::fs::metadata(place).map_err(place_err)?;
        if !meta.is_dir() {
            return Err(CleanupError::NotADirectory(place.clone()));
        }
        for e in std::fs::read_dir(place).map_err(place_err)? {
            let e = e.map_err(place_err)?;
            let name = e.file_name();
            let name = name.to_string_lossy();
            let Some(rest) = name.strip_prefix("fslab-") else {
                continue;
            };
            let Some((pid, n)) = rest.split_once('-') else { continue };
            // a symlink named like one is not followed
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if pid.parse::<u32>().is_err() || n.parse::<u32>().is_err() || !is_dir {
                continue;
            }
            let path = e.path();
            match judge(&path, &this_host) {
                Verdict::Skip => {}
                Verdict::Live(why) => f.live.push((path, why)),
                Verdict::Stale(marker, fd) => f.stale.push(Stale {
                    path,
                    marker,
                    _lock: fd,
                }),
            }
        }
    }
    Ok(f)
}

/// Loop devices over `image` (a stale scratch directory's own `fs.img`).
fn loops_backed_by(image: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir("/sys/block") else {
        return vec![];
    };
    rd.flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let dev = format!("/dev/{name}");
            let (backing, _) = super::info::loop_backing(&dev);
            let backing = backing?;
            let backing = backing.trim_end_matches(" (deleted)");
            (Path::new(backing) == image).then(|| PathBuf::from(dev))
        })
        .collect()
}

/// Removes one stale directory: its recorded mounts, its image's loop
/// device, then the tree. Anything else mounted in it: refused, untouched.
fn remove_one(s: &Stale) -> Result<(), RemoveError> {
    let io = |e| RemoveError::Io {
        path: s.path.clone(),
        source: e,
    };
    let real = s.path.canonicalize().map_err(io)?;
    let mut inside: Vec<_> = super::info::mounts()
        .into_iter()
        .filter(|m| m.mount_point.starts_with(&real))
        .collect();
    // every mount must be one fslab recorded, or nothing is touched
    if let Some(m) = inside
        .iter()
        .find(|m| !s.marker.mounts.iter().any(|r| marker::matches(r, &real, m)))
    {
        return Err(RemoveError::Mount {
            path: m.mount_point.clone(),
            what: rmtree::describe(m),
            top: s.path.clone(),
        });
    }
    // innermost (and on one mount point, topmost) first
    inside.reverse();
    inside.sort_by_key(|m| std::cmp::Reverse(m.mount_point.as_os_str().len()));
    for m in &inside {
        super::scratch::unmount(&m.mount_point).map_err(|e| RemoveError::Io {
            path: m.mount_point.clone(),
            source: e,
        })?;
    }
    for dev in loops_backed_by(&real.join("fs.img")) {
        if let Ok(f) = std::fs::File::options().read(true).open(&dev) {
            use std::os::fd::AsRawFd;
            // SAFETY: LOOP_CLR_FD (0x4C01) takes no argument.
            unsafe { libc::ioctl(f.as_raw_fd(), 0x4C01 as _) };
        }
    }
    restore_queue(s);
    rmtree::remove_tree(&s.path)
}

/// Puts back the block-queue settings the marker records (`queue::
/// restore_recorded`), saying each. Only from a marker this user wrote and
/// no one else can write: a planted one in a shared scratch directory makes
/// cleanup write nothing to sysfs.
fn restore_queue(s: &Stale) {
    if s.marker.queue.is_empty() {
        return;
    }
    let mine = rustix::fs::fstat(&s._lock)
        .is_ok_and(|st| st.st_uid == rustix::process::geteuid().as_raw() && st.st_mode & 0o022 == 0);
    if !mine {
        eprintln!(
            "fslab: warning: {}: its marker records queue settings but is not this user's own: not put back",
            s.path.display()
        );
        return;
    }
    let (done, left) = super::queue::restore_recorded(&s.marker.queue);
    for d in done {
        println!("put back {d}");
    }
    for l in left {
        eprintln!("fslab: warning: {l}");
    }
}

/// Removes the stale directories; for each, whether it went (a refusal
/// leaves that directory as it was and goes on with the others).
pub fn remove(found: Found) -> Vec<(PathBuf, Result<(), RemoveError>)> {
    found
        .stale
        .into_iter()
        .map(|s| {
            let r = remove_one(&s);
            (s.path, r)
        })
        .collect()
}
