//! The probe's cell from what the runner measured: per-phase figures,
//! samples and stalls from the grid's trace, the load's share per phase.

use super::{ns, phase_bounds};
use crate::errno::errno_name;
use crate::model::probe::{ContextPoint, ProbeData, ProbePhase, ProbeSample, Stall};
use crate::model::{Cell, CpuSummary, DirResult, LatSummary, TargetInfo};
use crate::plan::{Load, ProbePlan};
use crate::runner::{PacedOp, RankRun, RunOut};
use crate::stats::{LatStats, OpKind, OpStats};
use crate::workload::probe::kind;
use std::collections::BTreeMap;
use std::time::Duration;

/// What the run measured: the probe's group and the load's.
pub(super) struct Measured {
    pub(super) probe: RunOut,
    pub(super) load: Option<RunOut>,
    pub(super) start_unix_ns: u64,
    pub(super) context: Vec<ContextPoint>,
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
    /// Each rank's successful probes.
    rank_ops: Vec<u64>,
}

/// The phase a probe that started at `start_ns` belongs to.
fn phase_of(bounds: &[(Duration, Duration)], start_ns: u64) -> usize {
    bounds
        .iter()
        .position(|&(_, e)| start_ns < ns(e))
        .unwrap_or(bounds.len().saturating_sub(1))
}

/// Adds up the probes of every job (of every rank) per phase.
fn accumulate(plan: &ProbePlan, bounds: &[(Duration, Duration)], out: &RunOut) -> Vec<PhaseAcc> {
    let mut accs: Vec<PhaseAcc> = bounds.iter().map(|_| PhaseAcc::default()).collect();
    let (interval, stall) = (ns(plan.interval).max(1), ns(plan.stall));
    let ranks = out.ranks.len().max(1);
    let mut job_rank = Vec::new();
    for (r, rr) in out.ranks.iter().enumerate() {
        job_rank.extend(std::iter::repeat_n(r, rr.jobs));
    }
    for (j, job) in out.jobs.iter().enumerate() {
        let rank = job_rank.get(j).copied().unwrap_or(0);
        for op in &job.paced {
            let a = &mut accs[phase_of(bounds, op.start_ns)];
            a.rank_ops.resize(ranks, 0);
            a.probes += 1;
            a.missed += op.missed_after;
            if op.result >= 0 {
                a.lat.record(op.lat_ns);
                a.sched.record(op.sched_ns);
                a.rank_ops[rank] += 1;
                // coordinated omission: each skipped slot waited until this end
                let (k, end_t) = (op.slot_ns / interval, op.slot_ns + op.sched_ns);
                for j in k + 1..k + 1 + op.missed_after {
                    a.sched.record(end_t.saturating_sub(interval * j));
                }
            } else {
                *a.errors.entry(errno_name(-op.result as i32)).or_insert(0) += 1;
            }
            if op.lat_ns >= stall {
                a.stalls += 1;
            }
        }
    }
    accs
}

/// The samples and stalls of one grid (this rank's).
fn samples_and_stalls(
    plan: &ProbePlan,
    bounds: &[(Duration, Duration)],
    trace: &[PacedOp],
) -> (Vec<ProbeSample>, Vec<Stall>) {
    let stall = ns(plan.stall);
    let (mut samples, mut stalls) = (Vec::with_capacity(trace.len()), Vec::<Stall>::new());
    let (mut last_good, mut in_stall) = (0u64, false);
    for op in trace {
        let phase = &plan.phases[phase_of(bounds, op.start_ns)].name;
        let end_t = op.slot_ns + op.sched_ns;
        let slow = op.lat_ns >= stall;
        if slow {
            match stalls.last_mut().filter(|_| in_stall) {
                Some(s) => {
                    s.end_ns = end_t;
                    s.max_ns = end_t - s.start_ns;
                    s.min_ns = s.min_ns.max(op.lat_ns);
                    s.missed += op.missed_after;
                }
                None => stalls.push(Stall {
                    start_ns: last_good,
                    first_slot_ns: op.slot_ns,
                    end_ns: end_t,
                    max_ns: end_t - last_good,
                    min_ns: op.lat_ns,
                    missed: op.missed_after,
                    phase: phase.clone(),
                }),
            }
        } else {
            last_good = end_t;
        }
        in_stall = slow;
        samples.push(ProbeSample {
            t_ns: op.slot_ns,
            phase: phase.clone(),
            lat_ns: op.lat_ns,
            sched_lat_ns: op.sched_ns,
            missed_after: op.missed_after,
            errno: if op.result < 0 { -op.result as i32 } else { 0 },
        });
    }
    (samples, stalls)
}

/// What the load did in load phase `w` (its index among the load phases):
/// bytes (stream loads) and when it finished its SIZE, if all its workers did.
fn load_in_window(load: Option<&RunOut>, stream: bool, w: usize) -> (u64, Option<Duration>) {
    let Some(l) = load.filter(|_| stream) else {
        return (0, None);
    };
    let wins: Vec<_> = l.jobs.iter().filter_map(|j| j.windows.get(w)).collect();
    let bytes = wins.iter().map(|x| x.bytes).sum();
    let done = (!wins.is_empty() && wins.len() == l.jobs.len() && wins.iter().all(|x| x.finished))
        .then(|| wins.iter().map(|x| x.start_ns + x.stopped_ns).max().unwrap_or(0))
        .map(Duration::from_nanos);
    (bytes, done)
}

