//! fio's disk utilisation (diskutil.c), from fslab's device sampling: the
//! device each job's target is on, over the runs of the job file (each
//! segment's cells share one sampling, counted once), and for a dm or md
//! device its members' mean figures (fio's aggr*). The normal output's
//! "Disk stats (read/write)" (print_disk_util) and the JSON's `disk_util`
//! (json_array_add_disk_util).

use crate::model::system::{DeviceData, DeviceRole, IostatPoint, SystemData};
use crate::model::{Cell, Report};
use serde_json::{json, Value};
use std::fmt::Write;

/// One device's deltas summed over the segments.
#[derive(Default, Clone)]
struct Sum {
    ios: [u64; 2],
    merges: [u64; 2],
    ticks: [u64; 2],
    in_queue: u64,
    io_ticks: u64,
    len_ms: u64,
}

impl Sum {
    fn add(&mut self, p: &IostatPoint) {
        self.ios[0] += p.read_ios;
        self.ios[1] += p.write_ios;
        self.merges[0] += p.read_merges;
        self.merges[1] += p.write_merges;
        self.ticks[0] += p.read_ticks_ms;
        self.ticks[1] += p.write_ticks_ms;
        self.in_queue += p.in_queue_ms;
        self.io_ticks += p.io_ticks_ms;
        self.len_ms += p.len_ms;
    }

    fn util(&self) -> f64 {
        match self.len_ms {
            0 => 0.0,
            l => (self.io_ticks as f64 * 100.0 / l as f64).min(100.0),
        }
    }
}

/// A top device and its members, summed.
pub(crate) struct Disk {
    name: String,
    sum: Sum,
    members: Vec<(String, Sum)>,
}

fn add_segment(disks: &mut Vec<Disk>, sys: &SystemData) {
    let Some(top) = sys.devices.iter().find(|d| d.above.is_none()) else {
        return;
    };
    let i = match disks.iter().position(|d| d.name == top.name) {
        Some(i) => i,
        None => {
            disks.push(Disk {
                name: top.name.clone(),
                sum: Sum::default(),
                members: Vec::new(),
            });
            disks.len() - 1
        }
    };
    let disk = &mut disks[i];
    disk.sum.add(&top.total);
    if !matches!(top.role, DeviceRole::Dm | DeviceRole::Md) {
        return;
    }
    let below = sys
        .devices
        .iter()
        .filter(|d: &&DeviceData| d.above.as_deref() == Some(&top.name));
    for m in below {
        match disk.members.iter_mut().find(|(n, _)| *n == m.name) {
            Some((_, s)) => s.add(&m.total),
            None => {
                let mut s = Sum::default();
                s.add(&m.total);
                disk.members.push((m.name.clone(), s));
            }
        }
    }
}

/// fio's aggregate of a dm/md device's members: their mean counts (ios,
/// merges, ticks per direction, in_queue) and the busiest one's utilisation.
fn aggr(members: &[(String, Sum)]) -> Option<([u64; 7], f64)> {
    let n = members.len() as u64;
    if n == 0 {
        return None;
    }
    let mean = |f: &dyn Fn(&Sum) -> u64| members.iter().map(|(_, s)| f(s)).sum::<u64>() / n;
    let util = members.iter().map(|(_, s)| s.util()).fold(0.0, f64::max);
    Some((
        [
            mean(&|s| s.ios[0]),
            mean(&|s| s.ios[1]),
            mean(&|s| s.merges[0]),
            mean(&|s| s.merges[1]),
            mean(&|s| s.ticks[0]),
            mean(&|s| s.ticks[1]),
            mean(&|s| s.in_queue),
        ],
        util,
    ))
}

