//! The waits every pacing goes through: sleep in naps that look at the stop
//! flag, spin the last stretch, and never wait past the deadline.

use crate::stats::Instant;
use std::num::NonZeroU64;
use std::time::Duration;

/// The longest sleep between two looks at the stop flag.
pub(super) const NAP: Duration = Duration::from_millis(200);

/// Waits until `t`: sleeps (at most `NAP` at a time, looking at `stopped`
/// between) until `spin` before it, then spins. False when `stopped` ended
/// the wait.
pub(crate) fn wait_until(t: Instant, spin: Duration, stopped: &dyn Fn() -> bool) -> bool {
    loop {
        let now = Instant::now();
        if now >= t {
            return true;
        }
        let left = t - now;
        if left > spin {
            std::thread::sleep((left - spin).min(NAP));
            if stopped() {
                return false;
            }
        } else {
            while Instant::now() < t {
                std::hint::spin_loop();
            }
            return true;
        }
    }
}

/// Waits until `t`, but never past `deadline` (the end of the runtime):
/// true when `t` came; false when `stopped` ended the wait, or when `t` lies
/// at or past the deadline (then it waits for the deadline itself, so that
/// a slow rate still runs its whole runtime and no longer). Every pacing
/// wait goes through here: a rate of 100 bytes/s with 4 KiB blocks must not
/// hold a worker 40 s past a 2 s runtime.
pub(crate) fn wait_due(t: Instant, deadline: Option<Instant>, spin: Duration, stopped: &dyn Fn() -> bool) -> bool {
    match deadline {
        Some(d) if t >= d => {
            wait_until(d, spin, stopped);
            false
        }
        _ => wait_until(t, spin, stopped),
    }
}

/// Wake up on time: the default 50 µs timer slack would show in every
/// latency measured from the schedule. Per thread: each paced worker sets its own.
pub(crate) fn wake_on_time() {
    let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(1));
}
