//! The marker file `.fslab-workdir` of a work directory (its format is in
//! `workdir`'s header): reading, parsing and appending records, its lock,
//! and the mounts it records. Apart from `workdir` so that an abort
//! (`live`) and `fslab cleanup` read markers without the guards that make
//! and remove directories.

use super::{info, MARKER};
use rustix::fd::OwnedFd;
use rustix::fs::{FlockOperation, Mode, OFlags, CWD};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Takes the flock `op` on the marker at `path`, open as `fd`. Where
/// flock is emulated with POSIX locks (NFS, CIFS) an exclusive lock needs a
/// descriptor open for writing: then it is taken on a new one (of the same
/// file), which is returned instead.
pub fn lock_marker(path: &Path, fd: OwnedFd, op: FlockOperation) -> (OwnedFd, rustix::io::Result<()>) {
    match rustix::fs::flock(&fd, op) {
        Err(rustix::io::Errno::BADF) => {
            let flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
            let Ok(rw) = rustix::fs::openat(CWD, path, flags, Mode::empty()) else {
                return (fd, Err(rustix::io::Errno::BADF));
            };
            let id = |f: &OwnedFd| rustix::fs::fstat(f).map(|s| (s.st_dev, s.st_ino)).ok();
            if id(&rw).is_none() || id(&rw) != id(&fd) {
                return (fd, Err(rustix::io::Errno::BADF));
            }
            let r = rustix::fs::flock(&rw, op);
            (rw, r)
        }
        r => (fd, r),
    }
}

/// Records, before mounting, that fslab mounts `fs_type` from `source` at
/// `dir/<name>`: cleanup detaches nothing else.
pub fn record_mount(dir: &Path, name: &str, fs_type: &str, source: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(dir.join(MARKER))?;
    writeln!(f, "mount {} {} {}", escape(name), escape(fs_type), escape(source))
}

/// Records the mount at `dir/<name>` as mountinfo shows it, when that differs
/// from what `record_mount` wrote (mount(8) may name the device otherwise).
pub fn record_mounted(dir: &Path, name: &str) -> std::io::Result<()> {
    let at = dir.canonicalize()?.join(name);
    // the last entry at a mount point is the one on top
    let Some(m) = info::mounts().into_iter().rev().find(|m| m.mount_point == at) else {
        return Ok(());
    };
    let known = read_marker(&dir.join(MARKER)).map(|m| m.mounts).unwrap_or_default();
    if known
        .iter()
        .any(|r| r.name == name && r.fs_type == m.fs_type && r.source == m.source)
    {
        return Ok(());
    }
    record_mount(dir, name, &m.fs_type, &m.source)
}

/// Records, before fslab changes it, a queue attribute's value (`queue`),
/// or what it is once the plan's settings are in place (`queue-set`).
pub fn record_queue(dir: &Path, set: bool, attr: &Path, value: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(dir.join(MARKER))?;
    writeln!(
        f,
        "{} {} {}",
        if set { "queue-set" } else { "queue" },
        escape(&attr.to_string_lossy()),
        escape(value)
    )
}

/// A queue attribute a marker records: its value before fslab changed it
/// and, once the settings were in place, the value fslab left.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueRecord {
    /// `/sys/devices/.../queue/<attr>`, `attr` one fslab sets (`QUEUE_ORDER`).
    pub attr: PathBuf,
    pub old: String,
    pub set: Option<String>,
}

/// A recorded queue attribute path, if it is one fslab may write: absolute,
/// under /sys/devices, no `.` or `..`, ending in `queue/<attr>` with `attr`
/// one of the plan's (a planted marker names nothing else).
fn queue_attr_path(s: &str) -> Option<PathBuf> {
    let p = PathBuf::from(s);
    let normal = p
        .components()
        .skip(1)
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    let attr = p.file_name()?.to_str()?;
    let ok = p.starts_with("/sys/devices")
        && normal
        && p.parent()?.file_name()? == "queue"
        && crate::plan::lab::QUEUE_ORDER.contains(&attr);
    ok.then_some(p)
}

/// A recorded queue value: a short word (a scheduler's name or a number).
fn queue_value(s: &str) -> Option<String> {
    let v = unescape(s);
    let ok = !v.is_empty() && v.len() <= 64 && v.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    ok.then_some(v)
}

/// A `mount` line of a marker.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// Relative to the work directory, never leaving it.
    pub name: String,
    pub fs_type: String,
    pub source: String,
}

/// A parsed marker.
#[derive(Debug, Default, PartialEq)]
pub struct Marker {
    /// From `pid <pid>`; None for a rank's marker.
    pub pid: Option<u32>,
    pub host: Option<String>,
    /// Its fslab held the lock: the lock alone tells whether it lives.
    pub locked: bool,
    pub mounts: Vec<Recorded>,
    /// Queue attributes fslab changed, in the order they were recorded.
    pub queue: Vec<QueueRecord>,
}

