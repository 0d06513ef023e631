//! KVM or TCG. `/dev/kvm` may exist and still not boot a stock kernel: on
//! this kind of machine it is a nested paravirtual hypervisor (kvm-pvm)
//! under which the boot prints nothing and hangs. So `accel = auto` boots
//! the kernel once under KVM with an init that only says it is up: a
//! console still empty after a few seconds, or no "up" in time, means TCG.
//! The verdict is kept per kernel image (path, size, mtime) in the cache
//! directory, so later runs do not pay for the probe: only a verdict the
//! probe reached, and only in a directory of the running user's alone,
//! written without following a symlink (`cache_dir`, `target::cache`).

use super::machine::{BootFiles, Machine, Vm, Wait};
use super::{failed, VmError};
use crate::plan::lab::vm::{Accel, KernelPlan, VmPlan};
use crate::target::cache::{open_private_dir, read_cached, write_cached};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// A console still empty this long after QEMU started: KVM does not run the kernel.
const SILENT_LIMIT: Duration = Duration::from_secs(5);
/// QEMU's CPU time by then for that silence to be the kernel's (not a busy host's).
const SILENT_CPU: Duration = Duration::from_secs(1);
/// The probe's init must say "up" within this.
const UP_LIMIT: Duration = Duration::from_secs(30);

/// The accelerator a kernel's cells use, and why.
#[derive(Debug, Clone)]
pub struct Chosen {
    pub kvm: bool,
    pub reason: String,
}

/// The cache directory, opened: `$XDG_CACHE_HOME/fslab`, `$HOME/.cache/fslab`
/// or `/var/cache/fslab`, each component opened without following a
/// symlink. None (no cache: the probe runs every time) unless the directory
/// is owned by the user fslab runs as and writable by no one else: under
/// `sudo -E`, HOME is another user's, who could otherwise plant a verdict
/// or a symlink for root to write through. A missing component is made
/// (mode 0700) only inside a directory that passes the same test.
fn cache_dir() -> Option<OwnedFd> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from("/var/cache"));
    open_private_dir(&base.join("fslab"))
}

/// The probe's cache entry for an image: its name in the cache directory
/// (public for the tests that plant one).
pub fn cache_name(image: &Path) -> Option<String> {
    let md = std::fs::metadata(image).ok()?;
    let mtime = md
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    let key = format!(
        "{}\0{}\0{}",
        std::fs::canonicalize(image).ok()?.display(),
        md.len(),
        mtime
    );
    Some(format!("kvm-probe-{:08x}", crc32c::crc32c(key.as_bytes())))
}

pub fn choose(k: &KernelPlan, vm: &VmPlan, dir: &Path, stop: &AtomicBool) -> Result<Chosen, VmError> {
    let kvm_dev = std::fs::OpenOptions::new().read(true).write(true).open("/dev/kvm");
    match vm.accel {
        Accel::Tcg => {
            return Ok(Chosen {
                kvm: false,
                reason: "the plan asks for tcg".into(),
            })
        }
        Accel::Kvm => {
            return match kvm_dev {
                Ok(_) => Ok(Chosen {
                    kvm: true,
                    reason: "the plan asks for kvm".into(),
                }),
                Err(e) => Err(failed(format!(
                    "[vm] accel = \"kvm\", but /dev/kvm cannot be opened: {e}"
                ))),
            }
        }
        Accel::Auto => {}
    }
    if let Err(e) = kvm_dev {
        return Ok(Chosen {
            kvm: false,
            reason: format!("no usable /dev/kvm ({e})"),
        });
    }
    let image = k.image.as_deref().expect("a VM kernel");
    let cache = cache_dir().zip(cache_name(image));
    if let Some(text) = cache.as_ref().and_then(|(d, n)| read_cached(d, n, 4096)) {
        if let Some(r) = text.strip_prefix("kvm\n") {
            return Ok(Chosen {
                kvm: true,
                reason: format!("{} (cached)", r.trim()),
            });
        }
        if let Some(r) = text.strip_prefix("tcg\n") {
            return Ok(Chosen {
                kvm: false,
                reason: format!("{} (cached)", r.trim()),
            });
        }
    }
    let (chosen, verdict) = probe(image, dir, stop)?;
    // only what the probe found of the kernel: not a QEMU that failed to
    // start, an error, or a boot too slow to tell on a busy host
    if let (Some((d, n)), true) = (cache, verdict) {
        let text = format!("{}\n{}\n", if chosen.kvm { "kvm" } else { "tcg" }, chosen.reason);
        write_cached(&d, &n, &text);
    }
    Ok(chosen)
}

