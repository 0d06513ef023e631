//! What others did to the machine during a cell.
//!
//! CPU: other processes' share is the machine's busy time (user + nice +
//! system of `/proc/stat`; irq and softirq are not any process's) minus
//! fslab's own (getrusage, its children), minus kernel threads' (the
//! `PF_KTHREAD` tasks of `/proc/[pid]/stat`: writeback, journal, xfs and
//! loop workers do fslab's work on its behalf and must not raise an alarm).
//! `/proc` is scanned twice, when the cell starts and when it ends, never per
//! second. Steal is the hypervisor's other guests, reported apart.
//!
//! Device I/O: on a device below a loop device, the bytes beyond what the
//! loop device moved are someone else's (or the host filesystem's journal
//! and metadata, allowed for by a slack).

use crate::model::system::{DeviceData, DeviceRole, ForeignIo, Interference, OtherProcess};
use std::collections::HashMap;

/// `PF_KTHREAD` of include/linux/sched.h: the task is a kernel thread.
pub const PF_KTHREAD: u64 = 0x0020_0000;

/// One task of a `/proc` scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    pub pid: u32,
    pub ppid: u32,
    pub comm: String,
    pub kthread: bool,
    /// utime + stime, USER_HZ ticks.
    pub ticks: u64,
    /// Start time after boot, ticks (tells a reused pid apart).
    pub start: u64,
}

/// Parses one `/proc/[pid]/stat` line.
pub fn parse_task(line: &str) -> Option<Task> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let pid = line[..open].trim().parse().ok()?;
    let comm = line[open + 1..close].to_string();
    let f = super::procstat::stat_fields(line)?;
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    Some(Task {
        pid,
        ppid: num(1)? as u32,
        comm,
        kthread: num(6)? & PF_KTHREAD != 0,
        ticks: num(11)? + num(12)?,
        start: num(19)?,
    })
}

/// Every task of `/proc` (processes; a process's ticks include its threads').
pub fn scan() -> HashMap<u32, Task> {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().filter(|n| n.bytes().all(|b| b.is_ascii_digit())) else {
            continue;
        };
        if let Some(t) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| parse_task(&s))
        {
            out.insert(t.pid, t);
        }
    }
    out
}

/// Ticks each task of `end` used since `start` (a task started during the
/// cell counts from 0).
fn used(start: &HashMap<u32, Task>, t: &Task) -> u64 {
    match start.get(&t.pid) {
        Some(s) if s.start == t.start => t.ticks.saturating_sub(s.ticks),
        _ => t.ticks,
    }
}

/// What the two scans say: kernel threads' ticks, fslab's relatives'
/// ticks (its children; its sibling ranks in a distributed run), and the
/// other processes, the largest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScanDelta {
    pub kthread_ticks: u64,
    pub own_ticks: u64,
    pub others: Vec<(u32, String, u64)>,
}

/// `me`: fslab's pid; `siblings`: a command name whose processes are
/// fslab's own too (the other ranks of an MPI run on this machine).
pub fn scan_delta(start: &HashMap<u32, Task>, end: &HashMap<u32, Task>, me: u32, siblings: Option<&str>) -> ScanDelta {
    let mut d = ScanDelta::default();
    // fslab's descendants: walk parents up to `me`
    let is_mine = |mut pid: u32| {
        for _ in 0..64 {
            if pid == me {
                return true;
            }
            match end.get(&pid) {
                Some(t) if t.ppid != 0 && t.ppid != pid => pid = t.ppid,
                _ => return false,
            }
        }
        false
    };
    for t in end.values() {
        let u = used(start, t);
        if t.kthread {
            d.kthread_ticks += u;
        } else if is_mine(t.pid) || siblings.is_some_and(|s| s == t.comm) {
            if t.pid != me {
                d.own_ticks += u;
            }
        } else if u > 0 {
            d.others.push((t.pid, t.comm.clone(), u));
        }
    }
    d.others.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    d
}

