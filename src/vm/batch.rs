//! One guest, booted once, running a batch of cells (`Guest`): the host
//! makes the work directory, one disk per filesystem of the batch (a
//! fresh sparse image, or the plan's claimed device), the initramfs with
//! every cell's tools and modules, and boots QEMU; the guest runs the
//! cells in the batch's order, a fresh filesystem each on its disk, and
//! sends each result as soon as it has it. The host hands each cell on as
//! it arrives, so a guest that dies later (panic, timeout) keeps the cells
//! it finished and fails the rest with the reason.

use super::frames::{parse_frames, Frame};
use super::machine::{direct_ok, BootFiles, Disk, Machine, Vm, Wait};
use super::{
    accel, console_tail, failed, modules, needed_fs, tools, write_initramfs, Guest, GuestCell, GuestResult, GuestSpec,
    SpecCell, VmError, CONSOLE_TAIL, DEFAULT_TIMEOUT, PANIC,
};
use crate::model::VmInfo;
use crate::plan::lab::vm::QEMU;
use crate::plan::{FsKind, FsPlan};
use crate::target::safety::DeviceClaim;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// How one cell of a guest ended.
pub type CellResult = Result<GuestResult, VmError>;

/// How often the host looks for new results while the guest runs.
const POLL: Duration = Duration::from_millis(250);

/// How a guest's batch ended: every cell handed on (a result or a
/// failure), or stopped (Ctrl-C) with the cells before it handed on.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    All,
    Interrupted,
}

/// Why the batch stopped early: the guest (the cells not handed on yet
/// fail with it), or the host's handler.
enum Stop<E> {
    Vm(VmError),
    Host(E),
}

impl<E> From<VmError> for Stop<E> {
    fn from(e: VmError) -> Self {
        Stop::Vm(e)
    }
}

/// Runs the cells of `g` in one guest, calling `done(i, result)` for each
/// cell `i` in order as it ends: its result, its own failure, or, once the
/// guest died or could not start, the reason. An error of `done` ends the
/// batch (the VM is killed) and is returned.
pub fn run_guest<E>(
    g: &Guest,
    stop: &AtomicBool,
    mut done: impl FnMut(usize, CellResult) -> Result<(), E>,
) -> Result<Ended, E> {
    let mut next = 0;
    let r = boot_and_run(g, stop, &mut |i, res| {
        next = i + 1;
        done(i, res)
    });
    match r {
        Ok(()) => Ok(Ended::All),
        Err(Stop::Host(e)) => Err(e),
        Err(Stop::Vm(VmError::Interrupted)) => Ok(Ended::Interrupted),
        Err(Stop::Vm(VmError::Failed { msg, console })) => {
            for i in next..g.cells.len() {
                let msg = if i == next {
                    msg.clone()
                } else {
                    format!("{msg} (before this cell, which never started)")
                };
                let console = console.clone();
                done(i, Err(VmError::Failed { msg, console }))?;
            }
            Ok(Ended::All)
        }
    }
}

/// A disk of the guest: the plan's claimed device or fslab's own image.
struct HostDisk {
    /// The plan's device, claimed: held until QEMU is gone (the VM is
    /// killed before the disks are dropped).
    claim: Option<DeviceClaim>,
    /// As the cell's result names it.
    shown: PathBuf,
    file: File,
    cache: &'static str,
    /// fslab's own image (discarded before each cell).
    image: bool,
}

