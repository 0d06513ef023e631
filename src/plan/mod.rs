//! Plans: command-line arguments turned into typed, immutable, serialisable
//! descriptions of the work. ALL validation happens here, and every error
//! names the flag, so bad input fails before any file is touched.

pub mod calibrate;
mod cell;
pub mod fio;
pub mod fiojob;
pub mod io;
pub mod lab;
pub mod loadfile;
pub mod meta;
mod output;
mod presentation;
pub mod probe;
pub mod replay;
pub mod telemetry;

pub use cell::{CellKind, CellPlan, FioCellPlan, FioJob};
pub use io::{BufferPlan, FileMode, IoConsent, IoEngine, IoLimits, IoPlan, IoShape, PacingPlan, RegionPlan, Rw};
pub use lab::{FsKind, FsPlan, LabPlan, QueueSettings, WorkloadPlan};
pub use meta::{ExtraPhase, MetaPlan, Order};
pub use output::{
    check_path, formats_of, input_at, note_input, stdout_style, unnamed_file_in, write_atomically,
    write_atomically_with, OutputFormat, OutputSpec, Outputs, TableFormat, TextStyle, DEFAULT_WIDTH,
};
pub use presentation::Presentation;
pub use probe::{Load, ProbeOp, ProbePlan};
pub use replay::ReplayPlan;
pub use telemetry::TelemetryPlan;

use crate::cli::{CommonArgs, RunArgs};
use crate::units;
use std::time::Duration;

/// Filesystem types fslab knows how to make (`target::scratch` makes them).
pub const MKFS_TYPES: &[&str] = &["ext2", "ext3", "ext4", "xfs", "btrfs"];

/// A rejected input: the flag (or file:line) and why. Shown on one line
/// with every control character escaped (`units::shown`): a refusal quotes
/// names and values from files, which must neither span lines nor reach
/// the terminal as escape sequences.
#[derive(Debug, thiserror::Error)]
#[error("{}: {}", units::shown(flag), units::shown(msg))]
pub struct PlanError {
    pub flag: String,
    pub msg: String,
}

impl PlanError {
    pub fn new(flag: impl Into<String>, msg: impl ToString) -> Self {
        PlanError {
            flag: flag.into(),
            msg: msg.to_string(),
        }
    }
}

pub type Result<T> = std::result::Result<T, PlanError>;

/// Largest plan or fio job file fslab reads.
pub const MAX_PLAN_BYTES: u64 = 64 << 20;

/// Reads a text file the user named where a regular file is expected (a
/// plan, a fio job file, a result file): a FIFO, device or directory is
/// refused at once, naming `what` (the flag or file) and the path, instead of
/// blocking on it or reading it forever; so is a file over `max` bytes.
pub fn read_regular_file(path: &std::path::Path, what: &str, max: u64) -> Result<String> {
    read_regular_file_with(path, what, max, |_| Ok(())).map(|(text, _)| text)
}

/// [`read_regular_file`], with `check` judging the opened file's metadata
/// before anything is read (its `Err` is the refusal's reason); returns the
/// text and the file's owner.
pub fn read_regular_file_with(
    path: &std::path::Path,
    what: &str,
    max: u64,
    check: impl FnOnce(&std::fs::Metadata) -> std::result::Result<(), String>,
) -> Result<(String, u32)> {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::fs::OpenOptionsExt;
    let bad = |msg: String| PlanError::new(what, format!("'{}'{msg}", path.display()));
    let not_regular = |ft: std::fs::FileType| bad(format!(" is {}, not a regular file", output::kind_of(ft)));
    // type first, by name: opening some devices has effects (a tape rewinds)
    let m = std::fs::metadata(path).map_err(|e| bad(format!(": {e}")))?;
    if !m.is_file() {
        return Err(not_regular(m.file_type()));
    }
    // O_NONBLOCK: a FIFO swapped in since the check must not block the open
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| bad(format!(": {e}")))?;
    let m = f.metadata().map_err(|e| bad(format!(": {e}")))?;
    if !m.is_file() {
        return Err(not_regular(m.file_type()));
    }
    check(&m).map_err(|why| bad(format!(": {why}")))?;
    output::note_input(path).map_err(|e| bad(format!(" {e}")))?;
    let too_big = || bad(format!(" holds more than {} bytes", crate::units::Bytes(max)));
    if m.len() > max {
        return Err(too_big());
    }
    let mut text = String::new();
    f.take(max + 1)
        .read_to_string(&mut text)
        .map_err(|e| bad(format!(": {e}")))?;
    if text.len() as u64 > max {
        return Err(too_big());
    }
    Ok((text, m.uid()))
}

