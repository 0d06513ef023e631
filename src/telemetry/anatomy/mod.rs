//! `--anatomy` and `--explain-slow`: where each operation's time went,
//! measured by BPF programs on tracepoints (`bpf/anatomy.bpf.c`).
//!
//! Aggregation is in the kernel: the programs keep per-thread counters in a
//! mapped array that each worker reads around its operations, device
//! histograms in a hash map read once per cell, and only rare events
//! (journal commits, log forces) cross to user space as records. Without
//! root, BPF, tracefs or a tracepoint layout fslab knows, a session is not
//! opened (or opened without the missing part) and the cell says what
//! could not be observed, in one line each, and still measures.

mod classify;
mod collect;
mod formats;
mod kernel;
mod thread;

use crate::stats::anatomy::{ThreadTrace, Tracer};
use crate::stats::Instant;
use aya::maps::{HashMap as BpfHash, MapData, StackTraceMap};
use aya::programs::{BtfTracePoint, TracePoint};
use classify::Resolved;
use kernel::{Mapping, LAZY_LEN, MAX_SLOTS, SLOTS_LEN, WINDOWS_LEN};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use thread::Thread;

/// The object built by bpf/build.sh from bpf/anatomy.bpf.c.
static OBJECT: &[u8] = include_bytes!("anatomy.bpf.o");

/// What a session traces: per-layer histograms, slow operations, or both.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Operations at or over this many ns are explained.
    pub explain_slow_ns: Option<u64>,
    /// `--anatomy`: the layers, the LBA map and the tracing's own cost.
    /// Without it (`--explain-slow` alone) `block_bio_queue` is not traced
    /// and the kernel keeps no run statistics: each costs every task on
    /// the machine something per event, for figures nobody asked for.
    pub layers: bool,
}

impl Options {
    /// `--explain-slow` alone: the sleeps a slow operation's stacks are
    /// taken for (None: every sleep's, as `--anatomy` classifies them all).
    /// A hundredth of the threshold, at most 0.5 ms: every sleep a report
    /// lists (1 ms and over) has its stack, and an operation made only of
    /// shorter sleeps needs more than a hundred of them to be slow.
    fn lazy_ns(&self) -> Option<u64> {
        let t = self.explain_slow_ns.filter(|_| !self.layers)?;
        Some((t / 100).clamp(1, LAZY_MAX_NS))
    }
}

/// The longest sleep `--explain-slow` alone may leave without its stack.
const LAZY_MAX_NS: u64 = 500_000;

/// The tracepoints, by program: (program, category, event, what is lost without it).
const PROGRAMS: &[(&str, &str, &str, &str)] = &[
    ("on_switch", "sched", "sched_switch", "off-CPU time"),
    ("on_waking", "sched", "sched_waking", "who woke a sleep"),
    ("on_insert", "block", "block_rq_insert", "block queue time"),
    ("on_issue", "block", "block_rq_issue", "block device time"),
    ("on_complete", "block", "block_rq_complete", "block device time"),
    ("on_bio_queue", "block", "block_bio_queue", "the LBA map"),
    ("on_jbd2_start", "jbd2", "jbd2_start_commit", "jbd2 commits"),
    ("on_jbd2_locking", "jbd2", "jbd2_commit_locking", "jbd2 commits"),
    ("on_jbd2_flushing", "jbd2", "jbd2_commit_flushing", "jbd2 commits"),
    ("on_jbd2_logging", "jbd2", "jbd2_commit_logging", "jbd2 commits"),
    ("on_jbd2_end", "jbd2", "jbd2_end_commit", "jbd2 commits"),
    ("on_jbd2_stats", "jbd2", "jbd2_run_stats", "jbd2 commit sizes"),
    ("on_xfs_force", "xfs", "xfs_log_force", "XFS log forces"),
];

