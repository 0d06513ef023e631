//! fio's bw and iops samples of a worker (stat.c __add_samples,
//! add_bw_sample, add_iops_sample): per direction, the bytes (KiB/s) or
//! I/Os per second of each `bw_avg_time`/`iops_avg_time` window (500 ms;
//! the log's log_avg_msec when the job writes that log), or with a
//! per-I/O log (log_avg_msec=0) one sample per I/O, as fio's.

use super::oplog::LogSpec;
use crate::stats::samples::SAMPLE_MS;
use crate::stats::{Instant, KindStats, OpKind};
use std::time::Duration;

/// fio's LOG_MSEC_SLACK: a window is taken up to 1 ms before it ends.
const SLACK: Duration = Duration::from_millis(1);

/// One kind of sample (bandwidth or IOPS).
pub(super) struct Sampler {
    bw: bool,
    /// The window, ms; 0: a sample per I/O.
    period: u64,
    /// Where the windows' grid starts, and when the last was taken.
    base: Instant,
    last: Instant,
    /// Each direction's bytes (bw) or I/Os when the last was taken.
    prev: [u64; 3],
}

impl Sampler {
    /// fio's period of `bw` (else iops) samples for a worker logging as `log`.
    pub fn new(bw: bool, log: &LogSpec, start: Instant) -> Self {
        let logged = if bw { log.bw } else { log.iops };
        Sampler {
            bw,
            period: if logged { log.avg_ms } else { SAMPLE_MS },
            base: start,
            last: start,
            prev: [0; 3],
        }
    }

    /// One sample per I/O (a per-I/O log of this kind).
    pub fn per_io_mode(&self) -> bool {
        self.period == 0
    }

    /// Starts again at `now` (the statistics were reset).
    pub fn restart(&mut self, now: Instant) {
        (self.base, self.last, self.prev) = (now, now, [0; 3]);
    }

    /// When the next window is taken (never for per-I/O samples).
    pub fn due(&self) -> Option<Instant> {
        if self.period == 0 {
            return None;
        }
        let since = self.last.saturating_duration_since(self.base) + SLACK;
        let k = since.as_millis() as u64 / self.period + 1;
        Some(self.base + Duration::from_millis(k * self.period) - SLACK)
    }

    /// The windows due by `now`, when the statistics hold nothing that
    /// completed after them (the caller has not yet recorded what completed
    /// at `now`): each is taken at its own end, fio's boundary (or at `now`
    /// within fio's slack of it), as fio's helper takes it on its timer.
    pub fn catch_up(&mut self, now: Instant, stats: &mut KindStats) {
        while let Some(t) = self.due().filter(|&t| t <= now) {
            self.take((t + SLACK).min(now), stats);
        }
    }

    /// At the run's end `d`: the windows that ended before it, and the one
    /// that ends with it when `last_too`.
    pub fn at_end(&mut self, d: Instant, last_too: bool, stats: &mut KindStats) {
        while let Some(t) = self.due().filter(|&t| t <= d) {
            if t + SLACK < d {
                self.take(t + SLACK, stats);
            } else {
                if last_too {
                    self.take(d, stats);
                }
                return;
            }
        }
    }

    /// The window that ends at `now`: each direction that moved something
    /// since the last gets its rate over the milliseconds since then.
    pub fn take(&mut self, now: Instant, stats: &mut KindStats) {
        let spent = now.saturating_duration_since(self.last).as_millis() as u64;
        for (i, d) in [OpKind::Read, OpKind::Write, OpKind::Trim].into_iter().enumerate() {
            let st = &mut stats[d.idx()];
            let cur = if self.bw { st.bytes } else { st.lat.count };
            if spent > 0 && cur > self.prev[i] {
                let delta = cur - self.prev[i];
                if self.bw {
                    st.bw_samples.add(delta * 1000 / spent / 1024);
                } else {
                    st.iops_samples.add(delta * 1000 / spent);
                }
            }
            self.prev[i] = cur;
        }
        self.last = now;
    }

