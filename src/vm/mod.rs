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
pub mod modules;

use crate::model::{Report, VmInfo};
use crate::plan::lab::vm::{KernelPlan, VmPlan, QEMU};
use crate::plan::{FsKind, FsPlan};
use initramfs::{find_program, Initramfs};
use std::fs::File;
use std::io::{BufWriter, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
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

/// `qemu-system-x86_64 --version`'s first line.
pub fn qemu_version() -> String {
    Command::new(QEMU)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::to_string))
        .unwrap_or_default()
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

/// The kernel command line: the console on the first serial port from the
/// first instruction on (a kernel that prints nothing tells the probe it
/// cannot boot), a panic ends the VM at once (QEMU runs with -no-reboot),
/// and `FSLAB_VM_APPEND` adds the user's own (loglevel=8, say).
fn append() -> String {
    let mut s = "console=ttyS0 earlyprintk=serial,ttyS0 panic=-1 rdinit=/init".to_string();
    if let Ok(extra) = std::env::var("FSLAB_VM_APPEND") {
        s.push(' ');
        s.push_str(&extra);
    }
    s
}

/// A value inside a QEMU option string (`-chardev file,path=VALUE,...`):
/// QEMU's option parser ends a value at a comma and reads `,,` as one
/// comma, so every comma is doubled. A value that is not UTF-8 keeps its
/// bytes.
pub fn qemu_opt_value(v: &std::ffi::OsStr) -> std::ffi::OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let mut out = Vec::with_capacity(v.len());
    for &b in v.as_bytes() {
        out.push(b);
        if b == b',' {
            out.push(b',');
        }
    }
    std::ffi::OsString::from_vec(out)
}

/// The path QEMU opens to reach a descriptor fslab passes it.
fn fd_path(f: &impl AsRawFd) -> String {
    format!("/proc/self/fd/{}", f.as_raw_fd())
}

/// The QEMU command of a guest. Every file is one fslab opened itself and
/// QEMU inherits, named `/proc/self/fd/N` in QEMU's options: no path from
/// a plan, a flag or a directory name reaches QEMU's option parser (a
/// scratch directory named `D,path=/any/file` made QEMU write its console
/// into `/any/file`), and nothing is resolved again after fslab checked it.
struct Machine<'a> {
    image: &'a File,
    initrd: &'a File,
    console: &'a File,
    result: &'a File,
    disk: Option<(&'a File, &'a str)>,
    kvm: bool,
    cpus: u32,
    memory: u64,
}

