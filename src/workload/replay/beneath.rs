//! Path resolution that cannot leave a replay client's directory.
//!
//! Load-file paths are checked lexically at parse time
//! ([`crate::plan::loadfile::normalize_path`]: no `..`, no `.`, no NUL), but
//! the tree they walk is a live filesystem where a symlink may have been
//! planted. So every path is resolved relative to a directory fd of the
//! client's directory (its *root*): a parent directory with `openat2(2)`
//! and `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` (no
//! symlink at all, so nothing can point out), and the last component with
//! an *at call on that parent fd: unlinkat, mkdirat, renameat, fstatat,
//! getxattrat do not follow it; an open does with `RESOLVE_BENEATH`, which
//! keeps a symlink's target beneath the parent. Deltree removes a tree
//! through fds, never following a symlink nor crossing a mount point.
//!
//! Parent fds are cached ([`DirCache`]): client.txt's 458k lines use 14
//! directories, and resolving the parent anew for each operation would add
//! an openat2 and a close to most of them. The client clears the cache when
//! a directory may have moved or gone (Rmdir, Deltree, Rename of a
//! directory), so a cached fd always names the directory its path names.

use crate::plan::loadfile::ROOT_DIR;
use crate::sys::{self, tree, tree::Entry};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{openat2, AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::ffi::CStr;

/// Parent directories: beneath the root, through no symlink at all (also
/// not a trailing one) and no /proc magic link.
const DIR_RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// Opens of a file in its resolved parent: a symlink is followed only while
/// it stays beneath that parent.
pub const OPEN_RESOLVE: ResolveFlags = ResolveFlags::BENEATH.union(ResolveFlags::NO_MAGICLINKS);

/// Opens directory `rel` (a normalised relative path, `""` for `root`
/// itself) beneath `root`, as an O_PATH fd for *at calls. Fails (ELOOP,
/// EXDEV) rather than pass through a symlink or leave `root`.
pub fn open_dir_beneath(root: BorrowedFd<'_>, rel: &str) -> Result<OwnedFd, Errno> {
    let rel = if rel.is_empty() { "." } else { rel };
    openat2(
        root,
        rel,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
        DIR_RESOLVE,
    )
}

/// How many parent fds one client keeps open: direct-mapped by directory
/// index, so a load file's first 32 directories never evict each other, and
/// 1024 clients hold at most 32k fds.
const SLOTS: usize = 32;

/// A client's root directory fd and its cache of resolved parent fds.
pub struct DirCache {
    root: OwnedFd,
    slots: [Option<(u32, OwnedFd)>; SLOTS],
    path: String,
}

impl DirCache {
    /// The cache of a client whose directory is `root` (an open directory).
    pub fn new(root: OwnedFd) -> Self {
        DirCache {
            root,
            slots: std::array::from_fn(|_| None),
            path: String::new(),
        }
    }

    /// The client's directory.
    pub fn root(&self) -> BorrowedFd<'_> {
        self.root.as_fd()
    }

    /// Makes directory `d` (an index of `LoadFile::dirs`) available to
    /// [`DirCache::get`], resolving it when it is not cached: `write` writes
    /// its relative path.
    pub fn ensure(&mut self, d: u32, write: impl FnOnce(&mut String)) -> Result<(), Errno> {
        if d == ROOT_DIR {
            return Ok(());
        }
        let i = d as usize % SLOTS;
        if matches!(&self.slots[i], Some((k, _)) if *k == d) {
            return Ok(());
        }
        self.path.clear();
        write(&mut self.path);
        let fd = open_dir_beneath(self.root.as_fd(), &self.path)?;
        self.slots[i] = Some((d, fd));
        Ok(())
    }

    /// Directory `d` after [`DirCache::ensure`] succeeded for it.
    pub fn get(&self, d: u32) -> Option<BorrowedFd<'_>> {
        if d == ROOT_DIR {
            return Some(self.root.as_fd());
        }
        match &self.slots[d as usize % SLOTS] {
            Some((k, fd)) if *k == d => Some(fd.as_fd()),
            _ => None,
        }
    }

    /// [`DirCache::ensure`] and [`DirCache::get`] in one.
    pub fn dir(&mut self, d: u32, write: impl FnOnce(&mut String)) -> Result<BorrowedFd<'_>, Errno> {
        self.ensure(d, write)?;
        self.get(d).ok_or(Errno::BADF)
    }

    /// Whether directories `a` and `b` cannot both be cached at once.
    pub fn collides(&self, a: u32, b: u32) -> bool {
        a != b && a != ROOT_DIR && b != ROOT_DIR && a as usize % SLOTS == b as usize % SLOTS
    }

    /// Resolves a directory without caching it (the second directory of a
    /// rename whose first holds its slot).
    pub fn open_uncached(&mut self, write: impl FnOnce(&mut String)) -> Result<OwnedFd, Errno> {
        self.path.clear();
        write(&mut self.path);
        open_dir_beneath(self.root.as_fd(), &self.path)
    }

    /// Forgets every cached directory: one may have moved or gone.
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
    }
}

