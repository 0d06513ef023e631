//! Kernels as a plan dimension: `kernels = [...]` and `[vm]` in a plan,
//! `--kernel` on the command line. Every cell runs once per kernel; a
//! kernel other than `host` boots in a QEMU virtual machine with the cell's
//! scratch image as its disk (`vm`).

use super::read::Reader;
use super::*;
use std::time::Duration;

/// One kernel of a plan.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KernelPlan {
    /// The kernel's name in tables ("6.1", "host").
    pub name: String,
    /// The kernel image (bzImage, vmlinuz); None: the running kernel, no VM.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<PathBuf>,
    /// Its modules (`lib/modules/VERSION`, as `make modules_install` or a
    /// Debian package lays them out); None: the kernel has what it needs built in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modules: Option<PathBuf>,
    /// Where it was given ("plan.toml:4", "--kernel"), for errors found when
    /// its files are checked (`check_kernels`).
    #[serde(skip)]
    pub origin: String,
}

impl KernelPlan {
    pub fn is_host(&self) -> bool {
        self.image.is_none()
    }
}

/// How a kernel's VM is accelerated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Accel {
    /// KVM when a probe boot shows the kernel boots under it, else TCG.
    #[default]
    Auto,
    Kvm,
    Tcg,
}

/// The virtual machines' settings (`[vm]`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct VmPlan {
    pub cpus: u32,
    pub memory: u64,
    /// Where `memory` was set ("plan.toml:9"); empty: the default. Checked
    /// against the host's memory on the host only (`check_vm_filesystems`):
    /// a guest re-reads the plan with less.
    #[serde(skip)]
    pub memory_at: String,
    /// Longest a guest cell may take: from the boot to its result (a
    /// boot's first cell), else from the previous cell's result; None:
    /// `vm::DEFAULT_TIMEOUT`.
    #[serde(skip_serializing_if = "Option::is_none", with = "crate::plan::io::opt_dur")]
    pub timeout: Option<Duration>,
    pub accel: Accel,
}

impl Default for VmPlan {
    fn default() -> Self {
        VmPlan {
            cpus: std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(1),
            memory: 2 << 30,
            memory_at: String::new(),
            timeout: None,
            accel: Accel::Auto,
        }
    }
}

/// The most vCPUs QEMU's default x86 machine (pc) takes.
pub const MAX_CPUS: u32 = 255;

/// The QEMU binary fslab runs.
pub const QEMU: &str = "qemu-system-x86_64";

/// Whether `prog` is found on PATH.
fn on_path(prog: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(prog).is_file()))
        .unwrap_or(false)
}

/// The modules of kernel `image` where examples/fetch-kernels.sh, Debian's
/// package and a `make install`/`modules_install` into one root put them:
/// `DIR/modules` beside `DIR/vmlinuz`, or `.../boot/vmlinuz-VERSION` ->
/// `.../lib/modules/VERSION`.
pub fn default_modules(image: &Path) -> Option<PathBuf> {
    // examples/fetch-kernels.sh: `modules` beside `vmlinuz`
    if let Some(m) = image.parent().map(|d| d.join("modules")).filter(|m| m.is_dir()) {
        return Some(m);
    }
    let name = image.file_name()?.to_str()?;
    let version = name
        .strip_prefix("vmlinuz-")
        .or_else(|| name.strip_prefix("bzImage-"))?;
    let root = image.parent()?.parent()?;
    [
        root.join("lib/modules").join(version),
        root.join("usr/lib/modules").join(version),
    ]
    .into_iter()
    .find(|d| d.is_dir())
}

/// A kernel's default name: the version in `vmlinuz-VERSION`, else the file name.
fn default_name(image: &Path) -> String {
    let name = image
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.strip_prefix("vmlinuz-").map(str::to_string).unwrap_or(name)
}

/// A kernel entry as written (its files are checked by `check_kernels`).
fn entry(name: Option<String>, image: Option<PathBuf>, modules: Option<PathBuf>, origin: String) -> KernelPlan {
    KernelPlan {
        name: name.unwrap_or_else(|| image.as_deref().map(default_name).unwrap_or_else(|| "host".into())),
        image,
        modules,
        origin,
    }
}

/// Checks each kernel's files and QEMU, and fills in default modules.
/// Not in a guest: there the host's paths do not exist and the guest's
/// own kernel runs the cell.
pub fn check_kernels(kernels: &mut [KernelPlan]) -> Result<()> {
    for k in kernels.iter_mut() {
        let Some(image) = &k.image else { continue };
        let err = |m: String| PlanError::new(k.origin.clone(), m);
        if !image.is_file() {
            return Err(err(format!(
                "kernel image '{}' is not a readable file",
                image.display()
            )));
        }
        if let Some(m) = &k.modules {
            if !m.is_dir() {
                return Err(err(format!(
                    "modules '{}' is not a directory (give the kernel's lib/modules/VERSION)",
                    m.display()
                )));
            }
        }
        if !on_path(QEMU) {
            return Err(err(format!(
                "{QEMU} is not installed (Debian: apt-get install qemu-system-x86): a kernel other than host runs in a virtual machine"
            )));
        }
        if k.modules.is_none() {
            k.modules = default_modules(image);
        }
    }
    Ok(())
}

