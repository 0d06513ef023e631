//! The system beside every cell (issue 21): a device latency injected under
//! a loop device is the await fslab reports for it, and the seed plan
//! raw-vs-fs shows, per cell, the device's await beside fslab's latency and
//! the device's share, for the loop device and the disk under its image.
//!
//! A test binary of its own, not a module of tests/tests.rs: those tests run
//! in parallel threads of one binary and keep both CPUs of a small machine
//! busy, and every wakeup on the injected device's path (the loop driver's
//! kworker, the FUSE daemon) would then wait for a CPU, adding up to a
//! millisecond to each request: the ±15% would measure the test suite's load,
//! not fslab. Cargo runs test binaries one after another. The tests of this
//! binary take [`SERIAL`] for the same reason. (Interference, which needs a
//! quiet machine too, has its own binary: tests/interference.rs.)

#[allow(dead_code)]
mod faultfs;
#[allow(dead_code)]
mod util;

use faultfs::{DelayedLoop, Op};
use std::sync::Mutex;
use util::*;

/// Held by each test of this binary: they run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn fuse_loop_ok() -> bool {
    require("root", is_root())
        && require("/dev/fuse", Path::new("/dev/fuse").exists())
        && require("losetup", have("losetup"))
}

/// `fslab ARGS --quiet --output json:F`: the result, after checking it succeeded.
fn run_json(args: &[&str]) -> Value {
    let res = tempfile::tempdir().unwrap();
    let out = res.path().join("r.json");
    let o = fslab()
        .args(args)
        .args(["--quiet", "--output"])
        .arg(format!("json:{}", out.display()))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "fslab {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    read_json(&out)
}

/// The device named `name` in a cell's stack.
fn device<'a>(cell: &'a Value, name: &str) -> &'a Value {
    let devs = cell["system"]["devices"]
        .as_array()
        .unwrap_or_else(|| panic!("no system.devices in the cell: {}", cell["system"]));
    devs.iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in the device stack {devs:?}"))
}

fn f64_of(v: &Value, what: &str) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{what} is not a number: {v}"))
}

/// `/sys/block/NAME/stat`: the counters (reads, merges, sectors, ticks, writes ...).
fn kernel_stat(name: &str) -> Vec<u64> {
    std::fs::read_to_string(format!("/sys/block/{name}/stat"))
        .unwrap()
        .split_whitespace()
        .map(|f| f.parse().unwrap())
        .collect()
}

/// What one 3 s depth-1 O_DIRECT run on the delayed loop device reported.
#[derive(Debug)]
struct DeviceRun {
    /// The loop device's await over the cell (r_await or w_await), ms.
    await_ms: f64,
    /// Its completed requests in that direction, and their mean size (KiB).
    ios: u64,
    req_kib: f64,
    /// fslab's operations and their mean latency, ms.
    ops: u64,
    lat_ms: f64,
    /// The device's share of fslab's latency in that direction, %.
    share_pct: Option<f64>,
    /// FUSE requests of the direction the daemon saw, by size, and the
    /// mean time the daemon took for one (the injected delay as it was).
    fuse: std::collections::BTreeMap<u32, u64>,
    fuse_ms: f64,
    /// The loop device's counters over the whole fslab process (the cell is
    /// a part of it): requests, and their mean time, ms.
    kernel_ios: u64,
    kernel_await_ms: f64,
    /// The reported await of each second with requests.
    per_second: Vec<f64>,
}