/// The work directory, disks, accelerator, modules and initramfs, the
/// boot, and the results as they come (`results`).
fn boot_and_run<E>(
    g: &Guest,
    stop: &AtomicBool,
    done: &mut dyn FnMut(usize, CellResult) -> Result<(), E>,
) -> Result<(), Stop<E>> {
    let image = g.kernel.image.as_deref().expect("a VM kernel has an image");
    let dir = crate::target::make_workdir(g.scratch_dir).map_err(|e| failed(e.to_string()))?;
    let _guard = crate::target::Guard::for_workdir(dir.clone());
    let (mut disks, of_cell) = host_disks(g, &dir)?;
    let accel = accel::choose(g.kernel, g.vm, &dir, stop)?;
    let mut wanted: Vec<&str> = modules::BASE.to_vec();
    let fs_types: Vec<String> = g.cells.iter().filter_map(|c| needed_fs(c.fs)).collect();
    for t in &fs_types {
        wanted.extend(modules::for_fs(t));
    }
    let mods = match &g.kernel.modules {
        Some(m) => modules::resolve(m, &wanted).map_err(failed)?,
        None => Vec::new(),
    };
    let spec = spec(g, &disks, &of_cell, &mods);
    let initrd = dir.join("initramfs.cpio");
    write_initramfs(&initrd, &spec, &all_tools(g), &mods, g.guest_files).map_err(failed)?;
    let (console, result) = (dir.join("console.log"), dir.join("result.bin"));
    let f = BootFiles::open(image, &initrd, &console, &result).map_err(failed)?;
    let qdisks: Vec<Disk> = disks
        .iter()
        .enumerate()
        .map(|(i, d)| Disk {
            file: &d.file,
            cache: d.cache,
            serial: serial(i),
        })
        .collect();
    let m = Machine {
        image: &f.image,
        initrd: &f.initrd,
        console: &f.console,
        result: &f.result,
        disks: &qdisks,
        kvm: accel.kvm,
        cpus: g.vm.cpus,
        memory: g.vm.memory,
    };
    let base = VmInfo {
        image: image.display().to_string(),
        accel: if accel.kvm { "kvm" } else { "tcg" }.into(),
        accel_reason: accel.reason.clone(),
        emulated: !accel.kvm,
        cpus: g.vm.cpus,
        memory_bytes: g.vm.memory,
        qemu: super::qemu_version(),
        ..Default::default()
    };
    let started = Instant::now();
    let mut vm = Vm::start(&m).map_err(failed)?;
    let mut w = Watch {
        g,
        vm: &mut vm,
        stop,
        console: &console,
        result: &result,
        base,
        started,
    };
    // the filesystem the last cell with a result made on each disk
    let mut made: Vec<Option<&str>> = vec![None; disks.len()];
    let r = w.results(&mut |i, res| {
        if let (Ok(_), Some(d)) = (&res, of_cell[i]) {
            made[d] = Some(fs_type_of(g.cells[i].fs));
        }
        let res = res.map(|mut gr| {
            gr.vm.disk = disk_line(of_cell[i].map(|d| &disks[d]), &dir);
            gr
        });
        done(i, res)
    });
    drop(qdisks);
    drop(vm);
    for (d, ty) in disks.iter_mut().zip(made) {
        if let (Some(cl), Some(ty)) = (d.claim.take(), ty) {
            // fslab's own filesystem now: the next cell's check lets it be
            crate::target::safety::made(cl.rdev(), ty);
        }
    }
    r
}

/// What the guest's init does: load `mods`, find the disks, run the
/// cells in order, each on its disk (`of_cell`).
fn spec(g: &Guest, disks: &[HostDisk], of_cell: &[Option<usize>], mods: &[modules::Module]) -> GuestSpec {
    GuestSpec {
        modules: mods.iter().map(|m| m.name.clone()).collect(),
        disks: (0..disks.len()).map(serial).collect(),
        cells: g
            .cells
            .iter()
            .zip(of_cell)
            .map(|(c, d)| SpecCell {
                args: cell_args(g, c, d.is_some()),
                disk: *d,
                discard: d.is_some_and(|d| disks[d].image),
                fs_type: needed_fs(c.fs),
            })
            .collect(),
        probe: false,
    }
}

/// The tools of every cell, each once.
fn all_tools(g: &Guest) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for c in &g.cells {
        for t in tools(c.fs) {
            if !names.contains(&t) {
                names.push(t);
            }
        }
    }
    names
}

/// The serial of the guest's `i`-th disk (virtio-blk keeps 20 bytes).
fn serial(i: usize) -> String {
    format!("fslab{i}")
}

/// The type a filesystem's cells make on their disk.
fn fs_type_of(fs: &FsPlan) -> &str {
    match &fs.kind {
        FsKind::Mkfs { fs_type, .. } => fs_type.as_str(),
        _ => "raw",
    }
}

/// How the cell's disk is attached, for its result.
fn disk_line(d: Option<&HostDisk>, dir: &Path) -> String {
    match d {
        Some(d) if d.shown.starts_with(dir) => format!(
            "virtio-blk, cache={}, a sparse raw image file (discarded before each cell of the boot)",
            d.cache
        ),
        Some(d) => format!("virtio-blk, cache={}, the host's {}", d.cache, d.shown.display()),
        None => "none (tmpfs in the guest's memory)".into(),
    }
}