/// `--kernel host` or `--kernel IMAGE[,modules=DIR][,name=NAME]`.
pub fn kernel_from_arg(s: &str) -> Result<KernelPlan> {
    let err = |m: String| PlanError::new("--kernel", m);
    if s == "host" {
        return Ok(entry(None, None, None, "--kernel".into()));
    }
    let mut parts = s.split(',');
    let image = parts
        .next()
        .filter(|i| !i.is_empty())
        .ok_or_else(|| err("give IMAGE[,modules=DIR][,name=NAME] or host".into()))?;
    let (mut modules, mut name) = (None, None);
    for p in parts {
        match p.split_once('=') {
            Some(("modules", d)) => modules = Some(PathBuf::from(d)),
            Some(("name", n)) if !n.is_empty() => name = Some(n.to_string()),
            _ => return Err(err(format!("'{p}': known are modules=DIR and name=NAME"))),
        }
    }
    Ok(entry(name, Some(PathBuf::from(image)), modules, "--kernel".into()))
}

impl Reader<'_> {
    /// `kernels = [{ name = "6.1", image = "...", modules = "..." }, "host", ...]`.
    pub(super) fn kernels(&self, k: &Spanned<std::borrow::Cow<str>>, v: &Spanned<DeValue>) -> Result<Vec<KernelPlan>> {
        let DeValue::Array(a) = v.get_ref() else {
            return Err(self.err_at(
                v.span().start,
                "kernels must be a list: [{ name = \"6.1\", image = \"...vmlinuz\", modules = \"...lib/modules/VERSION\" }, \"host\"]",
            ));
        };
        let mut out: Vec<KernelPlan> = Vec::new();
        for e in a.iter() {
            let at = e.span().start;
            let origin = self.err_at(at, "").flag;
            let kp = match e.get_ref() {
                DeValue::String(s) if s == "host" => entry(None, None, None, origin),
                DeValue::Table(t) => {
                    let (mut name, mut image, mut modules) = (None, None, None);
                    for (tk, tv) in t {
                        match tk.get_ref().as_ref() {
                            "name" => name = Some(self.string(tk, tv)?),
                            "image" => {
                                let s = self.string(tk, tv)?;
                                image = (s != "host").then(|| self.base.join(s));
                            }
                            "modules" => modules = Some(self.path(tk, tv)?),
                            other => {
                                return Err(self.err_at(
                                    tk.span().start,
                                    format!("unknown key '{other}' in a kernel (known: name, image, modules)"),
                                ))
                            }
                        }
                    }
                    if image.is_none() && modules.is_some() {
                        return Err(self.err_at(at, "modules without image: the host kernel uses its own"));
                    }
                    entry(name, image, modules, origin)
                }
                other => {
                    return Err(self.err_at(
                        at,
                        format!(
                            "each kernel must be a table {{ name, image, modules }} or \"host\", not {}",
                            other.type_str()
                        ),
                    ))
                }
            };
            if out.iter().any(|o| o.name == kp.name) {
                return Err(self.err_at(
                    at,
                    format!("two kernels are named '{}': give each a distinct name", kp.name),
                ));
            }
            out.push(kp);
        }
        if out.is_empty() {
            return Err(self.err_at(
                k.span().start,
                "kernels is empty: leave it out to run on the host's kernel",
            ));
        }
        Ok(out)
    }

    /// `[vm]`: cpus, memory, timeout, accel.
    pub(super) fn vm(&self, v: &Spanned<DeValue>) -> Result<VmPlan> {
        let DeValue::Table(t) = v.get_ref() else {
            return Err(self.err_at(
                v.span().start,
                "vm must be a table ([vm] with cpus, memory, timeout, accel)",
            ));
        };
        let mut vm = VmPlan::default();
        for (k, v) in t {
            match k.get_ref().as_ref() {
                "cpus" => {
                    let n = self.count(k, v, 1)?;
                    vm.cpus = u32::try_from(n).ok().filter(|&n| n <= MAX_CPUS).ok_or_else(|| {
                        self.err_at(
                            v.span().start,
                            format!("cpus = {n}: must be from 1 to {MAX_CPUS} (QEMU's pc machine)"),
                        )
                    })?
                }
                "memory" => {
                    vm.memory = self.size(k, v)?;
                    vm.memory_at = self.err_at(v.span().start, "").flag;
                    if vm.memory < 256 << 20 {
                        return Err(self.err_at(
                            v.span().start,
                            "memory must be at least 256m (the guest holds fslab, its tools and modules in RAM)",
                        ));
                    }
                }
                "timeout" => {
                    let s = self.string(k, v)?;
                    vm.timeout = Some(
                        units::parse_duration(&s)
                            .ok()
                            .filter(|d| !d.is_zero() && *d <= units::MAX_DURATION)
                            .ok_or_else(|| {
                                self.err_at(
                                    v.span().start,
                                    format!("timeout: '{s}' is not a duration such as \"10m\""),
                                )
                            })?,
                    );
                }
                "accel" => {
                    vm.accel = match self.string(k, v)?.as_str() {
                        "auto" => Accel::Auto,
                        "kvm" => Accel::Kvm,
                        "tcg" => Accel::Tcg,
                        o => {
                            return Err(
                                self.err_at(v.span().start, format!("accel: unknown '{o}' (known: auto, kvm, tcg)"))
                            )
                        }
                    }
                }
                other => {
                    return Err(self.err_at(
                        k.span().start,
                        format!("unknown key '{other}' in [vm] (known: cpus, memory, timeout, accel)"),
                    ))
                }
            }
        }
        Ok(vm)
    }
}