/// The devices fio would report: none when no cell sampled one (--no-
/// telemetry, or a filesystem without a device, as fio's for tmpfs).
pub(crate) fn disks(r: &Report) -> Vec<Disk> {
    let mut disks: Vec<Disk> = Vec::new();
    let mut last: Option<&SystemData> = None;
    // fio counts the disks of jobs that do I/O to files: not its null
    // engine's, nor its metadata engines', nor a job's with disk_util=0
    let on_disk = |c: &&Cell| {
        let io = c.plan.io().is_some_and(|p| p.ioengine.engine.name() != "null");
        let off = c
            .plan
            .fio()
            .and_then(|f| f.options.get("disk_util"))
            .is_some_and(|v| v.trim() == "0");
        io && !off && super::common::meta_engine_bs(c).is_none()
    };
    for sys in r.cells.iter().filter(on_disk).filter_map(|c| c.system.as_ref()) {
        // the cells of one segment carry the same sampling
        if last != Some(sys) {
            add_segment(&mut disks, sys);
        }
        last = Some(sys);
    }
    disks
}

/// The normal output's block (print_disk_util), nothing without a device.
pub(crate) fn text(s: &mut String, r: &Report) {
    let disks = disks(r);
    if disks.is_empty() {
        return;
    }
    s.push_str("\nDisk stats (read/write):\n");
    for d in &disks {
        let u = &d.sum;
        let agg = aggr(&d.members).map_or(String::new(), |(a, util)| {
            format!(
                ", aggrios={}/{}, aggrmerge={}/{}, aggrticks={}/{}, aggrin_queue={}, aggrutil={util:3.2}%",
                a[0], a[1], a[2], a[3], a[4], a[5], a[6]
            )
        });
        let _ = writeln!(
            s,
            "{}  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:3.2}%{agg}",
            if d.members.is_empty() { "" } else { "  " },
            d.name,
            u.ios[0],
            u.ios[1],
            u.merges[0],
            u.merges[1],
            u.ticks[0],
            u.ticks[1],
            u.in_queue,
            u.util(),
        );
    }
}

/// The terse line's disk fields (print_disk_util and show_agg_stats with
/// `terse`): nine per device, `;slaves;` and eight more for a dm or md
/// device's members. fio appends them to every job's line, after the
/// millisecond latency buckets.
pub(crate) fn terse(s: &mut String, disks: &[Disk]) {
    for d in disks {
        let u = &d.sum;
        let _ = write!(
            s,
            ";{};{};{};{};{};{};{};{};{:3.2}%",
            d.name,
            u.ios[0],
            u.ios[1],
            u.merges[0],
            u.merges[1],
            u.ticks[0],
            u.ticks[1],
            u.in_queue,
            u.util()
        );
        if let Some((a, util)) = aggr(&d.members) {
            let _ = write!(
                s,
                ";slaves;{};{};{};{};{};{};{};{util:3.2}%",
                a[0], a[1], a[2], a[3], a[4], a[5], a[6]
            );
        }
    }
}

/// The JSON's `disk_util` array (json_array_add_disk_util), with fio's
/// keys (its "aggr_write_merge" among them).
pub(crate) fn json(r: &Report) -> Value {
    let list: Vec<Value> = disks(r)
        .iter()
        .map(|d| {
            let u = &d.sum;
            let mut o = json!({
                "name": d.name, "read_ios": u.ios[0], "write_ios": u.ios[1],
                "read_merges": u.merges[0], "write_merges": u.merges[1],
                "read_ticks": u.ticks[0], "write_ticks": u.ticks[1],
                "in_queue": u.in_queue, "util": u.util(),
            });
            if let Some((a, util)) = aggr(&d.members) {
                for (k, v) in [
                    "aggr_read_ios",
                    "aggr_write_ios",
                    "aggr_read_merges",
                    "aggr_write_merge",
                    "aggr_read_ticks",
                    "aggr_write_ticks",
                    "aggr_in_queue",
                ]
                .iter()
                .zip(a)
                {
                    o[*k] = json!(v);
                }
                o["aggr_util"] = json!(util);
            }
            o
        })
        .collect();
    Value::Array(list)
}
