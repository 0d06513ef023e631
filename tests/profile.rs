//! `--profile`: fslab's CPU sampled with kernel stacks (perf_event_open,
//! cpu-clock). On XFS with a 256-byte xattr the create phase's top symbols
//! show the xattr code (`xfs_attr_*`), the folded-stacks file is written,
//! and the HTML report's flame graph renders in headless Chromium.

use crate::html::chromium;
use crate::util::*;
use serde_json::Value;
use std::process::Command;

fn phase<'a>(j: &'a Value, name: &str) -> &'a Value {
    j["cells"][0]["profile"]["phases"]
        .as_array()
        .expect("profile phases")
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no profiled phase {name}: {}", j["cells"][0]["profile"]))
}

#[test]
fn meta_on_xfs_profiles_the_xattr_code_and_the_flame_graph_renders() {
    if !require_root_with(&["losetup", "mkfs.xfs", "chromium"]) {
        return;
    }
    let fs = Scratch::new("xfs", 512);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("m.json");
    let html = out.path().join("m.html");
    let text = fslab()
        .args(["meta", "--target", fs.path().to_str().unwrap()])
        // two jobs: the workers are threads started after the events were
        // opened, sampled through `inherit`
        .args([
            "--files",
            "10k",
            "--jobs",
            "2",
            "--xattr",
            "user.test:256",
            "--order",
            "seq",
            "--quiet",
        ])
        .args(["--profile", "--profile-dir", out.path().to_str().unwrap()])
        .args(["--output", &format!("json:{}", json.display())])
        .args(["--output", &format!("html:{}", html.display())])
        .args(["--output", "text"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    let j = read_json(&json);
    let d = &j["cells"][0]["directions"][0];
    assert_eq!(d["phase"], "seq-create");
    // No assertion on the phase's length: that is a timing, and CI's machine
    // ran it in 0.78 s. The sample count below is what the test needs, and it
    // follows the phase's CPU, not its wall time.

    let p = &j["cells"][0]["profile"];
    assert_eq!(p["event"], "cpu-clock");
    assert_eq!(p["frequency_hz"], 999);
    let create = phase(&j, "seq-create");
    let samples = create["samples"].as_u64().unwrap();
    // cpu-clock ticks only while fslab runs: at least a sample per 10 ms of
    // the phase's CPU (999 Hz), minus what the buffers may drop
    assert!(samples > 50, "{create}");
    let top = create["top"].as_array().unwrap();
    let attr: Vec<&Value> = top
        .iter()
        .filter(|t| t["symbol"].as_str().unwrap().starts_with("xfs_attr_"))
        .collect();
    assert!(
        !attr.is_empty(),
        "an xfs_attr_* symbol among the create phase's top symbols: {:?}",
        top.iter().map(|t| t["symbol"].as_str().unwrap()).collect::<Vec<_>>()
    );
    for t in &attr {
        assert_eq!(t["space"], "kernel");
        let (own, total) = (t["self_pct"].as_f64().unwrap(), t["total_pct"].as_f64().unwrap());
        assert!(own <= total && total > 0.0 && total <= 100.0, "{t}");
    }
    // fslab's own code is named too (the user-space IP of each sample)
    assert!(
        top.iter()
            .any(|t| t["space"] == "user" && t["symbol"].as_str().unwrap().contains("fslab::")),
        "{top:?}"
    );
    // the stacks: root first, kernel frames marked, heaviest first
    let stacks = create["stacks"].as_array().unwrap();
    assert!(!stacks.is_empty());
    let counts: Vec<u64> = stacks.iter().map(|s| s["count"].as_u64().unwrap()).collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]));
    assert!(counts.iter().sum::<u64>() <= samples);
    assert!(stacks
        .iter()
        .any(|s| s["stack"].as_str().unwrap().contains("xfs_attr_set_[k]")));

    // the folded-stacks file: every phase, "phase;a;b;c count"
    let file = p["folded_file"].as_str().expect("a folded file");
    assert!(file.starts_with(out.path().to_str().unwrap()), "{file}");
    let folded = std::fs::read_to_string(file).unwrap();
    assert!(!folded.is_empty());
    let mut per_phase = std::collections::BTreeMap::<String, u64>::new();
    for line in folded.lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        let phase = stack.split(';').next().unwrap();
        *per_phase.entry(phase.to_string()).or_default() += n.parse::<u64>().unwrap();
    }
    // the file has every stack, the JSON the heaviest
    assert!(per_phase["seq-create"] <= samples && per_phase["seq-create"] >= counts.iter().sum::<u64>());
    assert!(per_phase.contains_key("seq-stat") && per_phase.contains_key("seq-delete"));

    // text: the cost and the top symbols
    assert!(text.contains("profiling cost ~"), "{text}");
    assert!(text.contains("top symbols (seq-create, "), "{text}");

    // HTML: a flame graph per phase, drawn in a real browser
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page.matches("data-kind=\"flame\"").count(), 3);
    let url = format!("file://{}", html.display());
    let out2 = chromium(&out.path().join("chromium"), &["--dump-dom", &url]);
    let dom = String::from_utf8_lossy(&out2.stdout);
    assert!(
        out2.status.success() && dom.contains("</html>"),
        "the page loads: {}",
        String::from_utf8_lossy(&out2.stderr)
    );
    let flame = dom
        .split("<figure class=\"chart\" data-kind=\"flame\">")
        .nth(1)
        .expect("a flame graph in the DOM");
    let flame = flame.split("</figure>").next().unwrap();
    assert!(flame.contains("<title>meta: seq-create</title>"), "{flame:.300}");
    assert!(flame.matches("<rect").count() > 10, "the frames are drawn");
    assert!(flame.contains("xfs_attr_set ("), "the xattr frame with its tooltip");
}

