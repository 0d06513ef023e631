//! `--anatomy` and `--explain-slow` (issue 36), measured for real: BPF on
//! tracepoints over ext4 and XFS scratch filesystems.
//!
//! - The layers of create, unlink (meta with a 256-byte xattr) and fsync
//!   (the append + fdatasync probe) sum to the end-to-end time, and the
//!   journal shows in fsync's.
//! - A shortened examples/seed-create-under-stream.toml: fdatasync probes
//!   under a stream stall, and at least 90 % of the stalled time is
//!   attributed to named wait sites with kernel stacks.
//! - Without root the cell says in one line what it could not observe, and
//!   still measures.

use crate::util::*;
use serde_json::Value;

/// The kind's figures in a cell's anatomy.
fn kind<'a>(cell: &'a Value, k: &str) -> &'a Value {
    cell["anatomy"]["kinds"]
        .as_array()
        .unwrap_or_else(|| panic!("no anatomy kinds: {}", cell["anatomy"]))
        .iter()
        .find(|e| e["kind"] == k)
        .unwrap_or_else(|| panic!("no {k} in {}", cell["anatomy"]))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The largest value of a sparse histogram (its last bucket).
fn hist_max(f: &Value) -> u64 {
    f["hist"]["buckets"]
        .as_array()
        .and_then(|b| b.last())
        .map_or(0, |b| u(&b[0]))
}

