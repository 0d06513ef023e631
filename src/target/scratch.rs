//! Scratch filesystems: a sparse image file in a marked fslab directory, a
//! free loop device on it, mkfs, and a mount in that directory; or a tmpfs
//! mount; or the bare loop device (the `raw` baseline). The `Scratch` guard
//! undoes all of it when dropped, on every path out (normal end, error,
//! panic unwinding, Ctrl-C), and everything it makes is findable by `fslab
//! cleanup` after a SIGKILL: the directory is `fslab-<pid>-<n>` with fslab's
//! marker, the loop device's backing file lies in it, and the mount point is
//! its `mnt` subdirectory.
//!
//! The loop device is attached with `LOOP_CONFIGURE` and `LO_FLAGS_AUTOCLEAR`
//! while fslab holds it open, so the kernel itself detaches it once fslab's
//! descriptor and the mount are gone: even a SIGKILLed fslab leaves at most a
//! mount behind, never an orphaned loop device nobody holds.

use super::{io_err, make_workdir, refused, TargetError, MARKER};
use crate::model::ScratchInfo;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub use crate::plan::MKFS_TYPES;

const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;
const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
const LO_FLAGS_AUTOCLEAR: u32 = 4;
const LO_FLAGS_DIRECT_IO: u32 = 16;

/// `struct loop_info64` of <linux/loop.h>.
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// `struct loop_config` of <linux/loop.h>.
#[repr(C)]
struct LoopConfig {
    fd: u32,
    block_size: u32,
    info: LoopInfo64,
    reserved: [u64; 8],
}

/// A loop device fslab attached. Holding it open keeps it attached; with
/// autoclear, the kernel detaches it after the last close.
#[derive(Debug)]
pub struct LoopDev {
    pub path: PathBuf,
    file: Option<File>,
    /// Attached with `losetup` (old kernels): detached with `losetup -d`.
    via_losetup: bool,
}

impl LoopDev {
    /// Attaches `image` to a free loop device, with direct I/O to the image
    /// where the kernel allows it (so the host page cache does not sit under
    /// the filesystem being measured).
    pub fn attach(image: &Path) -> std::io::Result<LoopDev> {
        Self::attach_with(image, true)
    }

    /// `attach`, with or without direct I/O to the image (a plan's
    /// `loop_direct_io = false`: the host page cache under the device).
    pub fn attach_with(image: &Path, direct_io: bool) -> std::io::Result<LoopDev> {
        let backing = File::options().read(true).write(true).open(image)?;
        let ctl = File::options().read(true).write(true).open("/dev/loop-control")?;
        for _ in 0..20 {
            // SAFETY: LOOP_CTL_GET_FREE takes no argument and returns a device number.
            let n = unsafe { libc::ioctl(ctl.as_raw_fd(), LOOP_CTL_GET_FREE as _) };
            if n < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let path = PathBuf::from(format!("/dev/loop{n}"));
            let dev = match File::options().read(true).write(true).open(&path) {
                Ok(f) => f,
                // devtmpfs may not have made the node yet
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    continue;
                }
                Err(e) => return Err(e),
            };
            let mut name = [0u8; 64];
            let marker = format!("fslab-{}", std::process::id());
            name[..marker.len()].copy_from_slice(marker.as_bytes());
            let cfg = LoopConfig {
                fd: backing.as_raw_fd() as u32,
                block_size: 0,
                info: LoopInfo64 {
                    lo_device: 0,
                    lo_inode: 0,
                    lo_rdevice: 0,
                    lo_offset: 0,
                    lo_sizelimit: 0,
                    lo_number: 0,
                    lo_encrypt_type: 0,
                    lo_encrypt_key_size: 0,
                    lo_flags: LO_FLAGS_AUTOCLEAR | if direct_io { LO_FLAGS_DIRECT_IO } else { 0 },
                    lo_file_name: name,
                    lo_crypt_name: [0; 64],
                    lo_encrypt_key: [0; 32],
                    lo_init: [0; 2],
                },
                reserved: [0; 8],
            };
            // SAFETY: cfg is a valid loop_config that outlives the call.
            let r = unsafe { libc::ioctl(dev.as_raw_fd(), LOOP_CONFIGURE as _, &cfg as *const LoopConfig) };
            if r == 0 {
                return Ok(LoopDev {
                    path,
                    file: Some(dev),
                    via_losetup: false,
                });
            }
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                // someone else took it between GET_FREE and CONFIGURE
                Some(libc::EBUSY) => continue,
                // kernel before 5.8
                Some(libc::EINVAL) | Some(libc::ENOTTY) => return Self::attach_losetup(image, direct_io),
                _ => return Err(e),
            }
        }
        Err(std::io::Error::other("no free loop device after 20 tries"))
    }

    fn attach_losetup(image: &Path, direct_io: bool) -> std::io::Result<LoopDev> {
        let out = Command::new("losetup")
            .args([
                "--find",
                "--show",
                if direct_io { "--direct-io=on" } else { "--direct-io=off" },
            ])
            .arg(image)
            .stdin(Stdio::null())
            .output()?;
        if !out.status.success() {
            return Err(std::io::Error::other(format!(
                "losetup: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(LoopDev {
            path: PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()),
            file: None,
            via_losetup: true,
        })
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        if self.via_losetup {
            let _ = Command::new("losetup").arg("-d").arg(&self.path).status();
        } else if let Some(f) = self.file.take() {
            // Autoclear detaches on close when nothing else holds it; the
            // explicit clear covers a kernel that defers autoclear.
            // SAFETY: LOOP_CLR_FD takes no argument.
            unsafe { libc::ioctl(f.as_raw_fd(), LOOP_CLR_FD as _) };
        }
    }
}

