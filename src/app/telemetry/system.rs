//! The system hook: samples the machine once per second from the first
//! timed phase to the cell's end, and puts `model::system::SystemData` into
//! the cell (with a warning line when the cell was disturbed).
//!
//! The sampler thread starts at `before_timed`, t0 is the first
//! `phase_started`, and it stops at the first `after_timed`: a fio segment
//! makes several cells from one run, and each gets the same telemetry (its
//! own latency shares). In a distributed run every rank samples its own
//! machine and rank 0 gathers each rank's summary (`SystemData::ranks`).

use crate::app::pipeline::CellHook;
use crate::model::system::{RankSystem, SystemData};
use crate::model::Cell;
use crate::plan::TelemetryPlan;
use crate::telemetry::sampler::{Finished, Sampler};
use std::sync::Mutex;
use std::time::Duration;

pub struct SystemHook {
    plan: TelemetryPlan,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    running: Option<Sampler>,
    /// The cell run's telemetry, once stopped (all its cells share it).
    done: Option<Done>,
}

struct Done {
    finished: Option<Finished>,
    /// Built from the first cell's target, with the ranks gathered.
    system: Option<SystemData>,
    gathered: bool,
}

impl SystemHook {
    pub fn new(t: &TelemetryPlan) -> Self {
        SystemHook {
            plan: t.clone(),
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Gathers every rank's summary on rank 0 (a collective: every rank calls it
/// once per cell run, at its first `after_timed`).
fn gather_ranks(sd: &mut SystemData) {
    if !crate::dist::is_distributed() {
        return;
    }
    let c = crate::dist::coordinator();
    let mine = RankSystem {
        rank: c.rank(),
        host: c.host(),
        total: sd.total.clone(),
        devices: sd
            .devices
            .iter()
            .map(|d| crate::model::system::DeviceData {
                samples: Vec::new(),
                ..d.clone()
            })
            .collect(),
        interference: sd.interference.clone(),
    };
    let bytes = serde_json::to_vec(&mine).unwrap_or_default();
    if let Some(all) = c.gather(&bytes) {
        sd.ranks = all
            .iter()
            .enumerate()
            .map(|(i, b)| {
                serde_json::from_slice(b).unwrap_or_else(|_| RankSystem {
                    rank: i,
                    ..Default::default()
                })
            })
            .collect();
        // any rank disturbed: the cell is
        for r in sd
            .ranks
            .iter()
            .filter(|r| r.rank != c.rank() && r.interference.disturbed)
        {
            sd.interference.disturbed = true;
            for reason in &r.interference.reasons {
                sd.interference
                    .reasons
                    .push(format!("rank {} ({}): {reason}", r.rank, r.host));
            }
        }
    }
}

impl CellHook for SystemHook {
    fn before_timed(&self, _cell: &str) {
        let mut st = self.state();
        st.done = None;
        st.running = Some(Sampler::spawn(Duration::from_secs(1)));
    }

    fn phase_started(&self, _phase: usize, name: &str) {
        if let Some(s) = self.state().running.as_mut() {
            s.phase_started(name);
        }
    }

    fn phase_ended(&self, _phase: usize) {
        if let Some(s) = self.state().running.as_mut() {
            s.phase_ended();
        }
    }

    fn after_timed(&self, cell: &mut Cell) {
        let mut st = self.state();
        if let Some(s) = st.running.take() {
            st.done = Some(Done {
                finished: s.finish(),
                system: None,
                gathered: false,
            });
        }
        let Some(done) = st.done.as_mut() else {
            return;
        };
        if done.system.is_none() {
            let Some(f) = done.finished.as_ref() else {
                // no timed phase ran (interrupted before): nothing measured,
                // but the ranks still meet, once
                if !done.gathered {
                    done.gathered = true;
                    gather_ranks(&mut SystemData::default());
                }
                return;
            };
            let mut sd = f.system(&cell.target, self.plan.disturbed_cpu_pct);
            gather_ranks(&mut sd);
            done.system = Some(sd);
        }
        let mut sd = done.system.clone().unwrap_or_default();
        sd.attempts = 1;
        sd.latency_share = crate::telemetry::latency::latency_shares(&cell.directions, &sd.devices);
        cell.system = Some(sd);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(name: &str) -> Cell {
        let mut a = crate::cli::IoArgs {
            engine: "null".into(),
            ..Default::default()
        };
        a.common.target = ".".into();
        let plan = crate::plan::IoPlan::from_args(&a).expect("a valid plan");
        let mut c = Cell::failed(
            name,
            crate::model::CellPlan::Io(plan),
            Default::default(),
            String::new(),
        );
        c.target.path = std::env::temp_dir();
        c.target.kind = "directory".into();
        c
    }

    #[test]
    fn every_cell_of_one_run_gets_the_same_telemetry() {
        let h = SystemHook::new(&TelemetryPlan::default());
        h.before_timed("seg");
        h.phase_started(0, "run");
        std::thread::sleep(Duration::from_millis(50));
        h.phase_ended(0);
        let (mut a, mut b) = (cell("a"), cell("b"));
        h.after_timed(&mut a);
        h.after_timed(&mut b);
        let (sa, sb) = (a.system.unwrap(), b.system.unwrap());
        assert_eq!(sa.total, sb.total);
        assert_eq!(sa.phases, sb.phases);
        assert_eq!(sa.phases[0].name, "run");
        assert_eq!(sa.attempts, 1);
        assert_eq!(sa.interval_ms, 1000);
        // the next cell run starts afresh
        h.before_timed("next");
        let mut c = cell("c");
        h.after_timed(&mut c);
        assert!(c.system.is_none(), "no timed phase ran: nothing measured");
    }
}