/// The BTF-typed tracepoint programs, each with the tracepoint program it
/// replaces: their arguments are the kernel's objects, so no record is
/// built, another process's event is left after a field load, and a
/// sleeper's stack can be taken when it comes back (lazily, only for a
/// long sleep). Attached where the kernel takes them, one by one.
const BTF_PROGRAMS: [(&str, &str, &str); 5] = [
    ("on_switch_btf", "on_switch", "sched_switch"),
    ("on_waking_btf", "on_waking", "sched_waking"),
    ("on_insert_btf", "on_insert", "block_rq_insert"),
    ("on_issue_btf", "on_issue", "block_rq_issue"),
    ("on_complete_btf", "on_complete", "block_rq_complete"),
];

pub(crate) struct Inner {
    /// Keeps the programs attached; its `tids` map registers threads.
    tids: Mutex<aya::maps::Array<MapData, kernel::TidSlot>>,
    /// Worker threads of this cell that could not be registered.
    untraced: std::sync::atomic::AtomicU64,
    slots: Mapping,
    windows: Mapping,
    /// The lazily taken stacks (None: every sleep's stack is in `stacks`).
    lazy: Option<Mapping>,
    stacks: Mutex<StackTraceMap<MapData>>,
    syms: crate::telemetry::profile::symbols::KernelSymbols,
    resolved: Mutex<HashMap<i32, Option<Resolved>>>,
    free: Mutex<Vec<u32>>,
    threshold: Option<u64>,
    /// `--anatomy`: every operation's layers are kept, not only slow ones'.
    layers: bool,
    /// Reference points of the two clocks: fslab's `Instant` and the kernel's CLOCK_MONOTONIC.
    clock: (Instant, u64),
    /// What the workers handed back, since the cell started.
    collected: Mutex<collect::Collected>,
    events: collect::EventReader,
    /// The programs that run; the rest are named in `unobserved`.
    unobserved: Vec<String>,
    devhist: Mutex<BpfHash<MapData, kernel::HistKey, u64>>,
    lost: Mutex<aya::maps::Array<MapData, u64>>,
    lbamap: Mutex<BpfHash<MapData, kernel::LbaKey, kernel::LbaVal>>,
    /// Keeps the kernel counting the programs' runs and run time (a
    /// clock read before and after each run, every BPF program's), so a
    /// cell can say what its tracing cost; None where the kernel refuses.
    stats: Option<std::os::fd::OwnedFd>,
    /// The programs' runs and run time at the cell's start.
    cost_base: Mutex<(u64, u64)>,
    bpf: Mutex<aya::Ebpf>,
}

/// An open session: programs attached until it is dropped.
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

