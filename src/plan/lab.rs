//! Lab plans: which filesystems to make and which workloads to run on each,
//! how often, against which baseline. Read from a TOML plan file
//! (docs/plans.md) or built for the quick suite. Workload tables use the very
//! keys of the command-line flags: each is turned into the argument list of
//! its command and validated by the same code as on the command line, so a
//! plan accepts exactly what the CLI accepts, and every error names the plan
//! file and the line of the offending key.

use super::MKFS_TYPES;
use super::{CellPlan, IoPlan, MetaPlan, Outputs, PlanError, ProbePlan, ReplayPlan, Result, TelemetryPlan};
use crate::cli::{Cli, Command, RunArgs};
use crate::units;
use clap::{CommandFactory, Parser};
use std::path::{Path, PathBuf};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

pub mod fsopts;
mod read;
pub mod vm;
use read::Reader;
pub use vm::{Accel, KernelPlan, VmPlan};

/// Default scratch directory: on disk (not tmpfs), kept across reboots only
/// by what fslab forgets, which `fslab cleanup` removes.
pub const DEFAULT_SCRATCH_DIR: &str = "/var/tmp";
/// Default size of a scratch filesystem's image (sparse).
pub const DEFAULT_FS_SIZE: u64 = 4 << 30;

/// Where a plan's workloads run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum FsKind {
    /// A fresh filesystem made with mkfs on a loop device (or on `device`).
    Mkfs {
        fs_type: String,
        device: Option<PathBuf>,
    },
    Tmpfs,
    /// An existing directory: nothing is made, nothing but fslab's work directory is removed.
    Dir {
        path: PathBuf,
    },
    /// The bare loop device (or `device`), for io workloads.
    Raw {
        device: Option<PathBuf>,
    },
}

/// One filesystem of a plan.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FsPlan {
    pub name: String,
    pub kind: FsKind,
    pub mkfs: Vec<String>,
    pub mount: Option<String>,
    pub size: u64,
    /// Block-queue settings of the device under it, for the cell's duration.
    #[serde(skip_serializing_if = "QueueSettings::is_empty")]
    pub queue: QueueSettings,
    /// Whether fslab's loop device does direct I/O to its image (default on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loop_direct_io: Option<bool>,
    /// Where the plan sets the block queue ("plan.toml:7"), for errors.
    #[serde(skip)]
    pub queue_at: Option<String>,
}

/// The `[[filesystem]]` keys that set the device's block queue (named as
/// its sysfs files), in the order they are set and put back. Switching the
/// scheduler resets nr_requests to the new one's default; writing
/// max_sectors_kb or rotational recomputes the queue's limits, which resets
/// read_ahead_kb (6.18 here: rotational=0 turned a read_ahead_kb of 64 into
/// 128), so read-ahead comes last.
pub const QUEUE_ORDER: [&str; 6] = [
    "scheduler",
    "nr_requests",
    "wbt_lat_usec",
    "max_sectors_kb",
    "rotational",
    "read_ahead_kb",
];

/// The I/O schedulers a plan may name (the kernel offers a subset per queue).
pub const SCHEDULERS: [&str; 4] = ["none", "mq-deadline", "bfq", "kyber"];

/// Block-queue settings (/sys/block/DEV/queue/*) a plan sets on the device
/// under a filesystem or raw cell: set before mkfs, restored when the
/// scratch filesystem goes (`target::queue`). Seed 001 asked whether the
/// deadline or noop scheduler mattered; these make such questions a plan
/// variable like a mount option.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct QueueSettings {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_ahead_kb: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nr_requests: Option<u64>,
    /// Writeback throttling's latency target; 0 turns it off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wbt_lat_usec: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_sectors_kb: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
}

impl QueueSettings {
    pub fn is_empty(&self) -> bool {
        *self == QueueSettings::default()
    }

    /// The value the plan gives sysfs attribute `name`, as it is written there.
    fn value(&self, name: &str) -> Option<String> {
        let n = |v: Option<u64>| v.map(|v| v.to_string());
        match name {
            "scheduler" => self.scheduler.clone(),
            "nr_requests" => n(self.nr_requests),
            "wbt_lat_usec" => n(self.wbt_lat_usec),
            "max_sectors_kb" => n(self.max_sectors_kb),
            "rotational" => self.rotational.map(|r| (r as u8).to_string()),
            "read_ahead_kb" => n(self.read_ahead_kb),
            _ => None,
        }
    }

