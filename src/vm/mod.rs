//! A lab cell under another kernel, in a QEMU virtual machine: the cell's
//! scratch image (or the plan's `device`) is the guest's virtio-blk disk
//! with `cache=none`, the guest boots an initramfs fslab writes itself
//! (`initramfs`, `modules`) with fslab as its init (`guest`), runs the one
//! cell with the same plan code as on the host, and sends the result file
//! back over a virtio-serial port. The host reads it as a normal result.
//!
//! Everything lives in a marked work directory (image, initramfs, console
//! log, result), so the guard removes it and `fslab cleanup` finds it after
//! a SIGKILL; QEMU is fslab's child with a parent-death signal, so it never
//! outlives fslab, and the abort path kills it by its pid first.

pub mod accel;
pub mod guest;
pub mod initramfs;
mod machine;
pub mod modules;

use crate::model::{Report, VmInfo};
use crate::plan::lab::vm::{KernelPlan, VmPlan, QEMU};
use crate::plan::{FsKind, FsPlan};
use crate::target::safety::DeviceClaim;
use initramfs::{find_program, Initramfs};
use machine::{direct_ok, BootFiles, Machine, Vm, Wait};
pub use machine::{qemu_opt_value, qemu_version};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

pub use crate::plan::lab::vm::GUEST_DISK;

/// The name of the guest's result port (`/sys/class/virtio-ports/*/name`).
pub const RESULT_PORT: &str = "fslab.result";

/// How long a guest cell may take when the plan's `[vm] timeout` is not set.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// Lines of the guest's console a failed cell shows.
pub const CONSOLE_TAIL: usize = 15;

/// What the guest's init does (`/fslab/spec.json`).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct GuestSpec {
    /// `fslab` arguments of the cell (`run PLAN --guest-filesystem ...`).
    pub args: Vec<String>,
    /// Modules to load, in order (`/fslab/modules/NNN-NAME.ko`).
    pub modules: Vec<String>,
    /// Wait for the disk before the cell starts.
    pub disk: bool,
    /// The filesystem the kernel must have (checked in /proc/filesystems).
    pub fs_type: Option<String>,
    /// The accelerator probe: say "up" and power off.
    pub probe: bool,
}

/// One cell to run in a guest.
pub struct VmCell<'a> {
    pub kernel: &'a KernelPlan,
    pub vm: &'a VmPlan,
    pub fs: &'a FsPlan,
    pub workload: &'a str,
    /// `fslab run` arguments that rebuild the plan (LabPlan::guest_args).
    pub guest_args: &'a [String],
    /// Files the guest reads at the host's paths (LabPlan::guest_files).
    pub guest_files: &'a [PathBuf],
    pub scratch_dir: &'a Path,
}

/// Why a guest cell has no result.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    #[error("{msg}{}", tail_text(.console))]
    Failed { msg: String, console: Vec<String> },
    #[error("interrupted")]
    Interrupted,
}

fn tail_text(console: &[String]) -> String {
    if console.is_empty() {
        String::new()
    } else {
        format!("; the guest's console ended with:\n    {}", console.join("\n    "))
    }
}

fn failed(msg: impl Into<String>) -> VmError {
    VmError::Failed {
        msg: msg.into(),
        console: Vec::new(),
    }
}

/// The guest's result and how its VM ran.
pub struct GuestResult {
    pub report: Report,
    /// The guest fslab's exit status (1: its cell failed; the report says why).
    pub status: i32,
    pub vm: VmInfo,
}

/// The line a panicking kernel prints first.
const PANIC: &str = "Kernel panic";

/// The last `n` non-empty lines of the console log, control characters
/// dropped; after a kernel panic, the panic's line and the `n - 1` after it
/// (the backtrace that follows would push it out of a plain tail).
pub fn console_tail(path: &Path, n: usize) -> Vec<String> {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<String> = text
        .lines()
        .map(|l| l.chars().filter(|c| !c.is_control() || *c == '\t').collect::<String>())
        .filter(|l| !l.trim().is_empty())
        .collect();
    let from = match lines.iter().position(|l| l.contains(PANIC)) {
        Some(p) => p.min(lines.len().saturating_sub(n)),
        None => lines.len().saturating_sub(n),
    };
    lines[from..(from + n).min(lines.len())].to_vec()
}