/// The probe's phases and one direction per phase.
fn phases(plan: &ProbePlan, m: &Measured, elapsed: u64) -> (Vec<ProbePhase>, Vec<DirResult>, Vec<String>) {
    let bounds = phase_bounds(plan);
    let accs = accumulate(plan, &bounds, &m.probe);
    let dir = kind(plan.op);
    let stream = matches!(plan.load, Some(Load::StreamWrite { .. }));
    let (mut phases, mut directions, mut early) = (Vec::new(), Vec::new(), Vec::new());
    let mut window = 0;
    for ((spec, a), &(s, e)) in plan.phases.iter().zip(&accs).zip(&bounds) {
        // a count-limited run ends before its nominal phase does
        let e = e.min(Duration::from_nanos(elapsed)).max(s);
        let (load_bytes, done) = if spec.load {
            window += 1;
            load_in_window(m.load.as_ref(), stream, window - 1)
        } else {
            (0, None)
        };
        // a stream that wrote its SIZE before the phase ended: its rate is
        // over the time it wrote, and the phase says when it stopped
        let load_end_at = done.filter(|&t| t < e);
        let secs = (load_end_at.unwrap_or(e).max(s) - s).as_secs_f64();
        directions.push(direction(dir, plan, a, &m.probe, spec.name.clone(), ns(e - s)));
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
            early.push(format!(
                "the load ({}) wrote its size {:.2} s into the {:.0} s {} phase: probes after that ran without it \
                 (load MB/s is over the time it wrote; a stream without SIZE writes until its phase ends)",
                plan.load_spec.as_deref().unwrap_or("load"),
                t.saturating_sub(s).as_secs_f64(),
                (e - s).as_secs_f64(),
                spec.name
            ));
        }
    }
    (phases, directions, early)
}

/// One phase's direction; a distributed run adds each rank's rate.
fn direction(dir: OpKind, plan: &ProbePlan, a: &PhaseAcc, out: &RunOut, phase: String, elapsed: u64) -> DirResult {
    let mut st = OpStats::new(&[ns(plan.stall)], true, false);
    st.lat = a.lat.clone();
    st.sched_lat = Some(a.sched.clone());
    let mut d = DirResult::of(dir, &st, elapsed);
    d.phase = Some(phase);
    d.elapsed_ns = Some(elapsed);
    d.errors = a.errors.clone();
    if !out.ranks.is_empty() {
        let per_rank: Vec<RankRun> = out
            .ranks
            .iter()
            .map(|r| RankRun {
                elapsed_ns: elapsed,
                ops: [(dir, a.rank_ops.get(r.rank).copied().unwrap_or(0))].into(),
                bytes: [(dir, 0)].into(),
                ..r.clone()
            })
            .collect();
        d.ranks = crate::app::cell::rank_rates(dir, &per_rank);
    }
    d
}

/// The io load's throughput, as warnings (its cell is not the run's).
fn io_load_notes(load: &RunOut) -> Vec<String> {
    // its time: the windows it ran in, for its longest-running job
    let elapsed = load
        .jobs
        .iter()
        .map(|j| j.windows.iter().map(|w| w.elapsed_ns).sum::<u64>())
        .max()
        .unwrap_or(0);
    OpKind::ALL
        .iter()
        .filter(|d| load.stats[d.idx()].lat.count > 0 || !load.stats[d.idx()].errors.is_empty())
        .map(|&d| {
            let r = DirResult::of(d, &load.stats[d.idx()], elapsed);
            format!(
                "io load: {} {:.0} IOPS {:.1} MB/s over {:.1} s",
                d.name(),
                r.iops,
                r.mb_s,
                elapsed as f64 / 1e9
            )
        })
        .collect()
}

/// The cell: a direction per phase and the probe data.
pub(super) fn probe_summary(cell_name: &str, plan: &ProbePlan, info: TargetInfo, m: Measured) -> Cell {
    let elapsed = m.probe.jobs.iter().map(|j| j.stopped_ns).max().unwrap_or(0);
    let (phases, directions, mut warnings) = phases(plan, &m, elapsed);
    if m.probe.halted_on_error {
        warnings.push("stopped at the first failed probe (--on-error stop)".into());
    }
    if let Some(l) = m.load.as_ref().filter(|_| matches!(plan.load, Some(Load::Io { .. }))) {
        warnings.extend(io_load_notes(l));
    }
    let trace = m.probe.local_jobs().first().map_or(&[][..], |j| &j.paced[..]);
    let (samples, stalls) = samples_and_stalls(plan, &phase_bounds(plan), trace);
    let job_errors = m
        .probe
        .jobs
        .iter()
        .chain(m.load.iter().flat_map(|l| &l.jobs))
        .filter_map(|j| j.error.clone())
        .collect();
    let cpu = m.probe.cpu_process;
    Cell {
        warnings,
        interrupted: m.probe.interrupted,
        elapsed_ns: elapsed,
        directions,
        cpu: CpuSummary::of_process(cpu, elapsed),
        job_errors,
        probe: Some(ProbeData {
            op: serde_json::to_value(plan.op)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            interval_ns: ns(plan.interval),
            stall_ns: ns(plan.stall),
            start_unix_ns: m.start_unix_ns,
            phases,
            samples,
            stalls,
            context: m.context,
            load: plan.load_spec.clone(),
        }),
        ..Cell::new(cell_name, crate::model::CellPlan::Probe(plan.clone()), info)
    }
}
