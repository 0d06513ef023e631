//! fio's engines and sync options, run side by side with fio 3.33: what
//! each tool counts must be the same.

use crate::util::{fslab_path, have, require};

/// fio's JSON of one job run by `tool` ("fio" or "fslab") from the command line.
fn run(tool: &str, dir: &std::path::Path, args: &[String]) -> serde_json::Value {
    let out = crate::util::fio_or_fslab(tool, true)
        .arg(format!("--directory={}", dir.display()))
        .args([
            "--name=s",
            "--rw=write",
            "--bs=4k",
            "--size=512k",
            "--output-format=json",
        ])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim_start_matches(|c| c != '{')).unwrap()
}

/// fio issues a cadence sync when it picks the next I/O (none after the
/// last write), counts only fsyncs in sync.total_ios (the fdatasyncs are in
/// lat_ns), and times end_fsync in no statistic; fslab the same, with a
/// synchronous and a queueing engine.
#[test]
fn sync_counts_are_fios() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    for engine in ["psync", "libaio", "posixaio", "io_uring"] {
        for syncs in [
            "--fsync=8",
            "--fdatasync=8",
            "--fsync=8 --end_fsync=1",
            "--end_fsync=1",
            "--fsync=8 --fdatasync=4",
        ] {
            let mut args: Vec<String> = syncs.split(' ').map(String::from).collect();
            args.push(format!("--ioengine={engine}"));
            // fio 3.33's io_uring and posixaio issue extra syncs at depths
            // above 1, varying from run to run (fslab notes it): depth 1 there
            let depth = if engine == "libaio" { 4 } else { 1 };
            args.push(format!("--iodepth={depth}"));
            let counts = |j: &serde_json::Value| {
                let job = &j["jobs"][0];
                (
                    job["write"]["total_ios"].as_u64().unwrap(),
                    job["sync"]["total_ios"].as_u64().unwrap(),
                    job["sync"]["lat_ns"]["N"].as_u64().unwrap(),
                )
            };
            let fio = counts(&run("fio", work.path(), &args));
            let fslab = counts(&run("fslab", work.path(), &args));
            assert_eq!(fslab, fio, "{engine} {syncs}: (writes, sync total_ios, sync lat N)");
        }
    }
}

/// ioengine=libaio and posixaio run fslab's engines of those names (no
/// "as io_uring" note), and their op counts at depth 8 with O_DIRECT are
/// fio's.
#[test]
fn aio_engines_are_their_own() {
    if !require("fio", have("fio")) {
        return;
    }
    for engine in ["libaio", "posixaio"] {
        let work = tempfile::tempdir_in("/var/tmp").unwrap();
        let args: Vec<String> = vec![
            format!("--ioengine={engine}"),
            "--iodepth=8".into(),
            "--direct=1".into(),
            "--rw=randrw".into(),
        ];
        let out = std::process::Command::new(fslab_path())
            .args(["fio", "--name=s", "--bs=4k", "--size=512k", "--output-format=json"])
            .arg(format!("--directory={}", work.path().display()))
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(!stderr.contains("io_uring"), "{engine} is not io_uring: {stderr}");
        let ops = |j: &serde_json::Value| {
            let job = &j["jobs"][0];
            assert_eq!(job["job options"]["ioengine"], engine);
            job["read"]["total_ios"].as_u64().unwrap() + job["write"]["total_ios"].as_u64().unwrap()
        };
        assert_eq!(
            ops(&run("fslab", work.path(), &args)),
            ops(&run("fio", work.path(), &args))
        );
    }
}

/// ioengine=mmap moves what fio's does: the same reads, writes and syncs.
#[test]
fn mmap_counts_are_fios() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    for rw in ["read", "randwrite", "write"] {
        let args: Vec<String> = vec!["--ioengine=mmap".into(), format!("--rw={rw}"), "--fsync=16".into()];
        let counts = |j: &serde_json::Value| {
            let job = &j["jobs"][0];
            ["read", "write"].map(|d| job[d]["total_ios"].as_u64().unwrap())
        };
        let fio = counts(&run("fio", work.path(), &args));
        let fslab = counts(&run("fslab", work.path(), &args));
        assert_eq!(fslab, fio, "mmap {rw}: (reads, writes)");
    }
}

