//! `fslab probe`: every op and load, stall truth under fsfreeze, errors,
//! cleanup.

use crate::util::*;
use std::process::Command;
use std::time::{Duration, SystemTime};

#[test]
fn every_op_probes_on_the_grid() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    for op in ["create", "stat", "mkdir", "append-fsync"] {
        fslab()
            .args([
                "probe",
                "--target",
                dir.path().to_str().unwrap(),
                "--op",
                op,
                "--interval",
                "20ms",
                "--count",
                "10",
            ])
            .args(["--quiet", "--output", &format!("json:{}", out.display())])
            .assert()
            .success();
        let j = read_json(&out);
        let p = &j["cells"][0]["probe"];
        assert_eq!(p["op"], op);
        let samples = p["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 10, "{op}");
        let mut last = None;
        for s in samples {
            // on the 20 ms grid; a slow probe (an fsync) may skip slots
            let t = s["t_ns"].as_u64().unwrap();
            assert_eq!(t % 20_000_000, 0, "{op}: slots on the grid");
            assert!(last.is_none_or(|l| t > l), "{op}: slots in order");
            last = Some(t);
            assert_eq!(s["errno"], 0, "{op}");
            assert!(s["sched_lat_ns"].as_u64().unwrap() >= s["lat_ns"].as_u64().unwrap());
        }
        assert_eq!(p["phases"][0]["probes"], 10);
        assert!(leftovers(dir.path()).is_empty(), "{op}");
    }
}