/// The CPU side of the cell's interference.
pub struct CpuInputs {
    /// `/proc/stat` deltas over the cell, ticks: busy (user+nice+system),
    /// steal and the total of every CPU.
    pub busy: u64,
    pub steal: u64,
    pub total: u64,
    /// fslab's own CPU over the cell, ticks (getrusage).
    pub own: u64,
    pub scans: ScanDelta,
    /// CPUs online: the tick resolution of `/proc/stat` is one tick per
    /// CPU at each end of the window.
    pub ncpus: u32,
}

/// Other processes listed: at most this many, each at least this % of all CPUs.
pub const TOP_OTHERS: usize = 5;
pub const TOP_MIN_PCT: f64 = 0.5;

/// Foreign I/O slack: a host filesystem's journal commits and metadata
/// for a loop device's backing file (ext4 commits every 5 s, a few blocks
/// each; XFS logs inode timestamps), and the loop driver's read-ahead of
/// the backing file: 8 MiB plus 10% of the loop device's bytes in that
/// direction. Writes also allow the dirty and writeback memory at the cell's
/// start (fslab's own earlier writes, flushed during the cell, e.g. the
/// files laid out before it).
pub const FOREIGN_SLACK_BYTES: u64 = 8 << 20;
pub const FOREIGN_SLACK_SHARE: f64 = 0.10;
/// Foreign I/O beyond the slack disturbs a cell when it is at least this
/// much and at least a quarter of fslab's own traffic on that device: then
/// others competed for the device in earnest.
pub const FOREIGN_DISTURBED_BYTES: u64 = 32 << 20;
pub const FOREIGN_DISTURBED_SHARE: f64 = 0.25;

/// The I/O on each device below a loop device beyond the loop device's own,
/// and whether it disturbs the cell (beyond the slack, see the constants),
/// with notes on what is not attributed. Reads below a loop device without
/// direct I/O are not: the backing file's page cache serves some and its
/// read-ahead enlarges the rest (measured here: 16 KiB random reads through
/// loop0 made vda read twice the bytes), so only writes count there.
pub fn foreign_io(devices: &[DeviceData], dirty_start_kib: u64) -> (Vec<ForeignIo>, Vec<String>, Vec<String>) {
    let mut out = Vec::new();
    let mut reasons = Vec::new();
    let mut notes = Vec::new();
    for d in devices {
        let Some(above) = d.above.as_ref().and_then(|a| devices.iter().find(|x| &x.name == a)) else {
            continue;
        };
        if above.role != DeviceRole::Loop {
            continue;
        }
        let (lr, lw) = (above.total.read_bytes, above.total.write_bytes);
        let reads_attributed = above.direct_io != Some(false);
        if !reads_attributed {
            notes.push(format!(
                "{}: reads not attributed to others ({} has no direct I/O: its backing file's page cache and read-ahead change them)",
                d.name, above.name
            ));
        }
        let fr = if reads_attributed {
            d.total.read_bytes.saturating_sub(lr)
        } else {
            0
        };
        let fw = d.total.write_bytes.saturating_sub(lw);
        out.push(ForeignIo {
            device: d.name.clone(),
            read_bytes: fr,
            write_bytes: fw,
        });
        let slack = |own: u64| FOREIGN_SLACK_BYTES + (own as f64 * FOREIGN_SLACK_SHARE) as u64;
        let beyond = fr.saturating_sub(slack(lr)) + fw.saturating_sub(slack(lw) + dirty_start_kib * 1024);
        let own = lr + lw;
        if beyond >= FOREIGN_DISTURBED_BYTES && beyond as f64 >= own as f64 * FOREIGN_DISTURBED_SHARE {
            let mib = |b: u64| b as f64 / (1 << 20) as f64;
            reasons.push(format!(
                "{} moved {:.1} MiB that {} above it did not (reads {:.1} MiB, writes {:.1} MiB; {} moved {:.1} MiB)",
                d.name,
                mib(fr + fw),
                above.name,
                mib(fr),
                mib(fw),
                above.name,
                mib(own)
            ));
        }
    }
    (out, reasons, notes)
}