/// The tools a guest cell runs for a filesystem type.
fn tools(fs: &FsPlan) -> Vec<String> {
    let mut t: Vec<String> = ["blkid", "wipefs", "mount", "umount"].map(String::from).to_vec();
    if let FsKind::Mkfs { fs_type, .. } = &fs.kind {
        t.push(format!("mkfs.{fs_type}"));
    }
    t
}

/// The filesystem type the guest's kernel must have, if any.
fn needed_fs(fs: &FsPlan) -> Option<String> {
    match &fs.kind {
        FsKind::Mkfs { fs_type, .. } => Some(fs_type.clone()),
        FsKind::Tmpfs => Some("tmpfs".into()),
        _ => None,
    }
}

/// Writes the initramfs for `spec` to `path`: fslab as /init, the tools,
/// the modules (named in `spec.modules`, in order), the files.
fn write_initramfs(
    path: &Path,
    spec: &GuestSpec,
    tools: &[String],
    mods: &[modules::Module],
    files: &[PathBuf],
) -> Result<(), String> {
    // a new file in fslab's own new work directory
    let f = std::fs::File::create_new(path).map_err(|e| format!("creating {}: {e}", path.display()))?;
    let mut a = Initramfs::new(BufWriter::new(f));
    let io = |e: std::io::Error| format!("writing the initramfs: {e}");
    for d in ["dev", "proc", "sys", "tmp", "run", "var/tmp", "root", "mnt"] {
        a.dir(Path::new(d)).map_err(io)?;
    }
    a.char_dev(Path::new("dev/console"), 5, 1).map_err(io)?;
    a.char_dev(Path::new("dev/null"), 1, 3).map_err(io)?;
    let me = std::env::current_exe().map_err(|e| format!("finding fslab's own binary: {e}"))?;
    a.program(&me, Path::new("init")).map_err(io)?;
    for t in tools {
        let p =
            find_program(t).ok_or_else(|| format!("{t} is not installed on the host, and the guest cell runs it"))?;
        // at its host path: fslab finds it on the guest's PATH as on the host's
        a.program(&p, &initramfs::archive_path(&p)).map_err(io)?;
    }
    for (i, m) in mods.iter().enumerate() {
        a.file(&guest::module_archive_path(i, &m.name), 0o644, &m.data)
            .map_err(io)?;
    }
    for f in files {
        a.host_file(f).map_err(io)?;
    }
    let json = serde_json::to_vec_pretty(spec).expect("the spec serialises");
    a.file(&Path::new(initramfs::SPEC_DIR).join("spec.json"), 0o644, &json)
        .map_err(io)?;
    let mut w = a.finish().map_err(io)?;
    std::io::Write::flush(&mut w).map_err(io)?;
    Ok(())
}

/// Checks up front, before any cell, what each VM kernel's guests will
/// load from its modules directory: the virtio modules a guest needs (as
/// files or in modules.builtin), each filesystem's module, and that every
/// module resolves to a kernel object within `modules`' bounds. Without
/// this a missing virtio_console showed only as "the guest powered off
/// without a result".
pub fn check_plan(lab: &crate::plan::LabPlan) -> Result<(), crate::plan::PlanError> {
    for k in &lab.kernels {
        let Some(dir) = &k.modules else { continue };
        let mut wanted: Vec<&str> = modules::BASE.to_vec();
        let mut required = vec!["virtio_pci", "virtio_console"];
        let fs_types: Vec<String> = lab.filesystems.iter().filter_map(needed_fs).collect();
        for t in &fs_types {
            wanted.extend(modules::for_fs(t));
            if t != "tmpfs" {
                required.push(t);
            }
        }
        if lab
            .filesystems
            .iter()
            .any(|f| !matches!(f.kind, FsKind::Tmpfs | FsKind::Dir { .. }))
        {
            required.push("virtio_blk");
        }
        modules::check(dir, &wanted, &required).map_err(|e| crate::plan::PlanError::new(k.origin.clone(), e))?;
    }
    Ok(())
}

