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
    prev: [u64; 2],
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
            prev: [0; 2],
        }
    }

    /// One sample per I/O (a per-I/O log of this kind).
    pub fn per_io_mode(&self) -> bool {
        self.period == 0
    }

    /// Starts again at `now` (the statistics were reset).
    pub fn restart(&mut self, now: Instant) {
        (self.base, self.last, self.prev) = (now, now, [0; 2]);
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

    /// The window that ends at `now`: each direction that moved something
    /// since the last gets its rate over the milliseconds since then.
    pub fn take(&mut self, now: Instant, stats: &mut KindStats) {
        let spent = now.saturating_duration_since(self.last).as_millis() as u64;
        for (i, d) in [OpKind::Read, OpKind::Write].into_iter().enumerate() {
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
        if self.period != 0 || !matches!(d, OpKind::Read | OpKind::Write) {
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
