//! Faults injected by a FUSE filesystem (tests/faultfs.rs): every workload
//! counts the errno, stops or goes on as asked, writes valid JSON and leaves
//! nothing behind; and an injected latency is reported as it was injected.

use crate::faultfs::{FaultMount, Op};
use crate::util::*;
use std::time::Duration;

fn fuse_ok() -> bool {
    require("root", is_root()) && require("/dev/fuse", std::path::Path::new("/dev/fuse").exists())
}

/// Runs fslab with `args` on the mount; returns (exit code, result JSON).
fn run(m: &FaultMount, args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let res = tempfile::tempdir().unwrap();
    let out = res.path().join("r.json");
    let o = fslab()
        .args(args)
        .arg("--target")
        .arg(m.path())
        .args(["--quiet", "--output"])
        .arg(format!("json:{}", out.display()))
        .output()
        .unwrap();
    (o.status.code(), read_json(&out))
}

/// errno name -> count over every direction (and probe phase) of the result.
fn errors(j: &serde_json::Value, name: &str) -> u64 {
    let mut n = 0;
    for c in j["cells"].as_array().unwrap() {
        for d in c["directions"].as_array().unwrap() {
            n += d["errors"][name].as_u64().unwrap_or(0);
        }
    }
    n
}

#[test]
fn injected_errors_are_counted_stopped_on_and_leave_nothing() {
    if !fuse_ok() {
        return;
    }
    let m = FaultMount::new();
    let loadfile = m
        .dir
        .path()
        .parent()
        .unwrap()
        .join(format!("fslab-faults-{}.load", std::process::id()));
    std::fs::write(
        &loadfile,
        "Mkdir \"\\\\clients\" NT_STATUS_OK\nDeltree \"\\\\clients\\\\client1\" NT_STATUS_OK\nMkdir \"\\\\clients\\\\client1\" NT_STATUS_OK\n\
         NTCreateX \"\\\\clients\\\\client1\\\\f\" 0x40 0x2 3 NT_STATUS_OK\nWriteX 3 0 4096 4096 NT_STATUS_OK\nClose 3 NT_STATUS_OK\n\
         Unlink \"\\\\clients\\\\client1\\\\f\" 0x6 NT_STATUS_OK\n",
    )
    .unwrap();
    let lf = loadfile.to_str().unwrap().to_string();
    for (errno, name) in [(libc::EIO, "EIO"), (libc::ENOSPC, "ENOSPC"), (libc::EDQUOT, "EDQUOT")] {
        for mode in ["continue", "stop"] {
            let what = format!("{name} {mode}");
            // io: writes fail once the 4 MiB file is laid out
            m.faults.clear();
            m.faults.fail(Op::Write, errno, 300);
            let (code, j) = run(
                &m,
                &[
                    "io",
                    "--rw",
                    "randwrite",
                    "--size",
                    "4m",
                    "--runtime",
                    "500ms",
                    "--on-error",
                    mode,
                ],
            );
            assert_eq!(code, Some(1), "io {what}");
            let n = errors(&j, name);
            if mode == "stop" {
                assert_eq!(n, 1, "io {what}: stops at the first failure");
            } else {
                assert!(n > 1, "io {what}: goes on failing: {n}");
            }
            // meta: creates fail after 200 files
            m.faults.clear();
            m.faults.fail(Op::Create, errno, 200);
            let (code, j) = run(&m, &["meta", "--files", "1000", "--on-error", mode]);
            assert_eq!(code, Some(1), "meta {what}");
            assert_eq!(errors(&j, name), 1, "meta {what}: the failed create ends the phase");
            // 200 creates succeed, fslab's own marker file among them
            let ops = j["cells"][0]["directions"][0]["ops"].as_u64().unwrap();
            assert!((195..=200).contains(&ops), "meta {what}: {ops} files made");
            // replay: WriteX fails after 20 writes
            m.faults.clear();
            m.faults.fail(Op::Write, errno, 20);
            let (code, j) = run(
                &m,
                &[
                    "replay",
                    &lf,
                    "--time",
                    "300ms",
                    "--timestamps",
                    "ignore",
                    "--on-error",
                    mode,
                ],
            );
            assert_eq!(code, Some(1), "replay {what}");
            let n = errors(&j, name);
            assert!(n >= 1, "replay {what}: {}", j["cells"][0]["directions"]);
            // probe: creates fail after 3 probes
            m.faults.clear();
            m.faults.fail(Op::Create, errno, 3);
            let (code, j) = run(
                &m,
                &[
                    "probe",
                    "--op",
                    "create",
                    "--interval",
                    "20ms",
                    "--count",
                    "10",
                    "--on-error",
                    mode,
                ],
            );
            assert_eq!(code, Some(1), "probe {what}");
            let n = errors(&j, name);
            if mode == "stop" {
                assert_eq!(n, 1, "probe {what}");
            } else {
                // the work directory's marker file is a create too
                assert!((7..=8).contains(&n), "probe {what}: every later probe fails: {n}");
            }
            m.faults.clear();
            let left: Vec<_> = std::fs::read_dir(m.path())
                .unwrap()
                .flatten()
                .map(|e| e.file_name())
                .collect();
            assert!(left.is_empty(), "{what}: left {left:?}");
        }
    }
    let _ = std::fs::remove_file(&loadfile);
}

#[test]
fn injected_write_latency_is_reported_truthfully() {
    if !fuse_ok() {
        return;
    }
    let m = FaultMount::new();
    let p50 = |m: &FaultMount| {
        let (code, j) = run(m, &["io", "--rw", "randwrite", "--size", "4m", "--runtime", "1s"]);
        assert_eq!(code, Some(0));
        j["cells"][0]["directions"][0]["lat"]["percentiles"]["50"]
            .as_f64()
            .unwrap()
    };
    let round_trip = p50(&m);
    m.faults.delay(Op::Write, Duration::from_millis(2));
    let delayed = p50(&m);
    let want = 2e6 + round_trip;
    let err = (delayed - want).abs() / want;
    eprintln!(
        "write p50: FUSE round trip {round_trip} ns; with 2 ms injected {delayed} ns, expected {want} ns ({:+.1}%)",
        (delayed - want) / want * 100.0
    );
    assert!(
        err <= 0.10,
        "write p50 {delayed} ns with 2 ms injected, FUSE round trip {round_trip} ns: {:.1}% off",
        err * 100.0
    );
}
