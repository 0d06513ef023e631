//! fio's pacing and control options against fio 3.33 on the same job files
//! (fio run as threads): a rate-limited job beside an unlimited one, rate
//! within ±5% of its target and ±10% of fio's, rate_min failing a job,
//! startdelay and exitall seen in the run's wall time; a mixed job's rates
//! per direction, thinktime_blocks and flow weights (job files 120-127),
//! each held by both tools to the same bounds.

use crate::util::*;
use std::path::Path;
use std::time::Duration;

/// Runs fio or fslab's `fio` on `job`; the JSON, the wall time and the code.
fn run(fio: bool, job: &Path, dir: &Path) -> (serde_json::Value, Duration, i32) {
    let r = run_fio(fio, job, dir);
    (r.json().clone(), r.wall, r.code)
}

/// bw_bytes of job `name`'s reads.
fn bw(j: &serde_json::Value, name: &str) -> f64 {
    j["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["jobname"] == name)
        .unwrap_or_else(|| panic!("no job {name} in {j}"))["read"]["bw_bytes"]
        .as_f64()
        .unwrap()
}

fn job_file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn a_rate_limited_job_beside_an_unlimited_one_paces_as_fio_does() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let job = job_file(
        work.path(),
        "rate.fio",
        "[global]\ndirectory=${FSLAB_FIO_DIR}\nsize=16m\nruntime=2\ntime_based\nthread\ndirect=1\n\
         [limited]\nrw=randread\nbs=4k\nrate=1m\n\
         [free]\nrw=randread\nbs=4k\n",
    );
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    // alternating rounds: the device's drift hits both tools alike
    for _ in 0..3 {
        let (f, _, _) = run(true, &job, work.path());
        let (s, _, code) = run(false, &job, work.path());
        assert_eq!(code, 0);
        theirs.push((bw(&f, "limited"), bw(&f, "free")));
        ours.push((bw(&s, "limited"), bw(&s, "free")));
    }
    eprintln!("fio {theirs:?}\nfslab {ours:?}");
    let target = (1 << 20) as f64;
    // A busy machine only ever slows a round down (a stall near the end of
    // 2 s cannot be caught up), never speeds a limited job past its rate:
    // the fastest round of each tool is its pacing, and no round may exceed
    // the target. (The median failed in a full run when two of three rounds were
    // stalled: 0.94× and 0.71× of the rate, fio's own 0.60× in one.)
    for (l, _) in ours.iter().chain(&theirs) {
        assert!(*l < 1.05 * target, "a round ran at {l} B/s, over the rate {target}");
    }
    let fastest = |v: &[(f64, f64)]| v.iter().map(|x| x.0).fold(0.0, f64::max);
    let (lim, lim_fio) = (fastest(&ours), fastest(&theirs));
    assert!((lim / target - 1.0).abs() < 0.05, "rate {lim} B/s, target {target}");
    assert!((lim / lim_fio - 1.0).abs() < 0.10, "rate {lim} B/s, fio's {lim_fio}");
    // the limit is the limited job's only: its neighbour runs free in both tools
    for (l, f) in ours.iter().chain(&theirs) {
        assert!(*f > 3.0 * l, "the unlimited job ran at {f} B/s beside {l}");
    }
    assert!(leftovers(work.path()).iter().all(|f| f.ends_with(".fio")));
}

#[test]
fn rate_min_fails_the_job_that_falls_under_it() {
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    // 64 KiB/s can never reach rate_min's 1 MiB/s; checked after fio's 2 s
    // settle; the run fails and fio's normal output names the job's error
    let job = job_file(
        work.path(),
        "min.fio",
        "[slow]\ndirectory=${FSLAB_FIO_DIR}\nrw=randread\nbs=4k\nsize=4m\nrate=64k\nrate_min=1m\n\
         rate_cycle=500\nruntime=10\ntime_based\n",
    );
    let out = fslab()
        .arg("fio")
        .arg(&job)
        .arg("--quiet")
        .env("FSLAB_FIO_DIR", work.path())
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(out.status.code(), Some(0), "{all}");
    assert!(all.contains("rate_min=1048576B/s not met"), "{all}");
}

