//! The calibration card of a run (`model::calibration`): measured
//! (`runner::calibrate`, under a second) or read from the cache once
//! per process, before the first cell, never while one runs; then every
//! cell's figures are set against it (`rate`).
//!
//! The cache keeps one card per boot and fslab build, in a runtime
//! directory the system normally empties at boot (entries of other boots
//! are pruned where it does not): `$XDG_RUNTIME_DIR/fslab`, or for root
//! without one `/run/fslab`; not under $HOME (a run with a fresh
//! HOME would measure again). It is used only when it is a directory of
//! the running user's alone, and its entries are read and written as
//! `target::cache` does (no symlink followed, no entry of another user's
//! or writable by others read, a temporary renamed over the entry). An
//! entry that does not parse, or names another build or boot, is measured
//! again and replaced, never an error. Elsewhere (a user without a runtime
//! directory) every run measures.
//!
//! In a distributed run rank 0 measures while the other ranks wait (they
//! would disturb it), and only rank 0's report records the card. A VM
//! guest's cell records none: the host's card is the run's.

use crate::model::calibration::Calibration;
use crate::model::Cell;
use crate::target::cache::{open_private_dir, prune, read_cached, write_cached};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The build a card belongs to: the string `fslab --version` prints.
const BUILD: &str = env!("FSLAB_LONG_VERSION");
/// A cache entry longer than this is not a card of ours.
const MAX_ENTRY: u64 = 64 << 10;
/// Where the tmpfs floors are measured, the first that is a tmpfs.
const TMPFS_DIRS: [&str; 2] = ["/dev/shm", "/tmp"];

/// This process's card: set once, by the first `for_run`.
static RUN_CARD: OnceLock<Option<Calibration>> = OnceLock::new();

/// Where a card came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Read from this cache entry.
    Cached(PathBuf),
    /// Measured now and written to this cache entry.
    Stored(PathBuf),
    /// Measured now, not cached, for this reason.
    Uncached(String),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Cached(p) => write!(f, "read from the cache {}", p.display()),
            Source::Stored(p) => write!(f, "measured now, cached in {}", p.display()),
            Source::Uncached(why) => write!(f, "measured now, not cached: {why}"),
        }
    }
}

/// The kernel's boot id, None where /proc does not say.
fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let id = id.trim();
    (!id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')).then(|| id.to_string())
}

/// The cache directory's path: `$XDG_RUNTIME_DIR/fslab`, or `/run/fslab`
/// for root without one.
fn cache_path() -> Result<PathBuf, String> {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(d) => Ok(PathBuf::from(d).join("fslab")),
        None if crate::host_facts::is_root() => Ok(PathBuf::from("/run/fslab")),
        None => Err("no XDG_RUNTIME_DIR (a directory emptied at boot) to keep it in".into()),
    }
}

/// The cache directory, opened, with its path.
fn cache_dir() -> Result<(OwnedFd, PathBuf), String> {
    let p = cache_path()?;
    match open_private_dir(&p) {
        Some(fd) => Ok((fd, p)),
        None => Err(format!(
            "{} is not a directory of this user's alone (owned by it, writable by no one else, no symlink on the way)",
            p.display()
        )),
    }
}

/// The entry of this boot and build: "calibration-<boot id>-<crc32c of the build>.json".
fn entry_name(boot: &str) -> String {
    format!("calibration-{boot}-{:08x}.json", crc32c::crc32c(BUILD.as_bytes()))
}

/// The card: from the cache unless `fresh`, else measured (and cached when
/// the cache can be used).
pub fn card(fresh: bool) -> (Calibration, Source) {
    let boot = boot_id();
    let dir = cache_dir().and_then(|d| boot.clone().map(|b| (d, b)).ok_or_else(|| "no boot id in /proc".into()));
    if let (false, Ok(((fd, path), boot))) = (fresh, &dir) {
        let name = entry_name(boot);
        if let Some(k) = read_cached(fd, &name, MAX_ENTRY)
            .and_then(|t| serde_json::from_str::<Calibration>(&t).ok())
            .filter(|k| k.fslab_build == BUILD && &k.boot_id == boot)
        {
            return (Calibration { cached: true, ..k }, Source::Cached(path.join(name)));
        }
    }
    let k = measure(boot.as_deref().unwrap_or("unknown"));
    match dir {
        Ok(((fd, path), boot)) => {
            let name = entry_name(&boot);
            let text = serde_json::to_string_pretty(&k).expect("a card serialises") + "\n";
            write_cached(&fd, &name, &text);
            // cards of earlier boots (a runtime directory on a disk keeps them)
            prune(&fd, |n| {
                n.starts_with("calibration-") && !n.starts_with(&format!("calibration-{boot}-"))
            });
            let source = if read_cached(&fd, &name, MAX_ENTRY).is_some() {
                Source::Stored(path.join(name))
            } else {
                Source::Uncached(format!("{} could not be written", path.join(name).display()))
            };
            (k, source)
        }
        Err(why) => (k, Source::Uncached(why)),
    }
}