/// The guest's disk: the plan's device (its claim, and its path as
/// claimed with a descriptor of it), a fresh image in `dir`, or none
/// (tmpfs, a directory). The claim first: it is released after the
/// descriptor QEMU had.
type Disk = (Option<DeviceClaim>, Option<(PathBuf, File)>);

/// Runs one cell in a guest under `c.kernel`: its work directory, disk,
/// accelerator, modules and initramfs, then the VM until it powers off,
/// then its result.
pub fn run_cell(c: &VmCell, stop: &AtomicBool) -> Result<GuestResult, VmError> {
    let image = c.kernel.image.as_deref().expect("a VM kernel has an image");
    let dir = crate::target::make_workdir(c.scratch_dir).map_err(|e| failed(e.to_string()))?;
    let _guard = crate::target::Guard::for_workdir(dir.clone());
    let (mut claim, disk) = guest_disk(c, &dir)?;
    let cache = match &disk {
        Some((_, f)) if !direct_ok(f) => "writeback",
        _ => "none",
    };
    let accel = accel::choose(c.kernel, c.vm, &dir, stop)?;
    let mut wanted: Vec<&str> = modules::BASE.to_vec();
    if let Some(t) = needed_fs(c.fs) {
        wanted.extend(modules::for_fs(&t));
    }
    let mods = match &c.kernel.modules {
        Some(m) => modules::resolve(m, &wanted).map_err(failed)?,
        None => Vec::new(),
    };
    let spec = GuestSpec {
        args: guest_args(c, disk.is_some(), claim.is_some()),
        modules: mods.iter().map(|m| m.name.clone()).collect(),
        disk: disk.is_some(),
        fs_type: needed_fs(c.fs),
        probe: false,
    };
    let initrd = dir.join("initramfs.cpio");
    write_initramfs(&initrd, &spec, &tools(c.fs), &mods, c.guest_files).map_err(failed)?;
    let (console, result) = (dir.join("console.log"), dir.join("result.bin"));
    let f = BootFiles::open(image, &initrd, &console, &result).map_err(failed)?;
    let m = Machine {
        image: &f.image,
        initrd: &f.initrd,
        console: &f.console,
        result: &f.result,
        disk: disk.as_ref().map(|(_, f)| (f, cache)),
        kvm: accel.kvm,
        cpus: c.vm.cpus,
        memory: c.vm.memory,
    };
    let started = Instant::now();
    let mut vm = Vm::start(&m).map_err(failed)?;
    let status = wait_for_guest(&mut vm, started, c.vm, stop, &console)?;
    let boot_to_result = started.elapsed();
    let (gstatus, report) = read_result(&result, &console, status, &mut vm)?;
    drop(vm);
    if let (Some(_), Some(cl)) = (&disk, claim.take()) {
        // fslab's own filesystem now: the next cell's check lets it be
        let ty = match &c.fs.kind {
            FsKind::Mkfs { fs_type, .. } => fs_type.as_str(),
            _ => "raw",
        };
        crate::target::safety::made(cl.rdev(), ty);
    }
    let cell_ns = report.cells.iter().map(|c| c.elapsed_ns).sum::<u64>();
    let boot_ns = boot_to_result.as_nanos() as u64;
    let info = VmInfo {
        image: image.display().to_string(),
        accel: if accel.kvm { "kvm" } else { "tcg" }.into(),
        accel_reason: accel.reason,
        emulated: !accel.kvm,
        cpus: c.vm.cpus,
        memory_bytes: c.vm.memory,
        disk: match &disk {
            Some((d, _)) if d.starts_with(&dir) => format!("virtio-blk, cache={cache}, a sparse raw image file"),
            Some((d, _)) => format!("virtio-blk, cache={cache}, the host's {}", d.display()),
            None => "none (tmpfs in the guest's memory)".into(),
        },
        qemu: qemu_version(),
        boot_to_result_ns: boot_ns,
        overhead_ns: boot_ns.saturating_sub(cell_ns),
        guest: report.host.clone(),
    };
    Ok(GuestResult {
        report,
        status: gstatus,
        vm: info,
    })
}