/// A scratch filesystem (or raw loop device), undone when dropped.
#[derive(Debug)]
pub struct Scratch {
    /// Where workloads run: the mount point, or the loop device for raw.
    pub target: PathBuf,
    pub info: ScratchInfo,
    dir: PathBuf,
    mount_point: Option<PathBuf>,
    loopdev: Option<LoopDev>,
    /// The plan's block-queue settings, put back when dropped.
    queue: Option<super::queue::QueueGuard>,
    /// A plan's device, resolved once and held for the scratch's life:
    /// every tool gets its descriptor's path, never the plan's path again.
    held: Option<super::safety::HeldDevice>,
    /// A raw cell's exclusive claim on the plan's device, kept for the
    /// cell (the io cell shares it): nothing can mount or claim it meanwhile.
    claim: Option<super::safety::DeviceClaim>,
}

/// How to make a scratch filesystem.
#[derive(Debug, Clone)]
pub struct ScratchSpec<'a> {
    /// A type of `MKFS_TYPES`, "tmpfs" or "raw".
    pub fs_type: &'a str,
    pub mkfs_args: &'a [String],
    pub mount_options: Option<&'a str>,
    pub size: u64,
    /// An existing block device to format instead of an image (consent was
    /// checked by the caller).
    pub device: Option<&'a Path>,
    /// Block-queue settings for the device, for the scratch's lifetime.
    pub queue: &'a crate::plan::QueueSettings,
    /// Direct I/O from fslab's loop device to its image (None: on).
    pub loop_direct_io: Option<bool>,
}

fn run_tool(cmd: &mut Command, what: &str) -> Result<(), TargetError> {
    let out = cmd.stdin(Stdio::null()).output().map_err(|e| TargetError::Io {
        what: format!("running {what}"),
        source: e,
    })?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let text = err
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(3)
        .collect::<Vec<_>>()
        .join(" / ");
    Err(TargetError::Io {
        what: what.to_string(),
        source: std::io::Error::other(format!("{} ({})", text.trim(), out.status)),
    })
}

pub use crate::host_facts::is_root;

impl Scratch {
    /// Makes the scratch filesystem in a new marked directory under `scratch_dir`.
    pub fn create(spec: &ScratchSpec, scratch_dir: &Path) -> Result<Scratch, TargetError> {
        if !is_root() {
            return Err(refused(
                "--scratch",
                "scratch filesystems need root (loop devices, mkfs and mount); run as root or use an existing directory",
            ));
        }
        let dir = make_workdir(scratch_dir)?;
        let mut s = Scratch {
            target: PathBuf::new(),
            info: ScratchInfo {
                fs_type: spec.fs_type.to_string(),
                mkfs_args: spec.mkfs_args.to_vec(),
                mount_options: spec.mount_options.map(String::from),
                size: spec.size,
                ..Default::default()
            },
            dir,
            mount_point: None,
            loopdev: None,
            queue: None,
            held: None,
            claim: None,
        };
        s.build(spec)?;
        Ok(s)
    }