#[test]
fn a_profile_dir_that_is_not_a_directory_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("file");
    std::fs::write(&f, "x").unwrap();
    let target = d.path().to_str().unwrap();
    expect_usage(
        &[
            "meta",
            "--target",
            target,
            "--profile",
            "--profile-dir",
            f.to_str().unwrap(),
        ],
        "--profile-dir",
    );
    expect_usage(
        &[
            "meta",
            "--target",
            target,
            "--profile",
            "--profile-dir",
            "/nonexistent/x",
        ],
        "--profile-dir",
    );
}

/// A user the kernel does not let sample kernel stacks (perf_event_paranoid
/// >= 2 without CAP_PERFMON) gets one line naming --profile and the sysctl.
#[test]
fn a_kernel_that_forbids_profiling_is_named() {
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(-1);
    if !require("root and setpriv", is_root() && have("setpriv")) || paranoid < 2 {
        if paranoid < 2 {
            eprintln!("skipped: perf_event_paranoid is {paranoid}: every user may profile");
        }
        return;
    }
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"])
        .arg(fslab_path())
        .args([
            "meta",
            "--target",
            d.path().to_str().unwrap(),
            "--files",
            "10",
            "--profile",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("Permission denied") && !err.contains("--profile") {
        // the test binary is not reachable by that user (a private target dir)
        eprintln!("skipped: fslab not executable as nobody: {err}");
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--profile"), "{err}");
    assert!(err.contains("perf_event_paranoid"), "{err}");
    assert!(err.contains(&format!("is {paranoid}")), "{err}");
}

/// Without --profile-dir the folded stacks go beside the result file, not
/// into the current directory; with the results on stdout only, they go
/// there and a note on stderr says so.
#[test]
fn folded_stacks_go_beside_the_result_file() {
    if !is_root() {
        // perf_event_paranoid may refuse an unprivileged profile
        return;
    }
    let cwd = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir_in("/var/tmp").unwrap();
    let json = out.path().join("r.json");
    let run = |output: &[&str]| {
        Command::new(fslab_path())
            .current_dir(cwd.path())
            .args(["meta", "--target", target.path().to_str().unwrap(), "--files", "200"])
            .args(["--order", "seq", "--quiet", "--profile"])
            .args(output)
            .output()
            .unwrap()
    };
    let folded = |d: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".folded"))
            .collect()
    };
    let o = run(&["--output", &format!("json:{}", json.display())]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(folded(out.path()).len(), 1, "beside r.json");
    assert!(folded(cwd.path()).is_empty(), "nothing in the current directory");
    let f = read_json(&json)["cells"][0]["profile"]["folded_file"].clone();
    assert!(
        f.as_str().is_some_and(|p| p.starts_with(out.path().to_str().unwrap())),
        "{f}"
    );
    // stdout only: the current directory, said once on stderr
    let o = run(&["--output", "json"]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(folded(cwd.path()).len(), 1);
    assert!(
        err.contains("current directory") && err.contains("--profile-dir"),
        "{err}"
    );
}
