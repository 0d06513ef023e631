//! The block-device stack under a target, top first: the target's device
//! (from `stat`: `st_rdev` of a block-device target, else `st_dev`), a
//! partition's disk, a loop device's backing file's device (recursively),
//! dm and md members (`/sys/block/X/slaves`). Read from `/sys`; a target on
//! no device (tmpfs) gives an empty stack and a note.

use crate::model::system::{DeviceData, DeviceRole};
use crate::model::TargetInfo;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// One device of the stack, before any sample.
#[derive(Debug, Clone, PartialEq)]
pub struct StackDevice {
    pub name: String,
    pub dev: String,
    pub role: DeviceRole,
    pub above: Option<String>,
    pub backing: Option<String>,
    pub direct_io: Option<bool>,
    pub scheduler: Option<String>,
}

impl StackDevice {
    pub fn to_data(&self) -> DeviceData {
        DeviceData {
            name: self.name.clone(),
            dev: self.dev.clone(),
            role: self.role,
            above: self.above.clone(),
            backing: self.backing.clone(),
            direct_io: self.direct_io,
            scheduler: self.scheduler.clone(),
            ..Default::default()
        }
    }
}

/// Where `/sys` is (tests point it at a fake tree).
#[derive(Debug, Clone)]
pub struct Sysfs {
    pub root: PathBuf,
}

impl Default for Sysfs {
    fn default() -> Self {
        Sysfs {
            root: PathBuf::from("/sys"),
        }
    }
}

/// The active scheduler of `/sys/block/X/queue/scheduler`: the bracketed one
/// ("mq-deadline kyber [none]" is "none").
pub fn active_scheduler(text: &str) -> Option<String> {
    let s = text
        .split_whitespace()
        .find(|w| w.starts_with('[') && w.ends_with(']'))?;
    Some(s.trim_matches(|c| c == '[' || c == ']').to_string())
}

impl Sysfs {
    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(rel))
            .ok()
            .map(|s| s.trim().to_string())
    }

    /// The kernel name of device `maj:min` and, for a partition, its disk.
    pub fn name_of(&self, maj: u32, min: u32) -> Option<(String, Option<String>)> {
        let link = self.root.join(format!("dev/block/{maj}:{min}"));
        let target = std::fs::read_link(&link).ok()?;
        let name = target.file_name()?.to_string_lossy().into_owned();
        let parent = if link.join("partition").exists() {
            target
                .parent()
                .and_then(|p| p.file_name())
                .map(|p| p.to_string_lossy().into_owned())
        } else {
            None
        };
        Some((name, parent))
    }

    fn dev_of(&self, name: &str) -> String {
        self.read(&format!("block/{name}/dev")).unwrap_or_default()
    }

    fn role_of(&self, name: &str) -> DeviceRole {
        let b = self.root.join("block").join(name);
        if b.join("loop").exists() {
            DeviceRole::Loop
        } else if b.join("dm").exists() {
            DeviceRole::Dm
        } else if b.join("md").exists() {
            DeviceRole::Md
        } else {
            DeviceRole::Disk
        }
    }

    fn slaves(&self, name: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.root.join("block").join(name).join("slaves"))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }

    /// The kernel names of every device in `/sys/block` (what the sampler reads).
    pub fn all_devices(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.root.join("block"))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }
}

/// The device number a path is on, for the stack: `st_rdev` of a block
/// device, else `st_dev`; None for an anonymous device (major 0: btrfs,
/// overlay, tmpfs), which the caller resolves through the mount source.
fn device_number(path: &Path) -> Option<(u32, u32)> {
    let m = std::fs::metadata(path).ok()?;
    let d = if m.file_type().is_block_device() {
        m.rdev()
    } else {
        m.dev()
    };
    let (ma, mi) = (rustix::fs::major(d), rustix::fs::minor(d));
    (ma != 0).then_some((ma, mi))
}