/// The guest's disk: the plan's device, claimed and checked again as on
/// the host (its O_EXCL claim, held until QEMU is gone, keeps anyone from
/// mounting it under the guest; QEMU's own open is not exclusive), or a
/// fresh sparse image of the plan's size in fslab's own new directory.
fn guest_disk(c: &VmCell, dir: &Path) -> Result<Disk, VmError> {
    match &c.fs.kind {
        FsKind::Mkfs { device: Some(d), .. } | FsKind::Raw { device: Some(d) } => {
            let held = crate::target::safety::claim_consented(d, &crate::target::info::mounts())
                .map_err(|e| failed(format!("refusing to use {} for a guest cell: {e}", d.display())))?;
            // QEMU gets this descriptor, opened through the claim's own
            // (never the path again) and checked to be the claimed device
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(held.path())
                .map_err(|e| failed(format!("opening {}: {e}", d.display())))?;
            held.check_same(&f).map_err(|e| failed(e.to_string()))?;
            // named as the kernel resolved it when claimed (a plan's
            // symlink shows the device it pointed to then)
            let shown = std::fs::read_link(held.path()).unwrap_or_else(|_| d.clone());
            Ok((Some(held), Some((shown, f))))
        }
        FsKind::Tmpfs | FsKind::Dir { .. } => Ok((None, None)),
        _ => {
            let p = dir.join("disk.img");
            let f = std::fs::File::options()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&p)
                .map_err(|e| failed(format!("creating {}: {e}", p.display())))?;
            f.set_len(c.fs.size)
                .map_err(|e| failed(format!("sizing {} to {} bytes: {e}", p.display(), c.fs.size)))?;
            Ok((None, Some((p, f))))
        }
    }
}

/// The guest fslab's arguments: the plan's (`LabPlan::guest_args`) and the
/// one cell, on the guest's disk when it has one (`claimed`: the plan's
/// device).
fn guest_args(c: &VmCell, disk: bool, claimed: bool) -> Vec<String> {
    let mut args = c.guest_args.to_vec();
    args.extend([
        "--guest-filesystem".to_string(),
        c.fs.name.clone(),
        "--guest-workload".to_string(),
        c.workload.to_string(),
        "--scratch-dir".to_string(),
        "/var/tmp".to_string(),
    ]);
    if disk {
        args.push("--allow-device".into());
    }
    // The host's check above decided for the plan's device (what is on it is
    // fslab's own from an earlier cell, or forced); the guest sees only a
    // signature on /dev/vda and would refuse the second cell on it.
    if claimed && !args.iter().any(|a| a == "--force-overwrite") {
        args.push("--force-overwrite".into());
    }
    args
}

/// Waits for the VM to power off within the plan's timeout (`[vm]
/// timeout`, else `DEFAULT_TIMEOUT` from `started`): QEMU's exit status.
fn wait_for_guest(
    vm: &mut Vm,
    started: Instant,
    plan: &VmPlan,
    stop: &AtomicBool,
    console: &Path,
) -> Result<std::process::ExitStatus, VmError> {
    let limit = plan.timeout.unwrap_or(DEFAULT_TIMEOUT);
    match vm.wait(started + limit, stop, || false) {
        Wait::Stopped => Err(VmError::Interrupted),
        Wait::TimedOut => Err(VmError::Failed {
            msg: format!(
                "the guest gave no result within {} (a hang, or set [vm] timeout)",
                humantime::format_duration(limit)
            ),
            console: console_tail(console, CONSOLE_TAIL),
        }),
        Wait::Error(e) => Err(failed(format!("waiting for {QEMU}: {e}"))),
        Wait::Exited(st) => Ok(st),
    }
}