/// Deltree's policy for the shared walk ([`crate::sys::tree`]): entries
/// classified by their d_type alone (no stat per file: an unknown type is
/// unlinked, and descended into if that says EISDIR), directories opened
/// with [`tree::TREE_RESOLVE`] (no symlink, no mount point crossed: EXDEV
/// stops the removal before anything behind the mount is touched), errors
/// as the errno.
struct Deltree;

impl tree::Removal for Deltree {
    type Error = Errno;

    fn fail(&mut self, e: Errno, _: &tree::Trail<'_>) -> Errno {
        e
    }

    fn classify(&mut self, _: BorrowedFd<'_>, _: &CStr, d_type: FileType, _: &tree::Trail<'_>) -> Result<Entry, Errno> {
        Ok(if d_type == FileType::Directory {
            Entry::Dir
        } else {
            Entry::Unknown
        })
    }
}

/// Removes `name` in `dir` and everything beneath it, as
/// `std::fs::remove_dir_all` does (a symlink is removed, not followed; a
/// missing `name` is ENOENT, a file ENOTDIR), but through directory fds
/// only and never across a mount point: a mount inside the tree stops the
/// removal with EXDEV before anything behind it is touched.
pub fn remove_tree(dir: BorrowedFd<'_>, name: &CStr) -> Result<(), Errno> {
    let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::Directory => {}
        FileType::Symlink => return rustix::fs::unlinkat(dir, name, AtFlags::empty()),
        _ => return Err(Errno::NOTDIR),
    }
    tree::remove(dir, name, &mut Deltree)
}