    /// (sysfs attribute, value) of what the plan sets, in `QUEUE_ORDER`.
    pub fn attrs(&self) -> Vec<(&'static str, String)> {
        QUEUE_ORDER.iter().filter_map(|&n| Some((n, self.value(n)?))).collect()
    }

    /// "scheduler=mq-deadline", ... as the plan set them.
    pub fn describe(&self) -> Vec<String> {
        self.attrs().into_iter().map(|(k, v)| format!("{k}={v}")).collect()
    }
}

impl FsPlan {
    /// The type as the user wrote it: ext4, xfs, tmpfs, dir, raw.
    pub fn type_name(&self) -> &str {
        match &self.kind {
            FsKind::Mkfs { fs_type, .. } => fs_type,
            FsKind::Tmpfs => "tmpfs",
            FsKind::Dir { .. } => "dir",
            FsKind::Raw { .. } => "raw",
        }
    }
}

/// One workload of a plan: its validated plan and the flags it came from.
#[derive(Debug, Clone, serde::Serialize)]
pub struct WorkloadPlan {
    pub name: String,
    /// io, meta, replay, probe.
    pub kind: String,
    /// The equivalent command line (without --target).
    pub args: Vec<String>,
    pub plan: CellPlan,
}

/// A whole lab run: filesystems x workloads x repeats.
#[derive(Debug, serde::Serialize)]
pub struct LabPlan {
    pub name: String,
    /// The plan file, or None for the built-in quick suite.
    pub file: Option<PathBuf>,
    pub repeat: u32,
    pub baseline: Option<String>,
    /// A fresh mkfs for every cell (default), or one filesystem per entry for the whole run.
    pub fresh: bool,
    pub drop_caches: bool,
    pub scratch_dir: PathBuf,
    pub filesystems: Vec<FsPlan>,
    pub workloads: Vec<WorkloadPlan>,
    #[serde(skip)]
    pub outputs: Outputs,
    pub quiet: bool,
    /// `quiet-warnings = true`: the text reports keep the cells' flags and
    /// warnings in the JSON (as `--quiet-warnings`).
    #[serde(skip)]
    pub quiet_warnings: bool,
    /// What is measured beside each cell: the plan's `telemetry`,
    /// `profile`, `disturbed-cpu` keys, then the command line's flags.
    pub telemetry: TelemetryPlan,
    /// A disturbed cell runs again up to this many times (`retry-disturbed`,
    /// `--retry-disturbed`).
    pub retry_disturbed: u32,
    /// The kernels every cell runs under (`kernels`, `--kernel`); empty: the
    /// running kernel only, and no kernel dimension in the tables.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<KernelPlan>,
    /// The virtual machines of kernels other than host (`[vm]`).
    pub vm: VmPlan,
    /// The arguments of `fslab run` that rebuild this plan inside a guest
    /// (the plan file's absolute path, the quick suite's flags).
    #[serde(skip)]
    pub guest_args: Vec<String>,
    /// Files the guest needs at the same paths (the plan file, load files).
    #[serde(skip)]
    pub guest_files: Vec<PathBuf>,
    /// This is the one cell of a VM guest (`--guest-filesystem`): the
    /// host's calibration card is the run's, the guest measures none.
    #[serde(skip)]
    pub in_guest: bool,
}

/// Most reruns of a disturbed cell.
pub const MAX_RETRY_DISTURBED: u32 = 100;

/// The plan's telemetry keys, as written (the command line may override them).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanTelemetryKeys {
    pub telemetry: Option<bool>,
    pub profile: Option<bool>,
    pub disturbed_cpu: Option<f64>,
    pub retry_disturbed: Option<u32>,
}

