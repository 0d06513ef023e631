//! Issue 35, done-when 3: `git bisect run` with `fslab check` as its script
//! finds the commit of a synthetic history that made what the plan measures
//! slower, and skips an unstable commit through exit 125.
//!
//! The slowdown is real: the plan's filesystem is the test FUSE filesystem
//! (`type = "dir"` at its mount; every write(2) one request of its daemon),
//! its workload 4 KiB writes, and each commit of the history says how long
//! the filesystem takes per write (`write_delay_us`: GOOD_US before commit
//! k, BAD_US from k on) and whether it is unstable (an `unstable` file at
//! commit u). The bisect script tells this test process what the
//! checked-out commit says through a FIFO; the test's control thread
//! applies it to the mount and answers with the commit id through a second
//! FIFO, and only then does the script run `fslab check` (blocking opens and
//! reads as the synchronisation, no sleeps). At the unstable commit every
//! create fails with EIO, so each of the check's cells fails (its file
//! cannot be made) and the check cannot decide: exit 125, and bisect skips
//! the commit.
//!
//! Which commits bisect visits depends on k alone (the history is linear and
//! each answer is good or bad as the delay says), so the unstable commit of a
//! trial is drawn among the commits a dry bisect of the same shape (no fslab)
//! visits, not adjacent to k: every trial's real bisect reaches it.
//!
//! Time: about 15 s per bisection (7 checks of 3 repeats each, every check
//! decided at its first look), under 3 minutes for the 10 (debug build,
//! shared 2-core machine).

use crate::faultfs::{FaultMount, Op};
use crate::util::*;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Commits in each history: commit 0 is good, commit COMMITS-1 bad.
const COMMITS: usize = 64;
/// Bisections, each with its own k and u.
const TRIALS: usize = 10;
/// Each write's service time before commit k and from k on. A FUSE write
/// alone takes tens of µs here, with the scheduling noise of a shared
/// 2-core machine (±20-40% per run of a meta workload on this mount): a
/// service time of its own, as a device has, makes each run's rate steady
/// within a few percent, so a check decides in its first few repeats.
/// From k on, writes take twice as long: the plan's IOPS halve.
const GOOD_US: u64 = 500;
const BAD_US: u64 = 1000;
/// What the check calls regressed: worse by this much or more. Good
/// commits pass once the interval's worse end is under it: at 3 repeats
/// their intervals reach about −17%, a bad commit's about −42% (measured).
const THRESHOLD: &str = "25%";
const REPEAT: &str = "3..8";

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A linear history of COMMITS commits in a new repository at `dir`: commit
/// i's `create_delay_us` is 0 before `k` and DELAY_US from `k` on, and
/// commit `u` (if any) holds an `unstable` file. The commit ids, in order.
fn history(dir: &Path, k: usize, u: Option<usize>) -> Vec<String> {
    git(dir, &["init", "-q", "-b", "main"]);
    let mut ids = Vec::with_capacity(COMMITS);
    for i in 0..COMMITS {
        let delay = if i >= k { BAD_US } else { GOOD_US };
        std::fs::write(dir.join("write_delay_us"), format!("{delay}\n")).unwrap();
        std::fs::write(dir.join("version"), format!("{i}\n")).unwrap();
        let unstable = dir.join("unstable");
        if u == Some(i) {
            std::fs::write(&unstable, "creates fail with EIO\n").unwrap();
        } else if unstable.exists() {
            std::fs::remove_file(&unstable).unwrap();
        }
        git(dir, &["add", "-A"]);
        // fixed, increasing dates: the same shape bisects the same way
        let date = format!("@{} +0000", 1_700_000_000 + i as u64 * 60);
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m"])
            .arg(format!("commit {i}"))
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .unwrap();
        assert!(out.success());
        ids.push(git(dir, &["rev-parse", "HEAD"]).trim().to_string());
    }
    ids
}

/// `git bisect run SCRIPT` over `ids` (first good, last bad) with `env`:
/// its output and `git bisect log`.
fn bisect(dir: &Path, ids: &[String], script: &Path, env: &[(&str, &Path)]) -> (String, String) {
    git(dir, &["bisect", "start", &ids[COMMITS - 1], &ids[0]]);
    let mut c = Command::new("git");
    c.arg("-C")
        .arg(dir)
        .args(["bisect", "run"])
        .arg(script)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = if out.status.success() {
        text
    } else {
        format!("git bisect run failed ({}):\n{text}", out.status)
    };
    let log = git(dir, &["bisect", "log"]);
    git(dir, &["bisect", "reset"]);
    (text, log)
}

