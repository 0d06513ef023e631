//! `fslab run` with plan files and scratch filesystems, `fslab compare`, and
//! the guarantee that nothing of fslab's (image, loop device, mount, work
//! directory) outlives a run, an interrupted run, or, after `fslab cleanup`,
//! a killed one.

use crate::util::*;
use std::path::Path;
use std::time::Duration;

fn write_plan(dir: &Path, text: &str) -> String {
    let p = dir.join("plan.toml");
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn lab_ok() -> bool {
    require_root_with(&["mkfs.ext4", "mkfs.xfs", "mount", "losetup"])
}

#[test]
fn metadata_plan_compares_ext4_and_xfs_with_ci_and_ratio() {
    if !lab_ok() {
        return;
    }
    let scratch = scratch_dir();
    let out_dir = tempfile::tempdir().unwrap();
    let plan = write_plan(
        out_dir.path(),
        r#"
repeat = 2
baseline = "ext4"
[[filesystem]]
type = "ext4"
mkfs = "-I 512"
size = "512m"
[[filesystem]]
type = "xfs"
mkfs = "-i size=512"
size = "512m"
[[workload]]
name = "plain"
type = "meta"
files = "2k"
[[workload]]
name = "xattr"
type = "meta"
files = "2k"
xattr = ["user.test:256"]
"#,
    );
    let json = out_dir.path().join("r.json");
    let out = fslab()
        .args(["run", &plan, "--quiet", "--output", "text", "--scratch-dir"])
        .arg(scratch.path())
        .arg("--output")
        .arg(format!("json:{}", json.display()))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    for want in [
        "ext4 (baseline)",
        "xfs",
        "seq-create ops/s",
        "±",
        "×",
        "mkfs.ext4 -I 512",
        "mkfs.xfs -i size=512",
        "Welch",
    ] {
        assert!(text.contains(want), "'{want}' missing from:\n{text}");
    }
    let j = read_json(&json);
    let cells = cells(&j);
    assert_eq!(cells.len(), 8, "2 filesystems x 2 workloads x 2 repeats");
    for c in cells {
        let lab = &c["lab"];
        let fs = lab["filesystem"].as_str().unwrap();
        let mkfs: Vec<&str> = lab["scratch"]["mkfs_args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(
            mkfs,
            if fs == "ext4" {
                ["-I", "512"]
            } else {
                ["-i", "size=512"]
            }
        );
        assert_eq!(c["target"]["fs_type"], fs, "measured on the filesystem made for it");
        let creates = c["directions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["phase"] == "seq-create")
            .unwrap();
        assert_eq!(creates["ops"], 2000);
    }
    assert_eq!(j["lab"]["baseline"], "ext4");
    assert!(
        scratch_leftovers(scratch.path()).is_empty(),
        "{:?}",
        scratch_leftovers(scratch.path())
    );
    // The saved result compares the same way.
    let out = fslab().arg("compare").arg(&json).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let again = String::from_utf8_lossy(&out.stdout);
    assert!(again.contains("ext4 (baseline)") && again.contains("xattr"), "{again}");
}

#[test]
fn a_failing_cell_is_reported_and_the_other_cells_run() {
    if !lab_ok() {
        return;
    }
    let scratch = scratch_dir();
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(
        dir.path(),
        r#"
repeat = 1
[[filesystem]]
name = "broken"
type = "ext4"
mkfs = "-I 100"
size = "256m"
[[filesystem]]
type = "tmpfs"
size = "256m"
[[workload]]
type = "meta"
files = "500"
"#,
    );
    let json = dir.path().join("r.json");
    let out = fslab()
        .args(["run", &plan, "--quiet", "--output", "text", "--scratch-dir"])
        .arg(scratch.path())
        .arg("--output")
        .arg(format!("json:{}", json.display()))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "a failed cell fails the run: {text}");
    assert!(text.contains("failed"), "{text}");
    assert!(
        text.contains("broken: failed: making the filesystem: mkfs.ext4"),
        "{text}"
    );
    let j = read_json(&json);
    let cells = cells(&j);
    assert_eq!(cells.len(), 2);
    // the arms of a workload run in a random order (recorded in each tag)
    let (bad, good) = match cells[0].get("error") {
        Some(_) => (&cells[0], &cells[1]),
        None => (&cells[1], &cells[0]),
    };
    assert!(bad["error"].as_str().unwrap().contains("mkfs.ext4"));
    assert!(good.get("error").is_none());
    assert_eq!(good["lab"]["filesystem"], "tmpfs");
    assert_eq!(good["target"]["fs_type"], "tmpfs");
    assert!(
        scratch_leftovers(scratch.path()).is_empty(),
        "{:?}",
        scratch_leftovers(scratch.path())
    );
}

#[test]
fn devices_fslab_did_not_attach_need_consent() {
    if !lab_ok() {
        return;
    }
    let lo = LoopDev::new(512);
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(
        dir.path(),
        &format!(
            "[[filesystem]]\ntype = \"ext4\"\ndevice = \"{}\"\n[[workload]]\ntype = \"meta\"\n",
            lo.dev
        ),
    );
    expect_usage(&["run", &plan], "--allow-device: filesystem 'ext4' names block device");
    lo.mkfs("xfs");
    expect_usage(
        &["run", &plan, "--allow-device"],
        "--force-overwrite: refusing to format",
    );
    // The XFS signature is still there: nothing was written.
    let out = std::process::Command::new("blkid")
        .args(["-o", "value", "-s", "TYPE", &lo.dev])
        .output();
    if let Ok(o) = out {
        assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "xfs");
    }
    let raw = write_plan(
        dir.path(),
        &format!(
            "[[filesystem]]\ntype = \"raw\"\ndevice = \"{}\"\n[[workload]]\ntype = \"io\"\n",
            lo.dev
        ),
    );
    expect_usage(&["run", &raw], "--allow-device");
}

