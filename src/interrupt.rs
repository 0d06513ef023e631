//! What a signal may do at any moment, and what it must never race with.
//!
//! The first SIGINT or SIGTERM sets the run's stop flag. Phases that poll the
//! flag (the runner, file layout, the probe's grid) hold a `polling()` guard;
//! when none does, the main thread would not notice the flag for a while
//! (validation, mkfs, mount, a long removal), so the signal aborts at once,
//! as a second signal always does.
//!
//! Aborting takes the process-wide `serial()` lock, which the main thread
//! holds while it makes or removes fslab's directories and scratch
//! filesystems and while it writes results: so an abort never runs half-way
//! through one of them (a result file cut short, an unmount racing a lazy
//! detach). Holding the lock for good, the abort writes the latest results
//! the run published, marked interrupted, detaches fslab's mounts, removes
//! its directories and exits with 128 + the signal's number, as a shell
//! reports a process the signal ended (130 SIGINT, 143 SIGTERM; `exit_code`).
//! What it writes and removes is the
//! abort action `app` installs (`set_abort_action`, see `app::abort`): this
//! module imports nothing of fslab's.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex, MutexGuard};
use std::thread::ThreadId;

/// Exit code of a run interrupted with no signal of its own recorded (one
/// whose stop came from another MPI rank): SIGINT's.
pub const EXIT_INTERRUPTED: u8 = 130;

/// The number of the latest SIGINT or SIGTERM (0: none yet). The signal
/// handler stores it (`signal_record`) before it sets the stop flag, so
/// whoever sees the flag set also sees which signal set it.
static SIGNAL: LazyLock<Arc<AtomicUsize>> = LazyLock::new(|| Arc::new(AtomicUsize::new(0)));

/// Where the signal handler records the signal's number (signal-hook's
/// `flag::register_usize`, registered before the stop flag's handler:
/// signal-hook runs a signal's actions in the order they were registered).
pub fn signal_record() -> Arc<AtomicUsize> {
    Arc::clone(&SIGNAL)
}