impl Session {
    /// Loads and attaches the programs. Err: one line saying why nothing
    /// can be observed (the caller prints it and measures without).
    pub fn open(opts: Options) -> Result<Session, String> {
        if !rustix::process::geteuid().is_root() {
            return Err("needs root (BPF programs on tracepoints)".into());
        }
        let tracefs = formats::TraceFs::open()?;
        let layout = tracefs.check()?;
        let mut bpf = aya::EbpfLoader::new()
            .override_global("rwbs_insert", &layout.rwbs_insert, true)
            .override_global("rwbs_issue", &layout.rwbs_issue, true)
            .override_global("rwbs_complete", &layout.rwbs_complete, true)
            .override_global("rwbs_bio", &layout.rwbs_bio, true)
            .override_global("layers", &u32::from(opts.layers), true)
            .override_global("lazy_ns", &opts.lazy_ns().unwrap_or(0), true)
            .override_global("tgid", &std::process::id(), true)
            // --anatomy fills no lazy map: one entry, not 6.5 MB of kernel memory
            .map_max_entries(
                "lazy_stacks",
                if opts.lazy_ns().is_some() {
                    kernel::LAZY_ENTRIES
                } else {
                    1
                },
            )
            .load(OBJECT)
            .map_err(|e| format!("the kernel refused fslab's BPF object: {e}"))?;
        let (mut unobserved, lazy) = attach_all(&mut bpf, &layout, &opts)?;
        let take = |bpf: &mut aya::Ebpf, name: &str| {
            bpf.take_map(name)
                .ok_or_else(|| format!("fslab's BPF object lacks the map {name}"))
        };
        let tids = aya::maps::Array::try_from(take(&mut bpf, "tids")?).map_err(|e| e.to_string())?;
        let stacks = StackTraceMap::try_from(take(&mut bpf, "stacks")?).map_err(|e| e.to_string())?;
        let devhist = BpfHash::try_from(take(&mut bpf, "devhist")?).map_err(|e| e.to_string())?;
        let lost = aya::maps::Array::try_from(take(&mut bpf, "lost")?).map_err(|e| e.to_string())?;
        let lbamap = BpfHash::try_from(take(&mut bpf, "lbamap")?).map_err(|e| e.to_string())?;
        let events = collect::EventReader::start(take(&mut bpf, "events")?)?;
        let slots = match bpf.map("slots") {
            Some(aya::maps::Map::Array(d)) => Mapping::new(d.fd(), SLOTS_LEN),
            _ => return Err("fslab's BPF object lacks the map slots".into()),
        }
        .map_err(|e| format!("cannot map the per-thread counters: {e}"))?;
        let windows = match bpf.map("windows") {
            Some(aya::maps::Map::Array(d)) => Mapping::new(d.fd(), WINDOWS_LEN),
            _ => return Err("fslab's BPF object lacks the map windows".into()),
        }
        .map_err(|e| format!("cannot map the device windows: {e}"))?;
        let lazy = match (lazy, bpf.map("lazy_stacks")) {
            (None, _) => None,
            (Some(_), Some(aya::maps::Map::Array(d))) => {
                Some(Mapping::new(d.fd(), LAZY_LEN).map_err(|e| format!("cannot map the sleepers' stacks: {e}"))?)
            }
            _ => return Err("fslab's BPF object lacks the map lazy_stacks".into()),
        };
        // attached: the programs hold their perf events, tracefs is no
        // longer needed (a tracefs this session mounted is unmounted now,
        // not at exit: the hook that holds the session is never dropped)
        drop(tracefs);
        let syms = crate::telemetry::profile::symbols::KernelSymbols::load();
        if syms.is_empty() {
            unobserved.push(
                "sleep sites: /proc/kallsyms hides kernel addresses (kptr_restrict), stacks are not named".into(),
            );
        }
        Ok(Session {
            inner: Arc::new(Inner {
                tids: Mutex::new(tids),
                untraced: Default::default(),
                slots,
                windows,
                lazy,
                stacks: Mutex::new(stacks),
                syms,
                resolved: Mutex::new(HashMap::new()),
                free: Mutex::new((0..MAX_SLOTS).rev().collect()),
                threshold: opts.explain_slow_ns,
                layers: opts.layers,
                clock: (Instant::now(), monotonic_ns()),
                collected: Mutex::new(collect::Collected::default()),
                events,
                unobserved,
                devhist: Mutex::new(devhist),
                lost: Mutex::new(lost),
                lbamap: Mutex::new(lbamap),
                stats: opts
                    .layers
                    .then(|| aya::sys::enable_stats(aya::sys::Stats::RunTime).ok())
                    .flatten(),
                cost_base: Mutex::new((0, 0)),
                bpf: Mutex::new(bpf),
            }),
        })
    }

    /// Forgets what earlier cells left (device histograms, events, slow operations).
    pub fn start_cell(&self) {
        self.inner.clear();
    }

    /// This cell's anatomy, from everything since `start_cell`.
    pub fn take_cell(&self) -> crate::model::anatomy::Anatomy {
        collect::take(&self.inner)
    }

    pub fn tracer(&self) -> Arc<dyn Tracer> {
        Arc::new(self.clone())
    }
}

