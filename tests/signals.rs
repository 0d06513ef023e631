//! Ctrl-C and SIGTERM: stop cleanly, write what was measured marked
//! interrupted, and leave no files behind.

use crate::util::*;
use std::time::Duration;

fn signal_after(sig: i32, wait: Duration, args: &[&str]) -> (std::process::Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out = format!("json:{}", dir.path().join("r.json").display());
    let mut all = vec!["io", "--target", dir.path().to_str().unwrap()];
    all.extend_from_slice(args);
    all.extend(["--output", &out]);
    let mut child = start(&all);
    // counted from the end of validation, however slow the machine
    wait_for_workdir(&mut child, dir.path());
    std::thread::sleep(wait);
    (signal_and_wait(child, sig), dir)
}

/// `signal_after`, but the signal goes once the timed random reads run (the
/// layout before them only writes; the telemetry sampler reads a few /proc
/// files a second, far from 5000): a fixed 1.5 s after validation was
/// still inside the layout of a busy machine, and no cell was measured.
fn signal_while_reading(sig: i32, args: &[&str]) -> (std::process::Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out = format!("json:{}", dir.path().join("r.json").display());
    let mut all = vec!["io", "--rw", "randread", "--target", dir.path().to_str().unwrap()];
    all.extend_from_slice(args);
    all.extend(["--output", &out]);
    warm_calibration();
    let mut child = start(&all);
    wait_for_workdir(&mut child, dir.path());
    wait_for_reads(&mut child, 5000);
    (signal_and_wait(child, sig), dir)
}

#[test]
fn ctrl_c_writes_an_interrupted_result_and_removes_the_files() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let (out, dir) = signal_while_reading(sig, &["--size", "8m", "--jobs", "2", "--runtime", "60s"]);
        // 128 + the signal, as a shell reports it: 130 SIGINT, 143 SIGTERM
        assert_eq!(
            out.status.code(),
            Some(128 + sig),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let j = read_json(&dir.path().join("r.json"));
        assert_eq!(j["interrupted"], true);
        assert_eq!(j["cells"][0]["interrupted"], true);
        let ops = j["cells"][0]["directions"][0]["ops"].as_u64().unwrap();
        assert!(ops > 0, "what was measured before the stop is kept");
        let elapsed = j["cells"][0]["elapsed_ns"].as_u64().unwrap();
        assert!(elapsed < 5_000_000_000, "elapsed is up to the stop: {elapsed}");
        assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
    }
}

