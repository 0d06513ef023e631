//! Small caches fslab keeps between runs (the KVM probe's verdict,
//! `vm::accel`; the calibration card, `app::calibration`), kept
//! where no one else can plant an entry or a symlink for fslab to read or
//! write through: only in a directory owned by the running user and
//! writable by no one else, reached without following a symlink; an entry
//! is read only when it is a regular file of this user's that no one else
//! may write, and written to an `O_EXCL | O_NOFOLLOW` temporary renamed
//! over it. A cache only saves time: every failure here is "no entry".

use rustix::fs::{fstat, mkdirat, openat, renameat, unlinkat, AtFlags, FileType, Mode, OFlags, CWD};
use rustix::io::Errno;
use rustix::process::geteuid;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

/// `path` (absolute) opened as a directory of this user's alone: each
/// component opened without following a symlink, the last one owned by the
/// user fslab runs as and writable by no one else (under `sudo -E` a
/// variable may name another user's directory, who could otherwise plant
/// an entry or a symlink for root to write through). A missing component
/// is made (mode 0700) only inside a directory that passes the same test.
pub fn open_private_dir(path: &Path) -> Option<OwnedFd> {
    if !path.is_absolute() {
        return None;
    }
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut fd = openat(CWD, "/", flags, Mode::empty()).ok()?;
    for c in path.components() {
        let name = match c {
            Component::RootDir => continue,
            Component::Normal(n) => n,
            _ => return None,
        };
        fd = match openat(&fd, name, flags, Mode::empty()) {
            Ok(next) => next,
            Err(Errno::NOENT) if private(&fd) => {
                match mkdirat(&fd, name, Mode::from_raw_mode(0o700)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(_) => return None,
                }
                openat(&fd, name, flags, Mode::empty()).ok()?
            }
            Err(_) => return None,
        };
    }
    private(&fd).then_some(fd)
}

/// Owned by the user fslab runs as, and no one else may write to it.
fn private(fd: &OwnedFd) -> bool {
    fstat(fd).is_ok_and(|st| st.st_uid == geteuid().as_raw() && st.st_mode & 0o022 == 0)
}

/// An entry's text: a regular file (never through a symlink) owned by this
/// user, writable by no one else, at most `max` bytes.
pub fn read_cached(dir: &OwnedFd, name: &str, max: u64) -> Option<String> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = openat(dir, name, flags, Mode::empty()).ok()?;
    let st = fstat(&fd).ok()?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
        || !private(&fd)
        || st.st_size < 0
        || st.st_size as u64 > max
    {
        return None;
    }
    let mut text = String::new();
    std::io::Read::take(File::from(fd), max)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// Writes an entry as fslab writes its results: a new temporary file
/// (O_EXCL, O_NOFOLLOW) in the cache directory, synced, renamed over the
/// entry (a planted file or symlink is replaced, never written through).
/// Errors are ignored: the cache only saves time.
pub fn write_cached(dir: &OwnedFd, name: &str, text: &str) {
    let tmp = format!("{name}.{}.tmp", std::process::id());
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mode = Mode::from_raw_mode(0o644);
    // a temporary file of a killed run with this pid (the directory is this user's alone)
    let fd = match openat(dir, &tmp, flags, mode) {
        Err(Errno::EXIST) => {
            let _ = unlinkat(dir, &tmp, AtFlags::empty());
            openat(dir, &tmp, flags, mode)
        }
        r => r,
    };
    let Ok(fd) = fd else { return };
    let mut f = File::from(fd);
    let ok = f.write_all(text.as_bytes()).and_then(|()| f.sync_all()).is_ok();
    drop(f);
    if !ok || renameat(dir, &tmp, dir, name).is_err() {
        let _ = unlinkat(dir, &tmp, AtFlags::empty());
    }
}

/// Removes the entries of `dir` whose names `stale` picks (entries of
/// another boot): never what is not a regular file or a symlink.
pub fn prune(dir: &OwnedFd, stale: impl Fn(&str) -> bool) {
    let Ok(d) = openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return;
    };
    let Ok(mut entries) = rustix::fs::Dir::new(d) else {
        return;
    };
    let mut gone = Vec::new();
    while let Some(Ok(e)) = entries.read() {
        let keep_type = matches!(e.file_type(), FileType::RegularFile | FileType::Symlink);
        if let Ok(name) = e.file_name().to_str() {
            if keep_type && stale(name) {
                gone.push(name.to_string());
            }
        }
    }
    for name in gone {
        let _ = unlinkat(dir, name.as_str(), AtFlags::empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{chown, symlink, PermissionsExt};

    #[test]
    fn the_cache_is_used_only_in_a_private_directory() {
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let c = d.path().join("a/fslab");
        let fd = open_private_dir(&c).expect("made in a private parent");
        write_cached(&fd, "kvm-probe-1", "tcg\nwhy\n");
        assert_eq!(read_cached(&fd, "kvm-probe-1", 4096).unwrap(), "tcg\nwhy\n");
        assert!(read_cached(&fd, "kvm-probe-1", 4).is_none(), "longer than asked");
        assert_eq!(std::fs::read_dir(&c).unwrap().count(), 1, "no temporary file is left");
        // an entry others may write is not read
        let entry = c.join("kvm-probe-1");
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o664)).unwrap();
        assert!(read_cached(&fd, "kvm-probe-1", 4096).is_none());
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o644)).unwrap();
        // writable by others, or reached through a symlink: no cache
        std::fs::set_permissions(&c, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(open_private_dir(&c).is_none());
        std::fs::set_permissions(&c, std::fs::Permissions::from_mode(0o700)).unwrap();
        symlink(d.path().join("a"), d.path().join("link")).unwrap();
        assert!(open_private_dir(&d.path().join("link/fslab")).is_none());
        assert!(open_private_dir(Path::new("relative/fslab")).is_none());
        // an entry that is a symlink is neither read nor written through
        let victim = d.path().join("victim");
        std::fs::write(&victim, "kvm\nplanted\n").unwrap();
        symlink(&victim, c.join("kvm-probe-2")).unwrap();
        assert!(read_cached(&fd, "kvm-probe-2", 4096).is_none());
        write_cached(&fd, "kvm-probe-2", "tcg\nmine\n");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "kvm\nplanted\n");
        assert_eq!(read_cached(&fd, "kvm-probe-2", 4096).unwrap(), "tcg\nmine\n");
        // prune removes the entries picked, and no directory
        std::fs::create_dir(c.join("kvm-probe-dir")).unwrap();
        prune(&fd, |n| n.starts_with("kvm-probe-"));
        let mut left: Vec<String> = std::fs::read_dir(&c)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["kvm-probe-dir"]);
        if geteuid().is_root() {
            // another user's entry, or directory (sudo -E's HOME): neither read nor made into
            write_cached(&fd, "kvm-probe-3", "tcg\n");
            chown(c.join("kvm-probe-3"), Some(65534), Some(65534)).unwrap();
            assert!(read_cached(&fd, "kvm-probe-3", 4096).is_none());
            let other = d.path().join("other");
            std::fs::create_dir(&other).unwrap();
            chown(&other, Some(65534), Some(65534)).unwrap();
            assert!(open_private_dir(&other).is_none());
            assert!(open_private_dir(&other.join("fslab")).is_none());
            assert!(!other.join("fslab").exists());
        }
    }
}
