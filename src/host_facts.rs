//! Facts about the host that every layer may ask: the mount table, whether
//! a path is on a kernel pseudo filesystem, whether fslab runs as root, the host name. Read
//! only, no fslab types: `plan` validates with them, `target` prepares with
//! them, so they sit at the bottom.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One line of /proc/self/mountinfo, the parts fslab uses.
#[derive(Debug, Clone, PartialEq)]
pub struct MountEntry {
    pub dev: (u32, u32),
    pub mount_point: PathBuf,
    pub fs_type: String,
    pub source: String,
    pub options: String,
    /// The directory of the source filesystem seen at the mount point: not
    /// `/` for a bind mount of a subdirectory.
    pub root: String,
}

/// Undoes mountinfo's octal escapes (`\040` is a space).
pub(crate) fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses mountinfo text; malformed lines are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|line| {
            let (pre, post) = line.split_once(" - ")?;
            let f: Vec<&str> = pre.split(' ').collect();
            let p: Vec<&str> = post.split(' ').collect();
            if f.len() < 6 || p.len() < 3 {
                return None;
            }
            let (ma, mi) = f[2].split_once(':')?;
            Some(MountEntry {
                dev: (ma.parse().ok()?, mi.parse().ok()?),
                mount_point: PathBuf::from(unescape(f[4])),
                fs_type: p[0].to_string(),
                source: unescape(p[1]),
                options: format!("{} ({})", f[5], p[2]),
                root: unescape(f[3]),
            })
        })
        .collect()
}

pub fn mounts() -> Vec<MountEntry> {
    parse_mountinfo(&std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default())
}

/// The mount a path lives on: same device number and the longest mount point
/// that is a prefix of the path (device numbers alone are ambiguous with bind
/// mounts, and btrfs subvolumes report anonymous ones, hence the fallback).
pub fn mount_of(path: &Path, entries: &[MountEntry]) -> Option<MountEntry> {
    let canon = path.canonicalize().ok()?;
    let dev = std::fs::metadata(&canon).ok()?.dev();
    let devpair = (rustix::fs::major(dev), rustix::fs::minor(dev));
    let best = |same_dev: bool| {
        entries
            .iter()
            .filter(|e| canon.starts_with(&e.mount_point) && (!same_dev || e.dev == devpair))
            .max_by_key(|e| e.mount_point.as_os_str().len())
            .cloned()
    };
    best(true).or_else(|| best(false))
}

/// The kernel's pseudo filesystems, by statfs magic (linux/magic.h): their
/// files are views of kernel state (sizes of 0 or 4096 whatever they hold,
/// writes that change settings), so measuring I/O or metadata on them means
/// nothing and writing to them can reconfigure the machine.
const PSEUDO_FS: &[(u32, &str)] = &[
    (0x9fa0, "procfs"),
    (0x6265_6572, "sysfs"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x0027_e0eb, "cgroup"),
    (0x6367_7270, "cgroup2"),
    (0x7363_6673, "securityfs"),
    (0x6165_676c, "pstore"),
    (0xcafe_4a11, "bpf"),
    (0x6265_6570, "configfs"),
    (0x1cd1, "devpts"),
    (0xde5e_81e4, "efivarfs"),
    (0x4249_4e4d, "binfmt_misc"),
    (0xf97c_ff8c, "selinuxfs"),
    (0x4341_5d53, "smackfs"),
    (0x1980_0202, "mqueue"),
    (0x6573_5543, "fusectl"),
    (0x6e73_6673, "nsfs"),
    (0x9584_58f6, "hugetlbfs"),
];
const TMPFS_MAGIC: u32 = 0x0102_1994;

/// The name of the pseudo filesystem `path` is on (procfs, sysfs, devtmpfs,
/// ...), or None for a filesystem worth measuring or a path statfs cannot see.
pub fn pseudo_fs(path: &Path) -> Option<&'static str> {
    let st = rustix::fs::statfs(path).ok()?;
    // f_type is a signed word; the magics are 32-bit patterns
    let magic = st.f_type as u64 as u32;
    if let Some((_, name)) = PSEUDO_FS.iter().find(|(m, _)| *m == magic) {
        return Some(name);
    }
    // devtmpfs is tmpfs inside (same magic): only the mount table tells
    if magic == TMPFS_MAGIC && mount_of(path, &mounts()).is_some_and(|m| m.fs_type == "devtmpfs") {
        return Some("devtmpfs");
    }
    None
}

/// Whether `path` is on a tmpfs (or devtmpfs, tmpfs inside): memory only,
/// the page cache and nothing under it.
pub fn is_tmpfs(path: &Path) -> bool {
    rustix::fs::statfs(path).is_ok_and(|st| st.f_type as u64 as u32 == TMPFS_MAGIC)
}

/// This machine's host name (uname's nodename).
pub fn hostname() -> String {
    rustix::system::uname().nodename().to_string_lossy().into_owned()
}

/// True when running as root (mount, mkfs and loop devices need it).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,errors=remount-ro
95 22 7:3 / /tmp/my\\040mnt rw,noatime shared:50 - xfs /dev/loop3 rw,attr2,inode64
96 22 0:45 / /run/x rw - tmpfs tmpfs rw,size=1024k
bogus line";

    #[test]
    fn parses_mountinfo_with_escapes() {
        let m = parse_mountinfo(SAMPLE);
        assert_eq!(m.len(), 3);
        assert_eq!(m[1].mount_point, PathBuf::from("/tmp/my mnt"));
        assert_eq!(m[1].fs_type, "xfs");
        assert_eq!(m[1].source, "/dev/loop3");
        assert_eq!(m[1].dev, (7, 3));
        assert_eq!(m[1].options, "rw,noatime (rw,attr2,inode64)");
    }

    #[test]
    fn finds_the_mount_of_the_current_directory() {
        let m = mount_of(Path::new("."), &mounts()).expect("cwd is on some mount");
        assert!(!m.fs_type.is_empty());
    }
}
