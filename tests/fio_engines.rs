//! fio's engines and sync options, run side by side with fio 3.33: what
//! each tool counts must be the same.

use crate::util::{fslab_path, have, require};

/// fio's JSON of one job run by `tool` ("fio" or "fslab") from the command line.
fn run(tool: &str, dir: &std::path::Path, args: &[String]) -> serde_json::Value {
    let mut c = if tool == "fio" {
        std::process::Command::new("fio")
    } else {
        let mut c = std::process::Command::new(fslab_path());
        c.args(["fio", "--quiet"]);
        c
    };
    let out = c
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