    fn build(&mut self, spec: &ScratchSpec) -> Result<(), TargetError> {
        let mnt = self.dir.join("mnt");
        if spec.fs_type == "tmpfs" {
            return self.build_tmpfs(spec, mnt);
        }
        // `dev`: what every tool opens (fslab's loop device, or the held
        // descriptor of a plan's device); `shown`: its name for records
        let (dev, shown, claim) = self.device(spec)?;
        // the device the cell really used, as the kernel named it when
        // claimed (a plan's symlink resolved)
        self.info.device = Some(shown.display().to_string());
        // before mkfs: the filesystem is made and used on the queue the plan asked for
        self.queue = super::queue::apply(&dev, spec.queue, &self.dir)?;
        self.info.queue_set = spec.queue.describe();
        if spec.fs_type == "raw" {
            // the io cell's own claim finds this one (by device number) and
            // shares it; it opens `dev`, the held descriptor's path
            self.claim = claim;
            self.target = dev;
            return Ok(());
        }
        // Released just before mkfs and mount: both open the device O_EXCL
        // themselves and would fail (EBUSY) while fslab holds it. The held
        // descriptor (not exclusive) stays: see `safety::HeldDevice`.
        drop(claim);
        // Quiet, and forced: the image is new (or the device's consent was given).
        let force: &[&str] = match spec.fs_type {
            "xfs" | "btrfs" => &["-f"],
            _ => &["-F", "-q"],
        };
        run_tool(
            Command::new(format!("mkfs.{}", spec.fs_type))
                .args(force)
                .args(spec.mkfs_args)
                .arg(&dev),
            &format!("mkfs.{} {}", spec.fs_type, spec.mkfs_args.join(" ")),
        )?;
        if let Some(h) = &self.held {
            // fslab's own filesystem: the next cell's check lets it be
            super::safety::made(h.rdev(), spec.fs_type);
        }
        std::fs::create_dir(&mnt).map_err(io_err(format!("creating {}", mnt.display())))?;
        record(&self.dir, spec.fs_type, &shown.to_string_lossy())?;
        let mut cmd = Command::new("mount");
        cmd.args(["-t", spec.fs_type]);
        if let Some(o) = spec.mount_options {
            cmd.args(["-o", o]);
        }
        run_tool(
            cmd.arg(&dev).arg(&mnt),
            &format!(
                "mount -t {} -o {}",
                spec.fs_type,
                spec.mount_options.unwrap_or("defaults")
            ),
        )?;
        record_seen(&self.dir);
        self.mount_point = Some(mnt.clone());
        super::live::add_mount(&mnt);
        self.target = mnt;
        Ok(())
    }

    /// A cell's target as a reader knows it: a raw cell on a plan's device
    /// ran on the held descriptor's /proc path, which says nothing to a
    /// reader; its report names the device it held instead.
    pub fn relabel(&self, t: &mut crate::model::TargetInfo) {
        let (Some(h), Some(d)) = (&self.held, &self.info.device) else {
            return;
        };
        let proc = h.path();
        if t.path == proc {
            t.path = PathBuf::from(d);
        }
        if t.device.as_deref().map(Path::new) == Some(proc.as_path()) {
            t.device = Some(d.clone());
            (t.loop_backing_file, t.loop_direct_io) = super::info::loop_backing(&h.shown().display().to_string());
        }
    }

    /// A tmpfs of `spec.size` mounted at `mnt`.
    fn build_tmpfs(&mut self, spec: &ScratchSpec, mnt: PathBuf) -> Result<(), TargetError> {
        std::fs::create_dir(&mnt).map_err(io_err(format!("creating {}", mnt.display())))?;
        let mut opts = format!("size={}", spec.size);
        if let Some(o) = spec.mount_options {
            opts = format!("{opts},{o}");
        }
        let source = format!("fslab-{}", std::process::id());
        record(&self.dir, "tmpfs", &source)?;
        run_tool(
            Command::new("mount")
                .args(["-t", "tmpfs", "-o", &opts, &source])
                .arg(&mnt),
            "mount -t tmpfs",
        )?;
        record_seen(&self.dir);
        self.mount_point = Some(mnt.clone());
        super::live::add_mount(&mnt);
        self.target = mnt;
        Ok(())
    }

