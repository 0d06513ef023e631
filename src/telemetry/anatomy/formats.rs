//! The tracepoints' record layouts, read from tracefs and checked against
//! what `bpf/anatomy.bpf.c` reads, so that a kernel with another layout
//! is named and left out, never misread.
//!
//! aya attaches tracepoints by the ids under `/sys/kernel/tracing`; when
//! nothing is mounted there (a machine without systemd's mount), the
//! session mounts tracefs there and unmounts it once its programs are
//! attached.

use std::path::{Path, PathBuf};

const ROOT: &str = "/sys/kernel/tracing";

pub struct TraceFs {
    root: PathBuf,
    /// The mount id of the tracefs this session mounted (and so unmounts,
    /// while it is still the one at the path): None when it found one.
    mounted: Option<u64>,
    /// Held from the check to the unmount: another fslab that found the
    /// tracefs this one mounted would lose it mid-attach (two test runs
    /// at once did).
    _lock: Option<std::fs::File>,
}

/// Serialises fslab sessions around mounting tracefs. Opened without
/// following a symlink and never written; a lock someone else holds for
/// long is waited for 5 s, then the session goes on without it.
fn lock() -> Option<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .mode(0o600)
        .open("/run/lock/fslab-tracefs.lock")
        .ok()?;
    // a FIFO or a device someone put there is no lock of fslab's
    let st = rustix::fs::fstat(&f).ok()?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return None;
    }
    for _ in 0..500 {
        if rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok() {
            return Some(f);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    None
}

pub struct Layout {
    pub rwbs_insert: u32,
    pub rwbs_issue: u32,
    pub rwbs_complete: u32,
    pub rwbs_bio: u32,
    /// One line per event left out.
    pub missing: Vec<String>,
    missing_events: Vec<(String, String)>,
}

impl Layout {
    pub fn missing_event(&self, cat: &str, ev: &str) -> bool {
        self.missing_events.iter().any(|(c, e)| c == cat && e == ev)
    }
}

/// (field, offset, size) of one event's format.
fn fields(text: &str) -> Vec<(String, u32, u32)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("field:") else {
            continue;
        };
        let mut parts = rest.split(';').map(str::trim);
        let decl = parts.next().unwrap_or("");
        let name = decl
            .rsplit(' ')
            .next()
            .unwrap_or("")
            .split('[')
            .next()
            .unwrap_or("")
            .to_string();
        let mut off = None;
        let mut size = None;
        for p in parts {
            if let Some(v) = p.strip_prefix("offset:") {
                off = v.parse().ok();
            } else if let Some(v) = p.strip_prefix("size:") {
                size = v.parse().ok();
            }
        }
        if let (Some(o), Some(s)) = (off, size) {
            out.push((name, o, s));
        }
    }
    out
}