/// The indexes of the commits a bisect over a history with its first bad
/// commit at `k` tests, in order (a dry run: the script reads the file).
fn visited(k: usize) -> Vec<usize> {
    let d = tempfile::tempdir().unwrap();
    let ids = history(d.path(), k, None);
    let script = d.path().join("dry.sh");
    let seen = d.path().join("seen");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ncat version >> \"$SEEN\"\n[ \"$(cat write_delay_us)\" = {GOOD_US} ]\n"),
    )
    .unwrap();
    chmod_x(&script);
    let (out, _) = bisect(d.path(), &ids, &script, &[("SEEN", &seen)]);
    assert!(out.contains(&format!("{} is the first bad commit", ids[k])), "{out}");
    std::fs::read_to_string(&seen)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

fn chmod_x(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn mkfifo(p: &Path) {
    let st = Command::new("mkfifo").arg(p).status().unwrap();
    assert!(st.success(), "mkfifo {}", p.display());
}

/// What the bisect script asked for, as the control thread applied it.
#[derive(Debug, Clone, PartialEq)]
struct Applied {
    id: String,
    delay_us: u64,
    unstable: bool,
}

/// The bisect script: tells the test what the checked-out commit says,
/// waits for the answer naming this commit, then runs the check. Exit
/// codes other than 0, 1 and 125 (a usage error, a crash) abort the bisect
/// (255) instead of counting as bad.
const SCRIPT: &str = r#"#!/bin/sh
set -u
id=$(git rev-parse HEAD)
if [ -e unstable ]; then unstable=1; else unstable=0; fi
printf '%s %s %s\n' "$id" "$(cat write_delay_us)" "$unstable" > "$REQ"
read -r ack < "$ACK"
if [ "$ack" != "$id" ]; then echo "bisect script: answer '$ack' for $id" >&2; exit 255; fi
"$FSLAB" check "$BASE" "$PLAN" --quiet --no-telemetry --threshold "$THRESHOLD" --repeat "$REPEAT" >> "$LOG" 2>&1
rc=$?
echo "== $id: exit $rc" >> "$LOG"
case $rc in 0|1|125) exit $rc ;; *) exit 255 ;; esac
"#;