/// The batch's disks, one per filesystem that needs one (in the order the
/// filesystems first appear), and each cell's disk among them. Filesystems
/// of the plan on one device (ext4 and xfs on the same disk, as on the
/// host one after the other) share its one claim and disk.
fn host_disks(g: &Guest, dir: &Path) -> Result<(Vec<HostDisk>, Vec<Option<usize>>), VmError> {
    use std::os::unix::fs::MetadataExt;
    let mut disks: Vec<(String, HostDisk)> = Vec::new();
    let mut of_cell = Vec::with_capacity(g.cells.len());
    for c in &g.cells {
        let same_device = |d: &HostDisk| match (&c.fs.kind, &d.claim) {
            (FsKind::Mkfs { device: Some(p), .. } | FsKind::Raw { device: Some(p) }, Some(cl)) => {
                std::fs::metadata(p).is_ok_and(|m| m.rdev() == cl.rdev())
            }
            _ => false,
        };
        if let Some(i) = disks.iter().position(|(n, d)| *n == c.fs.name || same_device(d)) {
            of_cell.push(Some(i));
            continue;
        }
        match host_disk(c.fs, dir, disks.len())? {
            Some(d) => {
                disks.push((c.fs.name.clone(), d));
                of_cell.push(Some(disks.len() - 1));
            }
            None => of_cell.push(None),
        }
    }
    Ok((disks.into_iter().map(|(_, d)| d).collect(), of_cell))
}

/// A filesystem's disk: the plan's device, claimed and checked again as on
/// the host (its O_EXCL claim, held until QEMU is gone, keeps anyone from
/// mounting it under the guest; QEMU's own open is not exclusive), or a
/// fresh sparse image of the plan's size in fslab's own new directory;
/// None for tmpfs and directories.
fn host_disk(fs: &FsPlan, dir: &Path, n: usize) -> Result<Option<HostDisk>, VmError> {
    let (claim, shown, file, image) = match &fs.kind {
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
            (Some(held), shown, f, false)
        }
        FsKind::Tmpfs | FsKind::Dir { .. } => return Ok(None),
        _ => {
            let p = dir.join(format!("disk{n}.img"));
            let f = std::fs::File::options()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&p)
                .map_err(|e| failed(format!("creating {}: {e}", p.display())))?;
            f.set_len(fs.size)
                .map_err(|e| failed(format!("sizing {} to {} bytes: {e}", p.display(), fs.size)))?;
            (None, p, f, true)
        }
    };
    let cache = if direct_ok(&file) { "none" } else { "writeback" };
    Ok(Some(HostDisk {
        claim,
        shown,
        file,
        cache,
        image,
    }))
}

/// The guest fslab's arguments for one cell: the plan's
/// (`LabPlan::guest_args`) and the cell; on a disk of fslab's own
/// (`own_disk`: its image, or the plan's device the host claimed) with
/// consent to use it whatever an earlier cell of the boot left on it.
fn cell_args(g: &Guest, c: &GuestCell, own_disk: bool) -> Vec<String> {
    let mut args = g.guest_args.to_vec();
    args.extend([
        "--guest-filesystem".to_string(),
        c.fs.name.clone(),
        "--guest-workload".to_string(),
        c.workload.to_string(),
        "--scratch-dir".to_string(),
        "/var/tmp".to_string(),
    ]);
    if own_disk {
        args.push("--allow-device".into());
        // The host's check decided for the plan's device (what is on it
        // is fslab's own from an earlier cell, or forced), and an image is
        // fslab's own: the guest sees only a signature on its disk and
        // would refuse the second cell on it.
        if !args.iter().any(|a| a == "--force-overwrite") {
            args.push("--force-overwrite".into());
        }
    }
    args
}

/// The running guest, watched for results.
struct Watch<'a> {
    g: &'a Guest<'a>,
    vm: &'a mut Vm,
    stop: &'a AtomicBool,
    console: &'a Path,
    result: &'a Path,
    base: VmInfo,
    started: Instant,
}

