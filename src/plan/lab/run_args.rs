//! `fslab run`'s flags over a plan: repeat, scratch-dir and kernel
//! overrides, the one cell a VM guest runs, consent for the block devices a
//! plan names, and telemetry flags over the plan's keys (the outputs:
//! `Presentation::for_run`).
//! Applied after the plan file is read (`parse`), or to the quick suite.

use super::*;

impl LabPlan {
    /// Applies `fslab run`'s flags: repeat and scratch-dir
    /// overrides, and consent for block devices named in the plan.
    pub fn apply_run_args(&mut self, a: &RunArgs) -> Result<()> {
        if let Some(t) = &a.equivalence {
            self.repeat.target = parse_target(t).map_err(|e| PlanError::new("--equivalence", e))?;
        }
        if let Some(n) = &a.repeat {
            self.repeat = Repeats::parse_range(n, self.repeat.target).map_err(|e| PlanError::new("--repeat", e))?;
        }
        if let Some(d) = &a.scratch_dir {
            self.scratch_dir = PathBuf::from(d);
        }
        if !a.kernels.is_empty() {
            self.kernels.clear();
            for k in &a.kernels {
                let k = vm::kernel_from_arg(k)?;
                if self.kernels.iter().any(|o| o.name == k.name) {
                    return Err(PlanError::new(
                        "--kernel",
                        format!("two kernels are named '{}': add ,name=NAME to one", k.name),
                    ));
                }
                self.kernels.push(k);
            }
        }
        if a.guest_filesystem.is_some() || a.guest_workload.is_some() || a.guest_disk.is_some() {
            self.only_guest_cell(a)?;
        }
        self.check_compared_kernels()?;
        vm::check_kernels(&mut self.kernels)?;
        vm::check_vm_filesystems(self)?;
        self.guest_args = vm::guest_args(a);
        self.guest_files = vm::guest_files(a, &self.workloads);
        let needs_scratch = self.filesystems.iter().any(|f| !matches!(f.kind, FsKind::Dir { .. }));
        if needs_scratch && !crate::host_facts::is_root() {
            return Err(PlanError::new(
                if self.file.is_some() { "PLAN" } else { "--scratch" },
                "scratch filesystems (loop devices, mkfs, mount) need root; run as root, or use type = \"dir\" filesystems",
            ));
        }
        if needs_scratch && !self.scratch_dir.is_dir() {
            return Err(PlanError::new(
                "--scratch-dir",
                format!("'{}' is not an existing directory", self.scratch_dir.display()),
            ));
        }
        self.check_named_devices(a.allow_device)?;
        if let Some(n) = &a.retry_disturbed {
            self.retry_disturbed = n.parse().ok().filter(|&n| n <= MAX_RETRY_DISTURBED).ok_or_else(|| {
                PlanError::new(
                    "--retry-disturbed",
                    format!("'{n}' is not a whole number from 0 to {MAX_RETRY_DISTURBED}"),
                )
            })?;
        }
        self.telemetry = merge_telemetry(&self.telemetry, &a.common.telemetry)?;
        Ok(())
    }

    /// A plan comparing kernels still has them after `--kernel`, its
    /// baseline among them.
    fn check_compared_kernels(&self) -> Result<()> {
        if self.compare != Compare::Kernel || self.in_guest {
            return Ok(());
        }
        if self.kernels.is_empty() {
            return Err(PlanError::new(
                "--kernel",
                "the plan compares kernels (compare = \"kernel\") and names none",
            ));
        }
        match &self.baseline {
            Some(b) if !self.kernels.iter().any(|k| &k.name == b) => Err(PlanError::new(
                "--kernel",
                format!("the plan's baseline kernel '{b}' is not among the kernels given"),
            )),
            _ => Ok(()),
        }
    }

