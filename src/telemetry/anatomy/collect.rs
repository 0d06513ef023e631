//! A cell's anatomy from what the workers handed back, the device
//! histograms and the journal events: the per-kind layers as they are, and
//! each slow operation explained (its sleeps named, the commits and log
//! forces and the device activity of its span).

use super::kernel::{bucket_value, dev_name, HistKey, LbaKey, LbaVal, LBA_TIME_NS};
use super::thread::RawSlow;
use super::Inner;
use crate::model::anatomy::{
    Anatomy, ClassTime, Commit, DeviceLatency, KindEntry, LbaMap, Sleep, SlowOperation, WindowActivity, LBA_CLASSES,
};
use crate::stats::anatomy::{Figure, KindAnatomy, Layer};
use crate::stats::OpKind;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// At most this many slow operations are explained per cell (the slowest).
const MAX_SLOW: usize = 50;
/// Sleeps shorter than this are summed per class, not listed.
const SHOWN_SLEEP_NS: u64 = 1_000_000;
/// Events kept per cell; later ones are counted as lost.
const MAX_EVENTS: usize = 1 << 20;

#[derive(Default)]
pub struct Collected {
    pub kinds: Vec<KindAnatomy>,
    pub slow: Vec<RawSlow>,
    /// CLOCK_MONOTONIC at the cell's start.
    pub start: u64,
}

impl Collected {
    pub fn add(&mut self, kinds: &[KindAnatomy], slow: Vec<RawSlow>) {
        if self.kinds.len() < kinds.len() {
            self.kinds.resize_with(kinds.len(), KindAnatomy::default);
        }
        for (a, b) in self.kinds.iter_mut().zip(kinds) {
            a.add(b);
        }
        self.slow.extend(slow);
    }
}

/// A journal or log event (`struct event` of the C source).
#[derive(Clone, Copy, Debug)]
pub struct Event {
    pub ts: u64,
    pub kind: u32,
    pub dev: u32,
    pub tid: u32,
    pub pid: u32,
    pub blocks: u32,
    pub handles: u32,
}

const EV_JBD2_START: u32 = 1;
const EV_JBD2_LOCKING: u32 = 2;
const EV_JBD2_FLUSHING: u32 = 3;
const EV_JBD2_LOGGING: u32 = 4;
const EV_JBD2_END: u32 = 5;
const EV_JBD2_STATS: u32 = 6;
const EV_XFS_FORCE: u32 = 7;

fn parse(b: &[u8]) -> Option<Event> {
    let u32_at = |o: usize| {
        b.get(o..o + 4)
            .map(|s| u32::from_ne_bytes(s.try_into().unwrap_or_default()))
    };
    Some(Event {
        ts: u64::from_ne_bytes(b.get(0..8)?.try_into().ok()?),
        kind: u32_at(8)?,
        dev: u32_at(12)?,
        tid: u32_at(16)?,
        pid: u32_at(20)?,
        blocks: u32_at(24)?,
        handles: u32_at(28)?,
    })
}

/// Reads the ring buffer at a cell's start and end (4 MiB: 100k events;
/// what does not fit is counted by the kernel side as lost). No thread of
/// its own: with a reader thread polling every 20 ms, XFS creates of a
/// lone worker ran 10 % slower (bench/anatomy-overhead.sh, 0.897; 1.010
/// without it). The likely cause, not verified, is the one
/// `runner::group::inline_run` gives: a multithreaded process pays the
/// kernel's file refcounting on every syscall.
pub struct EventReader {
    events: Mutex<(Vec<Event>, u64)>,
    rb: Mutex<aya::maps::RingBuf<aya::maps::MapData>>,
}

fn drain(rb: &Mutex<aya::maps::RingBuf<aya::maps::MapData>>, events: &Mutex<(Vec<Event>, u64)>) {
    let mut rb = rb.lock().unwrap_or_else(|e| e.into_inner());
    let mut ev = events.lock().unwrap_or_else(|e| e.into_inner());
    while let Some(item) = rb.next() {
        if ev.0.len() >= MAX_EVENTS {
            ev.1 += 1;
        } else if let Some(e) = parse(&item) {
            ev.0.push(e);
        }
    }
}

