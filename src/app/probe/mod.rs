//! `fslab probe`: probes on a fixed grid through named phases, a background
//! load during the `load` phases, and the context of every second beside
//! them.
//!
//! A client of the runner: the probe is group 0 of one run, one worker
//! paced on the probe's grid (`runner::Pacing::probe`: missed slots skipped
//! and counted, latency from the slot, every probe traced); the load is
//! group 1, run in the windows of the `load` phases and stopped with the
//! probe. Under MPI every rank probes its own work directory; phases and
//! directions count every rank's probes, while the samples, stalls and
//! context are rank 0's own (one grid, one machine's page cache).

mod summary;

use summary::{probe_summary, Measured};

use super::pipeline::{run_single, CellWork};
use super::{io_err, refused, AppError};
use crate::engine::{Engine, SyncEngine};
use crate::model::probe::ContextPoint;
use crate::model::TargetInfo;
use crate::model::{Cell, Report};
use crate::plan::{IoPlan, Load, Presentation, ProbeOp, ProbePlan};
use crate::runner::{self, Counter, Group, Pacing, Progress, RunConfig, RunOut};
use crate::stats::Instant;
use crate::target::{self, Guard, Prepared};
use crate::workload::probe::{ProbeWorkload, StreamWrite};
use crate::workload::{AlignedBuf, Workload};
use std::fs::OpenOptions;
use std::ops::ControlFlow;
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

type Boxed = Box<dyn Workload>;

/// `total=` of the `some` and `full` lines of /proc/pressure/io, in µs
/// (None without PSI).
fn io_pressure() -> Option<(u64, u64)> {
    let t = std::fs::read_to_string("/proc/pressure/io").ok()?;
    Some(crate::telemetry::procstat::parse_psi(&t))
}

/// Samples the context once per second of the run, from the runner's
/// monitor (the calling thread).
struct ContextSampler {
    /// The load's workers write a stream: their bytes are the load's progress.
    stream: bool,
    next_s: u64,
    last: Option<(Option<(u64, u64)>, u64)>,
    points: Vec<ContextPoint>,
}

impl ContextSampler {
    fn tick(&mut self, t0: Instant, counters: &[&[Counter]]) {
        let written = || -> u64 {
            match counters.get(1).filter(|_| self.stream) {
                Some(c) => c.iter().map(|c| c.bytes.load(Ordering::Relaxed)).sum(),
                None => 0,
            }
        };
        let (last_p, last_w) = *self.last.get_or_insert_with(|| (io_pressure(), 0));
        if Instant::now() < t0 + Duration::from_secs(self.next_s) {
            return;
        }
        let (dirty_kib, writeback_kib) =
            crate::telemetry::procstat::parse_meminfo(&std::fs::read_to_string("/proc/meminfo").unwrap_or_default());
        let p = io_pressure();
        let w = written();
        self.points.push(ContextPoint {
            t_s: self.next_s - 1,
            dirty_kib,
            writeback_kib,
            io_some_us: p.zip(last_p).map(|(a, b)| a.0.saturating_sub(b.0)),
            io_full_us: p.zip(last_p).map(|(a, b)| a.1.saturating_sub(b.1)),
            load_bytes: w.saturating_sub(last_w),
        });
        self.last = Some((p, w));
        self.next_s += 1;
    }
}

/// The phases' spans, from the grid's start.
fn phase_bounds(plan: &ProbePlan) -> Vec<(Duration, Duration)> {
    let mut end = Duration::ZERO;
    plan.phases
        .iter()
        .map(|p| {
            let start = end;
            end += p.duration;
            (start, end)
        })
        .collect()
}

/// The background load, ready to run as the run's second group.
enum LoadSetup {
    Stream {
        per: u64,
        bs: u64,
        direct: bool,
        fsync_end: bool,
        threads: u32,
        time_based: bool,
    },
    /// An io load: its plan and its own target (work directory, laid-out files).
    Io(Box<IoPlan>, Box<Prepared>),
}

/// Lays out an io load's files (untimed, before the grid starts).
fn prepare_load(plan: &ProbePlan, stop: &AtomicBool) -> Result<Option<LoadSetup>, AppError> {
    Ok(match &plan.load {
        None => None,
        Some(Load::StreamWrite {
            size,
            bs,
            direct,
            fsync_end,
            threads,
            time_based,
        }) => {
            // a time-based stream's cap is a guard: never more than half
            // of what the target has free, so the load cannot fill it
            let cap = match rustix::fs::statvfs(&plan.target) {
                Ok(st) if *time_based => (*size).min(st.f_bavail.saturating_mul(st.f_frsize) / 2),
                _ => *size,
            };
            Some(LoadSetup::Stream {
                per: cap / *threads as u64,
                bs: *bs,
                direct: *direct,
                fsync_end: *fsync_end,
                threads: *threads,
                time_based: *time_based,
            })
        }
        Some(Load::Io { plan: io, .. }) => {
            let prepared = target::ranks::agree(target::prepare(io, stop, &|_, _| {}))?;
            Some(LoadSetup::Io(io.clone(), Box::new(prepared)))
        }
    })
}