/// Parses a marker's text; None when it has no first line yet (a marker
/// being written) or is not fslab's.
pub fn parse_marker(text: &str) -> Option<Marker> {
    let mut lines = text.lines();
    let first = lines.next()?.trim();
    let pid = match first.split_once(' ') {
        Some(("pid", p)) => Some(p.trim().parse().ok()?),
        Some(("rank", _)) => None,
        _ if first == "rank" => None,
        _ => return None,
    };
    let mut m = Marker {
        pid,
        ..Default::default()
    };
    for l in lines {
        let f: Vec<&str> = l.split(' ').collect();
        match f.as_slice() {
            ["host", h] => m.host = Some(unescape(h)),
            ["lock", "flock"] => m.locked = true,
            ["queue", attr, old] => {
                if let (Some(attr), Some(old)) = (queue_attr_path(&unescape(attr)), queue_value(old)) {
                    if !m.queue.iter().any(|q| q.attr == attr) {
                        m.queue.push(QueueRecord { attr, old, set: None });
                    }
                }
            }
            ["queue-set", attr, new] => {
                if let (Some(attr), Some(new)) = (queue_attr_path(&unescape(attr)), queue_value(new)) {
                    if let Some(q) = m.queue.iter_mut().find(|q| q.attr == attr) {
                        q.set = Some(new);
                    }
                }
            }
            ["mount", name, fs_type, source] => {
                let name = unescape(name);
                // only ever a path inside the directory
                let inside = !name.is_empty()
                    && Path::new(&name)
                        .components()
                        .all(|c| matches!(c, std::path::Component::Normal(_)));
                if inside {
                    m.mounts.push(Recorded {
                        name,
                        fs_type: unescape(fs_type),
                        source: unescape(source),
                    });
                }
            }
            _ => {}
        }
    }
    Some(m)
}

/// Reads and parses the marker at `path` (a regular file, not followed if a
/// symlink, never waited on if a FIFO).
pub fn read_marker(path: &Path) -> Option<Marker> {
    let fd = open_marker(path).ok()?;
    parse_marker(&read_fd(&fd).ok()?)
}

/// Opens a marker for reading: a regular file, or ENOENT-like failure.
pub fn open_marker(path: &Path) -> std::io::Result<OwnedFd> {
    let fd = rustix::fs::openat(
        CWD,
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    if rustix::fs::FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(std::io::Error::from(std::io::ErrorKind::InvalidData));
    }
    Ok(fd)
}

/// The text of an open marker (at most 64 KiB: fslab writes a few lines).
pub fn read_fd(fd: &OwnedFd) -> std::io::Result<String> {
    let mut buf = vec![0u8; 64 << 10];
    let mut n = 0;
    while n < buf.len() {
        match rustix::io::pread(fd, &mut buf[n..], n as u64)? {
            0 => break,
            k => n += k,
        }
    }
    buf.truncate(n);
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// The mounts inside `dir` that its marker records (record name, mountinfo
/// entry), outermost first.
pub fn present_mounts(dir: &Path) -> std::io::Result<Vec<(Recorded, info::MountEntry)>> {
    let real = dir.canonicalize()?;
    let Some(marker) = read_marker(&dir.join(MARKER)) else {
        return Ok(vec![]);
    };
    let mut v: Vec<_> = info::mounts()
        .into_iter()
        .filter_map(|m| {
            let r = marker.mounts.iter().find(|r| matches(r, &real, &m))?;
            Some((r.clone(), m))
        })
        .collect();
    v.sort_by_key(|(_, m)| m.mount_point.as_os_str().len());
    Ok(v)
}

/// True when mount `m` is the one `r` records in directory `real`.
pub fn matches(r: &Recorded, real: &Path, m: &info::MountEntry) -> bool {
    m.mount_point == real.join(&r.name) && m.fs_type == r.fs_type && m.source == r.source
}

/// Detaches, lazily, the recorded mounts in `dir` (a second Ctrl-C: nothing
/// may wait for busy files then).
pub fn detach_recorded(dir: &Path) {
    let mut v = present_mounts(dir).unwrap_or_default();
    v.reverse();
    for (_, m) in v {
        let _ = rustix::mount::unmount(&m.mount_point, rustix::mount::UnmountFlags::DETACH);
    }
}

/// mountinfo's escapes: space, tab, newline and backslash as octal.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            ' ' | '\t' | '\n' | '\\' => o.push_str(&format!("\\{:03o}", c as u32)),
            c => o.push(c),
        }
    }
    o
}

pub(crate) fn unescape(s: &str) -> String {
    info::unescape(s)
}
