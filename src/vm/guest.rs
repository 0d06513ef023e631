//! fslab as the guest's `/init` (PID 1): mounts the kernel's filesystems,
//! loads the cells' modules, finds the disks, then runs `fslab run` for
//! each cell of the spec in turn as a child (so a failure of a cell is
//! still reported, and the next runs), sends each result file to the host
//! over the virtio-serial port as soon as it is written, and powers the
//! machine off after the last. Every
//! step prints a line on the console, whose tail the host shows when a
//! cell fails.

use super::frames::{frame, Frame};
use super::{GuestSpec, SpecCell, RESULT_PORT};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where the child writes its result inside the guest.
const RESULT_FILE: &str = "/tmp/fslab-result.json";

/// Whether this process is a guest's init: PID 1 started as `/init`.
pub fn is_guest_init() -> bool {
    std::process::id() == 1 && std::env::args_os().next().is_some_and(|a| a == "/init")
}

fn say(msg: &str) {
    // the console: the kernel gave init /dev/console as fds 0-2
    let _ = writeln!(std::io::stderr(), "fslab-guest: {msg}");
}

/// PID 1 must never return: it powers off (the host sees QEMU exit).
pub fn init() -> ! {
    let code = match run() {
        Ok(c) => c,
        Err(e) => {
            say(&format!("error: {e}"));
            let f = Frame {
                cell: None,
                status: 125,
                boot: String::new(),
                ran_ns: 0,
                body: Err(format!("guest: {e}")),
            };
            let _ = send(&frame(&f));
            125
        }
    };
    say(&format!("powering off (status {code})"));
    rustix::fs::sync();
    let _ = rustix::system::reboot(rustix::system::RebootCommand::PowerOff);
    // reboot failed: nothing else a PID 1 can do but wait
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn mount(src: &str, dir: &str, fstype: &str) -> Result<(), String> {
    let _ = std::fs::create_dir_all(dir);
    rustix::mount::mount(src, dir, fstype, rustix::mount::MountFlags::empty(), None)
        .or_else(|e| if e == rustix::io::Errno::BUSY { Ok(()) } else { Err(e) })
        .map_err(|e| format!("mounting {fstype} on {dir}: {e}"))
}

fn run() -> Result<i32, String> {
    mount("proc", "/proc", "proc")?;
    mount("sysfs", "/sys", "sysfs")?;
    mount("devtmpfs", "/dev", "devtmpfs")?;
    // /tmp and /var/tmp stay on the initramfs's own root (a tmpfs): a
    // mount there would hide the plan and load files copied in at their
    // host paths
    let _ = std::fs::create_dir_all("/var/tmp");
    let u = rustix::system::uname();
    say(&format!("up: Linux {}", u.release().to_string_lossy()));
    let spec: GuestSpec = serde_json::from_slice(
        &std::fs::read(Path::new("/").join(super::initramfs::SPEC_DIR).join("spec.json"))
            .map_err(|e| format!("reading the cell's spec: {e}"))?,
    )
    .map_err(|e| format!("the cell's spec: {e}"))?;
    // the failure tests' hooks (tests/vm.rs, through FSLAB_VM_APPEND): a
    // real kernel panic (sysrq crash) or an init that never ends, at once
    // or after the first cell
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    let hook = |w: &str| cmdline.split_whitespace().any(|x| x == w);
    if hook("fslab.test=panic") {
        crash();
    }
    if hook("fslab.test=hang") {
        hang();
    }
    if spec.probe {
        // the accelerator probe: "up" on the console was all it asked
        return Ok(0);
    }
    for (i, name) in spec.modules.iter().enumerate() {
        let p = module_path(i, name);
        let f = std::fs::File::open(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        match rustix::system::finit_module(&f, c"", 0) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => say(&format!("loading module {name}: {e}")),
        }
    }
    let disks = spec
        .disks
        .iter()
        .enumerate()
        .map(|(i, serial)| find_disk(i, serial))
        .collect::<Result<Vec<_>, _>>()?;
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .unwrap_or_default()
        .trim()
        .to_string();
    let mut last = 0;
    for (i, cell) in spec.cells.iter().enumerate() {
        let f = run_cell(i, cell, &disks, &boot);
        last = f.status;
        send(&frame(&f))?;
        if hook("fslab.test=panic-after-first") {
            crash();
        }
        if hook("fslab.test=hang-after-first") {
            hang();
        }
    }
    Ok(last)
}

/// The failure tests' kernel panic (sysrq crash).
fn crash() {
    say("crashing the kernel (fslab.test=panic)");
    let _ = std::fs::write("/proc/sysrq-trigger", "c");
}

/// The failure tests' hanging init.
fn hang() -> ! {
    say("hanging (fslab.test=hang)");
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// The guest's `i`-th disk: the virtio disk whose serial the host set
/// (`/sys/block/vdX/serial`), waited for up to 20 s; a kernel too old to
/// show serials names them in the order QEMU attached them.
fn find_disk(i: usize, serial: &str) -> Result<PathBuf, String> {
    let t = Instant::now();
    loop {
        if let Ok(rd) = std::fs::read_dir("/sys/block") {
            for e in rd.flatten() {
                let s = std::fs::read_to_string(e.path().join("serial")).unwrap_or_default();
                if s.trim() == serial {
                    return Ok(Path::new("/dev").join(e.file_name()));
                }
            }
        }
        let by_order = PathBuf::from(format!("/dev/vd{}", (b'a' + i as u8) as char));
        if !Path::new("/sys/block/vda/serial").exists() && by_order.exists() {
            return Ok(by_order);
        }
        if t.elapsed() > Duration::from_secs(20) {
            return Err(format!("no disk {serial} after 20 s: does the kernel have virtio_blk?"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One cell of the spec: its filesystem checked in the kernel, its disk
/// discarded when the host asked (an image file: back to a sparse one, as
/// a fresh cell's), then `fslab run` for it as a child, whose result file
/// (or why there is none) is the cell's frame.
fn run_cell(i: usize, cell: &SpecCell, disks: &[PathBuf], boot: &str) -> Frame {
    let mut f = Frame {
        cell: Some(i),
        status: 125,
        boot: boot.to_string(),
        ran_ns: 0,
        body: Err(String::new()),
    };
    if let Some(t) = &cell.fs_type {
        let have = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
        if !have.lines().any(|l| l.split_whitespace().last() == Some(t.as_str())) {
            f.body = Err(format!(
                "guest: this kernel has no {t} filesystem (neither built in nor among the modules given)"
            ));
            say(&format!("error: cell {}: {}", i + 1, f.body.as_ref().unwrap_err()));
            return f;
        }
    }
    let disk = cell.disk.and_then(|d| disks.get(d));
    if let (Some(d), true) = (disk, cell.discard) {
        if let Err(e) = discard(d) {
            say(&format!(
                "discarding {}: {e} (the cell runs on it as it is)",
                d.display()
            ));
        }
    }
    let _ = std::fs::remove_file(RESULT_FILE);
    let mut args = cell.args.clone();
    if let Some(d) = disk {
        args.extend(["--guest-disk".to_string(), d.display().to_string()]);
    }
    say(&format!("cell {}: running fslab {}", i + 1, args.join(" ")));
    let started = Instant::now();
    let status = std::process::Command::new("/init")
        .args(&args)
        .args(["--quiet", "--output", &format!("json:{RESULT_FILE}")])
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("HOME", "/root")
        .env("LC_ALL", "C")
        .status();
    f.ran_ns = started.elapsed().as_nanos() as u64;
    let status = match status {
        Ok(s) => s,
        Err(e) => {
            f.body = Err(format!("guest: starting the cell: {e}"));
            return f;
        }
    };
    f.status = status
        .code()
        .unwrap_or(128 + std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0));
    say(&format!(
        "cell {}: ended with status {} after {:.1} s",
        i + 1,
        f.status,
        f.ran_ns as f64 / 1e9
    ));
    f.body = std::fs::read(RESULT_FILE)
        .map_err(|_| format!("fslab in the guest exited with status {} and wrote no result", f.status));
    f
}

/// Discards the whole of disk `d` (BLKDISCARD): with QEMU's
/// `discard=unmap` the host punches the image file's blocks out, so the
/// cell starts on a sparse image as a cell in a fresh VM did.
fn discard(d: &Path) -> Result<(), String> {
    use std::os::fd::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(d)
        .map_err(|e| e.to_string())?;
    let mut size: u64 = 0;
    // BLKGETSIZE64 = _IOR(0x12, 114, size_t); BLKDISCARD = _IO(0x12, 119)
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    const BLKDISCARD: libc::c_ulong = 0x1277;
    // SAFETY: both ioctls take a pointer to memory of the size they write
    // or read (a u64, two u64), which lives across the call.
    if unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64 as _, &mut size as *mut u64) } != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    let range: [u64; 2] = [0, size];
    // SAFETY: as above: BLKDISCARD reads the two u64 of `range`.
    if unsafe { libc::ioctl(f.as_raw_fd(), BLKDISCARD as _, range.as_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    Ok(())
}

fn module_path(i: usize, name: &str) -> PathBuf {
    Path::new("/")
        .join(super::initramfs::SPEC_DIR)
        .join(format!("modules/{i:03}-{name}.ko"))
}

/// The archive path of the i-th module (loaded in this order).
pub fn module_archive_path(i: usize, name: &str) -> PathBuf {
    super::initramfs::archive_path(&module_path(i, name))
}

fn wait_for(p: &Path, limit: Duration) -> Result<(), ()> {
    let t = Instant::now();
    while !p.exists() {
        if t.elapsed() > limit {
            return Err(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// The virtio-serial port the host named `fslab.result` (no udev here: its
/// name is in sysfs).
fn port() -> Result<PathBuf, String> {
    let rd = std::fs::read_dir("/sys/class/virtio-ports")
        .map_err(|e| format!("no virtio-serial ports (does the kernel have virtio_console?): {e}"))?;
    for e in rd.flatten() {
        let name = std::fs::read_to_string(e.path().join("name")).unwrap_or_default();
        if name.trim() == RESULT_PORT {
            return Ok(Path::new("/dev").join(e.file_name()));
        }
    }
    Err(format!("no virtio-serial port named {RESULT_PORT}"))
}

fn send(bytes: &[u8]) -> Result<(), String> {
    let p = port()?;
    wait_for(&p, Duration::from_secs(10)).map_err(|_| format!("{} did not appear", p.display()))?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .map_err(|e| format!("{}: {e}", p.display()))?;
    f.write_all(bytes)
        .map_err(|e| format!("writing the result to {}: {e}", p.display()))?;
    f.flush().map_err(|e| e.to_string())?;
    let _ = f.sync_all();
    Ok(())
}
