//! `--engine uring`: queue depth, slat/clat, registered files and buffers,
//! SQPOLL, and one clear error when io_uring is unavailable.

use crate::util::*;
use std::os::unix::process::CommandExt;
use std::process::Command;

#[test]
fn deep_queue_reports_slat_clat_and_depths() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    for extra in [
        &[][..],
        &["--iodepth-batch", "8", "--fixed-files", "--fixed-bufs"],
        &["--sqpoll", "100ms"],
    ] {
        fslab()
            .args([
                "io",
                "--target",
                dir.path().to_str().unwrap(),
                "--engine",
                "uring",
                "--iodepth",
                "16",
            ])
            .args(["--rw", "randrw", "--size", "8m", "--runtime", "500ms", "--quiet"])
            .args(extra)
            .args(["--output", &format!("json:{}", out.display())])
            .assert()
            .success();
        let j = read_json(&out);
        let c = &j["cells"][0];
        assert_eq!(c["plan"]["iodepth"], 16, "{extra:?}");
        for d in c["directions"].as_array().unwrap() {
            let ops = d["ops"].as_u64().unwrap();
            assert!(ops > 0);
            assert_eq!(
                d["slat"]["histogram"]["buckets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| b[1].as_u64().unwrap())
                    .sum::<u64>(),
                ops
            );
            let (s, cl, l) = (
                d["slat"]["mean_ns"].as_f64().unwrap(),
                d["clat"]["mean_ns"].as_f64().unwrap(),
                d["lat"]["mean_ns"].as_f64().unwrap(),
            );
            assert!(
                (s + cl - l).abs() <= l * 0.001 + 1.0,
                "lat = slat + clat: {s} + {cl} vs {l}"
            );
        }
        let depths: Vec<u64> = c["inflight_depth"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(depths.len(), 17, "{extra:?}: depth 0..=16");
        assert!(depths[16] > 0, "the queue filled up: {depths:?}");
    }
}

#[test]
fn size_based_uring_run_moves_exactly_size() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    fslab()
        .args([
            "io",
            "--target",
            dir.path().to_str().unwrap(),
            "--engine",
            "uring",
            "--iodepth",
            "8",
        ])
        .args([
            "--rw", "write", "--bs", "64k", "--size", "4m", "--fsync", "16", "--quiet",
        ])
        .args(["--output", &format!("json:{}", out.display())])
        .assert()
        .success();
    let j = read_json(&out);
    let dirs = j["cells"][0]["directions"].as_array().unwrap();
    assert_eq!(dirs[0]["dir"], "write");
    assert_eq!(dirs[0]["ops"], 64);
    assert_eq!(dirs[0]["bytes"], 4 << 20);
    assert_eq!(dirs[1]["dir"], "fsync");
    // after every 16 writes but the last, as fio
    assert_eq!(dirs[1]["ops"], 3);
}

/// Runs fslab with io_uring_setup(2) made to fail with `errno` by a seccomp
/// filter, as container runtimes do.
fn without_io_uring(errno: i32) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(fslab_path());
    cmd.args([
        "io",
        "--target",
        dir.path().to_str().unwrap(),
        "--engine",
        "uring",
        "--runtime",
        "1s",
    ]);
    // SAFETY: only async-signal-safe syscalls (prctl) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let filter = [
                // load the syscall number
                libc::sock_filter {
                    code: 0x20,
                    jt: 0,
                    jf: 0,
                    k: 0,
                },
                // io_uring_setup? then fail with errno, else allow
                libc::sock_filter {
                    code: 0x15,
                    jt: 0,
                    jf: 1,
                    k: libc::SYS_io_uring_setup as u32,
                },
                libc::sock_filter {
                    code: 0x06,
                    jt: 0,
                    jf: 0,
                    k: 0x0005_0000 | errno as u32,
                },
                libc::sock_filter {
                    code: 0x06,
                    jt: 0,
                    jf: 0,
                    k: 0x7fff_0000,
                },
            ];
            let prog = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr() as *mut _,
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_SECCOMP, 2, &prog as *const _ as usize, 0, 0) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().unwrap()
}

#[test]
fn disabled_io_uring_is_one_clear_error() {
    for (errno, want) in [
        (libc::EPERM, "--engine: io_uring_setup was refused (EPERM)"),
        (libc::ENOSYS, "--engine: io_uring_setup is not available (ENOSYS)"),
    ] {
        let out = without_io_uring(errno);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{err}");
        assert!(err.contains("use --engine sync"), "no silent fallback, a hint: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn uring_only_flags_need_the_uring_engine() {
    for flag in [
        &["--iodepth", "4"][..],
        &["--fixed-bufs"],
        &["--sqpoll"],
        &["--hipri", "--direct"],
    ] {
        let want = format!("{}: needs --engine uring", flag[0]);
        expect_usage(&[&["io", "--runtime", "1s"][..], flag].concat(), &want);
    }
    expect_usage(
        &["io", "--engine", "uring", "--hipri"],
        "--hipri: polled completions need --direct",
    );
    expect_usage(
        &["io", "--engine", "uring", "--iodepth", "4", "--iodepth-batch", "8"],
        "--iodepth-batch: 8 is more than --iodepth 4",
    );
}
