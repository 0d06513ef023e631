//! `fslab examples list|show|write`: the files of the source tree's
//! examples/ built into the binary, so that an installed fslab (`cargo
//! install`, the Debian package) has its example plans without a checkout.
//!
//! `write` creates files in a directory the user names, so it never
//! replaces or follows anything there: it refuses (exit 2, writing nothing)
//! when any of the names exists, even as a dangling symbolic link, and each
//! file appears whole or not at all (written unnamed, `O_TMPFILE`, then
//! linked in, which never replaces a name; where the filesystem has no
//! `O_TMPFILE`, created `O_EXCL | O_NOFOLLOW` and removed again if writing it
//! failed). A failure part-way removes the files this run made.

use super::results::print_bytes;
use crate::cli::{ExamplesAction, ExamplesArgs};
use rustix::fd::{AsFd, AsRawFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, CWD};
use rustix::io::Errno;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// One file of examples/ as it was when this binary was built.
struct Example {
    name: &'static str,
    text: &'static str,
}

macro_rules! example {
    ($name:literal) => {
        Example {
            name: $name,
            text: include_str!(concat!("../../examples/", $name)),
        }
    };
}

/// Every file of examples/ (tests/examples_cmd.rs checks that none is
/// missing and that each is byte for byte the file in the tree).
const EXAMPLES: [Example; 7] = [
    example!("fetch-kernels.sh"),
    example!("seed-create-under-stream.toml"),
    example!("seed-kernel-ab.toml"),
    example!("seed-metadata-xattr.toml"),
    example!("seed-raw-vs-fs-scheduler.toml"),
    example!("seed-raw-vs-fs.toml"),
    example!("seed-samba-xattr.toml"),
];

/// The widest line `list` prints: 80 columns less one, as the help's examples.
const WIDTH: usize = 79;

/// Runs `fslab examples`.
pub fn run_examples(a: &ExamplesArgs) -> ExitCode {
    match &a.action {
        ExamplesAction::List => print_bytes(listing().as_bytes()),
        ExamplesAction::Show { name } => match find(name) {
            Some(e) => print_bytes(e.text.as_bytes()),
            None => {
                let names: Vec<&str> = EXAMPLES.iter().map(|e| e.name).collect();
                eprintln!(
                    "fslab: error: examples show: no example '{}' (there are: {})",
                    crate::units::shown(name),
                    names.join(", ")
                );
                ExitCode::from(2)
            }
        },
        ExamplesAction::Write { dir } => match write_all(Path::new(dir)) {
            Ok(written) => {
                let list: String = written.iter().map(|p| format!("{p}\n")).collect();
                print_bytes(list.as_bytes())
            }
            Err(Refusal { msg, code }) => {
                eprintln!("fslab: error: examples write: {msg}");
                ExitCode::from(code)
            }
        },
    }
}

/// The example called `name`: its file name, or a plan's without `.toml`.
fn find(name: &str) -> Option<&'static Example> {
    EXAMPLES
        .iter()
        .find(|e| e.name == name || e.name.strip_suffix(".toml") == Some(name))
}

/// `list`'s text: each name, and beside it the first sentence of its
/// leading comment, wrapped to `WIDTH` under itself.
fn listing() -> String {
    let col = EXAMPLES.iter().map(|e| e.name.len()).max().unwrap_or(0) + 2;
    let mut out = String::new();
    for e in &EXAMPLES {
        // the layout's wrap, without its continuation indent
        let mut lines = crate::report::render::plain::wrap(&description(e.text), WIDTH - col)
            .into_iter()
            .map(|l| l.trim_start().to_string());
        out.push_str(&format!("{:col$}{}\n", e.name, lines.next().unwrap_or_default()));
        for l in lines {
            out.push_str(&format!("{:col$}{l}\n", ""));
        }
    }
    out
}

/// The first sentence of a file's leading comment (after a `#!` line): its
/// first paragraph up to the first full stop, a closing colon made one.
fn description(text: &str) -> String {
    let para: Vec<&str> = text
        .lines()
        .skip_while(|l| l.starts_with("#!"))
        .map_while(|l| l.strip_prefix('#'))
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .collect();
    let para = para.join(" ");
    let sentence = match para.find(". ") {
        Some(i) => &para[..=i],
        None => para.as_str(),
    };
    match sentence.strip_suffix(':') {
        Some(s) => format!("{s}."),
        None => sentence.to_string(),
    }
}

/// Why `write` stopped: one line, and the exit code (2 refused before
/// writing, 1 failed while writing).
struct Refusal {
    msg: String,
    code: u8,
}

fn refused(msg: String) -> Refusal {
    Refusal { msg, code: 2 }
}

fn failed(msg: String) -> Refusal {
    Refusal { msg, code: 1 }
}