/// Seed used when none is given: fixed, so two runs draw the same offsets (as fio's randrepeat).
pub const DEFAULT_SEED: u64 = 0x0066_736c_6162;

pub(crate) fn seed(c: &CommonArgs) -> Result<u64> {
    match &c.seed {
        None => Ok(DEFAULT_SEED),
        Some(s) => s
            .parse()
            .map_err(|_| PlanError::new("--seed", format!("'{s}' is not a whole number"))),
    }
}

/// --on-error: true for stop.
pub(crate) fn stop_on_error(c: &CommonArgs) -> Result<bool> {
    match c.on_error.as_str() {
        "continue" | "" => Ok(false),
        "stop" => Ok(true),
        o => Err(PlanError::new(
            "--on-error",
            format!("'{o}' is neither continue nor stop"),
        )),
    }
}

/// Stonewalling, as IOR's `-D` and mdtest's `-W`: a phase ends for every
/// client at once, so that the rate is that of all clients working together
/// and not diluted by a straggler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stonewall {
    /// Every job stops this long after the phase started.
    Deadline(Duration),
    /// Every job stops when the first job (of any rank) has done its work.
    First,
}

impl std::fmt::Display for Stonewall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stonewall::Deadline(d) => write!(f, "{}", humantime::format_duration(*d)),
            Stonewall::First => f.write_str("first"),
        }
    }
}

impl serde::Serialize for Stonewall {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// As it serialises: a string.
impl schemars::JsonSchema for Stonewall {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Stonewall".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "`first` (every job stops when the first has done its work) or a deadline, a duration in humantime's words (\"10s\")"
        })
    }
}

impl<'de> serde::Deserialize<'de> for Stonewall {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        match s.as_str() {
            "first" => Ok(Stonewall::First),
            t => humantime::parse_duration(t)
                .map(Stonewall::Deadline)
                .map_err(serde::de::Error::custom),
        }
    }
}

/// --stonewall first|DUR.
pub(crate) fn stonewall(s: Option<&str>) -> Result<Option<Stonewall>> {
    match s {
        None => Ok(None),
        Some("first") => Ok(Some(Stonewall::First)),
        Some(d) => match units::parse_duration(d) {
            Ok(d) if d.is_zero() => Err(PlanError::new("--stonewall", "the deadline must be longer than 0")),
            Ok(d) => Ok(Some(Stonewall::Deadline(d))),
            Err(e @ units::UnitError::DurationTooLong(_)) => Err(PlanError::new("--stonewall", e)),
            Err(e) => Err(PlanError::new(
                "--stonewall",
                format!("'{d}' is neither `first` nor a duration ({e})"),
            )),
        },
    }
}

pub(crate) fn duration(flag: &str, s: &str) -> Result<Duration> {
    units::parse_duration(s).map_err(|e| PlanError::new(flag, e))
}

/// Refuses a target on a kernel pseudo filesystem (procfs, sysfs, devtmpfs,
/// ...): checked before anything else about the path, so that `/proc` is
/// not blamed on `--size` for its "0 bytes free". Paths that do not exist,
/// devices and other file types are left to the target checks, which say
/// what they are.
pub(crate) fn refuse_pseudo_fs(flag: &str, path: &std::path::Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() || m.is_file() => {}
        _ => return Ok(()),
    }
    match crate::host_facts::pseudo_fs(path) {
        Some(fs) => Err(PlanError::new(
            flag,
            format!("'{}' is on {fs}, not a filesystem to measure", path.display()),
        )),
        None => Ok(()),
    }
}

