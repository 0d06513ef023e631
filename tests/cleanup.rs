//! `fslab cleanup` removes what a SIGKILLed fslab left, and nothing else: not
//! the directory of a run that lives (whatever its pid or name), not what is
//! mounted inside a stale one. fslab's own guards say what they left.

use crate::util::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn host() -> String {
    rustix::system::uname().nodename().to_string_lossy().into_owned()
}

/// Every entry under `dir`, not following symlinks: path, and the crc32c of
/// a file, the target of a symlink, or "dir".
fn checksums(dir: &Path) -> Vec<(String, String)> {
    let mut v = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let ft = e.file_type().unwrap();
            let what = if ft.is_dir() {
                todo.push(p.clone());
                "dir".to_string()
            } else if ft.is_symlink() {
                format!("-> {}", std::fs::read_link(&p).unwrap().display())
            } else {
                format!("{:08x}", crc32c::crc32c(&std::fs::read(&p).unwrap()))
            };
            v.push((p.strip_prefix(dir).unwrap().display().to_string(), what));
        }
    }
    v.sort();
    v
}

/// A directory of files that are not fslab's, with its checksums.
fn decoy(parent: &Path) -> (PathBuf, Vec<(String, String)>) {
    let d = parent.join("decoy");
    std::fs::create_dir_all(d.join("deep/deeper")).unwrap();
    let mut rng = fastrand::Rng::new();
    for (i, name) in ["a", "deep/b", "deep/deeper/c"].iter().enumerate() {
        let data: Vec<u8> = (0..4096 * (i + 1)).map(|_| rng.u8(..)).collect();
        std::fs::write(d.join(name), data).unwrap();
    }
    let sums = checksums(&d);
    assert_eq!(sums.len(), 5);
    (d, sums)
}

/// A bind mount the test made; always unmounted when dropped.
struct Bind(PathBuf);

impl Bind {
    fn new(src: &Path, dst: &Path) -> Self {
        let ok = Command::new("mount").arg("--bind").arg(src).arg(dst).status().unwrap();
        assert!(ok.success(), "mount --bind {} {}", src.display(), dst.display());
        Bind(dst.to_path_buf())
    }
}