impl CellPlan {
    /// The same plan aimed at `target` (a mount point, directory or device).
    pub fn retarget(&mut self, target: &Path) {
        match self {
            CellPlan::Io(p) => p.target = target.to_path_buf(),
            CellPlan::Meta(p) => p.target = target.to_path_buf(),
            CellPlan::Replay(p) => p.target = target.to_path_buf(),
            CellPlan::Probe(p) => {
                p.target = target.to_path_buf();
                if let Some(super::Load::Io { plan, .. }) = &mut p.load {
                    plan.target = target.to_path_buf();
                }
            }
        }
    }

    pub fn set_quiet(&mut self, q: bool) {
        match self {
            CellPlan::Io(p) => p.quiet = q,
            CellPlan::Meta(p) => p.quiet = q,
            CellPlan::Replay(p) => p.quiet = q,
            CellPlan::Probe(p) => p.quiet = q,
        }
    }

    /// io, meta, replay or probe.
    pub fn kind(&self) -> &'static str {
        match self {
            CellPlan::Io(_) => "io",
            CellPlan::Meta(_) => "meta",
            CellPlan::Replay(_) => "replay",
            CellPlan::Probe(_) => "probe",
        }
    }
}

/// Builds a workload's plan from the flags of its command, as `fslab KIND ARGS...`
/// would; `target` is a placeholder replaced per filesystem at run time.
pub fn workload_from_args(kind: &str, args: &[String]) -> std::result::Result<CellPlan, WorkloadError> {
    let mut argv = vec!["fslab".to_string(), kind.to_string()];
    argv.extend(args.iter().cloned());
    argv.extend(["--target".into(), "/".into(), "--quiet".into()]);
    let cli = Cli::try_parse_from(&argv).map_err(|e| WorkloadError::Usage(crate::cli::one_line(&e)))?;
    let plan = match &cli.command {
        Command::Io(a) => CellPlan::Io(IoPlan::from_args(a)?),
        Command::Meta(a) => CellPlan::Meta(MetaPlan::from_args(a)?),
        Command::Replay(a) => CellPlan::Replay(ReplayPlan::from_args(a)?),
        Command::Probe(a) => CellPlan::Probe(ProbePlan::from_args(a)?),
        _ => return Err(WorkloadError::Usage(format!("'{kind}' is not a workload"))),
    };
    Ok(plan)
}

/// Why a workload's flags were rejected.
#[derive(Debug)]
pub enum WorkloadError {
    /// clap's complaint (unknown flag, missing value).
    Usage(String),
    /// The plan's, naming the flag.
    Plan(PlanError),
}

impl From<PlanError> for WorkloadError {
    fn from(e: PlanError) -> Self {
        WorkloadError::Plan(e)
    }
}

impl LabPlan {
    /// Reads and validates a plan file; `a` carries the run's common flags.
    pub fn from_file(path: &str, a: &RunArgs) -> Result<LabPlan> {
        let text = super::read_regular_file(Path::new(path), "PLAN", super::MAX_PLAN_BYTES)?;
        let mut lab = Self::parse(path, &text)?;
        lab.apply_run_args(a)?;
        Ok(lab)
    }