/// Why `path` cannot be a directory target (of the quick suite, or a plan's
/// `type = "dir"` filesystem): checked when the plan is read, so that a
/// missing directory is refused at once instead of failing every cell.
pub(crate) fn dir_target_problem(path: &std::path::Path) -> Option<String> {
    let p = path.display();
    match std::fs::metadata(path) {
        Err(e) => Some(format!("'{p}': {e} (give an existing directory)")),
        Ok(m) if !m.is_dir() => Some(format!("'{p}' is not a directory")),
        Ok(_) => crate::host_facts::pseudo_fs(path).map(|fs| format!("'{p}' is on {fs}, not a filesystem to measure")),
    }
}

/// The built-in quick suite: what `fslab run` measures without a plan file,
/// in the target directory or on fresh scratch filesystems (`--scratch`).
/// Short cells that tell a newcomer how the filesystem does at small random
/// and large sequential I/O, at seed experiment 2's mixed O_DIRECT I/O, at
/// creating files with and without a 256-byte xattr (seed experiment 1), and
/// at creating a file and at appending 4 KiB + fdatasync while a streaming
/// writer fills the page cache (seed experiment 4).
pub fn quick_suite(a: &RunArgs) -> Result<LabPlan> {
    if let Some(p) = &a.plan {
        if !a.scratch.is_empty() {
            return Err(PlanError::new(
                "--scratch",
                format!("a plan file ('{p}') lists its own filesystems; --scratch is for the quick suite"),
            ));
        }
        if a.runtime.is_some() {
            return Err(PlanError::new(
                "--runtime",
                format!("sets the quick suite's cells; a plan file ('{p}') gives each workload its own runtime"),
            ));
        }
        return LabPlan::from_file(p, a);
    }
    let runtime = a.runtime.clone().unwrap_or_else(|| "5s".into());
    let rt = duration("--runtime", &runtime)?;
    // the probe cells run phases adding up to twice --runtime, bounded
    // together as one duration (with room to spare)
    if rt * 3 > units::MAX_DURATION {
        return Err(PlanError::new(
            "--runtime",
            format!(
                "'{runtime}' is longer than the {}-day maximum of the quick suite (its probe cells run idle, load and after phases of up to --runtime each)",
                units::MAX_DURATION_DAYS / 3
            ),
        ));
    }
    if a.scratch.is_empty() {
        if let Some(why) = dir_target_problem(a.common.target.as_ref()) {
            return Err(PlanError::new("--target", why));
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    for t in a.scratch.iter().flat_map(|s| s.split(',')) {
        if seen.contains(&t) {
            return Err(PlanError::new(
                "--scratch",
                format!("'{t}' is given twice: each filesystem type runs once (use --repeat for more runs)"),
            ));
        }
        seen.push(t);
    }
    let workloads = quick_workloads(a, &runtime, rt)?;
    if a.scratch.is_empty() {
        quick_target_space(a.common.target.as_ref(), &workloads)?;
    }
    let filesystems = quick_filesystems(a)?;
    let mut lab = LabPlan {
        name: "quick".into(),
        file: None,
        repeat: lab::Repeats::fixed(1),
        baseline: None,
        compare: lab::Compare::Filesystem,
        factors: Vec::new(),
        fresh: false,
        drop_caches: true,
        scratch_dir: lab::DEFAULT_SCRATCH_DIR.into(),
        filesystems,
        workloads,
        quiet_warnings: false,
        telemetry: TelemetryPlan::default(),
        retry_disturbed: 0,
        kernels: Vec::new(),
        vm: lab::VmPlan::default(),
        guest_args: Vec::new(),
        guest_files: Vec::new(),
        in_guest: false,
    };
    lab.apply_run_args(a)?;
    let images = lab
        .filesystems
        .iter()
        .filter(|f| matches!(f.kind, FsKind::Mkfs { .. }))
        .count() as u64;
    if images > 0 {
        quick_scratch_space(&lab.scratch_dir, images, &lab.workloads)?;
    }
    Ok(lab)
}

/// Refuses a quick-suite target directory with less free space than its
/// largest io cell lays out: up front, instead of failing cell after cell.
fn quick_target_space(target: &std::path::Path, workloads: &[WorkloadPlan]) -> Result<()> {
    match (free_bytes(target), largest_io(workloads)) {
        (Some(free), Some((need, name))) if need > free => Err(PlanError::new(
            "--target",
            format!(
                "'{}' has {} free, and the quick suite's {name} cell needs {}: free some space, or measure fresh filesystems with --scratch",
                target.display(),
                units::Bytes(free),
                units::Bytes(need)
            ),
        )),
        _ => Ok(()),
    }
}

/// The same for the scratch directory under `n` kept images (`--scratch`
/// with mkfs types: sparse, each holding what its cells wrote).
fn quick_scratch_space(dir: &std::path::Path, n: u64, workloads: &[WorkloadPlan]) -> Result<()> {
    match (free_bytes(dir), largest_io(workloads)) {
        (Some(free), Some((need, name))) if need.saturating_mul(n) > free => Err(PlanError::new(
            "--scratch-dir",
            format!(
                "'{}' has {} free, and the quick suite's {n} filesystem image(s) there need {} ({name} writes {} on each): free some space or give another --scratch-dir",
                dir.display(),
                units::Bytes(free),
                units::Bytes(need.saturating_mul(n)),
                units::Bytes(need)
            ),
        )),
        _ => Ok(()),
    }
}

/// Bytes an unprivileged writer may still use under `dir`.
fn free_bytes(dir: &std::path::Path) -> Option<u64> {
    let st = rustix::fs::statvfs(dir).ok()?;
    Some(st.f_bavail.saturating_mul(st.f_frsize))
}

/// The io cell that lays out the most bytes, and how many.
fn largest_io(workloads: &[WorkloadPlan]) -> Option<(u64, &str)> {
    workloads
        .iter()
        .filter_map(|w| match &w.plan {
            CellPlan::Io(p) => Some((
                p.file_size(p.shape.size.unwrap_or(io::DEFAULT_SIZE))
                    .saturating_mul(p.jobs as u64)
                    .saturating_mul(p.shape.nrfiles as u64),
                w.name.as_str(),
            )),
            _ => None,
        })
        .max()
}

/// The quick suite's cells: io through the page cache and with O_DIRECT,
/// metadata with and without xattrs, and create and append+fdatasync
/// latency under a stream.
fn quick_workloads(a: &RunArgs, runtime: &str, rt: Duration) -> Result<Vec<WorkloadPlan>> {
    let mut workloads = Vec::new();
    let mut add = |name: &str, kind: &str, args: &[&str]| -> Result<()> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let plan = lab::workload_from_args(kind, &args).map_err(|e| match e {
            lab::WorkloadError::Plan(p) => p,
            lab::WorkloadError::Usage(m) => PlanError::new("--runtime", m),
        })?;
        workloads.push(WorkloadPlan {
            name: name.into(),
            base: name.into(),
            levels: Vec::new(),
            kind: kind.into(),
            args,
            plan,
        });
        Ok(())
    };
    let seed = a.common.seed.clone().unwrap_or_else(|| DEFAULT_SEED.to_string());
    // One page-cache cell (what applications mostly see), then the device
    // through the filesystem with O_DIRECT.
    for (name, rw, bs, direct) in [
        ("randread-4k-cached", "randread", "4k", false),
        ("randread-4k-direct", "randread", "4k", true),
        ("randwrite-4k-direct", "randwrite", "4k", true),
        ("randrw-16k-direct", "randrw", "16k", true),
        ("seqwrite-1m-direct", "write", "1m", true),
        ("seqread-1m-direct", "read", "1m", true),
    ] {
        let (jobs, size, mix) = if rw == "randrw" {
            ("4", "64m", "90")
        } else {
            ("1", "256m", "50")
        };
        let mut args = vec![
            "--rw",
            rw,
            "--bs",
            bs,
            "--size",
            size,
            "--jobs",
            jobs,
            "--rwmixread",
            mix,
            "--runtime",
            runtime,
            "--seed",
            &seed,
        ];
        if direct {
            args.push("--direct");
        }
        add(name, "io", &args)?;
    }
    add("meta-16k", "meta", &["--files", "16384", "--seed", &seed])?;
    add(
        "meta-16k-xattr256",
        "meta",
        &["--files", "16384", "--xattr", "user.fslab:256", "--seed", &seed],
    )?;
    // create and append+fdatasync latency before, during and after a
    // buffered stream that writes for the whole load phase (time-based; its
    // cap bounds the space it takes): seed experiment 4's probe, and the
    // one that shows stalls on current kernels (fdatasync p99 from ms idle
    // to hundreds of ms under a stream on ext4)
    let fmt = |d: Duration| humantime::format_duration(d).to_string().replace(' ', "");
    let phases = format!("idle:{},load:{},after:{}", fmt(rt / 2), fmt(rt), fmt(rt / 2));
    for (name, op) in [
        ("create-under-stream", "create"),
        ("append-fdatasync-under-stream", "append-fsync"),
    ] {
        add(
            name,
            "probe",
            &[
                "--op",
                op,
                "--interval",
                "100ms",
                "--phases",
                &phases,
                "--load",
                "stream-write",
            ],
        )?;
    }
    Ok(workloads)
}

/// The quick suite's filesystems: --scratch types, or the --target directory.
fn quick_filesystems(a: &RunArgs) -> Result<Vec<FsPlan>> {
    Ok(if a.scratch.is_empty() {
        vec![FsPlan {
            name: a.common.target.clone(),
            base: a.common.target.clone(),
            levels: Vec::new(),
            kind: FsKind::Dir {
                path: a.common.target.clone().into(),
            },
            mkfs: vec![],
            mount: None,
            size: 0,
            queue: Default::default(),
            loop_direct_io: None,
            queue_at: None,
        }]
    } else {
        a.scratch
            .iter()
            .flat_map(|s| s.split(','))
            .map(|t| {
                let kind = match t {
                    "tmpfs" => FsKind::Tmpfs,
                    t if MKFS_TYPES.contains(&t) => FsKind::Mkfs {
                        fs_type: t.into(),
                        device: None,
                    },
                    t => {
                        return Err(PlanError::new(
                            "--scratch",
                            format!(
                                "'{t}' is not a filesystem fslab can make (known: {}, tmpfs)",
                                MKFS_TYPES.join(", ")
                            ),
                        ))
                    }
                };
                Ok(FsPlan {
                    name: t.into(),
                    base: t.into(),
                    levels: Vec::new(),
                    kind,
                    mkfs: vec![],
                    mount: None,
                    size: lab::DEFAULT_FS_SIZE,
                    queue: Default::default(),
                    loop_direct_io: None,
                    queue_at: None,
                })
            })
            .collect::<Result<Vec<_>>>()?
    })
}

/// The host's memory (MemTotal), if /proc/meminfo says: fio's `$mb_memory`
/// and the check of a VM's `memory`.
pub fn host_memory() -> Option<u64> {
    let m = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = m
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib << 10)
}

/// An included file the job file's owner `uid` could read (owner, group
/// or other read permission; supplementary groups are not consulted): fslab
/// runs as root, and a job file someone else wrote must not make root read
/// a file for them that they could not (`include /etc/shadow`).
pub(crate) fn readable_by(m: &std::fs::Metadata, uid: u32) -> std::result::Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let mode = m.mode();
    let ok =
        (m.uid() == uid && mode & 0o400 != 0) || mode & 0o004 != 0 || (m.gid() == owner_gid(uid) && mode & 0o040 != 0);
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the including job file's owner (uid {uid}) cannot read it, so fslab does not read it for them"
        ))
    }
}

/// The primary group of `uid` (u32::MAX when it has no passwd entry).
fn owner_gid(uid: u32) -> u32 {
    // SAFETY: getpwuid_r writes into the buffers given; the result is read
    // only when it points into them.
    unsafe {
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut buf = vec![0 as libc::c_char; 4096];
        let mut out: *mut libc::passwd = std::ptr::null_mut();
        if libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut out) == 0 && !out.is_null() {
            pw.pw_gid
        } else {
            u32::MAX
        }
    }
}
