//! `fslab replay`: each operation's POSIX effect, parser errors, loops,
//! expected failures, the real client.txt, cleanup.

use crate::util::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn ops(j: &Value) -> Vec<(String, u64, u64)> {
    j["cells"][0]["directions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let mism: u64 = d["errors"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_u64().unwrap())
                .sum();
            (d["dir"].as_str().unwrap().to_string(), d["ops"].as_u64().unwrap(), mism)
        })
        .collect()
}

/// A load file that leaves its effects in place at the end (no cleanup
/// lines), run once: the test then inspects the client directory through a
/// SLEEP at the end that keeps the run alive.
const EFFECTS: &str = r#"# every operation once
Mkdir "\clients" NT_STATUS_OK
Deltree "\clients\client1" NT_STATUS_OK
NTCreateX "\clients\client1" 0x1 0x2 1 NT_STATUS_OK
Close 1 NT_STATUS_OK
NTCreateX "\clients\client1\missing" 0x40 0x1 2 NT_STATUS_OBJECT_NAME_NOT_FOUND
NTCreateX "\clients\client1\f" 0x40 0x2 3 NT_STATUS_OK
WriteX 3 0 100 100 NT_STATUS_OK
WriteX 3 100 50 50 NT_STATUS_OK
Flush 3 NT_STATUS_OK
LockX 3 0 10 NT_STATUS_OK
UnlockX 3 0 10 NT_STATUS_OK
ReadX 3 0 150 150 NT_STATUS_OK
SET_FILE_INFORMATION 3 1004 NT_STATUS_OK
QUERY_FILE_INFORMATION 3 258 NT_STATUS_OK
Close 3 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\f" 1004 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\nope" 1004 NT_STATUS_OBJECT_NAME_NOT_FOUND
FIND_FIRST "\clients\client1\F*" 260 1366 0 NT_STATUS_OK
FIND_FIRST "\clients\client1\X*" 260 1366 0 NT_STATUS_NO_SUCH_FILE
QUERY_FS_INFORMATION 1 NT_STATUS_OK
Rename "\clients\client1\f" "\clients\client1\g" NT_STATUS_OK
NTCreateX "\clients\client1\h" 0x40 0x2 4 NT_STATUS_OK
Close 4 NT_STATUS_OK
Unlink "\clients\client1\h" 0x6 NT_STATUS_OK
Unlink "\clients\client1\h" 0x6 NT_STATUS_OBJECT_NAME_NOT_FOUND
Mkdir "\clients\client1\d" NT_STATUS_OK
Rmdir "\clients\client1\d" NT_STATUS_OK
Mkdir "\clients\client1\end" NT_STATUS_OK
LOOP 3
QUERY_FS_INFORMATION 1 NT_STATUS_OK
ENDLOOP
REPEAT 4
QUERY_FS_INFORMATION 1 NT_STATUS_OK
SLEEP 5000000
"#;

#[test]
fn every_operation_has_its_posix_effect() {
    let dir = tempfile::tempdir().unwrap();
    let lf = dir.path().join("effects.txt");
    std::fs::write(&lf, EFFECTS).unwrap();
    let work = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let mut child = start(&[
        "replay",
        lf.to_str().unwrap(),
        "--target",
        work.path().to_str().unwrap(),
        "--clients",
        "2",
        "--time",
        "4s",
        "--xattr",
        "--quiet",
        "--output",
        &format!("json:{}", out.display()),
    ]);
    // while the clients sleep at the end of the file (5 s, longer than the
    // run: one pass), look at what they did, once both have done it. The
    // last directory made is the sign: any earlier state (g written, d not
    // yet made) also holds between the Rename and the Unlink of h, which
    // made this test fail once on a busy CI machine.
    let client = |n: usize| -> Option<std::path::PathBuf> {
        let wd = std::fs::read_dir(work.path()).ok()?.next()?.ok()?.path();
        Some(wd.join(format!("c{n}/clients/client{}", n + 1)))
    };
    let done = |c: &std::path::Path| c.join("end").is_dir();
    while ![0, 1].iter().all(|&n| client(n).is_some_and(|c| done(&c))) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before both clients were seen done"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    for n in [0, 1] {
        let c = client(n).unwrap();
        let g = c.join("g");
        assert_eq!(std::fs::metadata(&g).unwrap().len(), 150, "WriteX sized the file");
        assert!(!c.join("f").exists(), "Rename moved it");
        assert!(!c.join("h").exists() && !c.join("d").exists(), "Unlink, Rmdir");
        let x = Command::new("getfattr")
            .args(["--only-values", "-n", "user.DosAttrib"])
            .arg(&g)
            .output();
        if let Ok(x) = x {
            if x.status.success() {
                assert_eq!(
                    x.stdout.len(),
                    44,
                    "the 44-byte DosAttrib after create and SET_FILE_INFORMATION"
                );
            }
        }
    }
    assert!(child.wait().unwrap().success());
    let j = read_json(&out);
    let got = ops(&j);
    assert!(got.iter().all(|(_, _, m)| *m == 0), "no mismatches: {got:?}");
    let count = |name: &str| got.iter().find(|(n, _, _)| n == name).map(|x| x.1).unwrap_or(0);
    assert_eq!(
        count("QUERY_FS_INFORMATION"),
        2 * (1 + 3 + 4),
        "LOOP 3 and REPEAT 4, two clients"
    );
    assert_eq!(count("WriteX"), 4);
    assert_eq!(count("NTCreateX"), 2 * 4, "expected failures count as matches");
    let read = j["cells"][0]["directions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["dir"] == "ReadX")
        .unwrap()
        .clone();
    assert_eq!(read["bytes"], 2 * 150);
    assert!(leftovers(work.path()).is_empty());
}

