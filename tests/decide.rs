//! Issue 35: verdicts, adaptive repeats in a random arm order, and
//! `fslab check`'s exit codes against a stored baseline (a regression made
//! real with the test FUSE filesystem's per-operation delay).

use crate::faultfs::{FaultMount, Op};
use crate::util::*;
use std::path::Path;
use std::time::Duration;

fn plan(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// An A/A run of two identical tmpfs arms, adaptive: however the noise
/// falls, what the run says about stopping matches its verdicts, every
/// repeat holds each arm once, and the order is recorded.
#[test]
fn an_adaptive_run_stops_by_its_verdicts_and_records_its_order() {
    if !require("root", is_root()) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let fs = |n: &str| format!("[[filesystem]]\nname = \"{n}\"\ntype = \"tmpfs\"\nsize = \"64m\"\n");
    let p = plan(
        d.path(),
        "aa.toml",
        &format!(
            "name = \"aa\"\nrepeat = {{ min = 2, max = 5, target = \"60%\" }}\n{}{}\
             [[workload]]\nname = \"m\"\ntype = \"meta\"\nfiles = \"2k\"\n",
            fs("a"),
            fs("b")
        ),
    );
    let json = d.path().join("aa.json");
    let out = fslab()
        .args(["run", &p, "--quiet", "--no-telemetry", "--scratch-dir"])
        .arg(scratch.path())
        .arg("--output")
        .arg(format!("json:{}", json.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let r = read_report(&json);
    let dec = r.lab.as_ref().unwrap().decision.clone().expect("a decision");
    assert_eq!((dec.min, dec.max, dec.looks.clone()), (2, 5, vec![2, 3, 4, 5]));
    assert!(dec.nominal_alpha < 0.05 && dec.nominal_alpha > 0.005, "{dec:?}");
    let heads: Vec<_> = dec.verdicts.iter().filter(|v| v.headline).collect();
    // six bonnie++ phases' rates of b against a
    assert_eq!(heads.len(), 6, "{:?}", dec.verdicts);
    let all_decided = heads.iter().all(|v| v.call != fslab::stats::decide::Call::Undecided);
    match dec.stopped.as_str() {
        "decided" => assert!(all_decided && dec.looks.contains(&dec.repeats_run), "{dec:?}"),
        "max" => assert!(!all_decided && dec.repeats_run == 5, "{dec:?}"),
        other => panic!("stopped: {other}"),
    }
    for v in &heads {
        assert!(v.lo <= v.change && v.change <= v.hi, "{v:?}");
        assert_eq!((v.n_base, v.n_test), (dec.repeats_run, dec.repeats_run), "{v:?}");
    }
    // each repeat runs each arm once, and the order is every cell's place
    assert_eq!(r.cells.len() as u32, 2 * dec.repeats_run);
    let mut order: Vec<u32> = r.cells.iter().map(|c| c.lab.as_ref().unwrap().order.unwrap()).collect();
    order.sort();
    assert_eq!(order, (1..=r.cells.len() as u32).collect::<Vec<_>>());
    for rep in 1..=dec.repeats_run {
        let mut arms: Vec<&str> = r
            .cells
            .iter()
            .filter_map(|c| {
                c.lab
                    .as_ref()
                    .filter(|l| l.repeat == rep)
                    .map(|l| l.filesystem.as_str())
            })
            .collect();
        arms.sort();
        assert_eq!(arms, ["a", "b"], "repeat {rep}");
    }
    // the text report says the verdicts and how they were drawn
    // (wide: the legend is one line)
    let text = fslab().args(["compare", "--width", "300"]).arg(&json).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("seq-create ops/s vs a: b "), "{text}");
    assert!(text.contains("looks after repeats 2,3,4,5"), "{text}");
}

fn check(base: &Path, plan: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let out = fslab()
        .args(["check"])
        .arg(base)
        // wide enough for LKP's one line per metric
        .args([plan, "--quiet", "--no-telemetry", "--width", "200"])
        .args(extra)
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A baseline on the FUSE filesystem, then the same plan after its
/// creates got 2 ms slower (far beyond the noise): exit 1, regressed,
/// the change printed in the lists' shape. Without the delay, at a
/// threshold no noise here reaches: exit 0.
#[test]
fn check_exits_1_on_a_real_slowdown_and_0_without_one() {
    if !require("root", is_root()) || !require("/dev/fuse", Path::new("/dev/fuse").exists()) {
        return;
    }
    let m = FaultMount::new();
    let d = tempfile::tempdir().unwrap();
    let p = plan(
        d.path(),
        "fuse.toml",
        &format!(
            "name = \"fuse\"\n[[filesystem]]\nname = \"fuse\"\ntype = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"m\"\ntype = \"meta\"\nfiles = \"200\"\n",
            m.dir.path().display()
        ),
    );
    let base = d.path().join("base.json");
    run_plan(&p, 3, &base);

    // unchanged: not worse by 95% (the interval's worse end within it)
    let (code, stdout, stderr) = check(&base, &p, &["--threshold", "95%", "--repeat", "2..4"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("not regressed (exit 0)"), "{stdout}");

    // every create 2 ms slower: seq-create and random-create regressed
    m.faults.delay(Op::Create, Duration::from_millis(2));
    let json = d.path().join("now.json");
    let (code, stdout, stderr) = check(
        &base,
        &p,
        &[
            "--threshold",
            "5%",
            "--repeat",
            "2..4",
            "--output",
            &format!("json:{}", json.display()),
        ],
    );
    m.faults.clear();
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("base ±%stddev   %change          now ±%stddev  metric"),
        "{stdout}"
    );
    let line = stdout
        .lines()
        .position(|l| l.contains("fuse · m · seq-create ops/s"))
        .expect(&stdout);
    assert!(
        stdout.lines().nth(line + 1).unwrap().contains("REGRESSED: "),
        "{stdout}"
    );
    assert!(stdout.contains("regressed (exit 1)"), "{stdout}");
    // the run's own results were written as asked, with the check's verdicts
    let now = read_report(&json);
    assert_eq!(now.cells.len(), 2, "regressed at the first look, 2 repeats");
    let dec = now.lab.unwrap().decision.unwrap();
    assert!(dec.stopped.ends_with(": regressed"), "{}", dec.stopped);
    let create = dec
        .verdicts
        .iter()
        .find(|v| v.metric == "seq-create ops/s")
        .expect("a verdict");
    assert_eq!(create.call, fslab::stats::decide::Call::Regressed, "{create:?}");
    assert_eq!(
        (create.column.as_str(), create.baseline.as_str()),
        ("fuse@test", "fuse@base")
    );
    assert!(create.hi < -0.05, "{create:?}");
}

#[test]
fn check_refuses_what_it_cannot_compare() {
    let d = tempfile::tempdir().unwrap();
    let p = plan(
        d.path(),
        "p.toml",
        &format!(
            "name = \"p\"\n[[filesystem]]\nname = \"d\"\ntype = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"m\"\ntype = \"meta\"\nfiles = \"100\"\n",
            d.path().display()
        ),
    );
    // a result of `fslab meta` has no plan's cells; a run of one repeat no spread
    let meta = d.path().join("meta.json");
    let out = fslab()
        .args(["meta", "--files", "100", "--quiet", "--no-telemetry", "--target"])
        .arg(d.path())
        .arg("--output")
        .arg(format!("json:{}", meta.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let one = d.path().join("one.json");
    run_plan(&p, 1, &one);
    // a baseline of two repeats, and plans that would not be compared with
    // it: refused before anything runs (no cell starts, nothing written)
    let two = d.path().join("two.json");
    run_plan(&p, 2, &two);
    let other = |name: &str, workload: &str| {
        plan(
            d.path(),
            name,
            &format!(
                "name = \"p\"\n[[filesystem]]\nname = \"d\"\ntype = \"dir\"\npath = \"{}\"\n\
                 [[workload]]\n{workload}\n",
                d.path().display()
            ),
        )
    };
    let bigger = other("bigger.toml", "name = \"m\"\ntype = \"meta\"\nfiles = \"200\"");
    let renamed = other("renamed.toml", "name = \"n\"\ntype = \"meta\"\nfiles = \"100\"");
    let two = two.display().to_string();
    let (meta, one) = (meta.display().to_string(), one.display().to_string());
    expect_refusals(
        &[
            refusal(&["check", &two, &bigger], "bigger.toml: d · m: not the workload"),
            refusal(&["check", &two, &bigger], "files 100 in the baseline, 200 in the plan"),
            refusal(&["check", &two, &renamed], "none of its cells (d · n) is in"),
            // the baseline's cells, each once though it ran each twice
            refusal(&["check", &two, &renamed], "two.json (d · m): nothing to compare"),
            refusal(&["check", &meta, &p], "not a result of `fslab run`"),
            refusal(&["check", &one, &p], "the baseline has 1 repeat"),
            refusal(&["check", &one], "PLAN: fslab check needs a plan file"),
            refusal(
                &["check", &one, &p, "--threshold", "0"],
                "--threshold: '0' is not a percentage",
            ),
            refusal(
                &["check", &one, &p, "--repeat", "5..3"],
                "--repeat: min 5 is more than max 3",
            ),
            refusal(&["check", "/nonexistent.json", &p], "/nonexistent.json"),
        ],
        &[],
    );
    expect_refusals(
        &[
            refusal(
                &["run", &p, "--repeat", "1..4"],
                "--repeat: an adaptive range starts at 2",
            ),
            refusal(
                &["run", &p, "--equivalence", "200%"],
                "--equivalence: '200%' is not a percentage",
            ),
        ],
        &[],
    );
}