impl Machine<'_> {
    fn command(&self) -> Command {
        let mut c = Command::new(QEMU);
        c.args(["-nodefaults", "-no-reboot", "-display", "none", "-monitor", "none"]);
        if self.kvm {
            c.args(["-accel", "kvm", "-cpu", "host"]);
        } else {
            c.args(["-accel", "tcg", "-cpu", "max"]);
        }
        c.arg("-smp").arg(self.cpus.to_string());
        c.arg("-m").arg(format!("{}M", (self.memory >> 20).max(256)));
        c.arg("-kernel").arg(fd_path(self.image));
        c.arg("-initrd").arg(fd_path(self.initrd));
        c.arg("-append").arg(append());
        c.arg("-chardev")
            .arg(opts("file", &[("id", "console"), ("path", &fd_path(self.console))]));
        c.args(["-serial", "chardev:console"]);
        if let Some((disk, cache)) = self.disk {
            c.arg("-drive").arg(opts(
                "",
                &[
                    ("file", &fd_path(disk)),
                    ("format", "raw"),
                    ("if", "none"),
                    ("id", "disk"),
                    ("cache", cache),
                    ("discard", "unmap"),
                ],
            ));
            // QEMU's own merging of adjacent guest requests is off: QEMU 7.2
            // (Debian 12's) merges up to IOV_MAX (1024) segments and then,
            // when the merged write is not aligned to the host file's O_DIRECT
            // alignment, pads it with a head and a tail and fails it with
            // EINVAL for exceeding IOV_MAX (fixed in QEMU 8.1, "block: Collapse
            // padded I/O vecs exceeding IOV_MAX"). Seen here: eight queued 1 MiB
            // writes of a 1 KiB-block ext4 merged into one 4 MiB write of 1024
            // segments at a 1 KiB offset, and the guest's layout failed with
            // "I/O error, dev vda" whenever the host disk was busy enough for
            // eight requests to queue. The guest's block layer still merges
            // (up to its 254 segments), so requests stay large.
            c.args(["-device", "virtio-blk-pci,drive=disk,request-merging=off"]);
        }
        c.args(["-device", "virtio-serial-pci"]);
        c.arg("-chardev")
            .arg(opts("file", &[("id", "result"), ("path", &fd_path(self.result))]));
        c.arg("-device")
            .arg(opts("virtserialport", &[("chardev", "result"), ("name", RESULT_PORT)]));
        c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        let mut fds = vec![self.image.as_raw_fd(), self.initrd.as_raw_fd()];
        fds.extend([self.console.as_raw_fd(), self.result.as_raw_fd()]);
        fds.extend(self.disk.map(|(d, _)| d.as_raw_fd()));
        // SAFETY: prctl and fcntl are async-signal-safe and the closure does
        // not allocate. PR_SET_PDEATHSIG asks the kernel to kill QEMU when
        // the thread that started it (fslab's main thread) ends, so a
        // SIGKILLed fslab leaves no VM running; clearing FD_CLOEXEC in the
        // child alone lets QEMU inherit the files it is given (fslab's own
        // descriptors stay close-on-exec for every other child).
        unsafe {
            c.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                for &fd in &fds {
                    if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        c
    }
}

/// A QEMU option string `KIND,key=value,...` with each value escaped
/// (`qemu_opt_value`); keys are fslab's own constants.
fn opts(kind: &str, kv: &[(&str, &str)]) -> std::ffi::OsString {
    let mut s = std::ffi::OsString::from(kind);
    for (i, (k, v)) in kv.iter().enumerate() {
        if i > 0 || !kind.is_empty() {
            s.push(",");
        }
        s.push(k);
        s.push("=");
        s.push(qemu_opt_value(std::ffi::OsStr::new(v)));
    }
    s
}

/// Opens a file QEMU is given (`Machine`): for reading, or for writing
/// (fslab's own new file in its work directory, created here).
fn open_for_qemu(p: &Path, write: bool) -> Result<File, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    if write {
        o.write(true).create_new(true).mode(0o600);
    } else {
        o.read(true);
    }
    let f = o
        .custom_flags(libc::O_NONBLOCK)
        .open(p)
        .map_err(|e| format!("opening {}: {e}", p.display()))?;
    match f.metadata() {
        Ok(m) if m.is_file() => Ok(f),
        Ok(_) => Err(format!("{} is not a regular file", p.display())),
        Err(e) => Err(format!("{}: {e}", p.display())),
    }
}

/// A QEMU process that is killed and reaped when dropped.
struct Vm {
    child: Child,
}

impl Vm {
    fn start(m: &Machine) -> Result<Vm, String> {
        let _serial = crate::interrupt::serial();
        let child = m.command().spawn().map_err(|e| format!("starting {QEMU}: {e}"))?;
        crate::target::live::add_child(child.id());
        Ok(Vm { child })
    }

