//! Lab cells under another kernel, in a QEMU virtual machine booted once
//! for a batch of cells (`batch`): each filesystem's scratch image (or the
//! plan's `device`) is a virtio-blk disk of the guest with `cache=none`,
//! the guest boots an initramfs fslab writes itself (`initramfs`,
//! `modules`) with fslab as its init (`guest`), runs the cells one after
//! another with the same plan code as on the host, each on a fresh
//! filesystem, and sends each result file back over a virtio-serial port
//! as it is written (`frames`). The host reads each as a normal result.
//!
//! Everything lives in a marked work directory (image, initramfs, console
//! log, result), so the guard removes it and `fslab cleanup` finds it after
//! a SIGKILL; QEMU is fslab's child with a parent-death signal, so it never
//! outlives fslab, and the abort path kills it by its pid first.

pub mod accel;
mod batch;
pub mod frames;
pub mod guest;
pub mod initramfs;
mod machine;
pub mod modules;

use crate::model::{Report, VmInfo};
use crate::plan::lab::vm::{KernelPlan, VmPlan};
use crate::plan::{FsKind, FsPlan};
pub use batch::{run_guest, CellResult, Ended};
use initramfs::{find_program, Initramfs};
pub use machine::{qemu_opt_value, qemu_version};
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    /// Modules to load, in order (`/fslab/modules/NNN-NAME.ko`).
    pub modules: Vec<String>,
    /// The disks' serials, in the order QEMU attaches them: the guest
    /// finds each (`/sys/block/vdX/serial`) before the first cell.
    pub disks: Vec<String>,
    /// The cells, in the order they run.
    pub cells: Vec<SpecCell>,
    /// The accelerator probe: say "up" and power off.
    pub probe: bool,
}

/// One cell of a guest's spec.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct SpecCell {
    /// `fslab` arguments of the cell (`run PLAN --guest-filesystem ...`);
    /// the guest adds `--guest-disk` with its disk's device.
    pub args: Vec<String>,
    /// Its disk (an index into `disks`).
    pub disk: Option<usize>,
    /// Discard the whole disk first (an image file of fslab's own: the
    /// cell starts on a sparse image, as on a disk of its own).
    pub discard: bool,
    /// The filesystem the kernel must have (checked in /proc/filesystems).
    pub fs_type: Option<String>,
}

/// One cell a guest runs: a filesystem of the plan and a workload on it.
#[derive(Clone, Copy)]
pub struct GuestCell<'a> {
    pub fs: &'a FsPlan,
    pub workload: &'a str,
}

/// A guest under `kernel` that boots once and runs `cells` in turn, each
/// on a fresh filesystem (made by the guest's fslab on the filesystem's
/// disk, discarded first when it is an image file).
pub struct Guest<'a> {
    pub kernel: &'a KernelPlan,
    pub vm: &'a VmPlan,
    pub cells: Vec<GuestCell<'a>>,
    /// `fslab run` arguments that rebuild the plan (LabPlan::guest_args).
    pub guest_args: &'a [String],
    /// Files the guest reads at the host's paths (LabPlan::guest_files).
    pub guest_files: &'a [PathBuf],
    pub scratch_dir: &'a Path,
}

/// Disks a guest may have: PCI slots of QEMU's default machine, less the
/// host bridge, the ISA bridge and the virtio-serial controller, with room
/// to spare. A batch with more filesystems is split into several boots.
pub const MAX_DISKS: usize = 24;

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
}
