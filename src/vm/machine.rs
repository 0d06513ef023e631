//! The QEMU process of a guest cell: its command line (`Machine`), where
//! every file is a descriptor fslab opened and QEMU inherits, never a path
//! in an option string; the running VM (`Vm`), killed and reaped when
//! dropped, with a parent-death signal so it never outlives fslab; and
//! the small facts about QEMU and its files a cell records or needs.

use super::RESULT_PORT;
use crate::plan::lab::vm::QEMU;
use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// `qemu-system-x86_64 --version`'s first line.
pub fn qemu_version() -> String {
    Command::new(QEMU)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::to_string))
        .unwrap_or_default()
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

/// A disk of a guest: the file QEMU is given, its cache mode, and the
/// serial the guest finds it by.
pub(super) struct Disk<'a> {
    pub(super) file: &'a File,
    pub(super) cache: &'a str,
    pub(super) serial: String,
}

/// The QEMU command of a guest. Every file is one fslab opened itself and
/// QEMU inherits, named `/proc/self/fd/N` in QEMU's options: no path from
/// a plan, a flag or a directory name reaches QEMU's option parser (a
/// scratch directory named `D,path=/any/file` made QEMU write its console
/// into `/any/file`), and nothing is resolved again after fslab checked it.
pub(super) struct Machine<'a> {
    pub(super) image: &'a File,
    pub(super) initrd: &'a File,
    pub(super) console: &'a File,
    pub(super) result: &'a File,
    /// The disks, in the order the guest's spec lists them.
    pub(super) disks: &'a [Disk<'a>],
    pub(super) kvm: bool,
    pub(super) cpus: u32,
    pub(super) memory: u64,
}

impl Machine<'_> {
    pub(super) fn command(&self) -> Command {
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
        for (i, d) in self.disks.iter().enumerate() {
            let id = format!("disk{i}");
            c.arg("-drive").arg(opts(
                "",
                &[
                    ("file", &fd_path(d.file)),
                    ("format", "raw"),
                    ("if", "none"),
                    ("id", &id),
                    ("cache", d.cache),
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
            c.arg("-device").arg(opts(
                "virtio-blk-pci",
                &[("drive", &id), ("serial", &d.serial), ("request-merging", "off")],
            ));
        }
        c.args(["-device", "virtio-serial-pci"]);
        c.arg("-chardev")
            .arg(opts("file", &[("id", "result"), ("path", &fd_path(self.result))]));
        c.arg("-device")
            .arg(opts("virtserialport", &[("chardev", "result"), ("name", RESULT_PORT)]));
        c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        let mut fds = vec![self.image.as_raw_fd(), self.initrd.as_raw_fd()];
        fds.extend([self.console.as_raw_fd(), self.result.as_raw_fd()]);
        fds.extend(self.disks.iter().map(|d| d.file.as_raw_fd()));
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
pub(super) fn open_for_qemu(p: &Path, write: bool) -> Result<File, String> {
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

/// The files a guest boots from and writes to, each opened as
/// `open_for_qemu` opens it: the kernel and initramfs read, the console log
/// and the result made new (never an existing file's contents).
pub(super) struct BootFiles {
    pub(super) image: File,
    pub(super) initrd: File,
    pub(super) console: File,
    pub(super) result: File,
}

impl BootFiles {
    pub(super) fn open(image: &Path, initrd: &Path, console: &Path, result: &Path) -> Result<Self, String> {
        Ok(BootFiles {
            image: open_for_qemu(image, false)?,
            initrd: open_for_qemu(initrd, false)?,
            console: open_for_qemu(console, true)?,
            result: open_for_qemu(result, true)?,
        })
    }
}

/// A QEMU process that is killed and reaped when dropped.
pub(super) struct Vm {
    child: Child,
}

impl Vm {
    pub(super) fn start(m: &Machine) -> Result<Vm, String> {
        let _serial = crate::interrupt::serial();
        let child = m.command().spawn().map_err(|e| format!("starting {QEMU}: {e}"))?;
        crate::target::live::add_child(child.id());
        Ok(Vm { child })
    }

    /// Waits until QEMU exits, `until` passes or `stop` is set.
    pub(super) fn wait(&mut self, until: Instant, stop: &AtomicBool, mut early: impl FnMut() -> bool) -> Wait {
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
    pub(super) fn cpu_time(&self) -> Option<Duration> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).ok()?;
        let ticks = stat_cpu_ticks(&stat)?;
        let hz = rustix::param::clock_ticks_per_second();
        Some(Duration::from_millis(ticks * 1000 / hz.max(1)))
    }

    pub(super) fn stderr(&mut self) -> String {
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

pub(super) enum Wait {
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
pub(super) fn direct_ok(f: &File) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(fd_path(f))
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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
            disks: &[Disk {
                file: &disk,
                cache: "none",
                serial: "fslab0".into(),
            }],
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
            joined.contains("virtio-blk-pci,drive=disk0,serial=fslab0,request-merging=off"),
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
}
