//! fslab as the guest's `/init` (PID 1): mounts the kernel's filesystems,
//! loads the cell's modules, runs `fslab run` for the one cell as a child
//! (so a failure of the cell is still reported), sends the result file to
//! the host over the virtio-serial port and powers the machine off. Every
//! step prints a line on the console, whose tail the host shows when a
//! cell fails.

use super::{GuestSpec, RESULT_PORT};
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
            let _ = send(&frame(125, &format!("guest: {e}").into_bytes(), true));
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
    // real kernel panic (sysrq crash) or an init that never ends
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    if cmdline.split_whitespace().any(|w| w == "fslab.test=panic") {
        say("crashing the kernel (fslab.test=panic)");
        let _ = std::fs::write("/proc/sysrq-trigger", "c");
    }
    if cmdline.split_whitespace().any(|w| w == "fslab.test=hang") {
        say("hanging (fslab.test=hang)");
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
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
    if spec.disk {
        wait_for(Path::new(super::GUEST_DISK), Duration::from_secs(20)).map_err(|_| {
            format!(
                "no disk {} after 20 s: does the kernel have virtio_blk?",
                super::GUEST_DISK
            )
        })?;
    }
    if let Some(t) = &spec.fs_type {
        let have = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
        if !have.lines().any(|l| l.split_whitespace().last() == Some(t.as_str())) {
            return Err(format!(
                "this kernel has no {t} filesystem (neither built in nor among the modules given)"
            ));
        }
    }
    say(&format!("running fslab {}", spec.args.join(" ")));
    let started = Instant::now();
    let status = std::process::Command::new("/init")
        .args(&spec.args)
        .args(["--quiet", "--output", &format!("json:{RESULT_FILE}")])
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("HOME", "/root")
        .env("LC_ALL", "C")
        .status()
        .map_err(|e| format!("starting the cell: {e}"))?;
    let code = status
        .code()
        .unwrap_or(128 + std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0));
    say(&format!(
        "the cell ended with status {code} after {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    match std::fs::read(RESULT_FILE) {
        Ok(json) => send(&frame(code, &json, false))?,
        Err(_) => send(&frame(
            code,
            format!("fslab in the guest exited with status {code} and wrote no result").as_bytes(),
            true,
        ))?,
    }
    Ok(code)
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

/// The result's frame on the port: a header line with the status, whether
/// the body is an error message, and its length, then the body and an end
/// line, so the host tells a whole result from a cut one.
pub fn frame(status: i32, body: &[u8], error: bool) -> Vec<u8> {
    let mut v = format!(
        "FSLAB-RESULT 1 status={status} kind={} len={}\n",
        if error { "error" } else { "json" },
        body.len()
    )
    .into_bytes();
    v.extend_from_slice(body);
    v.extend_from_slice(b"\nFSLAB-END\n");
    v
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
