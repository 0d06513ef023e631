//! Removing a directory tree fslab made without ever leaving it. A plain
//! recursive delete follows the tree wherever it leads: into a bind mount
//! someone made inside a stale work directory, and so through every file of
//! the directory mounted there. This walk works on directory descriptors with
//! `*at` calls, never follows a symlink, and refuses to cross a mount
//! boundary (another filesystem, or a bind mount of the same one: the mount
//! id tells them apart where the device number cannot). Before it starts it
//! also refuses a tree that has anything mounted in it, so the common case
//! fails before a single file is gone. The walk is [`crate::sys::tree`],
//! shared with replay's Deltree; this file is its policy for work directories.

use super::info;
use crate::sys::tree::{self, Entry, Trail};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, StatxFlags, CWD};
use rustix::io::Errno;
use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum RemoveError {
    /// Something is mounted in the tree: nothing was removed below it.
    #[error("{path}: a mount fslab did not make ({what}); not removing {top}; unmount it first")]
    Mount { path: PathBuf, what: String, top: PathBuf },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl RemoveError {
    /// The errno of a failed removal (EROFS, ENOENT...), if it was one.
    pub fn errno(&self) -> Option<i32> {
        match self {
            RemoveError::Io { source, .. } => source.raw_os_error(),
            RemoveError::Mount { .. } => None,
        }
    }
}

fn io(path: &Path) -> impl FnOnce(Errno) -> RemoveError + '_ {
    move |e| RemoveError::Io {
        path: path.to_path_buf(),
        source: e.into(),
    }
}

/// What a mount looks like in an error: "ext4 /dev/vda1, bind of /home".
pub fn describe(m: &info::MountEntry) -> String {
    match m.root.as_str() {
        "/" => format!("{} {}", m.fs_type, m.source),
        r => format!("{} {}, bind of {r}", m.fs_type, m.source),
    }
}

/// The filesystem and mount a file lives on.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Where {
    dev: (u32, u32),
    /// None where statx cannot tell (kernels before 5.8).
    mnt_id: Option<u64>,
}

fn where_at(dirfd: BorrowedFd<'_>, name: &CStr, flags: AtFlags) -> Result<(Where, FileType), Errno> {
    let st = rustix::fs::statx(dirfd, name, flags, StatxFlags::TYPE | StatxFlags::MNT_ID)?;
    let mnt_id = (st.stx_mask & StatxFlags::MNT_ID.bits() != 0).then_some(st.stx_mnt_id);
    Ok((
        Where {
            dev: (st.stx_dev_major, st.stx_dev_minor),
            mnt_id,
        },
        FileType::from_raw_mode(st.stx_mode.into()),
    ))
}

fn where_fd(fd: BorrowedFd<'_>) -> Result<Where, Errno> {
    where_at(fd, c"", AtFlags::EMPTY_PATH).map(|(w, _)| w)
}

/// Removes directory `top` and everything in it, refusing (before removing
/// anything, where mountinfo shows it) to cross a mount boundary.
/// A `top` that is gone already is an `Io` error with ENOENT.
pub fn remove_tree(top: &Path) -> Result<(), RemoveError> {
    // The parent resolved, never `top` itself: a symlink in its place is not
    // followed (the open below refuses it).
    let real = match (top.parent(), top.file_name()) {
        (Some(p), Some(n)) => {
            let p = if p.as_os_str().is_empty() { Path::new(".") } else { p };
            p.canonicalize()
                .map_err(|e| RemoveError::Io {
                    path: top.to_path_buf(),
                    source: e,
                })?
                .join(n)
        }
        _ => {
            return Err(RemoveError::Io {
                path: top.to_path_buf(),
                source: std::io::Error::other("not a directory fslab made"),
            })
        }
    };
    if let Some(m) = info::mounts()
        .iter()
        .filter(|m| m.mount_point.starts_with(&real))
        .min_by_key(|m| m.mount_point.as_os_str().len())
    {
        return Err(RemoveError::Mount {
            path: m.mount_point.clone(),
            what: describe(m),
            top: top.to_path_buf(),
        });
    }
    walk_and_remove(top, &real)
}

/// `remove_tree` after its mountinfo check: the walk alone.
fn walk_and_remove(top: &Path, real: &Path) -> Result<(), RemoveError> {
    let (parent, name) = match (real.parent(), real.file_name()) {
        (Some(p), Some(n)) => (p, n),
        _ => {
            return Err(RemoveError::Io {
                path: top.to_path_buf(),
                source: std::io::Error::other("not a directory fslab made"),
            })
        }
    };
    // names from the filesystem hold no NUL
    let name = CString::new(name.as_bytes()).unwrap_or_default();
    let pfd = rustix::fs::openat(
        CWD,
        parent,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(io(parent))?;
    let here = where_fd(pfd.as_fd()).map_err(io(parent))?;
    let mut policy = OneMount { here, parent, top };
    tree::remove(pfd.as_fd(), &name, &mut policy)
}

/// rmtree's policy for the shared walk: everything on the mount `here`
/// (the top's parent's), compared by statx for each entry and for each
/// directory opened, so also a kernel without openat2 never crosses a
/// mount; the marker last; errors that name their path.
struct OneMount<'a> {
    here: Where,
    /// The top's parent, canonical: the walk's trails are relative to it.
    parent: &'a Path,
    /// `remove_tree`'s argument, for messages.
    top: &'a Path,
}

