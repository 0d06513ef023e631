//! `fslab cleanup` removes what a SIGKILLed fslab left, and nothing else.

use crate::util::*;
use std::time::Duration;

#[test]
fn sigkill_leftovers_are_removed_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(&[
        "io",
        "--target",
        dir.path().to_str().unwrap(),
        "--size",
        "8m",
        "--runtime",
        "60s",
        "--quiet",
    ]);
    std::thread::sleep(Duration::from_millis(1000));
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    assert_eq!(leftovers(dir.path()).len(), 1, "SIGKILL leaves the work directory");
    // look-alikes fslab did not make (no marker) must survive
    let foreign = dir.path().join("fslab-1-0");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("precious"), b"x").unwrap();
    let keep = dir.path().join("notes.txt");
    std::fs::write(&keep, b"x").unwrap();
    let out = fslab()
        .args(["cleanup", "--dry-run", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("would remove"));
    assert_eq!(leftovers(dir.path()).len(), 2, "--dry-run removes nothing");
    let out = fslab()
        .args(["cleanup", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("removed 1 leftover work directory"));
    assert_eq!(
        leftovers(dir.path()),
        vec!["fslab-1-0".to_string()],
        "only the marked one went"
    );
    assert!(foreign.join("precious").exists() && keep.exists());
}

#[test]
fn a_running_fslab_keeps_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let child = start(&[
        "io",
        "--target",
        dir.path().to_str().unwrap(),
        "--size",
        "8m",
        "--runtime",
        "30s",
        "--quiet",
    ]);
    std::thread::sleep(Duration::from_millis(1000));
    let out = fslab()
        .args(["cleanup", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("its fslab is still running"));
    assert_eq!(leftovers(dir.path()).len(), 1);
    signal_and_wait(child, libc::SIGINT);
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn a_directory_another_host_made_is_kept() {
    // on a shared filesystem (a distributed run), a pid means something only
    // on the host that wrote it
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("fslab-999999-0");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join(".fslab-workdir"), "pid 999999\nhost some-other-node\n").unwrap();
    let ours = dir.path().join("fslab-999998-0");
    std::fs::create_dir(&ours).unwrap();
    let host = rustix::system::uname().nodename().to_string_lossy().into_owned();
    std::fs::write(ours.join(".fslab-workdir"), format!("pid 999998\nhost {host}\n")).unwrap();
    let out = fslab()
        .args(["cleanup", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("or ran on another host"));
    assert_eq!(leftovers(dir.path()), vec!["fslab-999999-0".to_string()]);
}
