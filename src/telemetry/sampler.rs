//! The per-second sampler of one cell: a background thread that reads
//! `/proc/diskstats` (every device, so nothing needs to be known up front)
//! and the machine (`/proc/stat`, pressure, meminfo, vmstat, getrusage) once
//! per interval, from the cell's first timed phase to its end. Each reading
//! is a handful of small files: no `/proc/[pid]` scan per second (the two
//! scans for interference are taken at the start and the end, synchronously,
//! outside the timed phases' workers).

use super::diskstats::{self, DiskStat};
use super::interference::{self, CpuInputs, Task};
use super::procstat::{self, Machine};
use super::stack::{self, Sysfs};
use crate::model::system::{DeviceData, IostatPoint, PhaseSpan, SystemData};
use crate::model::TargetInfo;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One reading.
#[derive(Debug, Clone)]
pub struct Reading {
    pub at: Instant,
    pub machine: Machine,
    pub disks: Vec<(String, DiskStat)>,
}

impl Reading {
    pub fn now() -> Reading {
        let at = Instant::now();
        Reading {
            machine: procstat::read_machine(),
            disks: diskstats::read_diskstats(),
            at,
        }
    }

    fn disk(&self, name: &str) -> Option<&DiskStat> {
        self.disks.iter().find(|(n, _)| n == name).map(|(_, d)| d)
    }
}

#[derive(Default)]
struct State {
    stop: bool,
    t0: Option<Instant>,
    readings: Vec<Reading>,
}

struct Shared {
    state: Mutex<State>,
    cv: Condvar,
}

/// A running sampler (see the module).
pub struct Sampler {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    interval: Duration,
    start_scan: Option<HashMap<u32, Task>>,
    phases: Vec<(String, Instant, Option<Instant>)>,
}

impl Sampler {
    /// Starts the thread; it waits for [`Sampler::start`].
    pub fn spawn(interval: Duration) -> Sampler {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("fslab-telemetry".into())
            .spawn(move || run(&s, interval))
            .ok();
        Sampler {
            shared,
            thread,
            interval,
            start_scan: None,
            phases: Vec::new(),
        }
    }

    /// A timed phase starts: the first one takes the reading at t0 and
    /// the start scan of `/proc`.
    pub fn phase_started(&mut self, name: &str) {
        let mut at = Instant::now();
        if self.start_scan.is_none() {
            self.start_scan = Some(interference::scan());
            let r = Reading::now();
            // the first phase starts at t0 (its workers start right after)
            at = r.at;
            let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
            st.t0 = Some(r.at);
            st.readings.push(r);
            self.shared.cv.notify_all();
        }
        self.phases.push((name.to_string(), at, None));
    }

    pub fn phase_ended(&mut self) {
        if let Some(p) = self.phases.last_mut() {
            p.2.get_or_insert_with(Instant::now);
        }
    }