/// Measures the card now, in a work directory of its own on a tmpfs if
/// there is one (else in the temporary directory, without the tmpfs figures).
fn measure(boot: &str) -> Calibration {
    let tmpfs = TMPFS_DIRS
        .iter()
        .map(Path::new)
        .find(|p| p.is_dir() && crate::host_facts::is_tmpfs(p));
    let parent = tmpfs.map(Path::to_path_buf).unwrap_or_else(std::env::temp_dir);
    let not_tmpfs = format!("neither {} is a tmpfs", TMPFS_DIRS.join(" nor "));
    let not_tmpfs = tmpfs.is_none().then_some(not_tmpfs.as_str());
    // a work directory as every cell's (`fslab-<pid>-<n>` with its locked
    // marker): an abort removes it, `fslab cleanup` what a SIGKILL left
    let mut k = match crate::target::make_workdir(&parent) {
        Ok(d) => {
            let k = crate::runner::calibrate::measure(Ok(&d), not_tmpfs);
            crate::target::workdir::remove_marked(&d);
            k
        }
        Err(e) => {
            let why = format!("no directory for it in {}: {e}", parent.display());
            crate::runner::calibrate::measure(Err(&why), Some(&why))
        }
    };
    k.fslab_build = BUILD.to_string();
    k.boot_id = boot.to_string();
    k.measured_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    k.tmpfs_dir = tmpfs
        .filter(|_| k.tmpfs_create_ns.is_some())
        .map(|t| t.display().to_string());
    k
}

/// The card a run records: measured or read once per process, before the
/// first cell; None in a VM guest (`guest`) and on ranks other than 0.
pub(crate) fn for_run(guest: bool) -> Option<Calibration> {
    RUN_CARD
        .get_or_init(|| {
            let coord = crate::dist::coordinator();
            let k = (!guest && coord.rank() == 0).then(|| card(false).0);
            // the other ranks start their cells once it is measured
            if coord.size() > 1 {
                coord.barrier();
            }
            k
        })
        .clone()
}

/// `c`'s figures against the run's card (none without one).
pub(crate) fn rate(c: &mut Cell) {
    if let Some(Some(k)) = RUN_CARD.get() {
        c.efficiency = k.efficiency(c);
    }
}

/// `fslab calibrate`: the card to every output.
pub fn run_calibrate(plan: &crate::plan::calibrate::CalibratePlan) -> Result<(), super::AppError> {
    use crate::plan::OutputFormat;
    use std::io::Write;
    let (k, source) = card(plan.fresh);
    for o in &plan.outputs.0 {
        let bytes = match o.format {
            OutputFormat::Json => serde_json::to_string_pretty(&k).expect("a card serialises") + "\n",
            // wrapped at the terminal's width on stdout, 80 in a file
            _ => {
                let width = match &o.path {
                    None => crate::plan::stdout_style(&Default::default()).map_or(80, |s| s.width),
                    Some(_) => crate::plan::DEFAULT_WIDTH,
                };
                let text = crate::report::calibration::card_text(&k, &source.to_string());
                crate::report::render::fit::lines(&text, width.into())
            }
        };
        match &o.path {
            Some(p) => crate::plan::write_atomically(p, bytes.as_bytes()).map_err(super::AppError::Output)?,
            None => {
                let mut out = std::io::stdout().lock();
                let bytes = crate::report::terminal_bytes(bytes.into_bytes());
                match out.write_all(&bytes).and_then(|()| out.flush()) {
                    Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(super::AppError::Output(e)),
                    _ => {}
                }
            }
        }
    }
    Ok(())
}
