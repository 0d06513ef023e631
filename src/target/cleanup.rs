//! `fslab cleanup`: removes work directories and scratch filesystems an
//! fslab killed with SIGKILL left behind, and nothing else: a directory
//! qualifies only when its name is `fslab-<pid>-<n>`, it carries fslab's
//! marker file, and the process that made it (the pid in the marker) no
//! longer runs fslab. A scratch directory's `mnt` is unmounted and loop
//! devices backed by its image are detached before it is removed.

use super::MARKER;
use std::path::{Path, PathBuf};

/// What cleanup found in one place.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// Left behind by a dead fslab: removed (or would be, with --dry-run).
    pub stale: Vec<PathBuf>,
    /// Belongs to a running fslab: kept.
    pub live: Vec<PathBuf>,
}

/// The pid recorded in a work directory's marker, and the host when it
/// names one (markers of older fslab versions do not).
fn marker(dir: &Path) -> Option<(u32, Option<String>)> {
    let text = std::fs::read_to_string(dir.join(MARKER)).ok()?;
    let mut lines = text.lines();
    let pid = lines.next()?.trim().strip_prefix("pid ")?.trim().parse().ok()?;
    let host = lines
        .find_map(|l| l.strip_prefix("host "))
        .map(|h| h.trim().to_string());
    Some((pid, host))
}

/// True when `pid` is a running fslab (so its directory is in use).
fn fslab_running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.trim().starts_with("fslab"))
        .unwrap_or(false)
}

/// Looks for fslab work directories directly under each of `places`.
pub fn scan(places: &[PathBuf]) -> std::io::Result<Found> {
    let mut f = Found::default();
    let this_host = crate::report::HostInfo::read().hostname;
    for place in places {
        for e in std::fs::read_dir(place)? {
            let e = e?;
            let name = e.file_name();
            let name = name.to_string_lossy();
            let Some(rest) = name.strip_prefix("fslab-") else {
                continue;
            };
            let Some((pid, n)) = rest.split_once('-') else { continue };
            if pid.parse::<u32>().is_err() || n.parse::<u32>().is_err() || !e.file_type()?.is_dir() {
                continue;
            }
            let path = e.path();
            match marker(&path) {
                // made on another machine (a shared filesystem): whether its
                // fslab still runs cannot be told from here
                Some((_, Some(h))) if h != this_host => f.live.push(path),
                Some((p, _)) if fslab_running(p) => f.live.push(path),
                Some(_) => f.stale.push(path),
                None => {} // no marker: not ours to touch
            }
        }
    }
    Ok(f)
}

/// Loop devices whose backing file lies in `dir`.
fn loops_backed_in(dir: &Path) -> Vec<PathBuf> {
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
            Path::new(backing).starts_with(dir).then(|| PathBuf::from(dev))
        })
        .collect()
}

/// Removes one stale directory: unmounts its scratch mount, detaches its loop
/// devices, then deletes it (never over a mount that would not go away).
fn remove_one(dir: &Path) -> std::io::Result<()> {
    let dir = dir.canonicalize()?;
    let mnt = dir.join("mnt");
    let mounts = super::info::mounts();
    // Innermost first, should anything be mounted below the scratch mount.
    let mut ours: Vec<_> = mounts.iter().filter(|m| m.mount_point.starts_with(&mnt)).collect();
    ours.sort_by_key(|m| std::cmp::Reverse(m.mount_point.as_os_str().len()));
    for m in ours {
        super::scratch::unmount(&m.mount_point)?;
    }
    for dev in loops_backed_in(&dir) {
        if let Ok(f) = std::fs::File::options().read(true).open(&dev) {
            use std::os::fd::AsRawFd;
            // SAFETY: LOOP_CLR_FD (0x4C01) takes no argument.
            unsafe { libc::ioctl(f.as_raw_fd(), 0x4C01 as _) };
        }
    }
    std::fs::remove_dir_all(&dir)
}

/// Removes the stale directories; returns how many were removed.
pub fn remove(found: &Found) -> std::io::Result<usize> {
    for d in &found.stale {
        remove_one(d).map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", d.display())))?;
    }
    Ok(found.stale.len())
}