/// The block device a path lives on, through its mount's source when the
/// device number is anonymous.
fn resolve(path: &Path, fallback_source: Option<&str>, notes: &mut Vec<String>) -> Option<(u32, u32)> {
    if let Some(d) = device_number(path) {
        return Some(d);
    }
    let source = fallback_source.map(str::to_string).or_else(|| {
        let mounts = crate::host_facts::mounts();
        crate::host_facts::mount_of(path, &mounts).map(|m| m.source)
    });
    match source {
        Some(s) if s.starts_with('/') => {
            let p = Path::new(&s);
            match std::fs::metadata(p) {
                Ok(m) if m.file_type().is_block_device() => {
                    Some((rustix::fs::major(m.rdev()), rustix::fs::minor(m.rdev())))
                }
                _ => {
                    notes.push(format!("{}: on {s}, not a block device", path.display()));
                    None
                }
            }
        }
        Some(s) => {
            notes.push(format!("{}: on '{s}', no block device under it", path.display()));
            None
        }
        None => {
            notes.push(format!("{}: no block device found", path.display()));
            None
        }
    }
}

/// The stack under `target`, top first, and notes on what could not be
/// followed.
pub fn stack_of(target: &TargetInfo, sys: &Sysfs) -> (Vec<StackDevice>, Vec<String>) {
    let mut notes = Vec::new();
    let mut out: Vec<StackDevice> = Vec::new();
    if target.fs_type == "tmpfs" || target.fs_type == "ramfs" {
        notes.push(format!(
            "{} is on {}: no block device",
            target.path.display(),
            target.fs_type
        ));
        return (out, notes);
    }
    let top = resolve(&target.path, target.device.as_deref(), &mut notes).or_else(|| {
        // the target may be gone already (a scratch file removed): the device
        let d = target.device.as_deref()?;
        device_number(Path::new(d))
    });
    let Some((ma, mi)) = top else {
        return (out, notes);
    };
    walk(ma, mi, None, sys, &mut out, &mut notes, 0);
    (out, notes)
}

fn walk(
    ma: u32,
    mi: u32,
    above: Option<String>,
    sys: &Sysfs,
    out: &mut Vec<StackDevice>,
    notes: &mut Vec<String>,
    depth: usize,
) {
    if depth > 16 {
        notes.push("device stack deeper than 16: not followed further".into());
        return;
    }
    let Some((name, parent)) = sys.name_of(ma, mi) else {
        notes.push(format!("device {ma}:{mi} is not in /sys/dev/block"));
        return;
    };
    if out.iter().any(|d| d.name == name) {
        return;
    }
    let whole = parent.clone().unwrap_or_else(|| name.clone());
    let role = if parent.is_some() {
        DeviceRole::Partition
    } else {
        sys.role_of(&name)
    };
    let backing = (role == DeviceRole::Loop)
        .then(|| sys.read(&format!("block/{name}/loop/backing_file")))
        .flatten();
    out.push(StackDevice {
        name: name.clone(),
        dev: format!("{ma}:{mi}"),
        role,
        above,
        backing: backing.clone(),
        direct_io: (role == DeviceRole::Loop)
            .then(|| sys.read(&format!("block/{name}/loop/dio")).map(|v| v == "1"))
            .flatten(),
        scheduler: sys
            .read(&format!("block/{whole}/queue/scheduler"))
            .as_deref()
            .and_then(active_scheduler),
    });
    match role {
        DeviceRole::Partition => {
            let disk = parent.unwrap_or_default();
            let dev = sys.dev_of(&disk);
            if let Some((a, b)) = parse_dev(&dev) {
                walk(a, b, Some(name), sys, out, notes, depth + 1);
            }
        }
        DeviceRole::Loop => {
            if let Some(b) = backing {
                let file = b.trim_end_matches(" (deleted)");
                if let Some((a, m)) = resolve(Path::new(file), None, notes) {
                    walk(a, m, Some(name), sys, out, notes, depth + 1);
                }
            }
        }
        DeviceRole::Dm | DeviceRole::Md => {
            for s in sys.slaves(&name) {
                // a member partition has no /sys/block entry: its dev through the link
                let dev = sys.read(&format!("block/{name}/slaves/{s}/dev")).unwrap_or_default();
                if let Some((a, b)) = parse_dev(&dev) {
                    walk(a, b, Some(name.clone()), sys, out, notes, depth + 1);
                }
            }
        }
        DeviceRole::Disk => {}
    }
}