    /// Parses plan text; `file` names it in errors and anchors relative paths.
    pub fn parse(file: &str, text: &str) -> Result<LabPlan> {
        let base = Path::new(file).parent().map(Path::to_path_buf).unwrap_or_default();
        let r = Reader {
            file: file.to_string(),
            text,
            base,
        };
        let doc = DeTable::parse(text).map_err(|e| {
            let at = e.span().map(|s| s.start).unwrap_or(0);
            r.err_at(at, e.message().trim())
        })?;
        let mut lab = LabPlan {
            name: Path::new(file)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            file: Some(PathBuf::from(file)),
            repeat: 3,
            baseline: None,
            fresh: true,
            drop_caches: true,
            scratch_dir: PathBuf::from(DEFAULT_SCRATCH_DIR),
            filesystems: Vec::new(),
            workloads: Vec::new(),
            outputs: Outputs::default(),
            quiet: false,
            quiet_warnings: false,
            telemetry: TelemetryPlan::default(),
            retry_disturbed: 0,
            kernels: Vec::new(),
            vm: VmPlan::default(),
            guest_args: Vec::new(),
            guest_files: Vec::new(),
            in_guest: false,
        };
        let mut baseline_at = 0;
        let mut keys = PlanTelemetryKeys::default();
        for (k, v) in doc.get_ref() {
            match k.get_ref().replace('_', "-").as_str() {
                "name" => lab.name = r.string(k, v)?,
                "description" => {
                    r.string(k, v)?;
                }
                "repeat" => {
                    lab.repeat = match v.get_ref() {
                        DeValue::Integer(i) => i.as_str().parse().ok().filter(|&n| (1..=1000).contains(&n)),
                        _ => None,
                    }
                    .ok_or_else(|| r.err_at(v.span().start, "repeat must be a whole number from 1 to 1000"))?
                }
                "baseline" => {
                    lab.baseline = Some(r.string(k, v)?);
                    baseline_at = v.span().start;
                }
                "fresh" => lab.fresh = r.bool(k, v)?,
                "quiet-warnings" => lab.quiet_warnings = r.bool(k, v)?,
                "drop-caches" => lab.drop_caches = r.bool(k, v)?,
                "scratch-dir" => lab.scratch_dir = r.path(k, v)?,
                "telemetry" => keys.telemetry = Some(r.bool(k, v)?),
                "profile" => keys.profile = Some(r.bool(k, v)?),
                "disturbed-cpu" => {
                    let pct = match v.get_ref() {
                        DeValue::Integer(i) => i.as_str().parse::<f64>().ok(),
                        DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
                        DeValue::String(s) => s.trim_end_matches('%').parse::<f64>().ok(),
                        _ => None,
                    }
                    .filter(|p| p.is_finite() && *p > 0.0 && *p <= 100.0)
                    .ok_or_else(|| r.err_at(v.span().start, "disturbed-cpu must be a percentage in (0, 100]"))?;
                    keys.disturbed_cpu = Some(pct);
                }
                "retry-disturbed" => {
                    keys.retry_disturbed = Some(
                        match v.get_ref() {
                            DeValue::Integer(i) => i.as_str().parse().ok().filter(|&n| n <= MAX_RETRY_DISTURBED),
                            _ => None,
                        }
                        .ok_or_else(|| {
                            r.err_at(
                                v.span().start,
                                format!("retry-disturbed must be a whole number from 0 to {MAX_RETRY_DISTURBED}"),
                            )
                        })?,
                    )
                }
                "kernels" => lab.kernels = r.kernels(k, v)?,
                "vm" => lab.vm = r.vm(v)?,
                "filesystem" => {
                    for (at, t) in r.tables(k, v)? {
                        lab.filesystems.push(r.filesystem(at, t)?);
                    }
                }
                "workload" => {
                    for (at, t) in r.tables(k, v)? {
                        let i = lab.workloads.len();
                        lab.workloads.push(r.workload(at, t, i)?);
                    }
                }
                other => {
                    return Err(r.err_at(
                        k.span().start,
                        format!("unknown key '{}' (known: name, description, repeat, baseline, fresh, drop-caches, scratch-dir, quiet-warnings, telemetry, profile, disturbed-cpu, retry-disturbed, kernels, [vm], [[filesystem]], [[workload]])", other.escape_debug()),
                    ))
                }
            }
        }
        if keys.profile == Some(true) && keys.telemetry == Some(false) {
            return Err(r.err_at(0, "profile = true cannot be combined with telemetry = false"));
        }
        if let Some(t) = keys.telemetry {
            lab.telemetry.enabled = t;
        }
        if let Some(p) = keys.profile {
            lab.telemetry.profile = p;
        }
        if let Some(p) = keys.disturbed_cpu {
            lab.telemetry.disturbed_cpu_pct = p;
        }
        if let Some(n) = keys.retry_disturbed {
            lab.retry_disturbed = n;
        }
        if lab.filesystems.is_empty() {
            return Err(r.err_at(text.len(), "the plan has no [[filesystem]]"));
        }
        if lab.workloads.is_empty() {
            return Err(r.err_at(text.len(), "the plan has no [[workload]]"));
        }
        for (i, f) in lab.filesystems.iter().enumerate() {
            if lab.filesystems[..i].iter().any(|g| g.name == f.name) {
                return Err(r.err_at(
                    0,
                    format!("two filesystems are named '{}': give each a distinct name", f.name),
                ));
            }
        }
        for (i, w) in lab.workloads.iter().enumerate() {
            if lab.workloads[..i].iter().any(|g| g.name == w.name) {
                return Err(r.err_at(
                    0,
                    format!("two workloads are named '{}': give each a distinct name", w.name),
                ));
            }
        }
        if let Some(b) = &lab.baseline {
            if !lab.filesystems.iter().any(|f| &f.name == b) {
                let names: Vec<_> = lab.filesystems.iter().map(|f| f.name.as_str()).collect();
                return Err(r.err_at(
                    baseline_at,
                    format!("baseline '{b}' is not a filesystem of the plan ({})", names.join(", ")),
                ));
            }
        }
        Ok(lab)
    }

