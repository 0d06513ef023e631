//! Block-queue settings as plan variables (issue 24): a `[[filesystem]]`'s
//! scheduler, read_ahead_kb, nr_requests, ... are set on the device under
//! its cells, named in every cell's target, and put back afterwards; the
//! loop device's direct I/O can be turned off.

use crate::util::*;
use serde_json::Value;
use std::path::Path;

fn queue_attr(dev: &str, name: &str) -> String {
    let disk = dev.trim_start_matches("/dev/");
    std::fs::read_to_string(format!("/sys/block/{disk}/queue/{name}"))
        .unwrap()
        .trim()
        .to_string()
}

/// The bracketed entry of a scheduler file.
fn active(sched: &str) -> String {
    sched
        .split_whitespace()
        .find(|w| w.starts_with('['))
        .unwrap_or(sched)
        .trim_matches(['[', ']'])
        .to_string()
}

fn write_plan(dir: &Path, text: &str) -> String {
    let p = dir.join("plan.toml");
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// `fslab run PLAN ARGS --output json:...`: the process's output and the result.
fn run_plan(plan: &str, args: &[&str], dir: &Path) -> (std::process::Output, Value) {
    let scratch = scratch_dir();
    let json = dir.join("r.json");
    let out = fslab()
        .args([
            "run",
            plan,
            "--quiet",
            "--scratch-dir",
            scratch.path().to_str().unwrap(),
        ])
        .args(args)
        .arg("--output")
        .arg(format!("json:{}", json.display()))
        .output()
        .unwrap();
    assert!(
        scratch_leftovers(scratch.path()).is_empty(),
        "{:?}",
        scratch_leftovers(scratch.path())
    );
    let j = read_json(&json);
    (out, j)
}

#[test]
fn a_plan_sets_a_devices_queue_for_its_cells_and_puts_it_back() {
    if !require_root_with(&["losetup"]) {
        return;
    }
    let lo = LoopDev::new(128);
    let names = [
        "scheduler",
        "read_ahead_kb",
        "nr_requests",
        "rotational",
        "max_sectors_kb",
        "wbt_lat_usec",
    ];
    let before: Vec<String> = names.iter().map(|n| queue_attr(&lo.dev, n)).collect();
    // values that differ from what the device has now
    let now = active(&before[0]);
    let offered = before[0].replace(['[', ']'], "");
    let sched = ["mq-deadline", "none", "kyber", "bfq"]
        .into_iter()
        .find(|s| *s != now && offered.split_whitespace().any(|o| o == *s))
        .expect("a loop device offers a second scheduler");
    let ra: u64 = if before[1] == "64" { 128 } else { 64 };
    let nr: u64 = if before[2] == "32" { 16 } else { 32 };
    let rot = before[3] != "1";
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(
        dir.path(),
        &format!(
            "[[filesystem]]\nname = \"q\"\ntype = \"raw\"\ndevice = \"{}\"\nscheduler = \"{sched}\"\n\
             read_ahead_kb = {ra}\nnr_requests = {nr}\nrotational = {rot}\n\
             [[workload]]\ntype = \"io\"\nrw = \"randread\"\nsize = \"8m\"\nruntime = \"200ms\"\n",
            lo.dev
        ),
    );
    let (out, j) = run_plan(&plan, &["--allow-device"], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let c = &j["cells"][0];
    let q = &c["target"]["queue"];
    assert_eq!(q["disk"], lo.dev.trim_start_matches("/dev/"), "{q}");
    assert_eq!(q["scheduler"], sched, "the cell ran under the plan's scheduler: {q}");
    assert_eq!(q["read_ahead_kb"], ra, "{q}");
    assert_eq!(q["nr_requests"], nr, "{q}");
    assert_eq!(q["rotational"], rot, "{q}");
    let set: Vec<&str> = c["lab"]["scratch"]["queue_set"]
        .as_array()
        .expect("what the plan set")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(set.contains(&format!("scheduler={sched}").as_str()), "{set:?}");
    let after: Vec<String> = names.iter().map(|n| queue_attr(&lo.dev, n)).collect();
    assert_eq!(after, before, "the device's queue is as it was");
}

#[test]
fn the_loop_device_can_do_buffered_io_to_its_image() {
    if !require_root_with(&["mkfs.ext4", "mount"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for dio in [false, true] {
        let plan = write_plan(
            dir.path(),
            &format!(
                "[[filesystem]]\ntype = \"ext4\"\nsize = \"256m\"\nloop_direct_io = {dio}\n\
                 [[workload]]\ntype = \"io\"\nrw = \"write\"\nsize = \"4m\"\n"
            ),
        );
        let (out, j) = run_plan(&plan, &[], dir.path());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let c = &j["cells"][0];
        assert_eq!(c["lab"]["scratch"]["loop_direct_io"], dio, "{}", c["lab"]);
        assert_eq!(
            c["target"]["loop_direct_io"], dio,
            "the kernel's own report: {}",
            c["target"]
        );
        assert!(
            c["target"]["queue"]["scheduler"].is_string(),
            "every cell names its scheduler"
        );
    }
}

/// Done-when 1 of issue 24: the scheduler variant of the seed plan
/// (examples/seed-raw-vs-fs-scheduler.toml, shortened) runs; each cell names
/// the scheduler its level of the plan's scheduler factor asked for, in the
/// JSON and in the text.
#[test]
fn the_scheduler_variant_of_the_seed_plan_names_each_cells_scheduler() {
    if !require_root_with(&["mkfs.ext4", "mkfs.xfs", "mount"]) {
        return;
    }
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/seed-raw-vs-fs-scheduler.toml"
    ))
    .unwrap();
    let mut plan: toml::Table = text.parse().expect("the plan parses");
    plan.insert("repeat".into(), 1.into());
    // filesystem x scheduler: the scheduler is a factor of every filesystem
    let levels: Vec<&str> = plan["factors"]["scheduler"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(levels, ["none", "mq-deadline"]);
    let fss = plan["filesystem"].as_array_mut().unwrap();
    assert_eq!(fss.len(), 3, "raw, ext4 and XFS");
    for f in fss.iter_mut() {
        f.as_table_mut().unwrap().insert("size".into(), "512m".into());
    }
    let w = plan["workload"].as_array_mut().unwrap()[0].as_table_mut().unwrap();
    w.insert("jobs".into(), 2.into());
    w.insert("size".into(), "8m".into());
    w.insert("runtime".into(), "500ms".into());
    let dir = tempfile::tempdir().unwrap();
    let p = write_plan(dir.path(), &toml::to_string(&plan).unwrap());
    let (out, j) = run_plan(&p, &["--output", "text"], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cells = j["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 6, "each filesystem under each scheduler");
    for c in cells {
        let fs = c["lab"]["filesystem"].as_str().unwrap();
        let sched = &c["lab"]["levels"][0]["level"];
        assert_eq!(c["lab"]["levels"][0]["factor"], "scheduler", "{fs}: {}", c["lab"]);
        assert_eq!(c["target"]["queue"]["scheduler"], *sched, "{fs}: {}", c["target"]);
        assert!(c["error"].is_null(), "{fs}: {}", c["error"]);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    for s in ["scheduler none", "scheduler mq-deadline"] {
        assert!(text.contains(s), "the text names '{s}':\n{text}");
    }
}

#[test]
fn bad_queue_settings_are_refused_with_the_plans_line() {
    let dir = tempfile::tempdir().unwrap();
    let w = "[[workload]]\ntype = \"io\"\n";
    for (fs, want) in [
        (
            "type = \"ext4\"\nscheduler = \"cfq\"",
            "plan.toml:3: scheduler: unknown 'cfq'",
        ),
        (
            "type = \"tmpfs\"\nscheduler = \"none\"",
            "plan.toml:3: block-queue settings need a block device",
        ),
        (
            "type = \"raw\"\nnr_requests = 2",
            "plan.toml:3: nr_requests must be a whole number of at least 4",
        ),
        (
            "type = \"xfs\"\nread_ahead_kb = \"lots\"",
            "plan.toml:3: read_ahead_kb must be a number",
        ),
        (
            "type = \"ext4\"\ndevice = \"/dev/null\"\nloop_direct_io = false",
            "plan.toml:4: loop_direct_io: applies to the loop device fslab makes",
        ),
    ] {
        let plan = write_plan(dir.path(), &format!("[[filesystem]]\n{fs}\n{w}"));
        expect_usage(&["run", &plan], want);
    }
}
