//! Lab plans: which filesystems to make and which workloads to run on each,
//! how often, against which baseline. Read from a TOML plan file
//! (docs/plans.md) or built for the quick suite. Workload tables use the very
//! keys of the command-line flags: each is turned into the argument list of
//! its command and validated by the same code as on the command line, so a
//! plan accepts exactly what the CLI accepts, and every error names the plan
//! file and the line of the offending key.

use super::MKFS_TYPES;
use super::{CellPlan, IoPlan, MetaPlan, PlanError, ProbePlan, ReplayPlan, Result, TelemetryPlan};
use crate::cli::{Cli, Command, RunArgs};
use crate::units;
use clap::{CommandFactory, Parser};
use std::path::{Path, PathBuf};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

mod factors;
pub mod fsopts;
mod parse;
mod read;
mod run_args;
pub mod vm;
pub use factors::{named, Compare, Factor, FactorOf, FS_FACTOR_KEYS};
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
    /// Unique in the plan: the table's name, with its levels of the
    /// filesystem factors when the plan has some ("ext4[scheduler=none]").
    pub name: String,
    /// The table's name (`name` without the levels).
    #[serde(skip)]
    pub base: String,
    /// (factor, level as written) of each filesystem factor, in `[factors]` order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<(String, String)>,
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
    /// Unique in the plan: the table's name, with its levels of the
    /// workload factors when the plan has some ("replay[xattr=true]").
    pub name: String,
    /// The table's name (`name` without the levels).
    #[serde(skip)]
    pub base: String,
    /// (factor, level as written) of each workload factor, in `[factors]` order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<(String, String)>,
    /// io, meta, replay, probe.
    pub kind: String,
    /// The equivalent command line (without --target).
    pub args: Vec<String>,
    #[serde(serialize_with = "super::cell::serialize_keyed")]
    pub plan: CellPlan,
}

/// How many times each cell runs: a fixed number (`min == max`), or from
/// `min` until every headline comparison is decided, at most `max`
/// (`repeat = { min = 3, max = 30, target = "2%" }`, `--repeat 3..30`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Repeats {
    pub min: u32,
    pub max: u32,
    /// The smallest change that matters, as a fraction (0.02): a
    /// comparison whose interval lies within ±target is `equivalent`
    /// (the plan's `repeat.target`, `--equivalence`).
    pub target: f64,
}

/// The equivalence margin when a plan gives none: 2%, the least change
/// the seeds' questions care about.
pub const DEFAULT_TARGET: f64 = 0.02;
/// The most repeats a plan may ask for.
pub const MAX_REPEATS: u32 = 1000;

impl Repeats {
    pub fn fixed(n: u32) -> Repeats {
        Repeats {
            min: n,
            max: n,
            target: DEFAULT_TARGET,
        }
    }

    /// Runs until decided (more than one possible number of repeats).
    pub fn adaptive(&self) -> bool {
        self.max > self.min
    }

    /// "3" or "3..30": a fixed count or a range, each from 1 to 1000, an
    /// adaptive range starting at 2 at least (one run has no spread).
    pub fn parse_range(s: &str, target: f64) -> std::result::Result<Repeats, String> {
        let n = |t: &str| t.trim().parse::<u32>().ok().filter(|n| (1..=MAX_REPEATS).contains(n));
        let bad = || format!("'{s}' is not a whole number from 1 to {MAX_REPEATS}, nor MIN..MAX");
        let (min, max) = match s.split_once("..") {
            Some((a, b)) => (n(a).ok_or_else(bad)?, n(b).ok_or_else(bad)?),
            None => {
                let v = n(s).ok_or_else(bad)?;
                (v, v)
            }
        };
        Repeats::range(min, max, target)
    }

    /// Checks min <= max, and that a range starts at 2 or more.
    pub fn range(min: u32, max: u32, target: f64) -> std::result::Result<Repeats, String> {
        if min > max {
            return Err(format!("min {min} is more than max {max}"));
        }
        if min < max && min < 2 {
            return Err(format!(
                "an adaptive range starts at 2 repeats at least (one run has no spread), not {min}"
            ));
        }
        Ok(Repeats { min, max, target })
    }
}

/// A percentage as a fraction: "2%", "2" or "0.5%", above 0 and below 100.
pub fn parse_target(s: &str) -> std::result::Result<f64, String> {
    s.trim()
        .trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|p| p.is_finite() && *p > 0.0 && *p < 100.0)
        .map(|p| p / 100.0)
        .ok_or_else(|| format!("'{s}' is not a percentage above 0 and below 100 (2%)"))
}

/// A whole lab run: filesystems x workloads x repeats.
#[derive(Debug, serde::Serialize)]
pub struct LabPlan {
    pub name: String,
    /// The plan file, or None for the built-in quick suite.
    pub file: Option<PathBuf>,
    pub repeat: Repeats,
    /// The baseline level of the compared axis (`compare`): a filesystem's
    /// name (the default axis), a kernel's, or a level of the compared factor.
    pub baseline: Option<String>,
    /// What the comparison's columns are (`compare`; default: the filesystems).
    pub compare: Compare,
    /// `[factors]`: the keys given as lists of levels, which `filesystems`
    /// and `workloads` are expanded over.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub factors: Vec<Factor>,
    /// A fresh mkfs for every cell (default), or one filesystem per entry for the whole run.
    pub fresh: bool,
    pub drop_caches: bool,
    pub scratch_dir: PathBuf,
    pub filesystems: Vec<FsPlan>,
    pub workloads: Vec<WorkloadPlan>,
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

#[cfg(test)]
mod tests {
    use super::run_args::merge_telemetry;
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
            ("t", Repeats::fixed(2), Some("xfs"))
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
        assert_eq!((io.shape.bs, io.jobs, io.ioengine.direct), (16384, 4, true));
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
