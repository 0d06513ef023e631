//! Where the time goes, for data I/O: per device of the stack and
//! direction, the device's total request time (completed requests × await,
//! i.e. its read or write ticks) against fslab's total operation time
//! (operations × mean latency). With O_DIRECT at depth 1 on a raw device
//! this is await / mean latency; above 100% the device overlapped requests
//! (queue depth, read-ahead), far below it the time went elsewhere (page
//! cache, filesystem, CPU).

use crate::model::system::{DeviceData, LatencyShare};
use crate::model::DirResult;
use crate::stats::OpKind;

pub fn latency_shares(directions: &[DirResult], devices: &[DeviceData]) -> Vec<LatencyShare> {
    let mut out = Vec::new();
    for dir in [OpKind::Read, OpKind::Write] {
        // data I/O only: metadata phases (which also use these kinds) have a phase name
        let Some(r) = directions.iter().find(|r| r.dir == dir && r.phase.is_none()) else {
            continue;
        };
        for d in devices {
            let (ios, ticks_ms) = match dir {
                OpKind::Read => (d.total.read_ios, d.total.read_ticks_ms),
                _ => (d.total.write_ios, d.total.write_ticks_ms),
            };
            let fslab_us = r.ops as f64 * r.lat.mean_ns / 1000.0;
            out.push(LatencyShare {
                device: d.name.clone(),
                dir,
                ops: r.ops,
                mean_lat_us: r.lat.mean_ns / 1000.0,
                device_ios: ios,
                await_us: if ios == 0 {
                    0.0
                } else {
                    ticks_ms as f64 * 1000.0 / ios as f64
                },
                share_pct: (r.ops > 0 && fslab_us > 0.0).then(|| ticks_ms as f64 * 1000.0 / fslab_us * 100.0),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::system::{DeviceRole, IostatPoint};
    use crate::stats::OpStats;

    fn dir(kind: OpKind, ops: u64, mean_us: f64) -> DirResult {
        let mut r = DirResult::of(kind, &OpStats::default(), 1_000_000_000);
        r.ops = ops;
        r.lat.mean_ns = mean_us * 1000.0;
        r
    }

    #[test]
    fn the_device_share_of_fslab_latency() {
        // 1000 reads of 200 µs mean in fslab; the loop device completed 1000
        // requests in 150 ms (150 µs await), the disk under it 500 in 50 ms
        let dirs = [dir(OpKind::Read, 1000, 200.0), dir(OpKind::Fsync, 3, 1000.0)];
        let devs = [
            DeviceData {
                name: "loop0".into(),
                role: DeviceRole::Loop,
                total: IostatPoint {
                    read_ios: 1000,
                    read_ticks_ms: 150,
                    ..Default::default()
                },
                ..Default::default()
            },
            DeviceData {
                name: "vda".into(),
                above: Some("loop0".into()),
                total: IostatPoint {
                    read_ios: 500,
                    read_ticks_ms: 50,
                    write_ios: 9,
                    write_ticks_ms: 9,
                    ..Default::default()
                },
                ..Default::default()
            },
        ];
        let s = latency_shares(&dirs, &devs);
        assert_eq!(s.len(), 2, "reads only: fslab wrote nothing");
        assert_eq!(
            (s[0].device.as_str(), s[0].dir, s[0].ops, s[0].device_ios),
            ("loop0", OpKind::Read, 1000, 1000)
        );
        assert_eq!(s[0].await_us, 150.0);
        assert_eq!(s[0].mean_lat_us, 200.0);
        assert!((s[0].share_pct.unwrap() - 75.0).abs() < 1e-9);
        assert_eq!(s[1].await_us, 100.0);
        assert!((s[1].share_pct.unwrap() - 25.0).abs() < 1e-9);
        // no operations: no share
        let s = latency_shares(&[dir(OpKind::Write, 0, 0.0)], &devs);
        assert_eq!(s[1].share_pct, None);
        // metadata phases are not data I/O
        let mut m = dir(OpKind::Read, 10, 5.0);
        m.phase = Some("stat".into());
        assert!(latency_shares(&[m], &devs).is_empty());
    }
}