/// Starts `fslab run PLAN` and returns once its scratch filesystem is mounted (and has settled).
fn start_until_mounted(plan: &str, scratch: &Path) -> std::process::Child {
    let child = start(&["run", plan, "--quiet", "--scratch-dir", scratch.to_str().unwrap()]);
    let t = std::time::Instant::now();
    while mounts_under(scratch).is_empty() {
        assert!(t.elapsed() < Duration::from_secs(20), "no scratch mount appeared");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    child
}

/// A plan whose cells make, use and remove scratch filesystems all the time.
const BUSY_PLAN: &str = r#"
repeat = 2
[[filesystem]]
type = "ext4"
size = "256m"
[[filesystem]]
type = "tmpfs"
size = "256m"
[[workload]]
type = "meta"
files = "3000"
xattr = ["user.x:64"]
[[workload]]
type = "io"
rw = "randwrite"
size = "16m"
runtime = "300ms"
"#;

#[test]
fn ctrl_c_at_random_moments_leaves_nothing_behind() {
    if !lab_ok() {
        return;
    }
    let scratch = scratch_dir();
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(dir.path(), BUSY_PLAN);
    let json = dir.path().join("r.json");
    let mut rng = fastrand::Rng::new();
    for trial in 0..10 {
        let wait = rng.u64(0..2500);
        let child = start(&[
            "run",
            &plan,
            "--quiet",
            "--scratch-dir",
            scratch.path().to_str().unwrap(),
            "--output",
            &format!("json:{}", json.display()),
        ]);
        std::thread::sleep(Duration::from_millis(wait));
        let out = signal_and_wait(child, libc::SIGINT);
        let code = out.status.code();
        // None: the signal came before fslab installed its handler (it had made nothing yet)
        assert!(
            matches!(code, Some(130) | Some(0) | None),
            "trial {trial} (Ctrl-C after {wait} ms): exit {code:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let left = scratch_leftovers(scratch.path());
        assert!(left.is_empty(), "trial {trial} (Ctrl-C after {wait} ms) left {left:?}");
        // The result file is valid JSON at every moment it exists.
        if json.exists() {
            read_json(&json);
        }
    }
}

#[test]
fn after_sigkill_cleanup_removes_mount_loop_and_image() {
    if !lab_ok() {
        return;
    }
    let scratch = scratch_dir();
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(
        dir.path(),
        "[[filesystem]]\ntype = \"ext4\"\nsize = \"256m\"\n[[workload]]\ntype = \"io\"\nsize = \"16m\"\nruntime = \"30s\"\n",
    );
    let child = start_until_mounted(&plan, scratch.path());
    signal_and_wait(child, libc::SIGKILL);
    assert_eq!(mounts_under(scratch.path()).len(), 1, "the killed run left its mount");
    assert_eq!(loops_backed_in(scratch.path()).len(), 1, "and its loop device");
    // Something that is not fslab's stays.
    std::fs::write(scratch.path().join("keep.txt"), b"mine").unwrap();
    let out = fslab().arg("cleanup").arg(scratch.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // autoclear detaches the loop device once the mount is gone
    let t = std::time::Instant::now();
    while !loops_backed_in(scratch.path()).is_empty() && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = scratch_leftovers(scratch.path());
    assert_eq!(left, [scratch.path().join("keep.txt").display().to_string()]);
}

#[test]
fn quick_suite_runs_in_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (text, j) = run_quick_suite(dir.path(), "200ms");
    let names: Vec<&str> = cells(&j).iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "randread-4k-cached",
            "randread-4k-direct",
            "randwrite-4k-direct",
            "randrw-16k-direct",
            "seqwrite-1m-direct",
            "seqread-1m-direct",
            "meta-16k",
            "meta-16k-xattr256",
            "create-under-stream",
            "append-fdatasync-under-stream"
        ]
    );
    // It says what it measured.
    let fs = cells(&j)[0]["target"]["fs_type"].as_str().unwrap().to_string();
    assert!(!fs.is_empty());
    assert!(text.contains(&format!("({fs} on ")), "{text}");
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}

