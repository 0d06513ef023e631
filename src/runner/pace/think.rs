//! fio's thinktime: after every thinktime_blocks operations (issued or
//! completed), and with thinktime_iotime once that long has passed, the job
//! spins thinktime_spin and sleeps the rest of thinktime, as fio's
//! handle_thinktime and usec_sleep do.

use super::wait::NAP;
use crate::plan::PacingPlan;
use crate::runner::ns;
use crate::stats::Instant;
use std::sync::OnceLock;
use std::time::Duration;

/// One job's thinktime state.
pub(super) struct Think {
    think_us: u64,
    spin_us: u64,
    blocks: u64,
    /// thinktime_blocks_type=issue: count issued operations, not completed.
    by_issue: bool,
    /// fio's rate_ignore_thinktime: the rate's schedule skips the think.
    pub(super) ignore: bool,
    issues: u64,
    completions: u64,
    /// The count at the last think.
    last: u64,
    /// thinktime_iotime plus thinktime (zero without thinktime_iotime), and
    /// whether thinktime_blocks was given beside it (else the time alone
    /// triggers a think, as fio's handle_thinktime).
    ///
    /// fio 3.33 thinks once iotime + thinktime have passed since the last
    /// think began (its `now` is taken before the sleep), the job's start
    /// for the first: so its first stretch of I/O lasts iotime + thinktime
    /// and the later ones iotime. Seen with fio 3.33: 100 ms/200 ms gave
    /// stretches of 300, 100, 100... ms; 300/100 and 100/500 first thought
    /// at 400 and 600 ms. fslab does the same (a later fio counts iotime
    /// from the think's end and the start).
    iotime_cycle: Duration,
    iotime_and_blocks: bool,
    /// When the last think began (fio's last_thinktime; the epoch at first).
    last_at: Instant,
}

impl Think {
    /// The job's thinktime from `p`; its schedule starts at `t0`.
    pub(super) fn new(p: &PacingPlan, t0: Instant) -> Self {
        Think {
            think_us: p.thinktime_us,
            spin_us: p.thinktime_spin_us.min(p.thinktime_us),
            blocks: p.thinktime_blocks.max(1) as u64,
            by_issue: p.thinktime_issue,
            ignore: p.ignore_thinktime,
            issues: 0,
            completions: 0,
            last: 0,
            iotime_cycle: if p.thinktime_iotime_us > 0 {
                Duration::from_micros(p.thinktime_iotime_us.saturating_add(p.thinktime_us))
            } else {
                Duration::ZERO
            },
            iotime_and_blocks: p.thinktime_blocks > 0,
            last_at: t0,
        }
    }

    /// A read or write was issued.
    #[inline]
    pub(super) fn issued(&mut self) {
        self.issues += 1;
    }

    /// A read or write completed.
    #[inline]
    pub(super) fn completed(&mut self) {
        self.completions += 1;
    }

    /// Whether a think is due now (fio's handle_thinktime: every
    /// thinktime_blocks operations, completed or issued, and with
    /// thinktime_iotime once that long has passed since the last think).
    #[inline]
    pub(super) fn due(&self) -> bool {
        if self.think_us == 0 {
            return false;
        }
        if !self.iotime_cycle.is_zero() {
            if self.last_at.elapsed() >= self.iotime_cycle {
                return true;
            }
            if !self.iotime_and_blocks {
                return false;
            }
        }
        self.count() >= self.last + self.blocks
    }

    fn count(&self) -> u64 {
        if self.by_issue {
            self.issues
        } else {
            self.completions
        }
    }

    /// Thinks: spins thinktime_spin, sleeps the rest, never past
    /// `deadline`. Returns the µs it took, and false when `stopped` ended
    /// the sleep.
    pub(super) fn think(&mut self, deadline: Option<Instant>, stopped: &dyn Fn() -> bool) -> (u64, bool) {
        self.last = self.count();
        let start = Instant::now();
        self.last_at = start;
        let left = |us: u64| {
            let d = Duration::from_micros(us);
            match deadline {
                Some(e) => d.min(e.saturating_duration_since(Instant::now())),
                None => d,
            }
        };
        let spin = left(self.spin_us);
        let spun_to = start + spin;
        while Instant::now() < spun_to {
            std::hint::spin_loop();
        }
        let spun = start.elapsed();
        let sleep = left(self.think_us.saturating_sub(ns(spun) / 1000));
        let ok = sleep.is_zero() || fio_sleep(ns(sleep) / 1000, stopped).1;
        (ns(start.elapsed()) / 1000, ok)
    }
}

/// The longest a 1 µs nanosleep took in 10 tries, in µs: fio's
/// ns_granularity, measured once per process before the first job's think.
pub(super) fn sleep_granularity_us() -> u64 {
    static G: OnceLock<u64> = OnceLock::new();
    *G.get_or_init(|| {
        (0..10)
            .map(|_| {
                let t = Instant::now();
                std::thread::sleep(Duration::from_micros(1));
                ns(t.elapsed()) / 1000
            })
            .max()
            .unwrap_or(0)
    })
}

/// fio's usec_sleep: sleeps `us` less the granularity, again while time is
/// left, and spins what is left under the granularity; on a loaded machine
/// (a late wake-up of more than `us` once in those 10 tries) the whole
/// think is spun. Returns the µs it took, and false when `stopped` ended it.
pub(super) fn fio_sleep(us: u64, stopped: &dyn Fn() -> bool) -> (u64, bool) {
    let gran = sleep_granularity_us();
    let (mut left, mut total) = (us, 0u64);
    loop {
        let t = Instant::now();
        if left < gran {
            let end = t + Duration::from_micros(left);
            while Instant::now() < end {
                std::hint::spin_loop();
            }
            return (total + ns(t.elapsed()) / 1000, true);
        }
        std::thread::sleep(Duration::from_micros(left - gran).min(NAP));
        let slept = ns(t.elapsed()) / 1000;
        total += slept;
        if slept >= left {
            return (total, true);
        }
        if stopped() {
            return (total, false);
        }
        left -= slept;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_s_sleep_takes_at_least_its_time() {
        let t = Instant::now();
        let (us, ok) = fio_sleep(2000, &|| false);
        assert!(ok);
        assert!(t.elapsed() >= Duration::from_micros(2000) && us >= 2000, "{us} µs");
    }
}
