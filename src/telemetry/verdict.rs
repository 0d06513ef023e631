//! The verdict on a cell (`model::verdict`): what bounded it, from what
//! fslab measured beside its operations (each device's bytes and busy time
//! through the stack, the CPU split, fslab's own CPU, interference), and
//! the flags a reader needs before trusting a figure. Seen without it:
//! `examples/seed-samba-xattr.toml` reported XFS at 1348 MB/s while the loop
//! devices wrote 75–110 MB/s, and a "cached" randread on a fresh XFS read
//! every block from the device; both printed as results, with no word.

use crate::model::system::{DeviceData, IostatPoint, SystemData};
use crate::model::verdict::{Bound, Flag, FlagKind, Verdict};
use crate::model::{Cell, CellPlan};
use crate::plan::{FileMode, IoPlan};
use crate::stats::OpKind;
use crate::units::Bytes;

/// A device busy this much of the cell bounded it.
const BUSY_PCT: f64 = 70.0;
/// A job whose thread used this much of a CPU was CPU-bound.
const CPU_SATURATED: f64 = 0.80;
/// Under this share of fslab's bytes reaching the device, the page cache
/// served the cell.
const CACHED_SHARE: f64 = 0.10;
/// Bytes below which a direction's device traffic says nothing (journal,
/// metadata, the odd read-ahead).
const SLACK_BYTES: u64 = 8 << 20;
/// A timed span under this is too short for a stable figure.
const MIN_SECONDS: f64 = 1.0;
/// More passes over the working set than this: it stays in caches.
const MAX_PASSES: f64 = 25.0;

fn io_plan(c: &Cell) -> Option<&IoPlan> {
    match &c.plan {
        CellPlan::Io(p) => Some(p),
        CellPlan::Fio(f) => Some(&f.io),
        _ => None,
    }
}

/// The device fslab's filesystem is on: the top of the stack.
fn top(devices: &[DeviceData]) -> Option<&DeviceData> {
    devices.iter().find(|d| d.above.is_none())
}

/// The devices nothing else is under: where data comes to rest.
fn bottoms(devices: &[DeviceData]) -> Vec<&DeviceData> {
    devices
        .iter()
        .filter(|d| !devices.iter().any(|x| x.above.as_deref() == Some(d.name.as_str())))
        .collect()
}

fn flushes(t: &IostatPoint) -> f64 {
    t.f_s * t.len_ms as f64 / 1000.0
}

/// What every rule reads: the cell's own figures, gathered once.
struct Facts<'a> {
    c: &'a Cell,
    /// The host's memory (None: unknown).
    ram: Option<u64>,
    /// The timed span, in seconds.
    secs: f64,
    plan: Option<&'a IoPlan>,
    /// Data reads and writes: operations and bytes.
    reads: u64,
    read_bytes: u64,
    writes: u64,
    write_bytes: u64,
    /// fsyncs and flushes.
    syncs: u64,
    /// Every operation of every direction.
    ops: u64,
    sys: Option<&'a SystemData>,
    /// The device fslab's filesystem is on (`top`).
    top: Option<&'a DeviceData>,
    /// O_DIRECT asked for and not refused by the filesystem.
    direct: bool,
    /// fslab's CPU per job, user and kernel, as a share of one CPU.
    user: f64,
    system: f64,
    /// The interference's reasons, when it found the cell disturbed.
    disturbed: Option<String>,
}