/// Boots `image` under KVM with an init that says "up" and powers off.
/// The bool: whether the choice is a verdict on the kernel under this
/// /dev/kvm (it reached fslab's init, or printed nothing at all while QEMU
/// ran), which may be cached.
fn probe(image: &Path, dir: &Path, stop: &AtomicBool) -> Result<(Chosen, bool), VmError> {
    let initrd = dir.join("probe.cpio");
    let spec = super::GuestSpec {
        probe: true,
        ..Default::default()
    };
    super::write_initramfs(&initrd, &spec, &[], &[], &[]).map_err(failed)?;
    let (console, result) = (dir.join("probe-console.log"), dir.join("probe-result.bin"));
    let f = BootFiles::open(image, &initrd, &console, &result).map_err(failed)?;
    let m = Machine {
        image: &f.image,
        initrd: &f.initrd,
        console: &f.console,
        result: &f.result,
        disks: &[],
        kvm: true,
        cpus: 1,
        memory: 512 << 20,
    };
    let started = Instant::now();
    let mut vm = Vm::start(&m).map_err(failed)?;
    let silent = || std::fs::metadata(&console).map(|m| m.len() == 0).unwrap_or(true);
    let up = || {
        std::fs::read(&console)
            .map(|b| String::from_utf8_lossy(&b).contains("fslab-guest: up"))
            .unwrap_or(false)
    };
    // the console must show something within SILENT_LIMIT and "up" within UP_LIMIT
    let w = vm.wait(started + SILENT_LIMIT, stop, || !silent());
    let mut reached = true;
    let verdict = match w {
        Wait::Stopped => return Err(VmError::Interrupted),
        Wait::TimedOut if silent() => {
            // a verdict on the kernel only if QEMU ran meanwhile: on a host
            // too busy to give it a second of CPU the silence says nothing
            reached = vm.cpu_time().is_some_and(|t| t >= SILENT_CPU);
            Err(format!(
                "a KVM probe boot printed nothing in {} s (this /dev/kvm does not boot the kernel)",
                SILENT_LIMIT.as_secs()
            ))
        }
        Wait::TimedOut => match vm.wait(started + UP_LIMIT, stop, up) {
            Wait::Stopped => return Err(VmError::Interrupted),
            _ if up() => Ok(()),
            _ => {
                reached = false;
                Err(format!(
                    "a KVM probe boot did not reach fslab's init in {} s",
                    UP_LIMIT.as_secs()
                ))
            }
        },
        Wait::Exited(_) if up() => Ok(()),
        Wait::Exited(st) => {
            reached = false;
            Err(format!(
                "a KVM probe boot ended without reaching fslab's init ({st}){}",
                vm.stderr().lines().next().map(|l| format!(": {l}")).unwrap_or_default()
            ))
        }
        Wait::Error(e) => {
            reached = false;
            Err(e)
        }
    };
    drop(vm);
    let chosen = match verdict {
        Ok(()) => Chosen {
            kvm: true,
            reason: format!(
                "a KVM probe boot reached fslab's init in {:.1} s",
                started.elapsed().as_secs_f64()
            ),
        },
        Err(why) => Chosen {
            kvm: false,
            reason: why,
        },
    };
    Ok((chosen, reached))
}