impl Drop for Bind {
    fn drop(&mut self) {
        if !Command::new("umount").arg(&self.0).status().is_ok_and(|s| s.success()) {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

/// The work directory a starting fslab makes in `place`, once its marker is
/// written (with `want` in it), and the marker's text.
fn wait_for_workdir(place: &Path, want: &str) -> (PathBuf, String) {
    let t = Instant::now();
    loop {
        for n in leftovers(place) {
            let d = place.join(&n);
            if let Ok(text) = std::fs::read_to_string(d.join(".fslab-workdir")) {
                if text.starts_with("pid ") && text.contains(want) {
                    return (d, text);
                }
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "no work directory in {}",
            place.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until the io run in `work` has laid out its `size` bytes.
fn wait_laid_out(work: &Path, size: u64) {
    let t = Instant::now();
    while std::fs::metadata(work.join("job0.dat")).map(|m| m.len()).unwrap_or(0) < size {
        assert!(t.elapsed() < Duration::from_secs(30), "no laid out file");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn cleanup(place: &Path) -> (Option<i32>, String, String) {
    let out = fslab().arg("cleanup").arg(place).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Waits for a child this test started, at most 30 s.
fn wait(mut child: Child) -> std::process::Output {
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(t.elapsed() < Duration::from_secs(30), "the run did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// `cleanup` on a place holding one live run's directory `work`: kept,
/// every file as it was (once its io run has laid out its `size` bytes:
/// a read-only run changes nothing after that).
fn assert_kept(place: &Path, work: &Path, size: u64) {
    wait_laid_out(work, size);
    std::fs::write(work.join("witness"), b"still here").unwrap();
    let before = checksums(work);
    let (code, out, err) = cleanup(place);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(&format!("kept {} (its fslab is still running", work.display())),
        "{out}"
    );
    assert!(out.contains("removed 0 leftover"), "{out}");
    assert_eq!(checksums(work), before, "the live directory is untouched");
}

#[test]
fn a_live_fslab_in_a_pid_namespace_keeps_its_directory() {
    if !require_root_with(&["unshare"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = tempfile::tempdir().unwrap();
    let json = json.path().join("r.json");
    let child = Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc"])
        .arg(fslab_path())
        .args([
            "io",
            "--rw",
            "randread",
            "--size",
            "8m",
            "--runtime",
            "60s",
            "--quiet",
            "--target",
        ])
        .arg(dir.path())
        .arg("--output")
        .arg(format!("json:{}", json.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (work, marker) = wait_for_workdir(dir.path(), "lock flock");
    // what fooled the pid check: on this side pid 1 is init, not fslab
    assert!(marker.starts_with("pid 1\n"), "{marker}");
    assert_kept(dir.path(), &work, 8 << 20);
    // fslab is the child of unshare (pid 1 inside): stop it as a user would
    let u = child.id();
    let kids = std::fs::read_to_string(format!("/proc/{u}/task/{u}/children")).unwrap();
    let pid: i32 = kids
        .split_whitespace()
        .next()
        .expect("unshare's child")
        .parse()
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap().trim(),
        "fslab"
    );
    // SAFETY: kill(2) on the pid of a process this test started.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let out = wait(child);
    // 128 + SIGTERM
    assert_eq!(out.status.code(), Some(143), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(read_json(&json)["interrupted"], true);
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}

#[test]
fn a_live_fslab_under_another_name_keeps_its_directory_and_scratch_mount() {
    if !require_root_with(&["mkfs.ext4", "mount", "losetup"]) {
        return;
    }
    let bin = tempfile::tempdir().unwrap();
    let tool = bin.path().join("bench-tool");
    // copied by cp, not std::fs::copy: a file this process holds open for writing
    // leaks into any child another test thread forks meanwhile, and exec of it then
    // fails with ETXTBSY (seen in CI); cp's descriptor lives and dies in cp alone
    let cp = Command::new("cp").arg(fslab_path()).arg(&tool).status().unwrap();
    assert!(cp.success());
    let scratch = scratch_dir();
    let plan = bin.path().join("plan.toml");
    std::fs::write(
        &plan,
        "[[filesystem]]\ntype = \"ext4\"\nsize = \"256m\"\n[[workload]]\ntype = \"io\"\nsize = \"16m\"\nruntime = \"60s\"\n",
    )
    .unwrap();
    let json = bin.path().join("r.json");
    let child = Command::new(&tool)
        .arg("run")
        .arg(&plan)
        .args(["--quiet", "--scratch-dir"])
        .arg(scratch.path())
        .arg("--output")
        .arg(format!("json:{}", json.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // the record comes before the mount: wait for the mount itself
    let (work, _) = wait_for_workdir(scratch.path(), "mount mnt ext4");
    let t = Instant::now();
    while mounts_under(&work).is_empty() {
        assert!(t.elapsed() < Duration::from_secs(30), "no scratch mount appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
    let comm = std::fs::read_to_string(format!("/proc/{}/comm", child.id())).unwrap();
    assert_eq!(comm.trim(), "bench-tool");
    let mounts = mounts_under(scratch.path());
    let loops = loops_backed_in(scratch.path());
    assert_eq!((mounts.len(), loops.len()), (1, 1));
    // the scratch filesystem's files are its run's: only the directory is checked
    let (code, out, err) = cleanup(scratch.path());
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(&format!("kept {}", work.display())), "{out}");
    assert_eq!(mounts_under(scratch.path()), mounts, "the live scratch mount stays");
    assert_eq!(loops_backed_in(scratch.path()), loops, "and its loop device");
    assert!(work.join("fs.img").exists() && work.join("mnt/lost+found").exists());
    let out = signal_and_wait(child, libc::SIGTERM);
    // 128 + SIGTERM
    assert_eq!(out.status.code(), Some(143), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(read_json(&json)["interrupted"], true);
    let left = scratch_leftovers(scratch.path());
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_mount_inside_a_stale_directory_stops_cleanup_and_survives() {
    if !require_root_with(&["mount", "umount"]) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let (decoy, sums) = decoy(t.path());
    let place = t.path().join("place");
    std::fs::create_dir(&place).unwrap();
    // a directory as a SIGKILLed fslab leaves it: its pid is dead, its lock free
    let mut dead = Command::new("true").spawn().unwrap();
    dead.wait().unwrap();
    let stale = place.join(format!("fslab-{}-0", dead.id()));
    std::fs::create_dir_all(stale.join("sub")).unwrap();
    std::fs::write(
        stale.join(".fslab-workdir"),
        format!("pid {}\nhost {}\nlock flock\n", dead.id(), host()),
    )
    .unwrap();
    std::fs::write(stale.join("job0.dat"), b"fslab's").unwrap();
    std::os::unix::fs::symlink(&decoy, stale.join("link")).unwrap();
    let bind = Bind::new(&decoy, &stale.join("sub"));
    let (code, out, err) = cleanup(&place);
    assert_eq!(code, Some(1), "{out}{err}");
    let sub = stale.join("sub");
    assert!(
        err.contains(&format!(
            "{}: a mount fslab did not make (",
            sub.canonicalize().unwrap().display()
        )) && err.contains(&format!("not removing {}; unmount it first", stale.display())),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(checksums(&decoy), sums, "nothing of the decoy went");
    assert_eq!(mounts_under(&stale).len(), 1, "the bind mount is still there");
    assert_eq!(checksums(&sub), sums);
    assert!(
        stale.join("job0.dat").exists(),
        "the refused directory is left as it was"
    );
    drop(bind);
    let (code, out, err) = cleanup(&place);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("removed 1 leftover work directory"), "{out}");
    assert!(!stale.exists());
    assert_eq!(checksums(&decoy), sums, "the symlink out was not followed");
}

#[test]
fn a_guard_says_when_its_directory_vanished() {
    let dir = tempfile::tempdir().unwrap();
    let child = start(&[
        "io",
        "--target",
        dir.path().to_str().unwrap(),
        "--size",
        "8m",
        "--runtime",
        "60s",
        "--quiet",
    ]);
    let (work, _) = wait_for_workdir(dir.path(), "lock flock");
    // once laid out, the run makes no more files there: the removal cannot race it
    wait_laid_out(&work, 8 << 20);
    std::fs::remove_dir_all(&work).unwrap();
    let out = signal_and_wait(child, libc::SIGINT);
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!(
        "fslab: warning: the work directory {} vanished during the run (was the target unmounted?)",
        work.display()
    );
    assert_eq!(err.matches("fslab: warning: the work directory").count(), 1, "{err}");
    assert!(err.contains(&want), "{err}");
}

#[test]
fn a_target_remounted_read_only_leaves_a_directory_cleanup_removes() {
    if !require_root_with(&["mkfs.ext4", "mount", "losetup"]) {
        return;
    }
    let fs = Scratch::new("ext4", 64);
    let child = start(&[
        "io",
        "--target",
        fs.path().to_str().unwrap(),
        "--rw",
        "randread",
        "--size",
        "8m",
        "--runtime",
        "60s",
        "--quiet",
    ]);
    let (work, _) = wait_for_workdir(fs.path(), "lock flock");
    // read-only as soon as nothing is open for writing (the layout is done)
    let t = Instant::now();
    while !Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(fs.path())
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success()
    {
        assert!(t.elapsed() < Duration::from_secs(30), "could not remount read-only");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = signal_and_wait(child, libc::SIGINT);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("fslab: warning: could not remove {}: ", work.display()))
            && err.contains("Read-only file system")
            && err.contains(&format!(
                "left behind, `fslab cleanup {}` removes it later",
                fs.path().display()
            )),
        "{err}"
    );
    assert!(work.exists());
    let ok = Command::new("mount")
        .args(["-o", "remount,rw"])
        .arg(fs.path())
        .status()
        .unwrap();
    assert!(ok.success());
    let (code, out, err) = cleanup(fs.path());
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("removed 1 leftover work directory"), "{out}");
    assert!(leftovers(fs.path()).is_empty());
}

#[test]
fn bad_places_are_named() {
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("notes.txt");
    std::fs::write(&file, b"x").unwrap();
    expect_usage(
        &["cleanup", "/nonexistent/place"],
        "cleanup: '/nonexistent/place': No such file or directory",
    );
    expect_usage(
        &["cleanup", file.to_str().unwrap()],
        &format!("cleanup: '{}' is not a directory", file.display()),
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
}

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
    wait_for_workdir(dir.path(), "lock flock");
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
    let (code, out, err) = cleanup(dir.path());
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("removed 1 leftover work directory"), "{out}");
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
    let (work, _) = wait_for_workdir(dir.path(), "lock flock");
    // an older fslab's marker holds no lock: its pid must not run fslab either
    let pid = child.id();
    let old = dir.path().join(format!("fslab-{pid}-7"));
    std::fs::create_dir(&old).unwrap();
    std::fs::write(old.join(".fslab-workdir"), format!("pid {pid}\nhost {}\n", host())).unwrap();
    let (code, out, err) = cleanup(dir.path());
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(&format!("kept {} (its fslab is still running", work.display())),
        "{out}"
    );
    assert!(
        out.contains(&format!("kept {} (its marker holds no lock", old.display())),
        "{out}"
    );
    assert_eq!(leftovers(dir.path()).len(), 2);
    signal_and_wait(child, libc::SIGINT);
    assert_eq!(leftovers(dir.path()), vec![format!("fslab-{pid}-7")]);
    let (code, out, _) = cleanup(dir.path());
    assert_eq!(code, Some(0));
    assert!(out.contains("removed 1 leftover work directory"), "{out}");
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn a_directory_another_host_made_is_kept() {
    // on a shared filesystem (a distributed run), a lock or pid means
    // something only on the host that took it
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("fslab-999999-0");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(
        theirs.join(".fslab-workdir"),
        "pid 999999\nhost some-other-node\nlock flock\n",
    )
    .unwrap();
    let ours = dir.path().join("fslab-999998-0");
    std::fs::create_dir(&ours).unwrap();
    std::fs::write(ours.join(".fslab-workdir"), format!("pid 999998\nhost {}\n", host())).unwrap();
    let (code, out, err) = cleanup(dir.path());
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("made on host some-other-node"), "{out}");
    assert_eq!(leftovers(dir.path()), vec!["fslab-999999-0".to_string()]);
}