    /// Per-I/O samples: one read or write of `bytes` that took `lat_ns`
    /// (fio's rate of it: bytes * 10^6 / ns; an IOPS sample of 1).
    #[inline]
    pub fn per_io(&self, d: OpKind, bytes: u64, lat_ns: u64, stats: &mut KindStats) {
        if self.period != 0 || !matches!(d, OpKind::Read | OpKind::Write | OpKind::Trim) {
            return;
        }
        let st = &mut stats[d.idx()];
        if self.bw {
            st.bw_samples.add((bytes * 1_000_000).checked_div(lat_ns).unwrap_or(0));
        } else {
            st.iops_samples.add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats_with(read_bytes: u64, read_ios: u64) -> KindStats {
        let mut s: KindStats = Default::default();
        for _ in 0..read_ios {
            s[OpKind::Read.idx()].record_ok(1000, read_bytes / read_ios.max(1));
        }
        s
    }

    #[test]
    fn windows_of_500_ms_within_fios_slack() {
        let t0 = Instant::now();
        let mut bw = Sampler::new(true, &LogSpec::default(), t0);
        let mut iops = Sampler::new(false, &LogSpec::default(), t0);
        // due 1 ms before the boundary (fio's LOG_MSEC_SLACK)
        assert_eq!(bw.due(), Some(t0 + Duration::from_millis(499)));
        // 1 MiB in 1024 reads over 500 ms: 2048 KiB/s, 2048 IOPS
        let mut s = stats_with(1 << 20, 1024);
        let at = t0 + Duration::from_millis(500);
        bw.take(at, &mut s);
        iops.take(at, &mut s);
        let r = &s[OpKind::Read.idx()];
        assert_eq!((r.bw_samples.n, r.bw_samples.min), (1, 2048));
        assert_eq!((r.iops_samples.n, r.iops_samples.min), (1, 2048));
        // writes did nothing: no write sample; the next window is on the grid
        assert_eq!(s[OpKind::Write.idx()].bw_samples.n, 0);
        assert_eq!(bw.due(), Some(t0 + Duration::from_millis(999)));
        // nothing moved since: no sample, however long the window
        bw.take(t0 + Duration::from_millis(1200), &mut s);
        assert_eq!(s[OpKind::Read.idx()].bw_samples.n, 1);
    }

    #[test]
    fn windows_end_at_their_boundary_and_with_the_run_after_a_ramp() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut s = stats_with(1 << 20, 1024);
        let mut bw = Sampler::new(true, &LogSpec::default(), t0);
        // the first completion after the boundary came at 750 ms: the
        // window still ends at 500 ms (nothing completed in between)
        bw.catch_up(ms(750), &mut s);
        assert_eq!(s[OpKind::Read.idx()].bw_samples.min, 2048);
        assert_eq!(bw.due(), Some(ms(999)));
        // a run that ends at 1 s: its last window only after a ramp
        let mut s2 = stats_with(2 << 20, 2048);
        let mut a = Sampler::new(true, &LogSpec::default(), t0);
        a.at_end(ms(1000), false, &mut s2);
        assert_eq!(s2[OpKind::Read.idx()].bw_samples.n, 1);
        let mut s3 = stats_with(2 << 20, 2048);
        let mut b = Sampler::new(true, &LogSpec::default(), t0);
        b.at_end(ms(1000), true, &mut s3);
        // the first window has all the bytes, the second none: one sample
        assert_eq!(s3[OpKind::Read.idx()].bw_samples.n, 1);
        assert_eq!(b.due(), Some(ms(1499)));
    }

    #[test]
    fn a_log_sets_the_window_or_samples_each_io() {
        let t0 = Instant::now();
        let windowed = LogSpec {
            bw: true,
            avg_ms: 100,
            ..Default::default()
        };
        assert_eq!(
            Sampler::new(true, &windowed, t0).due(),
            Some(t0 + Duration::from_millis(99))
        );
        // the iops samples keep 500 ms without an iops log
        assert_eq!(
            Sampler::new(false, &windowed, t0).due(),
            Some(t0 + Duration::from_millis(499))
        );
        let per_io = LogSpec {
            bw: true,
            ..Default::default()
        };
        let s = Sampler::new(true, &per_io, t0);
        assert!(s.per_io_mode() && s.due().is_none());
        let mut st: KindStats = Default::default();
        // 4096 bytes in 4 µs: fio's rate 4096 * 10^6 / 4000 ns
        s.per_io(OpKind::Read, 4096, 4000, &mut st);
        s.per_io(OpKind::Fsync, 0, 4000, &mut st);
        assert_eq!(st[OpKind::Read.idx()].bw_samples.min, 1_024_000);
        assert_eq!(st[OpKind::Fsync.idx()].bw_samples.n, 0);
    }
}