/// A run that ends its timed phase because of the signal writes its cell:
/// the thread that handles signals could look only after the phase had
/// ended, find no phase polling the stop flag and abort the run with no
/// cell (2 of 6 `--direct` runs did, before `interrupt` kept that a phase
/// had stopped on the signal).
#[test]
fn a_phase_that_ends_on_the_first_signal_keeps_its_cell() {
    for round in 0..6 {
        let (out, dir) = signal_while_reading(libc::SIGINT, &["--direct", "--size", "16m", "--runtime", "60s"]);
        assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
        let j = read_json(&dir.path().join("r.json"));
        assert_eq!(
            j["cells"][0]["interrupted"],
            true,
            "round {round}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn ctrl_c_during_layout_leaves_nothing_and_a_valid_result() {
    // 4 GiB to lay out: the signal arrives long before it is done.
    let (out, dir) = signal_after(
        libc::SIGINT,
        Duration::from_millis(300),
        &["--size", "4g", "--runtime", "10s"],
    );
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let j = read_json(&dir.path().join("r.json"));
    assert_eq!(j["interrupted"], true);
    assert_eq!(j["cells"].as_array().unwrap().len(), 0);
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}

/// SIGINT or SIGTERM at random moments during every workload and a scratch
/// plan: fslab stops with 128 + the signal (or finishes), the result file (there is one
/// once the work began) is valid JSON marked as it should be, and nothing of
/// fslab's is left.
#[test]
fn twenty_random_signals_across_every_workload_leave_nothing() {
    let scratch_ok = is_root() && have("mkfs.ext4") && have("losetup");
    let mut rng = fastrand::Rng::new();
    let loadfile = "/usr/share/dbench/client.txt";
    let replay_ok = std::path::Path::new(loadfile).exists();
    for trial in 0..20 {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let t = dir.path().to_str().unwrap().to_string();
        let json = dir.path().join("r.json");
        let out = format!("json:{}", json.display());
        let plan = dir.path().join("plan.toml");
        std::fs::write(
            &plan,
            "[[filesystem]]\ntype = \"ext4\"\nsize = \"256m\"\n[[workload]]\ntype = \"meta\"\nfiles = \"20k\"\n[[workload]]\ntype = \"io\"\nsize = \"16m\"\nruntime = \"2s\"\n",
        )
        .unwrap();
        let kinds = ["io", "meta", "replay", "probe", "run"];
        let kind = kinds[trial % kinds.len()];
        let args: Vec<String> = match kind {
            "io" => vec!["io", "--target", &t, "--size", "32m", "--jobs", "2", "--runtime", "5s"]
                .into_iter()
                .map(String::from)
                .collect(),
            "meta" => vec!["meta", "--target", &t, "--files", "200k"]
                .into_iter()
                .map(String::from)
                .collect(),
            "replay" if replay_ok => vec!["replay", loadfile, "--target", &t, "--clients", "2", "--time", "5s"]
                .into_iter()
                .map(String::from)
                .collect(),
            "probe" => vec![
                "probe",
                "--target",
                &t,
                "--interval",
                "50ms",
                "--phases",
                "idle:1s,load:3s,after:1s",
                "--load",
                "stream-write:256m",
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            "run" if scratch_ok => vec![
                "run".to_string(),
                plan.display().to_string(),
                "--scratch-dir".into(),
                t.clone(),
            ],
            _ => continue,
        };
        let mut all: Vec<String> = args;
        all.extend(["--quiet".into(), "--output".into(), out.clone()]);
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        let sig = if rng.bool() { libc::SIGINT } else { libc::SIGTERM };
        let wait = rng.u64(50..2500);
        // every other trial counts from the moment the work began, the others
        // from the moment fslab catches signals (at once after parsing its
        // arguments), which may fall in validation
        let from_work = trial % 2 == 0;
        let mut child = start(&refs);
        if from_work {
            wait_for_workdir(&mut child, dir.path());
        } else {
            wait_for_handlers(&mut child);
        }
        std::thread::sleep(Duration::from_millis(wait));
        let o = signal_and_wait(child, sig);
        let what = format!(
            "trial {trial}: {kind}, signal {sig} after {wait} ms{}",
            if from_work { " of work" } else { "" }
        );
        assert!(
            o.status.code() == Some(128 + sig) || o.status.code() == Some(0),
            "{what}: exit {:?} (signal {:?}): {}",
            o.status.code(),
            std::os::unix::process::ExitStatusExt::signal(&o.status),
            String::from_utf8_lossy(&o.stderr)
        );
        // A signal during validation (client.txt takes a while to parse)
        // ends the run before it began: nothing measured, no file. Once
        // the work began, there is one.
        assert!(
            json.exists() || !from_work,
            "{what}: no result file: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        if json.exists() {
            let j = read_json(&json);
            if o.status.code() == Some(128 + sig) {
                assert_eq!(j["interrupted"], true, "{what}");
            }
        }
        let left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "r.json" && n != "plan.toml")
            .collect();
        assert!(left.is_empty(), "{what}: left {left:?}");
        assert!(mounts_under(dir.path()).is_empty(), "{what}: a mount is left");
    }
}

/// Two Ctrl-C in quick succession at varied points of every workload and of
/// `fslab run --scratch ext4` (during layout or mkfs, the timed phase, the
/// cleanup the first one starts): each leaves a complete result file marked
/// interrupted, and no file, directory, mount or loop device of fslab's.
#[test]
fn twenty_double_ctrl_c_leave_a_whole_interrupted_result_and_nothing_else() {
    if !require_root_with(&["mkfs.ext4", "losetup"]) {
        return;
    }
    let loadfile = "/usr/share/dbench/client.txt";
    if !require(
        "dbench's client.txt (apt-get install dbench)",
        std::path::Path::new(loadfile).exists(),
    ) {
        return;
    }
    let mut rng = fastrand::Rng::new();
    let delays_ms = [0, 200, 700, 1500];
    for (trial, kind) in ["io", "meta", "replay", "probe", "run"]
        .iter()
        .flat_map(|k| std::iter::repeat_n(*k, delays_ms.len()))
        .enumerate()
    {
        let target = tempfile::tempdir_in("/var/tmp").unwrap();
        let scratch = scratch_dir();
        let results = tempfile::tempdir().unwrap();
        let json = results.path().join("r.json");
        let t = target.path().to_str().unwrap();
        let mut args: Vec<&str> = match kind {
            "io" => vec!["io", "--target", t, "--size", "64m", "--jobs", "2", "--runtime", "4s"],
            "meta" => vec!["meta", "--target", t, "--files", "100k"],
            "replay" => vec!["replay", loadfile, "--target", t, "--clients", "2", "--time", "4s"],
            "probe" => vec![
                "probe",
                "--target",
                t,
                "--interval",
                "50ms",
                "--phases",
                "idle:1s,load:2s,after:1s",
                "--load",
                "stream-write:256m",
            ],
            _ => vec![
                "run",
                "--scratch",
                "ext4",
                "--scratch-dir",
                scratch.path().to_str().unwrap(),
                "--runtime",
                "1s",
            ],
        };
        let out = format!("json:{}", json.display());
        args.extend(["--quiet", "--output", &out]);
        let delay = delays_ms[trial % delays_ms.len()] + rng.u64(0..100);
        let gap = rng.u64(0..50);
        let what = format!("trial {trial}: {kind}, Ctrl-C {delay} ms into the work, again {gap} ms later");
        let mut child = start(&args);
        let workdir_in = if kind == "run" { scratch.path() } else { target.path() };
        wait_for_workdir(&mut child, workdir_in);
        std::thread::sleep(Duration::from_millis(delay));
        // SAFETY: kill(2) on the pid of our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        std::thread::sleep(Duration::from_millis(gap));
        let o = signal_and_wait(child, libc::SIGINT);
        assert_eq!(
            o.status.code(),
            Some(130),
            "{what}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let j = read_json(&json);
        assert_eq!(j["interrupted"], true, "{what}");
        for dir in [target.path(), scratch.path()] {
            let left = scratch_leftovers(dir);
            assert!(left.is_empty(), "{what}: left {left:?}");
        }
    }
}

/// One SIGTERM while fslab does not poll its stop flag (validation, mkfs,
/// mount of the first scratch filesystem) ends the run at once, with nothing
/// left behind.
#[test]
fn sigterm_while_making_scratch_filesystems_ends_the_run() {
    if !require_root_with(&["mkfs.ext4", "mkfs.xfs", "losetup"]) {
        return;
    }
    // fixed delays (before the handler, during validation, mkfs), then
    // `None`: the moment the first image file exists (mkfs or mount is next)
    for delay in [Some(0), Some(50), Some(100), Some(200), Some(300), None, None, None] {
        let scratch = scratch_dir();
        let results = tempfile::tempdir().unwrap();
        let json = results.path().join("r.json");
        let out = format!("json:{}", json.display());
        let child = start(&[
            "run",
            "--scratch",
            "ext4,xfs",
            "--scratch-dir",
            scratch.path().to_str().unwrap(),
            "--runtime",
            "1s",
            "--quiet",
            "--output",
            &out,
        ]);
        let mut child = child;
        match delay {
            Some(ms) => std::thread::sleep(Duration::from_millis(ms)),
            None => {
                let t = std::time::Instant::now();
                let has_image = || {
                    std::fs::read_dir(scratch.path())
                        .unwrap()
                        .flatten()
                        .any(|e| e.path().join("fs.img").exists())
                };
                while !has_image() {
                    assert!(
                        child.try_wait().unwrap().is_none(),
                        "fslab ended before making an image"
                    );
                    assert!(t.elapsed() < Duration::from_secs(60), "no image appeared");
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
        // signal_and_wait fails the test if fslab is still running 10 s later
        let o = signal_and_wait(child, libc::SIGTERM);
        let what = format!("SIGTERM at {delay:?} ms after the start (None: once an image exists)");
        // None: the signal came before fslab installed its handler (only
        // possible with a fixed delay)
        assert!(
            matches!((o.status.code(), delay), (Some(143), _) | (None, Some(_))),
            "{what}: exit {:?} (signal {:?}): {}",
            o.status.code(),
            std::os::unix::process::ExitStatusExt::signal(&o.status),
            String::from_utf8_lossy(&o.stderr)
        );
        if json.exists() {
            assert_eq!(read_json(&json)["interrupted"], true, "{what}");
        }
        let left = scratch_leftovers(scratch.path());
        assert!(left.is_empty(), "{what}: left {left:?}");
    }
}