impl OneMount<'_> {
    fn path(&self, at: &Trail<'_>) -> PathBuf {
        self.parent.join(at.path())
    }

    /// The error for a mount found at `at` while walking.
    fn crossing(&self, at: &Trail<'_>) -> RemoveError {
        let path = self.path(at);
        let what = info::mounts()
            .iter()
            .rev()
            .find(|m| m.mount_point == path)
            .map(describe)
            .unwrap_or_else(|| "another filesystem".into());
        RemoveError::Mount {
            path,
            what,
            top: self.top.to_path_buf(),
        }
    }
}

impl tree::Removal for OneMount<'_> {
    type Error = RemoveError;

    /// EXDEV (an open refused at a mount point) and EBUSY (an rmdir of one)
    /// are a mount; anything else is an I/O error at that path.
    fn fail(&mut self, e: Errno, at: &Trail<'_>) -> RemoveError {
        match e {
            Errno::XDEV | Errno::BUSY => self.crossing(at),
            e => io(&self.path(at))(e),
        }
    }

    fn classify(
        &mut self,
        dir: BorrowedFd<'_>,
        name: &CStr,
        _: FileType,
        at: &Trail<'_>,
    ) -> Result<Entry, RemoveError> {
        let (w, ft) = match where_at(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(x) => x,
            Err(Errno::NOENT) => return Ok(Entry::Gone), // removed meanwhile (fslab's own workers)
            Err(e) => return Err(io(&self.path(at))(e)),
        };
        // a mount point, even of a file, is reached as the mounted file
        if w != self.here {
            return Err(self.crossing(at));
        }
        Ok(if ft == FileType::Directory {
            Entry::Dir
        } else {
            Entry::Other
        })
    }

    fn open_dir(&mut self, dir: BorrowedFd<'_>, name: &CStr) -> Result<OwnedFd, Errno> {
        match tree::open_subdir(dir, name) {
            // kernels before 5.6: `entered` compares mounts of what it opened
            Err(Errno::NOSYS) => rustix::fs::openat(dir, name, tree::DIR_OPEN, Mode::empty()),
            r => r,
        }
    }

    /// A mount made, or a directory swapped, since the statx.
    fn entered(&mut self, dir: BorrowedFd<'_>, at: &Trail<'_>) -> Result<(), RemoveError> {
        if where_fd(dir).map_err(|e| io(&self.path(at))(e))? != self.here {
            return Err(self.crossing(at));
        }
        Ok(())
    }

    /// The marker last: a removal that fails half-way leaves a directory
    /// `fslab cleanup` still knows as fslab's.
    fn order_top(&mut self, names: &mut [(CString, FileType)]) {
        names.sort_by_key(|(n, _)| n.to_bytes() == super::MARKER.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_a_tree_and_leaves_what_its_symlinks_point_to() {
        let t = tempfile::tempdir().unwrap();
        let outside = t.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), b"precious").unwrap();
        let top = t.path().join("fslab-1-0");
        std::fs::create_dir_all(top.join("a/b/c")).unwrap();
        std::fs::write(top.join("a/b/c/f"), b"x").unwrap();
        std::fs::write(top.join("g"), b"y").unwrap();
        std::os::unix::fs::symlink(&outside, top.join("a/link")).unwrap();
        std::os::unix::fs::symlink(outside.join("keep"), top.join("flink")).unwrap();
        remove_tree(&top).unwrap();
        assert!(!top.exists());
        assert_eq!(std::fs::read(outside.join("keep")).unwrap(), b"precious");
    }

    /// Unmounts a test's bind mount however the test ends.
    struct Unmount(PathBuf);

    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = rustix::mount::unmount(&self.0, rustix::mount::UnmountFlags::DETACH);
        }
    }

    /// The walk itself (without the mountinfo check before it) stops at a
    /// bind mount of the same filesystem, of a directory or of a file.
    #[test]
    fn the_walk_never_enters_a_bind_mount() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipped: needs root (bind mounts)");
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let decoy = t.path().join("decoy");
        std::fs::create_dir(&decoy).unwrap();
        std::fs::write(decoy.join("keep"), b"precious").unwrap();
        let top = t.path().join("fslab-1-0");
        for (target, src) in [("sub", &decoy), ("f", &decoy.join("keep"))] {
            std::fs::create_dir_all(top.join("a")).unwrap();
            let at = top.join("a").join(target);
            if src.is_dir() {
                std::fs::create_dir(&at).unwrap();
            } else {
                std::fs::write(&at, b"").unwrap();
            }
            rustix::mount::mount_bind(src, &at).unwrap();
            let bind = Unmount(at);
            let real = t.path().canonicalize().unwrap().join("fslab-1-0");
            let e = walk_and_remove(&top, &real);
            drop(bind);
            let e = e.unwrap_err();
            assert!(matches!(e, RemoveError::Mount { .. }), "{target}: {e}");
            assert_eq!(std::fs::read(decoy.join("keep")).unwrap(), b"precious");
        }
        remove_tree(&top).unwrap();
        assert_eq!(std::fs::read(decoy.join("keep")).unwrap(), b"precious");
    }

    #[test]
    fn a_missing_tree_is_enoent() {
        let t = tempfile::tempdir().unwrap();
        let e = remove_tree(&t.path().join("gone")).unwrap_err();
        assert_eq!(e.errno(), Some(libc::ENOENT));
    }
}
