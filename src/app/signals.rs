//! SIGINT and SIGTERM: the first asks the run to stop, a second (or a first
//! while nothing polls the stop flag) aborts (`interrupt::abort`).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The first SIGINT or SIGTERM asks the run to stop (it ends its cell,
/// removes what it made and writes the results so far); a second one, or a
/// first one while no phase polls the stop flag (validation, mkfs, mount),
/// aborts at once: the results so far are written, marked interrupted,
/// fslab's mounts detached and its directories removed (`interrupt::abort`,
/// `app::abort`).
pub(crate) fn handle_signals(stop: &Arc<AtomicBool>) {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for sig in [SIGINT, SIGTERM] {
        // which signal it was (the exit code), recorded before the flag is
        // set: signal-hook runs a signal's actions in registration order
        let _ = signal_hook::flag::register_usize(sig, crate::interrupt::signal_record(), sig as usize);
        let _ = signal_hook::flag::register(sig, Arc::clone(stop));
    }
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    let (ready, wait) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // This thread gets a file table of its own, so that the main thread
        // is again the only user of the process's: the kernel then skips the
        // file reference counting it does on every fd syscall of a process
        // whose threads share one (~2 % of a 4 KiB page-cache read, ~2 % of
        // a bonnie++ stat). It keeps its signal pipe and the standard
        // streams; the abort opens what it writes and works on paths.
        // SAFETY: unshare(CLONE_FILES) affects this thread's file table only.
        unsafe { libc::unshare(libc::CLONE_FILES) };
        let _ = ready.send(());
        for (n, _) in signals.forever().enumerate() {
            if n >= 1 || !crate::interrupt::is_polling() {
                eprintln!("fslab: aborted: writing the results so far, removing fslab's files and scratch filesystems");
                crate::interrupt::abort();
            }
        }
    });
    // before the main thread opens anything the copy would keep open
    let _ = wait.recv();
}
