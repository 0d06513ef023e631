//! The one fd-walking tree removal. `target::rmtree` (work directories) and
//! replay's Deltree both use it; what differs between them (how an entry is
//! classified, what a mount means, how errors read) is a [`Removal`] policy.
//!
//! The walk itself holds these for every policy: it works on directory fds
//! with `*at` calls only, never follows a symlink (a symlink is an entry to
//! unlink), opens each directory with `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)` unless the
//! policy opens it itself (so a mount point is EXDEV before anything behind
//! it is touched), reads all of a directory's names before removing any
//! (removing while reading may make readdir skip entries), removes the
//! top's names in the order the policy gives, and is iterative: a deep tree
//! costs one fd per level, not stack.

use rustix::fd::{BorrowedFd, OwnedFd};
use rustix::fs::{openat2, AtFlags, Dir, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::ffi::{CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// A subdirectory's descent: beneath its parent, through no symlink (also
/// not a trailing one), no /proc magic link and no mount point
/// (`RESOLVE_NO_XDEV` also catches bind mounts of the same filesystem,
/// which an st_dev comparison would miss).
pub const TREE_RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS)
    .union(ResolveFlags::NO_XDEV);

/// The flags of a directory opened for the walk.
pub const DIR_OPEN: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Opens subdirectory `name` of `dir` for the walk, refusing a symlink
/// (ELOOP) and a mount point (EXDEV).
pub fn open_subdir(dir: BorrowedFd<'_>, name: &CStr) -> Result<OwnedFd, Errno> {
    openat2(dir, name, DIR_OPEN, Mode::empty(), TREE_RESOLVE)
}

/// What an entry is, as the policy sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A directory: descend, then rmdir it.
    Dir,
    /// Anything else: unlink it.
    Other,
    /// Not known without a stat: unlink it, and descend if that says EISDIR.
    Unknown,
    /// Gone meanwhile: skip it.
    Gone,
}

/// Where the walk is: the names from the top (the `name` passed to
/// [`remove`]) down to the entry at hand.
pub struct Trail<'a> {
    levels: &'a [Level],
    leaf: Option<&'a CStr>,
}

impl Trail<'_> {
    /// The path relative to the directory fd [`remove`] was given.
    pub fn path(&self) -> PathBuf {
        let mut p = PathBuf::new();
        for n in self.levels.iter().map(|l| l.name.as_c_str()).chain(self.leaf) {
            p.push(OsStr::from_bytes(n.to_bytes()));
        }
        p
    }
}

/// What one removal decides that the walk cannot.
pub trait Removal {
    type Error;