/// The load group's config.
fn load_config(load: &LoadSetup) -> RunConfig {
    match load {
        LoadSetup::Stream { threads, .. } => RunConfig {
            jobs: *threads as usize,
            runtime: None,
            ramp: Duration::ZERO,
            rate: None,
            bucket_ns: Vec::new(),
            depth: 1,
            batch: 1,
            stop_on_error: false,
            stonewall: None,
            ..Default::default()
        },
        LoadSetup::Io(io, _) => super::io::io_config(io, io.jobs as usize, io.limits.stonewall),
    }
}

/// What the run gives besides the probe's `RunOut`.
struct Beside {
    load: Option<RunOut>,
    start_unix_ns: u64,
    context: Vec<ContextPoint>,
}

/// A probe plan as the pipeline runs it: one timed run (the grid goes on
/// across the probe's phases), with the load beside the probe.
pub struct ProbeCell<'a> {
    name: &'a str,
    plan: &'a ProbePlan,
    /// No progress bars (`--quiet`, or the lab's).
    quiet: bool,
    info: TargetInfo,
    work: PathBuf,
    /// Taken by the probe's one worker.
    prober: Mutex<Option<ProbeWorkload>>,
    load: Option<LoadSetup>,
    beside: Mutex<Option<Beside>>,
    out: Option<RunOut>,
}

impl<'a> ProbeCell<'a> {
    /// The cell `name` of `plan`, with progress bars unless `quiet`.
    pub fn new(name: &'a str, plan: &'a ProbePlan, quiet: bool) -> Self {
        ProbeCell {
            name,
            plan,
            quiet,
            info: TargetInfo::default(),
            work: PathBuf::new(),
            prober: Mutex::new(None),
            load: None,
            beside: Mutex::new(None),
            out: None,
        }
    }

    /// Worker j of the load group.
    fn load_worker(&self, j: usize) -> Result<(Box<dyn Engine>, Boxed), String> {
        match &self.load {
            Some(LoadSetup::Stream {
                per,
                bs,
                direct,
                fsync_end,
                time_based,
                ..
            }) => {
                let path = self.work.join(format!("load{j}.dat"));
                let sw = StreamWrite::open(&path, j as u32, *per, *bs, *direct, *fsync_end, *time_based)?;
                Ok((Box::new(SyncEngine), Box::new(sw)))
            }
            Some(LoadSetup::Io(io, prepared)) => {
                let (e, wl) = super::io::io_worker(io, prepared, j as u32, &format!("io load: job {j}"))?;
                Ok((e, Box::new(wl) as Boxed))
            }
            None => Err("no load".into()),
        }
    }
}

