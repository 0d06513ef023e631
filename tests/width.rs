//! Issue 37, done-when 1: at COLUMNS=80 no line of any command's default
//! text output is wider than 80 characters: the quick suite, each example
//! plan (shortened, on real scratch filesystems; the kernel plan with one
//! guest kernel beside the host's), and io, meta, probe, replay, compare,
//! calibrate and `examples list`. Not laid out by fslab: `fslab fio`'s
//! normal output, fio's own format line for line (tests/fio_normal.rs), and
//! `fslab examples show`, a plan file byte for byte.

use crate::util::{debian_kernel, fslab, require_root_with, scratch_dir};
use std::path::Path;

/// The lines of `out` wider than `width` characters, numbered.
fn too_wide(out: &str, width: usize) -> Vec<String> {
    out.lines()
        .enumerate()
        .filter(|(_, l)| l.chars().count() > width)
        .map(|(i, l)| format!("line {} ({} chars): {l}", i + 1, l.chars().count()))
        .collect()
}

/// `fslab ARGS` at COLUMNS=80 succeeds and prints text of at most 80
/// columns (and something: a test that printed nothing proves nothing).
fn fits_80(dir: &Path, args: &[&str]) -> String {
    let out = fslab()
        .current_dir(dir)
        .env("COLUMNS", "80")
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.lines().count() >= 3, "{args:?} printed almost nothing:\n{text}");
    let wide = too_wide(&text, 80);
    assert!(wide.is_empty(), "{args:?}:\n{}\n\n{text}", wide.join("\n"));
    text
}

/// An example plan, shortened: one repeat, 512 MiB filesystems, 1-2 s
/// workloads of a few MiB, 1024 bonnie files; every key that says what is
/// compared (filesystems, factors, kernels, mkfs and mount options) kept.
fn shortened(name: &str, kernel: Option<&Path>) -> String {
    let text = std::fs::read_to_string(format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let mut plan: toml::Table = text.parse().expect("the example plan parses");
    plan.insert("repeat".into(), 1.into());
    for f in plan["filesystem"].as_array_mut().expect("[[filesystem]]") {
        f.as_table_mut().unwrap().insert("size".into(), "512m".into());
    }
    for w in plan["workload"].as_array_mut().expect("[[workload]]") {
        let w = w.as_table_mut().unwrap();
        let short: &[(&str, toml::Value)] = match w["type"].as_str().unwrap() {
            "io" => &[("runtime", "1s".into()), ("size", "8m".into()), ("jobs", 2.into())],
            "meta" => &[("bonnie", "1:256:256:2".into())],
            "replay" => &[("time", "2s".into()), ("clients", 2.into())],
            "probe" => &[
                ("phases", "idle:1s,load:2s,after:1s".into()),
                ("load", "stream-write:128m,bs=1m".into()),
            ],
            other => panic!("{name}: a workload of type {other}"),
        };
        for (k, v) in short {
            if w.contains_key(*k) || *k != "jobs" {
                w.insert(k.to_string(), v.clone());
            }
        }
    }
    if plan.contains_key("kernels") {
        let k = kernel.expect("a guest kernel");
        let mut guest = toml::Table::new();
        guest.insert("name".into(), "6.12".into());
        guest.insert("image".into(), k.join("vmlinuz").display().to_string().into());
        guest.insert("modules".into(), k.join("modules").display().to_string().into());
        plan.insert("kernels".into(), vec![toml::Value::Table(guest), "host".into()].into());
    }
    toml::to_string(&plan).unwrap()
}

#[test]
fn the_quick_suite_fits_80_columns() {
    let d = tempfile::tempdir().unwrap();
    let text = fits_80(d.path(), &["run", "--runtime", "1s"]);
    assert!(text.contains("randread-4k-cached"), "{text}");
}

#[test]
fn each_example_plan_fits_80_columns() {
    if !require_root_with(&["mkfs.ext4", "mkfs.xfs", "mount", "losetup", "dbench"]) {
        return;
    }
    let kernel = debian_kernel("6.12");
    let scratch = scratch_dir();
    let dir = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/examples"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    assert!(names.len() >= 6, "{names:?}");
    for name in &names {
        if name.contains("kernel") && kernel.is_none() {
            continue;
        }
        let plan = dir.path().join(name);
        std::fs::write(&plan, shortened(name, kernel.as_deref())).unwrap();
        let scratch = scratch.path().to_str().unwrap();
        let text = fits_80(dir.path(), &["run", plan.to_str().unwrap(), "--scratch-dir", scratch]);
        // the comparison is there, not only the header
        assert!(text.contains("baseline"), "{name}:\n{text}");
    }
}

#[test]
fn every_command_fits_80_columns() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().to_str().unwrap();
    let json = d.path().join("io.json");
    let out = format!("json:{}", json.display());
    fits_80(
        d.path(),
        &[
            "io",
            "--target",
            t,
            "--rw",
            "randrw",
            "--size",
            "4m",
            "--runtime",
            "1s",
            "--output",
            &out,
        ],
    );
    fits_80(
        d.path(),
        &["meta", "--target", t, "--files", "500", "--xattr", "user.x:256"],
    );
    fits_80(
        d.path(),
        &[
            "probe",
            "--target",
            t,
            "--interval",
            "100ms",
            "--phases",
            "idle:1s,load:1s,after:1s",
            "--load",
            "stream-write:32m",
        ],
    );
    if crate::util::have("dbench") {
        fits_80(
            d.path(),
            &[
                "replay",
                "/usr/share/dbench/client.txt",
                "--target",
                t,
                "--clients",
                "2",
                "--time",
                "1s",
            ],
        );
    }
    fits_80(d.path(), &["compare", json.to_str().unwrap()]);
    fits_80(d.path(), &["calibrate"]);
    fits_80(d.path(), &["examples", "list"]);
}

#[test]
fn width_is_a_flag_and_is_checked() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().to_str().unwrap();
    let io = ["io", "--target", t, "--size", "4m", "--runtime", "300ms"];
    // --width wins over $COLUMNS; a width of 60 splits the table in two
    let out = fslab()
        .env("COLUMNS", "200")
        .args(io)
        .args(["--width", "60"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(too_wide(&text, 60).is_empty(), "{text}");
    assert!(text.matches("read").count() >= 2, "a row per block:\n{text}");
    // $COLUMNS of 200: the cell's table is one table, wider than 80
    let out = fslab().env("COLUMNS", "200").args(io).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!too_wide(&text, 80).is_empty(), "200 columns given, 80 used:\n{text}");
    assert!(too_wide(&text, 200).is_empty(), "{text}");
    for bad in ["10", "wide", "0", "100000"] {
        crate::util::expect_usage(&["io", "--target", t, "--width", bad], "--width");
    }
    // check's report is text: csv is refused, not ignored
    crate::util::expect_usage(&["check", "base.json", "plan.toml", "--format", "csv"], "--format");
}