/// cpus_allowed with the split policy, prio/prioclass and nice apply to
/// each clone's own thread (read back from /proc), and a CPU this process
/// cannot use is refused naming the file:line.
#[test]
fn placement_applies_to_each_clone() {
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let cpus: Vec<usize> = (0..1024)
        .filter(|c| rustix::thread::sched_getaffinity(None).unwrap().is_set(*c))
        .collect();
    let job = work.path().join("p.fio");
    let list = cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",");
    std::fs::write(
        &job,
        format!(
            "[p]\ndirectory={}\nsize=1m\nrw=randread\nnumjobs=2\ncpus_allowed={list}\ncpus_allowed_policy=split\n\
             prio=5\nprioclass=3\nnice=5\nruntime=30\ntime_based\n",
            work.path().display()
        ),
    )
    .unwrap();
    let mut child = std::process::Command::new(fslab_path())
        .args(["fio", "--quiet", "--output-format=terse"])
        .arg(&job)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // each worker thread, once placed: (name, CPU list, nice, I/O priority)
    let placed = |child: &std::process::Child| -> Vec<(String, String, String, i64)> {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", child.id()))
            .into_iter()
            .flatten();
        let mut v: Vec<(String, String, String, i64)> = tasks
            .flatten()
            .filter_map(|t| {
                let p = t.path();
                let comm = std::fs::read_to_string(p.join("comm")).ok()?;
                let status = std::fs::read_to_string(p.join("status")).ok()?;
                let stat = std::fs::read_to_string(p.join("stat")).ok()?;
                let nice = stat.rsplit(')').next()?.split_whitespace().nth(16)?.to_string();
                let cpus = status.lines().find(|l| l.starts_with("Cpus_allowed_list:"))?;
                let tid: i64 = t.file_name().to_str()?.parse().ok()?;
                // SAFETY: ioprio_get(IOPRIO_WHO_PROCESS, tid) takes integers
                let ioprio = unsafe { libc::syscall(libc::SYS_ioprio_get, 1, tid) };
                let cpus = cpus.split(':').nth(1)?.trim().to_string();
                (comm.starts_with("fslab-job") && nice == "5").then(|| (comm.trim().to_string(), cpus, nice, ioprio))
            })
            .collect();
        v.sort();
        v
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut seen = placed(&child);
    while seen.len() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
        seen = placed(&child);
    }
    let _ = child.kill();
    let _ = child.wait();
    // idle class (3) at level 5
    let want: Vec<(String, String, String, i64)> = (0..2)
        .map(|i| {
            (
                format!("fslab-job{i}"),
                cpus[i % cpus.len()].to_string(),
                "5".to_string(),
                3 << 13 | 5,
            )
        })
        .collect();
    assert_eq!(
        seen, want,
        "each clone on its own CPU of the list, at nice 5, idle I/O class"
    );
    crate::util::expect_refusals(
        &[crate::util::refusal(
            &["fio", "--name=x", "--size=1m", "--cpus_allowed=100000"],
            "cpus_allowed: '100000' is not a CPU number or range",
        )],
        &[],
    );
}

/// io_submit_mode: inline is what fslab does (accepted); offload runs the
/// same with an async engine (a note says so), and is refused where fio's
/// submit threads would make a sync engine's depth concurrent, and with
/// io_uring, which fio refuses.
#[test]
fn io_submit_mode_inline_runs_offload_runs_or_is_refused() {
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let dir = format!("--directory={}", work.path().display());
    crate::util::fslab()
        .args([
            "fio",
            "--quiet",
            "--name=x",
            "--size=64k",
            "--io_submit_mode=inline",
            "--output-format=terse",
        ])
        .arg(&dir)
        .assert()
        .success();
    let out = crate::util::fslab()
        .args([
            "fio",
            "--quiet",
            "--name=x",
            "--size=64k",
            "--ioengine=libaio",
            "--iodepth=4",
        ])
        .args(["--io_submit_mode=offload", "--output-format=json"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("io_submit_mode=offload: each job submits its own I/O at the same depth"),
        "{err}"
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["jobs"][0]["read"]["total_ios"], 16, "{j}");
    let off = "--io_submit_mode=offload";
    crate::util::expect_refusals(
        &[
            crate::util::refusal(
                &["fio", "--name=x", "--size=64k", "--iodepth=8", off, &dir],
                "io_submit_mode=offload with a synchronous engine at iodepth=8",
            ),
            crate::util::refusal(
                &["fio", "--name=x", "--size=64k", "--ioengine=io_uring", off, &dir],
                "io_submit_mode=offload with ioengine=io_uring: fio refuses it",
            ),
        ],
        &[],
    );
}