    /// The error for `e`, met at `at` (unlinking, opening, reading).
    fn fail(&mut self, e: Errno, at: &Trail<'_>) -> Self::Error;

    /// Entry `name` of directory `dir`, of type `d_type` as readdir told
    /// (`Unknown` where the filesystem does not say): what to do with it, or
    /// an error to stop the removal with (a mount found there).
    fn classify(
        &mut self,
        dir: BorrowedFd<'_>,
        name: &CStr,
        d_type: FileType,
        at: &Trail<'_>,
    ) -> Result<Entry, Self::Error>;

    /// Opens directory `name` of `dir` to descend into it.
    fn open_dir(&mut self, dir: BorrowedFd<'_>, name: &CStr) -> Result<OwnedFd, Errno> {
        open_subdir(dir, name)
    }

    /// A directory just opened (the top one too): an error stops the
    /// removal before anything in it is touched.
    fn entered(&mut self, _dir: BorrowedFd<'_>, _at: &Trail<'_>) -> Result<(), Self::Error> {
        Ok(())
    }

    /// The top directory's entries, to be put in the order of removal.
    fn order_top(&mut self, _names: &mut [(CString, FileType)]) {}
}

/// One open directory of the walk and the names left to remove in it.
pub struct Level {
    dir: Dir,
    name: CString,
    names: std::vec::IntoIter<(CString, FileType)>,
}

impl Level {
    fn read(fd: OwnedFd, name: CString) -> Result<Self, Errno> {
        let mut dir = Dir::new(fd)?;
        let mut names = Vec::new();
        while let Some(e) = dir.read() {
            let e = e?;
            let n = e.file_name();
            if n != c"." && n != c".." {
                names.push((n.to_owned(), e.file_type()));
            }
        }
        Ok(Level {
            dir,
            name,
            names: names.into_iter(),
        })
    }
}

/// Removes directory `name` in `parent` and everything beneath it, as the
/// policy `r` directs. A missing `name` is `r.fail(ENOENT)`; entries that
/// vanish meanwhile are skipped.
pub fn remove<R: Removal>(parent: BorrowedFd<'_>, name: &CStr, r: &mut R) -> Result<(), R::Error> {
    let mut stack: Vec<Level> = Vec::new();
    let top = trail(&stack, Some(name));
    let fd = r.open_dir(parent, name).map_err(|e| r.fail(e, &top))?;
    descend(&mut stack, fd, name, r)?;
    if let Some(l) = stack.last_mut() {
        let mut names: Vec<_> = std::mem::take(&mut l.names).collect();
        r.order_top(&mut names);
        l.names = names.into_iter();
    }
    loop {
        let Some(l) = stack.last_mut() else { return Ok(()) };
        let Some((n, d_type)) = l.names.next() else {
            // all of this directory is gone: remove it from its parent
            let l = stack.pop().expect("a level");
            let at = trail(&stack, Some(&l.name));
            let dir = match stack.last() {
                Some(p) => p.dir.fd().map_err(|e| r.fail(e, &at))?,
                None => parent,
            };
            match rustix::fs::unlinkat(dir, &l.name, AtFlags::REMOVEDIR) {
                Ok(()) => {}
                Err(Errno::NOENT) if !stack.is_empty() => {}
                Err(e) => return Err(r.fail(e, &at)),
            }
            continue;
        };
        let at = trail(&stack, Some(&n));
        let dir = stack[stack.len() - 1].dir.fd().map_err(|e| r.fail(e, &at))?;
        let entry = r.classify(dir, &n, d_type, &at)?;
        if matches!(entry, Entry::Other | Entry::Unknown) {
            // unlink(2) of a directory is EISDIR: a d_type of DT_UNKNOWN
            // costs no stat
            match rustix::fs::unlinkat(dir, &n, AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => continue,
                Err(Errno::ISDIR) if entry == Entry::Unknown => {}
                Err(e) => return Err(r.fail(e, &at)),
            }
        }
        if entry == Entry::Gone {
            continue;
        }
        let sub = match r.open_dir(dir, &n) {
            Ok(s) => s,
            Err(Errno::NOENT) => continue,
            Err(e) => return Err(r.fail(e, &at)),
        };
        descend(&mut stack, sub, &n, r)?;
    }
}

fn trail<'a>(levels: &'a [Level], leaf: Option<&'a CStr>) -> Trail<'a> {
    Trail { levels, leaf }
}

/// Enters directory `name`, open as `fd`: the policy's check, then its names.
fn descend<R: Removal>(stack: &mut Vec<Level>, fd: OwnedFd, name: &CStr, r: &mut R) -> Result<(), R::Error> {
    let at = trail(stack, Some(name));
    r.entered(rustix::fd::AsFd::as_fd(&fd), &at)?;
    let level = Level::read(fd, name.to_owned()).map_err(|e| r.fail(e, &at))?;
    stack.push(level);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fd::AsFd;

    /// A policy that records the order entries are met in, puts `marker`
    /// last at the top, and classifies by d_type alone.
    struct Record {
        seen: Vec<PathBuf>,
    }

    impl Removal for Record {
        type Error = Errno;
        fn fail(&mut self, e: Errno, _: &Trail<'_>) -> Errno {
            e
        }
        fn classify(&mut self, _: BorrowedFd<'_>, _: &CStr, d_type: FileType, at: &Trail<'_>) -> Result<Entry, Errno> {
            self.seen.push(at.path());
            Ok(if d_type == FileType::Directory {
                Entry::Dir
            } else {
                Entry::Unknown
            })
        }
        fn order_top(&mut self, names: &mut [(CString, FileType)]) {
            names.sort_by_key(|(n, _)| n.as_bytes() == b"marker");
        }
    }

    /// The top's entries go in the policy's order, each subtree before the
    /// next entry, so the last entry of the top is the last removed.
    #[test]
    fn the_policys_last_entry_goes_last_and_nothing_is_left() {
        let t = tempfile::tempdir().unwrap();
        let top = t.path().join("top");
        std::fs::create_dir_all(top.join("z/deep/er")).unwrap();
        for f in ["marker", "a", "z/deep/f", "z/deep/er/g"] {
            std::fs::write(top.join(f), b"x").unwrap();
        }
        std::os::unix::fs::symlink(t.path(), top.join("z/up")).unwrap();
        let parent = rustix::fs::open(t.path(), DIR_OPEN, Mode::empty()).unwrap();
        let mut r = Record { seen: Vec::new() };
        remove(parent.as_fd(), c"top", &mut r).unwrap();
        assert!(!top.exists() && t.path().exists(), "the symlink was not followed");
        assert_eq!(r.seen.last().unwrap(), &PathBuf::from("top/marker"), "{:?}", r.seen);
        assert_eq!(r.seen.len(), 8, "{:?}", r.seen);
        assert_eq!(remove(parent.as_fd(), c"top", &mut r), Err(Errno::NOENT));
    }

    /// A symlink in the top's place is refused, not followed.
    #[test]
    fn a_symlink_at_the_top_is_refused() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("real")).unwrap();
        std::fs::write(t.path().join("real/keep"), b"x").unwrap();
        std::os::unix::fs::symlink("real", t.path().join("link")).unwrap();
        let parent = rustix::fs::open(t.path(), DIR_OPEN, Mode::empty()).unwrap();
        let e = remove(parent.as_fd(), c"link", &mut Record { seen: Vec::new() }).unwrap_err();
        assert!([Errno::LOOP, Errno::NOTDIR].contains(&e), "{e:?}");
        assert!(t.path().join("real/keep").exists());
    }
}
