//! fio's flow (flow.c): jobs that share a flow_id share its operations by
//! weight, across groups and threads, so this state is the process's.

use crate::stats::Instant;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// fio's flow (flow.c): the jobs of one flow_id count their operations
/// together, each may run its weight's share of them.
struct Flow {
    /// Operations admitted by every job of the flow, from 1 (as fio's).
    ops: AtomicU64,
    /// The weights of the jobs running in it.
    weight: AtomicU64,
}

/// The flows of the jobs running now, by flow_id (fio's flow_list): a flow
/// lives while a job of it does. Only jobs with `flow` set look here, once
/// when they start.
static FLOWS: Mutex<Vec<(u32, Weak<Flow>)>> = Mutex::new(Vec::new());

/// One job's place in its flow (fio's td->flow and td->flow_counter).
pub(super) struct FlowShare {
    flow: Arc<Flow>,
    weight: u64,
    /// Operations this job was admitted.
    mine: u64,
    sleep: Duration,
}

impl FlowShare {
    /// fio's flow_get and flow_init_job.
    pub(super) fn join(id: u32, weight: u32, sleep_us: u64) -> Self {
        let mut flows = FLOWS.lock().unwrap_or_else(|e| e.into_inner());
        flows.retain(|(_, w)| w.strong_count() > 0);
        let flow = match flows
            .iter()
            .find_map(|(i, w)| (*i == id).then(|| w.upgrade()).flatten())
        {
            Some(f) => f,
            None => {
                let f = Arc::new(Flow {
                    ops: AtomicU64::new(1),
                    weight: AtomicU64::new(0),
                });
                flows.push((id, Arc::downgrade(&f)));
                f
            }
        };
        flow.weight.fetch_add(weight as u64, Ordering::Relaxed);
        FlowShare {
            flow,
            weight: weight as u64,
            mine: 0,
            sleep: Duration::from_micros(sleep_us),
        }
    }

    /// fio's flow_threshold_exceeded: true (and counted) when this job may
    /// issue one more operation, false when it is ahead of its share.
    #[inline]
    pub(super) fn admit(&mut self) -> bool {
        let ops = self.flow.ops.load(Ordering::Relaxed).max(1);
        let total = self.flow.weight.load(Ordering::Relaxed).max(1);
        // mine / ops > weight / total, in integers
        if self.mine as u128 * total as u128 > self.weight as u128 * ops as u128 {
            return false;
        }
        self.flow.ops.fetch_add(1, Ordering::Relaxed);
        self.mine += 1;
        true
    }

    /// Held back: fio sleeps flow_sleep, or goes round its loop at once
    /// (here: lets the others run).
    pub(super) fn hold(&self, deadline: Option<Instant>) {
        let sleep = match deadline {
            Some(d) => self.sleep.min(d.saturating_duration_since(Instant::now())),
            None => self.sleep,
        };
        if sleep.is_zero() {
            std::thread::yield_now();
        } else {
            std::thread::sleep(sleep);
        }
    }
}

impl Drop for FlowShare {
    /// fio's flow_put: the job's operations and weight leave the flow, so
    /// that the jobs still running share it alone.
    fn drop(&mut self) {
        let _g = FLOWS.lock().unwrap_or_else(|e| e.into_inner());
        self.flow.ops.fetch_sub(self.mine, Ordering::Relaxed);
        self.flow.weight.fetch_sub(self.weight, Ordering::Relaxed);
    }
}
