//! Exact merging of the ranks' results: every rank sends its whole `RunOut`
//! (histograms included) to rank 0, which adds them up, so aggregate
//! percentiles are those of all operations and not an average of per-rank
//! percentiles. The merged result goes back to every rank, so that all ranks
//! take the same decisions after a phase (stop, go on, which files exist).

use super::Coordinator;
use crate::runner::{RankRun, RunOut, StonewallOut};
use crate::stats::series::{IntervalDir, IntervalPoint};
use crate::stats::Dir;
use std::collections::BTreeMap;

/// Merges the ranks' runs on every rank (the identity for one process).
pub fn merge_across(coord: &dyn Coordinator, out: RunOut) -> RunOut {
    if coord.size() == 1 {
        return out;
    }
    let mine = serde_json::to_vec(&out).expect("run results serialise");
    let merged = match coord.gather(&mine) {
        Some(all) => {
            let outs: Vec<RunOut> = all
                .iter()
                .map(|b| serde_json::from_slice(b).expect("ranks run the same fslab"))
                .collect();
            serde_json::to_vec(&merge(outs)).expect("run results serialise")
        }
        None => Vec::new(),
    };
    serde_json::from_slice(&coord.broadcast(merged)).expect("rank 0 sends a merged run")
}

/// One rank's summary: what it did and how long it took.
fn rank_run(rank: usize, o: &RunOut) -> RankRun {
    let mut ops = BTreeMap::new();
    let mut bytes = BTreeMap::new();
    for d in Dir::ALL {
        let s = &o.stats[d.idx()];
        let n = s.lat.count;
        if n > 0 || s.error_count() > 0 {
            ops.insert(d, n);
            bytes.insert(d, s.bytes);
        }
    }
    RankRun {
        rank,
        host: o.host.clone(),
        jobs: o.jobs.len(),
        elapsed_ns: o.elapsed_ns,
        stopped_ns: o.jobs.iter().map(|j| j.stopped_ns).max().unwrap_or(0),
        ops,
        bytes,
    }
}

/// Adds up the runs of ranks 0, 1, ... (in that order).
pub fn merge(outs: Vec<RunOut>) -> RunOut {
    let ranks: Vec<RankRun> = outs.iter().enumerate().map(|(r, o)| rank_run(r, o)).collect();
    let mut walls: Vec<StonewallOut> = Vec::new();
    let mut it = outs.into_iter().enumerate();
    let (_, mut m) = it.next().expect("at least one rank");
    walls.extend(m.stonewall.take().map(|s| s.of_rank(0)));
    let mut series: BTreeMap<u64, IntervalPoint> =
        std::mem::take(&mut m.series).into_iter().map(|p| (p.t_s, p)).collect();
    for (r, o) in it {
        for d in Dir::ALL {
            m.stats[d.idx()] += &o.stats[d.idx()];
        }
        m.elapsed_ns = m.elapsed_ns.max(o.elapsed_ns);
        m.interrupted |= o.interrupted;
        m.halted_on_error |= o.halted_on_error;
        m.cpu_process += o.cpu_process;
        if m.depth_counts.len() < o.depth_counts.len() {
            m.depth_counts.resize(o.depth_counts.len(), 0);
        }
        for (a, b) in m.depth_counts.iter_mut().zip(&o.depth_counts) {
            *a += b;
        }
        for p in &o.series {
            let into = series.entry(p.t_s).or_insert_with(|| IntervalPoint {
                t_s: p.t_s,
                ..Default::default()
            });
            merge_point(into, p);
        }
        walls.extend(o.stonewall.map(|s| s.of_rank(r)));
        m.jobs.extend(o.jobs);
    }
    // The earliest finisher that reached the stonewall by itself names it;
    // without one (a deadline), the earliest time does.
    m.stonewall = walls
        .into_iter()
        .min_by_key(|s| (s.by_job.is_none(), s.at_ns))
        .map(|mut s| {
            s.last_ns = ranks.iter().map(|r| r.stopped_ns).max().unwrap_or(0);
            s
        });
    m.series = series.into_values().collect();
    m.ranks = ranks;
    m
}

/// Adds one rank's second to the merged second. Counts and bytes add up and
/// the maximum is exact; the per-second p99 of all ranks is not derivable
/// from per-rank p99s, so the merged one is the highest rank's (an upper bound).
fn merge_point(into: &mut IntervalPoint, p: &IntervalPoint) {
    for (d, x) in &p.kinds {
        let y = into.kinds.entry(*d).or_insert_with(IntervalDir::default);
        let n = y.ops + x.ops;
        if n > 0 {
            y.mean_ns = ((y.mean_ns as u128 * y.ops as u128 + x.mean_ns as u128 * x.ops as u128) / n as u128) as u64;
        }
        y.ops = n;
        y.bytes += x.bytes;
        y.p99_ns = y.p99_ns.max(x.p99_ns);
        y.max_ns = y.max_ns.max(x.max_ns);
    }
}