impl Watch<'_> {
    /// Hands on each cell's result as its frame arrives, until all have,
    /// the guest ends without them (why), no result comes within the
    /// plan's timeout of the boot or of the previous result, or `stop`.
    fn results<E>(&mut self, done: &mut dyn FnMut(usize, CellResult) -> Result<(), E>) -> Result<(), Stop<E>> {
        let limit = self.g.vm.timeout.unwrap_or(DEFAULT_TIMEOUT);
        let (mut deadline, mut last) = (self.started + limit, self.started);
        let (mut consumed, mut next, mut boot_ns) = (0, 0, 0);
        let (mut init_error, mut exited) = (None, None);
        loop {
            let bytes = std::fs::read(self.result).unwrap_or_default();
            let (frames, used) = parse_frames(bytes.get(consumed..).unwrap_or_default());
            consumed += used;
            for f in frames {
                let Some(i) = f.cell.filter(|&i| i == next) else {
                    init_error = Some(f.body.err().unwrap_or_else(|| "a result out of order".into()));
                    continue;
                };
                let now = Instant::now();
                if i == 0 {
                    boot_ns = now
                        .duration_since(self.started)
                        .as_nanos()
                        .saturating_sub(f.ran_ns as u128) as u64;
                }
                let res = self.cell(f, now.duration_since(last), boot_ns);
                done(i, res).map_err(Stop::Host)?;
                (next, last, deadline) = (next + 1, now, now + limit);
            }
            if next == self.g.cells.len() {
                return Ok(());
            }
            if let Some(st) = exited {
                return Err(self.died(st, init_error).into());
            }
            match self.vm.wait((Instant::now() + POLL).min(deadline), self.stop, || false) {
                Wait::Stopped => return Err(VmError::Interrupted.into()),
                Wait::TimedOut if Instant::now() < deadline => {}
                Wait::TimedOut => {
                    return Err(VmError::Failed {
                        msg: format!(
                            "the guest gave no result within {} (a hang, or set [vm] timeout)",
                            humantime::format_duration(limit)
                        ),
                        console: console_tail(self.console, CONSOLE_TAIL),
                    }
                    .into())
                }
                Wait::Error(e) => return Err(failed(format!("waiting for {QEMU}: {e}")).into()),
                // one more read: its last frame may have come just before
                Wait::Exited(st) => exited = Some(st),
            }
        }
    }

    /// A cell's frame as its result: the report, or why there is none.
    /// `cost`: from the boot or the previous result to this one.
    fn cell(&self, f: Frame, cost: Duration, boot_ns: u64) -> CellResult {
        let tail = || console_tail(self.console, CONSOLE_TAIL);
        let body = f.body.map_err(|msg| VmError::Failed { msg, console: tail() })?;
        let text = String::from_utf8_lossy(&body);
        let report = crate::model::parse_report(&text).map_err(|e| VmError::Failed {
            msg: format!("the guest's result does not read: {e:?}"),
            console: tail(),
        })?;
        let cell_ns = report.cells.iter().map(|c| c.elapsed_ns).sum::<u64>();
        let cost_ns = cost.as_nanos() as u64;
        let vm = VmInfo {
            boot_to_result_ns: cost_ns,
            overhead_ns: cost_ns.saturating_sub(cell_ns),
            boot_id: f.boot,
            boot_ns,
            boot_place: f.cell.map_or(0, |c| c as u32 + 1),
            guest: report.host.clone(),
            ..self.base.clone()
        };
        Ok(GuestResult {
            report,
            status: f.status,
            vm,
        })
    }

    /// Why the guest ended before its last result: a panic, QEMU's
    /// failure, the guest's own last word, with the console's tail.
    fn died(&mut self, status: std::process::ExitStatus, init_error: Option<String>) -> VmError {
        let console = console_tail(self.console, CONSOLE_TAIL);
        let msg = if console.iter().any(|l| l.contains(PANIC)) {
            "the guest kernel panicked".to_string()
        } else if let Some(why) = init_error {
            // the guest's init said why (no disk, no filesystem, ...)
            why
        } else if !status.success() {
            format!("{QEMU} failed ({status}): {}", self.vm.stderr())
        } else {
            // the guest's own last word on its console, when it said why
            match console.iter().rev().find_map(|l| l.split_once("fslab-guest: error: ")) {
                Some((_, why)) => format!("the guest powered off without a result: {why}"),
                None => "the guest powered off without a result".to_string(),
            }
        };
        VmError::Failed { msg, console }
    }
}