/// Attaches the programs: each BTF-typed one where the kernel takes it,
/// the tracepoint programs for the rest. Ok: what is not observed, and the
/// lazy stacks' threshold when they are taken (None: every sleep's stack).
/// Err: `sched_switch` cannot be traced at all.
fn attach_all(
    bpf: &mut aya::Ebpf,
    layout: &formats::Layout,
    opts: &Options,
) -> Result<(Vec<String>, Option<u64>), String> {
    let mut unobserved = layout.missing.clone();
    // the BTF-typed tracepoints where the kernel takes them; each
    // replaces its tracepoint program
    let btf = aya::Btf::from_sys_fs().ok();
    let mut replaced = Vec::new();
    for (prog, classic, ev) in BTF_PROGRAMS {
        if let Some(btf) = &btf {
            if attach_btf(bpf, btf, prog, ev).is_ok() {
                replaced.push(classic);
            }
        }
    }
    let lazy = opts.lazy_ns().filter(|_| replaced.contains(&"on_switch"));
    if let Some(ns) = lazy {
        let shown = if ns >= 10_000 {
            format!("{} µs", ns / 1000)
        } else {
            format!("{ns} ns")
        };
        unobserved.push(format!(
            "sleep sites: only sleeps of {shown} or more are traced to a stack (--explain-slow alone; --anatomy takes every sleep's)"
        ));
    }
    for &(prog, cat, ev, what) in PROGRAMS {
        if layout.missing_event(cat, ev) || (prog == "on_bio_queue" && !opts.layers) || replaced.contains(&prog) {
            continue;
        }
        let p: &mut TracePoint = bpf
            .program_mut(prog)
            .and_then(|p| p.try_into().ok())
            .ok_or_else(|| format!("fslab's BPF object lacks {prog}"))?;
        // the first line only: a verifier's refusal carries its whole log
        let line1 = |e: String| e.lines().next().unwrap_or("").to_string();
        let attached = p
            .load()
            .map_err(|e| line1(e.to_string()))
            .and_then(|()| p.attach(cat, ev).map(|_| ()).map_err(|e| line1(e.to_string())));
        if let Err(e) = attached {
            if prog == "on_switch" {
                return Err(format!("cannot attach to sched:sched_switch: {e}"));
            }
            let line = format!("{what}: {cat}:{ev} could not be attached ({e})");
            if !unobserved.contains(&line) {
                unobserved.push(line);
            }
        }
    }
    Ok((unobserved, lazy))
}

/// Loads and attaches the BTF-typed tracepoint program `prog` on `event`.
/// Err where the kernel refuses it (no BTF, another prototype): the
/// tracepoint program it replaces runs instead, dearer, not less true.
fn attach_btf(bpf: &mut aya::Ebpf, btf: &aya::Btf, prog: &str, event: &str) -> Result<(), String> {
    let p: &mut BtfTracePoint = bpf
        .program_mut(prog)
        .and_then(|p| p.try_into().ok())
        .ok_or_else(|| format!("fslab's BPF object lacks {prog}"))?;
    p.load(event, btf).map_err(|e| e.to_string())?;
    p.attach().map(|_| ()).map_err(|e| e.to_string())
}

impl Tracer for Session {
    fn thread(&self) -> Option<Box<dyn ThreadTrace>> {
        let inner = &self.inner;
        let untraced = || {
            inner.untraced.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            None
        };
        let Some(slot) = inner.free.lock().unwrap_or_else(|e| e.into_inner()).pop() else {
            return untraced();
        };
        let tid = rustix::thread::gettid().as_raw_nonzero().get() as u32;
        let registered = {
            let mut tids = inner.tids.lock().unwrap_or_else(|e| e.into_inner());
            let k = tid % kernel::NTIDS;
            // another traced thread's tid on the same entry: not this one
            let free = tids.get(&k, 0).is_ok_and(|e| e.slot == 0 || e.tid == tid);
            free && tids.set(k, kernel::TidSlot { tid, slot: slot + 1 }, 0).is_ok()
        };
        if !registered {
            inner.free.lock().unwrap_or_else(|e| e.into_inner()).push(slot);
            return untraced();
        }
        Some(Box::new(Thread::new(inner.clone(), slot, tid)))
    }
}

impl Inner {
    /// fslab's `Instant` on the kernel's CLOCK_MONOTONIC.
    fn mono_ns(&self, t: Instant) -> u64 {
        let (i0, m0) = self.clock;
        if t >= i0 {
            m0 + (t - i0).as_nanos() as u64
        } else {
            m0.saturating_sub((i0 - t).as_nanos() as u64)
        }
    }