impl CellWork for ProbeCell<'_> {
    type Worker = Boxed;

    fn name(&self) -> &str {
        self.name
    }

    fn prepare(&mut self, stop: &AtomicBool) -> Result<Guard, AppError> {
        let wd = target::work_dir(&self.plan.target)?;
        let prober = target::ranks::agree(prepare_probe(self.plan, &wd.path, &wd.info, stop))?;
        *self.prober.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(prober);
        self.load = prepare_load(self.plan, stop)?;
        (self.info, self.work) = (wd.info, wd.path);
        Ok(wd.guard)
    }

    fn config(&self, _phase: usize) -> RunConfig {
        RunConfig {
            jobs: 1,
            runtime: None,
            ramp: Duration::ZERO,
            rate: None,
            bucket_ns: vec![ns(self.plan.stall)],
            depth: 1,
            batch: 1,
            stop_on_error: self.plan.stop_on_error,
            stonewall: None,
            ..Default::default()
        }
    }

    fn progress(&self, _phase: usize) -> Progress {
        Progress::new(!self.quiet, self.name.to_string(), None)
    }

    fn worker(&self, _phase: usize, _job: usize) -> Result<(Box<dyn Engine>, Boxed), String> {
        let wl = self.prober.lock().unwrap_or_else(|e| e.into_inner()).take();
        let wl = wl.ok_or("probe: one worker only")?;
        Ok((Box::new(SyncEngine), Box::new(wl)))
    }

    /// The probe (group 0, on its grid) and the load (group 1, in the
    /// `load` phases) in one run of the runner.
    fn run_phase(&self, phase: usize, cfg: &RunConfig, stop: &AtomicBool, progress: &Progress) -> RunOut {
        let plan = self.plan;
        let bounds = phase_bounds(plan);
        let total = bounds.last().map_or(Duration::ZERO, |b| b.1);
        let make_probe = |j: usize| self.worker(phase, j);
        let make_load = |j: usize| self.load_worker(j);
        let mut groups = vec![Group {
            cfg: cfg.clone(),
            make: &make_probe as &runner::MakeFn<Boxed>,
            pacing: Some(Pacing::probe(plan.interval, total, plan.count)),
            windows: Vec::new(),
            // the load ends with the probe
            ends_run: true,
        }];
        if let Some(l) = &self.load {
            let windows = plan.phases.iter().zip(&bounds).filter(|(p, _)| p.load);
            groups.push(Group {
                cfg: load_config(l),
                make: &make_load,
                pacing: None,
                windows: windows.map(|(_, &b)| b).collect(),
                ends_run: false,
            });
        }
        let mut sampler = ContextSampler {
            stream: matches!(self.load, Some(LoadSetup::Stream { .. })),
            next_s: 1,
            last: None,
            points: Vec::new(),
        };
        let mut monitor = |t0: Instant, c: &[&[Counter]]| sampler.tick(t0, c);
        let out = runner::run_groups(&groups, stop, progress, Some(&mut monitor));
        let mut it = out.groups.into_iter();
        let probe = it.next().expect("the probe's group");
        *self.beside.lock().unwrap_or_else(|e| e.into_inner()) = Some(Beside {
            load: it.next(),
            start_unix_ns: out.start_unix_ns,
            context: sampler.points,
        });
        probe
    }

    fn end_phase(&mut self, _phase: usize, out: RunOut) -> ControlFlow<()> {
        self.out = Some(out);
        ControlFlow::Continue(())
    }

    fn summarise(&mut self) -> Vec<Cell> {
        let b = self.beside.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        let b = b.expect("the probe ran");
        let m = Measured {
            probe: self.out.take().expect("the probe ran"),
            load: b.load,
            start_unix_ns: b.start_unix_ns,
            context: b.context,
        };
        if let Some(LoadSetup::Io(_, prepared)) = self.load.take() {
            prepared.guard.finish();
        }
        vec![probe_summary(self.name, self.plan, self.info.clone(), m)]
    }
}

/// `fslab probe`: one cell with a direction per phase and the probe data.
pub fn run_probe(plan: ProbePlan, presentation: Presentation, stop: &AtomicBool) -> Result<Report, AppError> {
    run_single(
        "probe",
        presentation.outputs,
        ProbeCell::new("probe", &plan, presentation.quiet),
        stop,
    )
}

/// Prepares the work directory's files and opens what the probe needs.
fn prepare_probe(
    plan: &ProbePlan,
    work: &Path,
    info: &TargetInfo,
    stop: &AtomicBool,
) -> Result<ProbeWorkload, AppError> {
    let dir: OwnedFd = std::fs::File::open(work)
        .map_err(io_err(format!("opening {}", work.display())))?
        .into();
    let mut file = None;
    match plan.op {
        ProbeOp::Stat => {
            std::fs::write(work.join("stat-target"), b"x").map_err(io_err("creating the stat target".into()))?;
        }
        ProbeOp::AppendFsync => {
            let f = OpenOptions::new()
                .append(true)
                .create(true)
                .open(work.join("append.dat"))
                .map_err(io_err("creating the append file".into()))?;
            file = Some(f.into());
        }
        ProbeOp::Read => {
            let p = work.join("read.dat");
            target::lay_out_file(&p, plan.read_file_size, plan.seed, stop, &mut |_| {})?;
            let f = match OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(&p) {
                Ok(f) => f,
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    return Err(refused(
                        "--op",
                        format!(
                            "read probes O_DIRECT reads, which {} ({}) refuses",
                            plan.target.display(),
                            info.fs_type
                        ),
                    ))
                }
                Err(e) => return Err(io_err(format!("opening {}", p.display()))(e)),
            };
            // A misaligned direct read must fail where O_DIRECT is real.
            let mut b = AlignedBuf::new(8192, 4096);
            if rustix::io::pread(&f, &mut b.as_mut_slice()[..4096], 1).is_ok() {
                return Err(refused(
                    "--op",
                    format!(
                        "read probes O_DIRECT reads, and {} ({}) does not honour O_DIRECT: it would measure the page cache",
                        plan.target.display(),
                        info.fs_type
                    ),
                ));
            }
            file = Some(f.into());
        }
        ProbeOp::Create | ProbeOp::Mkdir => {}
    }
    Ok(ProbeWorkload::new(plan.op, dir, file, plan.read_file_size, plan.seed))
}
