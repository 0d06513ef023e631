//! `fslab probe`: probes on a fixed grid through named phases, a background
//! load during the `load` phase, and the context of every second beside them.

use super::{io_err, io_load_cell, refused, AppError};
use crate::errno::errno_name;
use crate::model::probe::{ContextPoint, ProbeData, ProbePhase, ProbeSample, Stall};
use crate::model::{self, Cell, CellPlan, CpuSummary, LatSummary, Report, TargetInfo};
use crate::plan::{Load, ProbeOp, ProbePlan};
use crate::stats::cpu::CpuTimes;
use crate::stats::Instant;
use crate::stats::LatStats;
use crate::target;
use crate::workload::probe::Prober;
use crate::workload::AlignedBuf;
use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

/// How long before a slot the probe stops sleeping and spins.
const SPIN: Duration = Duration::from_micros(250);

fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

/// The background load while it runs.
struct RunningLoad {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Result<(), String>>>,
    io: Option<JoinHandle<Result<Option<Cell>, String>>>,
    /// Set by the last stream writer to finish its share (fsync included):
    /// the load ended on its own, before the phase did.
    done_at: Arc<OnceLock<Instant>>,
}

/// Starts the stream writer: each thread writes its own file in `bs` blocks.
fn start_stream(
    work: &Path,
    size: u64,
    bs: u64,
    direct: bool,
    fsync_end: bool,
    threads: u32,
    written: &Arc<AtomicU64>,
) -> RunningLoad {
    let stop = Arc::new(AtomicBool::new(false));
    let per = size / threads as u64;
    let done_at = Arc::new(OnceLock::new());
    let running = Arc::new(AtomicU32::new(threads));
    let handles = (0..threads)
        .map(|i| {
            let (stop, written) = (Arc::clone(&stop), Arc::clone(written));
            let (done_at, running) = (Arc::clone(&done_at), Arc::clone(&running));
            let path = work.join(format!("load{i}.dat"));
            std::thread::spawn(move || {
                let f = OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .custom_flags(if direct { libc::O_DIRECT } else { 0 })
                    .open(&path)
                    .map_err(|e| format!("load: opening {}: {e}", path.display()))?;
                let mut buf = AlignedBuf::new(bs as usize, 4096);
                fastrand::Rng::with_seed(i as u64).fill(buf.as_mut_slice());
                let mut off = 0;
                while off + bs <= per && !stop.load(Ordering::Relaxed) {
                    f.write_all_at(buf.as_mut_slice(), off)
                        .map_err(|e| format!("load: writing {}: {e}", path.display()))?;
                    off += bs;
                    written.fetch_add(bs, Ordering::Relaxed);
                }
                if fsync_end && !stop.load(Ordering::Relaxed) {
                    f.sync_all()
                        .map_err(|e| format!("load: fsync {}: {e}", path.display()))?;
                }
                if running.fetch_sub(1, Ordering::AcqRel) == 1 && !stop.load(Ordering::Relaxed) {
                    let _ = done_at.set(Instant::now());
                }
                Ok(())
            })
        })
        .collect();
    RunningLoad {
        stop,
        threads: handles,
        io: None,
        done_at,
    }
}

impl RunningLoad {
    fn finish(self) -> (Vec<String>, Option<Cell>) {
        self.stop.store(true, Ordering::Relaxed);
        let mut errors: Vec<String> = self
            .threads
            .into_iter()
            .filter_map(|h| h.join().unwrap_or_else(|_| Err("load thread panicked".into())).err())
            .collect();
        let cell = match self.io.map(|h| h.join()) {
            Some(Ok(Ok(c))) => c,
            Some(Ok(Err(e))) => {
                errors.push(e);
                None
            }
            Some(Err(_)) => {
                errors.push("io load panicked".into());
                None
            }
            None => None,
        };
        (errors, cell)
    }
}