    /// Waits until QEMU exits, `until` passes or `stop` is set.
    fn wait(&mut self, until: Instant, stop: &AtomicBool, mut early: impl FnMut() -> bool) -> Wait {
        loop {
            match self.child.try_wait() {
                Ok(Some(st)) => return Wait::Exited(st),
                Ok(None) => {}
                Err(e) => return Wait::Error(e.to_string()),
            }
            if stop.load(Ordering::Relaxed) {
                return Wait::Stopped;
            }
            if Instant::now() >= until || early() {
                return Wait::TimedOut;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The CPU time QEMU has used (its vCPUs' guest time included).
    fn cpu_time(&self) -> Option<Duration> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).ok()?;
        let ticks = stat_cpu_ticks(&stat)?;
        let hz = rustix::param::clock_ticks_per_second();
        Some(Duration::from_millis(ticks * 1000 / hz.max(1)))
    }

    fn stderr(&mut self) -> String {
        let mut s = String::new();
        if let Some(e) = self.child.stderr.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s.trim().to_string()
    }
}

/// utime + stime of a `/proc/PID/stat` line, in clock ticks.
fn stat_cpu_ticks(stat: &str) -> Option<u64> {
    // after the command's name, which may hold spaces and ')': state is field 3
    let rest = stat.get(stat.rfind(')')? + 1..)?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

enum Wait {
    Exited(std::process::ExitStatus),
    TimedOut,
    Stopped,
    Error(String),
}

impl Drop for Vm {
    fn drop(&mut self) {
        let _serial = crate::interrupt::serial();
        let _ = self.child.kill();
        let _ = self.child.wait();
        crate::target::live::remove_child(self.child.id());
    }
}

/// Whether the disk can be opened with O_DIRECT (cache=none needs it; a
/// tmpfs scratch directory refuses it), as QEMU opens it: again, through
/// the descriptor.
fn direct_ok(f: &File) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(fd_path(f))
        .is_ok()
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

/// Runs one cell in a guest under `c.kernel`.
pub fn run_cell(c: &VmCell, stop: &AtomicBool) -> Result<GuestResult, VmError> {
    let image = c.kernel.image.as_deref().expect("a VM kernel has an image");
    let dir = crate::target::make_workdir(c.scratch_dir).map_err(|e| failed(e.to_string()))?;
    let _guard = crate::target::Guard::for_workdir(dir.clone());
    // the disk: the plan's device, claimed and checked again as on the host
    // (its O_EXCL claim, held until QEMU is gone, keeps anyone from mounting
    // it under the guest; QEMU's own open is not exclusive), or a fresh
    // sparse image of the plan's size in fslab's own new directory
    let mut claim = None;
    let disk: Option<(PathBuf, File)> = match &c.fs.kind {
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
            claim = Some(held);
            Some((shown, f))
        }
        FsKind::Tmpfs | FsKind::Dir { .. } => None,
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
            Some((p, f))
        }
    };
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
    let mut args = c.guest_args.to_vec();
    args.extend([
        "--guest-filesystem".to_string(),
        c.fs.name.clone(),
        "--guest-workload".to_string(),
        c.workload.to_string(),
        "--scratch-dir".to_string(),
        "/var/tmp".to_string(),
    ]);
    if disk.is_some() {
        args.push("--allow-device".into());
    }
    // The host's check above decided for the plan's device (what is on it is
    // fslab's own from an earlier cell, or forced); the guest sees only a
    // signature on /dev/vda and would refuse the second cell on it.
    if claim.is_some() && !args.iter().any(|a| a == "--force-overwrite") {
        args.push("--force-overwrite".into());
    }
    let spec = GuestSpec {
        args,
        modules: mods.iter().map(|m| m.name.clone()).collect(),
        disk: disk.is_some(),
        fs_type: needed_fs(c.fs),
        probe: false,
    };
    let initrd = dir.join("initramfs.cpio");
    write_initramfs(&initrd, &spec, &tools(c.fs), &mods, c.guest_files).map_err(failed)?;
    let (console, result) = (dir.join("console.log"), dir.join("result.bin"));
    let (image_f, initrd_f) = (open_for_qemu(image, false), open_for_qemu(&initrd, false));
    let (image_f, initrd_f) = (image_f.map_err(failed)?, initrd_f.map_err(failed)?);
    let console_f = open_for_qemu(&console, true).map_err(failed)?;
    let result_f = open_for_qemu(&result, true).map_err(failed)?;
    let m = Machine {
        image: &image_f,
        initrd: &initrd_f,
        console: &console_f,
        result: &result_f,
        disk: disk.as_ref().map(|(_, f)| (f, cache)),
        kvm: accel.kvm,
        cpus: c.vm.cpus,
        memory: c.vm.memory,
    };
    let started = Instant::now();
    let mut vm = Vm::start(&m).map_err(failed)?;
    let limit = c.vm.timeout.unwrap_or(DEFAULT_TIMEOUT);
    let outcome = vm.wait(started + limit, stop, || false);
    let boot_to_result = started.elapsed();
    let tail = || console_tail(&console, CONSOLE_TAIL);
    let status = match outcome {
        Wait::Stopped => return Err(VmError::Interrupted),
        Wait::TimedOut => {
            return Err(VmError::Failed {
                msg: format!(
                    "the guest gave no result within {} (a hang, or set [vm] timeout)",
                    humantime::format_duration(limit)
                ),
                console: tail(),
            })
        }
        Wait::Error(e) => return Err(failed(format!("waiting for {QEMU}: {e}"))),
        Wait::Exited(st) => st,
    };
    let frame = std::fs::read(&result).unwrap_or_default();
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
    fn qemu_options_name_descriptors_and_double_commas() {
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(
            qemu_opt_value(std::ffi::OsStr::new("D,path=/etc/passwd,logfile=L")),
            "D,,path=/etc/passwd,,logfile=L"
        );
        // what a crafted scratch directory's name would make of a value
        assert_eq!(
            opts("file", &[("id", "x"), ("path", "/s/D,path=/v,logfile=L/c.log")]),
            "file,id=x,path=/s/D,,path=/v,,logfile=L/c.log"
        );
        let d = tempfile::tempdir().unwrap();
        let evil = d.path().join("D,path=victim,logfile=L");
        std::fs::create_dir(&evil).unwrap();
        let f = |n: &str, w: bool| {
            let p = evil.join(n);
            if !w {
                std::fs::write(&p, b"x").unwrap();
            }
            open_for_qemu(&p, w).unwrap()
        };
        let (image, initrd, console, result, disk) =
            (f("k", false), f("i", false), f("c", true), f("r", true), f("d", false));
        let m = Machine {
            image: &image,
            initrd: &initrd,
            console: &console,
            result: &result,
            disk: Some((&disk, "none")),
            kvm: false,
            cpus: 1,
            memory: 1 << 30,
        };
        let c = m.command();
        let args: Vec<_> = c.get_args().collect();
        // no argument names the directory: every file is a descriptor
        for a in &args {
            assert!(!a.as_bytes().windows(3).any(|w| w == b"D,p"), "{a:?} in {args:?}");
        }
        let joined = args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
        assert!(
            joined.contains(&format!("path=/proc/self/fd/{}", console.as_raw_fd())),
            "{joined}"
        );
        assert!(
            joined.contains(&format!("file=/proc/self/fd/{},", disk.as_raw_fd())),
            "{joined}"
        );
        // QEMU 7.2 fails merged writes of 1024 segments that need padding
        assert!(
            joined.contains("virtio-blk-pci,drive=disk,request-merging=off"),
            "{joined}"
        );
        assert!(
            joined.contains(&format!("-kernel /proc/self/fd/{}", image.as_raw_fd())),
            "{joined}"
        );
        // an existing name is never opened for QEMU to write
        assert!(open_for_qemu(&evil.join("k"), true).is_err());
    }

    #[test]
    fn cpu_time_is_read_after_the_command_name() {
        let line = "42 (qemu (x) y) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 99 1 1";
        assert_eq!(stat_cpu_ticks(line), Some(300));
        assert_eq!(stat_cpu_ticks("42 (cut"), None);
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
