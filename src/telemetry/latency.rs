//! Where the time goes, for data I/O: per device of the stack and
//! direction, the device's total request time (completed requests × await,
//! i.e. its read or write ticks) against fslab's total operation time
//! (operations × mean latency). With O_DIRECT at depth 1 on a raw device
//! this is await / mean latency; far below 100% the time went elsewhere
//! (page cache, filesystem, CPU).
//!
//! A share is a part of fslab's time, so it is never above 100%: where the
//! device's time is not fslab's alone, no share is printed but the reason.
//! Seen before this rule: 166%, 226% and 700% on a root filesystem whose
//! disk served other tenants while fslab hit the page cache, and a disk
//! under a loop device at 67% beside the loop device's 62% (the disk's
//! await included others' I/O).

use crate::model::system::{DeviceData, LatencyShare};
use crate::model::DirResult;
use crate::stats::OpKind;
use crate::units::Bytes;

/// Bytes a device may move beyond what its user moved and still be
/// fslab's alone: the filesystem's journal and metadata, read-ahead at the
/// ends of a file: 8 MiB plus 10%, as the foreign-I/O check below a loop
/// device allows (`telemetry::interference`).
const OWN_SLACK_BYTES: u64 = 8 << 20;
const OWN_SLACK_SHARE: f64 = 0.10;

/// `/proc/diskstats` counts request time in whole milliseconds.
const TICK_US: f64 = 1000.0;

pub fn latency_shares(directions: &[DirResult], devices: &[DeviceData]) -> Vec<LatencyShare> {
    let mut out: Vec<LatencyShare> = Vec::new();
    for dir in [OpKind::Read, OpKind::Write] {
        // data I/O only: metadata phases (which also use these kinds) have a phase name
        let Some(r) = directions.iter().find(|r| r.dir == dir && r.phase.is_none()) else {
            continue;
        };
        let io = |d: &DeviceData| match dir {
            OpKind::Read => (d.total.read_ios, d.total.read_ticks_ms, d.total.read_bytes),
            _ => (d.total.write_ios, d.total.write_ticks_ms, d.total.write_bytes),
        };
        let fslab_us = r.ops as f64 * r.lat.mean_ns / 1000.0;
        for d in devices {
            let (ios, ticks_ms, bytes) = io(d);
            let device_us = ticks_ms as f64 * 1000.0;
            // whose I/O this device carries: fslab's (the top of the stack),
            // or the device above it (below a loop device)
            let above = d.above.as_ref().and_then(|a| devices.iter().find(|x| &x.name == a));
            let (user, user_bytes, user_us) = match above {
                Some(a) => {
                    let (_, t, b) = io(a);
                    (a.name.as_str(), b, Some(t as f64 * 1000.0))
                }
                None => ("fslab", r.bytes, None),
            };
            let slack = OWN_SLACK_BYTES + (user_bytes as f64 * OWN_SLACK_SHARE) as u64;
            let verb = dir.name();
            let unattributed = if r.ops == 0 || fslab_us <= 0.0 || ios == 0 {
                None
            } else if bytes > user_bytes + slack {
                Some(format!(
                    "{} moved {} in {verb}s, {user} {}: it also served other I/O (others', writeback, read-ahead), so its time is not fslab's",
                    d.name,
                    Bytes(bytes),
                    Bytes(user_bytes)
                ))
            } else if device_us > fslab_us + TICK_US {
                Some(format!(
                    "{}'s {verb} requests took {:.1} ms in all, more than fslab's {verb}s waited ({:.1} ms): requests fslab did not wait for (read-ahead, writeback, others')",
                    d.name,
                    device_us / 1000.0,
                    fslab_us / 1000.0
                ))
            } else if user_us.is_some_and(|u| device_us > u + TICK_US) {
                Some(format!(
                    "{}'s {verb} requests took longer in all than those of {user} above it: it served other I/O too",
                    d.name
                ))
            } else {
                None
            };
            out.push(LatencyShare {
                device: d.name.clone(),
                dir,
                ops: r.ops,
                mean_lat_us: r.lat.mean_ns / 1000.0,
                device_ios: ios,
                await_us: if ios == 0 { 0.0 } else { device_us / ios as f64 },
                // within one tick of fslab's time (the ticks' rounding): 100%
                share_pct: (r.ops > 0 && fslab_us > 0.0 && unattributed.is_none())
                    .then(|| (device_us / fslab_us * 100.0).min(100.0)),
                unattributed,
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

    fn dev(name: &str, above: Option<&str>, ios: u64, ticks_ms: u64, bytes: u64) -> DeviceData {
        DeviceData {
            name: name.into(),
            above: above.map(Into::into),
            total: IostatPoint {
                read_ios: ios,
                read_ticks_ms: ticks_ms,
                read_bytes: bytes,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn a_share_is_never_above_its_whole() {
        // 1000 cached 4 KiB reads of 2 µs (2 ms in all) while the disk
        // served others: 300 requests, 1.4 s (was "700%")
        let mut d = dir(OpKind::Read, 1000, 2.0);
        d.bytes = 4096 * 1000;
        let s = latency_shares(&[d.clone()], &[dev("vda", None, 300, 1400, 300 * 4096)]);
        assert_eq!(s[0].share_pct, None);
        assert!(
            s[0].unattributed
                .as_deref()
                .unwrap()
                .contains("more than fslab's reads waited"),
            "{s:?}"
        );
        // a device that moved far more bytes than fslab read: others' I/O
        let mut d = dir(OpKind::Read, 1000, 200.0);
        d.bytes = 4096 * 1000;
        let s = latency_shares(&[d.clone()], &[dev("vda", None, 5000, 100, 64 << 20)]);
        assert_eq!(s[0].share_pct, None);
        assert!(
            s[0].unattributed.as_deref().unwrap().contains("served other I/O"),
            "{s:?}"
        );
        // a disk under a loop device whose requests took longer in all than
        // the loop device's (was "loop8 62%, vda 67%")
        let devs = [
            dev("loop8", None, 1000, 124, 4096 * 1000),
            dev("vda", Some("loop8"), 1000, 134, 4096 * 1000),
        ];
        let s = latency_shares(&[d.clone()], &devs);
        assert!((s[0].share_pct.unwrap() - 62.0).abs() < 1e-9);
        assert_eq!(s[1].share_pct, None);
        assert!(
            s[1].unattributed.as_deref().unwrap().contains("loop8 above it"),
            "{s:?}"
        );
        // every share of a cell that is fslab's alone is at most 100%
        let devs = [
            dev("loop8", None, 1000, 199, 4096 * 1000),
            dev("vda", Some("loop8"), 1000, 150, 4096 * 1000),
        ];
        for l in latency_shares(&[d], &devs) {
            let p = l.share_pct.unwrap();
            assert!(p <= 100.0 && l.unattributed.is_none(), "{l:?}");
        }
    }
}
