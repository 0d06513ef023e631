//! CPU time from `getrusage`: per worker thread (`RUSAGE_THREAD`) and for the
//! whole process (`RUSAGE_SELF`), reported like bonnie++'s %CP.

use serde::{Deserialize, Serialize};
use std::ops::{AddAssign, Sub};

/// User and system CPU time in nanoseconds, and the context switches and
/// page faults getrusage counts over the same span (what fio's `cpu` line
/// prints as ctx, majf and minf).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTimes {
    pub user_ns: u64,
    pub sys_ns: u64,
    /// Voluntary plus involuntary context switches (ru_nvcsw + ru_nivcsw).
    #[serde(default)]
    pub ctx: u64,
    /// Major page faults, those that read from a device (ru_majflt).
    #[serde(default)]
    pub majf: u64,
    /// Minor page faults (ru_minflt).
    #[serde(default)]
    pub minf: u64,
}

fn rusage(who: libc::c_int) -> (CpuTimes, u64) {
    // SAFETY: rusage is plain integers, for which all-zero is a value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes into the struct we pass.
    unsafe { libc::getrusage(who, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    (
        CpuTimes {
            user_ns: tv(ru.ru_utime),
            sys_ns: tv(ru.ru_stime),
            ctx: (ru.ru_nvcsw + ru.ru_nivcsw) as u64,
            majf: ru.ru_majflt as u64,
            minf: ru.ru_minflt as u64,
        },
        ru.ru_maxrss as u64,
    )
}

impl CpuTimes {
    /// CPU time of the calling thread so far.
    pub fn thread() -> Self {
        rusage(libc::RUSAGE_THREAD).0
    }

    /// CPU time of the whole process so far.
    pub fn process() -> Self {
        rusage(libc::RUSAGE_SELF).0
    }

    /// Percent of one core over `elapsed_ns` ((user+sys)/elapsed*100, bonnie++'s %CP).
    pub fn percent_of_core(&self, elapsed_ns: u64) -> f64 {
        if elapsed_ns == 0 {
            0.0
        } else {
            (self.user_ns + self.sys_ns) as f64 * 100.0 / elapsed_ns as f64
        }
    }
}

/// Peak resident set size of this process in KiB.
///
/// Read from VmHWM in /proc/self/status, the high-water mark of this
/// process's own memory: getrusage's ru_maxrss keeps the parent's resident
/// size from before exec (Linux records the old mm's high-water mark at exec,
/// and a vfork child uses its parent's), so a test harness or shell with a big
/// footprint would show up as fslab's.
pub fn max_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or_else(|| rusage(libc::RUSAGE_SELF).1)
}

impl Sub for CpuTimes {
    type Output = CpuTimes;
    fn sub(self, o: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_ns: self.user_ns.saturating_sub(o.user_ns),
            sys_ns: self.sys_ns.saturating_sub(o.sys_ns),
            ctx: self.ctx.saturating_sub(o.ctx),
            majf: self.majf.saturating_sub(o.majf),
            minf: self.minf.saturating_sub(o.minf),
        }
    }
}

impl AddAssign for CpuTimes {
    fn add_assign(&mut self, o: CpuTimes) {
        self.user_ns += o.user_ns;
        self.sys_ns += o.sys_ns;
        self.ctx += o.ctx;
        self.majf += o.majf;
        self.minf += o.minf;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_thread_accumulates_cpu_time() {
        let start = CpuTimes::thread();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        // spin until the thread's clock shows 20 ms, not for a wall time: on a
        // loaded machine 50 ms of wall time may hold far less of our CPU
        let mut used = CpuTimes::thread() - start;
        while used.user_ns + used.sys_ns < 20_000_000 && t.elapsed().as_secs() < 60 {
            for _ in 0..10_000 {
                x = x.wrapping_mul(31).wrapping_add(7);
            }
            used = CpuTimes::thread() - start;
        }
        std::hint::black_box(x);
        assert!(used.user_ns + used.sys_ns >= 20_000_000, "{used:?}");
        // a sleep is a voluntary switch; the first write to each page of a
        // fresh mapping is a minor fault
        let before = CpuTimes::thread();
        std::thread::sleep(std::time::Duration::from_millis(1));
        let len = 16 << 12;
        // SAFETY: a fresh private anonymous mapping, written within its
        // length and unmapped here; nothing else refers to it.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            for off in (0..len).step_by(4096) {
                std::ptr::write_volatile((p as *mut u8).add(off), 1);
            }
            libc::munmap(p, len);
        }
        let d = CpuTimes::thread() - before;
        assert!(d.ctx >= 1 && d.minf >= 1, "{d:?}");
        assert!(max_rss_kib() > 0);
    }
}
