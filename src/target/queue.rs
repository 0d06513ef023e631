//! The block queue under a target (/sys/block/DISK/queue): read into every
//! cell's target info, and set for a lab cell from its plan's
//! `[[filesystem]]` keys (scheduler, read_ahead_kb, nr_requests,
//! wbt_lat_usec, max_sectors_kb, rotational).
//!
//! A `QueueGuard` restores what it changed when dropped: after the cell on
//! every normal path out, and `live` restores it on an abort. Each old
//! value is also recorded in the work directory's marker before anything
//! is changed (`marker::record_queue`), so `fslab cleanup` puts it back
//! after a SIGKILL: a loop device keeps its queue settings across detach
//! and re-attach, and the next user of that /dev/loopN would inherit them. A device that
//! is not fslab's loop device only gets here with the user's consent
//! (`device = ...` needs --allow-device), and never a partition: its queue
//! is its disk's, shared with the other partitions.

use super::{live, refused, TargetError};
use crate::model::QueueInfo;
use crate::plan::QueueSettings;
use std::path::{Path, PathBuf};

/// The queue directory of block device `dev`: (disk name, /sys/.../queue,
/// whether `dev` is a partition). Found by the device number of what `dev`
/// opens (`/dev/sdb`, a symlink, or a held descriptor's /proc path), not by
/// its name.
fn queue_dir(dev: &Path) -> Option<(String, PathBuf, bool)> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let m = std::fs::metadata(dev).ok()?;
    if !m.file_type().is_block_device() {
        return None;
    }
    let sys = PathBuf::from(format!(
        "/sys/dev/block/{}:{}",
        libc::major(m.rdev()),
        libc::minor(m.rdev())
    ))
    .canonicalize()
    .ok()?;
    let partition = sys.join("partition").exists();
    let disk = if partition { sys.parent()?.to_path_buf() } else { sys };
    let queue = disk.join("queue");
    let disk_name = disk.file_name()?.to_str()?.to_string();
    queue.is_dir().then_some((disk_name, queue, partition))
}

fn attr(queue: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(queue.join(name))
        .ok()
        .map(|s| s.trim().to_string())
}

/// The active scheduler of a `scheduler` file's text ("none [mq-deadline] kyber").
fn active(text: &str) -> String {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .unwrap_or(text.trim())
        .to_string()
}

/// The queue under device `dev` as it is now; None for what is not a block
/// device with a queue (tmpfs, overlay, a network filesystem).
pub fn read(dev: &Path) -> Option<QueueInfo> {
    let (disk, q, _) = queue_dir(dev)?;
    let num = |n: &str| attr(&q, n).and_then(|v| v.parse::<u64>().ok());
    Some(QueueInfo {
        disk,
        scheduler: active(&attr(&q, "scheduler")?),
        read_ahead_kb: num("read_ahead_kb"),
        nr_requests: num("nr_requests"),
        wbt_lat_usec: num("wbt_lat_usec"),
        max_sectors_kb: num("max_sectors_kb"),
        rotational: attr(&q, "rotational").map(|v| v == "1"),
    })
}

/// Settings a cell changed, put back when dropped.
#[derive(Debug)]
pub struct QueueGuard {
    /// (attribute file, value before) in the order to write them back
    /// (`QUEUE_ORDER`: the scheduler first, read-ahead last).
    saved: Vec<(PathBuf, String)>,
}

