//! The machine from `/proc`: the CPU split of `/proc/stat` (as mpstat's
//! "all" line), context switches, pressure stall information
//! (`/proc/pressure/{cpu,io,memory}`), Dirty/Writeback (`/proc/meminfo`),
//! the dirty thresholds and page-in/out (`/proc/vmstat`), and fslab's own
//! CPU (`getrusage(RUSAGE_SELF)` plus its reaped children).

use crate::model::system::{CpuSplit, Pressure, SystemPoint};

/// The aggregate `cpu` line of `/proc/stat`, in USER_HZ ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub guest: u64,
    pub guest_nice: u64,
}

impl CpuTicks {
    /// Every tick of the line once (guest time is already inside user and
    /// nice, as mpstat counts it).
    pub fn total(&self) -> u64 {
        self.user + self.nice + self.system + self.idle + self.iowait + self.irq + self.softirq + self.steal
    }

    /// Time processes ran: user + nice + system (irq and softirq excluded).
    pub fn busy(&self) -> u64 {
        self.user + self.nice + self.system
    }
}

/// What the sampler reads of `/proc/stat`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcStat {
    pub cpu: CpuTicks,
    /// `cpuN` lines: CPUs online.
    pub ncpus: u32,
    pub ctxt: u64,
}

pub fn parse_proc_stat(text: &str) -> Option<ProcStat> {
    let mut out = ProcStat::default();
    let mut seen = false;
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("cpu ") {
            let v: Vec<u64> = rest.split_whitespace().filter_map(|f| f.parse().ok()).collect();
            if v.len() < 4 {
                return None;
            }
            let g = |i: usize| v.get(i).copied().unwrap_or(0);
            out.cpu = CpuTicks {
                user: g(0),
                nice: g(1),
                system: g(2),
                idle: g(3),
                iowait: g(4),
                irq: g(5),
                softirq: g(6),
                steal: g(7),
                guest: g(8),
                guest_nice: g(9),
            };
            seen = true;
        } else if l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit) {
            out.ncpus += 1;
        } else if let Some(rest) = l.strip_prefix("ctxt ") {
            out.ctxt = rest.trim().parse().unwrap_or(0);
        }
    }
    seen.then_some(out)
}

/// The CPU split between two readings, % of all CPUs (mpstat's "all":
/// %usr is user minus guest, %nice is nice minus guest_nice).
pub fn cpu_split(a: &CpuTicks, b: &CpuTicks) -> CpuSplit {
    let d = |x: u64, y: u64| y.saturating_sub(x) as f64;
    let total = d(a.total(), b.total());
    if total <= 0.0 {
        return CpuSplit::default();
    }
    let pct = |v: f64| v * 100.0 / total;
    CpuSplit {
        user: pct((d(a.user, b.user) - d(a.guest, b.guest)).max(0.0)),
        nice: pct((d(a.nice, b.nice) - d(a.guest_nice, b.guest_nice)).max(0.0)),
        system: pct(d(a.system, b.system)),
        iowait: pct(d(a.iowait, b.iowait)),
        irq: pct(d(a.irq, b.irq)),
        softirq: pct(d(a.softirq, b.softirq)),
        steal: pct(d(a.steal, b.steal)),
        idle: pct(d(a.idle, b.idle)),
    }
}