/// getxattr of `attr` on `name` in `dir`, not following a final symlink
/// (lgetxattr semantics, relative to a directory fd): the value's size.
/// Without getxattrat (kernels before 6.13, or a seccomp filter that
/// refuses it), the file is opened beneath `dir` without following a
/// symlink and read with fgetxattr.
pub fn lgetxattr_at(dir: BorrowedFd<'_>, name: &CStr, attr: &CStr, buf: &mut [u8]) -> Result<usize, Errno> {
    if sys::getxattrat_works() {
        return sys::getxattrat(dir, name, AtFlags::SYMLINK_NOFOLLOW, attr, buf);
    }
    let fd = match openat2(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
        OPEN_RESOLVE,
    ) {
        // a symlink: no user.* attributes there, as lgetxattr would say
        Err(Errno::LOOP) => return Err(Errno::NODATA),
        r => r?,
    };
    rustix::fs::fgetxattr(&fd, attr, buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;
    use std::path::Path;

    fn root_of(p: &Path) -> OwnedFd {
        rustix::fs::open(p, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()).unwrap()
    }

    /// `rel` resolved beneath a client directory that holds planted
    /// symlinks: the ones that lead out (absolute, `..`, through /proc)
    /// fail, and so does one that stays inside (no symlink is followed).
    #[test]
    fn planted_symlinks_are_not_followed() {
        let t = tempfile::tempdir().unwrap();
        let outside = t.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("decoy"), b"keep").unwrap();
        let c = t.path().join("client");
        std::fs::create_dir_all(c.join("clients/client1/sub")).unwrap();
        symlink(&outside, c.join("clients/abs")).unwrap();
        symlink("../../outside", c.join("clients/rel")).unwrap();
        symlink("client1", c.join("clients/inside")).unwrap();
        symlink("/proc/self/cwd", c.join("clients/magic")).unwrap();
        let root = root_of(&c);
        let r = root.as_fd();
        for bad in [
            "clients/abs",
            "clients/rel",
            "clients/inside",
            "clients/magic",
            "clients/rel/x",
        ] {
            let e = open_dir_beneath(r, bad).unwrap_err();
            assert!([Errno::LOOP, Errno::XDEV].contains(&e), "{bad}: {e:?}");
        }
        assert!(open_dir_beneath(r, "clients/client1/sub").is_ok());
        assert!(open_dir_beneath(r, "").is_ok(), "the root itself");
        // the last component: an unlink removes the link, never the target
        let parent = open_dir_beneath(r, "clients").unwrap();
        rustix::fs::unlinkat(&parent, "abs", AtFlags::empty()).unwrap();
        // an open follows a symlink only while it stays beneath its parent
        let e = openat2(&parent, "rel", OFlags::RDONLY, Mode::empty(), OPEN_RESOLVE).unwrap_err();
        assert!([Errno::LOOP, Errno::XDEV].contains(&e), "{e:?}");
        let e = lgetxattr_at(parent.as_fd(), c"rel", c"user.x", &mut [0u8; 8]).unwrap_err();
        assert!([Errno::NODATA, Errno::OPNOTSUPP, Errno::PERM].contains(&e), "{e:?}");
        assert_eq!(std::fs::read(outside.join("decoy")).unwrap(), b"keep");
    }

    #[test]
    fn the_cache_resolves_once_and_forgets_on_clear() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("a/b")).unwrap();
        let mut cache = DirCache::new(root_of(t.path()));
        cache.ensure(3, |s| s.push_str("a/b")).unwrap();
        // cached: the path is not asked for again
        cache.ensure(3, |_| panic!("resolved twice")).unwrap();
        assert!(cache.get(3).is_some() && cache.get(4).is_none());
        assert!(cache.collides(3, 3 + SLOTS as u32) && !cache.collides(3, 4));
        cache.clear();
        assert!(cache.get(3).is_none());
        assert_eq!(cache.ensure(5, |s| s.push_str("a/missing")), Err(Errno::NOENT));
    }

    /// Deltree removes a tree with files, subdirectories and symlinks,
    /// leaving the symlinks' targets alone.
    #[test]
    fn remove_tree_removes_without_following_symlinks() {
        let t = tempfile::tempdir().unwrap();
        let outside = t.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("decoy"), b"keep").unwrap();
        let c = t.path().join("client");
        std::fs::create_dir_all(c.join("tree/a/b/c")).unwrap();
        std::fs::write(c.join("tree/a/f"), b"x").unwrap();
        std::fs::write(c.join("tree/a/b/c/g"), b"x").unwrap();
        symlink(&outside, c.join("tree/a/out")).unwrap();
        symlink(&outside, c.join("link")).unwrap();
        std::fs::write(c.join("file"), b"x").unwrap();
        let root = root_of(&c);
        remove_tree(root.as_fd(), c"tree").unwrap();
        assert!(!c.join("tree").exists());
        assert_eq!(remove_tree(root.as_fd(), c"tree"), Err(Errno::NOENT));
        assert_eq!(remove_tree(root.as_fd(), c"file"), Err(Errno::NOTDIR));
        remove_tree(root.as_fd(), c"link").unwrap();
        assert!(c.join("file").exists() && !c.join("link").exists());
        assert_eq!(std::fs::read(outside.join("decoy")).unwrap(), b"keep");
    }

    /// A mount inside the tree stops Deltree, and nothing on it is removed.
    /// Needs root (a tmpfs mount); skipped otherwise, failed under
    /// FSLAB_REQUIRE_ALL=1.
    #[test]
    fn remove_tree_does_not_cross_a_mount() {
        if !crate::testing::root_or_skip() {
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let m = t.path().join("tree/sub/mnt");
        std::fs::create_dir_all(&m).unwrap();
        rustix::mount::mount("tmpfs", &m, "tmpfs", rustix::mount::MountFlags::empty(), None).unwrap();
        // always unmounted, also when an assertion fails
        struct Unmount<'a>(&'a Path);
        impl Drop for Unmount<'_> {
            fn drop(&mut self) {
                let _ = rustix::mount::unmount(self.0, rustix::mount::UnmountFlags::DETACH);
            }
        }
        let _u = Unmount(&m);
        std::fs::write(m.join("decoy"), b"keep").unwrap();
        let root = root_of(t.path());
        assert_eq!(remove_tree(root.as_fd(), c"tree"), Err(Errno::XDEV));
        assert_eq!(std::fs::read(m.join("decoy")).unwrap(), b"keep");
        // the mount point itself is refused too
        let sub = open_dir_beneath(root.as_fd(), "tree/sub").unwrap();
        assert_eq!(remove_tree(sub.as_fd(), c"mnt"), Err(Errno::XDEV));
        assert_eq!(std::fs::read(m.join("decoy")).unwrap(), b"keep");
    }
}