#[test]
fn startdelay_and_exitall_shape_the_run() {
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    // the second job starts a second late and runs a second: two seconds in all
    let delayed = job_file(
        work.path(),
        "delay.fio",
        "[global]\ndirectory=${FSLAB_FIO_DIR}\nrw=randread\nsize=4m\nruntime=1\ntime_based\n\
         [now]\n[later]\nstartdelay=1\n",
    );
    let (j, wall, code) = run(false, &delayed, work.path());
    assert_eq!(code, 0);
    assert!(wall >= Duration::from_millis(1900), "ran {wall:?}");
    assert_eq!(j["jobs"].as_array().unwrap().len(), 2);
    // exitall: the short job's end stops the 60 s one
    let exits = job_file(
        work.path(),
        "exit.fio",
        "[global]\ndirectory=${FSLAB_FIO_DIR}\nrw=randread\nsize=4m\nthread\n\
         [short]\nexitall\nruntime=300ms\ntime_based\n[long]\nruntime=60\ntime_based\n",
    );
    let (j, wall, code) = run(false, &exits, work.path());
    assert_eq!(code, 0);
    assert!(wall < Duration::from_secs(20), "ran {wall:?}");
    let long = j["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["jobname"] == "long")
        .unwrap();
    assert!(long["job_runtime"].as_u64().unwrap() < 2000, "{long}");
    if require("fio", have("fio")) {
        // fio ends the long job the same way
        let (f, wall, _) = run(true, &exits, work.path());
        assert!(wall < Duration::from_secs(20), "fio ran {wall:?}");
        let long = f["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["jobname"] == "long")
            .unwrap();
        assert!(long["job_runtime"].as_u64().unwrap() < 2000, "{long}");
    }
}

/// Job `name`'s figure `key` ("iops", "total_ios") for direction `dir`.
fn fig(j: &serde_json::Value, name: &str, dir: &str, key: &str) -> f64 {
    j["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["jobname"] == name)
        .unwrap_or_else(|| panic!("no job {name} in {j}"))[dir][key]
        .as_f64()
        .unwrap()
}

/// The job file `file` of tests/fio-jobs, run by fslab and, when installed,
/// by fio on the same work: (tool, JSON) for each.
fn both(file: &str) -> Vec<(&'static str, serde_json::Value)> {
    let job = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio-jobs").join(file);
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let mut out = Vec::new();
    let (s, _, code) = run(false, &job, work.path());
    assert_eq!(code, 0, "{file}: {s}");
    out.push(("fslab", s));
    if require("fio", have("fio")) {
        out.push(("fio", run(true, &job, work.path()).0));
    }
    assert!(leftovers(work.path()).is_empty());
    out
}

/// Within `tol` (a fraction) of `want`.
fn near(got: f64, want: f64, tol: f64) -> bool {
    (got / want - 1.0).abs() <= tol
}

#[test]
fn a_mixed_job_issues_the_direction_behind_its_rate_as_fio_does() {
    // each direction meets its own rate although the mix draws them 50/50
    // (or 20/80): the schedule is absolute, so a late wake-up catches up
    for (tool, j) in both("120-pacing-mixed-rates.fio") {
        let (r, w) = (fig(&j, "mixed", "read", "iops"), fig(&j, "mixed", "write", "iops"));
        eprintln!("120 {tool}: read {r:.1} write {w:.1} IOPS");
        assert!(near(r, 256.0, 0.08) && near(w, 128.0, 0.08), "{tool}: {r} / {w} IOPS");
    }
    for (tool, j) in both("121-pacing-mixed-rate-iops.fio") {
        let (r, w) = (fig(&j, "seqmix", "read", "iops"), fig(&j, "seqmix", "write", "iops"));
        eprintln!("121 {tool}: read {r:.1} write {w:.1} IOPS");
        assert!(near(r, 200.0, 0.08) && near(w, 50.0, 0.08), "{tool}: {r} / {w} IOPS");
    }
    // writes have no rate: they fill the reads' gaps, far beyond them
    for (tool, j) in both("122-pacing-mixed-one-limited.fio") {
        let (r, w) = (
            fig(&j, "onelimit", "read", "iops"),
            fig(&j, "onelimit", "write", "iops"),
        );
        eprintln!("122 {tool}: read {r:.1} write {w:.1} IOPS");
        assert!(near(r, 100.0, 0.10), "{tool}: {r} read IOPS");
        assert!(w > 5.0 * r, "{tool}: {w} write IOPS beside {r}");
    }
}

#[test]
fn thinktime_blocks_thinks_a_full_thinktime_every_eighth_operation() {
    // at least 1 ms of think per 8 operations: at most 8 per ms, in both tools
    // (how far below depends on how late the machine wakes a sleeper)
    for (tool, j) in both("123-pacing-thinktime-blocks-psync.fio") {
        let iops = fig(&j, "thinker", "read", "iops");
        eprintln!("123 {tool}: {iops:.0} IOPS");
        assert!(iops > 0.0 && iops <= 8000.0 * 1.01, "{tool}: {iops} IOPS");
    }
}

#[test]
fn thinktime_iotime_thinks_after_each_stretch_of_io_time_as_fio_does() {
    // job file 128 with a per-I/O log: the completions come in stretches,
    // each followed by a gap of at least the 200 ms think. fio 3.33 counts
    // iotime + thinktime from the start of the last think (the job's start
    // for the first): the first stretch lasts 300 ms, the others 100 ms
    let job = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio-jobs/128-pacing-thinktime-iotime.fio");
    let text = std::fs::read_to_string(&job).unwrap();
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let logged = job_file(
        tmp.path(),
        "iotime.fio",
        &text.replace("time_based\n", "time_based\nwrite_iops_log=${FSLAB_FIO_DIR}/tio\n"),
    );
    let mut tools = vec![false];
    if require("fio", have("fio")) {
        tools.push(true);
    }
    for fio in tools {
        let work = tempfile::tempdir_in("/var/tmp").unwrap();
        let (j, _, code) = run(fio, &logged, work.path());
        let tool = if fio { "fio" } else { "fslab" };
        assert_eq!(code, 0, "{tool}: {j}");
        let log = std::fs::read_to_string(work.path().join("tio_iops.1.log")).unwrap();
        let times: Vec<u64> = log
            .lines()
            .map(|l| l.split(", ").next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(times.len() as f64, fig(&j, "iotime", "read", "total_ios"), "{tool}");
        // the stretches of I/O between thinks (a gap of 190 ms or more)
        let mut stretches = vec![(times[0], times[0])];
        for w in times.windows(2) {
            if w[1] - w[0] >= 190 {
                assert!(w[1] - w[0] >= 199, "{tool}: a think shorter than 200 ms: {w:?}");
                stretches.push((w[1], w[1]));
            }
            stretches.last_mut().unwrap().1 = w[1];
        }
        eprintln!("128 {tool}: stretches (ms) {stretches:?}");
        // 1.5 s: a 300 ms stretch, then 100 ms ones between 200 ms thinks,
        // so four thinks; fewer when a loaded machine wakes the sleeper late
        assert!((3..=5).contains(&stretches.len()), "{tool}: {stretches:?}");
        let len = |s: &(u64, u64)| s.1 - s.0;
        // the first think starts 300 ms after the job's start (the log's
        // zero), however late a loaded machine completed the first I/O
        assert!(stretches[0].1 >= 295, "{tool}: the first stretch: {stretches:?}");
        // every later stretch but the last (cut by the runtime): the iotime,
        // less what the think overslept (fio measures from the think's
        // start), so at most 100 ms (+ a late completion); a think that
        // overslept its iotime leaves no I/O before the next one
        for s in &stretches[1..stretches.len() - 1] {
            assert!(len(s) <= 200, "{tool}: {stretches:?}");
        }
    }
}

#[test]
fn flow_weights_share_the_operations_between_jobs_as_fio_does() {
    // counts, not rates: a job ahead of its weight's share waits for the others
    for (tool, j) in both("124-pacing-flow.fio") {
        let (h, l) = (
            fig(&j, "heavy", "read", "total_ios"),
            fig(&j, "light", "read", "total_ios"),
        );
        eprintln!("124 {tool}: heavy {h} light {l}");
        // fio's own share drifts on a busy machine (3742 / 1992 = 1.88 was
        // seen beside a build): fslab's is held to 3%, the peer's to 10%
        let within = if tool == "fio" { 0.10 } else { 0.03 };
        assert!(l >= 100.0 && near(h / l, 2.0, within), "{tool}: {h} / {l}");
    }
    for (tool, j) in both("125-pacing-flow-sleep.fio") {
        let n = |x| fig(&j, x, "read", "total_ios");
        let (a, b, c, free) = (n("a"), n("b"), n("c"), n("free"));
        eprintln!("125 {tool}: a {a} b {b} c {c} free {free}");
        assert!(
            a >= 50.0 && near(b / a, 1.0, 0.05) && near(c / a, 2.0, 0.05),
            "{tool}: {a} {b} {c}"
        );
        assert!(free > 0.0);
    }
}