    /// Ends the sampling thread and waits for it (again: a no-op).
    fn stop(&mut self) {
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        st.stop = true;
        self.shared.cv.notify_all();
        drop(st);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// Stops the thread and takes the last reading and scan. None when no
    /// phase started.
    pub fn finish(mut self) -> Option<Finished> {
        self.stop();
        let start_scan = self.start_scan.take()?;
        let end_scan = interference::scan();
        let last = Reading::now();
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut readings = std::mem::take(&mut st.readings);
        readings.push(last);
        Some(Finished {
            interval: self.interval,
            readings,
            start_scan,
            end_scan,
            phases: std::mem::take(&mut self.phases),
        })
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(s: &Shared, interval: Duration) {
    let mut st = s.state.lock().unwrap_or_else(|e| e.into_inner());
    let mut k: u32 = 1;
    loop {
        if st.stop {
            return;
        }
        let Some(t0) = st.t0 else {
            st = s.cv.wait(st).unwrap_or_else(|e| e.into_inner());
            continue;
        };
        let next = t0 + interval * k;
        let now = Instant::now();
        if now < next {
            st = s.cv.wait_timeout(st, next - now).unwrap_or_else(|e| e.into_inner()).0;
            continue;
        }
        drop(st);
        let r = Reading::now();
        st = s.state.lock().unwrap_or_else(|e| e.into_inner());
        st.readings.push(r);
        // a late wake-up skips the missed ticks rather than bunching readings
        k = (((Instant::now() - t0).as_nanos() / interval.as_nanos().max(1)) as u32 + 1).max(k + 1);
    }
}

/// What a stopped sampler collected.
pub struct Finished {
    pub interval: Duration,
    /// The first at t0, the last at the end.
    pub readings: Vec<Reading>,
    pub start_scan: HashMap<u32, Task>,
    pub end_scan: HashMap<u32, Task>,
    pub phases: Vec<(String, Instant, Option<Instant>)>,
}

fn ms(a: Instant, b: Instant) -> u64 {
    b.saturating_duration_since(a).as_millis() as u64
}

impl Finished {
    /// The system beside the cell on `target`: samples, totals, the device
    /// stack and its figures, interference with `threshold_pct` (latency
    /// shares are the caller's, per cell).
    pub fn system(&self, target: &TargetInfo, threshold_pct: f64) -> SystemData {
        let (first, last) = (&self.readings[0], &self.readings[self.readings.len() - 1]);
        let t0 = first.at;
        let mut sd = SystemData {
            interval_ms: self.interval.as_millis() as u64,
            ncpus: last.machine.stat.ncpus,
            ..Default::default()
        };
        sd.phases = self
            .phases
            .iter()
            .map(|(n, s, e)| PhaseSpan {
                name: n.clone(),
                start_ms: ms(t0, *s),
                end_ms: ms(t0, e.unwrap_or(last.at)),
            })
            .collect();
        for w in self.readings.windows(2) {
            sd.samples.push(procstat::system_point(
                &w[0].machine,
                &w[1].machine,
                ms(w[0].at, w[1].at),
                ms(t0, w[1].at),
            ));
        }
        let len = ms(t0, last.at);
        sd.total = procstat::system_point(&first.machine, &last.machine, len, len);
        if first.machine.psi.is_none() {
            sd.notes.push("no /proc/pressure: kernel without PSI".into());
        }
        let (stack, notes) = stack::stack_of(target, &Sysfs::default());
        sd.notes.extend(notes);
        for d in &stack {
            let mut data: DeviceData = d.to_data();
            let mut missing = false;
            for w in self.readings.windows(2) {
                match (w[0].disk(&d.name), w[1].disk(&d.name)) {
                    (Some(a), Some(b)) => {
                        data.samples
                            .push(diskstats::iostat(a, b, ms(w[0].at, w[1].at), ms(t0, w[1].at)))
                    }
                    _ => {
                        missing = true;
                        data.samples.push(IostatPoint {
                            t_ms: ms(t0, w[1].at),
                            len_ms: ms(w[0].at, w[1].at),
                            ..Default::default()
                        });
                    }
                }
            }
            match (first.disk(&d.name), last.disk(&d.name)) {
                (Some(a), Some(b)) => data.total = diskstats::iostat(a, b, len, len),
                _ => missing = true,
            }
            if missing {
                sd.notes
                    .push(format!("{}: not in /proc/diskstats for the whole cell", d.name));
            }
            sd.devices.push(data);
        }
        let d =
            |f: fn(&procstat::CpuTicks) -> u64| f(&last.machine.stat.cpu).saturating_sub(f(&first.machine.stat.cpu));
        let tick = procstat::tick_ns();
        let siblings = crate::dist::is_distributed()
            .then(|| self.end_scan.get(&std::process::id()).map(|t| t.comm.clone()))
            .flatten();
        let cpu = CpuInputs {
            busy: d(|c| c.busy()),
            steal: d(|c| c.steal),
            total: d(|c| c.total()),
            own: last.machine.own_ns.saturating_sub(first.machine.own_ns) / tick,
            scans: interference::scan_delta(
                &self.start_scan,
                &self.end_scan,
                std::process::id(),
                siblings.as_deref(),
            ),
            ncpus: last.machine.stat.ncpus,
        };
        let (i, notes) = interference::interference(
            &cpu,
            &sd.devices,
            first.machine.dirty_kib + first.machine.writeback_kib,
            threshold_pct,
        );
        sd.interference = i;
        sd.notes.extend(notes);
        sd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_once_per_interval_between_start_and_finish() {
        let mut s = Sampler::spawn(Duration::from_millis(50));
        std::thread::sleep(Duration::from_millis(30));
        s.phase_started("create");
        std::thread::sleep(Duration::from_millis(120));
        s.phase_ended();
        s.phase_started("stat");
        std::thread::sleep(Duration::from_millis(100));
        s.phase_ended();
        let f = s.finish().unwrap();
        // t0, ~4 ticks, the end
        assert!((4..=7).contains(&f.readings.len()), "{}", f.readings.len());
        let ti = TargetInfo {
            path: std::env::temp_dir(),
            kind: "directory".into(),
            ..Default::default()
        };
        let sd = f.system(&ti, 10.0);
        assert_eq!(sd.interval_ms, 50);
        assert_eq!(sd.samples.len(), f.readings.len() - 1);
        assert!(sd.samples.windows(2).all(|w| w[0].t_ms < w[1].t_ms));
        assert_eq!(sd.phases.len(), 2);
        assert_eq!(sd.phases[0].name, "create");
        assert!(sd.phases[0].start_ms <= 1 && sd.phases[0].end_ms >= 120);
        assert!(sd.phases[1].start_ms >= sd.phases[0].end_ms);
        assert!(sd.total.t_ms >= 220);
        for d in &sd.devices {
            assert_eq!(d.samples.len(), sd.samples.len());
        }
        assert!(sd.ncpus >= 1);
    }

    #[test]
    fn no_phase_no_data() {
        let s = Sampler::spawn(Duration::from_millis(10));
        assert!(s.finish().is_none());
    }
}

#[cfg(test)]
mod cost {
    use super::*;

    /// What one reading costs (run with --nocapture to see it): the
    /// sampler's whole per-second work.
    #[test]
    fn one_reading_is_cheap() {
        let n = 50;
        let t = Instant::now();
        for _ in 0..n {
            std::hint::black_box(Reading::now());
        }
        let per = t.elapsed() / n;
        let t = Instant::now();
        std::hint::black_box(interference::scan());
        let scan = t.elapsed();
        eprintln!("one reading: {per:?}; one /proc scan: {scan:?}");
        assert!(!Reading::now().disks.is_empty());
    }
}