    /// The device the filesystem goes on: the plan's own (claimed and
    /// checked again here, as the cell starts: the plan's check may be long
    /// past; then held, `self.held`), or a loop device on a new sparse image.
    /// (the path tools open, its name for records, the claim)
    #[allow(clippy::type_complexity)]
    fn device(
        &mut self,
        spec: &ScratchSpec,
    ) -> Result<(PathBuf, PathBuf, Option<super::safety::DeviceClaim>), TargetError> {
        let mut claim = None;
        let dev = match spec.device {
            Some(d) => {
                // the plan's path is resolved here, once
                let c = super::safety::claim_consented(d, &super::info::mounts()).map_err(|e| match e {
                    super::safety::SafetyError::Io { what, source } => TargetError::Io { what, source },
                    why => refused(
                        "--allow-device",
                        format!("refusing to use {} for a {} cell: {why}", d.display(), spec.fs_type),
                    ),
                })?;
                let h = c.hold().map_err(io_err(format!("holding {}", d.display())))?;
                let paths = (h.path(), h.shown().to_path_buf());
                self.held = Some(h);
                claim = Some(c);
                return Ok((paths.0, paths.1, claim));
            }
            None => {
                let image = self.dir.join("fs.img");
                let f = File::create(&image).map_err(io_err(format!("creating {}", image.display())))?;
                f.set_len(spec.size)
                    .map_err(io_err(format!("sizing {}", image.display())))?;
                drop(f);
                let l = LoopDev::attach_with(&image, spec.loop_direct_io.unwrap_or(true))
                    .map_err(io_err(format!("attaching {} to a loop device", image.display())))?;
                let p = l.path.clone();
                (_, self.info.loop_direct_io) = super::info::loop_backing(&p.display().to_string());
                self.loopdev = Some(l);
                p
            }
        };
        Ok((dev.clone(), dev, claim))
    }
}

/// Records in `dir`'s marker, before mounting, the mount fslab makes at
/// `dir/mnt`: the only one `fslab cleanup` or an abort ever detaches there.
fn record(dir: &Path, fs_type: &str, source: &str) -> Result<(), TargetError> {
    super::marker::record_mount(dir, "mnt", fs_type, source)
        .map_err(io_err(format!("writing {}", dir.join(MARKER).display())))
}

/// The same, with the names mountinfo shows once mounted. Not fatal: the
/// record written before mounting stands (and the mount must still be undone).
fn record_seen(dir: &Path) {
    let _ = super::marker::record_mounted(dir, "mnt");
}

/// Unmounts `mnt`, waiting out a short busy spell, then detaching lazily.
pub fn unmount(mnt: &Path) -> std::io::Result<()> {
    use rustix::mount::{unmount, UnmountFlags};
    for _ in 0..20 {
        match unmount(mnt, UnmountFlags::empty()) {
            Ok(()) => return Ok(()),
            Err(rustix::io::Errno::BUSY) => std::thread::sleep(std::time::Duration::from_millis(100)),
            Err(e) => return Err(e.into()),
        }
    }
    unmount(mnt, UnmountFlags::DETACH).map_err(Into::into)
}

/// Whether `p` is the root of a mount: its device differs from its parent's
/// (or it is its parent, `/`). Unknown (an error) counts as mounted.
fn is_mount_point(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::symlink_metadata(p), p.parent().map(std::fs::symlink_metadata)) {
        (Ok(m), Some(Ok(up))) => m.dev() != up.dev() || m.ino() == up.ino(),
        (Err(e), _) if e.kind() == std::io::ErrorKind::NotFound => false,
        _ => true,
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // an abort must not detach or remove any of this half-way through
        let _serial = crate::interrupt::serial();
        // put back once the filesystem is gone (or on the way out if it stays)
        let queue = self.queue.take();
        if let Some(m) = self.mount_point.take() {
            match unmount(&m) {
                Ok(()) => {}
                // EINVAL: not a mount point (any more): someone detached it
                // already, which is what this was to do
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) && !is_mount_point(&m) => {}
                Err(e) => {
                    // Never remove the directory over a live mount.
                    eprintln!("fslab: warning: could not unmount {}: {e}", m.display());
                    return;
                }
            }
            super::live::remove_mount(&m);
        }
        drop(queue);
        drop(self.claim.take());
        drop(self.held.take());
        drop(self.loopdev.take());
        super::remove_marked(&self.dir);
    }
}

/// Writes dirty pages and drops the page cache, dentries and inodes, so one
/// cell does not start with another's cache. Needs root.
pub fn drop_caches() -> std::io::Result<()> {
    rustix::fs::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_are_told_from_plain_directories() {
        let d = tempfile::tempdir().unwrap();
        assert!(!is_mount_point(d.path()));
        assert!(
            !is_mount_point(&d.path().join("gone")),
            "a directory removed is no mount"
        );
        assert!(is_mount_point(Path::new("/proc")));
    }
}
