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
        "2s",
        "--xattr",
        "--quiet",
        "--output",
        &format!("json:{}", out.display()),
    ]);
    std::thread::sleep(Duration::from_millis(800));
    // while the clients sleep at the end of the file, look at what they did
    let wd = std::fs::read_dir(work.path()).unwrap().next().unwrap().unwrap().path();
    for n in [0, 1] {
        let c = wd.join(format!("c{n}/clients/client{}", n + 1));
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
        (&["--timestamps", "maybe"], "--timestamps: 'maybe': honour or ignore"),
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