/// Refuses what a VM kernel cannot run: an existing host directory (it is
/// not in the guest) and loop settings (the guest's disk is virtio-blk).
pub fn check_vm_filesystems(lab: &LabPlan) -> Result<()> {
    if lab.kernels.iter().all(KernelPlan::is_host) {
        return Ok(());
    }
    let flag = if lab.file.is_some() { "PLAN" } else { "--kernel" };
    if let Some(host) = crate::plan::host_memory().filter(|&h| lab.vm.memory > h) {
        let at = if lab.vm.memory_at.is_empty() {
            "[vm] memory (default 2g)"
        } else {
            &lab.vm.memory_at
        };
        return Err(PlanError::new(
            at,
            format!(
                "memory = {} is more than this host's {} of memory: each guest's memory is the host's",
                crate::units::Bytes(lab.vm.memory),
                crate::units::Bytes(host)
            ),
        ));
    }
    for f in &lab.filesystems {
        if let FsKind::Dir { path } = &f.kind {
            return Err(PlanError::new(
                flag,
                format!(
                    "filesystem '{}' is the host directory {}, which a kernel in a virtual machine cannot reach: use a scratch filesystem (ext4, xfs, btrfs, tmpfs, raw)",
                    f.name,
                    path.display()
                ),
            ));
        }
        if f.loop_direct_io.is_some() {
            return Err(PlanError::new(
                flag,
                format!(
                    "filesystem '{}' sets loop_direct_io, but under a VM kernel its disk is virtio-blk (cache=none), not a loop device",
                    f.name
                ),
            ));
        }
    }
    Ok(())
}

/// The guest's disk: the cell's scratch image (or `device`), virtio-blk.
pub const GUEST_DISK: &str = "/dev/vda";

/// The flags of `fslab run` that rebuild the host's plan in a guest.
pub fn guest_args(a: &RunArgs) -> Vec<String> {
    let mut v = vec!["run".to_string()];
    if let Some(p) = &a.plan {
        v.push(
            std::path::absolute(p)
                .unwrap_or_else(|_| PathBuf::from(p))
                .display()
                .to_string(),
        );
    }
    if let Some(r) = &a.runtime {
        v.extend(["--runtime".to_string(), r.clone()]);
    }
    if !a.scratch.is_empty() {
        v.extend(["--scratch".to_string(), a.scratch.join(",")]);
    }
    if a.force_overwrite {
        v.push("--force-overwrite".into());
    }
    let t = &a.common.telemetry;
    if t.no_telemetry {
        v.push("--no-telemetry".into());
    }
    if let Some(d) = &t.disturbed_cpu {
        v.extend(["--disturbed-cpu".to_string(), d.clone()]);
    }
    if t.profile {
        v.push("--profile".into());
    }
    v
}

/// The files a guest reads at the host's paths: the plan file and the
/// workloads' load files (absolute, as the guest resolves them).
pub fn guest_files(a: &RunArgs, workloads: &[WorkloadPlan]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = a.plan.iter().filter_map(|p| std::path::absolute(p).ok()).collect();
    for w in workloads {
        let mut args = w.args.iter();
        while let Some(x) = args.next() {
            let file = if x == "--loadfile" {
                args.next().map(String::as_str)
            } else {
                x.strip_prefix("--loadfile=")
            };
            if let Some(f) = file.and_then(|f| std::path::absolute(f).ok()) {
                if f.is_file() && !v.contains(&f) {
                    v.push(f);
                }
            }
        }
        if let CellPlan::Replay(p) = &w.plan {
            let f = PathBuf::from(&p.loadfile.name);
            if f.is_absolute() && f.is_file() && !v.contains(&f) {
                v.push(f);
            }
        }
    }
    v
}
