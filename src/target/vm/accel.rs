//! KVM or TCG. `/dev/kvm` may exist and still not boot a stock kernel: on
//! this kind of machine it is a nested paravirtual hypervisor (kvm-pvm)
//! under which the boot prints nothing and hangs. So `accel = auto` boots
//! the kernel once under KVM with an init that only says it is up: a
//! console still empty after a few seconds, or no "up" in time, means TCG.
//! The verdict is kept per kernel image (path, size, mtime) in the cache
//! directory, so later runs do not pay for the probe.

use super::{failed, Machine, Vm, VmError, Wait};
use crate::plan::lab::vm::{Accel, KernelPlan, VmPlan};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// A console still empty this long after QEMU started: KVM does not run the kernel.
const SILENT_LIMIT: Duration = Duration::from_secs(5);
/// The probe's init must say "up" within this.
const UP_LIMIT: Duration = Duration::from_secs(30);

/// The accelerator a kernel's cells use, and why.
#[derive(Debug, Clone)]
pub struct Chosen {
    pub kvm: bool,
    pub reason: String,
}

fn cache_dir() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from("/var/cache"))
        .join("fslab")
}

/// The probe's cache entry for an image.
fn cache_file(image: &Path) -> Option<PathBuf> {
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
    Some(cache_dir().join(format!("kvm-probe-{:08x}", crc32c::crc32c(key.as_bytes()))))
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
    let cache = cache_file(image);
    if let Some(text) = cache.as_ref().and_then(|c| std::fs::read_to_string(c).ok()) {
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
    let chosen = probe(image, dir, stop)?;
    if let Some(c) = cache {
        let _ = std::fs::create_dir_all(c.parent().expect("in the cache dir"));
        let tmp = c.with_extension("tmp");
        let text = format!("{}\n{}\n", if chosen.kvm { "kvm" } else { "tcg" }, chosen.reason);
        if std::fs::write(&tmp, text).is_ok() {
            let _ = std::fs::rename(&tmp, &c);
        }
    }
    Ok(chosen)
}

/// Boots `image` under KVM with an init that says "up" and powers off.
fn probe(image: &Path, dir: &Path, stop: &AtomicBool) -> Result<Chosen, VmError> {
    let initrd = dir.join("probe.cpio");
    let spec = super::GuestSpec {
        probe: true,
        ..Default::default()
    };
    super::write_initramfs(&initrd, &spec, &[], &[], &[]).map_err(failed)?;
    let (console, result) = (dir.join("probe-console.log"), dir.join("probe-result.bin"));
    let m = Machine {
        image,
        initrd: &initrd,
        console: &console,
        result: &result,
        disk: None,
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
    let verdict = match w {
        Wait::Stopped => return Err(VmError::Interrupted),
        Wait::TimedOut if silent() => Err(format!(
            "a KVM probe boot printed nothing in {} s (this /dev/kvm does not boot the kernel)",
            SILENT_LIMIT.as_secs()
        )),
        Wait::TimedOut => match vm.wait(started + UP_LIMIT, stop, up) {
            Wait::Stopped => return Err(VmError::Interrupted),
            _ if up() => Ok(()),
            _ => Err(format!(
                "a KVM probe boot did not reach fslab's init in {} s",
                UP_LIMIT.as_secs()
            )),
        },
        Wait::Exited(_) if up() => Ok(()),
        Wait::Exited(st) => Err(format!(
            "a KVM probe boot ended without reaching fslab's init ({st}){}",
            vm.stderr().lines().next().map(|l| format!(": {l}")).unwrap_or_default()
        )),
        Wait::Error(e) => Err(e),
    };
    drop(vm);
    Ok(match verdict {
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
    })
}