/// Sets `s` on the queue under `dev`; None when `s` sets nothing. A value
/// the kernel refuses fails the cell naming the attribute; what was set
/// before it is put back. Each old value goes into the marker of `workdir`
/// (the cell's work directory) before anything changes, so that `fslab
/// cleanup` can put it back after a SIGKILL.
pub fn apply(dev: &Path, s: &QueueSettings, workdir: &Path) -> Result<Option<QueueGuard>, TargetError> {
    let attrs = s.attrs();
    if attrs.is_empty() {
        return Ok(None);
    }
    // found by what `dev` opens; named, for a held descriptor's /proc
    // path, by the device it is open on
    let shown = std::fs::read_link(dev)
        .ok()
        .filter(|_| dev.starts_with("/proc"))
        .unwrap_or_else(|| dev.to_path_buf());
    let Some((disk, q, partition)) = queue_dir(dev) else {
        return Err(refused(
            "block queue",
            format!("{} has no block queue to set (not a block device?)", shown.display()),
        ));
    };
    if partition {
        return Err(refused(
            "block queue",
            format!(
                "{} is a partition of {disk}: its queue is the disk's, shared with the other partitions; \
                 name the whole disk",
                shown.display()
            ),
        ));
    }
    if let Some(want) = &s.scheduler {
        let offered = attr(&q, "scheduler").unwrap_or_default().replace(['[', ']'], "");
        if !offered.split_whitespace().any(|o| o == want) {
            return Err(refused(
                "scheduler",
                format!("'{want}' is not offered by {disk} (offered: {offered})"),
            ));
        }
    }
    // Every attribute, as setting one may reset another (QUEUE_ORDER); the
    // guard writes back only what differs when it is dropped. Each is in
    // the marker of the scratch's work directory before anything changes.
    let record = |set: bool, path: &Path, v: &str| {
        super::marker::record_queue(workdir, set, path, v).map_err(|e| TargetError::Io {
            what: format!(
                "recording {}'s queue settings in {}",
                disk,
                workdir.join(super::MARKER).display()
            ),
            source: e,
        })
    };
    let mut guard = QueueGuard { saved: Vec::new() };
    for name in crate::plan::lab::QUEUE_ORDER {
        if let Some(v) = attr(&q, name) {
            let v = if name == "scheduler" { active(&v) } else { v };
            let path = q.join(name);
            record(false, &path, &v)?;
            live::add_queue(&path, &v);
            guard.saved.push((path, v));
        }
    }
    for (name, v) in attrs {
        std::fs::write(q.join(name), &v).map_err(|e| TargetError::Io {
            what: format!("setting {disk}'s queue/{name} to {v}"),
            source: e,
        })?;
    }
    // what fslab left: cleanup puts back only what nobody changed since
    for (path, _) in &guard.saved {
        if let Some(now) = current(path) {
            record(true, path, &now)?;
        }
    }
    Ok(Some(guard))
}

/// An attribute's value as recorded: the active scheduler, or the text.
fn current(path: &Path) -> Option<String> {
    let now = std::fs::read_to_string(path).ok()?;
    Some(if path.ends_with("scheduler") {
        active(&now)
    } else {
        now.trim().to_string()
    })
}

/// Puts back the queue attributes a dead fslab's marker records (`fslab
/// cleanup`), each only while it still holds the value that fslab left (or,
/// killed while setting them, any value but the old one): a setting someone
/// made since is theirs. What each attribute will get is decided before any
/// is written, as writing one may reset another; they are written in
/// `QUEUE_ORDER`, as the guard does. Returns what was put back and what was
/// left, one line each.
pub fn restore_recorded(records: &[super::marker::QueueRecord]) -> (Vec<String>, Vec<String>) {
    let (mut done, mut left) = (Vec::new(), Vec::new());
    let mut todo = Vec::new();
    for r in records {
        // the path as recorded: no symlink on the way (sysfs has none there)
        if r.attr.canonicalize().ok().as_deref() != Some(r.attr.as_path()) {
            left.push(format!("{}: no longer there", r.attr.display()));
            continue;
        }
        let Some(now) = current(&r.attr) else { continue };
        match &r.set {
            _ if now == r.old => todo.push(r),
            Some(set) if *set != now => left.push(format!(
                "{}: left at {now} (fslab set {set}, someone changed it since; it was {} before)",
                r.attr.display(),
                r.old
            )),
            _ => todo.push(r),
        }
    }
    for name in crate::plan::lab::QUEUE_ORDER {
        for r in todo.iter().filter(|r| r.attr.file_name().is_some_and(|f| f == name)) {
            // as it was already, or again (put back by an attribute before it)
            if current(&r.attr).as_ref() == Some(&r.old) {
                continue;
            }
            match std::fs::write(&r.attr, &r.old) {
                Ok(()) => done.push(format!("{} to {}", r.attr.display(), r.old)),
                Err(e) => left.push(format!("{}: could not put back {}: {e}", r.attr.display(), r.old)),
            }
        }
    }
    (done, left)
}

impl Drop for QueueGuard {
    fn drop(&mut self) {
        for (path, old) in &self.saved {
            let now = std::fs::read_to_string(path).unwrap_or_default();
            let now = if path.ends_with("scheduler") {
                active(&now)
            } else {
                now.trim().to_string()
            };
            if now != *old {
                if let Err(e) = std::fs::write(path, old) {
                    eprintln!("fslab: warning: could not restore {} to {old}: {e}", path.display());
                }
            }
            live::remove_queue(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_active_scheduler_is_the_bracketed_one() {
        assert_eq!(active("none [mq-deadline] kyber bfq"), "mq-deadline");
        assert_eq!(active("[none] mq-deadline"), "none");
        assert_eq!(active("none"), "none", "a queue with one choice shows it bare");
    }

    #[test]
    fn what_has_no_queue_reads_as_none() {
        assert_eq!(read(Path::new("/dev/null")), None);
        assert_eq!(read(Path::new("/nonexistent")), None);
    }
}
