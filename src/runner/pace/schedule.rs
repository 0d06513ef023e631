//! fio's rate schedule per direction (`usec_for_io`): an operation of a
//! direction is due when the bytes issued before it, at the rate, have
//! taken their time (linear), or after poisson gaps; the schedule starts
//! again when the ramp ends (fio's reset_all_stats).

use super::wait::wait_due;
use crate::plan::PacingPlan;
use crate::runner::ns;
use crate::stats::{Instant, OpKind};
use std::time::Duration;

/// The direction index fio paces (`DDIR_READ`, `DDIR_WRITE`); None for
/// the rest (syncs), which fio neither paces nor counts.
#[inline]
pub(super) fn ddir(dir: OpKind) -> Option<usize> {
    match dir {
        OpKind::Read => Some(0),
        OpKind::Write => Some(1),
        _ => None,
    }
}

/// fio's poisson gap: the mean gap (whole µs, as fio's integer division)
/// times -ln(u), u in (0, 1], truncated to whole µs.
#[inline]
pub(super) fn poisson_gap_us(bps: u64, bs: u64, rng: &mut fastrand::Rng) -> u64 {
    let iops = (bps / bs.max(1)).max(1);
    let u = 1.0 - rng.f64();
    ((1_000_000 / iops) as f64 * -(u.ln())) as u64
}

/// How `FioPacer::wait_for` ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Waited {
    /// The operation's time came.
    Due,
    /// The ramp ended first and the schedule started again: the operation
    /// goes now (one issued before the wait must be issued again).
    Restarted,
    /// The deadline, or a stop.
    Ended,
}

/// The rate's schedule of one worker, per direction.
pub(super) struct Schedule {
    /// fio's td->epoch: the rate's schedule counts from here (reset when
    /// the ramp ends, as fio's reset_all_stats does).
    epoch: Instant,
    pub(super) measure_start: Instant,
    pub(super) measured: bool,
    bps: [u64; 2],
    bs: [u64; 2],
    poisson: Option<[fastrand::Rng; 2]>,
    /// rate_io_issue_bytes
    issued: [u64; 2],
    /// Poisson: the schedule so far, µs.
    last_usec: [u64; 2],
    /// rate_next_io_time, µs since the epoch.
    next_us: [u64; 2],
}

impl Schedule {
    /// Worker `j`'s schedule; it starts at `t0`, measurement at `measure_start`.
    pub(super) fn new(p: &PacingPlan, j: usize, t0: Instant, measure_start: Instant) -> Self {
        let seed = p.seed ^ (j as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x504F_4953_534F_4E00;
        Schedule {
            epoch: t0,
            measure_start,
            measured: measure_start <= t0,
            bps: p.bps(),
            bs: std::array::from_fn(|d| p.min_bs[d].max(1)),
            poisson: p.poisson.then(|| {
                [
                    fastrand::Rng::with_seed(seed),
                    fastrand::Rng::with_seed(seed ^ 0xA5A5_A5A5),
                ]
            }),
            issued: [0; 2],
            last_usec: [0; 2],
            next_us: [0; 2],
        }
    }

    /// fio's rate_ddir for a mixed job: the mix drew `dir`; when `dir` is
    /// ahead of its rate and the other direction is due sooner (behind its
    /// rate, or unlimited), the other is issued instead. The caller waits
    /// for the returned direction's `due` as before.
    #[inline]
    pub(super) fn steer(&self, dir: OpKind, now: Instant) -> OpKind {
        let Some(d) = ddir(dir) else { return dir };
        // rate_next_io_time: 0 for a direction without a rate
        let next = |d: usize| if self.bps[d] > 0 { self.next_us[d] } else { 0 };
        let now_us = ns(now.saturating_duration_since(self.epoch)) / 1000;
        if next(d) <= now_us || next(d ^ 1) >= next(d) {
            return dir;
        }
        if d == 0 {
            OpKind::Write
        } else {
            OpKind::Read
        }
    }

    /// When an operation of `dir` may be issued (None: at once).
    #[inline]
    pub(super) fn due(&self, dir: OpKind) -> Option<Instant> {
        let d = ddir(dir)?;
        (self.bps[d] > 0).then(|| self.epoch + Duration::from_micros(self.next_us[d]))
    }

    /// The smallest block of `dir` (a step's length, when not known).
    pub(super) fn bs(&self, dir: OpKind) -> u64 {
        ddir(dir).map_or(0, |d| self.bs[d])
    }

    /// An operation of direction `d` moving `len` bytes was issued: the
    /// next one's time (fio: rate_io_issue_bytes, then usec_for_io).
    #[inline]
    pub(super) fn issue(&mut self, d: usize, len: u64) {
        self.issued[d] += len;
        let bps = self.bps[d];
        if bps == 0 {
            return;
        }
        self.next_us[d] = match &mut self.poisson {
            Some(r) => {
                self.last_usec[d] += poisson_gap_us(bps, self.bs[d], &mut r[d]);
                self.last_usec[d]
            }
            None => (self.issued[d] as u128 * 1_000_000 / bps as u128).min(u64::MAX as u128) as u64,
        };
    }

    /// Waits for an operation due at `t` (from `due`), never past
    /// `deadline`; and, in the ramp, never past the ramp's end: there the
    /// rate's schedule starts again (fio's reset_all_stats), so a slow
    /// rate's next operation, 40 s ahead, comes at once instead of never.
    pub(super) fn wait_for(&mut self, t: Instant, deadline: Option<Instant>, stopped: &dyn Fn() -> bool) -> Waited {
        match (!self.measured).then_some(self.measure_start).filter(|&m| t > m) {
            Some(m) => {
                if !wait_due(m, deadline, Duration::ZERO, stopped) {
                    return Waited::Ended;
                }
                self.restart();
                Waited::Restarted
            }
            None if wait_due(t, deadline, Duration::ZERO, stopped) => Waited::Due,
            None => Waited::Ended,
        }
    }

    /// The ramp ended: the schedule and the counts start again (fio's
    /// reset_all_stats).
    pub(super) fn restart(&mut self) {
        self.measured = true;
        self.epoch = self.measure_start;
        self.issued = [0; 2];
        self.last_usec = [0; 2];
        self.next_us = [0; 2];
    }

    /// A think of `total` µs after an operation of direction `d`, with
    /// rate_ignore_thinktime: the schedule moves on by what the rate would
    /// have moved meanwhile.
    pub(super) fn skip_think(&mut self, d: usize, total: u64) {
        if total == 0 || self.bps[d] == 0 {
            return;
        }
        // the bytes the rate would have moved meanwhile, less one block
        // so that issuing starts at once (fio's handle_thinktime)
        let bps = self.bps[d];
        let missed = (bps as u128 * total as u128 / 1_000_000) as u64;
        let bs = self.bs[d];
        let usperop = bs.saturating_mul(1_000_000) / bps;
        let over = if usperop <= total {
            bs
        } else {
            ((usperop - total) / usperop).wrapping_mul(bs.wrapping_neg())
        };
        self.issued[d] = self.issued[d].wrapping_add(missed.wrapping_sub(over));
        self.last_usec[d] += total;
        self.next_us[d] = match self.poisson {
            Some(_) => self.last_usec[d],
            None => (self.issued[d] as u128 * 1_000_000 / bps as u128).min(u64::MAX as u128) as u64,
        };
    }
}