/// Runs `git bisect run` over 10 histories of 64 commits, each with its
/// first slower commit k and an unstable commit u drawn from a seeded RNG:
/// every bisect names k as the first bad commit, having skipped u.
#[test]
fn git_bisect_run_with_fslab_check_finds_the_slower_commit() {
    if !require("root", is_root())
        || !require("/dev/fuse", Path::new("/dev/fuse").exists())
        || !require("git", have("git"))
    {
        return;
    }
    let started = Instant::now();
    let m = FaultMount::new();
    let d = tempfile::tempdir().unwrap();
    let plan = d.path().join("fuse.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"fuse\"\n[[filesystem]]\nname = \"fuse\"\ntype = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"w\"\ntype = \"io\"\nrw = \"write\"\nbs = \"4k\"\n\
             size = \"1m\"\n",
            m.path().display()
        ),
    )
    .unwrap();
    // every write(2) is one request of the daemon; the baseline: once, as
    // the good commits have it
    m.faults.direct_io(true);
    m.faults.delay(Op::Write, Duration::from_micros(GOOD_US));
    let base = d.path().join("base.json");
    let out = fslab()
        .arg("run")
        .arg(&plan)
        .args(["--quiet", "--no-telemetry", "--repeat", "6", "--output"])
        .arg(format!("json:{}", base.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    eprintln!("baseline: {:.1?}", started.elapsed());

    let (req, ack) = (d.path().join("req"), d.path().join("ack"));
    mkfifo(&req);
    mkfifo(&ack);
    let applied = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Applied>::new()));
    let control = {
        let (req, ack, faults, applied) = (req.clone(), ack.clone(), m.faults.clone(), applied.clone());
        std::thread::spawn(move || loop {
            // blocks until a writer opens the FIFO, then reads until it closes it
            let line = std::fs::read_to_string(&req).unwrap();
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.first() == Some(&"quit") {
                return;
            }
            let a = Applied {
                id: f[0].to_string(),
                delay_us: f[1].parse().unwrap(),
                unstable: f[2] == "1",
            };
            faults.clear();
            faults.delay(Op::Write, Duration::from_micros(a.delay_us));
            if a.unstable {
                faults.fail(Op::Create, libc::EIO, 0);
            }
            applied.lock().unwrap().push(a.clone());
            // blocks until the script opens it to read the answer
            std::fs::write(&ack, format!("{}\n", a.id)).unwrap();
        })
    };
    let script = d.path().join("check.sh");
    std::fs::write(&script, SCRIPT).unwrap();
    chmod_x(&script);

    let mut rng = fastrand::Rng::with_seed(35);
    let mut failures = Vec::new();
    let trials = std::env::var("FSLAB_BISECT_TRIALS").map_or(TRIALS, |t| t.parse().unwrap());
    for trial in 0..trials {
        let t0 = Instant::now();
        let k = rng.usize(1..COMMITS);
        let path = visited(k);
        let candidates: Vec<usize> = path.iter().copied().filter(|&u| u.abs_diff(k) > 1).collect();
        assert!(!candidates.is_empty(), "k {k}: bisect visits {path:?}");
        let u = candidates[rng.usize(..candidates.len())];
        let repo = tempfile::tempdir().unwrap();
        let ids = history(repo.path(), k, Some(u));
        let log = d.path().join(format!("check-{trial}.log"));
        applied.lock().unwrap().clear();
        let (out, blog) = bisect(
            repo.path(),
            &ids,
            &script,
            &[
                ("REQ", &req),
                ("ACK", &ack),
                ("FSLAB", &fslab_path()),
                ("BASE", &base),
                ("PLAN", &plan),
                ("LOG", &log),
                ("THRESHOLD", Path::new(THRESHOLD)),
                ("REPEAT", Path::new(REPEAT)),
            ],
        );
        let checks = std::fs::read_to_string(&log).unwrap_or_default();
        let steps = applied.lock().unwrap().len();
        eprintln!("trial {trial}: k {k}, u {u}, {steps} checks, {:.1?}", t0.elapsed());
        if std::env::var("FSLAB_BISECT_SHOW").is_ok() {
            eprintln!("{checks}");
        }
        let found = out.contains(&format!("{} is the first bad commit", ids[k]));
        let skipped = blog.contains(&format!("git bisect skip {}", ids[u]));
        // each commit the script ran on got exactly what it holds
        let mut wrong = Vec::new();
        for a in applied.lock().unwrap().iter() {
            let i = ids.iter().position(|x| *x == a.id).expect("a commit of the history");
            let want = (if i >= k { BAD_US } else { GOOD_US }, i == u);
            if (a.delay_us, a.unstable) != want {
                wrong.push(format!("commit {i}: {a:?}"));
            }
        }
        // and each check said what its commit is: 0 good, 1 slower, 125 unstable
        for l in checks.lines().filter_map(|l| l.strip_prefix("== ")) {
            let (id, rc) = l.split_once(": exit ").unwrap();
            let i = ids.iter().position(|x| x == id).expect("a commit of the history");
            let want = if i == u {
                "125"
            } else if i >= k {
                "1"
            } else {
                "0"
            };
            if rc != want {
                wrong.push(format!("commit {i}: exit {rc}, not {want}"));
            }
        }
        if !found || !skipped || !wrong.is_empty() {
            failures.push(format!(
                "trial {trial} (k {k}, u {u}): found {found}, skipped u {skipped}, {wrong:?}\n{out}\n{blog}\n{checks}"
            ));
        }
    }
    // end the control thread: it is blocked reading the request FIFO (or,
    // after a script that died before reading its answer, writing the answer:
    // a non-blocking reader held open lets that write through first)
    let _hold = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&ack)
        .unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&req)
        .unwrap()
        .write_all(b"quit\n")
        .unwrap();
    control.join().unwrap();
    eprintln!("{trials} bisections in {:.1?}", started.elapsed());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