/// The `total=` counters (µs) of one `/proc/pressure/*` file: some, full.
pub fn parse_psi(text: &str) -> (u64, u64) {
    let get = |kind: &str| {
        text.lines()
            .find(|l| l.starts_with(kind))
            .and_then(|l| l.split_whitespace().find_map(|f| f.strip_prefix("total=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (get("some "), get("full "))
}

/// The pressure totals: cpu some, io some, io full, memory some, memory full (µs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PsiTotals(pub [u64; 5]);

pub fn read_psi() -> Option<PsiTotals> {
    let r = |f: &str| std::fs::read_to_string(format!("/proc/pressure/{f}")).ok();
    let (c, _) = parse_psi(&r("cpu")?);
    let (is, iff) = parse_psi(&r("io")?);
    let (ms, mf) = parse_psi(&r("memory")?);
    Some(PsiTotals([c, is, iff, ms, mf]))
}

/// % of `len_ms` stalled, from two totals readings.
pub fn pressure(a: &PsiTotals, b: &PsiTotals, len_ms: u64) -> Pressure {
    let p = |i: usize| {
        if len_ms == 0 {
            0.0
        } else {
            (b.0[i].saturating_sub(a.0[i]) as f64 / (len_ms as f64 * 1000.0) * 100.0).min(100.0)
        }
    };
    Pressure {
        cpu_some: p(0),
        io_some: p(1),
        io_full: p(2),
        memory_some: p(3),
        memory_full: p(4),
    }
}

/// `/proc/meminfo` Dirty and Writeback, KiB.
pub fn parse_meminfo(text: &str) -> (u64, u64) {
    let get = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (get("Dirty:"), get("Writeback:"))
}

/// What the sampler reads of `/proc/vmstat`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VmStat {
    /// Pages.
    pub dirty_threshold: u64,
    pub dirty_bg_threshold: u64,
    /// KiB (the kernel prints them in KiB).
    pub pgpgin: u64,
    pub pgpgout: u64,
}

pub fn parse_vmstat(text: &str) -> VmStat {
    let mut v = VmStat::default();
    for l in text.lines() {
        let Some((k, n)) = l.split_once(' ') else { continue };
        let n: u64 = n.trim().parse().unwrap_or(0);
        match k {
            "nr_dirty_threshold" => v.dirty_threshold = n,
            "nr_dirty_background_threshold" => v.dirty_bg_threshold = n,
            "pgpgin" => v.pgpgin = n,
            "pgpgout" => v.pgpgout = n,
            _ => {}
        }
    }
    v
}

/// fslab's CPU so far, ns: this process (every thread) and its reaped
/// children (`/proc/self/stat` cutime + cstime, USER_HZ ticks).
pub fn own_cpu_ns() -> u64 {
    let me = crate::stats::cpu::CpuTimes::process();
    let children = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let f = stat_fields(&s)?;
            // fields after comm: cutime, cstime are the 16th and 17th of the line
            Some(f.get(13)?.parse::<u64>().ok()? + f.get(14)?.parse::<u64>().ok()?)
        })
        .unwrap_or(0);
    me.user_ns + me.sys_ns + children * tick_ns()
}

/// The fields of a `/proc/PID/stat` line after `(comm)`: index 0 is the
/// state (the line's 3rd field).
pub fn stat_fields(line: &str) -> Option<Vec<&str>> {
    let close = line.rfind(')')?;
    Some(line[close + 1..].split_whitespace().collect())
}

/// One USER_HZ tick, ns.
pub fn tick_ns() -> u64 {
    1_000_000_000 / (rustix::param::clock_ticks_per_second().max(1))
}

pub fn page_kib() -> u64 {
    (rustix::param::page_size() / 1024).max(1) as u64
}

/// One reading of the machine.
#[derive(Debug, Clone, Default)]
pub struct Machine {
    pub stat: ProcStat,
    pub psi: Option<PsiTotals>,
    pub dirty_kib: u64,
    pub writeback_kib: u64,
    pub vm: VmStat,
    /// fslab's own CPU so far, ns.
    pub own_ns: u64,
}

/// Reads the machine (five small files and one getrusage).
pub fn read_machine() -> Machine {
    let stat = std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|s| parse_proc_stat(&s))
        .unwrap_or_default();
    let (dirty_kib, writeback_kib) = parse_meminfo(&std::fs::read_to_string("/proc/meminfo").unwrap_or_default());
    Machine {
        stat,
        psi: read_psi(),
        dirty_kib,
        writeback_kib,
        vm: parse_vmstat(&std::fs::read_to_string("/proc/vmstat").unwrap_or_default()),
        own_ns: own_cpu_ns(),
    }
}