    /// Applies `fslab run`'s flags: outputs, quiet, repeat and scratch-dir
    /// overrides, and consent for block devices named in the plan.
    pub fn apply_run_args(&mut self, a: &RunArgs) -> Result<()> {
        if let Some(n) = &a.repeat {
            self.repeat = n
                .parse()
                .ok()
                .filter(|&n| (1..=1000).contains(&n))
                .ok_or_else(|| PlanError::new("--repeat", format!("'{n}' is not a whole number from 1 to 1000")))?;
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
        if a.guest_filesystem.is_some() || a.guest_workload.is_some() {
            self.only_guest_cell(a)?;
        }
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
        for f in &self.filesystems {
            let dev = match &f.kind {
                FsKind::Mkfs { device: Some(d), .. } | FsKind::Raw { device: Some(d) } => d,
                _ => continue,
            };
            if !a.allow_device {
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
        if let Some(n) = &a.retry_disturbed {
            self.retry_disturbed = n.parse().ok().filter(|&n| n <= MAX_RETRY_DISTURBED).ok_or_else(|| {
                PlanError::new(
                    "--retry-disturbed",
                    format!("'{n}' is not a whole number from 0 to {MAX_RETRY_DISTURBED}"),
                )
            })?;
        }
        self.telemetry = merge_telemetry(&self.telemetry, &a.common.telemetry)?;
        self.outputs = Outputs::from_args(&a.common, "run")?
            .with_tables(a.format)
            .with_quiet_warnings(self.quiet_warnings);
        self.quiet = a.common.quiet;
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
    /// Inside a guest: the one cell the host asked for, on the VM's disk,
    /// once, under the guest's own kernel.
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
            FsKind::Mkfs { device, .. } | FsKind::Raw { device } => *device = Some(PathBuf::from(vm::GUEST_DISK)),
            FsKind::Tmpfs | FsKind::Dir { .. } => {}
        }
        self.baseline = Some(f.name.clone());
        self.filesystems = vec![f];
        self.workloads = vec![w];
        self.repeat = 1;
        self.fresh = true;
        self.retry_disturbed = 0;
        self.kernels.clear();
        self.in_guest = true;
        Ok(())
    }
}

/// The plan's telemetry with the command line's flags on top: a flag
/// given wins over the plan's key.
fn merge_telemetry(plan: &TelemetryPlan, a: &crate::cli::TelemetryArgs) -> Result<TelemetryPlan> {
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
    if t.profile && !t.enabled {
        return Err(PlanError::new(
            if a.profile { "--profile" } else { "--no-telemetry" },
            "profiling (the plan's profile = true or --profile) cannot be combined with no telemetry",
        ));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"name = "t"
repeat = 2
baseline = "xfs"

[[filesystem]]
type = "ext4"
mkfs = "-I 512"
mount = "noatime"

[[filesystem]]
type = "xfs"
mkfs = ["-i", "size=512"]
size = "1g"

[[filesystem]]
name = "here"
type = "dir"
path = "/tmp"

[[workload]]
type = "meta"
files = "1k"
xattr = ["user.a:44", "user.b:256"]
shared_dirs = true

[[workload]]
name = "rr"
type = "io"
rw = "randrw"
bs = "16k"
jobs = 4
direct = true
fsync = 8
"#;

    #[test]
    fn parses_a_full_plan() {
        let p = LabPlan::parse("p.toml", GOOD).unwrap();
        assert_eq!(
            (p.name.as_str(), p.repeat, p.baseline.as_deref()),
            ("t", 2, Some("xfs"))
        );
        assert_eq!(p.filesystems.len(), 3);
        assert_eq!(p.filesystems[0].name, "ext4");
        assert_eq!(p.filesystems[0].mkfs, ["-I", "512"]);
        assert_eq!(p.filesystems[0].mount.as_deref(), Some("noatime"));
        assert_eq!(p.filesystems[0].size, DEFAULT_FS_SIZE);
        assert_eq!(p.filesystems[1].mkfs, ["-i", "size=512"]);
        assert_eq!(p.filesystems[1].size, 1 << 30);
        assert_eq!(p.filesystems[2].kind, FsKind::Dir { path: "/tmp".into() });
        assert_eq!(p.workloads[0].name, "meta1");
        assert_eq!(
            p.workloads[0].args,
            [
                "--files",
                "1k",
                "--shared-dirs",
                "--xattr",
                "user.a:44",
                "--xattr",
                "user.b:256"
            ]
        );
        let CellPlan::Meta(m) = &p.workloads[0].plan else {
            panic!()
        };
        assert_eq!((m.files, m.xattrs.len()), (1000, 2));
        let CellPlan::Io(io) = &p.workloads[1].plan else {
            panic!()
        };
        assert_eq!((io.bs, io.jobs, io.direct), (16384, 4, true));
    }

    /// The error for `text` names `file:line` and says `want`.
    fn err(text: &str) -> String {
        LabPlan::parse("p.toml", text).unwrap_err().to_string()
    }

    fn with_fs(extra: &str) -> String {
        format!("[[filesystem]]\ntype = \"ext4\"\n{extra}\n[[workload]]\ntype = \"meta\"\n")
    }

    fn with_wl(extra: &str) -> String {
        format!("[[filesystem]]\ntype = \"ext4\"\n\n[[workload]]\ntype = \"io\"\n{extra}\n")
    }

    #[test]
    fn telemetry_keys_and_the_flags_over_them() {
        let lab = LabPlan::parse(
            "p.toml",
            &("telemetry = true\nprofile = true\ndisturbed_cpu = 25\nretry-disturbed = 2\n".to_string() + &with_fs("")),
        )
        .unwrap();
        assert!(lab.telemetry.enabled && lab.telemetry.profile);
        assert_eq!(lab.telemetry.disturbed_cpu_pct, 25.0);
        assert_eq!(lab.retry_disturbed, 2);
        let lab = LabPlan::parse("p.toml", &("disturbed-cpu = \"7.5%\"\n".to_string() + &with_fs(""))).unwrap();
        assert_eq!(lab.telemetry.disturbed_cpu_pct, 7.5);
        assert_eq!(lab.retry_disturbed, 0);
        let off = LabPlan::parse("p.toml", &("telemetry = false\n".to_string() + &with_fs(""))).unwrap();
        assert!(!off.telemetry.enabled);
        // a flag given wins; one not given leaves the plan's key
        let flags = crate::cli::TelemetryArgs {
            disturbed_cpu: Some("30".into()),
            ..Default::default()
        };
        let t = merge_telemetry(&lab.telemetry, &flags).unwrap();
        assert_eq!(t.disturbed_cpu_pct, 30.0);
        assert!(t.enabled);
        let t = merge_telemetry(&off.telemetry, &Default::default()).unwrap();
        assert!(!t.enabled);
        let flags = crate::cli::TelemetryArgs {
            profile: true,
            ..Default::default()
        };
        let e = merge_telemetry(&off.telemetry, &flags).unwrap_err().to_string();
        assert!(e.contains("--profile"), "{e}");
        let cases: &[(String, &str)] = &[
            (
                "telemetry = 1\n".to_string() + &with_fs(""),
                "p.toml:1: telemetry must be true or false",
            ),
            (
                "disturbed-cpu = 0\n".to_string() + &with_fs(""),
                "p.toml:1: disturbed-cpu must be a percentage in (0, 100]",
            ),
            (
                "\ndisturbed_cpu = \"lots\"\n".to_string() + &with_fs(""),
                "p.toml:2: disturbed-cpu must be a percentage",
            ),
            (
                "retry-disturbed = -1\n".to_string() + &with_fs(""),
                "p.toml:1: retry-disturbed must be a whole number from 0 to 100",
            ),
            (
                "retry_disturbed = 101\n".to_string() + &with_fs(""),
                "p.toml:1: retry-disturbed must be a whole number",
            ),
            (
                "telemetry = false\nprofile = true\n".to_string() + &with_fs(""),
                "profile = true cannot be combined with telemetry = false",
            ),
        ];
        for (text, want) in cases {
            let e = err(text);
            assert!(e.contains(want), "{e} should contain {want}");
        }
    }

    #[test]
    fn errors_name_file_and_line() {
        let cases: &[(String, &str)] = &[
            (
                "repeat = 0\n".to_string() + &with_fs(""),
                "p.toml:1: repeat must be a whole number",
            ),
            (
                "colour = 1\n".to_string() + &with_fs(""),
                "p.toml:1: unknown key 'colour'",
            ),
            (
                with_fs("mkfs_opts = \"-I 512\""),
                "p.toml:3: unknown key 'mkfs_opts' in [[filesystem]]",
            ),
            (with_fs("size = \"12q\""), "p.toml:3: size:"),
            (with_fs("size = \"1m\""), "p.toml:1: size must be at least 64m"),
            (
                "[[filesystem]]\ntype = \"zfs\"\n[[workload]]\ntype = \"meta\"\n".into(),
                "p.toml:2: unknown filesystem type 'zfs'",
            ),
            (
                "[[filesystem]]\nname = \"x\"\n[[workload]]\ntype = \"meta\"\n".into(),
                "p.toml:1: [[filesystem]] needs a type",
            ),
            (
                "[[filesystem]]\ntype = \"dir\"\n[[workload]]\ntype = \"meta\"\n".into(),
                "needs path",
            ),
            (
                "[[filesystem]]\ntype = \"tmpfs\"\nmkfs = \"-x\"\n[[workload]]\ntype = \"meta\"\n".into(),
                "mkfs arguments given",
            ),
            (with_wl("bs = \"16q\""), "p.toml:6: bs: '16q'"),
            (with_wl("\nrwmixread = 101\nrw = \"randrw\""), "p.toml:7: rwmixread:"),
            (with_wl("bogus = 1"), "p.toml:6: unknown key 'bogus' for a io workload"),
            (with_wl("direct = \"yes\""), "p.toml:6: direct is a switch"),
            (with_wl("bs = true"), "p.toml:6: bs: expected a string or number"),
            (
                with_wl("target = \"/mnt\""),
                "p.toml:6: target is set by each [[filesystem]]",
            ),
            (
                with_wl("output = \"json\""),
                "p.toml:6: output applies to the whole run",
            ),
            (
                "[[filesystem]]\ntype = \"ext4\"\n[[workload]]\nfiles = 3\n".into(),
                "p.toml:3: [[workload]] needs a type",
            ),
            (
                "[[filesystem]]\ntype = \"ext4\"\n[[workload]]\ntype = \"fio\"\n".into(),
                "p.toml:4: unknown workload type 'fio'",
            ),
            (
                "[[filesystem]]\ntype = \"ext4\"\n[[workload]]\ntype = \"replay\"\n".into(),
                "needs loadfile",
            ),
            (
                "baseline = \"btrfs\"\n".to_string() + &with_fs(""),
                "p.toml:1: baseline 'btrfs' is not a filesystem",
            ),
            (
                with_fs("") + "[[filesystem]]\ntype = \"ext4\"\n",
                "two filesystems are named 'ext4'",
            ),
            (
                "[[workload]]\ntype = \"meta\"\n".into(),
                "the plan has no [[filesystem]]",
            ),
            (
                "[[filesystem]]\ntype = \"ext4\"\n".into(),
                "the plan has no [[workload]]",
            ),
            ("[[filesystem]]\ntype = \"ext4\"\nsize = = 3\n".into(), "p.toml:3:"),
            (
                "filesystem = 3\n".into(),
                "p.toml:1: filesystem must be a list of tables",
            ),
        ];
        for (text, want) in cases {
            let e = err(text);
            assert!(e.contains(want), "for:\n{text}\nwanted '{want}' in: {e}");
            assert_eq!(e.lines().count(), 1, "one line: {e}");
        }
    }
}
