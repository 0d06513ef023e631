//! fio's queue-depth search (latency_target, latency_window,
//! latency_percentile, latency_run) in `fslab fio`, and against fio 3.33 on
//! the same job files: the depth found, the fields fio reports, the final
//! window's fresh statistics, and the failures fio has.

use crate::util::*;
use serde_json::Value;
use std::path::Path;

/// Runs fio or fslab's `fio` on `job`: the JSON (Null when there is none),
/// the exit code and stderr.
fn run(fio: bool, job: &Path, dir: &Path) -> (Value, i32, String) {
    let r = run_fio(fio, job, dir);
    (r.json.unwrap_or(Value::Null), r.code, r.stderr)
}

/// A one-job file: randread of 4 MiB on `engine`, then `extra` lines.
fn one_job(engine: &str, iodepth: u32, extra: &str) -> String {
    format!(
        "[j]\ndirectory=${{FSLAB_FIO_DIR}}\nioengine={engine}\niodepth={iodepth}\nrw=randread\nbs=4k\nsize=4m\n{extra}"
    )
}

fn u(j: &Value, key: &str) -> u64 {
    j["jobs"][0][key]
        .as_u64()
        .unwrap_or_else(|| panic!("no {key} in {}", j["jobs"][0]))
}

/// The share (percent) of submissions in fio's in-flight bucket `label`.
fn bucket(j: &Value, label: &str) -> f64 {
    j["jobs"][0]["iodepth_level"][label].as_f64().unwrap()
}

/// fio's buckets whose every depth is above `d` (fio labels a bucket with
/// its lowest depth: "4" holds 4 to 7).
fn above(d: u64) -> Vec<&'static str> {
    [("2", 2), ("4", 4), ("8", 8), ("16", 16), ("32", 32), (">=64", 64)]
        .into_iter()
        .filter(|(_, lo)| *lo > d)
        .map(|(l, _)| l)
        .collect()
}