#[test]
fn stream_write_and_io_loads_run_in_their_phase_and_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let (out, csv) = (dir.path().join("p.json"), dir.path().join("t.csv"));
    fslab()
        .args(["probe", "--target", dir.path().to_str().unwrap(), "--interval", "50ms"])
        .args([
            "--phases",
            "idle:1s,load:2s,after:1s",
            "--load",
            "stream-write:8m,bs=64k,threads=2",
        ])
        .args(["--quiet", "--output", &format!("json:{}", out.display())])
        .args(["--output", &format!("timeline-csv:{}", csv.display())])
        .assert()
        .success();
    let j = read_json(&out);
    let p = &j["cells"][0]["probe"];
    let phases = p["phases"].as_array().unwrap();
    assert_eq!(
        phases.iter().map(|x| x["name"].as_str().unwrap()).collect::<Vec<_>>(),
        ["idle", "load", "after"]
    );
    assert_eq!(phases[0]["load_bytes"], 0, "no load while idle");
    assert!(
        phases[1]["load_bytes"].as_u64().unwrap() > 0,
        "the load wrote during its phase"
    );
    // 8 MiB into the page cache takes milliseconds, far under the 2 s phase
    // even on a loaded machine (256 MiB once took longer there): the phase
    // says when the load ended, its rate is over that time, and a warning
    // says the rest of the phase ran without load
    let (start, end) = (
        phases[1]["start_ns"].as_u64().unwrap(),
        phases[1]["end_ns"].as_u64().unwrap(),
    );
    let done = phases[1]["load_end_ns"].as_u64().expect("the stream finished early");
    assert!(start < done && done < end, "{start} < {done} < {end}");
    assert_eq!(phases[1]["load_bytes"], 8 << 20);
    let rate = (8u64 << 20) as f64 / ((done - start) as f64 / 1e9) / 1e6;
    let got = phases[1]["load_mb_s"].as_f64().unwrap();
    assert!(
        (got - rate).abs() / rate < 1e-6,
        "MB/s over the time it wrote: {got} vs {rate}"
    );
    let warned = j["cells"][0]["warnings"].as_array().unwrap().iter();
    assert_eq!(
        warned
            .filter(|w| w.as_str().unwrap().contains("wrote its size"))
            .count(),
        1,
        "{}",
        j["cells"][0]["warnings"]
    );
    let probes: u64 = phases
        .iter()
        .map(|x| x["probes"].as_u64().unwrap() + x["missed"].as_u64().unwrap())
        .sum();
    assert!((78..=81).contains(&probes), "4 s at 50 ms: {probes}");
    let ctx = p["context"].as_array().unwrap();
    assert!(ctx.len() >= 3, "a context point per second");
    assert!(ctx.iter().any(|c| c["load_bytes"].as_u64().unwrap() > 0));
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("cell,t_s,phase,lat_ms,sched_lat_ms,missed_after,errno\n"));
    assert_eq!(text.lines().count() - 1, p["samples"].as_array().unwrap().len());
    assert!(leftovers(dir.path()).is_empty(), "the load's files are gone");

    fslab()
        .args([
            "probe",
            "--target",
            dir.path().to_str().unwrap(),
            "--op",
            "stat",
            "--interval",
            "50ms",
        ])
        .args(["--phases", "load:2s", "--load", "io:--rw randwrite --bs 64k --size 16m"])
        .args(["--quiet", "--output", &format!("json:{}", out.display())])
        .assert()
        .success();
    let j = read_json(&out);
    let ph = &j["cells"][0]["probe"]["phases"][0];
    assert!(
        ph.get("load_end_ns").is_none(),
        "an io load runs to the phase's end: {ph}"
    );
    let w = &j["cells"][0]["warnings"];
    assert!(
        w.as_array()
            .unwrap()
            .iter()
            .any(|x| x.as_str().unwrap().starts_with("io load: write")),
        "{w}"
    );
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn bad_probe_flags_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for (args, want) in [
        (&["--op", "poke"][..], "invalid value 'poke' for '--op <OP>'"),
        (&["--interval", "0s"], "--interval: must be at least 1ms"),
        (&["--phases", "idle"], "--phases: 'idle': expected NAME:DURATION"),
        (&["--phases", "load:1s"], "--phases: a 'load' phase needs --load"),
        (
            &["--load", "stream-write:1g", "--phases", "idle:1s"],
            "--phases: --load runs during a phase named 'load'",
        ),
        (&["--load", "dd:1g"], "--load: 'dd:1g': expected stream-write"),
        (
            &["--load", "stream-write:1g,bs=2g"],
            "--load: 'stream-write:1g,bs=2g': needs 0 < bs",
        ),
        (&["--load", "stream-write:1g,fast"], "unknown option 'fast'"),
        (
            &["--load", "io:--rw sideways"],
            "--load: 'io:--rw sideways': invalid value 'sideways' for '--rw <PATTERN>'",
        ),
        (
            &["--runtime", "1s", "--phases", "idle:1s"],
            "--runtime: conflicts with --phases",
        ),
        (&["--count", "0"], "--count: must be at least 1"),
        (&["--output", "bonnie-csv"], "--output: bonnie-csv is for `fslab meta`"),
    ] {
        expect_usage(
            &[&["probe", "--target", dir.path().to_str().unwrap()][..], args].concat(),
            want,
        );
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn read_probe_needs_real_o_direct() {
    if !require_root_with(&["mount"]) {
        return;
    }
    let m = Mount::new("tmpfs", "tmpfs", "size=256m");
    let o = fslab()
        .args([
            "probe",
            "--target",
            m.path().to_str().unwrap(),
            "--op",
            "read",
            "--count",
            "3",
            "--interval",
            "10ms",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--op: read probes O_DIRECT reads") && err.contains("(tmpfs) does not honour O_DIRECT"),
        "{err}"
    );
    assert!(leftovers(m.path()).is_empty());
}

#[test]
fn ctrl_c_during_a_load_removes_everything() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    let json = format!("json:{}", out.display());
    let t = dir.path().to_str().unwrap();
    let mut child = start(&[
        "probe",
        "--target",
        t,
        "--interval",
        "50ms",
        "--phases",
        "load:60s",
        "--load",
        "stream-write:8g",
        "--quiet",
        "--output",
        &json,
    ]);
    wait_for_workdir(&mut child, dir.path());
    // the load phase has begun once the stream has written something (a
    // signal before it would abort at once, before any sample exists)
    let work = dir.path().join(&leftovers(dir.path())[0]);
    let started = std::time::Instant::now();
    let writing = || {
        let Ok(rd) = std::fs::read_dir(&work) else { return false };
        rd.flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .any(|e| e.metadata().map(|m| m.is_file() && m.len() > 0).unwrap_or(false))
    };
    while !writing() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the stream never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let res = signal_and_wait(child, libc::SIGINT);
    assert_eq!(res.status.code(), Some(130), "{}", String::from_utf8_lossy(&res.stderr));
    let j = read_json(&out);
    assert_eq!(j["interrupted"], true);
    assert!(!j["cells"][0]["probe"]["samples"].as_array().unwrap().is_empty());
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}

/// The truth test: a 500 ms fsfreeze must show as a stall of at least 500 ms
/// starting when the freeze started (±50 ms), with the slots it made us miss.
#[test]
fn a_frozen_filesystem_shows_as_a_stall_at_the_right_time() {
    if !require_root_with(&["losetup", "mkfs.xfs", "mount", "fsfreeze"]) {
        return;
    }
    for fs in ["xfs", "ext4"] {
        let m = Scratch::new(fs, 320);
        let res = tempfile::tempdir().unwrap();
        let out = res.path().join("p.json");
        let mut child = start(&[
            "probe",
            "--target",
            m.path().to_str().unwrap(),
            "--op",
            "create",
            "--interval",
            "10ms",
            "--runtime",
            "3s",
            "--quiet",
            "--output",
            &format!("json:{}", out.display()),
        ]);
        std::thread::sleep(Duration::from_millis(1000));
        let mp = m.path().to_str().unwrap();
        // The freeze happens somewhere inside `fsfreeze -f` (it syncs first).
        let before = SystemTime::now();
        assert!(Command::new("fsfreeze").args(["-f", mp]).status().unwrap().success());
        let frozen_at = SystemTime::now();
        std::thread::sleep(Duration::from_millis(500));
        assert!(Command::new("fsfreeze").args(["-u", mp]).status().unwrap().success());
        assert!(child.wait().unwrap().success());
        let j = read_json(&out);
        let p = &j["cells"][0]["probe"];
        let start_unix = p["start_unix_ns"].as_u64().unwrap();
        let rel =
            |t: SystemTime| t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos() as i64 - start_unix as i64;
        let (earliest, latest) = (rel(before), rel(frozen_at));
        let stalls = p["stalls"].as_array().unwrap();
        let big: Vec<_> = stalls
            .iter()
            .filter(|s| s["max_ns"].as_u64().unwrap() >= 500_000_000)
            .collect();
        assert_eq!(big.len(), 1, "{fs}: one stall of 500 ms or more: {stalls:?}");
        let s = big[0];
        let start = s["start_ns"].as_u64().unwrap() as i64;
        assert!(
            start >= earliest - 50_000_000 && start <= latest + 50_000_000,
            "{fs}: stall starts at {start} ns, the freeze between {earliest} and {latest} ns"
        );
        assert!(
            s["missed"].as_u64().unwrap() >= 40,
            "{fs}: ~50 slots of 10 ms missed: {s}"
        );
        assert!(p["phases"][0]["missed"].as_u64().unwrap() >= 40);
    }
}