/// A field the C source reads: (name, offset, size).
type Field = (&'static str, u32, u32);

/// What the C source reads of each event: (category, event, fields).
const EXPECTED: &[(&str, &str, &[Field])] = &[
    (
        "sched",
        "sched_switch",
        &[("prev_pid", 24, 4), ("prev_state", 32, 8), ("next_pid", 56, 4)],
    ),
    ("sched", "sched_waking", &[("pid", 24, 4)]),
    (
        "block",
        "block_rq_insert",
        &[("dev", 8, 4), ("sector", 16, 8), ("nr_sector", 24, 4)],
    ),
    (
        "block",
        "block_rq_issue",
        &[("dev", 8, 4), ("sector", 16, 8), ("nr_sector", 24, 4)],
    ),
    (
        "block",
        "block_rq_complete",
        &[("dev", 8, 4), ("sector", 16, 8), ("nr_sector", 24, 4)],
    ),
    (
        "block",
        "block_bio_queue",
        &[("dev", 8, 4), ("sector", 16, 8), ("nr_sector", 24, 4)],
    ),
    ("jbd2", "jbd2_start_commit", &[("dev", 8, 4), ("transaction", 16, 4)]),
    ("jbd2", "jbd2_commit_locking", &[("dev", 8, 4), ("transaction", 16, 4)]),
    ("jbd2", "jbd2_commit_flushing", &[("dev", 8, 4), ("transaction", 16, 4)]),
    ("jbd2", "jbd2_commit_logging", &[("dev", 8, 4), ("transaction", 16, 4)]),
    ("jbd2", "jbd2_end_commit", &[("dev", 8, 4), ("transaction", 16, 4)]),
    (
        "jbd2",
        "jbd2_run_stats",
        &[
            ("dev", 8, 4),
            ("tid", 12, 4),
            ("handle_count", 64, 4),
            ("blocks", 68, 4),
        ],
    ),
    ("xfs", "xfs_log_force", &[("dev", 8, 4), ("lsn", 16, 8)]),
];

/// Checks `fmt` (an event's format text) has every field where expected.
fn matches(fmt: &str, want: &[(&str, u32, u32)]) -> Result<(), String> {
    let have = fields(fmt);
    for &(name, off, size) in want {
        match have.iter().find(|(n, _, _)| n == name) {
            Some((_, o, s)) if *o == off && *s == size => {}
            Some((_, o, s)) => return Err(format!("{name} at {o} ({s} bytes), fslab reads it at {off} ({size})")),
            None => return Err(format!("no field {name}")),
        }
    }
    Ok(())
}

fn rwbs_offset(fmt: &str) -> Option<u32> {
    fields(fmt)
        .into_iter()
        .find(|(n, _, s)| n == "rwbs" && *s >= 4)
        .map(|(_, o, _)| o)
        .filter(|&o| o < 256)
}

impl TraceFs {
    pub fn open() -> Result<TraceFs, String> {
        let root = PathBuf::from(ROOT);
        let lock = lock();
        if root.join("events").is_dir() {
            return Ok(TraceFs {
                root,
                mounted: None,
                _lock: lock,
            });
        }
        if !root.is_dir() {
            return Err(format!("{ROOT} does not exist (a kernel without tracefs)"));
        }
        rustix::mount::mount("nodev", &root, "tracefs", rustix::mount::MountFlags::empty(), None)
            .map_err(|e| format!("tracefs is not mounted at {ROOT} and mounting it failed: {e}"))?;
        // a kernel whose statx cannot tell mounts apart (before 5.8): the
        // tracefs is left mounted rather than risk unmounting another's
        Ok(TraceFs {
            mounted: mount_id(&root),
            root,
            _lock: lock,
        })
    }

    fn format(&self, cat: &str, ev: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join("events").join(cat).join(ev).join("format")).ok()
    }

    /// The layout of every event, or why the session cannot run at all.
    pub fn check(&self) -> Result<Layout, String> {
        let mut l = Layout {
            rwbs_insert: 34,
            rwbs_issue: 34,
            rwbs_complete: 34,
            rwbs_bio: 28,
            missing: Vec::new(),
            missing_events: Vec::new(),
        };
        for &(cat, ev, want) in EXPECTED {
            let verdict = match self.format(cat, ev) {
                None => Err("this kernel has no such tracepoint".to_string()),
                Some(f) => matches(&f, want).and_then(|()| {
                    if cat != "block" {
                        return Ok(());
                    }
                    let o = rwbs_offset(&f).ok_or("no field rwbs")?;
                    match ev {
                        "block_rq_insert" => l.rwbs_insert = o,
                        "block_rq_issue" => l.rwbs_issue = o,
                        "block_bio_queue" => l.rwbs_bio = o,
                        _ => l.rwbs_complete = o,
                    }
                    Ok(())
                }),
            };
            if let Err(why) = verdict {
                if cat == "sched" && ev == "sched_switch" {
                    return Err(format!("sched:sched_switch cannot be read: {why}"));
                }
                l.missing.push(format!("{cat}:{ev} left out: {why}"));
                l.missing_events.push((cat.to_string(), ev.to_string()));
            }
        }
        Ok(l)
    }
}