#[test]
fn mismatches_are_counted_and_strict_makes_them_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let lf = dir.path().join("bad.txt");
    std::fs::write(
        &lf,
        "Deltree \"\\clients\\client1\" NT_STATUS_OK\nQUERY_PATH_INFORMATION \"\\clients\\client1\\x\" 1004 NT_STATUS_OK\n",
    )
    .unwrap();
    let out = dir.path().join("r.json");
    let o = fslab()
        .args([
            "replay",
            lf.to_str().unwrap(),
            "--target",
            dir.path().to_str().unwrap(),
            "--time",
            "300ms",
        ])
        .args(["--quiet", "--output", &format!("json:{}", out.display())])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "mismatches fail the run");
    let j = read_json(&out);
    let q = ops(&j)
        .into_iter()
        .find(|(n, _, _)| n == "QUERY_PATH_INFORMATION")
        .unwrap();
    assert!(q.2 > 10, "{q:?}");
    let o = fslab()
        .args([
            "replay",
            lf.to_str().unwrap(),
            "--target",
            dir.path().to_str().unwrap(),
            "--time",
            "5s",
            "--strict",
        ])
        .args(["--quiet", "--output", &format!("json:{}", out.display())])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let j = read_json(&out);
    let e = j["cells"][0]["job_errors"][0].as_str().unwrap();
    assert!(
        e.contains("bad.txt:2: QUERY_PATH_INFORMATION \"clients/client1/x\": failed with ENOENT"),
        "{e}"
    );
    assert!(
        j["cells"][0]["elapsed_ns"].as_u64().unwrap() < 1_000_000_000,
        "strict stops at once"
    );
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn parser_errors_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let lf = dir.path().join("bad.txt");
    std::fs::write(&lf, "# ok\nClose 1 NT_STATUS_OK\nWriteX 1 0 x 4 NT_STATUS_OK\n").unwrap();
    let o = fslab()
        .args(["replay", lf.to_str().unwrap(), "--target", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains(&format!("{}:3: 'x' is not a number (WriteX)", lf.display())),
        "{err}"
    );
    for (args, want) in [
        (&["--clients", "0"][..], "--clients: must be between 1 and 1024"),
        (&["--time", "0s"], "--time: must be longer than 0"),
        (
            &["--timestamps", "maybe"],
            "invalid value 'maybe' for '--timestamps <MODE>'",
        ),
        (&["--xattr-size", "1m"], "--xattr-size: between 1 byte and 64 KiB"),
    ] {
        expect_usage(&[&["replay", "/nonexistent.txt"][..], args].concat(), want);
    }
    let o = fslab().args(["replay", "/nonexistent.txt"]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent.txt: No such file"));
}

#[test]
fn timestamps_pace_the_clients() {
    let dir = tempfile::tempdir().unwrap();
    let lf = dir.path().join("t.txt");
    std::fs::write(
        &lf,
        "0.0 QUERY_FS_INFORMATION 1 NT_STATUS_OK\n0.1 QUERY_FS_INFORMATION 1 NT_STATUS_OK\n",
    )
    .unwrap();
    let out = dir.path().join("r.json");
    fslab()
        .args([
            "replay",
            lf.to_str().unwrap(),
            "--target",
            dir.path().to_str().unwrap(),
            "--time",
            "1s",
            "--quiet",
        ])
        .args(["--output", &format!("json:{}", out.display())])
        .assert()
        .success();
    let j = read_json(&out);
    let n = ops(&j)[0].1;
    // the file takes 0.1 s and then loops: ~2 ops per 0.1 s
    assert!((15..=22).contains(&n), "{n} ops in 1 s");
}

fn client_txt() -> Option<&'static Path> {
    let p = Path::new("/usr/share/dbench/client.txt");
    require(
        "dbench's /usr/share/dbench/client.txt (apt-get install dbench)",
        p.exists(),
    )
    .then_some(p)
}