/// The guest's status and report from its result file; without a whole
/// frame, why (a panic, QEMU's failure, the guest's own last word) with
/// the console's tail.
fn read_result(
    result: &Path,
    console: &Path,
    status: std::process::ExitStatus,
    vm: &mut Vm,
) -> Result<(i32, Report), VmError> {
    let tail = || console_tail(console, CONSOLE_TAIL);
    let frame = std::fs::read(result).unwrap_or_default();
    let (gstatus, body) = match parse_frame(&frame) {
        Some(f) => f,
        None => {
            let console = tail();
            let why = if console.iter().any(|l| l.contains(PANIC)) {
                "the guest kernel panicked".to_string()
            } else if !status.success() {
                format!("{QEMU} failed ({status}): {}", vm.stderr())
            } else {
                // the guest's own last word, when it said why
                match console.iter().rev().find_map(|l| l.split_once("fslab-guest: error: ")) {
                    Some((_, why)) => format!("the guest powered off without a result: {why}"),
                    None => "the guest powered off without a result".to_string(),
                }
            };
            return Err(VmError::Failed { msg: why, console });
        }
    };
    let body = match body {
        Ok(json) => json,
        Err(msg) => return Err(VmError::Failed { msg, console: tail() }),
    };
    let text = String::from_utf8_lossy(body);
    let report = crate::model::parse_report(&text).map_err(|e| VmError::Failed {
        msg: format!("the guest's result does not read: {e:?}"),
        console: tail(),
    })?;
    Ok((gstatus, report))
}

/// The guest's frame (`guest::frame`): its status and the JSON, or the
/// guest's error message. None: no whole frame arrived.
fn parse_frame(b: &[u8]) -> Option<(i32, Result<&[u8], String>)> {
    let start = b.windows(13).position(|w| w == b"FSLAB-RESULT ")?;
    let b = &b[start..];
    let nl = b.iter().position(|&c| c == b'\n')?;
    let head = std::str::from_utf8(&b[..nl]).ok()?;
    let field = |k: &str| head.split_whitespace().find_map(|f| f.strip_prefix(k));
    let status: i32 = field("status=")?.parse().ok()?;
    let len: usize = field("len=")?.parse().ok()?;
    let body = b.get(nl + 1..nl + 1 + len)?;
    if !b[nl + 1 + len..].starts_with(b"\nFSLAB-END\n") {
        return None;
    }
    Some((
        status,
        if field("kind=") == Some("error") {
            Err(String::from_utf8_lossy(body).into_owned())
        } else {
            Ok(body)
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_console_tail_keeps_a_panics_line() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("console.log");
        let mut text = String::from("boot\n");
        text.push_str("[ 3.4] Kernel panic - not syncing: sysrq triggered crash\n");
        for i in 0..40 {
            text.push_str(&format!("[ 3.5] trace {i}\n"));
        }
        std::fs::write(&p, &text).unwrap();
        let t = console_tail(&p, 5);
        assert_eq!(t.len(), 5);
        assert!(t[0].contains("Kernel panic"), "{t:?}");
        std::fs::write(&p, "a\n\nb\x1b\nc\n").unwrap();
        assert_eq!(console_tail(&p, 2), vec!["b", "c"]);
    }

    #[test]
    fn a_frame_reads_back_and_a_cut_one_does_not() {
        let f = guest::frame(1, b"{\"a\":1}", false);
        let mut noisy = b"garbage before".to_vec();
        noisy.extend_from_slice(&f);
        let (st, body) = parse_frame(&noisy).unwrap();
        assert_eq!(st, 1);
        assert_eq!(body.unwrap(), b"{\"a\":1}");
        assert!(parse_frame(&f[..f.len() - 3]).is_none());
        let e = guest::frame(125, b"no disk", true);
        assert_eq!(parse_frame(&e).unwrap().1.unwrap_err(), "no disk");
    }
}