#[test]
fn a_generous_target_reaches_iodepth_and_the_final_window_starts_afresh() {
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    // every operation meets 10 s: 1, 2, 4, 8, then 8 again (settled), the
    // stats reset, one more 50 ms window, and the job ends long before 30 s
    let job = job_file(
        work.path(),
        "gen.fio",
        &one_job(
            "io_uring",
            8,
            "runtime=30\ntime_based\nlatency_target=10s\nlatency_window=50ms\nlatency_percentile=99\n",
        ),
    );
    let (j, code, err) = run(false, &job, work.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(u(&j, "latency_depth"), 8);
    assert_eq!(u(&j, "latency_target"), 10_000_000_000);
    assert_eq!(u(&j, "latency_window"), 50_000);
    assert_eq!(j["jobs"][0]["latency_percentile"].as_f64(), Some(99.0));
    let runtime_ms = u(&j, "job_runtime");
    // the final window lasts a window; the search, not the runtime, ended it
    assert!((50..30_000).contains(&runtime_ms), "job_runtime {runtime_ms} ms");
    let ios = j["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert!(ios > 0);
    // fresh stats: the final window filled the queue from empty once, so at
    // most one submission found nothing else in flight (the depth-1 window
    // before it would have added every one of its operations here); a
    // share under 0.1% that is not empty shows as 0.1%, as fio's
    let at_one = bucket(&j, "1") * ios as f64 / 100.0;
    assert!(
        at_one <= 1.5 || bucket(&j, "1") == 0.1,
        "{at_one} submissions at depth 1 of {ios}"
    );
    for l in above(8) {
        assert_eq!(bucket(&j, l), 0.0, "bucket {l} above the depth");
    }
    assert!(leftovers(work.path()).iter().all(|f| f.ends_with(".fio")));
}

#[test]
fn latency_run_keeps_searching_until_the_runtime_ends() {
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let job = job_file(
        work.path(),
        "run.fio",
        &one_job(
            "io_uring",
            4,
            "runtime=400ms\ntime_based\nlatency_target=10s\nlatency_window=20ms\nlatency_run=1\n",
        ),
    );
    let (j, code, err) = run(false, &job, work.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(u(&j, "latency_depth"), 4);
    // no reset: the depth-1 window's submissions are all still counted
    let ios = j["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert!(
        bucket(&j, "1") * ios as f64 / 100.0 > 1.5,
        "{}",
        j["jobs"][0]["iodepth_level"]
    );
    // and the job ran its whole runtime (fio's runtime counts whole ms)
    assert!(u(&j, "job_runtime") >= 399, "{}", u(&j, "job_runtime"));
}

#[test]
fn an_unmeetable_target_stays_at_depth_one_or_fails_at_100_percent() {
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    // 1 µs from submission to completion: no io_uring operation meets it
    let lenient = job_file(
        work.path(),
        "lenient.fio",
        &one_job(
            "io_uring",
            16,
            "runtime=300ms\ntime_based\nlatency_target=1\nlatency_window=50ms\nlatency_percentile=50\n",
        ),
    );
    let (j, code, err) = run(false, &lenient, work.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(u(&j, "latency_depth"), 1);
    assert_eq!(bucket(&j, "1"), 100.0, "{}", j["jobs"][0]["iodepth_level"]);
    // the default percentile (100): the first miss at depth 1 fails the job
    let strict = job_file(
        work.path(),
        "strict.fio",
        &one_job("io_uring", 16, "runtime=300ms\ntime_based\nlatency_target=1\n"),
    );
    let (_, code, err) = run(false, &strict, work.path());
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("exceeds latency_target (1000 ns) at queue depth 1"),
        "{err}"
    );
    assert!(leftovers(work.path()).iter().all(|f| f.ends_with(".fio")));
}

#[test]
fn depths_and_fields_as_fio_reports_them() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let cases = [
        // (job, the depth both must settle at, or None: whatever they find)
        (
            one_job(
                "io_uring",
                8,
                "runtime=30\ntime_based\nlatency_target=10s\nlatency_window=50ms\n",
            ),
            Some(8),
        ),
        (
            one_job(
                "io_uring",
                16,
                "runtime=300ms\ntime_based\nlatency_target=1\nlatency_window=50ms\nlatency_percentile=50\n",
            ),
            Some(1),
        ),
        // a sync engine: one at a time, the search's depth reported all the same
        (
            one_job(
                "psync",
                1,
                "runtime=30\ntime_based\nlatency_target=10s\nlatency_window=50ms\n",
            ),
            Some(1),
        ),
        // a target some depths meet: where each settles depends on the machine
        (
            one_job(
                "io_uring",
                32,
                "runtime=3\ntime_based\nlatency_target=100us\nlatency_window=100ms\nlatency_percentile=95\n",
            ),
            None,
        ),
    ];
    for (k, (text, want)) in cases.iter().enumerate() {
        let job = job_file(work.path(), &format!("c{k}.fio"), text);
        let (f, fcode, ferr) = run(true, &job, work.path());
        let (s, scode, serr) = run(false, &job, work.path());
        assert_eq!(fcode, 0, "fio, case {k}: {ferr}");
        assert_eq!(scode, 0, "fslab, case {k}: {serr}");
        for key in ["latency_target", "latency_window", "latency_percentile"] {
            assert_eq!(
                f["jobs"][0][key].as_f64(),
                s["jobs"][0][key].as_f64(),
                "case {k}: {key}"
            );
        }
        let (fd, sd) = (u(&f, "latency_depth"), u(&s, "latency_depth"));
        let iodepth: u64 = text
            .lines()
            .find_map(|l| l.strip_prefix("iodepth="))
            .unwrap()
            .parse()
            .unwrap();
        eprintln!("case {k}: fio settled at {fd}, fslab at {sd} (iodepth {iodepth})");
        assert!((1..=iodepth).contains(&sd), "case {k}: {sd}");
        if let Some(w) = want {
            assert_eq!((fd, sd), (*w, *w), "case {k}");
        }
        // fslab's final window never has more in flight than the depth found.
        // (Not asserted where the depth depends on the machine: fio's
        // stable-count rule may try one deeper during the final window.)
        if want.is_some() {
            for l in above(sd) {
                assert_eq!(bucket(&s, l), 0.0, "case {k}: bucket {l} above depth {sd}");
            }
        }
    }
    assert!(leftovers(work.path()).iter().all(|f| f.ends_with(".fio")));
}
