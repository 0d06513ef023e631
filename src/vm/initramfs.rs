//! The guest's initramfs, a newc cpio archive fslab writes itself: fslab's
//! own binary as `/init`, the tools the cell runs (mkfs.*, blkid, wipefs,
//! mount) with the shared libraries `ldd` names for each, the kernel's
//! modules the cell needs, and the cell's instructions under `/fslab`. No
//! distribution image, no shell, no network.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// Where the guest finds its instructions.
pub const SPEC_DIR: &str = "fslab";

/// An archive being written: parent directories are added once, before
/// their first entry (the kernel's unpacker does not make them).
pub struct Initramfs<W: Write> {
    out: Option<W>,
    dirs: BTreeSet<PathBuf>,
    files: BTreeSet<PathBuf>,
    ino: u32,
}

/// The archive path of an absolute host path: relative, `..` resolved
/// lexically (the guest has no symlinks in these directories).
pub fn archive_path(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

impl<W: Write> Initramfs<W> {
    pub fn new(out: W) -> Self {
        Initramfs {
            out: Some(out),
            dirs: BTreeSet::new(),
            files: BTreeSet::new(),
            ino: 1,
        }
    }

    fn entry(&mut self, name: &Path, mode: u32, rdev: (u32, u32), data: &[u8]) -> std::io::Result<()> {
        let out = self.out.take().expect("not finished");
        self.ino += 1;
        let name = name.to_string_lossy();
        let size = u32::try_from(data.len()).map_err(|_| std::io::Error::other(format!("{name} is over 4 GiB")))?;
        let mut w = cpio::newc::Builder::new(&name)
            .ino(self.ino)
            .mode(mode)
            .nlink(if mode & 0o170000 == 0o040000 { 2 } else { 1 })
            .rdev_major(rdev.0)
            .rdev_minor(rdev.1)
            .write(out, size);
        w.write_all(data)?;
        self.out = Some(w.finish()?);
        Ok(())
    }

    /// Directory `p` (relative) and its parents.
    pub fn dir(&mut self, p: &Path) -> std::io::Result<()> {
        if p.as_os_str().is_empty() || self.dirs.contains(p) {
            return Ok(());
        }
        if let Some(parent) = p.parent() {
            self.dir(parent)?;
        }
        self.dirs.insert(p.to_path_buf());
        self.entry(p, 0o040755, (0, 0), &[])
    }

    /// File `p` (relative) with `data`; a second file at the same path is skipped.
    pub fn file(&mut self, p: &Path, mode: u32, data: &[u8]) -> std::io::Result<()> {
        if !self.files.insert(p.to_path_buf()) {
            return Ok(());
        }
        if let Some(parent) = p.parent() {
            self.dir(parent)?;
        }
        self.entry(p, 0o100000 | (mode & 0o7777), (0, 0), data)
    }

    /// A character device node (no root needed: it is only bytes in the archive).
    pub fn char_dev(&mut self, p: &Path, major: u32, minor: u32) -> std::io::Result<()> {
        if let Some(parent) = p.parent() {
            self.dir(parent)?;
        }
        self.entry(p, 0o020600, (major, minor), &[])
    }

    /// Host file `host` at its own path in the guest, its permissions kept.
    pub fn host_file(&mut self, host: &Path) -> std::io::Result<()> {
        let data =
            std::fs::read(host).map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", host.display())))?;
        let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(host)?.permissions());
        self.file(&archive_path(host), mode, &data)
    }

    /// An executable and every shared library `ldd` finds for it, each at
    /// its host path (the dynamic loader's path too); `at` is where the
    /// program itself goes in the guest.
    pub fn program(&mut self, exe: &Path, at: &Path) -> std::io::Result<()> {
        let data = std::fs::read(exe).map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", exe.display())))?;
        self.file(at, 0o755, &data)?;
        for lib in shared_libraries(exe)? {
            self.host_file(&lib)?;
        }
        Ok(())
    }

    pub fn finish(mut self) -> std::io::Result<W> {
        cpio::newc::trailer(self.out.take().expect("not finished"))
    }
}

/// The shared libraries of `exe`, as `ldd` resolves them on this host.
pub fn shared_libraries(exe: &Path) -> std::io::Result<Vec<PathBuf>> {
    let out = Command::new("ldd").arg(exe).env("LC_ALL", "C").output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // a static program: "not a dynamic executable" (exit 1), nothing to add
    if !out.status.success() {
        return Ok(Vec::new());
    }
    let mut v = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.contains("not found") {
            return Err(std::io::Error::other(format!("{}: ldd: {line}", exe.display())));
        }
        // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or
        // "/lib64/ld-linux-x86-64.so.2 (0x...)"; "linux-vdso.so.1 (0x...)" is the kernel's
        let path = match line.split_once("=>") {
            Some((_, r)) => r.trim(),
            None => line,
        };
        let path = path.split(" (").next().unwrap_or("").trim();
        if path.starts_with('/') {
            let p = PathBuf::from(path);
            // the library's real file, at the path the loader asks for
            if p.exists() {
                v.push(p);
            }
        }
    }
    Ok(v)
}

/// Where `prog` lives: PATH, then the sbin directories (root's tools).
pub fn find_program(prog: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(prog))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archive_paths_are_relative_and_lexically_resolved() {
        assert_eq!(archive_path(Path::new("/a/b/../c/d")), PathBuf::from("a/c/d"));
        assert_eq!(
            archive_path(Path::new("/usr/sbin/mkfs.xfs")),
            PathBuf::from("usr/sbin/mkfs.xfs")
        );
    }

    #[test]
    fn the_archive_reads_back_with_parents_before_children() {
        let mut a = Initramfs::new(Vec::new());
        a.file(Path::new("x/y/z"), 0o644, b"hello").unwrap();
        a.char_dev(Path::new("dev/console"), 5, 1).unwrap();
        a.file(Path::new("x/y/z"), 0o644, b"again").unwrap();
        let bytes = a.finish().unwrap();
        let mut names = Vec::new();
        let mut r = std::io::Cursor::new(bytes);
        loop {
            let e = cpio::newc::Reader::new(r).unwrap();
            if e.entry().is_trailer() {
                break;
            }
            names.push((e.entry().name().to_string(), e.entry().mode(), e.entry().file_size()));
            r = e.finish().unwrap();
        }
        assert_eq!(
            names,
            vec![
                ("x".to_string(), 0o040755, 0),
                ("x/y".to_string(), 0o040755, 0),
                ("x/y/z".to_string(), 0o100644, 5),
                ("dev".to_string(), 0o040755, 0),
                ("dev/console".to_string(), 0o020600, 0),
            ]
        );
    }
}