/// Exit code of an interrupted run: 128 + the signal's number, as a shell
/// reports a process that signal ended (130 for SIGINT, 143 for SIGTERM).
pub fn exit_code() -> u8 {
    match SIGNAL.load(Ordering::SeqCst) {
        s @ 1..=127 => 128 + s as u8,
        _ => EXIT_INTERRUPTED,
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Owner of the serial lock and how often it took it.
struct Owner {
    thread: Option<ThreadId>,
    depth: usize,
}

static OWNER: Mutex<Owner> = Mutex::new(Owner { thread: None, depth: 0 });
static FREED: Condvar = Condvar::new();

/// Holds the serial lock until dropped. The lock is reentrant: a guard that
/// fails half-way through making a scratch filesystem drops (and removes) it
/// while the maker still holds the lock.
#[must_use]
pub struct Serial {
    // a lock belongs to the thread that took it
    _not_send: std::marker::PhantomData<*const ()>,
    /// False for the lock an abort that gave up waiting pretends to hold.
    counted: bool,
}

/// The thread of an abort that gave up waiting for the lock: its own
/// `serial()` calls (writing results) must not wait either.
static FORCED: Mutex<Option<ThreadId>> = Mutex::new(None);

/// Takes the lock that serialises making and removing fslab's files and
/// writing results with an abort. Blocks for good once an abort has begun.
pub fn serial() -> Serial {
    serial_within(None).expect("an unbounded wait ends with the lock")
}

/// `serial()`, giving up after `limit` (None: never).
fn serial_within(limit: Option<std::time::Duration>) -> Option<Serial> {
    let me = std::thread::current().id();
    if *lock(&FORCED) == Some(me) {
        return Some(Serial {
            _not_send: std::marker::PhantomData,
            counted: false,
        });
    }
    let until = limit.map(|l| std::time::Instant::now() + l);
    let mut o = lock(&OWNER);
    loop {
        match o.thread {
            None => {
                o.thread = Some(me);
                o.depth = 1;
                break;
            }
            Some(t) if t == me => {
                o.depth += 1;
                break;
            }
            Some(_) => match until {
                None => o = FREED.wait(o).unwrap_or_else(|e| e.into_inner()),
                Some(u) => {
                    let left = u.checked_duration_since(std::time::Instant::now())?;
                    o = FREED.wait_timeout(o, left).unwrap_or_else(|e| e.into_inner()).0;
                }
            },
        }
    }
    Some(Serial {
        _not_send: std::marker::PhantomData,
        counted: true,
    })
}

impl Drop for Serial {
    fn drop(&mut self) {
        if !self.counted {
            return;
        }
        let mut o = lock(&OWNER);
        o.depth -= 1;
        if o.depth == 0 {
            o.thread = None;
            FREED.notify_all();
        }
    }
}

static POLLING: AtomicUsize = AtomicUsize::new(0);

/// Marks a phase that polls the stop flag often, until dropped.
#[must_use]
pub struct Polling(());

/// The caller polls the stop flag until the guard is dropped: a first signal
/// then only sets the flag and lets the phase end by itself.
pub fn polling() -> Polling {
    POLLING.fetch_add(1, Ordering::SeqCst);
    Polling(())
}

/// A signal arrived while a phase polled the stop flag (seen when its
/// guard was dropped): that phase ended because of it and the run goes on
/// to write its results.
static STOPPED_WHILE_POLLING: AtomicBool = AtomicBool::new(false);

impl Drop for Polling {
    fn drop(&mut self) {
        // The signal handler records the signal before it sets the stop flag,
        // and the phase ends on the flag: a phase that ends because of the
        // signal sees it recorded here. Without this, the thread that handles
        // signals could look only after the phase had ended, find no phase
        // polling and abort a run that was stopping as asked (seen: 2 of 6
        // `fslab io --direct` runs given SIGINT wrote no cell).
        if SIGNAL.load(Ordering::SeqCst) != 0 {
            STOPPED_WHILE_POLLING.store(true, Ordering::SeqCst);
        }
        POLLING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whether a first signal is in hand: some phase polls the stop flag now,
/// or one that did has ended because of the signal.
pub fn is_polling() -> bool {
    POLLING.load(Ordering::SeqCst) > 0 || STOPPED_WHILE_POLLING.load(Ordering::SeqCst)
}

/// How long an abort waits for the main thread to leave a step it must not
/// interrupt.
const ABORT_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// What an abort does once it holds the lock (or gave up waiting for it):
/// write the results so far and remove fslab's files. The argument says
/// whether the lock is held; without it, stdout may be what blocks the main
/// thread. Installed by `app` at start-up: this module sits below everything
/// an abort touches.
pub type AbortAction = Box<dyn Fn(bool) + Send + Sync>;

static ACTION: Mutex<Option<AbortAction>> = Mutex::new(None);

/// Installs what `abort()` does before exiting (replacing any earlier one).
pub fn set_abort_action(action: AbortAction) {
    *lock(&ACTION) = Some(action);
}

/// Ends the process now, on a signal: runs the installed abort action
/// (which writes the results published so far marked interrupted, detaches
/// fslab's mounts and removes its directories) and exits with `exit_code()`. The
/// serial lock is never released, so the main thread stops at its next
/// creation, removal or write and cannot end the process (or touch a result
/// file) before this is done.
pub fn abort() -> ! {
    // The main thread holds the lock only for short steps, but one of them
    // may block (stdout a stalled pipe, a mkfs that discards a large
    // device): an abort that waited for good would hang the process with no
    // signal left to end it. Past the limit it goes on without the lock;
    // result files are still replaced whole, whoever writes last.
    let locked = match serial_within(Some(ABORT_WAIT)) {
        Some(s) => {
            std::mem::forget(s);
            true
        }
        None => {
            eprintln!(
                "fslab: warning: the run did not reach a safe point in {} s; aborting anyway",
                ABORT_WAIT.as_secs()
            );
            *lock(&FORCED) = Some(std::thread::current().id());
            false
        }
    };
    if let Some(action) = lock(&ACTION).as_ref() {
        action(locked);
    }
    std::process::exit(exit_code().into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    #[test]
    fn the_serial_lock_is_reentrant_and_exclusive() {
        let a = serial();
        let b = serial();
        let entered = Arc::new(AtomicBool::new(false));
        let e2 = Arc::clone(&entered);
        let t = std::thread::spawn(move || {
            let _s = serial();
            e2.store(true, Ordering::SeqCst);
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        drop(b);
        std::thread::sleep(std::time::Duration::from_millis(50));
        // still held once by this thread
        assert!(!entered.load(Ordering::SeqCst));
        drop(a);
        t.join().unwrap();
        assert!(entered.load(Ordering::SeqCst));
    }
}
