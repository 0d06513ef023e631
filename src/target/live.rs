//! What fslab has made and not yet removed: work directories and scratch
//! mounts, block-queue settings it changed and has not yet put back, and
//! the guests' QEMU processes it started.
//! Guards undo their own on every normal path out; this list is for the one
//! path where no guard runs, a signal that ends the process at once
//! (`crate::interrupt::abort`, holding the lock every guard takes): it
//! detaches the mounts and removes the directories before exiting, so even
//! an impatient user is left with nothing of fslab's.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

#[derive(Debug, Clone, PartialEq)]
enum Live {
    Dir(PathBuf),
    Mount(PathBuf),
    /// A queue attribute file and its value before fslab set it.
    Queue(PathBuf, String),
    /// A child process fslab started and waits for (a guest's QEMU): killed
    /// and reaped before its work directory goes.
    Child(u32),
}

static LIVE: Mutex<Vec<Live>> = Mutex::new(Vec::new());

fn list() -> std::sync::MutexGuard<'static, Vec<Live>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn add_dir(p: &Path) {
    list().push(Live::Dir(p.to_path_buf()));
}

pub fn remove_dir(p: &Path) {
    list().retain(|l| *l != Live::Dir(p.to_path_buf()));
}

pub fn add_mount(p: &Path) {
    list().push(Live::Mount(p.to_path_buf()));
}

pub fn remove_mount(p: &Path) {
    list().retain(|l| *l != Live::Mount(p.to_path_buf()));
}

pub fn add_child(pid: u32) {
    list().push(Live::Child(pid));
}

pub fn remove_child(pid: u32) {
    list().retain(|l| *l != Live::Child(pid));
}

pub fn add_queue(attr: &Path, old: &str) {
    list().push(Live::Queue(attr.to_path_buf(), old.to_string()));
}

pub fn remove_queue(attr: &Path) {
    list().retain(|l| !matches!(l, Live::Queue(a, _) if a == attr));
}

/// Set once a second signal removes everything at once: the directories
/// then vanish by fslab's own hand, which is nothing to warn about.
static ABORTING: AtomicBool = AtomicBool::new(false);

pub fn set_aborting() {
    ABORTING.store(true, Ordering::Relaxed);
}

pub fn aborting() -> bool {
    ABORTING.load(Ordering::Relaxed)
}

/// Detaches every live mount (lazily: it must not wait for busy files) and
/// removes every live work directory. Loop devices go by themselves: they
/// are autoclear and fslab's descriptors close when the process exits.
pub fn abort_cleanup() {
    set_aborting();
    let live = std::mem::take(&mut *list());
    // before anything is detached: a directory on a scratch mount is gone
    // once the abort detaches it, which is no news
    let mut vanished: Vec<&PathBuf> = Vec::new();
    for l in live.iter() {
        if let Live::Dir(d) = l {
            // said as the guards say it: an abort must not hide that the
            // target went away under the run (one warning per tree)
            if d.symlink_metadata().is_err() && !vanished.iter().any(|v| d.starts_with(v)) {
                eprintln!(
                    "fslab: warning: the work directory {} vanished during the run (was the target unmounted?)",
                    d.display()
                );
                vanished.push(d);
            }
        }
    }
    // fslab's own children (by the pid it started), before their files go
    for l in live.iter() {
        if let Live::Child(pid) = l {
            if let Some(p) = rustix::process::Pid::from_raw(*pid as i32) {
                let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
                let _ = rustix::process::waitpid(Some(p), rustix::process::WaitOptions::empty());
            }
        }
    }
    // in the order they were saved: the scheduler before nr_requests
    for l in live.iter() {
        if let Live::Queue(attr, old) = l {
            let _ = std::fs::write(attr, old);
        }
    }
    for l in live.iter().rev() {
        if let Live::Mount(m) = l {
            let _ = rustix::mount::unmount(m, rustix::mount::UnmountFlags::DETACH);
        }
    }
    // A mount made a moment ago may not be registered yet; its record in the
    // directory's marker is written before mounting. Only recorded mounts go:
    // anything else mounted in there is not fslab's, and stops the removal.
    for l in live.iter().rev() {
        if let Live::Dir(d) = l {
            super::marker::detach_recorded(d);
        }
    }
    for l in live.iter().rev() {
        if let Live::Dir(d) = l {
            // Not the guards' ownership test: that compares the marker with
            // the descriptor this process holds, and an abort runs on the
            // signal thread, whose file table (unshared, see main.rs) holds
            // none of the main thread's descriptors. The directory is in
            // this list because this process made it; its marker must still
            // be there.
            if !d.join(super::MARKER).exists() {
                continue;
            }
            // workers may still be creating files in it until they see
            // the stop flag: try again for a moment
            let mut last = Ok(());
            for _ in 0..50 {
                last = super::rmtree::remove_tree(d);
                if last.is_ok() || !d.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            if let Err(e) = last {
                if d.exists() {
                    eprintln!(
                        "fslab: warning: could not remove {}: {e}; left behind, `fslab cleanup {}` removes it later",
                        d.display(),
                        d.parent().unwrap_or(Path::new(".")).display()
                    );
                }
            }
        }
    }
}
