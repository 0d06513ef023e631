//! `fslab cleanup`: removes work directories an fslab killed with SIGKILL
//! left behind, and nothing else: a directory qualifies only when its name is
//! `fslab-<pid>-<n>`, it carries fslab's marker file, and the process that
//! made it (the pid in the marker) no longer runs fslab.

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

/// The pid recorded in a work directory's marker.
fn marker_pid(dir: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(dir.join(MARKER)).ok()?;
    text.trim().strip_prefix("pid ")?.trim().parse().ok()
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
            match marker_pid(&path) {
                Some(p) if fslab_running(p) => f.live.push(path),
                Some(_) => f.stale.push(path),
                None => {} // no marker: not ours to touch
            }
        }
    }
    Ok(f)
}

/// Removes the stale directories; returns how many were removed.
pub fn remove(found: &Found) -> std::io::Result<usize> {
    for d in &found.stale {
        std::fs::remove_dir_all(d)?;
    }
    Ok(found.stale.len())
}
