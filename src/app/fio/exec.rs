//! fio's exec engine (engines/exec.c): the job's first operation starts
//! its program; each later one sleeps 50 ms and, once the job's runtime is
//! over, sends the program SIGTERM and sleeps `grace_time`; at the end the
//! program is killed (SIGKILL). fslab ends it so whatever ends the job (its
//! runtime, a stop, Ctrl-C, an error): SIGTERM, up to grace_time for it to
//! exit, SIGKILL, then reaps it (fio leaves it a zombie until fio exits).
//! Only the process fslab started is signalled, by its pid, while it is
//! fslab's unreaped child (so the pid is never another process's). Should
//! fslab itself die, the kernel kills the program (PR_SET_PDEATHSIG).
//!
//! std_redirect's files are opened O_NOFOLLOW, created with O_EXCL (the
//! plan refused existing ones unless --force-overwrite, which truncates a
//! regular file as fio does); a file this run created is shared by the
//! job's clones (opened again, appending), never replaced.

use crate::engine::Engine;
use crate::plan::fio::engines::ExecPlan;
use crate::stats::{Instant, OpKind};
use crate::workload::{NextOp, Step, Workload};
use rustix::process::{kill_process, Pid, Signal};
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// fio's pause in each operation and after it (o->thinktime = 50000 us).
const TICK: Duration = Duration::from_millis(50);

/// The redirect files this process created: a later clone appends to them.
static CREATED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// One exec clone.
pub struct ExecJob {
    plan: ExecPlan,
    /// The redirect files, open until the program starts.
    out: Option<[File; 2]>,
    child: Option<Child>,
    started: Option<std::time::Instant>,
    /// SIGTERM was sent.
    termed: bool,
    due: Option<Instant>,
    failed: Option<String>,
}

/// Opens one redirect file: created new (O_EXCL), or, with --force-overwrite,
/// a regular file truncated; one this run created is appended to. Never
/// through a symlink.
fn open_redirect(p: &Path, overwrite: bool) -> std::io::Result<File> {
    let mut created = CREATED.lock().unwrap_or_else(|e| e.into_inner());
    let mut o = std::fs::OpenOptions::new();
    // appending: clones sharing the file never write over each other
    o.write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_APPEND)
        .mode(0o644);
    let ours = created.iter().any(|c| c == p);
    if !ours && overwrite {
        o.create(true).truncate(true);
    } else if !ours {
        o.create_new(true);
    }
    let f = o.open(p)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if !ours {
        created.push(p.to_path_buf());
    }
    Ok(f)
}

impl ExecJob {
    pub fn new(plan: &ExecPlan) -> Result<Self, String> {
        let out = match &plan.redirect {
            None => None,
            Some([o, e]) => {
                let open = |p: &Path| open_redirect(p, plan.overwrite).map_err(|err| format!("{}: {err}", p.display()));
                Some([open(o)?, open(e)?])
            }
        };
        Ok(ExecJob {
            plan: plan.clone(),
            out,
            child: None,
            started: None,
            termed: false,
            due: None,
            failed: None,
        })
    }

    /// Starts the program, as fio's exec_background (argv split at
    /// spaces, stdout and stderr to the redirect files).
    fn spawn(&mut self) -> std::io::Result<Child> {
        let mut c = Command::new(&self.plan.program);
        c.arg0(&self.plan.argv[0]).args(&self.plan.argv[1..]);
        if let Some([o, e]) = self.out.take() {
            c.stdout(Stdio::from(o)).stderr(Stdio::from(e));
        }
        // SAFETY: prctl is async-signal-safe and the closure allocates
        // nothing. PR_SET_PDEATHSIG has the kernel kill the program when
        // the thread that started it (this job's worker, which ends it
        // before it exits) is gone: a SIGKILLed fslab leaves none running.
        unsafe {
            c.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        c.spawn()
    }

    /// SIGTERM to the program, if it still runs (it is our unreaped child).
    fn term(&mut self) {
        self.termed = true;
        if let Some(c) = self.child.as_mut() {
            term(c);
        }
    }
}

/// SIGTERM to `c` unless it has ended (then it is reaped, and its pid no
/// longer ours to signal).
fn term(c: &mut Child) {
    if matches!(c.try_wait(), Ok(None)) {
        if let Some(pid) = Pid::from_raw(c.id() as i32) {
            let _ = kill_process(pid, Signal::TERM);
        }
    }
}

impl Workload for ExecJob {
    fn next_op(&mut self, _slot: usize) -> Option<NextOp> {
        None
    }

    fn queues(&self) -> bool {
        false
    }

    fn next_due(&mut self) -> Option<Instant> {
        self.due
    }

    fn error(&self) -> Option<String> {
        self.failed.clone()
    }

    fn step(&mut self, _e: &mut dyn Engine) -> Option<Step> {
        if self.failed.is_some() {
            return None;
        }
        let r = match self.started {
            None => match self.spawn() {
                Ok(c) => {
                    self.child = Some(c);
                    self.started = Some(std::time::Instant::now());
                    0
                }
                Err(e) => {
                    let p = self.plan.program.display();
                    self.failed = Some(format!("exec {p}: {e}"));
                    -(e.raw_os_error().unwrap_or(libc::EIO) as i64)
                }
            },
            Some(t) => {
                std::thread::sleep(TICK);
                if t.elapsed() > self.plan.runtime {
                    // fio: SIGTERM, then grace_time for the program to stop
                    self.term();
                    std::thread::sleep(Duration::from_secs(self.plan.grace_s as u64));
                }
                0
            }
        };
        self.due = Some(Instant::now() + TICK);
        Some(Step::new(OpKind::Read, r))
    }
}

impl Drop for ExecJob {
    /// Ends the program as fio does (SIGTERM, grace_time, SIGKILL), without
    /// waiting the whole grace for a program already gone, and reaps it.
    fn drop(&mut self) {
        let Some(mut c) = self.child.take() else {
            return;
        };
        if !self.termed {
            term(&mut c);
        }
        let until = std::time::Instant::now() + Duration::from_secs(self.plan.grace_s as u64);
        while matches!(c.try_wait(), Ok(None)) && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        // SIGKILL only if not reaped (std never signals a reaped pid)
        let _ = c.kill();
        let _ = c.wait();
    }
}