/// The layers partition each operation: on CPU is the end-to-end time less
/// what the kernel measured off the CPU. What could go wrong is the two
/// clocks disagreeing (an operation whose measured sleeps exceed it): none
/// may, and the layers' means then sum to the end-to-end mean (within 5 %),
/// and no layer's largest value exceeds the end-to-end largest.
fn check_partition(label: &str, k: &Value) {
    let ops = u(&k["ops"]);
    assert!(ops > 0, "{label}: {k}");
    assert_eq!(
        u(&k["overshoot"]),
        0,
        "{label}: operations with more off-CPU time than end to end"
    );
    let total = u(&k["total"]["sum_ns"]) as f64;
    let layers = k["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 7, "{label}");
    let sum: f64 = layers.iter().map(|l| u(&l["sum_ns"]) as f64).sum();
    let off = (sum - total).abs() / total;
    eprintln!(
        "{label}: {ops} ops, layers' means sum to {:.2}% of the end-to-end mean",
        sum * 100.0 / total
    );
    assert!(off <= 0.05, "{label}: layers sum {sum} vs end to end {total}");
    let top = hist_max(&k["total"]);
    for l in layers {
        assert!(hist_max(l) <= top, "{label}: a layer beyond its whole: {l}");
        // every operation is in every layer's histogram, zeros too
        let n: u64 = l["hist"]["buckets"].as_array().unwrap().iter().map(|b| u(&b[1])).sum();
        assert_eq!(n, ops, "{label}");
    }
}

#[test]
fn layers_sum_to_end_to_end_on_ext4_and_xfs() {
    if !require_root_with(&["losetup", "mkfs.ext4", "mkfs.xfs"]) {
        return;
    }
    for fs in ["ext4", "xfs"] {
        let s = Scratch::new(fs, 1024);
        let out = tempfile::tempdir().unwrap();
        let meta = out.path().join("meta.json");
        let text = fslab()
            .args([
                "meta",
                "--target",
                s.path().to_str().unwrap(),
                "--files",
                "4k",
                "--order",
                "seq",
            ])
            .args(["--xattr", "user.test:256", "--anatomy", "--width", "200", "--quiet"])
            .args(["--output", &format!("json:{}", meta.display()), "--output", "text"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("anatomy (BPF on tracepoints)"), "{text}");
        assert!(text.contains("block layer"), "{text}");
        let j = read_json(&meta);
        let cell = &j["cells"][0];
        assert!(
            cell["anatomy"]["unobserved"].is_null(),
            "{}",
            cell["anatomy"]["unobserved"]
        );
        for k in ["create", "delete"] {
            check_partition(&format!("{fs} {k}"), kind(cell, k));
        }
        // the tracing's own cost, from the kernel's BPF run statistics: the
        // programs ran (a create on a loop device switches and submits)
        let cost = &cell["anatomy"]["tracer_cost"];
        assert!(u(&cost["runs"]) > 0 && u(&cost["kernel_ns"]) > 0, "{cost}");
        assert!(text.contains("anatomy: tracing cost "), "{text}");
        let probe = out.path().join("probe.json");
        fslab()
            .args(["probe", "--target", s.path().to_str().unwrap(), "--op", "append-fsync"])
            .args(["--interval", "10ms", "--phases", "idle:3s", "--anatomy", "--quiet"])
            .args(["--output", &format!("json:{}", probe.display())])
            .assert()
            .success();
        let j = read_json(&probe);
        let f = kind(&j["cells"][0], "fsync");
        check_partition(&format!("{fs} fsync"), f);
        // an fdatasync of an append waits for the journal (jbd2) or the log (XFS)
        let journal = &f["layers"][3];
        assert!(
            u(&journal["nonzero"]) > 0,
            "{fs}: fsync never waited on the journal: {f}"
        );
        // the device saw the probe's writes, through the block tracepoints
        let devices = j["cells"][0]["anatomy"]["devices"].as_array().unwrap();
        assert!(
            devices.iter().any(|d| d["dir"] == "write" && u(&d["requests"]) > 0),
            "{devices:?}"
        );
        // and the LBA map has the scratch device's writes, the journal's among them
        let maps = j["cells"][0]["anatomy"]["lba"].as_array().unwrap();
        let scratch = maps
            .iter()
            .find(|m| m["name"].as_str().unwrap_or("").starts_with("loop"))
            .unwrap_or_else(|| panic!("no LBA map of the loop device: {maps:?}"));
        let bytes: Vec<u64> = scratch["bytes"].as_array().unwrap().iter().map(u).collect();
        assert!(bytes[0] > 0, "{fs}: data written: {bytes:?}");
        if fs == "ext4" {
            assert!(bytes[2] > 0, "ext4: jbd2's writes: {bytes:?}");
        }
    }
}

/// A shortened examples/seed-create-under-stream.toml: its append +
/// fdatasync workload on ext4 and XFS with the plan's 6 GiB stream (it must
/// outgrow the dirty limit, 4.6 GiB on a 24 GiB machine: a 3 GiB stream
/// left XFS without a stall) on 8 GiB scratch filesystems. Here fdatasync
/// then stalls for 50-300 ms (journal commits and log forces behind the
/// stream's writeback, writeback throttling); the threshold is 50 ms so
/// that a faster machine still has stalls to explain.
#[test]
fn explain_slow_names_where_stalled_probes_slept() {
    if !require_root_with(&["losetup", "mkfs.ext4", "mkfs.xfs"]) {
        return;
    }
    let scratch = scratch_dir();
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("stall.toml");
    std::fs::write(
        &plan,
        r#"name = "stall"
repeat = 1
fresh = true
[[filesystem]]
name = "ext4"
type = "ext4"
size = "8g"
[[filesystem]]
name = "xfs"
type = "xfs"
size = "8g"
[[workload]]
name = "append-fdatasync"
type = "probe"
op = "append-fsync"
interval = "100ms"
phases = "idle:1s,load:20s,after:1s"
load = "stream-write:6g,bs=1m"
"#,
    )
    .unwrap();
    let json = dir.path().join("r.json");
    let html = dir.path().join("r.html");
    let text = fslab()
        .current_dir(dir.path())
        .args([
            "run",
            plan.to_str().unwrap(),
            "--scratch-dir",
            scratch.path().to_str().unwrap(),
        ])
        .args(["--explain-slow", "50ms", "--width", "200"])
        .args(["--output", &format!("json:{}", json.display()), "--output", "text"])
        .args(["--output", &format!("html:{}", html.display())])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    let j = read_json(&json);
    for c in cells(&j) {
        let a = &c["anatomy"];
        let slow = a["slow"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no slow operations: {a}", c["name"]));
        assert!(!slow.is_empty(), "{}", c["name"]);
        let total: u64 = slow.iter().map(|s| u(&s["latency_ns"])).sum();
        let named: u64 = slow.iter().map(|s| u(&s["attributed_ns"])).sum();
        let share = named as f64 / total as f64;
        eprintln!(
            "{}: {} probes over 50 ms, {:.1}% of their time attributed to named wait sites with stacks",
            c["name"],
            slow.len(),
            share * 100.0
        );
        assert!(share >= 0.9, "{}: {share}", c["name"]);
        for s in slow {
            assert!(u(&s["latency_ns"]) >= 50_000_000, "{s}");
            let longest = &s["sleeps"][0];
            assert!(!longest["site"].as_str().unwrap().is_empty(), "{s}");
            assert!(!longest["stack"].as_array().unwrap().is_empty(), "{s}");
        }
        assert!(u(&a["slow_threshold_ns"]) == 50_000_000);
        // who woke a long sleep: the journal thread, the flusher, a completion
        let woken = slow
            .iter()
            .flat_map(|s| s["sleeps"].as_array().into_iter().flatten())
            .any(|s| !s["waker"].as_str().unwrap_or("").is_empty());
        assert!(woken, "{}: no sleep names its waker", c["name"]);
        // --explain-slow alone takes a sleep's stack only after 0.5 ms
        // asleep (threshold / 100), when the sleeper comes back
        let lazy = "only sleeps of 500 µs or more are traced to a stack";
        assert!(a["unobserved"].to_string().contains(lazy), "{}", a["unobserved"]);
    }
    assert!(
        text.contains("% of their time attributed to named wait sites with stacks"),
        "{text}"
    );
    assert!(text.contains(" in jbd2_") || text.contains(" in xlog_"), "{text}");
    // the HTML report: the stalls' explanations on the probe timeline's
    // stall bands (hover) and in the anatomy section
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("id=\"anatomy\""), "no anatomy section");
    assert!(page.contains("<title>stall "), "no stall bands");
    assert!(
        page.contains("% of its time is in named sleeps.</title>"),
        "no explanation on a stall's hover"
    );
}

#[test]
fn without_root_a_cell_says_what_it_could_not_observe_and_measures() {
    if !require_root_with(&["setpriv"]) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    std::fs::create_dir(&t).unwrap();
    std::process::Command::new("chmod")
        .args(["777", d.path().to_str().unwrap(), t.to_str().unwrap()])
        .status()
        .unwrap();
    let json = t.join("m.json");
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(fslab_path())
        .args([
            "meta",
            "--target",
            t.to_str().unwrap(),
            "--files",
            "500",
            "--anatomy",
            "--width",
            "200",
        ])
        .args(["--output", &format!("json:{}", json.display()), "--output", "text"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}\n{err}");
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("anatomy: not observed"))
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(lines[0].contains("needs root"), "{}", lines[0]);
    let j = read_json(&json);
    let c = &j["cells"][0];
    assert!(
        u(&c["directions"][0]["ops"]) == 500,
        "it still measures: {}",
        c["directions"][0]
    );
    assert!(c["anatomy"]["kinds"].is_null(), "{}", c["anatomy"]);
}
