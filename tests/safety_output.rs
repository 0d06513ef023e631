//! Safety, round 3 (issue 31), items 6, 7 and 9: pacing sleeps end at the
//! runtime's end, fio's per-I/O logs go to disk as they are made, and
//! result files never replace an input, never take a planted mode, never
//! hold a spreadsheet formula, and name their path when they fail.

use crate::util::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// Runs `fslab fio JOB --output-format=json`; the JSON and the wall time.
fn fio_json(job: &Path, dir: &Path) -> (serde_json::Value, Duration) {
    let r = run_fio(false, job, dir);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    (r.json().clone(), r.wall)
}

/// Issue 31 item 7: `rate=100` (bytes/s) with `runtime=2` ran 20-40 s, its
/// next 4 KiB due 40 s after the first. Every pacing wait (the rate's, a
/// poisson gap, thinktime, a queued engine's, a flow's) now ends at the
/// deadline, and the job reports what it did: one or two I/Os over its
/// whole 2 s runtime, as fio 3.33 does (runtime 2001 ms, 2046 B/s).
#[test]
fn a_slow_rate_ends_at_the_runtime_and_reports_it() {
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let head = "[global]\ndirectory=${FSLAB_FIO_DIR}\nsize=1m\nruntime=2\ntime_based\nrw=write\nbs=4k\n";
    // The bound is the (within 3 s), plus what starting fslab and
    // laying out its file take on this machine right now: a job that does
    // the same without pacing or runtime, measured here, so a loaded CI
    // machine's slower start does not fail the test (broken, it took 41 s).
    let quick = job_file(
        work.path(),
        "quick.fio",
        &format!("{}[quick]\n", head.replace("runtime=2\ntime_based\n", "io_size=4k\n")),
    );
    let t = Instant::now();
    let _ = fio_json(&quick, work.path());
    let startup = t.elapsed();
    for (name, pacing) in [
        ("rate", "rate=100\n"),
        ("poisson", "rate=100\nrate_process=poisson\n"),
        ("queued", "rate=100\nioengine=libaio\niodepth=4\n"),
        ("thinktime", "thinktime=20s\n"),
        ("flow", "rate=100\nflow=1\nflow_sleep=30000000\n"),
    ] {
        let job = job_file(
            work.path(),
            &format!("{name}.fio"),
            &format!("{head}[{name}]\n{pacing}"),
        );
        let (j, wall) = fio_json(&job, work.path());
        assert!(
            wall <= Duration::from_secs(3) + startup,
            "{name}: ran {wall:?} (startup {startup:?}), past its 2 s runtime"
        );
        let w = &j["jobs"][0]["write"];
        let (bytes, runtime, bw) = (
            w["io_bytes"].as_u64().unwrap(),
            w["runtime"].as_u64().unwrap(),
            w["bw_bytes"].as_u64().unwrap(),
        );
        // the whole runtime, its I/Os (at least the first), their bandwidth over it
        assert!((2000..=2100).contains(&runtime), "{name}: runtime {runtime} ms\n{j}");
        assert!(bytes >= 4096 && bytes % 4096 == 0, "{name}: {bytes} bytes");
        assert_eq!(
            bw,
            bytes * 1000 / runtime,
            "{name}: {bw} B/s for {bytes} B in {runtime} ms"
        );
    }
}