/// Without a path, `fslab replay` replays dbench's load file where Debian's
/// dbench package installs it (an installed fslab ships none), and its help
/// says so.
#[test]
fn without_a_path_replay_takes_debians_client_txt() {
    let help = String::from_utf8(fslab().args(["replay", "--help"]).output().unwrap().stdout).unwrap();
    assert!(help.contains("[default: /usr/share/dbench/client.txt]"), "{help}");
    let Some(lf) = client_txt() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    fslab()
        .args([
            "replay",
            "--target",
            dir.path().to_str().unwrap(),
            "--time",
            "1s",
            "--quiet",
        ])
        .args(["--timestamps", "ignore", "--output", &format!("json:{}", out.display())])
        .assert()
        .success();
    let j = read_json(&out);
    assert_eq!(j["cells"][0]["plan"]["loadfile"], lf.to_str().unwrap(), "{j}");
    assert!(ops(&j).iter().map(|o| o.1).sum::<u64>() > 0, "{:?}", ops(&j));
}

/// The whole Debian client.txt with 4 clients on tmpfs and on ext4: no
/// mismatches (dbench itself reports none on this file).
#[test]
fn the_real_client_txt_replays_without_mismatches() {
    let Some(lf) = client_txt() else { return };
    if !require_root_with(&["losetup", "mkfs.ext4", "mount"]) {
        return;
    }
    let tm = Mount::new("tmpfs", "tmpfs", "size=2g");
    let ext4 = Scratch::new("ext4", 2048);
    for (m, xattr) in [(tm.path(), false), (ext4.path(), true)] {
        let res = tempfile::tempdir().unwrap();
        let out = res.path().join("r.json");
        let mut cmd = fslab();
        cmd.args([
            "replay",
            lf.to_str().unwrap(),
            "--target",
            m.to_str().unwrap(),
            "--clients",
            "4",
        ])
        .args([
            "--time",
            "20s",
            "--quiet",
            "--output",
            &format!("json:{}", out.display()),
        ]);
        if xattr {
            cmd.arg("--xattr");
        }
        cmd.assert().success();
        let j = read_json(&out);
        let got = ops(&j);
        assert!(got.len() >= 15, "{got:?}");
        assert!(got.iter().all(|(_, _, m)| *m == 0), "mismatches: {got:?}");
        assert!(leftovers(m).is_empty());
    }
}

#[test]
fn ctrl_c_leaves_nothing() {
    let Some(lf) = client_txt() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let json = format!("json:{}", out.display());
    let (l, t) = (lf.to_str().unwrap(), dir.path().to_str().unwrap());
    let mut child = start(&[
        "replay",
        l,
        "--target",
        t,
        "--clients",
        "2",
        "--time",
        "60s",
        "--quiet",
        "--output",
        &json,
    ]);
    // a signal while client.txt is still parsed would end the run before
    // it began, with no result file
    wait_for_workdir(&mut child, dir.path());
    std::thread::sleep(std::time::Duration::from_millis(2000));
    let code = signal_and_wait(child, libc::SIGINT).status.code();
    assert_eq!(code, Some(130));
    assert_eq!(read_json(&out)["interrupted"], true);
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}

