//! Every bad flag value exits 2 with one line naming the flag, before any file
//! is touched.

use crate::util::*;

mod table;

#[test]
fn every_bad_flag_exits_2_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--rw", "sideways"], "invalid value 'sideways' for '--rw <PATTERN>'"),
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
        (&["--engine", "turbo"], "invalid value 'turbo' for '--engine <ENGINE>'"),
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
        (
            &["--stonewall", "soon"],
            "--stonewall: 'soon' is neither `first` nor a duration",
        ),
        (
            &["--stonewall", "0s"],
            "--stonewall: the deadline must be longer than 0",
        ),
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

/// Every command's bad values, conflicting flags, unreadable paths and
/// malformed plan, load and job files: one line naming the flag or file:line, exit 2.
#[test]
fn every_command_refuses_bad_input_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let plan_bad_key = write(
        "bad-key.toml",
        "[[filesystem]]\ntype = \"ext4\"\nmkfs_opts = \"x\"\n[[workload]]\ntype = \"meta\"\n",
    );
    let plan_bad_value = write(
        "bad-value.toml",
        "[[filesystem]]\ntype = \"tmpfs\"\n[[workload]]\ntype = \"io\"\nbs = \"16q\"\n",
    );
    let plan_syntax = write("syntax.toml", "[[filesystem]\ntype = \"ext4\"\n");
    let load_bad = write(
        "bad.load",
        "NTCreateX \"\\\\clients\\\\client1\\\\f\" 0x40 0x2 3 NT_STATUS_OK\nFrobnicate 1 NT_STATUS_OK\n",
    );
    let job_bad = write("bad.fio", "[j]\nrw=sideways\n");
    let job_unsupported = write("unsup.fio", "[j]\nrw=read\nzonemode=zbd\n");
    let not_json = write("not.json", "[1, 2");
    let unreadable = dir.path().join("missing.toml").display().to_string();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["io", "--target", t, "--bssplit", "4k/50:8k/60"],
            "--bssplit: shares add up to 110%".into(),
        ),
        (
            vec!["io", "--target", t, "--bssplit", "4k/50:8k/40"],
            "--bssplit: shares add up to 90%, not 100".into(),
        ),
        (
            vec!["io", "--target", t, "--bs", "64k-4k"],
            "--bs: range 64k-4k has its maximum below its minimum".into(),
        ),
        (
            vec!["io", "--target", t, "--nrfiles", "0"],
            "--nrfiles: must be at least 1".into(),
        ),
        (
            vec!["io", "--target", t, "--thinktime", "soon"],
            "--thinktime: 'soon' is not a duration".into(),
        ),
        (
            vec!["io", "--target", t, "--rw", "write", "--end-fsync", "--runtime", "1s"],
            "--end-fsync: needs a size-based run".into(),
        ),
        (
            vec!["io", "--target", t, "--fdatasync", "4"],
            "--fdatasync: --rw randread does no writes".into(),
        ),
        (
            vec!["io", "--target", t, "--iodepth", "8"],
            "--iodepth: needs --engine uring".into(),
        ),
        (vec!["meta", "--target", t, "--files", "0"], "--files:".into()),
        (vec!["meta", "--target", t, "--xattr", "user.x"], "--xattr:".into()),
        (
            vec!["meta", "--target", t, "--bonnie", "16:1:2:3:4"],
            "--bonnie:".into(),
        ),
        (
            vec!["meta", "--target", t, "--output", "timeline-csv"],
            "--output: timeline-csv is for `fslab probe`".into(),
        ),
        (vec!["probe", "--target", t, "--op", "teleport"], "'--op <OP>'".into()),
        (vec!["probe", "--target", t, "--interval", "0s"], "--interval:".into()),
        (
            vec!["probe", "--target", t, "--load", "stream-write:lots"],
            "--load:".into(),
        ),
        (
            vec!["probe", "--target", t, "--output", "bonnie-csv"],
            "--output: bonnie-csv is for `fslab meta`".into(),
        ),
        (
            vec!["replay", "/nonexistent/client.txt", "--target", t],
            "/nonexistent/client.txt".into(),
        ),
        (vec!["replay", &load_bad, "--target", t], format!("{load_bad}:2")),
        (
            vec!["replay", &load_bad, "--target", t, "--clients", "0"],
            "--clients:".into(),
        ),
        (vec!["run", &unreadable], "No such file".into()),
        (
            vec!["run", &plan_bad_key],
            format!("{plan_bad_key}:3: unknown key 'mkfs_opts'"),
        ),
        (vec!["run", &plan_bad_value], format!("{plan_bad_value}:5: bs:")),
        (vec!["run", &plan_syntax], format!("{plan_syntax}:1:")),
        (
            vec!["run", "--scratch", "zfs"],
            "invalid value 'zfs' for '--scratch <TYPES>'".into(),
        ),
        (
            vec!["run", "--repeat", "0"],
            "--repeat: '0' is not a whole number".into(),
        ),
        (
            vec!["run", "--scratch-dir", "/nonexistent", "--scratch", "ext4"],
            "--scratch-dir: '/nonexistent' is not an existing directory".into(),
        ),
        (
            vec!["run", &plan_bad_key, "--scratch", "ext4"],
            "--scratch: a plan file".into(),
        ),
        (
            vec!["run", &plan_bad_key, "--runtime", "1s"],
            "--runtime: sets the quick suite's cells".into(),
        ),
        (
            vec!["fio", &job_bad],
            format!("{job_bad}:2: rw=sideways is not supported"),
        ),
        (
            vec!["fio", &job_unsupported],
            format!("{job_unsupported}:3: zonemode=zbd"),
        ),
        (vec!["fio", "/nonexistent/job.fio"], "/nonexistent/job.fio".into()),
        (
            vec!["fio", "--output-format=xml", &job_bad],
            "invalid value 'xml' for '--output-format <FORMAT>'".into(),
        ),
        (
            vec!["compare", &not_json],
            format!("{not_json}:1: not an fslab result file"),
        ),
        (vec!["compare", &unreadable], "missing.toml".into()),
        (
            vec!["report", &not_json, "-o", "/tmp/x.html"],
            format!("{not_json}:1: not an fslab result file"),
        ),
        (vec!["cleanup", "/nonexistent/place"], "'/nonexistent/place'".into()),
    ];
    for (args, want) in &cases {
        expect_usage(args, want);
    }
    assert!(cases.len() >= 35);
    let left: Vec<String> = leftovers(dir.path());
    assert!(left.is_empty(), "a refused run creates nothing: {left:?}");
}