    /// The stack `id` named and classified (cached; None: not in the map).
    fn resolve(&self, id: i32) -> Option<Resolved> {
        if let Some(r) = self.resolved.lock().unwrap_or_else(|e| e.into_inner()).get(&id) {
            return r.clone();
        }
        let frames = self.stack_names(id);
        let r = frames.map(|f| classify::classify(&f));
        self.resolved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, r.clone());
        r
    }

    fn stack_names(&self, id: i32) -> Option<Vec<String>> {
        if id < 0 || self.syms.is_empty() {
            return None;
        }
        let st = self
            .stacks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(id as u32), 0)
            .ok()?;
        let ips: Vec<u64> = st.frames().iter().map(|f| f.ip).collect();
        Some(self.names(&ips))
    }

    fn names(&self, ips: &[u64]) -> Vec<String> {
        ips.iter()
            .map(|&ip| self.syms.lookup(ip).map_or_else(|| format!("{ip:#x}"), str::to_string))
            .collect()
    }

    /// A sleep's stack named and classified: its lazily taken frames, or
    /// its stack id's.
    fn resolve_sleep(&self, s: &kernel::RawSleep) -> Option<Resolved> {
        if s.frames.is_empty() {
            return self.resolve(s.stack);
        }
        (!self.syms.is_empty()).then(|| classify::classify(&self.names(&s.frames)))
    }

    /// A thread ended: its figures join the cell's, its slot is freed.
    fn release(&self, t: &mut Thread) {
        {
            let mut tids = self.tids.lock().unwrap_or_else(|e| e.into_inner());
            let k = t.tid % kernel::NTIDS;
            if tids.get(&k, 0).is_ok_and(|e| e.tid == t.tid) {
                let _ = tids.set(k, kernel::TidSlot::default(), 0);
            }
        }
        {
            let mut c = self.collected.lock().unwrap_or_else(|e| e.into_inner());
            c.add(&t.kinds, std::mem::take(&mut t.slow));
        }
        self.free.lock().unwrap_or_else(|e| e.into_inner()).push(t.slot);
    }

    /// The programs' runs and run time (ns) since they were loaded, None
    /// where the kernel keeps no statistics.
    fn bpf_cost(&self) -> Option<(u64, u64)> {
        self.stats.as_ref()?;
        let bpf = self.bpf.lock().unwrap_or_else(|e| e.into_inner());
        let mut sum = (0, 0);
        // a program left out (its event missing) was never loaded: no info
        for info in bpf.programs().filter_map(|(_, p)| p.info().ok()) {
            sum.0 += info.run_count();
            sum.1 += info.run_time().as_nanos() as u64;
        }
        Some(sum)
    }

    /// The cost since the cell started.
    fn cell_cost(&self) -> Option<crate::model::anatomy::TracerCost> {
        let (runs, ns) = self.bpf_cost()?;
        let base = *self.cost_base.lock().unwrap_or_else(|e| e.into_inner());
        Some(crate::model::anatomy::TracerCost {
            runs: runs.saturating_sub(base.0),
            kernel_ns: ns.saturating_sub(base.1),
        })
    }

    fn clear(&self) {
        self.untraced.store(0, std::sync::atomic::Ordering::Relaxed);
        if let Some(c) = self.bpf_cost() {
            *self.cost_base.lock().unwrap_or_else(|e| e.into_inner()) = c;
        }
        *self.collected.lock().unwrap_or_else(|e| e.into_inner()) = collect::Collected {
            start: monotonic_ns(),
            ..Default::default()
        };
        self.events.clear();
        let mut lost = self.lost.lock().unwrap_or_else(|e| e.into_inner());
        for i in 0..4 {
            let _ = lost.set(i, 0, 0);
        }
        let mut m = self.lbamap.lock().unwrap_or_else(|e| e.into_inner());
        let keys: Vec<kernel::LbaKey> = m.keys().filter_map(Result::ok).collect();
        for k in keys {
            let _ = m.remove(&k);
        }
        let mut h = self.devhist.lock().unwrap_or_else(|e| e.into_inner());
        let keys: Vec<kernel::HistKey> = h.keys().filter_map(Result::ok).collect();
        for k in keys {
            let _ = h.remove(&k);
        }
    }
}