/// The id of the mount at `p` (statx, kernels since 5.8).
fn mount_id(p: &Path) -> Option<u64> {
    let st = rustix::fs::statx(
        rustix::fs::CWD,
        p,
        rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        rustix::fs::StatxFlags::MNT_ID,
    )
    .ok()?;
    (st.stx_mask & rustix::fs::StatxFlags::MNT_ID.bits() != 0).then_some(st.stx_mnt_id)
}

impl Drop for TraceFs {
    fn drop(&mut self) {
        // only the mount this session made: one another process stacked
        // over it meanwhile is theirs
        if self.mounted.is_some() && mount_id(&self.root) == self.mounted {
            // lazily: a reader that opened it meanwhile keeps its files
            let _ = rustix::mount::unmount(Path::new(&self.root), rustix::mount::UnmountFlags::DETACH);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "name: sched_switch\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n";

    #[test]
    fn formats_are_checked_field_by_field() {
        let f = fields(SWITCH);
        assert!(f.contains(&("prev_comm".to_string(), 8, 16)));
        assert!(matches(SWITCH, EXPECTED[0].2).is_ok());
        let moved = SWITCH.replace("offset:32;\tsize:8", "offset:28;\tsize:4");
        assert!(matches(&moved, EXPECTED[0].2).unwrap_err().contains("prev_state at 28"));
        let issue = "\tfield:char rwbs[10];\toffset:32;\tsize:10;\tsigned:0;\n";
        assert_eq!(rwbs_offset(issue), Some(32));
    }

    fn mount_tmpfs(at: &Path) {
        rustix::mount::mount("fslab-test", at, "tmpfs", rustix::mount::MountFlags::empty(), None).unwrap();
    }

    /// A session unmounts only the mount it made: one stacked over it
    /// meanwhile (a decoy with a file) survives, byte for byte; without the
    /// decoy, the session's own mount goes. Tmpfs stands in for tracefs.
    /// Needs root; skipped otherwise, failed under FSLAB_REQUIRE_ALL=1.
    #[test]
    fn a_session_unmounts_only_its_own_mount() {
        if !crate::testing::root_or_skip() {
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("tracing");
        std::fs::create_dir(&root).unwrap();
        let session = |id| TraceFs {
            root: root.clone(),
            mounted: id,
            _lock: None,
        };
        // the session's mount, then a decoy over it
        mount_tmpfs(&root);
        let own = mount_id(&root).expect("statx gives mount ids");
        mount_tmpfs(&root);
        let decoy = mount_id(&root).unwrap();
        let data = b"not fslab's".repeat(1000);
        std::fs::write(root.join("keep"), &data).unwrap();
        drop(session(Some(own)));
        let kept = mount_id(&root) == Some(decoy) && std::fs::read(root.join("keep")).ok() == Some(data);
        // cleanup whatever the outcome: the decoy, then the session's mount
        let _ = rustix::mount::unmount(&root, rustix::mount::UnmountFlags::empty());
        assert!(
            kept,
            "the decoy stacked over the session's tracefs was unmounted or changed"
        );
        assert_eq!(mount_id(&root), Some(own));
        // no decoy: the session's own mount is unmounted
        drop(session(Some(own)));
        let gone = mount_id(&root) != Some(own);
        if !gone {
            let _ = rustix::mount::unmount(&root, rustix::mount::UnmountFlags::empty());
        }
        assert!(gone, "the session's own mount was left");
        // a tracefs the session found (not mounted by it) is never unmounted
        mount_tmpfs(&root);
        let found = mount_id(&root);
        drop(session(None));
        let stayed = mount_id(&root) == found;
        let _ = rustix::mount::unmount(&root, rustix::mount::UnmountFlags::empty());
        assert!(stayed, "a mount the session found was unmounted");
    }
}
