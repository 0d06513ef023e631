//! fslab's work directories and what tells them apart from anything else:
//! the marker file `.fslab-workdir` in each, written by the fslab that made
//! the directory, and an `flock` on it that this fslab holds for as long as
//! the directory exists. The kernel drops the lock when the process ends,
//! however it ends (SIGKILL too), so `fslab cleanup` tells a live run from a
//! dead one by trying the lock: no pid, no command name (a pid means nothing
//! across PID namespaces, and fslab may run under another name).
//!
//! The marker, line by line:
//! - `pid <pid>` (`rank <r>` in a rank's directory of a distributed run);
//! - `host <hostname>`: on a shared filesystem a lock or pid means something
//!   only on the host that took it;
//! - `lock flock`: this marker's fslab held the lock (older versions did not,
//!   and a filesystem may refuse locks: then only the pid can tell);
//! - `mount <name> <fstype> <source>`, written before fslab mounts anything
//!   at `<dir>/<name>` (and again with what mountinfo shows, once mounted):
//!   the only mounts fslab ever detaches. Fields use mountinfo's escapes.
//!
//! - `queue <attr> <old>`, written before fslab changes a block-queue
//!   attribute (`/sys/devices/.../queue/<attr>`), and `queue-set <attr>
//!   <new>` once the plan's settings are in place: `fslab cleanup` puts back
//!   what a killed fslab changed (a loop device keeps its queue settings
//!   across detach and re-attach, so the next user would inherit them).
//!
//! The marker is created with O_EXCL and locked before anything is written
//! to it, so a cleanup that gets the lock on a marker without a `pid` line
//! has found one being made, and leaves it.
//!
//! A guard removes its directory only while the marker there is still the
//! one this process holds, never across a mount (`rmtree`), and says what it
//! left when the directory vanished (the target was unmounted) or could not
//! be removed (remounted read-only).

use super::marker::{escape, lock_marker};
use super::{live, refused, TargetError, MARKER};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags, CWD};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The locked marker of every work directory this process made and has not
/// removed yet. Dropping an entry closes the descriptor: the lock goes.
static LOCKS: Mutex<Vec<(PathBuf, OwnedFd)>> = Mutex::new(Vec::new());

fn locks() -> std::sync::MutexGuard<'static, Vec<(PathBuf, OwnedFd)>> {
    LOCKS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Creates `fslab-<pid>-<n>` under `parent`, with the locked marker inside.
pub fn make_workdir(parent: &Path) -> Result<PathBuf, TargetError> {
    let pid = std::process::id();
    // made and recorded (or not made) as far as an abort is concerned
    let _serial = crate::interrupt::serial();
    for n in 0..1000 {
        let d = parent.join(format!("fslab-{pid}-{n}"));
        match std::fs::create_dir(&d) {
            Ok(()) => {
                live::add_dir(&d);
                if let Err(e) = create_marker(&d, &format!("pid {pid}")) {
                    // just made and empty but for the marker: nobody else's
                    let _ = std::fs::remove_file(d.join(MARKER));
                    let _ = std::fs::remove_dir(&d);
                    live::remove_dir(&d);
                    return Err(super::io_err(format!("writing {}", d.join(MARKER).display()))(e));
                }
                return Ok(d);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(refused(
                    "--target",
                    format!("cannot create a work directory in '{}': {e}", parent.display()),
                ))
            }
        }
    }
    Err(refused(
        "--target",
        format!("no free work directory name in '{}'", parent.display()),
    ))
}

/// Creates a distributed run's `rank<R>` directory, with its locked marker.
pub fn make_rank_dir(d: &Path, rank: usize) -> std::io::Result<()> {
    std::fs::create_dir(d)?;
    create_marker(d, &format!("rank {rank}"))
}

/// Creates, locks, then writes the marker of the new directory `d`; keeps it
/// locked until `d` is removed. The descriptor kept is read-only (a file
/// open for writing would keep the target from being remounted read-only)
/// and close-on-exec (mkfs or mount must not inherit the lock).
fn create_marker(d: &Path, first: &str) -> std::io::Result<()> {
    let path = d.join(MARKER);
    let fd = rustix::fs::openat(
        CWD,
        &path,
        OFlags::RDONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    )?;
    // A filesystem without locks (rare: fslab still runs there): the marker
    // says so, and cleanup falls back on the pid.
    let (fd, locked) = lock_marker(&path, fd, FlockOperation::LockExclusive);
    let lock = if locked.is_ok() { "lock flock\n" } else { "" };
    let host = crate::host_facts::hostname();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)?;
    f.write_all(format!("{first}\nhost {}\n{lock}", escape(&host)).as_bytes())?;
    locks().push((d.to_path_buf(), fd));
    Ok(())
}

/// Whether `d` is still the directory this process made.
pub enum Ownership {
    Ours,
    /// Nothing at `d` any more.
    Vanished,
    /// Something is at `d`, but not with the marker this process holds.
    Replaced,
}

pub fn ownership(d: &Path) -> Ownership {
    if std::fs::symlink_metadata(d).is_err() {
        return Ownership::Vanished;
    }
    let marker = rustix::fs::statat(CWD, d.join(MARKER), AtFlags::SYMLINK_NOFOLLOW);
    let held = locks()
        .iter()
        .find(|(p, _)| p == d)
        .and_then(|(_, fd)| rustix::fs::fstat(fd.as_fd()).ok());
    match (marker, held) {
        (Ok(m), Some(h)) if (m.st_dev, m.st_ino) == (h.st_dev, h.st_ino) => Ownership::Ours,
        // every directory fslab makes registers its marker's lock: a marker
        // without one is not this process's to remove
        _ => Ownership::Replaced,
    }
}

