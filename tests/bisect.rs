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
//! Time: about 11 s per bisection (7 checks of 3 repeats each, every check
//! decided at its first look), under 2 minutes for the 10, also with two
//! busy loops keeping both CPUs of this shared 2-core machine busy.

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
/// alone takes about 100 µs here, with the scheduling noise of a shared
/// 2-core machine (±20-40% per run of a meta workload on this mount): a
/// service time of its own, as a device has, makes each run's rate steady
/// within a few percent, so a check decides in its first few repeats. It
/// is 2 ms, not less: on a loaded machine the daemon's wake-ups add
/// hundreds of µs to a write, which at 500 µs left a good commit's check
/// undecided now and then (exit 125, a wrong skip).
/// From k on, writes take twice as long: the plan's IOPS halve.
const GOOD_US: u64 = 2000;
const BAD_US: u64 = 4000;
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
             size = \"512k\"\n",
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
    // fewer bisections while working on the test; FSLAB_BISECT_SHOW=1
    // prints every check's report
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

/// Per-repeat write IOPS of `arm` in a lab run's report, in repeat order.
fn per_repeat(r: &fslab::model::Report, arm: &str) -> Vec<f64> {
    let mut v: Vec<(u32, f64)> = r
        .cells
        .iter()
        .filter_map(|c| {
            let l = c.lab.as_ref().filter(|l| l.filesystem == arm)?;
            Some((l.repeat, c.directions.first()?.iops))
        })
        .collect();
    v.sort_by_key(|x| x.0);
    v.into_iter().map(|x| x.1).collect()
}

fn mean_sd(x: &[f64]) -> (f64, f64) {
    let m = x.iter().sum::<f64>() / x.len() as f64;
    let v = x.iter().map(|y| (y - m).powi(2)).sum::<f64>() / (x.len() as f64 - 1.0);
    (m, v.sqrt())
}

/// fsperf's rule as the issue states it: the test's mean below the
/// baseline's mean − 1.96 σ of the baseline (higher is better).
fn fsperf_regressed(base: &[f64], test: &[f64]) -> bool {
    let (mb, sb) = mean_sd(base);
    mean_sd(test).0 < mb - 1.96 * sb
}

/// fsperf's rule either way: the test's mean outside the baseline's mean
/// ± 1.96 σ of the baseline.
fn fsperf_changed(base: &[f64], test: &[f64]) -> bool {
    let (mb, sb) = mean_sd(base);
    (mean_sd(test).0 - mb).abs() > 1.96 * sb
}

/// (min, median as LKP takes it: the middle of the sorted values, max).
fn lkp_stats(x: &[f64]) -> (f64, f64, f64) {
    let mut s = x.to_vec();
    s.sort_by(f64::total_cmp);
    (s[0], s[s.len() / 2], s[s.len() - 1])
}

/// LKP's `is_changed_stats` (lkp-tests lib/stats.rb) without options (`lkp
/// compare`), `a` higher than `b`: each side's median outside the other's
/// range (min_a > median_b and median_a > max_b), medians more than 1%
/// apart, 3 samples on a side at least. Below 32 samples no outliers are
/// dropped (MARGIN_SHIFT 5).
fn lkp_down(a: &[f64], b: &[f64]) -> bool {
    let ((min_a, med_a, _), (_, med_b, max_b)) = (lkp_stats(a), lkp_stats(b));
    a.len().max(b.len()) >= 3 && min_a > med_b && med_a > max_b && med_a / med_b > 1.01
}

/// LKP's rule with `distance` (as its bisection runs it), `a` higher than
/// `b`: the ranges do not overlap and the gap between them is more than
/// half the medians' difference, 3 samples a side at least (with fewer,
/// LKP asks for a gap of `distance` times the wider range: not modelled,
/// this rule is not called below 3).
fn lkp_distance_down(a: &[f64], b: &[f64]) -> bool {
    let ((min_a, med_a, _), (_, med_b, max_b)) = (lkp_stats(a), lkp_stats(b));
    a.len() >= 3 && b.len() >= 3 && min_a > max_b && (min_a - max_b) > (med_a - med_b) / 2.0
}