/// Reads one `Key:   123 kB` line of /proc/meminfo.
fn meminfo_kib(text: &str, key: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|r| {
            r.trim()
                .trim_start_matches(':')
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// `total=` of the `some` and `full` lines of /proc/pressure/io, in µs.
fn io_pressure() -> Option<(u64, u64)> {
    let t = std::fs::read_to_string("/proc/pressure/io").ok()?;
    let total = |kind: &str| {
        t.lines()
            .find(|l| l.starts_with(kind))
            .and_then(|l| l.split_whitespace().find_map(|f| f.strip_prefix("total=")))
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some((total("some")?, total("full").unwrap_or(0)))
}

/// Samples the context once per second of the grid until `stop`.
fn start_context(t0: Instant, written: Arc<AtomicU64>, stop: Arc<AtomicBool>) -> JoinHandle<Vec<ContextPoint>> {
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let (mut last_p, mut last_w) = (io_pressure(), 0);
        let mut s = 1u64;
        while !stop.load(Ordering::Relaxed) {
            let due = t0 + Duration::from_secs(s);
            let now = Instant::now();
            if due > now {
                std::thread::sleep((due - now).min(Duration::from_millis(100)));
                continue;
            }
            let mem = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
            let p = io_pressure();
            let w = written.load(Ordering::Relaxed);
            out.push(ContextPoint {
                t_s: s - 1,
                dirty_kib: meminfo_kib(&mem, "Dirty:"),
                writeback_kib: meminfo_kib(&mem, "Writeback:"),
                io_some_us: p.zip(last_p).map(|(a, b)| a.0.saturating_sub(b.0)),
                io_full_us: p.zip(last_p).map(|(a, b)| a.1.saturating_sub(b.1)),
                load_bytes: w - last_w,
            });
            (last_p, last_w) = (p, w);
            s += 1;
        }
        out
    })
}

/// Prepares the work directory's files and opens what the probe needs.
fn prepare_probe(plan: &ProbePlan, work: &Path, info: &TargetInfo, stop: &AtomicBool) -> Result<Prober, AppError> {
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
    Ok(Prober::new(plan.op, dir, file, plan.read_file_size, plan.seed))
}

/// Per-phase accumulation.
#[derive(Default)]
struct PhaseAcc {
    lat: LatStats,
    sched: LatStats,
    probes: u64,
    missed: u64,
    stalls: u64,
    errors: BTreeMap<String, u64>,
    load_start: u64,
    /// When this phase's stream load finished on its own (see RunningLoad).
    load_done: Option<Arc<OnceLock<Instant>>>,
}

/// `fslab probe`: one cell with a direction per phase and the probe data.
pub fn run_probe(mut plan: ProbePlan, stop: &AtomicBool) -> Result<Report, AppError> {
    let r = super::start_report("probe", &plan.outputs);
    let cell = probe_cell("probe", &plan, stop)?;
    super::single_cell_report(r, Some(cell), &mut plan.outputs)
}

/// Measures one probe plan.
pub fn probe_cell(cell_name: &str, plan: &ProbePlan, stop: &AtomicBool) -> Result<Cell, AppError> {
    let target::WorkDir {
        info,
        path: work,
        guard: _guard,
    } = target::work_dir(&plan.target)?;
    let mut prober = prepare_probe(plan, &work, &info, stop)?;

    // Wake up on time: the default 50 µs timer slack would show in every
    // latency measured from the schedule.
    // SAFETY: prctl with integer arguments only.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0) };
    let written = Arc::new(AtomicU64::new(0));
    let ctx_stop = Arc::new(AtomicBool::new(false));
    let cpu0 = CpuTimes::process();
    let start_unix_ns = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(ns)
        .unwrap_or(0);
    let t0 = Instant::now();
    let ctx = start_context(t0, Arc::clone(&written), Arc::clone(&ctx_stop));
    let mut bounds = Vec::new();
    let mut acc_end = Duration::ZERO;
    for p in &plan.phases {
        let start = acc_end;
        acc_end += p.duration;
        bounds.push((start, acc_end));
    }
    let total = acc_end;
    let mut accs: Vec<PhaseAcc> = plan.phases.iter().map(|_| PhaseAcc::default()).collect();
    let mut samples: Vec<ProbeSample> = Vec::new();
    let mut stalls: Vec<Stall> = Vec::new();
    let mut load: Option<RunningLoad> = None;
    let mut stopping: Vec<RunningLoad> = Vec::new();
    let mut load_errors = Vec::new();
    let mut halted = false;
    let mut load_cell = None;
    let mut cur_phase = usize::MAX;
    let mut k: u64 = 0;
    let mut last_good = 0u64;
    let mut in_stall = false;
    let mut interrupted = false;
    let mut probes = 0u64;
    let polling = crate::interrupt::polling();
    loop {
        if stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        let slot = plan.interval * k.min(u32::MAX as u64) as u32;
        let now = Instant::now();
        // phase changes happen at their boundary, even between slots
        let phase_now = bounds.iter().position(|&(_, e)| now.duration_since(t0) < e);
        let Some(ph) = phase_now else { break };
        if ph != cur_phase {
            if cur_phase != usize::MAX && plan.phases[cur_phase].load {
                if let Some(l) = load.take() {
                    // Signal only: joining here would block the grid while a
                    // writer finishes a write stuck in dirty throttling.
                    l.stop.store(true, Ordering::Relaxed);
                    stopping.push(l);
                }
            }
            cur_phase = ph;
            accs[ph].load_start = written.load(Ordering::Relaxed);
            if plan.phases[ph].load {
                load = match &plan.load {
                    Some(Load::StreamWrite {
                        size,
                        bs,
                        direct,
                        fsync_end,
                        threads,
                    }) => Some(start_stream(&work, *size, *bs, *direct, *fsync_end, *threads, &written)),
                    Some(Load::Io { plan: io, .. }) => {
                        let stop_io = Arc::new(AtomicBool::new(false));
                        let mut io = (**io).clone();
                        io.runtime = Some(plan.phases[ph].duration);
                        io.quiet = true;
                        let s2 = Arc::clone(&stop_io);
                        let h = std::thread::spawn(move || io_load_cell("load", &io, &s2).map_err(|e| e.to_string()));
                        Some(RunningLoad {
                            stop: stop_io,
                            threads: Vec::new(),
                            io: Some(h),
                            done_at: Arc::new(OnceLock::new()),
                        })
                    }
                    None => None,
                };
                accs[ph].load_done = load.as_ref().map(|l| Arc::clone(&l.done_at));
            }
        }
        if slot >= total || plan.count.is_some_and(|c| probes >= c) {
            // no slot left: wait for the phases to end (the load runs its time)
            let end = t0 + total;
            if end > now && plan.count.is_none() {
                std::thread::sleep((end - now).min(Duration::from_millis(50)));
                continue;
            }
            break;
        }
        let due = t0 + slot;
        let boundary = t0 + bounds[ph].1;
        if due > now {
            // Sleep to the slot (or the phase boundary if that comes first);
            // the last 250 µs are spun: a VM's wake-up lateness would
            // otherwise show in every latency measured from the schedule.
            let wait = due.min(boundary) - now;
            if wait > SPIN {
                std::thread::sleep((wait - SPIN).min(Duration::from_millis(200)));
            } else {
                while Instant::now() < due.min(boundary) {
                    std::hint::spin_loop();
                }
            }
            continue;
        }
        let start = Instant::now();
        let res = prober.probe();
        let end = Instant::now();
        probes += 1;
        let lat = ns(end - start);
        let sched_lat = ns(end.saturating_duration_since(due));
        let end_t = ns(end.saturating_duration_since(t0));
        // the first slot still ahead of the probe's end
        let next_k = end_t.div_ceil(ns(plan.interval)).max(k + 1);
        let missed = next_k - k - 1;
        let a = &mut accs[ph];
        a.probes += 1;
        a.missed += missed;
        match res {
            Ok(()) => {
                a.lat.record(lat);
                a.sched.record(sched_lat);
                // coordinated omission: each skipped slot waited until this end
                for j in k + 1..next_k {
                    a.sched.record(end_t.saturating_sub(ns(plan.interval) * j));
                }
            }
            Err(e) => *a.errors.entry(errno_name(e)).or_insert(0) += 1,
        }
        let slow = lat >= ns(plan.stall);
        if slow {
            a.stalls += 1;
            if in_stall {
                let s = stalls.last_mut().expect("an open stall");
                s.end_ns = end_t;
                s.max_ns = end_t - s.start_ns;
                s.min_ns = s.min_ns.max(lat);
                s.missed += missed;
            } else {
                stalls.push(Stall {
                    start_ns: last_good,
                    first_slot_ns: ns(slot),
                    end_ns: end_t,
                    max_ns: end_t - last_good,
                    min_ns: lat,
                    missed,
                    phase: plan.phases[ph].name.clone(),
                });
            }
        } else {
            last_good = end_t;
        }
        in_stall = slow;
        samples.push(ProbeSample {
            t_ns: ns(slot),
            phase: plan.phases[ph].name.clone(),
            lat_ns: lat,
            sched_lat_ns: sched_lat,
            missed_after: missed,
            errno: res.err().unwrap_or(0),
        });
        k = next_k;
        if res.is_err() && plan.stop_on_error {
            halted = true;
            break;
        }
    }
    drop(polling);
    let elapsed = ns(Instant::now() - t0);
    for l in load.take().into_iter().chain(stopping) {
        let (e, c) = l.finish();
        load_errors.extend(e);
        load_cell = c.or(load_cell);
    }
    ctx_stop.store(true, Ordering::Relaxed);
    let context = ctx.join().unwrap_or_default();
    let cpu = CpuTimes::process() - cpu0;
    let written_total = written.load(Ordering::Relaxed);
    let dir = match plan.op {
        ProbeOp::Create => crate::stats::OpKind::Create,
        ProbeOp::Stat => crate::stats::OpKind::Stat,
        ProbeOp::Mkdir => crate::stats::OpKind::NbMkdir,
        ProbeOp::AppendFsync => crate::stats::OpKind::Fsync,
        ProbeOp::Read => crate::stats::OpKind::Read,
    };
    let mut phases = Vec::new();
    let mut directions = Vec::new();
    let mut early_loads = Vec::new();
    for (i, (spec, a)) in plan.phases.iter().zip(&accs).enumerate() {
        let (s, e) = bounds[i];
        // a count-limited run ends before its nominal phase does
        let e = e.min(Duration::from_nanos(elapsed)).max(s);
        let load_end = accs.get(i + 1).map_or(written_total, |n| n.load_start);
        let load_bytes = load_end.saturating_sub(a.load_start);
        // a stream that wrote its SIZE before the phase ended: its rate is
        // over the time it wrote, and the phase says when it stopped
        let load_end_at = a
            .load_done
            .as_ref()
            .and_then(|d| d.get())
            .map(|t| t.saturating_duration_since(t0))
            .filter(|&t| t < e);
        let secs = (load_end_at.unwrap_or(e).max(s) - s).as_secs_f64();
        let mut st = crate::stats::OpStats::new(&[ns(plan.stall)], true, false);
        st.lat = a.lat.clone();
        st.sched_lat = Some(a.sched.clone());
        let mut d = model::DirResult::of(dir, &st, ns(e - s));
        d.phase = Some(spec.name.clone());
        d.elapsed_ns = Some(ns(e - s));
        d.errors = a.errors.clone();
        directions.push(d);
        phases.push(ProbePhase {
            name: spec.name.clone(),
            start_ns: ns(s),
            end_ns: ns(e),
            probes: a.probes,
            missed: a.missed,
            stalls: a.stalls,
            lat: LatSummary::of(&a.lat),
            sched_lat: LatSummary::of(&a.sched),
            errors: a.errors.clone(),
            load_bytes,
            load_mb_s: if secs > 0.0 {
                load_bytes as f64 / secs / 1e6
            } else {
                0.0
            },
            load_end_ns: load_end_at.map(ns),
        });
        if let Some(t) = load_end_at {
            early_loads.push(format!(
                "the load ({}) wrote its size {:.2} s into the {:.0} s {} phase: probes after that ran without it \
                 (load MB/s is over the time it wrote; a larger size keeps it running)",
                plan.load_spec.as_deref().unwrap_or("load"),
                t.saturating_sub(s).as_secs_f64(),
                (e - s).as_secs_f64(),
                spec.name
            ));
        }
    }
    let mut warnings = early_loads;
    if halted {
        warnings.push("stopped at the first failed probe (--on-error stop)".into());
    }
    if let Some(c) = &load_cell {
        for d in &c.directions {
            warnings.push(format!(
                "io load: {} {:.0} IOPS {:.1} MB/s over {:.1} s",
                d.dir.name(),
                d.iops,
                d.mb_s,
                c.elapsed_ns as f64 / 1e9
            ));
        }
    }
    let cell = Cell {
        name: cell_name.into(),
        plan: CellPlan::Probe(plan.clone()),
        target: info,
        warnings,
        interrupted,
        elapsed_ns: elapsed,
        directions,
        cpu: CpuSummary {
            user_ns: cpu.user_ns,
            sys_ns: cpu.sys_ns,
            percent_of_core: cpu.percent_of_core(elapsed),
            jobs: Vec::new(),
        },
        series: Vec::new(),
        job_errors: load_errors,
        inflight_depth: Vec::new(),
        probe: Some(ProbeData {
            op: serde_json::to_value(plan.op)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            interval_ns: ns(plan.interval),
            stall_ns: ns(plan.stall),
            start_unix_ns,
            phases,
            samples,
            stalls,
            context,
            load: plan.load_spec.clone(),
        }),

        lab: None,
        error: None,
    };
    // measured: an abort while the work directory goes must not lose it
    crate::app::abort::publish_cell(&cell);
    Ok(cell)
}