impl EventReader {
    pub fn start(map: aya::maps::Map) -> Result<EventReader, String> {
        let rb = aya::maps::RingBuf::try_from(map).map_err(|e| e.to_string())?;
        Ok(EventReader {
            events: Mutex::new((Vec::new(), 0)),
            rb: Mutex::new(rb),
        })
    }

    pub fn clear(&self) {
        drain(&self.rb, &self.events);
        *self.events.lock().unwrap_or_else(|e| e.into_inner()) = (Vec::new(), 0);
    }

    /// Everything so far, and how many were dropped.
    fn take(&self) -> (Vec<Event>, u64) {
        drain(&self.rb, &self.events);
        std::mem::take(&mut *self.events.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

fn device_figures(inner: &Inner) -> Vec<DeviceLatency> {
    let h = inner.devhist.lock().unwrap_or_else(|e| e.into_inner());
    let mut by: BTreeMap<(u32, u16), (Figure, Figure, u64)> = BTreeMap::new();
    for (k, n) in h.iter().filter_map(Result::ok) {
        let k: HistKey = k;
        let v = bucket_value(k.bucket);
        let e = by.entry((k.dev, k.dir)).or_default();
        let f = if k.layer == 0 { &mut e.0 } else { &mut e.1 };
        f.sum_ns += v * n;
        f.nonzero += n;
        f.hist.record_n(v, n);
        if k.layer == 1 {
            e.2 += n;
        }
    }
    let mut out: Vec<DeviceLatency> = by
        .into_iter()
        .filter(|(_, (_, _, n))| *n > 0)
        .map(|((dev, dir), (queue, device, requests))| DeviceLatency {
            dev: dev_name(dev),
            name: block_name(dev),
            dir: ["read", "write", "other"][dir.min(2) as usize].to_string(),
            requests,
            queue,
            device,
        })
        .collect();
    out.sort_by_key(|d| std::cmp::Reverse(d.requests));
    out
}

/// At most this many points per LBA map (time x offset x class): steps
/// are widened until it fits.
const MAX_LBA_POINTS: usize = 20_000;
/// LBA maps per cell: the devices that moved the most bytes.
const MAX_LBA_DEVICES: usize = 3;

fn lba_maps(inner: &Inner, cell_start: u64) -> Vec<LbaMap> {
    let t0 = (cell_start / LBA_TIME_NS) as u32;
    let mut by: BTreeMap<u32, Vec<(u32, u32, u32, u64)>> = BTreeMap::new();
    {
        let m = inner.lbamap.lock().unwrap_or_else(|e| e.into_inner());
        for (k, v) in m.iter().filter_map(Result::ok) {
            let (k, v): (LbaKey, LbaVal) = (k, v);
            if k.t < t0 || k.class >= 4 {
                continue;
            }
            // a bio's bytes spread evenly over the MiB it covered
            let last = (v.last as u32).max(k.lba).min(k.lba.saturating_add(1 << 16));
            let span = (last - k.lba + 1) as u64;
            let pts = by.entry(k.dev).or_default();
            for (i, lba) in (k.lba..=last).enumerate() {
                let share = v.sectors * 512 / span + u64::from((i as u64) < v.sectors * 512 % span);
                pts.push((k.t - t0, lba, k.class, share));
            }
        }
    }
    let mut maps: Vec<LbaMap> = by.into_iter().map(|(dev, pts)| lba_map(dev, &pts)).collect();
    maps.sort_by_key(|m| std::cmp::Reverse(m.bytes.iter().sum::<u64>()));
    maps.truncate(MAX_LBA_DEVICES);
    maps
}

/// One device's points, coarsened until they fit `MAX_LBA_POINTS`.
fn lba_map(dev: u32, pts: &[(u32, u32, u32, u64)]) -> LbaMap {
    let mut bytes = vec![0u64; LBA_CLASSES.len()];
    for p in pts {
        bytes[p.2 as usize] += p.3;
    }
    let max_lba = pts.iter().map(|p| p.1).max().unwrap_or(0) as u64;
    let (mut ft, mut fl) = (1u64, 1u64);
    let grid = |ft: u64, fl: u64| {
        let mut g: BTreeMap<(u64, u64, u64), u64> = BTreeMap::new();
        for p in pts {
            *g.entry((p.0 as u64 / ft, p.1 as u64 / fl, p.2 as u64)).or_default() += p.3;
        }
        g
    };
    let mut g = grid(ft, fl);
    while g.len() > MAX_LBA_POINTS {
        ft *= 2;
        fl *= 2;
        g = grid(ft, fl);
    }
    LbaMap {
        dev: dev_name(dev),
        name: block_name(dev),
        time_step_ns: LBA_TIME_NS * ft,
        offset_step_bytes: (1 << 20) * fl,
        extent_bytes: (max_lba + 1) << 20,
        bytes,
        points: g.into_iter().map(|((t, o, c), b)| [t, o, c, b]).collect(),
    }
}

/// The kernel's name of the kernel dev_t `dev` ("loop3"), as the device stack reads it.
fn block_name(dev: u32) -> String {
    crate::telemetry::stack::Sysfs::default()
        .name_of(dev >> 20, dev & 0xf_ffff)
        .map(|(name, _)| name)
        .unwrap_or_default()
}

/// The commits with an event in `[start, end]`, each with all its phases.
fn commits(events: &[Event], start: u64, end: u64) -> Vec<Commit> {
    let jbd2 = |k: u32| (EV_JBD2_START..=EV_JBD2_STATS).contains(&k);
    let mut ids: Vec<(u32, u32)> = events
        .iter()
        .filter(|e| jbd2(e.kind) && e.ts >= start && e.ts <= end)
        .map(|e| (e.dev, e.tid))
        .collect();
    ids.dedup();
    ids.sort();
    ids.dedup();
    ids.into_iter()
        .map(|(dev, tid)| {
            let at = |k: u32| events.iter().find(|e| e.kind == k && e.dev == dev && e.tid == tid);
            let span = |a: u32, b: u32| Some(at(b)?.ts.saturating_sub(at(a)?.ts));
            let stats = at(EV_JBD2_STATS);
            Commit {
                dev: dev_name(dev),
                tid,
                locking_ns: span(EV_JBD2_LOCKING, EV_JBD2_FLUSHING),
                flushing_ns: span(EV_JBD2_FLUSHING, EV_JBD2_LOGGING),
                logging_ns: span(EV_JBD2_LOGGING, EV_JBD2_END),
                total_ns: span(EV_JBD2_START, EV_JBD2_END),
                blocks: stats.map(|s| s.blocks),
                handles: stats.map(|s| s.handles),
            }
        })
        .collect()
}

fn explain(inner: &Inner, r: &RawSlow, events: &[Event], cell_start: u64) -> SlowOperation {
    let mut sleeps = Vec::new();
    let mut short: BTreeMap<Layer, (u64, u64)> = BTreeMap::new();
    let mut attributed = 0;
    for s in &r.sleeps {
        let res = inner.resolve_sleep(s);
        let class = res.as_ref().map_or(Layer::Other, |x| x.class);
        if res.is_some() {
            attributed += s.dur;
        }
        if s.dur < SHOWN_SLEEP_NS {
            let e = short.entry(class).or_default();
            e.0 += s.dur;
            e.1 += 1;
            continue;
        }
        let waker_stack = inner.resolve(s.waker_stack).map(|x| x.frames).unwrap_or_default();
        sleeps.push(Sleep {
            ns: s.dur,
            class,
            state: if s.state & 2 != 0 { "D" } else { "S" }.to_string(),
            site: res.as_ref().map(|x| x.site.clone()).unwrap_or_default(),
            stack: res.map(|x| x.frames).unwrap_or_default(),
            waker: if s.waker_comm[0] == 0 {
                String::new()
            } else {
                format!("{} ({})", s.waker_name(), s.waker)
            },
            waker_stack,
        });
    }
    sleeps.sort_by_key(|s| std::cmp::Reverse(s.ns));
    let forces: Vec<&Event> = events
        .iter()
        .filter(|e| e.kind == EV_XFS_FORCE && e.ts >= r.start && e.ts <= r.end)
        .collect();
    SlowOperation {
        kind: r.kind,
        at_ns: r.start.saturating_sub(cell_start),
        latency_ns: r.lat,
        runqueue_ns: r.runq,
        asleep_ns: r.asleep,
        unseen_ns: r.unseen,
        sleeps,
        short_sleeps: short
            .into_iter()
            .map(|(class, (ns, count))| ClassTime { class, ns, count })
            .collect(),
        attributed_ns: attributed,
        own_requests: r.own.0,
        own_queue_ns: r.own.1,
        own_device_ns: r.own.2,
        device: WindowActivity {
            requests: r.window.n,
            writes: r.window.writes,
            bytes: r.window.bytes,
            queue_ns: r.window.queue_ns,
            device_ns: r.window.dev_ns,
            device_max_ns: r.window.dev_max,
        },
        commits: commits(events, r.start, r.end),
        log_forces: forces.len() as u64,
        own_log_forces: forces.iter().filter(|e| e.pid == r.tid).count() as u64,
    }
}

/// The cell's anatomy; the session starts the next cell afresh.
pub fn take(inner: &Inner) -> Anatomy {
    let c = std::mem::take(&mut *inner.collected.lock().unwrap_or_else(|e| e.into_inner()));
    let (events, dropped) = inner.events.take();
    let kinds: Vec<KindEntry> = c
        .kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| k.ops > 0)
        .map(|(i, k)| {
            let mut anatomy = k.clone();
            anatomy.settle();
            KindEntry {
                kind: OpKind::ALL[i],
                anatomy,
            }
        })
        .collect();
    let mut slow = c.slow;
    slow.sort_by_key(|s| std::cmp::Reverse(s.lat));
    let slow_dropped = slow.len().saturating_sub(MAX_SLOW) as u64;
    slow.truncate(MAX_SLOW);
    let mut explained: Vec<SlowOperation> = slow.iter().map(|r| explain(inner, r, &events, c.start)).collect();
    explained.sort_by_key(|s| s.at_ns);
    let mut unobserved = inner.unobserved.clone();
    let lost: Vec<u64> = {
        let l = inner.lost.lock().unwrap_or_else(|e| e.into_inner());
        (0..4).map(|i| l.get(&i, 0).unwrap_or(0)).collect()
    };
    let untraced = inner.untraced.load(std::sync::atomic::Ordering::Relaxed);
    if untraced > 0 {
        unobserved.push(format!(
            "{untraced} worker threads were not traced (more than {} at once, or another's thread id on their entry of the kernel's table)",
            super::kernel::MAX_SLOTS
        ));
    }
    if lost[3] > 0 {
        unobserved.push(format!("the LBA map lost {} submissions (its table was full)", lost[3]));
    }
    if lost[0] > 0 {
        unobserved.push(format!(
            "{} block requests were not tracked (another in-flight request took their entry of the request table)",
            lost[0]
        ));
    }
    if lost[1] > 0 {
        unobserved.push(format!(
            "{} block latencies were not counted (the histogram table was full)",
            lost[1]
        ));
    }
    if lost[2] + dropped > 0 {
        unobserved.push(format!("{} journal and log events were lost", lost[2] + dropped));
    }
    let devices = device_figures(inner);
    let lba = lba_maps(inner, c.start);
    let tracer_cost = inner.cell_cost();
    inner.clear();
    Anatomy {
        kinds,
        layer_names: Layer::ALL.to_vec(),
        devices,
        lba,
        slow_threshold_ns: inner.threshold,
        slow: explained,
        slow_dropped,
        unobserved,
        tracer_cost,
    }
}
