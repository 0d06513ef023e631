//! A verdict on every cell (issue 32): twenty deliberately wrong setups
//! are flagged with the right reason, twenty correct ones raise no flag. Part of the
//! interference test binary: its cells run one after another with nothing
//! of the main suite beside them (a busy machine would rightly flag every
//! cell "disturbed"; that flag is reported but not held against a correct
//! setup, it is the machine's, not the setup's).

use crate::util::*;
use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// `fslab ARGS --output json:…` (a path appended as the last argument where
/// given); the first cell's verdict, and the text output.
fn verdict_of(args: &[&str]) -> (Value, String) {
    let res = tempfile::tempdir().unwrap();
    let out = res.path().join("r.json");
    let o = fslab()
        .args(args)
        .args(["--output", "text", "--output"])
        .arg(format!("json:{}", out.display()))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "fslab {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let j = read_json(&out);
    let v = j["cells"][0]["verdict"].clone();
    assert!(v.is_object(), "no verdict: {}", j["cells"][0]);
    (v, String::from_utf8_lossy(&o.stdout).into_owned())
}

fn flags(v: &Value) -> Vec<String> {
    v["flags"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

/// What a wrong setup must show: a flag, or a bound.
enum Want {
    Flag(&'static str),
    Bound(&'static str),
}

fn shows(v: &Value, want: &Want) -> bool {
    match want {
        Want::Flag(f) => flags(v).iter().any(|x| x == f),
        Want::Bound(b) => v["bound"] == *b,
    }
}

/// A shell loop in a process group of its own, ended whole (its running
/// child too) when dropped, also on panic.
struct Group(std::process::Child);

impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: kill(2) of the process group this test started (pgid = its pid)
        unsafe {
            libc::kill(-(self.0.id() as i32), libc::SIGKILL);
        }
        let _ = self.0.wait();
    }
}

/// A loop device whose image is on tmpfs, with ext4 mounted on it.
struct TmpfsBacked {
    mount: Option<Mount>,
    dev: String,
    _dir: tempfile::TempDir,
}

impl TmpfsBacked {
    fn new() -> Self {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let img = dir.path().join("img");
        std::fs::File::create(&img).unwrap().set_len(256 << 20).unwrap();
        let dev = String::from_utf8(
            Command::new("losetup")
                .args(["--find", "--show"])
                .arg(&img)
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap()
        .trim()
        .to_string();
        assert!(dev.starts_with("/dev/loop"), "losetup: {dev}");
        assert!(Command::new("mkfs.ext4")
            .args(["-q", "-F", &dev])
            .status()
            .unwrap()
            .success());
        let mount = Some(Mount::new(&dev, "ext4", ""));
        TmpfsBacked { mount, dev, _dir: dir }
    }
}

impl Drop for TmpfsBacked {
    fn drop(&mut self) {
        self.mount.take();
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

pub fn wrong_setups_are_flagged_and_correct_ones_are_not() {
    if !require_root_with(&["losetup", "mkfs.ext4", "mkfs.xfs", "mount", "dbench"]) {
        return;
    }
    let ext4 = Scratch::new("ext4", 2048);
    let nobarrier = {
        let lo = LoopDev::new(512);
        lo.mkfs("ext4");
        (Mount::new(&lo.dev, "ext4", "barrier=0"), lo)
    };
    let tmpfs_backed = TmpfsBacked::new();
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let t = s(ext4.path()).to_string();
    fn with<'a>(t: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
        let mut a = vec!["io", "--target", t, "--quiet"];
        a.extend_from_slice(extra);
        a
    }
    let io = |extra: &[&'static str]| with(t.as_str(), extra);
    let mut wrong: Vec<(&str, Want, Value)> = Vec::new();
    // after each cell, what it left dirty goes to the device: a setup's
    // writeback must not land in the next one's cell (that is setup 10)
    let settle = || {
        for p in [ext4.path(), nobarrier.0.path()] {
            assert!(Command::new("sync").arg("-f").arg(p).status().unwrap().success());
        }
    };
    let run = |what: &'static str, want: Want, args: Vec<&str>| {
        let (v, text) = verdict_of(&args);
        assert!(text.contains("verdict: "), "{what}: no verdict line:\n{text}");
        settle();
        (what, want, v)
    };
    // 1. buffered writes the device never saw, reported as the device's
    wrong.push(run(
        "buffered writes of a file smaller than RAM",
        Want::Flag("page-cache"),
        io(&["--rw", "write", "--bs", "1m", "--size", "512m", "--runtime", "2s"]),
    ));
    // its dirty pages must not reach the next cells (that is setup 10)
    assert!(Command::new("sync")
        .arg("-f")
        .arg(ext4.path())
        .status()
        .unwrap()
        .success());
    // 2. buffered reads of a cached file presented as a device figure
    wrong.push(run(
        "buffered reads of a file smaller than RAM",
        Want::Bound("page-cache"),
        io(&["--rw", "randread", "--size", "64m", "--runtime", "2s"]),
    ));
    // 3. fsync on an ext4 mounted without barriers
    let nb = s(nobarrier.0.path()).to_string();
    wrong.push(run(
        "fsync on ext4 mounted barrier=0",
        Want::Flag("no-flush"),
        vec![
            "io",
            "--target",
            &nb,
            "--quiet",
            "--rw",
            "write",
            "--size",
            "8m",
            "--runtime",
            "2s",
            "--fsync",
            "1",
        ],
    ));
    // 4. fsync on a loop device whose image is on tmpfs
    let tb = s(tmpfs_backed.mount.as_ref().unwrap().path()).to_string();
    wrong.push(run(
        "fsync on a loop device over tmpfs",
        Want::Flag("no-flush"),
        vec![
            "io",
            "--target",
            &tb,
            "--quiet",
            "--rw",
            "write",
            "--size",
            "8m",
            "--runtime",
            "2s",
            "--fsync",
            "1",
        ],
    ));
    // 5. fslab's own CPU is the limit
    wrong.push(run(
        "the null engine",
        Want::Bound("tool"),
        io(&[
            "--engine",
            "null",
            "--rw",
            "randread",
            "--size",
            "64m",
            "--runtime",
            "2s",
        ]),
    ));
    // 6. a working set far below the bandwidth-seconds
    wrong.push(run(
        "a 1 MiB working set for 2 s",
        Want::Flag("small-working-set"),
        io(&["--direct", "--rw", "randread", "--size", "1m", "--runtime", "2s"]),
    ));
    // 7. too short to measure
    wrong.push(run(
        "a 200 ms run",
        Want::Flag("too-short"),
        io(&["--direct", "--rw", "randread", "--size", "64m", "--runtime", "200ms"]),
    ));
    // 8. O_DIRECT on tmpfs
    let sh = s(shm.path()).to_string();
    wrong.push(run(
        "O_DIRECT on tmpfs",
        Want::Flag("direct-not-honoured"),
        vec![
            "io",
            "--target",
            &sh,
            "--quiet",
            "--direct",
            "--rw",
            "randread",
            "--size",
            "16m",
            "--runtime",
            "1s",
        ],
    ));
    // 9. a CPU hog beside the cell
    {
        let mut hogs: Vec<std::process::Child> = (0..2)
            .map(|_| Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap())
            .collect();
        wrong.push(run(
            "two CPU hogs beside the cell",
            Want::Flag("disturbed"),
            io(&["--direct", "--rw", "randread", "--size", "64m", "--runtime", "2s"]),
        ));
        for h in &mut hogs {
            let _ = h.kill();
            let _ = h.wait();
        }
    }
    // 10. writes to the filesystem fslab did not make, flushed during a
    // read-only cell (a loop of 64 MiB synced rewrites beside it, in a
    // process group of its own, ended whole)
    {
        let junk = ext4.path().join("earlier");
        let writer = Group(
            Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "while :; do dd if=/dev/zero of='{}' bs=1M count=64 conv=fsync 2>/dev/null; done",
                    junk.display()
                ))
                .stdout(Stdio::null())
                .process_group(0)
                .spawn()
                .unwrap(),
        );
        wrong.push(run(
            "writes fslab did not make, flushed during a read-only cell",
            Want::Flag("foreign-writeback"),
            io(&["--direct", "--rw", "randread", "--size", "64m", "--runtime", "2s"]),
        ));
        drop(writer);
        std::fs::remove_file(&junk).unwrap();
    }
    // 11. a run stopped by Ctrl-C once its timed reads run (as
    // tests/signals.rs stops one)
    {
        let res = tempfile::tempdir().unwrap();
        let out = res.path().join("r.json");
        warm_calibration();
        let mut child = Command::new(fslab_path())
            .args(io(&[
                "--rw",
                "randread",
                "--jobs",
                "2",
                "--size",
                "8m",
                "--runtime",
                "60s",
            ]))
            .arg("--output")
            .arg(format!("json:{}", out.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_for_workdir(&mut child, ext4.path());
        wait_for_reads(&mut child, 5000);
        let o = signal_and_wait(child, libc::SIGINT);
        assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
        let j = read_json(&out);
        wrong.push((
            "a run stopped by Ctrl-C",
            Want::Flag("stopped-early"),
            j["cells"][0]["verdict"].clone(),
        ));
    }
    let plans = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    // 12. the seed-samba plan as shipped (one filesystem, 3 s): a replay in
    // the page cache, not the disks the seed measured
    let samba = plans.path().join("samba.toml");
    {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/seed-samba-xattr.toml")).unwrap();
        let mut plan: toml::Table = text.parse().unwrap();
        plan.insert("repeat".into(), 1.into());
        let fss = plan["filesystem"].as_array_mut().unwrap();
        fss.truncate(1);
        fss[0].as_table_mut().unwrap().insert("size".into(), "1g".into());
        let w = plan["workload"].as_array_mut().unwrap();
        w.truncate(1);
        w[0].as_table_mut().unwrap().insert("time".into(), "3s".into());
        // one cell: the replay without its xattr factor (its baseline level, no xattr)
        for k in ["factors", "compare", "baseline"] {
            plan.remove(k);
        }
        std::fs::write(&samba, toml::to_string(&plan).unwrap()).unwrap();
    }
    wrong.push(run(
        "the seed-samba plan (shortened)",
        Want::Flag("page-cache"),
        vec!["run", s(&samba), "--quiet", "--scratch-dir", s(scratch.path())],
    ));

    // variants of the mechanisms above, each a setup of its own
    wrong.push(run(
        "buffered 4k random writes of a file smaller than RAM",
        Want::Flag("page-cache"),
        io(&["--rw", "randwrite", "--size", "256m", "--runtime", "2s"]),
    ));
    assert!(Command::new("sync")
        .arg("-f")
        .arg(ext4.path())
        .status()
        .unwrap()
        .success());
    wrong.push(run(
        "fdatasync on ext4 mounted barrier=0",
        Want::Flag("no-flush"),
        vec![
            "io",
            "--target",
            &nb,
            "--quiet",
            "--rw",
            "randwrite",
            "--size",
            "8m",
            "--runtime",
            "2s",
            "--fdatasync",
            "1",
        ],
    ));
    wrong.push(run(
        "fdatasync on a loop device over tmpfs",
        Want::Flag("no-flush"),
        vec![
            "io",
            "--target",
            &tb,
            "--quiet",
            "--rw",
            "randwrite",
            "--size",
            "8m",
            "--runtime",
            "2s",
            "--fdatasync",
            "1",
        ],
    ));
    wrong.push(run(
        "the null engine writing",
        Want::Bound("tool"),
        io(&[
            "--engine",
            "null",
            "--rw",
            "randwrite",
            "--size",
            "64m",
            "--runtime",
            "2s",
        ]),
    ));
    wrong.push(run(
        "direct writes over a 1 MiB working set for 2 s",
        Want::Flag("small-working-set"),
        io(&["--direct", "--rw", "randwrite", "--size", "1m", "--runtime", "2s"]),
    ));
    wrong.push(run(
        "a 500 ms run",
        Want::Flag("too-short"),
        io(&["--direct", "--rw", "randwrite", "--size", "64m", "--runtime", "500ms"]),
    ));
    wrong.push(run(
        "O_DIRECT writes on tmpfs",
        Want::Flag("direct-not-honoured"),
        vec![
            "io",
            "--target",
            &sh,
            "--quiet",
            "--direct",
            "--rw",
            "randwrite",
            "--size",
            "16m",
            "--runtime",
            "1s",
        ],
    ));
    {
        let mut hogs: Vec<std::process::Child> = (0..2)
            .map(|_| Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap())
            .collect();
        wrong.push(run(
            "two CPU hogs beside a metadata cell",
            Want::Flag("disturbed"),
            vec!["meta", "--target", t.as_str(), "--quiet", "--files", "20k"],
        ));
        for h in &mut hogs {
            let _ = h.kill();
            let _ = h.wait();
        }
    }

    // correct setups: no flag (a machine's disturbance aside)
    let mut correct: Vec<(&str, Value)> = Vec::new();
    let mut ok = |what: &'static str, args: Vec<&str>| {
        let (v, _) = verdict_of(&args);
        settle();
        correct.push((what, v));
    };
    ok(
        "direct 4k random reads",
        io(&["--direct", "--rw", "randread", "--size", "256m", "--runtime", "2s"]),
    );
    ok(
        "direct 4k random writes",
        io(&["--direct", "--rw", "randwrite", "--size", "256m", "--runtime", "2s"]),
    );
    ok(
        "direct 1m sequential reads",
        io(&[
            "--direct",
            "--rw",
            "read",
            "--bs",
            "1m",
            "--size",
            "1g",
            "--runtime",
            "2s",
        ]),
    );
    ok(
        "direct mixed random I/O",
        io(&["--direct", "--rw", "randrw", "--size", "256m", "--runtime", "2s"]),
    );
    ok(
        "direct random reads, 4 jobs",
        io(&[
            "--direct",
            "--rw",
            "randread",
            "--jobs",
            "4",
            "--size",
            "64m",
            "--runtime",
            "2s",
        ]),
    );
    ok(
        "fsync'd writes with barriers",
        io(&[
            "--direct",
            "--rw",
            "write",
            "--size",
            "64m",
            "--runtime",
            "2s",
            "--fsync",
            "8",
        ]),
    );
    ok(
        "buffered reads of a cached file",
        io(&["--rw", "randread", "--size", "64m", "--runtime", "2s"]),
    );
    ok(
        "a metadata cell",
        vec!["meta", "--target", t.as_str(), "--quiet", "--files", "20k"],
    );

    ok(
        "direct 16k random reads",
        io(&[
            "--direct",
            "--rw",
            "randread",
            "--bs",
            "16k",
            "--size",
            "256m",
            "--runtime",
            "2s",
        ]),
    );
    ok(
        "direct 64k random reads",
        io(&[
            "--direct",
            "--rw",
            "randread",
            "--bs",
            "64k",
            "--size",
            "512m",
            "--runtime",
            "2s",
        ]),
    );
    ok(
        "direct 8k random reads",
        io(&[
            "--direct",
            "--rw",
            "randread",
            "--bs",
            "8k",
            "--size",
            "256m",
            "--runtime",
            "2s",
        ]),
    );
    ok(
        "direct 64k random writes",
        io(&[
            "--direct",
            "--rw",
            "randwrite",
            "--bs",
            "64k",
            "--size",
            "512m",
            "--runtime",
            "2s",
        ]),
    );
    ok(
        "direct 1m sequential writes",
        io(&[
            "--direct",
            "--rw",
            "write",
            "--bs",
            "1m",
            "--size",
            "1g",
            "--runtime",
            "2s",
        ]),
    );
    ok(
        "io_uring at depth 8",
        io(&[
            "--direct",
            "--engine",
            "uring",
            "--iodepth",
            "8",
            "--rw",
            "randread",
            "--size",
            "256m",
            "--runtime",
            "2s",
        ]),
    );
    ok(
        "direct mixed random I/O, 4 jobs",
        io(&[
            "--direct",
            "--rw",
            "randrw",
            "--jobs",
            "4",
            "--size",
            "64m",
            "--runtime",
            "2s",
        ]),
    );
    ok(
        "buffered sequential reads of a cached file",
        io(&["--rw", "read", "--bs", "1m", "--size", "256m", "--runtime", "2s"]),
    );
    ok(
        "a metadata cell with xattrs",
        vec![
            "meta",
            "--target",
            t.as_str(),
            "--quiet",
            "--files",
            "20k",
            "--xattr",
            "user.test:64",
        ],
    );
    ok(
        "buffered writes, each one fsync'd",
        io(&["--rw", "write", "--size", "64m", "--runtime", "2s", "--fsync", "1"]),
    );
    let raw = LoopDev::new(512);
    ok(
        "direct random reads of a raw loop device",
        vec![
            "io",
            "--target",
            &raw.dev,
            "--allow-device",
            "--quiet",
            "--direct",
            "--rw",
            "randread",
            "--runtime",
            "2s",
        ],
    );
    let xfs = Scratch::new("xfs", 2048);
    ok(
        "direct random reads on XFS",
        vec![
            "io",
            "--target",
            s(xfs.path()),
            "--quiet",
            "--direct",
            "--rw",
            "randread",
            "--size",
            "256m",
            "--runtime",
            "2s",
        ],
    );

    let mut report = String::new();
    let mut missed = Vec::new();
    for (what, want, v) in &wrong {
        let hit = shows(v, want);
        report += &format!(
            "{} wrong: {what}: {} {}\n",
            if hit { "ok" } else { "MISSED" },
            v["bound"],
            flags(v).join(",")
        );
        if !hit {
            missed.push(*what);
        }
    }
    let mut false_alarms = Vec::new();
    for (what, v) in &correct {
        let f: Vec<String> = flags(v).into_iter().filter(|f| f != "disturbed").collect();
        report += &format!("correct: {what}: {} {}\n", v["bound"], flags(v).join(","));
        if !f.is_empty() {
            false_alarms.push(format!("{what}: {f:?} ({})", v["flags"]));
        }
    }
    eprintln!("{report}");
    assert!(missed.is_empty(), "wrong setups not flagged: {missed:?}\n{report}");
    assert!(
        false_alarms.is_empty(),
        "correct setups flagged: {false_alarms:?}\n{report}"
    );
}