/// The machine between two readings `len_ms` apart, ending at `t_ms`.
pub fn system_point(a: &Machine, b: &Machine, len_ms: u64, t_ms: u64) -> SystemPoint {
    let ncpus = b.stat.ncpus.max(1) as f64;
    let secs = len_ms as f64 / 1000.0;
    let per_s = |x: u64, y: u64| {
        if len_ms == 0 {
            0.0
        } else {
            y.saturating_sub(x) as f64 / secs
        }
    };
    let page = page_kib();
    SystemPoint {
        t_ms,
        len_ms,
        cpu: cpu_split(&a.stat.cpu, &b.stat.cpu),
        fslab_pct: if len_ms == 0 {
            0.0
        } else {
            b.own_ns.saturating_sub(a.own_ns) as f64 / (len_ms as f64 * 1e6 * ncpus) * 100.0
        },
        ctxt_s: per_s(a.stat.ctxt, b.stat.ctxt),
        dirty_kib: b.dirty_kib,
        writeback_kib: b.writeback_kib,
        dirty_threshold_kib: b.vm.dirty_threshold * page,
        dirty_bg_threshold_kib: b.vm.dirty_bg_threshold * page,
        pgpgin_kib_s: per_s(a.vm.pgpgin, b.vm.pgpgin),
        pgpgout_kib_s: per_s(a.vm.pgpgout, b.vm.pgpgout),
        psi: match (&a.psi, &b.psi) {
            (Some(x), Some(y)) => Some(pressure(x, y, len_ms)),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT_A: &str = "cpu  1000 100 500 8000 200 10 40 150 0 0\ncpu0 500 50 250 4000 100 5 20 75 0 0\ncpu1 500 50 250 4000 100 5 20 75 0 0\nintr 1 2 3\nctxt 5000\nbtime 1\n";
    const STAT_B: &str = "cpu  1100 100 550 8300 230 10 50 160 0 0\ncpu0 550 50 275 4150 115 5 25 80 0 0\ncpu1 550 50 275 4150 115 5 25 80 0 0\nctxt 7000\n";

    #[test]
    fn parses_proc_stat_and_splits_the_cpu_as_mpstat() {
        let a = parse_proc_stat(STAT_A).unwrap();
        let b = parse_proc_stat(STAT_B).unwrap();
        assert_eq!(a.ncpus, 2);
        assert_eq!(a.ctxt, 5000);
        assert_eq!(a.cpu.steal, 150);
        // deltas: user 100, system 50, idle 300, iowait 30, softirq 10, steal 10: 500
        let s = cpu_split(&a.cpu, &b.cpu);
        assert_eq!(s.user, 20.0);
        assert_eq!(s.system, 10.0);
        assert_eq!(s.idle, 60.0);
        assert_eq!(s.iowait, 6.0);
        assert_eq!(s.softirq, 2.0);
        assert_eq!(s.steal, 2.0);
        assert_eq!(s.nice + s.irq, 0.0);
        assert!(parse_proc_stat("intr 1\n").is_none());
        // guest time is inside user: mpstat takes it out
        let g0 = CpuTicks {
            user: 100,
            guest: 50,
            idle: 100,
            ..Default::default()
        };
        let g1 = CpuTicks {
            user: 200,
            guest: 100,
            idle: 200,
            ..Default::default()
        };
        assert_eq!(cpu_split(&g0, &g1).user, 25.0);
    }

    #[test]
    fn psi_meminfo_vmstat() {
        let t = "some avg10=0.26 avg60=2.30 avg300=4.31 total=1963736813\nfull avg10=0.22 avg60=1.65 avg300=3.11 total=489175241\n";
        assert_eq!(parse_psi(t), (1963736813, 489175241));
        assert_eq!(parse_psi("some avg10=0.00 avg60=0.00 avg300=0.00 total=7\n"), (7, 0));
        let a = PsiTotals([0, 0, 0, 0, 0]);
        let b = PsiTotals([250_000, 500_000, 100_000, 0, 0]);
        let p = pressure(&a, &b, 1000);
        assert_eq!(
            (p.cpu_some, p.io_some, p.io_full, p.memory_some),
            (25.0, 50.0, 10.0, 0.0)
        );
        let m = "MemTotal:  100 kB\nDirty:            188500 kB\nWriteback:            12 kB\nWritebackTmp: 3 kB\n";
        assert_eq!(parse_meminfo(m), (188500, 12));
        let v = parse_vmstat("nr_dirty 5\nnr_dirty_threshold 1159065\nnr_dirty_background_threshold 578825\npgpgin 438140365\npgpgout 749893903\n");
        assert_eq!(v.dirty_threshold, 1159065);
        assert_eq!(v.dirty_bg_threshold, 578825);
        assert_eq!((v.pgpgin, v.pgpgout), (438140365, 749893903));
    }

    #[test]
    fn a_point_between_two_readings() {
        let a = Machine {
            stat: parse_proc_stat(STAT_A).unwrap(),
            psi: Some(PsiTotals([0; 5])),
            vm: VmStat {
                pgpgin: 100,
                ..Default::default()
            },
            own_ns: 0,
            ..Default::default()
        };
        let b = Machine {
            stat: parse_proc_stat(STAT_B).unwrap(),
            psi: Some(PsiTotals([100_000, 0, 0, 0, 0])),
            dirty_kib: 64,
            vm: VmStat {
                pgpgin: 2148,
                dirty_threshold: 10,
                ..Default::default()
            },
            // half a CPU for 2 s on 2 CPUs: 25% of all CPUs
            own_ns: 1_000_000_000,
            ..Default::default()
        };
        let p = system_point(&a, &b, 2000, 2000);
        assert_eq!(p.fslab_pct, 25.0);
        assert_eq!(p.ctxt_s, 1000.0);
        assert_eq!(p.pgpgin_kib_s, 1024.0);
        assert_eq!(p.dirty_kib, 64);
        assert_eq!(p.dirty_threshold_kib, 10 * page_kib());
        assert_eq!(p.psi.unwrap().cpu_some, 5.0);
        let live = read_machine();
        assert!(live.stat.ncpus >= 1);
        assert!(live.own_ns > 0);
    }

    #[test]
    fn stat_fields_survive_a_comm_with_spaces_and_parens() {
        let l = "1234 (a b) c) S 1 1234 1234 0 -1 4194560 10 0 0 0 7 3 0 0 20 0 1 0 100 0 0";
        let f = stat_fields(l).unwrap();
        assert_eq!(f[0], "S");
        assert_eq!(f[11], "7");
        assert_eq!(f[12], "3");
    }
}
