//! Every bad flag value exits 2 with one line naming the flag, before any file
//! is touched.

use crate::util::*;

#[test]
fn every_bad_flag_exits_2_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--rw", "sideways"], "--rw: unknown pattern 'sideways'"),
        (&["--rwmixread", "101"], "--rwmixread: '101' is not a percentage"),
        (&["--rwmixread", "ten"], "--rwmixread:"),
        (&["--bs", "4q"], "--bs: '4q' is not a size"),
        (&["--bs", "0"], "--bs: 0 is out of range"),
        (&["--bs", "1g"], "--bs: 1073741824 is out of range"),
        (&["--size", "lots"], "--size: 'lots' is not a size"),
        (
            &["--size", "1k", "--bs", "4k"],
            "--size: 1024 bytes is smaller than one block",
        ),
        (&["--jobs", "0"], "--jobs: must be at least 1"),
        (&["--jobs", "-3"], "--jobs:"),
        (&["--jobs", "5000"], "--jobs: 5000 is more than 4096"),
        (&["--engine", "turbo"], "--engine: unknown engine 'turbo'"),
        (&["--runtime", "soon"], "--runtime: 'soon' is not a duration"),
        (&["--runtime", "0s"], "--runtime: must be longer than 0"),
        (&["--ramp", "1s"], "--ramp: needs --runtime"),
        (&["--runtime", "1s", "--ramp", "x"], "--ramp: 'x' is not a duration"),
        (&["--fsync", "0", "--rw", "write"], "--fsync: must be at least 1"),
        (&["--fsync", "2"], "--fsync: --rw randread does no writes"),
        (&["--rate-iops", "0"], "--rate-iops: must be at least 1"),
        (&["--rate-iops", "fast"], "--rate-iops:"),
        (&["--lat-buckets", "2ms,x"], "--lat-buckets: 'x' is not a duration"),
        (&["--lat-buckets", "0ms"], "--lat-buckets: thresholds must be above 0"),
        (
            &["--lat-buckets", "1ms,2ms,3ms,4ms,5ms,6ms,7ms,8ms,9ms"],
            "--lat-buckets: at most 8",
        ),
        (&["--seed", "abc"], "--seed: 'abc' is not a whole number"),
        (&["--output", "xml"], "--output: unknown format 'xml'"),
        (&["--output", "json:"], "--output: 'json:': empty path"),
        (
            &["--output", "json:/nonexistent/dir/r.json"],
            "--output: cannot create '/nonexistent/dir/r.json'",
        ),
        (
            &["--output", "json", "--output", "text"],
            "--output: only one output can go to stdout",
        ),
    ];
    for (args, want) in cases {
        expect_usage(&[&["io", "--target", t][..], args].concat(), want);
    }
    assert!(leftovers(dir.path()).is_empty(), "a refused run creates nothing");
}

#[test]
fn bad_targets_exit_2_naming_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("existing");
    std::fs::write(&f, vec![1u8; 8192]).unwrap();
    let fs = f.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--target", "/nonexistent/x"], "--target: '/nonexistent/x'"),
        (
            &["--target", "/dev/null"],
            "is not a directory, regular file or block device",
        ),
        (&["--target", fs, "--rw", "randwrite"], "add --force-overwrite"),
        (
            &["--target", fs, "--size", "1m"],
            "--size: 1048576 bytes is more than the 8192 bytes",
        ),
    ];
    for (args, want) in cases {
        expect_usage(&[&["io"][..], args, &["--runtime", "1s"]].concat(), want);
    }
    assert_eq!(
        std::fs::read(&f).unwrap(),
        vec![1u8; 8192],
        "the existing file is untouched"
    );
}

#[test]
fn unknown_flags_and_plan_files_exit_2() {
    let out = fslab().args(["io", "--bogus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--bogus"));
    expect_usage(&["run", "no-such-plan.toml"], "PLAN: 'no-such-plan.toml': No such file");
    let out = fslab().args(["run", "--runtime", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