/// Runs fslab ARGS to its end, failing the test (after killing fslab, by
/// its pid) if it takes more than 60 s: a hang fails instead of blocking.
fn run_with_deadline(args: &[&str]) -> std::process::Output {
    let mut child = Command::new(fslab_path())
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("fslab {args:?} hung (killed after 60 s)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// `fslab replay LOADFILE` with a JSON output must be refused: exit 2, one
/// line on stderr containing every `want`, no panic, no output file.
fn expect_refused(loadfile: &Path, target: &Path, want: &[&str]) {
    let out = target.with_file_name(format!("{}.r.json", loadfile.file_name().unwrap().to_string_lossy()));
    let o = run_with_deadline(&[
        "replay",
        loadfile.to_str().unwrap(),
        "--target",
        target.to_str().unwrap(),
        "--time",
        "2s",
        "--quiet",
        "--output",
        &format!("json:{}", out.display()),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}: {err}", loadfile.display());
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    for w in want {
        assert!(err.contains(w), "wanted '{w}' in: {err}");
    }
    assert!(!out.exists(), "a refused run created {}", out.display());
    assert!(leftovers(target).is_empty(), "{:?}", leftovers(target));
}

fn sha(p: &Path) -> String {
    let o = Command::new("sha256sum").arg(p).output().unwrap();
    assert!(o.status.success(), "sha256sum {}", p.display());
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// The decoy: a file and a directory beside the target, which load-file
/// paths with `..` reached through Unlink, Deltree, a truncating NTCreateX
/// and Rename (each one destroyed it before paths were checked). Each load
/// file is refused at its line, and the decoy is untouched.
#[test]
fn dotdot_paths_cannot_touch_a_decoy_beside_the_target() {
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let decoy = t.path().join("decoy");
    std::fs::write(&decoy, b"a user's data, not fslab's\n").unwrap();
    let decoy_dir = t.path().join("decoydir");
    std::fs::create_dir(&decoy_dir).unwrap();
    let decoy_in_dir = decoy_dir.join("f");
    std::fs::write(&decoy_in_dir, b"more of it\n").unwrap();
    let (sum, sum_in_dir) = (sha(&decoy), sha(&decoy_in_dir));
    // the client works in TARGET/fslab-*/c0: three levels up is the tempdir
    for (i, line) in [
        r#"Unlink "..\..\..\decoy" 0x6 NT_STATUS_OK"#,
        r#"Unlink "\clients\client1\..\..\..\..\..\decoy" 0x6 NT_STATUS_OK"#,
        r#"Deltree "..\..\..\decoydir" NT_STATUS_OK"#,
        r#"NTCreateX "..\..\..\decoy" 0x40 0x0 1 NT_STATUS_OK"#,
        r#"NTCreateX "..\..\..\decoy" 0x40 0x4 1 NT_STATUS_OK"#,
        r#"NTCreateX "..\..\..\decoy" 0x40 0x5 1 NT_STATUS_OK"#,
        r#"Rename "..\..\..\decoy" "\clients\moved" NT_STATUS_OK"#,
        r#"Rename "\clients\x" "..\..\..\decoy" NT_STATUS_OK"#,
        r#"Unlink "/../../../decoy" 0x6 NT_STATUS_OK"#,
    ]
    .into_iter()
    .enumerate()
    {
        let lf = t.path().join(format!("dotdot{i}.txt"));
        std::fs::write(&lf, format!("Mkdir \"\\clients\" NT_STATUS_OK\n{line}\n")).unwrap();
        expect_refused(&lf, &target, &[&format!("{}:2: path", lf.display()), "'..'"]);
        assert_eq!(sha(&decoy), sum, "{line}: the decoy changed");
        assert_eq!(sha(&decoy_in_dir), sum_in_dir, "{line}: the decoy directory changed");
    }
}

/// Bad load files that panicked, hung or took unbounded memory: each is
/// refused before a client starts, naming the file (and line).
#[test]
fn bad_load_files_are_refused_without_hanging() {
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let write = |name: &str, text: &[u8]| {
        let p = t.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let ok = b"QUERY_FS_INFORMATION 1 NT_STATUS_OK\n";
    let cases: Vec<(std::path::PathBuf, &str, &str)> = vec![
        (
            write(
                "nul.txt",
                &[&ok[..], b"Unlink \"\\clients\\client1\\a\0b\" 0x6 NT_STATUS_OK\n"].concat(),
            ),
            ":2: path",
            "NUL",
        ),
        (
            write(
                "dot.txt",
                &[&ok[..], b"Deltree \"\\clients\\.\" NT_STATUS_OK\n"].concat(),
            ),
            ":2: path",
            "'.'",
        ),
        (
            write("empty.txt", &[&ok[..], b"Deltree \"\\\" NT_STATUS_OK\n"].concat()),
            ":2: path",
            "empty",
        ),
        (
            write(
                "write4g.txt",
                &[&ok[..], b"WriteX 1 0 4294967295 4294967295 NT_STATUS_OK\n"].concat(),
            ),
            ":2: WriteX of 4294967295 bytes",
            "16 MiB",
        ),
        (
            write(
                "read4g.txt",
                &[&ok[..], b"ReadX 1 0 0x100000000 1 NT_STATUS_OK\n"].concat(),
            ),
            ":2: ReadX of 4294967296 bytes",
            "16 MiB",
        ),
        (
            write("sleep.txt", &[&ok[..], b"SLEEP 4294967295\n"].concat()),
            ":2: SLEEP",
            "60 s",
        ),
        (
            write(
                "emptyloop.txt",
                &[&ok[..], b"LOOP 4294967295\nLOOP 4294967295\nENDLOOP\nENDLOOP\n"].concat(),
            ),
            ":4: a LOOP without an operation",
            "ENDLOOP",
        ),
        (
            // one line without end, as /dev/zero would give if it were read
            write("longline.txt", &vec![b'x'; 1 << 20]),
            ":1: line longer than 64 KiB",
            "",
        ),
        (
            // 400k stars: past the line limit before any matcher sees them
            write(
                "stars.txt",
                format!(
                    "FIND_FIRST \"\\clients\\client1\\{}\" 260 1366 0 *\n",
                    "*".repeat(400_000)
                )
                .as_bytes(),
            ),
            ":1: line longer than 64 KiB",
            "",
        ),
        (
            write("latin1.txt", &[&ok[..], b"Unlink \"\\caf\xe9\" 0x6 *\n"].concat()),
            ":2: not UTF-8",
            "",
        ),
    ];
    for (lf, at, what) in &cases {
        expect_refused(lf, &target, &[&format!("{}{at}", lf.display()), what]);
    }
    // not regular files: each would block or read forever
    let fifo = t.path().join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let sock = t.path().join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let dir = t.path().join("adir");
    std::fs::create_dir(&dir).unwrap();
    for (p, kind) in [
        (fifo.as_path(), "(a FIFO)"),
        (Path::new("/dev/zero"), "(a character device)"),
        (sock.as_path(), "(a socket)"),
        (dir.as_path(), "(a directory)"),
    ] {
        expect_refused(p, &target, &[&format!("{}: not a regular file", p.display()), kind]);
    }
}

#[test]
fn replay_durations_are_bounded() {
    let t = tempfile::tempdir().unwrap();
    let lf = t.path().join("ok.txt");
    std::fs::write(&lf, "QUERY_FS_INFORMATION 1 NT_STATUS_OK\n").unwrap();
    let l = lf.to_str().unwrap();
    expect_usage(
        &["replay", l, "--time", "18446744073709551615s"],
        "--time: '18446744073709551615s' is longer than the 30-day maximum",
    );
    expect_usage(
        &["replay", l, "--time", "31d"],
        "--time: '31d' is longer than the 30-day maximum",
    );
    expect_usage(
        &["replay", l, "--warmup", "18446744073709551615"],
        "--warmup: '18446744073709551615' is longer than the 30-day maximum",
    );
}

/// FIND_FIRST masks that took exponential time (`*a` x14 + `b` against a
/// long name of a's) or overflowed the stack (many `*`): the run ends at
/// its --time with every expectation met.
#[test]
fn pathological_wildcards_finish_on_time() {
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let name = "a".repeat(250);
    let lf = t.path().join("wild.txt");
    std::fs::write(
        &lf,
        format!(
            "Deltree \"\\clients\\client1\" NT_STATUS_OK\n\
             Mkdir \"\\clients\" NT_STATUS_OK\n\
             Mkdir \"\\clients\\client1\" NT_STATUS_OK\n\
             NTCreateX \"\\clients\\client1\\{name}\" 0x40 0x2 1 NT_STATUS_OK\n\
             Close 1 NT_STATUS_OK\n\
             FIND_FIRST \"\\clients\\client1\\*a*a*a*a*a*a*a*a*a*a*a*a*a*ab\" 260 1366 0 NT_STATUS_NO_SUCH_FILE\n\
             FIND_FIRST \"\\clients\\client1\\{stars}a\" 260 1366 0 NT_STATUS_OK\n\
             FIND_FIRST \"\\clients\\client1\\{stars}b\" 260 1366 0 NT_STATUS_NO_SUCH_FILE\n",
            stars = "*".repeat(60_000),
        ),
    )
    .unwrap();
    let out = t.path().join("r.json");
    let o = run_with_deadline(&[
        "replay",
        lf.to_str().unwrap(),
        "--target",
        target.to_str().unwrap(),
        "--time",
        "2s",
        "--quiet",
        "--output",
        &format!("json:{}", out.display()),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let got = ops(&read_json(&out));
    let find = got.iter().find(|(n, _, _)| n == "FIND_FIRST").expect("FIND_FIRST ran");
    assert!(find.1 >= 3 && find.2 == 0, "{find:?}");
    assert!(leftovers(&target).is_empty());
}