fn device_run(lo: &DelayedLoop, rw: &str) -> DeviceRun {
    let (dir, op, prefix) = match rw {
        "randread" => ("read", Op::Read, "r"),
        _ => ("write", Op::Write, "w"),
    };
    lo.faults().reset_sizes();
    let before = kernel_stat(lo.name());
    let j = run_json(&[
        "io",
        "--target",
        &lo.dev,
        "--allow-device",
        "--direct",
        "--rw",
        rw,
        "--bs",
        "4k",
        "--runtime",
        "3s",
    ]);
    let after = kernel_stat(lo.name());
    // fields 1/4 (reads, read ticks) and 5/8 (writes, write ticks)
    let (i, t) = if dir == "read" { (0, 3) } else { (4, 7) };
    let (kios, kticks) = (after[i] - before[i], after[t] - before[t]);
    let kernel_await_ms = kticks as f64 / kios.max(1) as f64;
    let cell = &j["cells"][0];
    let dev = device(cell, lo.name());
    let total = &dev["total"];
    let d = cell["directions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["dir"] == dir)
        .unwrap_or_else(|| panic!("no {dir} direction: {}", cell["directions"]));
    let share = cell["system"]["latency_share"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["device"] == lo.name() && s["dir"] == dir);
    DeviceRun {
        await_ms: f64_of(&total[format!("{prefix}_await_ms")], "await"),
        ios: total[format!("{dir}_ios")].as_u64().unwrap(),
        req_kib: f64_of(&total[format!("{prefix}areq_kib")], "areq"),
        ops: d["ops"].as_u64().unwrap(),
        lat_ms: f64_of(&d["lat"]["mean_ns"], "mean latency") / 1e6,
        share_pct: share.and_then(|s| s["share_pct"].as_f64()),
        fuse: lo.faults().sizes(op),
        fuse_ms: lo.faults().mean_service(op).unwrap_or_default().as_secs_f64() * 1e3,
        kernel_ios: kios,
        kernel_await_ms,
        per_second: dev["samples"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p[format!("{dir}_ios")].as_u64().unwrap_or(0) > 0)
            .filter_map(|p| p[format!("{prefix}_await_ms")].as_f64())
            .collect(),
    }
}

/// Done-when 2: a loop device over an image on the test FUSE filesystem,
/// opened FOPEN_DIRECT_IO (no page cache between the loop driver and the
/// daemon) and read with O_DIRECT (no page cache of the loop device), so
/// every 4 KiB read of fslab is one request of the loop device and one FUSE
/// read; the daemon sleeps 10 ms in each. The loop device's reported r_await
/// is the injected delay within the issue's ±15%; without the delay it is
/// not (the FUSE round trip alone, far below). Likewise for writes.
///
/// 10 ms, not less: on the way of each request the loop driver's kworker
/// waits for a CPU, and on a 2-CPU VM with other work that is a fixed 0.1 to
/// 1 ms per request whatever the delay (the daemon itself runs SCHED_FIFO,
/// see faultfs::realtime). It is real device time, which fslab rightly
/// reports, but against 4 ms it would leave little of the ±15%.
#[test]
fn injected_device_latency_is_the_reported_await() {
    let _serial = serial();
    if !fuse_loop_ok() {
        return;
    }
    let lo = DelayedLoop::new(64);
    let inject = Duration::from_millis(10);
    let inject_ms = inject.as_secs_f64() * 1e3;
    for (rw, op) in [("randread", Op::Read), ("randwrite", Op::Write)] {
        lo.faults().clear();
        let plain = device_run(&lo, rw);
        lo.faults().delay(op, inject);
        let delayed = device_run(&lo, rw);
        lo.faults().clear();
        for (what, r) in [("without a delay", &plain), ("injected", &delayed)] {
            eprintln!(
                "{rw} on {} (loop dio {}), {what}: reported await {:.3} ms over {} requests of {:.1} KiB \
                 (per second {:.3?}); fslab {} ops, mean {:.3} ms, device share {:?}%; \
                 the daemon's mean time {:.3} ms, FUSE requests {:?}; the kernel's counters over the \
                 whole run: {} requests, await {:.3} ms",
                lo.dev,
                lo.loop_dio(),
                r.await_ms,
                r.ios,
                r.req_kib,
                r.per_second,
                r.ops,
                r.lat_ms,
                r.share_pct,
                r.fuse_ms,
                r.fuse,
                r.kernel_ios,
                r.kernel_await_ms,
            );
            // one fslab operation = one device request = one FUSE request
            assert_eq!(r.req_kib, 4.0, "{rw} {what}: device requests of 4 KiB: {r:?}");
            assert!(
                r.ios > 0 && r.ios <= r.kernel_ios,
                "{rw} {what}: the cell's requests of the loop device, a part of the kernel's count: {r:?}"
            );
            assert!(
                r.kernel_ios >= r.ops,
                "{rw} {what}: each operation reached the device: {r:?}"
            );
            assert_eq!(
                r.fuse,
                [(4096, r.kernel_ios)].into(),
                "{rw} {what}: each device request reached the daemon as one 4 KiB request: {r:?}"
            );
        }
        let err = (delayed.await_ms - inject_ms).abs() / inject_ms;
        assert!(
            err <= 0.15,
            "{rw}: reported await {:.3} ms with {inject_ms} ms injected: {:.1}% off (±15% allowed). \
             The kernel's own counters say {:.3} ms and the daemon's sleeps took {:.3} ms: when these are \
             off too, the machine (or its host: steal) was too busy to keep the injected delay, \
             load {}: {delayed:?}",
            delayed.await_ms,
            err * 100.0,
            delayed.kernel_await_ms,
            delayed.fuse_ms,
            std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim()
        );
        assert!(
            plain.await_ms < inject_ms * 0.85,
            "{rw}: without the delay the await {:.3} ms is not below the band of {inject_ms} ms: {plain:?}",
            plain.await_ms
        );
    }
}

/// The seed plan examples/seed-raw-vs-fs.toml, shortened: the same
/// filesystems (raw, ext4, XFS) and workload, one repeat of 2 s, 4 jobs of
/// 16 MiB on 512 MiB images.
fn short_seed_plan() -> String {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/seed-raw-vs-fs.toml")).unwrap();
    let mut plan: toml::Table = text.parse().expect("the seed plan parses");
    plan.insert("repeat".into(), 1.into());
    let fss = plan["filesystem"].as_array_mut().expect("[[filesystem]]");
    let types: Vec<&str> = fss.iter().map(|f| f["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["raw", "ext4", "xfs"], "the seed plan's filesystems");
    for f in fss.iter_mut() {
        f.as_table_mut().unwrap().insert("size".into(), "512m".into());
    }
    let w = plan["workload"].as_array_mut().expect("[[workload]]");
    assert_eq!(w.len(), 1);
    let w = w[0].as_table_mut().unwrap();
    assert_eq!(w["rw"].as_str(), Some("randrw"));
    w.insert("jobs".into(), 4.into());
    w.insert("size".into(), "16m".into());
    w.insert("runtime".into(), "2s".into());
    toml::to_string(&plan).unwrap()
}

/// The lines of the text block of the lab cell `header` ("raw #1 randrw-16k-9to1"):
/// from its header line to the next cell's.
fn text_block<'a>(text: &'a str, header: &str, headers: &[String]) -> Vec<&'a str> {
    let mut lines = text.lines().skip_while(|l| !l.starts_with(&format!("{header}:")));
    let first = lines
        .next()
        .unwrap_or_else(|| panic!("no system block '{header}:' in the text output:\n{text}"));
    std::iter::once(first)
        .chain(lines.take_while(|l| !headers.iter().any(|h| l.starts_with(&format!("{h}:")))))
        .collect()
}

/// Done-when 1: `fslab run` of the seed plan (shortened) reports, per cell
/// and direction, the await of the loop device and of the disk under its
/// image beside fslab's mean latency, with each device's share of it, in the
/// JSON (`system.latency_share`) and in the text output's system block.
#[test]
fn the_seed_plan_shows_where_the_time_goes_per_cell() {
    let _serial = serial();
    if !require_root_with(&["mkfs.ext4", "mkfs.xfs", "mount", "losetup"]) {
        return;
    }
    let scratch = scratch_dir();
    let out_dir = tempfile::tempdir().unwrap();
    let plan = out_dir.path().join("seed-raw-vs-fs-short.toml");
    std::fs::write(&plan, short_seed_plan()).unwrap();
    let json = out_dir.path().join("r.json");
    let out = fslab()
        .arg("run")
        .arg(&plan)
        .args(["--quiet", "--output", "text", "--scratch-dir"])
        .arg(scratch.path())
        .arg("--output")
        .arg(format!("json:{}", json.display()))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "fslab run: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = read_json(&json);
    let cells = j["cells"].as_array().unwrap();
    let fss: Vec<&str> = cells.iter().map(|c| c["lab"]["filesystem"].as_str().unwrap()).collect();
    assert_eq!(fss, ["raw", "ext4", "xfs"], "one cell per filesystem");
    let headers: Vec<String> = cells
        .iter()
        .map(|c| {
            let l = &c["lab"];
            format!(
                "{} #{} {}",
                l["filesystem"].as_str().unwrap(),
                l["repeat"],
                l["workload"].as_str().unwrap()
            )
        })
        .collect();
    for (cell, header) in cells.iter().zip(&headers) {
        let sys = &cell["system"];
        let devs = sys["devices"]
            .as_array()
            .unwrap_or_else(|| panic!("{header}: no system.devices: {sys}"));
        // the stack: the scratch loop device, then the disk under its image
        let lo = devs
            .iter()
            .find(|d| d["role"] == "loop")
            .unwrap_or_else(|| panic!("{header}: no loop device in the stack {devs:?}"));
        let disk = devs
            .iter()
            .find(|d| d["role"] == "disk" && d["above"] == lo["name"])
            .unwrap_or_else(|| panic!("{header}: no disk under {} in the stack {devs:?}", lo["name"]));
        let block = text_block(&text, header, &headers);
        for dir in ["read", "write"] {
            let line = block
                .iter()
                .map(|l| l.trim())
                .find(|l| l.starts_with(&format!("{dir}:")))
                .unwrap_or_else(|| panic!("{header}: no '{dir}:' line in its system block:\n{}", block.join("\n")));
            let mean_ns = cell["directions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["dir"] == dir)
                .unwrap_or_else(|| panic!("{header}: no {dir} direction"))["lat"]["mean_ns"]
                .as_f64()
                .unwrap();
            let mut summary = format!("{header} {dir}: fslab mean {:.3} ms", mean_ns / 1e6);
            for d in [lo, disk] {
                let name = d["name"].as_str().unwrap();
                let s = sys["latency_share"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|s| s["device"] == name && s["dir"] == dir)
                    .unwrap_or_else(|| panic!("{header}: no {dir} latency share for {name}: {}", sys["latency_share"]));
                assert!(
                    s["device_ios"].as_u64().unwrap() > 0,
                    "{header}: {name} did {dir} I/O: {s}"
                );
                // a share is a part of fslab's time (at most 100%), or there
                // is none and the reason is said (the disk served other I/O:
                // on a busy machine other processes write to it too)
                let Some(share) = s["share_pct"].as_f64() else {
                    let why = s["unattributed"]
                        .as_str()
                        .unwrap_or_else(|| panic!("{header}: {name} {dir}: neither a share nor why: {s}"));
                    assert!(
                        !(header.starts_with("raw") && d["role"] == "loop" && dir == "read"),
                        "{header}: the raw loop device's reads are fslab's alone, yet: {why}"
                    );
                    assert!(
                        line.contains(&format!("{name} await ")) && line.contains("(share —, see below)"),
                        "{header}: {line}"
                    );
                    assert!(
                        block.iter().any(|l| l.trim().starts_with(&format!("— {name} {dir}: "))),
                        "{header}: the reason '{why}' is not in the text:\n{}",
                        block.join("\n")
                    );
                    summary += &format!(", {name}: no share ({why})");
                    continue;
                };
                assert!(share > 0.0 && share <= 100.0, "{header}: {name} {dir}: {s}");
                // "loop3 await 398 µs (97%)": the await and the share, as in the JSON
                let want = format!("({share:.0}%)");
                assert!(
                    line.split(", ")
                        .any(|seg| seg.starts_with(&format!("{name} await ")) && seg.ends_with(&want)),
                    "{header}: '{name} await ... {want}' not in the text: {line}"
                );
                summary += &format!(
                    ", {name} ({}) await {:.3} ms share {share:.0}%",
                    d["role"].as_str().unwrap(),
                    s["await_us"].as_f64().unwrap() / 1e3
                );
            }
            assert!(line.contains("fslab "), "{header}: fslab's latency beside: {line}");
            eprintln!("{summary}");
        }
    }
    assert!(
        scratch_leftovers(scratch.path()).is_empty(),
        "{:?}",
        scratch_leftovers(scratch.path())
    );
}