/// Lets go of `d`'s lock: it is removed, or left for `fslab cleanup`.
pub fn release(d: &Path) {
    locks().retain(|(p, _)| p != d);
}

/// What a guard could not remove, said once as a warning.
#[derive(Debug)]
pub(super) struct Leftover {
    /// The directory is gone (nothing is left): not removed by fslab.
    pub vanished: bool,
    why: String,
}

impl std::fmt::Display for Leftover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.why)
    }
}

/// Removes `d` if it is still the directory fslab made and marked (never
/// anything else, never across a mount); says what is left otherwise.
pub(super) fn remove_work_dir(d: &Path) -> Option<Leftover> {
    let vanished = || Leftover {
        vanished: true,
        why: format!(
            "the work directory {} vanished during the run (was the target unmounted?)",
            d.display()
        ),
    };
    // the place `fslab cleanup` looks in is the directory's parent
    let left = |why: String| Leftover {
        vanished: false,
        why: format!(
            "{why}; left behind, `fslab cleanup {}` removes it later",
            d.parent().unwrap_or(Path::new(".")).display()
        ),
    };
    let r = match ownership(d) {
        Ownership::Ours => match super::rmtree::remove_tree(d) {
            Ok(()) => None,
            Err(e) if e.errno() == Some(libc::ENOENT) => Some(vanished()),
            Err(e @ super::rmtree::RemoveError::Mount { .. }) => Some(left(e.to_string())),
            Err(e) => Some(left(format!("could not remove {}: {e}", d.display()))),
        },
        Ownership::Vanished => Some(vanished()),
        Ownership::Replaced => Some(Leftover {
            vanished: false,
            why: format!(
                "{} no longer carries the marker this fslab wrote: not removing it",
                d.display()
            ),
        }),
    };
    live::remove_dir(d);
    release(d);
    // a second signal removed it at once: fslab's own doing
    r.filter(|_| !live::aborting())
}

/// Removes work directory `d` (see `remove_work_dir`), warning about what is left.
pub(crate) fn remove_marked(d: &Path) {
    if let Some(w) = remove_work_dir(d) {
        eprintln!("fslab: warning: {w}");
    }
}

#[cfg(test)]
mod tests {
    use super::super::marker::*;
    use super::*;

    #[test]
    fn markers_parse_and_keep_mounts_inside() {
        let m = parse_marker(
            "pid 1\nhost node\\0401\nlock flock\nmount mnt ext4 /dev/loop3\nmount ../x tmpfs t\nmount /abs tmpfs t\n",
        )
        .unwrap();
        assert_eq!(m.pid, Some(1));
        assert_eq!(m.host.as_deref(), Some("node 1"));
        assert!(m.locked);
        assert_eq!(
            m.mounts,
            [Recorded {
                name: "mnt".into(),
                fs_type: "ext4".into(),
                source: "/dev/loop3".into()
            }]
        );
        // older fslab versions: no lock line
        let old = parse_marker("pid 42\nhost h\n").unwrap();
        assert!(!old.locked && old.mounts.is_empty());
        assert!(parse_marker("").is_none(), "a marker being written");
        assert!(parse_marker("hello\n").is_none());
        assert_eq!(parse_marker("rank\n").unwrap().pid, None);
        assert_eq!(escape("a b\\c"), "a\\040b\\134c");
        // queue records: only /sys/devices/.../queue/<a plan attribute>, short words
        let q = parse_marker(
            "pid 1\nqueue /sys/devices/virtual/block/loop3/queue/scheduler mq-deadline\n\
             queue /sys/devices/virtual/block/loop3/queue/read_ahead_kb 128\n\
             queue /etc/passwd x\nqueue /sys/devices/../../etc/queue/scheduler none\n\
             queue /sys/devices/x/queue/iostats 0\nqueue /sys/devices/x/queue/nr_requests 1;rm\n\
             queue-set /sys/devices/virtual/block/loop3/queue/scheduler none\n",
        )
        .unwrap();
        assert_eq!(
            q.queue,
            [
                QueueRecord {
                    attr: "/sys/devices/virtual/block/loop3/queue/scheduler".into(),
                    old: "mq-deadline".into(),
                    set: Some("none".into())
                },
                QueueRecord {
                    attr: "/sys/devices/virtual/block/loop3/queue/read_ahead_kb".into(),
                    old: "128".into(),
                    set: None
                }
            ]
        );
        assert_eq!(unescape(&escape("a b\\c\nd")), "a b\\c\nd");
    }

    #[test]
    fn the_marker_is_locked_while_the_directory_lives() {
        let t = tempfile::tempdir().unwrap();
        let d = make_workdir(t.path()).unwrap();
        let text = std::fs::read_to_string(d.join(MARKER)).unwrap();
        let m = parse_marker(&text).unwrap();
        assert_eq!(m.pid, Some(std::process::id()));
        assert!(m.locked);
        // another open file description cannot take it
        let other = open_marker(&d.join(MARKER)).unwrap();
        assert_eq!(
            rustix::fs::flock(&other, FlockOperation::NonBlockingLockExclusive),
            Err(rustix::io::Errno::WOULDBLOCK)
        );
        assert!(matches!(ownership(&d), Ownership::Ours));
        release(&d);
        rustix::fs::flock(&other, FlockOperation::NonBlockingLockExclusive).unwrap();
        live::remove_dir(&d);
    }
}