#[test]
fn quick_suite_on_scratch_filesystems_compares_them() {
    if !lab_ok() {
        return;
    }
    let scratch = scratch_dir();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("q.json");
    let out = fslab()
        .args([
            "run",
            "--scratch",
            "ext4,xfs",
            "--runtime",
            "200ms",
            "--quiet",
            "--output",
            "text",
        ])
        .arg("--scratch-dir")
        .arg(scratch.path())
        .arg("--output")
        .arg(format!("json:{}", json.display()))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        text.contains("ext4 (baseline)") && text.contains("create-under-stream"),
        "{text}"
    );
    let j = read_json(&json);
    assert_eq!(cells(&j).len(), 20);
    let types: std::collections::BTreeSet<&str> = cells(&j)
        .iter()
        .map(|c| c["target"]["fs_type"].as_str().unwrap())
        .collect();
    assert_eq!(types.into_iter().collect::<Vec<_>>(), ["ext4", "xfs"]);
    assert!(
        scratch_leftovers(scratch.path()).is_empty(),
        "{:?}",
        scratch_leftovers(scratch.path())
    );
}

#[test]
fn compare_puts_saved_results_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a", "b"] {
        fslab()
            .args(["io", "--size", "8m", "--runtime", "200ms", "--quiet", "--output"])
            .arg(format!("json:{}", dir.path().join(format!("{name}.json")).display()))
            .arg("--target")
            .arg(dir.path())
            .assert()
            .success();
    }
    let out = fslab()
        .current_dir(dir.path())
        .args(["compare", "a.json", "b.json", "--baseline", "b"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text.contains("b (baseline)") && text.contains("read IOPS") && text.contains("×"),
        "{text}"
    );
    expect_usage(
        &[
            "compare",
            dir.path().join("a.json").to_str().unwrap(),
            "--baseline",
            "c",
        ],
        "--baseline: 'c'",
    );
    std::fs::write(dir.path().join("bad.json"), "{\n\"x\": 1\n}").unwrap();
    expect_usage(
        &["compare", dir.path().join("bad.json").to_str().unwrap()],
        "bad.json:3: not an fslab result",
    );
}

#[test]
fn a_second_ctrl_c_aborts_at_once_and_still_removes_everything() {
    if !lab_ok() {
        return;
    }
    let scratch = scratch_dir();
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(
        dir.path(),
        "[[filesystem]]\ntype = \"ext4\"\nsize = \"256m\"\n[[workload]]\ntype = \"io\"\nrw = \"randwrite\"\nsize = \"16m\"\nruntime = \"30s\"\n",
    );
    let child = start_until_mounted(&plan, scratch.path());
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    // a gap, or the kernel merges the two pending signals into one
    std::thread::sleep(Duration::from_millis(5));
    let out = signal_and_wait(child, libc::SIGINT);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    // Almost always the abort path; on a loaded machine the first signal may
    // finish the clean stop before the second is handled, which is fine too.
    if !err.contains("fslab: aborted") {
        eprintln!("note: the run stopped cleanly before the second signal was handled");
    }
    let t = std::time::Instant::now();
    while !scratch_leftovers(scratch.path()).is_empty() && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        scratch_leftovers(scratch.path()).is_empty(),
        "{:?}",
        scratch_leftovers(scratch.path())
    );
}