impl<'a> Facts<'a> {
    fn of(c: &'a Cell, ram: Option<u64>) -> Facts<'a> {
        let secs = c.elapsed_ns as f64 / 1e9;
        let plan = io_plan(c);
        // data I/O: fslab io and fio's reads and writes, a replay's ReadX and
        // WriteX (metadata phases, which reuse the kinds, have a phase name)
        let data = |ks: &[OpKind]| {
            c.directions
                .iter()
                .filter(|d| ks.contains(&d.dir) && d.phase.is_none())
                .fold((0u64, 0u64), |a, d| (a.0 + d.ops, a.1 + d.bytes))
        };
        let (reads, read_bytes) = data(&[OpKind::Read, OpKind::ReadX]);
        let (writes, write_bytes) = data(&[OpKind::Write, OpKind::WriteX]);
        let sys = c.system.as_ref();
        let jobs = plan.map(|p| p.jobs).unwrap_or(1).max(1) as f64;
        let per_job = |ns: u64| ns as f64 / 1e9 / secs.max(1e-9) / jobs;
        Facts {
            c,
            ram,
            secs,
            plan,
            reads,
            read_bytes,
            writes,
            write_bytes,
            syncs: data(&[OpKind::Fsync, OpKind::Flush]).0,
            ops: c.directions.iter().map(|d| d.ops).sum(),
            sys,
            top: sys.and_then(|s| top(&s.devices)),
            direct: plan.is_some_and(|p| p.ioengine.direct) && c.target.direct_honoured != Some(false),
            user: per_job(c.cpu.user_ns),
            system: per_job(c.cpu.sys_ns),
            disturbed: sys
                .map(|s| &s.interference)
                .filter(|i| i.disturbed)
                .map(|i| i.reasons.join("; ")),
        }
    }
}

/// A rule that may raise one flag.
type FlagRule = fn(&Facts) -> Option<Flag>;

/// The flags, in the order a reader sees them: what makes the figures
/// suspect.
const FLAG_RULES: &[FlagRule] = &[
    stopped_early,
    too_short,
    direct_not_honoured,
    small_working_set,
    disturbed,
    page_cache,
    cold_cache,
    foreign_writeback,
    no_flush,
];

fn flag(kind: FlagKind, evidence: String) -> Option<Flag> {
    Some(Flag { kind, evidence })
}

/// Interrupted, or a timed job that ended before 90% of its runtime (a
/// tenth of slack: a job's last operations and the runner's stop take
/// their time, and an error that ended it says so itself).
fn stopped_early(f: &Facts) -> Option<Flag> {
    let secs = f.secs;
    if f.c.interrupted {
        return flag(FlagKind::StoppedEarly, format!("interrupted after {secs:.1} s"));
    }
    let want = f
        .plan
        .filter(|p| p.limits.time_based)
        .and_then(|p| p.limits.runtime)?
        .as_secs_f64();
    if secs < 0.9 * want && f.c.error.is_none() {
        return flag(
            FlagKind::StoppedEarly,
            format!("ended after {secs:.1} s of its {want:.1} s runtime"),
        );
    }
    None
}

/// Timed under `MIN_SECONDS`: one stall or timer tick moves the figure.
fn too_short(f: &Facts) -> Option<Flag> {
    let secs = f.secs;
    (f.ops > 0 && secs < MIN_SECONDS).then(|| Flag {
        kind: FlagKind::TooShort,
        evidence: format!("timed for {secs:.2} s: under {MIN_SECONDS:.0} s one stall or timer tick moves the figure"),
    })
}

/// O_DIRECT asked for, and the filesystem (tmpfs) served it from memory:
/// the figures are memory's, not the device's.
fn direct_not_honoured(f: &Facts) -> Option<Flag> {
    (f.plan.is_some_and(|p| p.ioengine.direct) && f.c.target.direct_honoured == Some(false)).then(|| Flag {
        kind: FlagKind::DirectNotHonoured,
        evidence: format!(
            "O_DIRECT was asked for, but {} serves it from memory",
            f.c.target.fs_type
        ),
    })
}

/// A direct cell that moved more than `MAX_PASSES` times its working set:
/// a set this small stays in the device's and the host's caches. A device
/// test only: a cache test is meant to stay in memory.
fn small_working_set(f: &Facts) -> Option<Flag> {
    let p = f.plan?;
    let set = p.shape.size.unwrap_or(0)
        * match p.shape.file_mode {
            FileMode::FilePerJob => u64::from(p.jobs.max(1)),
            FileMode::SharedFile => 1,
        };
    let moved = f.read_bytes + f.write_bytes;
    (f.direct && set > 0 && moved as f64 > MAX_PASSES * set as f64).then(|| Flag {
        kind: FlagKind::SmallWorkingSet,
        evidence: format!(
            "moved {} over a working set of {} ({:.0} passes in {:.1} s): a set this small stays in the device's and the host's caches",
            Bytes(moved),
            Bytes(set),
            moved as f64 / set as f64,
            f.secs
        ),
    })
}

/// Others competed for the machine (telemetry's interference says how). A
/// target without a block device (tmpfs) can still be disturbed.
fn disturbed(f: &Facts) -> Option<Flag> {
    flag(FlagKind::Disturbed, f.disturbed.clone()?)
}

/// Buffered writes of which the filesystem's device wrote under half: the
/// page cache absorbed them, and the figure is memory's. Under twice
/// `SLACK_BYTES` a direction says nothing.
fn page_cache(f: &Facts) -> Option<Flag> {
    let (t, wb) = (f.top?, f.write_bytes);
    (!f.direct && wb >= 2 * SLACK_BYTES && (t.total.write_bytes as f64) < 0.5 * wb as f64).then(|| Flag {
        kind: FlagKind::PageCache,
        evidence: format!(
            "fslab wrote {} ({:.0} MB/s), {} wrote {}: the page cache absorbed {:.0}% of it",
            Bytes(wb),
            wb as f64 / f.secs.max(1e-9) / 1e6,
            t.name,
            Bytes(t.total.write_bytes),
            100.0 * (1.0 - t.total.write_bytes as f64 / wb as f64)
        ),
    })
}

/// A cache test (its workload's name says "cached") whose device read
/// over half of fslab's reads (plus `SLACK_BYTES` of read-ahead and
/// metadata): the cache was cold.
fn cold_cache(f: &Facts) -> Option<Flag> {
    let t = f.top?;
    let cache_test = f.c.lab.as_ref().is_some_and(|l| l.workload.contains("cached"));
    let rb = f.read_bytes;
    (cache_test && f.reads > 0 && t.total.read_bytes as f64 > 0.5 * rb as f64 + SLACK_BYTES as f64).then(|| Flag {
        kind: FlagKind::ColdCache,
        evidence: format!(
            "a cache test whose reads came from {}: it read {} of fslab's {}",
            t.name,
            Bytes(t.total.read_bytes),
            Bytes(rb)
        ),
    })
}

/// An io cell that wrote and synced nothing while its filesystem's device
/// wrote over four times `SLACK_BYTES`: earlier writes were flushed during
/// the cell. An io cell only (a metadata cell's creates and deletes write
/// too), on the filesystem's own device (a disk under a loop device also
/// carries other tenants' writes: interference says those).
fn foreign_writeback(f: &Facts) -> Option<Flag> {
    let t = f.top?;
    if !(f.plan.is_some() && f.writes == 0 && f.syncs == 0 && f.c.error.is_none()) {
        return None;
    }
    let w = t.total.write_bytes;
    (w > 4 * SLACK_BYTES).then(|| Flag {
        kind: FlagKind::ForeignWriteback,
        evidence: format!(
            "fslab wrote nothing, yet {} wrote {}: earlier writes (a previous phase's files or deletes, or others') were flushed during the cell",
            t.name,
            Bytes(w)
        ),
    })
}

/// fsyncs that reached no persistent storage: a loop device's image on no
/// block device (tmpfs), or a filesystem's device that received under half
/// a flush request (a disabled barrier, a volatile write cache). The
/// filesystem's own device: a disk below it also carries other tenants'
/// flushes.
fn no_flush(f: &Facts) -> Option<Flag> {
    let (s, t, syncs) = (f.sys?, f.top?, f.syncs);
    if !(syncs > 0 && f.write_bytes + t.total.write_bytes > 0) {
        return None;
    }
    let b = bottoms(&s.devices);
    if b.len() == 1 && b[0].role == crate::model::system::DeviceRole::Loop {
        return flag(
            FlagKind::NoFlush,
            format!(
                "{syncs} fsync(s), but {}'s image {} is on no block device (tmpfs?): nothing reaches persistent storage",
                b[0].name,
                b[0].backing.as_deref().unwrap_or("(unknown)")
            ),
        );
    }
    (flushes(&t.total) < 0.5).then(|| Flag {
        kind: FlagKind::NoFlush,
        evidence: format!(
            "{syncs} fsync(s), but {} received no flush request: a disabled barrier (nobarrier, barrier=0) or a volatile write cache makes fsync faster than the device",
            t.name
        ),
    })
}

/// A rule that may name what bounded the cell.
type BoundRule = fn(&Facts) -> Option<(Bound, String)>;

/// What bounded the cell: the first rule that answers. The last always
/// does.
const BOUND_RULES: &[BoundRule] = &[
    no_operations,
    tool_bound,
    device_busy,
    page_cache_bound,
    cpu_bound,
    machine_cpu_busy,
    noise,
    latency_bound,
    unknown,
];

/// Nothing ran: nothing to say.
fn no_operations(f: &Facts) -> Option<(Bound, String)> {
    (f.ops == 0).then(|| (Bound::Unknown, "no operations".to_string()))
}

/// fslab's threads used `CPU_SATURATED` of a CPU per job: the Tool when
/// fslab's own code took more of it than the kernel, else the CPU path.
fn cpu_saturated(f: &Facts) -> Option<(Bound, String)> {
    let (user, system) = (f.user, f.system);
    (user + system >= CPU_SATURATED).then(|| {
        if user > system {
            (
                Bound::Tool,
                format!(
                    "fslab's own code used {:.0}% of a CPU per job ({:.0}% in the kernel): the figure is fslab's limit, not the system's",
                    user * 100.0,
                    system * 100.0
                ),
            )
        } else {
            (
                Bound::Cpu,
                format!(
                    "fslab's threads used {:.0}% of a CPU per job, {:.0}% of it in the kernel's path",
                    (user + system) * 100.0,
                    100.0 * system / (user + system)
                ),
            )
        }
    })
}

/// fslab's own code saturated its threads: whatever served the data, the
/// figure is fslab's limit.
fn tool_bound(f: &Facts) -> Option<(Bound, String)> {
    cpu_saturated(f).filter(|b| b.0 == Bound::Tool)
}

/// The filesystem's device busy `BUSY_PCT` of the cell bounded it.
fn device_busy(f: &Facts) -> Option<(Bound, String)> {
    let t = f.top?;
    let util = t.total.util_pct;
    (util >= BUSY_PCT).then(|| {
        (
            Bound::Device,
            format!("{} busy {util:.0}% of the cell, queue {:.1}", t.name, t.total.aqu_sz),
        )
    })
}

/// Under `CACHED_SHARE` of what fslab moved (each direction counted up to
/// `SLACK_BYTES` at least, for journal and metadata) reached the device:
/// the page cache served the cell.
fn page_cache_bound(f: &Facts) -> Option<(Bound, String)> {
    let t = f.top?;
    let (rb, wb) = (f.read_bytes, f.write_bytes);
    let logical = rb + wb;
    let on_device = t.total.read_bytes.min(rb.max(SLACK_BYTES)) + t.total.write_bytes.min(wb.max(SLACK_BYTES));
    if !(logical >= SLACK_BYTES && (on_device as f64) < CACHED_SHARE * logical as f64) {
        return None;
    }
    let mut e = format!(
        "{} of the {} fslab moved reached {}",
        Bytes(t.total.read_bytes + t.total.write_bytes),
        Bytes(logical),
        t.name
    );
    if let Some(r) = f.ram {
        e += &format!(" (this host has {} of RAM)", Bytes(r));
    }
    Some((Bound::PageCache, e))
}

/// fslab's threads saturated, mostly in the kernel's path (the Tool case
/// answered above).
fn cpu_bound(f: &Facts) -> Option<(Bound, String)> {
    cpu_saturated(f)
}

/// The machine's CPUs over 90% busy (idle and iowait under 10%), and no
/// one else's doing: the CPU bounded the cell.
fn machine_cpu_busy(f: &Facts) -> Option<(Bound, String)> {
    f.top?;
    let s = f
        .sys
        .filter(|s| s.total.cpu.idle + s.total.cpu.iowait < 10.0 && f.disturbed.is_none())?;
    Some((
        Bound::Cpu,
        format!(
            "the machine's CPUs were {:.0}% busy",
            100.0 - s.total.cpu.idle - s.total.cpu.iowait
        ),
    ))
}

/// Nothing saturated, and others competed: their noise is the limit.
fn noise(f: &Facts) -> Option<(Bound, String)> {
    let d = f.disturbed.as_deref()?;
    Some((
        Bound::Noise,
        match f.top {
            Some(_) => format!("nothing saturated, and the cell was disturbed: {d}"),
            None => format!("the cell was disturbed: {d}"),
        },
    ))
}

/// Neither saturated: the larger of the device's busy time and fslab's
/// CPU per job (latency-bound on the device or on the CPU path).
fn latency_bound(f: &Facts) -> Option<(Bound, String)> {
    let t = f.top?;
    let util = t.total.util_pct;
    let cpu = (f.user + f.system) * 100.0;
    Some(if util >= cpu {
        (
            Bound::Device,
            format!(
                "{} busy {util:.0}% of the cell beside fslab's {cpu:.0}% of a CPU per job: latency-bound on the device",
                t.name
            ),
        )
    } else {
        (
            Bound::Cpu,
            format!(
                "fslab's {cpu:.0}% of a CPU per job beside {} busy {util:.0}%: latency-bound on the CPU path",
                t.name
            ),
        )
    })
}

/// No device telemetry, no saturated CPU, no disturbance: nothing to say.
fn unknown(_: &Facts) -> Option<(Bound, String)> {
    Some((Bound::Unknown, "no device telemetry for this target".to_string()))
}

/// The verdict on `c`; `ram` is the host's memory (None: unknown). The
/// flags are every `FLAG_RULES` rule that raised one; the bound is the
/// first `BOUND_RULES` rule that answers.
pub fn judge(c: &Cell, ram: Option<u64>) -> Verdict {
    let f = Facts::of(c, ram);
    let flags = FLAG_RULES.iter().filter_map(|rule| rule(&f)).collect();
    let (bound, evidence) = BOUND_RULES
        .iter()
        .find_map(|rule| rule(&f))
        .expect("the last bound rule always answers");
    Verdict { bound, evidence, flags }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::system::{DeviceRole, SystemData};
    use crate::model::DirResult;
    use crate::stats::OpStats;

    /// A 2 s io cell of `direct` reads and writes (bytes each) on loop0
    /// over vda, whose totals are `loop0` and `vda` (read, write bytes,
    /// %util, flushes).
    fn cell(direct: bool, rd: u64, wr: u64, loop0: (u64, u64, f64, f64), vda: (u64, u64)) -> Cell {
        let mut a = crate::cli::IoArgs {
            engine: "null".into(),
            ..Default::default()
        };
        a.common.target = ".".into();
        a.direct = direct;
        let plan = crate::plan::IoPlan::from_args(&a).expect("a valid plan");
        let mut c = Cell::failed("c", CellPlan::Io(plan), Default::default(), String::new());
        c.error = None;
        c.elapsed_ns = 2_000_000_000;
        for (k, b) in [(OpKind::Read, rd), (OpKind::Write, wr)] {
            if b > 0 {
                let mut d = DirResult::of(k, &OpStats::default(), c.elapsed_ns);
                d.ops = b / 4096;
                d.bytes = b;
                c.directions.push(d);
            }
        }
        let dev = |name: &str, above: Option<&str>, r, w, util, f_s| DeviceData {
            name: name.into(),
            role: if above.is_none() {
                DeviceRole::Loop
            } else {
                DeviceRole::Disk
            },
            above: above.map(Into::into),
            total: IostatPoint {
                len_ms: 2000,
                read_bytes: r,
                write_bytes: w,
                util_pct: util,
                f_s,
                ..Default::default()
            },
            ..Default::default()
        };
        c.system = Some(SystemData {
            devices: vec![
                dev("loop0", None, loop0.0, loop0.1, loop0.2, loop0.3),
                dev("vda", Some("loop0"), vda.0, vda.1, 50.0, 1.0),
            ],
            ..Default::default()
        });
        c
    }

    const MIB: u64 = 1 << 20;

    #[test]
    fn a_busy_device_bounds_a_direct_cell_and_raises_no_flag() {
        let c = cell(true, 100 * MIB, 0, (100 * MIB, 0, 96.0, 0.0), (100 * MIB, 0));
        let v = judge(&c, Some(16 << 30));
        assert_eq!(v.bound, Bound::Device, "{v:?}");
        assert!(v.flags.is_empty(), "{v:?}");
        assert!(v.evidence.contains("loop0 busy 96%"), "{v:?}");
    }

    #[test]
    fn buffered_writes_the_device_never_saw_are_the_page_cache() {
        // the seed-samba plan: 2.7 GB in 2 s while the loop device wrote 200 MB
        let c = cell(false, 0, 2600 * MIB, (0, 200 * MIB, 30.0, 0.0), (0, 200 * MIB));
        let v = judge(&c, Some(16 << 30));
        assert_eq!(v.bound, Bound::PageCache, "{v:?}");
        assert!(v.has(FlagKind::PageCache), "{v:?}");
        assert!(v.line().contains("absorbed 92%"), "{}", v.line());
    }

    #[test]
    fn fsync_without_a_flush_below_is_flagged() {
        let mut c = cell(true, 0, 64 * MIB, (0, 64 * MIB, 90.0, 0.0), (0, 64 * MIB));
        let mut d = DirResult::of(OpKind::Fsync, &OpStats::default(), c.elapsed_ns);
        d.ops = 100;
        c.directions.push(d);
        // loop0 (the filesystem's device) saw flushes: nothing to say
        c.system.as_mut().unwrap().devices[0].total.f_s = 10.0;
        assert!(!judge(&c, None).has(FlagKind::NoFlush));
        // none reached it (barrier=0), whatever the disk below saw
        c.system.as_mut().unwrap().devices[0].total.f_s = 0.0;
        let v = judge(&c, None);
        assert!(v.has(FlagKind::NoFlush), "{v:?}");
        // an image on tmpfs: no device under the loop device at all
        c.system.as_mut().unwrap().devices.truncate(1);
        let v = judge(&c, None);
        assert!(v
            .flags
            .iter()
            .any(|f| f.kind == FlagKind::NoFlush && f.evidence.contains("no block device")));
    }

    #[test]
    fn writes_during_a_read_only_cell_are_someone_else_s_writeback() {
        // others' writes on the disk under the loop device are interference's
        let c = cell(true, 64 * MIB, 0, (64 * MIB, 0, 90.0, 0.0), (64 * MIB, 400 * MIB));
        assert!(!judge(&c, None).has(FlagKind::ForeignWriteback));
        // the filesystem's own device wrote: earlier work being flushed
        let c = cell(
            true,
            64 * MIB,
            0,
            (64 * MIB, 300 * MIB, 90.0, 0.0),
            (64 * MIB, 300 * MIB),
        );
        let v = judge(&c, None);
        assert!(v.has(FlagKind::ForeignWriteback), "{v:?}");
    }

    #[test]
    fn short_interrupted_and_disturbed_cells_say_so() {
        let mut c = cell(true, 64 * MIB, 0, (64 * MIB, 0, 90.0, 0.0), (64 * MIB, 0));
        c.elapsed_ns = 300_000_000;
        c.interrupted = true;
        let sys = c.system.as_mut().unwrap();
        sys.interference.disturbed = true;
        sys.interference.reasons = vec!["other processes used 50% of the CPUs".into()];
        let v = judge(&c, None);
        assert!(v.has(FlagKind::TooShort) && v.has(FlagKind::StoppedEarly), "{v:?}");
        // the busy device still bounded it; the disturbance is a flag
        assert_eq!(v.bound, Bound::Device);
        assert!(v.has(FlagKind::Disturbed));
        // nothing saturated: the noise is the limit, said once in the line
        c.system.as_mut().unwrap().devices[0].total.util_pct = 20.0;
        c.cpu.sys_ns = 10_000_000;
        let v = judge(&c, None);
        assert_eq!(v.bound, Bound::Noise, "{v:?}");
        assert_eq!(v.line().matches("other processes used 50%").count(), 1, "{}", v.line());
    }

    #[test]
    fn a_cache_test_that_read_from_the_device_is_cold() {
        let mut c = cell(false, 256 * MIB, 0, (250 * MIB, 0, 95.0, 0.0), (250 * MIB, 0));
        c.lab = Some(crate::model::LabTag {
            workload: "randread-4k-cached".into(),
            ..Default::default()
        });
        let v = judge(&c, None);
        assert!(v.has(FlagKind::ColdCache), "{v:?}");
        // the same reads served from memory: no flag
        let mut c = cell(false, 256 * MIB, 0, (MIB, 0, 1.0, 0.0), (MIB, 0));
        c.lab = Some(crate::model::LabTag {
            workload: "randread-4k-cached".into(),
            ..Default::default()
        });
        let v = judge(&c, None);
        assert!(v.flags.is_empty() && v.bound == Bound::PageCache, "{v:?}");
    }

    #[test]
    fn fslab_s_own_cpu_bounds_a_null_engine() {
        let mut c = cell(false, 0, 0, (0, 0, 0.0, 0.0), (0, 0));
        let mut d = DirResult::of(OpKind::Read, &OpStats::default(), c.elapsed_ns);
        d.ops = 1_000_000;
        c.directions.push(d);
        c.cpu.user_ns = 1_900_000_000;
        c.cpu.sys_ns = 50_000_000;
        let v = judge(&c, None);
        assert_eq!(v.bound, Bound::Tool, "{v:?}");
    }
}