/// The three outside rules, each as (regressed: the test lower, changed
/// either way), checked after every repeat.
type Rule = (&'static str, fn(&[f64], &[f64]) -> bool, fn(&[f64], &[f64]) -> bool);
const RULES: [Rule; 3] = [
    ("fsperf (mean ± 1.96σ)", fsperf_regressed, fsperf_changed),
    ("LKP compare (median vs range)", lkp_down, |a, b| {
        lkp_down(a, b) || lkp_down(b, a)
    }),
    ("LKP bisect (ranges apart, gap)", lkp_distance_down, |a, b| {
        lkp_distance_down(a, b) || lkp_distance_down(b, a)
    }),
];

/// Issue 35, done-when 2 (a bench: bench/decide-power.sh runs it and says
/// what it measured). Three identical FUSE filesystems whose writes take
/// FSLAB_POWER_DELAY_US (2 ms), one of them ("slow") slowed by 5%: its
/// per-write delay grows by 5.26% of the mean time a write took in a
/// calibration run, so its IOPS are 1/1.0526 = 95% of the others'. Each
/// trial is one interleaved `fslab run` of 12 repeats (the arms in a random
/// order per repeat). On its per-repeat IOPS, the repeats per side each rule
/// needs to call "slow" regressed against "base" (power), and whether it
/// calls "same" different from "base" (an A/A false call): fslab's
/// sequential verdict (looks 3,4,5,7,9,12 at the calibrated level; the
/// library's own `decide`, as an adaptive run calls it), fsperf's 1.96 σ
/// rule and LKP's two rules, the latter three checked after every repeat
/// (a run-until-it-says-so use of them: every look is a chance of a false
/// call, which nothing corrects).
#[test]
#[ignore = "a bench: bench/decide-power.sh"]
fn power_of_fslab_fsperf_and_lkp_on_a_five_percent_slowdown() {
    use fslab::stats::decide::{self, Call, Grows};
    if !require("root", is_root()) || !require("/dev/fuse", Path::new("/dev/fuse").exists()) {
        return;
    }
    let env = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_string());
    let trials: usize = env("FSLAB_POWER_TRIALS", "30").parse().unwrap();
    let slowdown: f64 = env("FSLAB_POWER_SLOWDOWN", "0.05").parse().unwrap();
    let delay_us: u64 = env("FSLAB_POWER_DELAY_US", "2000").parse().unwrap();
    let size = env("FSLAB_POWER_SIZE", "512k");
    let arms = [
        ("base", FaultMount::new()),
        ("same", FaultMount::new()),
        ("slow", FaultMount::new()),
    ];
    let mut text = String::from("name = \"ab\"\n");
    for (name, m) in &arms {
        m.faults.direct_io(true);
        m.faults.delay(Op::Write, Duration::from_micros(delay_us));
        text += &format!(
            "[[filesystem]]\nname = \"{name}\"\ntype = \"dir\"\npath = \"{}\"\n",
            m.path().display()
        );
    }
    text += &format!("[[workload]]\nname = \"w\"\ntype = \"io\"\nrw = \"write\"\nbs = \"4k\"\nsize = \"{size}\"\n");
    let d = tempfile::tempdir().unwrap();
    let plan = d.path().join("ab.toml");
    std::fs::write(&plan, text).unwrap();
    let run = |repeats: u32, name: &str| {
        let json = d.path().join(name);
        run_plan(&plan, repeats, &json);
        let r = read_report(&json);
        arms.each_ref().map(|(name, _)| per_repeat(&r, name))
    };
    // calibration: all arms alike; a write's mean time from the IOPS
    let cal = run(6, "calibrate.json");
    let all: Vec<f64> = cal.iter().flatten().copied().collect();
    let iops = mean_sd(&all).0;
    let op_us = 1e6 / iops;
    let extra_us = (op_us * (1.0 / (1.0 - slowdown) - 1.0)).round() as u64;
    let injected = 1.0 / (1.0 + extra_us as f64 / op_us) - 1.0;
    let cv = |x: &[f64]| mean_sd(x).1 / mean_sd(x).0;
    eprintln!(
        "calibration: {iops:.0} IOPS ({op_us:.0} µs a write, cv per run {:.1}%); slow arm: +{extra_us} µs a write, \
         IOPS change {:+.2}%",
        100.0 * cv(&all),
        100.0 * injected
    );
    arms[2]
        .1
        .faults
        .delay(Op::Write, Duration::from_micros(delay_us + extra_us));

    let looks = decide::looks(3, 12);
    let schedule: Vec<(usize, usize)> = looks.iter().map(|&n| (n as usize, n as usize)).collect();
    let nominal = decide::nominal_alpha(&schedule, decide::ALPHA);
    // fslab's sequential call on base against `t`, and the repeats it took
    let sequential = |x: &[f64], t: &[f64]| {
        for &n in &looks {
            let n = n as usize;
            let v = decide::decide(&x[..n], &t[..n], true, nominal, 0.02, Grows::Both).unwrap();
            if v.call.decided() || n == 12 {
                return (v, n);
            }
        }
        unreachable!()
    };
    // per rule (fslab, then RULES): repeats needed to call slow regressed
    // (None: not within 12), and A/A false calls of same
    let mut need: [Vec<Option<usize>>; 4] = Default::default();
    let mut false_calls = [0usize; 4];
    // the outside rules once, on all 12 repeats: (regressed, A/A false)
    let mut at12 = [(0usize, 0usize); 3];
    // trials at a quiet moment (base's cv per run at most 5%): (trials,
    // regressed per rule)
    let mut quiet = (0usize, [0usize; 4]);
    let (mut covered, mut changes, mut cvs) = (0, Vec::new(), Vec::new());
    let mut kept = Vec::new();
    for t in 0..trials {
        let [x, same, y] = run(12, &format!("trial-{t}.json"));
        assert_eq!((x.len(), same.len(), y.len()), (12, 12, 12));
        kept.push([x.clone(), same.clone(), y.clone()]);
        let (v, n) = sequential(&x, &y);
        let regressed = v.call == Call::Regressed;
        covered += (regressed && v.lo <= injected && injected <= v.hi) as usize;
        need[0].push(regressed.then_some(n));
        let (aa, _) = sequential(&x, &same);
        false_calls[0] += matches!(aa.call, Call::Regressed | Call::Improved) as usize;
        for (i, (_, down, changed)) in RULES.iter().enumerate() {
            need[i + 1].push((2..=12).find(|&n| down(&x[..n], &y[..n])));
            false_calls[i + 1] += (2..=12).any(|n| changed(&x[..n], &same[..n])) as usize;
            at12[i].0 += down(&x, &y) as usize;
            at12[i].1 += changed(&x, &same) as usize;
        }
        if cv(&x) <= 0.05 {
            quiet.0 += 1;
            for (q, n) in quiet.1.iter_mut().zip(&need) {
                *q += n[t].is_some() as usize;
            }
        }
        changes.push(mean_sd(&y).0 / mean_sd(&x).0 - 1.0);
        cvs.push(cv(&x));
        eprintln!(
            "trial {t}: fslab {} after {n}: {:+.1}% [{:+.1}%, {:+.1}%]; A/A {}; repeats to call it: \
             fsperf {:?}, LKP {:?}, LKP bisect {:?}; cv base {:.1}%",
            v.call.name(),
            100.0 * v.change,
            100.0 * v.lo,
            100.0 * v.hi,
            aa.call.name(),
            need[1][t],
            need[2][t],
            need[3][t],
            100.0 * cvs[t]
        );
    }
    cvs.sort_by(f64::total_cmp);
    println!(
        "{trials} trials, 12 repeats of 3 arms each; write delay {delay_us} µs, slow arm +{extra_us} µs: IOPS \
         change injected {:+.2}%, measured {:+.2}% (mean over trials); cv per run of base: median {:.1}%",
        100.0 * injected,
        100.0 * changes.iter().sum::<f64>() / trials as f64,
        100.0 * cvs[cvs.len() / 2]
    );
    println!(
        "{:32} {:>16} {:>26} {:>14}",
        "rule", "slow: regressed", "repeats a side (mean/med/max)", "A/A false"
    );
    let names = std::iter::once("fslab (sequential, 5% overall)").chain(RULES.iter().map(|r| r.0));
    for ((name, v), f) in names.zip(&need).zip(false_calls) {
        let mut got: Vec<usize> = v.iter().flatten().copied().collect();
        got.sort();
        let stats = if got.is_empty() {
            "–".to_string()
        } else {
            format!(
                "{:.1} / {} / {}",
                got.iter().sum::<usize>() as f64 / got.len() as f64,
                got[got.len() / 2],
                got[got.len() - 1]
            )
        };
        println!(
            "{name:32} {:>7}/{trials} {:4.0}% {stats:>26} {:>7}/{trials} {:3.0}%",
            got.len(),
            100.0 * got.len() as f64 / trials as f64,
            f,
            100.0 * f as f64 / trials as f64
        );
    }
    for ((name, ..), (p, f)) in RULES.iter().zip(at12) {
        println!("{name:32} once at 12 repeats: regressed {p}/{trials}, A/A false {f}/{trials}");
    }
    let names = std::iter::once("fslab").chain(RULES.iter().map(|r| r.0));
    println!(
        "trials at a quiet moment (base cv per run <= 5%): {}; called regressed within 12: {}",
        quiet.0,
        names
            .zip(quiet.1)
            .map(|(n, q)| format!("{n} {q}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let found = need[0].iter().flatten().count();
    println!("fslab's interval held the injected change in {covered} of its {found} regressed calls");
    for (i, r) in RULES.iter().enumerate() {
        let later = need[0]
            .iter()
            .zip(&need[i + 1])
            .filter(|(f, o)| o.is_some_and(|o| f.is_none_or(|f| f > o)))
            .count();
        println!("trials where fslab needed more repeats than {} (or none): {later}", r.0);
    }
    fixed_repeats(&kept, &need[0], &false_calls);
}

/// Each rule used once, at a fixed number of repeats a side (as fsperf and
/// LKP run them: a set number of runs, then the rule): its power and its
/// A/A false calls at each n, on the trials' own data (`kept`: base, same,
/// slow, 12 repeats each), and the fewest repeats at which it calls the
/// slowdown in 90% of trials while calling the identical arm different in
/// at most 5%, beside fslab's sequential run (`seq_need`, `seq_false`).
fn fixed_repeats(kept: &[[Vec<f64>; 3]], seq_need: &[Option<usize>], seq_false: &[usize; 4]) {
    use fslab::stats::decide::{self, Call, Grows};
    let trials = kept.len();
    let fslab_down = |x: &[f64], y: &[f64]| {
        decide::decide(x, y, true, decide::ALPHA, 0.02, Grows::Both).is_some_and(|v| v.call == Call::Regressed)
    };
    let fslab_changed = |x: &[f64], y: &[f64]| {
        decide::decide(x, y, true, decide::ALPHA, 0.02, Grows::Both)
            .is_some_and(|v| matches!(v.call, Call::Regressed | Call::Improved))
    };
    type Test<'a> = &'a dyn Fn(&[f64], &[f64]) -> bool;
    let mut rules: Vec<(&str, Test, Test)> = vec![("fslab, one look (Welch, 5%)", &fslab_down, &fslab_changed)];
    for (name, down, changed) in &RULES {
        rules.push((*name, down, changed));
    }
    println!("once at n repeats a side: slow called regressed / A/A false calls, of {trials} trials");
    let ns = [3usize, 4, 5, 6, 8, 10, 12];
    println!(
        "{:32} {}",
        "rule",
        ns.map(|n| format!("{:>11}", format!("n={n}"))).join("")
    );
    let mut fewest = Vec::new();
    for (name, down, changed) in &rules {
        let at: Vec<(usize, usize)> = ns
            .iter()
            .map(|&n| {
                let p = kept.iter().filter(|[x, _, y]| down(&x[..n], &y[..n])).count();
                let f = kept.iter().filter(|[x, s, _]| changed(&x[..n], &s[..n])).count();
                (p, f)
            })
            .collect();
        println!(
            "{name:32} {}",
            at.iter()
                .map(|(p, f)| format!("{:>11}", format!("{p}/{f}")))
                .collect::<Vec<_>>()
                .join("")
        );
        let ok = ns
            .iter()
            .zip(&at)
            .find(|(_, (p, f))| 10 * p >= 9 * trials && 20 * f <= trials)
            .map_or("none of n <= 12".to_string(), |(n, _)| format!("{n}"));
        fewest.push(format!("{name} {ok}"));
    }
    let got: Vec<usize> = seq_need.iter().flatten().copied().collect();
    let seq = if 10 * got.len() >= 9 * trials && 20 * seq_false[0] <= trials {
        format!(
            "{:.1} on average, at most {}",
            got.iter().sum::<usize>() as f64 / got.len() as f64,
            got.iter().max().unwrap()
        )
    } else {
        format!("not met ({} of {trials} found, {} false)", got.len(), seq_false[0])
    };
    println!(
        "fewest repeats a side with >= 90% power and <= 5% A/A false calls: fslab sequential {seq}; {}",
        fewest.join("; ")
    );
}