/// The interference of one cell: CPU from `cpu`, device I/O from
/// `devices`; disturbed when other processes and steal take more than
/// `threshold_pct` of all CPUs or foreign I/O is large. Also returns notes
/// on what could not be attributed.
pub fn interference(
    cpu: &CpuInputs,
    devices: &[DeviceData],
    dirty_start_kib: u64,
    threshold_pct: f64,
) -> (Interference, Vec<String>) {
    let pct = |t: u64| {
        if cpu.total == 0 {
            0.0
        } else {
            t as f64 * 100.0 / cpu.total as f64
        }
    };
    // Two sources count the others: `/proc/stat`'s busy ticks less fslab's
    // and the kernel threads', and each process's own counters. They are read
    // at slightly different instants, so a process's ticks could exceed the
    // first (a burner at 93.8% beside "others 91.2%" was seen): the total is
    // never less than the processes listed in it, so that a part never
    // exceeds its whole, and both use one denominator (all CPUs' ticks).
    let listed: u64 = cpu.scans.others.iter().map(|o| o.2).sum();
    let other = cpu
        .busy
        .saturating_sub(cpu.own + cpu.scans.own_ticks + cpu.scans.kthread_ticks)
        .max(listed)
        .min(cpu.total);
    let other_pct = pct(other);
    let steal_pct = pct(cpu.steal);
    let top_others: Vec<OtherProcess> = cpu
        .scans
        .others
        .iter()
        .map(|(pid, comm, t)| OtherProcess {
            pid: *pid,
            comm: comm.clone(),
            cpu_pct: pct(*t),
        })
        .filter(|o| o.cpu_pct >= TOP_MIN_PCT)
        .take(TOP_OTHERS)
        .collect();
    let mut reasons = Vec::new();
    // `/proc/stat` counts whole ticks: each end of the window may be off by
    // one tick per CPU, so a short cell is judged only beyond that
    let resolution = pct(2 * cpu.ncpus.max(1) as u64);
    if other_pct + steal_pct - resolution > threshold_pct {
        let who: Vec<String> = top_others
            .iter()
            .take(3)
            .map(|o| format!("{} {}: {:.1}%", o.comm, o.pid, o.cpu_pct))
            .collect();
        let mut line = if steal_pct > other_pct {
            // the hypervisor, not a process here: say that first
            format!("the hypervisor's steal (its other guests) took {steal_pct:.1}% of the CPUs, other processes {other_pct:.1}%")
        } else {
            let mut l = format!("other processes used {other_pct:.1}% of the CPUs");
            if !who.is_empty() {
                l += &format!(" ({})", who.join(", "));
            }
            if steal_pct >= 0.05 {
                l += &format!(", steal (the hypervisor's other guests) {steal_pct:.1}%");
            }
            l
        };
        line += &format!(": above {threshold_pct}%");
        reasons.push(line);
    }
    let (foreign, io_reasons, notes) = foreign_io(devices, dirty_start_kib);
    reasons.extend(io_reasons);
    let i = Interference {
        other_cpu_pct: other_pct,
        steal_pct,
        kernel_threads_pct: pct(cpu.scans.kthread_ticks),
        top_others,
        foreign_io: foreign,
        cpu_threshold_pct: threshold_pct,
        disturbed: !reasons.is_empty(),
        reasons,
    };
    (i, notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::system::IostatPoint;

    fn task(pid: u32, ppid: u32, comm: &str, kthread: bool, ticks: u64) -> Task {
        Task {
            pid,
            ppid,
            comm: comm.into(),
            kthread,
            ticks,
            start: pid as u64,
        }
    }

    fn map(v: Vec<Task>) -> HashMap<u32, Task> {
        v.into_iter().map(|t| (t.pid, t)).collect()
    }

    #[test]
    fn parses_a_kernel_thread_and_a_process() {
        let k = parse_task("54 (kworker/1:1-events) I 2 0 0 0 -1 69238880 0 0 0 0 0 12 0 0 20 0 1 0 40 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 1 0 0 0 0 0").unwrap();
        assert!(k.kthread);
        assert_eq!((k.pid, k.ppid, k.ticks, k.start), (54, 2, 12, 40));
        assert_eq!(k.comm, "kworker/1:1-events");
        let p =
            parse_task("1234 (yes) R 99 1234 99 34816 1234 4194304 90 0 0 0 4790 10 0 0 20 0 1 0 5000 1 1").unwrap();
        assert!(!p.kthread);
        assert_eq!((p.pid, p.ppid, p.ticks, p.comm.as_str()), (1234, 99, 4800, "yes"));
        assert!(parse_task("garbage").is_none());
        let me = std::process::id();
        let s = scan();
        assert!(s.get(&me).is_some_and(|t| !t.kthread));
    }

    #[test]
    fn splits_the_scans_into_kernel_own_and_others() {
        let start = map(vec![
            task(2, 0, "kthreadd", true, 0),
            task(50, 2, "kworker/u4:1", true, 100),
            task(100, 1, "fslab", false, 500),
            task(101, 100, "mkfs.xfs", false, 0),
            task(200, 1, "yes", false, 1000),
            task(300, 1, "sshd", false, 10),
        ]);
        let mut end = map(vec![
            task(2, 0, "kthreadd", true, 0),
            task(50, 2, "kworker/u4:1", true, 130),
            task(100, 1, "fslab", false, 900),
            task(101, 100, "mkfs.xfs", false, 40),
            task(102, 101, "mkfs-helper", false, 5),
            task(200, 1, "yes", false, 1958),
            task(300, 1, "sshd", false, 10),
            task(400, 1, "cc1", false, 20),
        ]);
        let d = scan_delta(&start, &end, 100, None);
        assert_eq!(d.kthread_ticks, 30);
        assert_eq!(d.own_ticks, 45);
        assert_eq!(
            d.others,
            vec![(200, "yes".to_string(), 958), (400, "cc1".to_string(), 20)]
        );
        // a reused pid counts from 0
        end.insert(
            300,
            Task {
                start: 9999,
                ticks: 3,
                ..task(300, 1, "sshd", false, 3)
            },
        );
        let d = scan_delta(&start, &end, 100, None);
        assert!(d.others.contains(&(300, "sshd".to_string(), 3)));
        // sibling ranks are fslab's own
        end.insert(500, task(500, 1, "fslab", false, 70));
        let d = scan_delta(&start, &end, 100, Some("fslab"));
        assert_eq!(d.own_ticks, 45 + 70);
    }

    #[test]
    fn a_listed_process_never_exceeds_the_others_total() {
        // /proc/stat read a moment before the processes: the burner's 938
        // ticks against 912 derived (was "93.8%" beside "others 91.2%")
        let cpu = CpuInputs {
            busy: 100 + 912,
            steal: 0,
            total: 1000,
            own: 100,
            scans: ScanDelta {
                others: vec![(42, "burn".into(), 938), (7, "sshd".into(), 6)],
                ..Default::default()
            },
            ncpus: 1,
        };
        let i = interference(&cpu, &[], 0, 10.0).0;
        assert!((i.other_cpu_pct - 94.4).abs() < 1e-9, "{}", i.other_cpu_pct);
        let listed: f64 = i.top_others.iter().map(|o| o.cpu_pct).sum();
        assert!(listed <= i.other_cpu_pct + 1e-9, "{listed} > {}", i.other_cpu_pct);
    }

    #[test]
    fn a_burner_disturbs_and_kernel_threads_do_not() {
        // 2 CPUs for 10 s: 2000 ticks; fslab 500, kernel threads 300 (its
        // writeback), yes 958
        let scans = ScanDelta {
            kthread_ticks: 300,
            own_ticks: 0,
            others: vec![(1234, "yes".into(), 958), (7, "sshd".into(), 2)],
        };
        let cpu = CpuInputs {
            busy: 500 + 300 + 960 + 10,
            steal: 4,
            total: 2000,
            own: 500,
            scans: scans.clone(),
            ncpus: 2,
        };
        let i = interference(&cpu, &[], 0, 10.0).0;
        assert!(i.disturbed);
        assert!((i.other_cpu_pct - 48.5).abs() < 1e-9, "{}", i.other_cpu_pct);
        assert_eq!(i.kernel_threads_pct, 15.0);
        assert_eq!(i.steal_pct, 0.2);
        assert_eq!(i.top_others.len(), 1);
        assert_eq!(i.top_others[0].cpu_pct, 47.9);
        assert_eq!(
            i.reasons,
            ["other processes used 48.5% of the CPUs (yes 1234: 47.9%), steal (the hypervisor's other guests) 0.2%: above 10%"]
        );
        // quiet: fslab and its kernel threads only
        let quiet = CpuInputs {
            busy: 500 + 300 + 12,
            steal: 0,
            total: 2000,
            own: 500,
            scans: ScanDelta {
                kthread_ticks: 300,
                ..Default::default()
            },
            ncpus: 2,
        };
        let i = interference(&quiet, &[], 0, 10.0).0;
        assert!(!i.disturbed, "{:?}", i.reasons);
        assert!((i.other_cpu_pct - 0.6).abs() < 1e-9);
        assert_eq!(i.cpu_threshold_pct, 10.0);
        // a 0.2 s cell on 2 CPUs (40 ticks): 5 ticks of others is 12.5%,
        // but within the 4 ticks' resolution of the threshold
        let short = CpuInputs {
            busy: 20 + 5,
            steal: 0,
            total: 40,
            own: 20,
            scans: ScanDelta::default(),
            ncpus: 2,
        };
        assert!(!interference(&short, &[], 0, 10.0).0.disturbed);
        // the hypervisor's steal alone (as seen on this VM: 12.9%): named first
        let stolen = CpuInputs {
            busy: 500 + 300,
            steal: 260,
            ..quiet
        };
        let i = interference(&stolen, &[], 0, 10.0).0;
        assert!(i.disturbed);
        assert_eq!(
            i.reasons,
            ["the hypervisor's steal (its other guests) took 13.0% of the CPUs, other processes 0.0%: above 10%"]
        );
    }

    fn dev(name: &str, role: DeviceRole, above: Option<&str>, r: u64, w: u64) -> DeviceData {
        DeviceData {
            name: name.into(),
            role,
            above: above.map(str::to_string),
            total: IostatPoint {
                read_bytes: r,
                write_bytes: w,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn foreign_io_below_a_loop_device() {
        const M: u64 = 1 << 20;
        // the disk moved what the loop device did plus a little journal
        let quiet = [
            dev("loop3", DeviceRole::Loop, None, 400 * M, 100 * M),
            dev("vda", DeviceRole::Disk, Some("loop3"), 400 * M, 104 * M),
        ];
        let (f, r, _) = foreign_io(&quiet, 0);
        assert_eq!(
            f,
            [ForeignIo {
                device: "vda".into(),
                read_bytes: 0,
                write_bytes: 4 * M
            }]
        );
        assert!(r.is_empty());
        // someone wrote 300 MiB to the disk during a 100 MiB cell
        let busy = [
            dev("loop3", DeviceRole::Loop, None, 100 * M, 0),
            dev("vda", DeviceRole::Disk, Some("loop3"), 100 * M, 300 * M),
        ];
        let (_, r, _) = foreign_io(&busy, 0);
        assert_eq!(r.len(), 1);
        assert!(
            r[0].starts_with("vda moved 300.0 MiB that loop3 above it did not"),
            "{r:?}"
        );
        // ...unless it is the dirty memory fslab left before the cell
        let (_, r, _) = foreign_io(&busy, 400 * 1024);
        assert!(r.is_empty());
        // below a loop device without direct I/O, read-ahead doubles the
        // disk's reads: not attributed, and said so
        let mut buffered = busy.clone();
        buffered[0].direct_io = Some(false);
        buffered[1].total.read_bytes = 500 * M;
        buffered[1].total.write_bytes = 0;
        let (f, r, notes) = foreign_io(&buffered, 0);
        assert_eq!(f[0].read_bytes, 0);
        assert!(r.is_empty(), "{r:?}");
        assert!(notes[0].contains("reads not attributed"), "{notes:?}");
        // a large cell hides a modest foreign share
        let big = [
            dev("loop3", DeviceRole::Loop, None, 4000 * M, 0),
            dev("vda", DeviceRole::Disk, Some("loop3"), 4000 * M, 300 * M),
        ];
        assert!(foreign_io(&big, 0).1.is_empty());
        // a partition's disk is not attributed
        let part = [
            dev("vda1", DeviceRole::Partition, None, 0, 0),
            dev("vda", DeviceRole::Disk, Some("vda1"), 0, 900 * M),
        ];
        assert!(foreign_io(&part, 0).0.is_empty());
    }
}