/// Writes every example into `dir` (made if missing) and returns the paths
/// written, or refuses: nothing is written when a name is taken.
fn write_all(dir: &Path) -> Result<Vec<String>, Refusal> {
    let shown = |p: &Path| crate::units::shown(&p.display().to_string()).into_owned();
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => return Err(refused(format!("'{}' is not a directory", shown(dir)))),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir_all(dir)
            .map_err(|e| refused(format!("cannot make the directory '{}': {e}", shown(dir))))?,
        Err(e) => return Err(refused(format!("'{}': {e}", shown(dir)))),
    }
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let dfd = rustix::fs::openat(CWD, dir, flags, Mode::empty())
        .map_err(|e| refused(format!("cannot open the directory '{}': {e}", shown(dir))))?;
    // every name checked before any is written: a refusal writes nothing
    for e in &EXAMPLES {
        match rustix::fs::statat(&dfd, e.name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                return Err(refused(format!(
                    "'{}' is a symbolic link; fslab neither follows nor replaces it (remove it, or write into another directory)",
                    shown(&dir.join(e.name))
                )))
            }
            Ok(_) => return Err(exists(&dir.join(e.name))),
            Err(Errno::NOENT) => {}
            Err(err) => return Err(failed(format!("'{}': {err}", shown(&dir.join(e.name))))),
        }
    }
    let mut made: Vec<(&str, Ident)> = Vec::new();
    for e in &EXAMPLES {
        let r = match write_one(&dfd, e) {
            Ok(ident) => {
                made.push((e.name, ident));
                continue;
            }
            Err(r) => r,
        };
        // what this run made goes again; nothing else is touched
        for (name, ident) in made {
            remove_if_ours(&dfd, name, ident);
        }
        return Err(match r {
            WriteError::Exists => exists(&dir.join(e.name)),
            WriteError::Io(err) => failed(format!("writing '{}': {err}", shown(&dir.join(e.name)))),
        });
    }
    Ok(EXAMPLES.iter().map(|e| shown(&dir.join(e.name))).collect())
}

fn exists(p: &Path) -> Refusal {
    refused(format!(
        "'{}' exists; fslab does not replace it (remove it, or write into another directory)",
        crate::units::shown(&p.display().to_string())
    ))
}

/// A file's identity (device, inode): what `write` made is removed only
/// while its name still holds that file, not one another process put there.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Ident(u64, u64);

fn ident_of(fd: impl AsFd) -> Result<Ident, Errno> {
    let st = rustix::fs::fstat(fd)?;
    Ok(Ident(st.st_dev, st.st_ino))
}

/// Unlinks `name` in `dfd` if it is still the file `ident` (not a
/// symbolic link or a file put there since).
fn remove_if_ours(dfd: &OwnedFd, name: &str, ident: Ident) {
    if let Ok(st) = rustix::fs::statat(dfd, name, AtFlags::SYMLINK_NOFOLLOW) {
        if Ident(st.st_dev, st.st_ino) == ident {
            let _ = rustix::fs::unlinkat(dfd, name, AtFlags::empty());
        }
    }
}

enum WriteError {
    /// The name was taken (since the check, or by a symbolic link).
    Exists,
    Io(std::io::Error),
}

impl From<Errno> for WriteError {
    fn from(e: Errno) -> Self {
        if e == Errno::EXIST {
            WriteError::Exists
        } else {
            WriteError::Io(e.into())
        }
    }
}

impl From<std::io::Error> for WriteError {
    fn from(e: std::io::Error) -> Self {
        WriteError::Io(e)
    }
}

/// The mode a file is made with (less the umask): the script executable.
fn mode_of(e: &Example) -> Mode {
    Mode::from_raw_mode(if e.name.ends_with(".sh") { 0o755 } else { 0o644 })
}

/// Writes one example into the directory `dfd` under its name, whole or
/// not at all, never over an existing name; returns what it made.
fn write_one(dfd: &OwnedFd, e: &Example) -> Result<Ident, WriteError> {
    let unnamed = rustix::fs::openat(dfd, ".", OFlags::WRONLY | OFlags::TMPFILE | OFlags::CLOEXEC, mode_of(e));
    match unnamed {
        Ok(fd) => {
            let mut f = std::fs::File::from(fd);
            f.write_all(e.text.as_bytes())?;
            let proc_path = format!("/proc/self/fd/{}", f.as_fd().as_raw_fd());
            match rustix::fs::linkat(CWD, proc_path.as_str(), dfd, e.name, AtFlags::SYMLINK_FOLLOW) {
                // no /proc to name the unnamed file by: made by name instead
                Err(Errno::NOENT) => write_named(dfd, e),
                r => {
                    r?;
                    Ok(ident_of(&f)?)
                }
            }
        }
        // a filesystem (or kernel) without O_TMPFILE
        Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL) => write_named(dfd, e),
        Err(err) => Err(err.into()),
    }
}

/// Writes one example under its name, created `O_EXCL | O_NOFOLLOW`, and
/// removes it again (if the name still holds it) when writing failed.
fn write_named(dfd: &OwnedFd, e: &Example) -> Result<Ident, WriteError> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut f = std::fs::File::from(rustix::fs::openat(dfd, e.name, flags, mode_of(e))?);
    let ident = ident_of(&f)?;
    if let Err(err) = f.write_all(e.text.as_bytes()) {
        drop(f);
        remove_if_ours(dfd, e.name, ident);
        return Err(err.into());
    }
    Ok(ident)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_is_the_first_sentence_of_the_leading_comment() {
        let plan = "# Seed 1: one\n# thing. And more\n# text.\n#\n# Later.\nname = \"x\"\n";
        assert_eq!(description(plan), "Seed 1: one thing.");
        let script = "#!/bin/sh\n# Fetches the kernels\n# for a plan:\n#\n#   a -> b\n";
        assert_eq!(description(script), "Fetches the kernels for a plan.");
    }

    #[test]
    fn every_listed_line_fits_80_columns() {
        for l in listing().lines() {
            assert!(l.chars().count() <= WIDTH, "{l}");
        }
        assert!(listing().lines().count() >= EXAMPLES.len());
    }
}