/// "254:0" as numbers.
pub fn parse_dev(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn reads_the_bracketed_scheduler() {
        assert_eq!(active_scheduler("mq-deadline kyber [none]\n").as_deref(), Some("none"));
        assert_eq!(active_scheduler("[mq-deadline] none").as_deref(), Some("mq-deadline"));
        assert_eq!(active_scheduler("none"), None);
    }

    /// A fake /sys: md0 over two partitions of two disks, sda1 a partition.
    fn fake() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let dev = |name: &str, path: &str, devno: &str, part: bool| {
            let d = r.join("devices").join(path);
            fs::create_dir_all(&d).unwrap();
            fs::write(d.join("dev"), format!("{devno}\n")).unwrap();
            if part {
                fs::write(d.join("partition"), "1\n").unwrap();
            }
            fs::create_dir_all(r.join("dev/block")).unwrap();
            std::os::unix::fs::symlink(&d, r.join("dev/block").join(devno)).unwrap();
            if !part {
                fs::create_dir_all(r.join("block")).unwrap();
                std::os::unix::fs::symlink(&d, r.join("block").join(name)).unwrap();
            }
        };
        dev("sda", "block/sda", "8:0", false);
        dev("sda1", "block/sda/sda1", "8:1", true);
        dev("sdb", "block/sdb", "8:16", false);
        dev("sdb1", "block/sdb/sdb1", "8:17", true);
        dev("md0", "virtual/block/md0", "9:0", false);
        fs::create_dir_all(r.join("devices/virtual/block/md0/md")).unwrap();
        fs::create_dir_all(r.join("devices/virtual/block/md0/slaves")).unwrap();
        for (s, p) in [("sda1", "block/sda/sda1"), ("sdb1", "block/sdb/sdb1")] {
            std::os::unix::fs::symlink(
                r.join("devices").join(p),
                r.join("devices/virtual/block/md0/slaves").join(s),
            )
            .unwrap();
        }
        fs::create_dir_all(r.join("devices/block/sda/queue")).unwrap();
        fs::write(r.join("devices/block/sda/queue/scheduler"), "[mq-deadline] none\n").unwrap();
        t
    }

    #[test]
    fn follows_md_members_and_partitions() {
        let t = fake();
        let sys = Sysfs { root: t.path().into() };
        let mut out = Vec::new();
        let mut notes = Vec::new();
        walk(9, 0, None, &sys, &mut out, &mut notes, 0);
        let got: Vec<(&str, DeviceRole, Option<&str>)> = out
            .iter()
            .map(|d| (d.name.as_str(), d.role, d.above.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("md0", DeviceRole::Md, None),
                ("sda1", DeviceRole::Partition, Some("md0")),
                ("sda", DeviceRole::Disk, Some("sda1")),
                ("sdb1", DeviceRole::Partition, Some("md0")),
                ("sdb", DeviceRole::Disk, Some("sdb1")),
            ]
        );
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(out[1].scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(out[2].scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(out[2].dev, "8:0");
    }

    #[test]
    fn this_machines_root_has_a_stack_or_a_note() {
        let ti = TargetInfo {
            path: "/".into(),
            kind: "directory".into(),
            ..Default::default()
        };
        let (s, notes) = stack_of(&ti, &Sysfs::default());
        assert!(!s.is_empty() || !notes.is_empty());
    }

    #[test]
    fn tmpfs_has_no_stack() {
        let ti = TargetInfo {
            path: "/dev/shm".into(),
            kind: "directory".into(),
            fs_type: "tmpfs".into(),
            ..Default::default()
        };
        let (s, notes) = stack_of(&ti, &Sysfs::default());
        assert!(s.is_empty());
        assert!(notes[0].contains("tmpfs"), "{notes:?}");
    }
}
