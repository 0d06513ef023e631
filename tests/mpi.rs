//! Distributed runs under a real `mpirun` (Open MPI from Debian): exact
//! merging of the ranks, stonewalling, refusals. With the `mpi` feature the
//! ranks cooperate; without it an MPI launch is refused.

use crate::util::*;
use serde_json::Value;
use std::process::{Command, Output};

/// `mpirun -np N fslab ARGS` (as root, more ranks than cores allowed); None
/// when mpirun is missing and the test may skip.
fn mpirun(n: usize, args: &[&str]) -> Option<Output> {
    mpmd(&[(n, args)])
}

/// Several rank groups with their own arguments: `mpirun -np 3 fslab A : -np 1 fslab B`.
fn mpmd(groups: &[(usize, &[&str])]) -> Option<Output> {
    if !require("mpirun (Debian openmpi-bin)", have("mpirun")) {
        return None;
    }
    let mut c = Command::new("mpirun");
    c.args(["--allow-run-as-root", "--oversubscribe"]);
    for (i, (n, args)) in groups.iter().enumerate() {
        if i > 0 {
            c.arg(":");
        }
        c.args(["-np", &n.to_string()]).arg(fslab_path()).args(*args);
    }
    Some(c.output().expect("spawn mpirun"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[cfg(feature = "mpi")]
fn directions(j: &Value) -> &Vec<Value> {
    j["cells"][0]["directions"].as_array().expect("directions")
}

#[cfg(feature = "mpi")]
fn per_rank(d: &Value, key: &str) -> Vec<u64> {
    d["ranks"]["per_rank"]
        .as_array()
        .expect("per-rank rates")
        .iter()
        .map(|r| r[key].as_u64().unwrap())
        .collect()
}

/// Runs rank groups (each with its own arguments) on a fresh target with a
/// JSON output; checks the run succeeded and left nothing behind.
#[cfg(feature = "mpi")]
fn run_mpmd_json(dir: &std::path::Path, groups: &[(usize, &[&str])]) -> Option<Value> {
    let json = dir.join("out.json");
    let target = dir.join("t");
    std::fs::create_dir_all(&target).unwrap();
    let out_arg = format!("json:{}", json.display());
    let extra = ["--target", target.to_str().unwrap(), "--output", &out_arg];
    let full: Vec<Vec<&str>> = groups
        .iter()
        .map(|(_, a)| a.iter().copied().chain(extra).collect())
        .collect();
    let with: Vec<(usize, &[&str])> = groups.iter().zip(&full).map(|((n, _), a)| (*n, &a[..])).collect();
    let o = mpmd(&with)?;
    assert!(
        o.status.success(),
        "mpirun failed: {}\n{}\n{}",
        stderr(&o),
        String::from_utf8_lossy(&o.stdout),
        std::fs::read_to_string(&json).unwrap_or_default()
    );
    assert!(leftovers(&target).is_empty(), "every rank's files are gone");
    Some(read_json(&json))
}

#[cfg(feature = "mpi")]
fn run_json(dir: &std::path::Path, n: usize, args: &[&str]) -> Option<Value> {
    run_mpmd_json(dir, &[(n, args)])
}

/// The sum of a sparse histogram's counts.
#[cfg(feature = "mpi")]
fn hist_count(l: &Value) -> u64 {
    l["histogram"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b[1].as_u64().unwrap())
        .sum()
}

#[cfg(feature = "mpi")]
#[test]
fn meta_counts_of_four_ranks_add_up_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let Some(j) = run_json(dir.path(), 4, &["meta", "--files", "4k", "--dirs", "4", "--jobs", "2"]) else {
        return;
    };
    let dirs = directions(&j);
    assert_eq!(dirs.len(), 6, "seq and random create, stat, delete");
    for d in dirs {
        let ranks = per_rank(d, "ops");
        assert_eq!(ranks, vec![8000; 4], "{}: 2 jobs x 4000 files per rank", d["phase"]);
        assert_eq!(d["ops"].as_u64().unwrap(), ranks.iter().sum::<u64>(), "{}", d["phase"]);
        // the merged histogram holds every rank's operations, not one rank's
        assert_eq!(hist_count(&d["lat"]), 32000, "{}", d["phase"]);
        let r = &d["ranks"];
        let (min, mean, max) = (
            r["min_ops_per_s"].as_f64().unwrap(),
            r["mean_ops_per_s"].as_f64().unwrap(),
            r["max_ops_per_s"].as_f64().unwrap(),
        );
        assert!(min > 0.0 && min <= mean && mean <= max, "{r}");
    }
    assert_eq!(j["cells"][0]["cpu"]["jobs"].as_array().unwrap().len(), 0);
}

#[cfg(feature = "mpi")]
#[test]
fn io_bytes_of_four_ranks_add_up_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["io", "--rw", "write", "--bs", "64k", "--size", "4m", "--jobs", "2"];
    let Some(j) = run_json(dir.path(), 4, &args) else {
        return;
    };
    let w = &directions(&j)[0];
    assert_eq!(w["dir"], "write");
    assert_eq!(per_rank(w, "bytes"), vec![8 << 20; 4], "2 jobs x 4 MiB per rank");
    assert_eq!(w["bytes"].as_u64().unwrap(), 32 << 20);
    assert_eq!(w["ops"].as_u64().unwrap(), 512);
    assert_eq!(hist_count(&w["lat"]), 512);
    assert_eq!(
        j["cells"][0]["cpu"]["jobs"].as_array().unwrap().len(),
        8,
        "every rank's jobs"
    );
}

#[cfg(feature = "mpi")]
#[test]
fn a_shared_file_gives_each_rank_its_own_region() {
    let dir = tempfile::tempdir().unwrap();
    // verification would flag a block written by one rank and read by
    // another; one job per rank, as two jobs of a rank would share its region
    // (a read racing the other job's write of a block can see it torn)
    let args = [
        "io",
        "--rw",
        "randrw",
        "--bs",
        "4k",
        "--size",
        "2m",
        "--shared-file",
        "--verify",
        "crc32c",
    ];
    let Some(j) = run_json(dir.path(), 3, &args) else {
        return;
    };
    for d in directions(&j) {
        assert!(d["errors"].as_object().unwrap().is_empty(), "{d}");
        assert_eq!(per_rank(d, "ops").len(), 3);
    }
    let moved: u64 = directions(&j).iter().map(|d| d["bytes"].as_u64().unwrap()).sum();
    assert_eq!(moved, 3 * (2 << 20), "each rank moves --size");
}

#[cfg(feature = "mpi")]
#[test]
fn stonewall_first_stops_every_rank_at_the_first_finisher() {
    let dir = tempfile::tempdir().unwrap();
    // ranks 0-2 write 256 blocks at 1000/s (~0.26 s); rank 3 is slowed to
    // 20/s and would need ~13 s
    let io = [
        "io",
        "--rw",
        "write",
        "--bs",
        "4k",
        "--size",
        "1m",
        "--stonewall",
        "first",
    ];
    let fast: Vec<&str> = io.iter().copied().chain(["--rate-iops", "1000"]).collect();
    let slow: Vec<&str> = io.iter().copied().chain(["--rate-iops", "20"]).collect();
    let Some(j) = run_mpmd_json(dir.path(), &[(3, &fast), (1, &slow)]) else {
        return;
    };
    let w = &directions(&j)[0];
    let ops = per_rank(w, "ops");
    assert!(ops[3] < 256, "the slow rank was stopped early: {ops:?}");
    assert!(ops[..3].contains(&256), "a fast rank finished: {ops:?}");
    assert_eq!(w["ops"].as_u64().unwrap(), ops.iter().sum::<u64>());
    let s = &w["stonewall"];
    assert_eq!(s["rule"], "first");
    let by = s["by_rank"].as_u64().expect("the first finisher's rank") as usize;
    assert!(by < 3 && ops[by] == 256, "{s}");
    let (at, last) = (s["at_ns"].as_u64().unwrap(), s["last_ns"].as_u64().unwrap());
    assert!(at > 0 && last >= at, "{s}");
    let (r_sw, r_last) = (
        s["ops_per_s_at_stonewall"].as_f64().unwrap(),
        s["ops_per_s_at_last"].as_f64().unwrap(),
    );
    let total = w["ops"].as_f64().unwrap();
    assert!((r_sw - total * 1e9 / at as f64).abs() < 1e-6 * r_sw, "{s}");
    assert!((r_last - total * 1e9 / last as f64).abs() < 1e-6 * r_last, "{s}");
}

#[cfg(feature = "mpi")]
#[test]
fn stonewalled_meta_ranks_stop_at_the_first_and_keep_their_files_consistent() {
    let dir = tempfile::tempdir().unwrap();
    // rank 0 has 500 files; rank 1 has 200k, which takes it many seconds: it
    // can only end with rank 0 if the stonewall reaches it
    let meta = ["meta", "--dirs", "4", "--stonewall", "first"];
    let small: Vec<&str> = meta.iter().copied().chain(["--files", "500"]).collect();
    let big: Vec<&str> = meta.iter().copied().chain(["--files", "200k"]).collect();
    let Some(j) = run_mpmd_json(dir.path(), &[(1, &small), (1, &big)]) else {
        return;
    };
    let dirs = directions(&j);
    for order in dirs.chunks(3) {
        let made = per_rank(&order[0], "ops");
        assert_eq!(made[0], 500, "{}: the small rank finished", order[0]["phase"]);
        assert!(
            made[1] < 200_000,
            "{}: the big rank was stopped: {made:?}",
            order[0]["phase"]
        );
        for d in &order[1..] {
            let done = per_rank(d, "ops");
            for r in 0..2 {
                // the create under way when the stonewall came may complete, uncounted
                assert!(
                    (made[r]..=made[r] + 1).contains(&done[r]),
                    "{}: rank {r}: {made:?} {done:?}",
                    d["phase"]
                );
            }
            assert!(d["errors"].as_object().unwrap().is_empty(), "{d}");
        }
    }
}

#[cfg(feature = "mpi")]
#[test]
fn a_target_the_ranks_do_not_share_is_refused_and_cleaned_up() {
    if !require_root_with(&["unshare", "mpirun"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    let fslab = fslab_path();
    // rank 1 runs in a mount namespace of its own with a tmpfs over the
    // target: the same path, another filesystem, as on a host without the share
    let inner = format!(
        "mount -t tmpfs none {t} && exec {} meta --target {t} --files 100",
        fslab.display()
    );
    let o = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", "1"])
        .arg(&fslab)
        .args([
            "meta", "--target", t, "--files", "100", ":", "-np", "1", "unshare", "-m", "sh", "-c", &inner,
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("rank 1 on ") && err.contains("--target: cannot work in rank 0's directory"),
        "{err}"
    );
    assert!(err.contains("filesystem they all share"), "{err}");
    assert!(leftovers(dir.path()).is_empty(), "rank 0 removed the run's directory");
}

#[cfg(feature = "mpi")]
#[test]
fn replay_clients_of_two_ranks_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let lf = dir.path().join("load.txt");
    std::fs::write(
        &lf,
        "NTCreateX \"\\f\" 0x40 0x2 1 NT_STATUS_OK\n\
         WriteX 1 0 4096 4096 NT_STATUS_OK\nClose 1 NT_STATUS_OK\n\
         Unlink \"\\f\" 0x6 NT_STATUS_OK\n",
    )
    .unwrap();
    let args = ["replay", lf.to_str().unwrap(), "--clients", "2", "--time", "1s"];
    let Some(j) = run_json(dir.path(), 2, &args) else {
        return;
    };
    for d in directions(&j) {
        let ranks = per_rank(d, "ops");
        assert_eq!(ranks.len(), 2);
        assert!(ranks.iter().all(|&n| n > 0), "{d}");
        assert!(d["errors"].as_object().unwrap().is_empty(), "{d}");
        assert_eq!(d["ops"].as_u64().unwrap(), ranks.iter().sum::<u64>());
    }
}

#[cfg(feature = "mpi")]
#[test]
fn probes_of_two_ranks_are_counted_per_phase() {
    let dir = tempfile::tempdir().unwrap();
    // every rank probes its own work directory, 12 creates on its own grid
    let args = [
        "probe",
        "--op",
        "create",
        "--interval",
        "10ms",
        "--count",
        "12",
        "--quiet",
    ];
    let Some(j) = run_json(dir.path(), 2, &args) else {
        return;
    };
    let cell = &j["cells"][0];
    let d = &directions(&j)[0];
    assert_eq!(d["dir"], "create");
    assert_eq!(d["phase"], "idle");
    assert_eq!(per_rank(d, "ops"), vec![12, 12], "each rank's probes: {d}");
    assert_eq!(d["ops"].as_u64().unwrap(), 24);
    assert_eq!(
        hist_count(&d["lat"]),
        24,
        "the merged histogram holds both ranks' probes"
    );
    assert!(d["errors"].as_object().unwrap().is_empty(), "{d}");
    let p = &cell["probe"];
    let ph = &p["phases"][0];
    assert_eq!(ph["probes"], 24, "{ph}");
    assert_eq!(
        ph["missed"].as_u64().unwrap() + ph["probes"].as_u64().unwrap(),
        hist_count(&ph["sched_lat"]),
        "every slot's latency from the schedule, missed ones included: {ph}"
    );
    // one grid's samples: rank 0's own, in order on the 10 ms grid
    let samples = p["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 12);
    assert!(samples.iter().all(|s| s["t_ns"].as_u64().unwrap() % 10_000_000 == 0));
    assert!(samples
        .windows(2)
        .all(|w| w[0]["t_ns"].as_u64() < w[1]["t_ns"].as_u64()));
    assert_eq!(cell["interrupted"], false);
}

#[cfg(feature = "mpi")]
#[test]
fn bad_arguments_are_refused_once_by_every_rank() {
    let Some(o) = mpirun(2, &["io", "--bs", "0", "--target", "."]) else {
        return;
    };
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(
        err.matches("fslab: error: --bs").count(),
        1,
        "one line, not one per rank:\n{err}"
    );
}

#[cfg(feature = "mpi")]
#[test]
fn single_machine_commands_are_refused_under_mpi() {
    let Some(o) = mpirun(2, &["fio", "no-such-job.fio"]) else {
        return;
    };
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(
        err.matches("only io, meta, replay and probe run distributed").count(),
        1,
        "{err}"
    );
}

#[cfg(not(feature = "mpi"))]
#[test]
fn an_mpi_launch_of_a_build_without_mpi_is_refused() {
    let Some(o) = mpirun(2, &["io", "--target", ".", "--size", "1m"]) else {
        return;
    };
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(
        err.matches("this fslab was built without MPI").count(),
        1,
        "once, naming the fix:\n{err}"
    );
    assert!(err.contains("--features mpi"));
}

#[test]
fn a_stonewalled_create_leaves_later_phases_only_the_files_it_made() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("m.json");
    // 10M files cannot be made in 300 ms: the deadline cuts every create short
    fslab()
        .args([
            "meta",
            "--target",
            dir.path().to_str().unwrap(),
            "--files",
            "10m",
            "--dirs",
            "10",
        ])
        .args(["--jobs", "2", "--stonewall", "300ms", "--output"])
        .arg(format!("json:{}", json.display()))
        .assert()
        .success();
    let j = read_json(&json);
    let dirs = j["cells"][0]["directions"].as_array().unwrap();
    assert_eq!(dirs.len(), 6);
    for order in dirs.chunks(3) {
        let made = order[0]["ops"].as_u64().unwrap();
        assert!(made > 0 && made < 20_000_000, "{}", order[0]);
        // each job's create under way at the deadline completes, uncounted
        let found = order[1]["ops"].as_u64().unwrap();
        assert!((made..=made + 2).contains(&found), "{made} made, {found} found");
        let s = &order[0]["stonewall"];
        assert_eq!(s["rule"], "300ms");
        assert_eq!(s["at_ns"].as_u64(), Some(300_000_000));
        assert!(s["last_ns"].as_u64().unwrap() >= 300_000_000);
        for d in &order[1..] {
            // stat and delete find exactly the files the create made
            assert_eq!(d["ops"].as_u64().unwrap(), found, "{}", d["phase"]);
            assert!(d["errors"].as_object().unwrap().is_empty(), "{d}");
            assert!(d.get("stonewall").is_none(), "only creates are stonewalled");
        }
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn stonewall_first_with_threads_names_the_first_job() {
    let dir = tempfile::tempdir().unwrap();
    let out = fslab()
        .args([
            "io",
            "--target",
            dir.path().to_str().unwrap(),
            "--rw",
            "write",
            "--bs",
            "4k",
        ])
        .args([
            "--size",
            "256k",
            "--jobs",
            "3",
            "--stonewall",
            "first",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = &j["cells"][0]["directions"][0];
    let s = &w["stonewall"];
    assert_eq!(s["rule"], "first");
    assert!(s["by_job"].as_u64().unwrap() < 3, "{s}");
    assert!(s.get("by_rank").is_none(), "one process has no ranks: {s}");
    assert!(w.get("ranks").is_none());
    assert!(w["ops"].as_u64().unwrap() >= 64, "at least the first job's 64 blocks");
}

/// The fslab processes below `root` (mpirun's ranks, whatever launches them).
#[cfg(feature = "mpi")]
fn ranks_below(root: u32) -> Vec<u32> {
    let procs: Vec<(u32, u32, String)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // pid (comm) state ppid ...: comm may hold spaces and parentheses
            let (head, tail) = stat.rsplit_once(')')?;
            let comm = head.split_once('(')?.1.to_string();
            let ppid = tail.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid, comm))
        })
        .collect();
    let mut below = vec![root];
    let mut i = 0;
    while i < below.len() {
        let p = below[i];
        below.extend(procs.iter().filter(|q| q.1 == p).map(|q| q.0));
        i += 1;
    }
    procs
        .iter()
        .filter(|q| q.2 == "fslab" && below[1..].contains(&q.0))
        .map(|q| q.0)
        .collect()
}

/// Waits until `n` ranks below `child` have each read more than `bytes`
/// (/proc/PID/io rchar), at most 60 s.
#[cfg(feature = "mpi")]
fn wait_for_ranks_reading(child: &mut std::process::Child, n: usize, bytes: u64) {
    let rchar = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/io"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("rchar:")?.trim().parse::<u64>().ok())
            })
            .unwrap_or(0)
    };
    let t = std::time::Instant::now();
    loop {
        let ranks = ranks_below(child.id());
        if ranks.len() == n && ranks.iter().all(|&p| rchar(p) > bytes) {
            return;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "mpirun ended before its ranks read"
        );
        assert!(
            t.elapsed() < std::time::Duration::from_secs(60),
            "ranks {ranks:?} did not start reading"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[cfg(feature = "mpi")]
#[test]
fn ctrl_c_on_mpirun_writes_what_every_rank_measured_and_removes_their_files() {
    if !require("mpirun (Debian openmpi-bin)", have("mpirun")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let json = dir.path().join("int.json");
    let mut child = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", "2"])
        .arg(fslab_path())
        .args([
            "io",
            "--size",
            "8m",
            "--runtime",
            "60s",
            "--target",
            target.to_str().unwrap(),
        ])
        .arg("--output")
        .arg(format!("json:{}", json.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // interrupted while measuring: every rank has read its file (laid out,
    // 8 MiB) several times over, which only the timed phase does
    wait_for_ranks_reading(&mut child, 2, 32 << 20);
    let out = signal_and_wait(child, libc::SIGINT);
    assert!(!out.status.success());
    let j = read_json(&json);
    assert_eq!(j["interrupted"], true);
    let r = &directions(&j)[0];
    assert!(r["ops"].as_u64().unwrap() > 0);
    assert_eq!(per_rank(r, "ops").len(), 2, "both ranks' results were merged");
    assert!(leftovers(&target).is_empty(), "every rank removed its files");
}

#[test]
fn srun_tasks_without_an_mpi_plugin_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    let run = |procid: &str| {
        fslab()
            .env("SLURM_STEP_NUM_TASKS", "4")
            .env("SLURM_PROCID", procid)
            .args(["io", "--target", t, "--size", "1m"])
            .output()
            .unwrap()
    };
    let first = run("0");
    assert_eq!(first.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&first.stderr).contains("srun started 4 tasks"));
    assert!(String::from_utf8_lossy(&first.stderr).contains("without an MPI plugin"));
    let other = run("3");
    assert_eq!(other.status.code(), Some(2));
    assert!(other.stderr.is_empty(), "task 0 alone says why");
    assert!(leftovers(dir.path()).is_empty(), "refused before anything was made");
}