    /// Consent and checks for the block devices the plan's filesystems
    /// name: --allow-device given, a block device, and (for queue settings
    /// on this host) a whole disk, not a partition.
    fn check_named_devices(&self, allow_device: bool) -> Result<()> {
        for f in &self.filesystems {
            let dev = match &f.kind {
                FsKind::Mkfs { device: Some(d), .. } | FsKind::Raw { device: Some(d) } => d,
                _ => continue,
            };
            if !allow_device {
                return Err(PlanError::new(
                "--allow-device",
                format!(
                    "filesystem '{}' names block device {}: fslab formats only loop devices it attached itself unless --allow-device is given",
                    f.name,
                    dev.display()
                ),
            ));
            }
            if !std::fs::metadata(dev)
                .map(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()))
                .unwrap_or(false)
            {
                return Err(PlanError::new(
                    "--allow-device",
                    format!("{} (filesystem '{}') is not a block device", dev.display(), f.name),
                ));
            }
            // A partition's queue is its disk's, shared with the other
            // partitions: refused here, before any cell, when a cell runs on
            // this host (a guest's disk is a whole virtio disk).
            let on_host = self.kernels.is_empty() || self.kernels.iter().any(KernelPlan::is_host);
            if let (false, true, Some(disk)) = (f.queue.is_empty(), on_host, partition_of(dev)) {
                let (first, v) = f.queue.attrs().into_iter().next().unwrap_or_default();
                return Err(PlanError::new(
                f.queue_at.clone().unwrap_or_else(|| "PLAN".into()),
                format!(
                    "{first} = {v}: {} (filesystem '{}') is a partition of {disk}, whose queue the other partitions share; \
                     name the whole disk or drop the queue settings",
                    dev.display(),
                    f.name
                ),
            ));
            }
            // The device's signatures (blkid) are checked by
            // `target::safety::check_plan_devices`, right after validation.
        }
        Ok(())
    }
}

/// The disk `dev` is a partition of, if it is a block device that is one
/// (by its device number in /sys, whatever path names it).
fn partition_of(dev: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(dev).ok()?.rdev();
    let sys = PathBuf::from(format!("/sys/dev/block/{}:{}", libc::major(rdev), libc::minor(rdev)));
    let sys = sys.canonicalize().ok()?;
    if !sys.join("partition").exists() {
        return None;
    }
    Some(sys.parent()?.file_name()?.to_string_lossy().into_owned())
}

impl LabPlan {
    /// Inside a guest: the one cell the host asked for, on the VM's disk
    /// for its filesystem (`--guest-disk`, else the first), once, under the
    /// guest's own kernel.
    fn only_guest_cell(&mut self, a: &RunArgs) -> Result<()> {
        let (Some(fs), Some(wl)) = (&a.guest_filesystem, &a.guest_workload) else {
            return Err(PlanError::new("--guest-filesystem", "needs --guest-workload too"));
        };
        let mut f = self
            .filesystems
            .iter()
            .find(|f| &f.name == fs)
            .cloned()
            .ok_or_else(|| PlanError::new("--guest-filesystem", format!("no filesystem '{fs}' in the plan")))?;
        let w = self
            .workloads
            .iter()
            .find(|w| &w.name == wl)
            .cloned()
            .ok_or_else(|| PlanError::new("--guest-workload", format!("no workload '{wl}' in the plan")))?;
        match &mut f.kind {
            FsKind::Mkfs { device, .. } | FsKind::Raw { device } => {
                *device = Some(PathBuf::from(a.guest_disk.as_deref().unwrap_or(vm::GUEST_DISK)))
            }
            FsKind::Tmpfs | FsKind::Dir { .. } => {}
        }
        if self.compare == Compare::Filesystem {
            self.baseline = Some(f.base.clone());
        }
        self.filesystems = vec![f];
        self.workloads = vec![w];
        self.repeat = Repeats::fixed(1);
        self.fresh = true;
        self.retry_disturbed = 0;
        self.kernels.clear();
        self.in_guest = true;
        Ok(())
    }
}

/// The plan's telemetry with the command line's flags on top: a flag
/// given wins over the plan's key.
pub(super) fn merge_telemetry(plan: &TelemetryPlan, a: &crate::cli::TelemetryArgs) -> Result<TelemetryPlan> {
    let cli = TelemetryPlan::from_args(a)?;
    let mut t = plan.clone();
    if a.no_telemetry {
        t.enabled = false;
    }
    if a.profile {
        t.profile = true;
        t.profile_hz = cli.profile_hz;
        t.profile_dir = cli.profile_dir;
    }
    if a.disturbed_cpu.is_some() {
        t.disturbed_cpu_pct = cli.disturbed_cpu_pct;
    }
    t.anatomy |= cli.anatomy;
    if cli.explain_slow_ns.is_some() {
        t.explain_slow_ns = cli.explain_slow_ns;
    }
    if t.profile && !t.enabled {
        return Err(PlanError::new(
            if a.profile { "--profile" } else { "--no-telemetry" },
            "profiling (the plan's profile = true or --profile) cannot be combined with no telemetry",
        ));
    }
    Ok(t)
}
