//! Exact merging of the ranks' results: every rank sends its whole `RunOut`
//! (histograms included) to rank 0, which adds them up, so aggregate
//! percentiles are those of all operations and not an average of per-rank
//! percentiles. The merged result goes back to every rank, so that all ranks
//! take the same decisions after a phase (stop, go on, which files exist).

use crate::dist::Coordinator;
use crate::runner::{RankRun, RunOut, StonewallOut};
use crate::stats::series::IntervalPoint;
use crate::stats::OpKind;
use std::collections::BTreeMap;

/// Merges the ranks' runs on every rank (the identity for one process).
pub fn merge_across(coord: &dyn Coordinator, out: RunOut) -> RunOut {
    if coord.size() == 1 {
        return out;
    }
    let mut out = out;
    // Per-job statistics stay on their rank (the merged result keeps each
    // job's CPU time, errors and notes): with thousands of ranks, rank 0
    // would otherwise rebuild a histogram per job and kind.
    for j in &mut out.jobs {
        j.stats = Default::default();
    }
    let mine = serde_json::to_vec(&out).expect("run results serialise");
    drop(out);
    let merged = match coord.gather(&mine) {
        // one rank at a time: rank 0 holds one rank's histograms besides the sum
        Some(all) => serde_json::to_vec(&merge(
            all.iter()
                .map(|b| serde_json::from_slice(b).expect("ranks run the same fslab")),
        ))
        .expect("run results serialise"),
        None => Vec::new(),
    };
    serde_json::from_slice(&coord.broadcast(merged)).expect("rank 0 sends a merged run")
}

/// One rank's summary: what it did and how long it took.
fn rank_run(rank: usize, o: &RunOut) -> RankRun {
    let mut ops = BTreeMap::new();
    let mut bytes = BTreeMap::new();
    for d in OpKind::ALL {
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
pub fn merge(outs: impl IntoIterator<Item = RunOut>) -> RunOut {
    let mut ranks: Vec<RankRun> = Vec::new();
    let mut walls: Vec<StonewallOut> = Vec::new();
    let mut it = outs.into_iter().enumerate();
    let (_, mut m) = it.next().expect("at least one rank");
    ranks.push(rank_run(0, &m));
    walls.extend(m.stonewall.take().map(|s| s.of_rank(0)));
    let mut series: BTreeMap<u64, IntervalPoint> =
        std::mem::take(&mut m.series).into_iter().map(|p| (p.t_s, p)).collect();
    for (r, o) in it {
        ranks.push(rank_run(r, &o));
        for d in OpKind::ALL {
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
        let y = into.kinds.entry(*d).or_default();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::WorkerOut;
    use crate::stats::series::IntervalDir;
    use crate::stats::KindStats;

    fn run_of(values: &[u64], host: &str) -> RunOut {
        let mut stats: KindStats = Default::default();
        for &v in values {
            stats[OpKind::Write.idx()].record_ok(v, 4096);
        }
        stats[OpKind::Write.idx()].record_err(28);
        RunOut {
            stats: stats.clone(),
            jobs: vec![WorkerOut {
                stats,
                elapsed_ns: values.len() as u64 * 1000,
                stopped_ns: values.len() as u64 * 1000 + 7,
                ..Default::default()
            }],
            elapsed_ns: values.len() as u64 * 1000,
            series: vec![IntervalPoint {
                t_s: 0,
                kinds: [(
                    OpKind::Write,
                    IntervalDir {
                        ops: values.len() as u64,
                        bytes: 4096 * values.len() as u64,
                        mean_ns: 100,
                        p99_ns: values.len() as u64,
                        max_ns: values.len() as u64,
                    },
                )]
                .into(),
            }],
            interrupted: false,
            cpu_process: Default::default(),
            depth_counts: vec![0, values.len() as u64],
            halted_on_error: false,
            host: host.into(),
            ranks: Vec::new(),
            stonewall: None,
        }
    }

    #[test]
    fn merging_ranks_through_json_equals_recording_everything_in_one() {
        let mut rng = fastrand::Rng::with_seed(3);
        let all: Vec<u64> = (0..30_000).map(|_| rng.u64(500..80_000_000)).collect();
        let parts: Vec<&[u64]> = vec![&all[..1000], &all[1000..12_000], &all[12_000..]];
        // every rank's result crosses the wire as JSON, as in merge_across
        let outs: Vec<RunOut> = parts
            .iter()
            .enumerate()
            .map(|(r, p)| {
                let bytes = serde_json::to_vec(&run_of(p, &format!("h{r}"))).unwrap();
                serde_json::from_slice(&bytes).unwrap()
            })
            .collect();
        let m = merge(outs);
        let whole = run_of(&all, "h0");
        let (a, b) = (&m.stats[OpKind::Write.idx()], &whole.stats[OpKind::Write.idx()]);
        assert_eq!(
            (a.lat.count, a.lat.sum_ns, a.lat.sum_sq_ns),
            (b.lat.count, b.lat.sum_ns, b.lat.sum_sq_ns)
        );
        assert_eq!(
            (a.lat.min_ns, a.lat.max_ns, a.bytes),
            (b.lat.min_ns, b.lat.max_ns, b.bytes)
        );
        assert_eq!(a.lat.hist.to_sparse(), b.lat.hist.to_sparse());
        for p in [50.0, 99.0, 99.9, 99.99] {
            assert_eq!(a.lat.percentile(p), b.lat.percentile(p), "p{p}");
        }
        assert_eq!(a.errors.get(&28), Some(&3), "one ENOSPC per rank");
        assert_eq!(m.jobs.len(), 3);
        assert_eq!(
            m.ranks.iter().map(|r| r.ops[&OpKind::Write]).collect::<Vec<_>>(),
            vec![1000, 11_000, 18_000]
        );
        assert_eq!(m.ranks[2].host, "h2");
        assert_eq!(m.elapsed_ns, 18_000_000);
        assert_eq!(m.depth_counts, vec![0, 30_000]);
        let s = m.series[0].dir(OpKind::Write);
        assert_eq!(
            (s.ops, s.bytes, s.max_ns, s.p99_ns),
            (30_000, 30_000 * 4096, 18_000, 18_000)
        );
    }

    #[test]
    fn the_earliest_own_finisher_names_the_stonewall() {
        let wall = |at, job| StonewallOut {
            rule: "first".into(),
            at_ns: at,
            by_rank: None,
            by_job: job,
            last_ns: 0,
        };
        let mut outs: Vec<RunOut> = (0..3).map(|r| run_of(&[1, 2, 3], &format!("h{r}"))).collect();
        outs[0].stonewall = Some(wall(500, None)); // heard it from rank 2
        outs[1].stonewall = Some(wall(700, Some(1))); // finished too, later
        outs[2].stonewall = Some(wall(500, Some(0)));
        let s = merge(outs).stonewall.unwrap();
        assert_eq!((s.by_rank, s.by_job, s.at_ns), (Some(2), Some(0), 500));
        assert_eq!(s.last_ns, 3007, "the last rank to stop");
    }
}
