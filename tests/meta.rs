//! `fslab meta` end to end: phases, xattrs, the bonnie++ CSV read by the real
//! bon_csv2txt and bon_csv2html, errors, cleanup and memory.

use crate::util::*;
use serde_json::Value;
use std::process::Command;

fn phases(j: &Value) -> Vec<(String, u64)> {
    j["cells"][0]["directions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["phase"].as_str().unwrap().to_string(), d["ops"].as_u64().unwrap()))
        .collect()
}

#[test]
fn all_phases_run_in_order_with_xattrs_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.json");
    fslab()
        .args([
            "meta",
            "--target",
            dir.path().to_str().unwrap(),
            "--files",
            "2000",
            "--dirs",
            "4",
        ])
        .args([
            "--file-size",
            "100-300",
            "--xattr",
            "user.a:32",
            "--xattr",
            "user.b:64",
            "--jobs",
            "2",
        ])
        .args(["--phases", "getxattr,rename,readdir,open-close", "--quiet"])
        .args(["--output", &format!("json:{}", out.display())])
        .assert()
        .success();
    let j = read_json(&out);
    let got = phases(&j);
    let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "seq-create",
            "seq-stat",
            "seq-getxattr",
            "seq-rename",
            "seq-readdir",
            "seq-open-close",
            "seq-delete",
            "random-create",
            "random-stat",
            "random-getxattr",
            "random-rename",
            "random-readdir",
            "random-open-close",
            "random-delete"
        ]
    );
    for (name, ops) in &got {
        let want = if name.ends_with("readdir") { 2 * 4 } else { 2 * 2000 };
        assert_eq!(*ops, want, "{name}");
    }
    // getxattr goes by name relative to the directory where the kernel can;
    // else the output says the rate includes walking the absolute path
    let warnings = j["cells"][0]["warnings"].to_string();
    assert_eq!(
        !warnings.contains("getxattr by absolute path"),
        fslab::engine::getxattrat_works(),
        "{warnings}"
    );
    let d = &j["cells"][0]["directions"];
    for p in d.as_array().unwrap() {
        assert!(p["errors"].as_object().unwrap().is_empty(), "{p}");
        assert!(p["cpu_percent"].as_f64().unwrap() > 0.0);
        assert!(p["elapsed_ns"].as_u64().unwrap() > 0);
    }
    // create writes 100..300 bytes per file; the sequential stat reads them back
    let created = d[0]["bytes"].as_u64().unwrap();
    assert!((4000 * 100..=4000 * 300).contains(&created), "{created}");
    assert_eq!(
        d[1]["bytes"].as_u64().unwrap(),
        created,
        "seq stat reads what create wrote"
    );
    // as bonnie++ 1.98: the random stat reads the data too
    let by_name = |n: &str| {
        d.as_array().unwrap().iter().find(|p| p["phase"] == n).unwrap()["bytes"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(
        by_name("random-stat"),
        by_name("random-create"),
        "random stat reads what create wrote"
    );
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn bonnie_shorthand_sets_bonnie_semantics_and_bad_specs_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.json");
    fslab()
        .args([
            "meta",
            "--target",
            dir.path().to_str().unwrap(),
            "--bonnie",
            "2:256:128:3",
            "--order",
            "seq",
        ])
        .args(["--quiet", "--output", &format!("json:{}", out.display())])
        .assert()
        .success();
    let j = read_json(&out);
    let p = &j["cells"][0]["plan"];
    assert_eq!((p["files"].as_u64(), p["dirs"].as_u64()), (Some(2048), Some(3)));
    assert_eq!((p["size_min"].as_u64(), p["size_max"].as_u64()), (Some(128), Some(256)));
    assert_eq!(phases(&j).len(), 3);
    for (args, want) in [
        (
            &["--bonnie", "x"][..],
            "--bonnie: 'x': file count 'x' is not a whole number",
        ),
        (&["--bonnie", "0"], "--bonnie: '0': the file count must be at least 1"),
        (
            &["--bonnie", "1:10:20"],
            "--bonnie: '1:10:20': min size 20 is above max size 10",
        ),
        (&["--bonnie", "1:2:3:4:5"], "--bonnie: '1:2:3:4:5': too many fields"),
        (&["--bonnie", "1", "--dirs", "3"], "--dirs: conflicts with --bonnie"),
        (&["--files", "0"], "--files: must be at least 1"),
        (
            &["--files", "10", "--dirs", "11"],
            "--dirs: must be between 1 and the file count 10",
        ),
        (&["--file-size", "2k-1k"], "--file-size: '2k-1k': minimum above maximum"),
        (&["--xattr", "user.a"], "--xattr: 'user.a': expected NAME:SIZE"),
        (
            &["--xattr", "nons:4"],
            "--xattr: 'nons': an xattr name needs a namespace",
        ),
        (
            &["--xattr", "user.a:100k"],
            "--xattr: 'user.a:100k': the kernel limits xattr values to 64 KiB",
        ),
        (
            &["--order", "sideways"],
            "invalid value 'sideways' for '--order <ORDERS>'",
        ),
        (
            &["--phases", "getxattr"],
            "--phases: getxattr needs at least one --xattr",
        ),
        (&["--phases", "dance"], "invalid value 'dance' for '--phases <PHASES>'"),
        (&["--engine", "null"], "invalid value 'null' for '--engine <ENGINE>'"),
    ] {
        // every case fails validation, before any file is made
        expect_usage(
            &[&["meta", "--target", dir.path().to_str().unwrap()][..], args].concat(),
            want,
        );
    }
    let o = fslab().args(["io", "--output", "bonnie-csv:x.csv"]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("bonnie-csv is for `fslab meta`"));
    assert!(
        !std::path::Path::new("x.csv").exists(),
        "a refused output file is not created"
    );
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn bon_csv2txt_and_bon_csv2html_read_the_csv() {
    if !require(
        "bon_csv2txt and bon_csv2html (bonnie++)",
        have("bon_csv2txt") && have("bon_csv2html"),
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (csv, js) = (dir.path().join("m.csv"), dir.path().join("m.json"));
    // enough files that the create phases take over 0.5 s and print real rates
    fslab()
        .args([
            "meta",
            "--target",
            dir.path().to_str().unwrap(),
            "--bonnie",
            "40:256:256:10",
            "--xattr",
            "user.t:256",
        ])
        .args(["--quiet", "--output", &format!("bonnie-csv:{}", csv.display())])
        .args(["--output", &format!("json:{}", js.display())])
        .assert()
        .success();
    let line = std::fs::read_to_string(&csv).unwrap();
    let fields: Vec<&str> = line.trim_end().split(',').collect();
    assert_eq!(fields.len(), 50, "{line}");
    assert_eq!(fields[0], "1.98");
    assert!(
        fields[2].starts_with("xa256-"),
        "xattr runs are marked in the name: {line}"
    );
    assert_eq!(&fields[21..26], &["40", "256", "256", "", "10"]);
    let j = read_json(&js);
    let dirs = j["cells"][0]["directions"].as_array().unwrap();
    let txt = Command::new("bon_csv2txt")
        .stdin(std::fs::File::open(&csv).unwrap())
        .output()
        .unwrap();
    assert!(txt.status.success());
    let txt = String::from_utf8_lossy(&txt.stdout).to_string();
    let html = Command::new("bon_csv2html")
        .stdin(std::fs::File::open(&csv).unwrap())
        .output()
        .unwrap();
    assert!(html.status.success());
    let html = String::from_utf8_lossy(&html.stdout).to_string();
    let mut numeric = 0;
    for (i, d) in dirs.iter().enumerate() {
        let rate = fields[26 + 2 * i];
        if d["elapsed_ns"].as_u64().unwrap() < 500_000_000 {
            assert_eq!(rate, "+++++");
            continue;
        }
        numeric += 1;
        assert_eq!(rate, (d["iops"].as_f64().unwrap() as u64).to_string(), "{}", d["phase"]);
        assert!(txt.contains(rate), "bon_csv2txt shows {rate}: {txt}");
        assert!(html.contains(rate), "bon_csv2html shows {rate}");
    }
    assert!(numeric >= 1, "at least one phase long enough for a rate: {line}");
    let max = fields[44];
    assert!(txt.contains(max) && html.contains(max), "worst latency {max} shown");
    assert!(
        txt.contains("xa256"),
        "the xattr mark survives bon_csv2txt's name column: {txt}"
    );
}

#[test]
fn unsupported_or_refused_xattrs_are_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = fslab()
        .args([
            "meta",
            "--target",
            dir.path().to_str().unwrap(),
            "--files",
            "10",
            "--xattr",
            "bogus.ns:16",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--xattr:") && err.contains("refuses the extended attribute bogus.ns of 16 bytes"),
        "{err}"
    );
    assert!(leftovers(dir.path()).is_empty());
    if !require_root_with(&["losetup", "mkfs.ext4", "mount"]) {
        return;
    }
    // ext4 without ea_inode keeps an xattr within one block: 64 KiB is refused
    let m = Scratch::new("ext4", 64);
    let o = fslab()
        .args([
            "meta",
            "--target",
            m.path().to_str().unwrap(),
            "--files",
            "10",
            "--xattr",
            "user.big:64k",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("(ext4) refuses the extended attribute user.big of 65536 bytes"),
        "{err}"
    );
    assert!(leftovers(m.path()).is_empty());
}

#[test]
fn enospc_stops_cleanly_with_the_errno_reported() {
    if !require_root_with(&["losetup", "mkfs.ext4", "mount"]) {
        return;
    }
    let lo = LoopDev::new(8);
    // 128 inodes: the create phase runs out long before 2000 files
    std::process::Command::new("mkfs.ext4")
        .args(["-q", "-F", "-N", "128", &lo.dev])
        .status()
        .unwrap();
    let m = Mount::new(&lo.dev, "ext4", "");
    let res = tempfile::tempdir().unwrap();
    let out = res.path().join("m.json");
    let o = fslab()
        .args([
            "meta",
            "--target",
            m.path().to_str().unwrap(),
            "--files",
            "2000",
            "--quiet",
        ])
        .args(["--output", &format!("json:{}", out.display())])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let j = read_json(&out);
    let d = &j["cells"][0]["directions"];
    assert_eq!(
        d.as_array().unwrap().len(),
        1,
        "later phases do not run after a failed create"
    );
    assert_eq!(d[0]["phase"], "seq-create");
    assert_eq!(d[0]["errors"]["ENOSPC"], 1, "{}", d[0]);
    assert!(d[0]["ops"].as_u64().unwrap() > 50);
    assert!(leftovers(m.path()).is_empty());
}

#[test]
fn ctrl_c_removes_every_file_and_a_million_files_stay_under_64_mib() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.json");
    let json = format!("json:{}", out.display());
    let t = dir.path().to_str().unwrap();
    let mut child = start(&[
        "meta", "--target", t, "--files", "1m", "--dirs", "100", "--quiet", "--output", &json,
    ]);
    // past validation (a signal before it leaves no result), then creating
    wait_for_workdir(&mut child, dir.path());
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let code = signal_and_wait(child, libc::SIGINT).status.code();
    assert_eq!(code, Some(130));
    let j = read_json(&out);
    assert_eq!(j["interrupted"], true);
    assert!(j["cells"][0]["directions"][0]["ops"].as_u64().unwrap() > 0);
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));

    // the memory check: a full create/stat/delete pass over 1M files
    if !require_root_with(&["mount"]) {
        return;
    }
    let m = Mount::new("tmpfs", "tmpfs", "size=4g,nr_inodes=2m");
    fslab()
        .args([
            "meta",
            "--target",
            m.path().to_str().unwrap(),
            "--files",
            "1m",
            "--dirs",
            "100",
            "--order",
            "seq",
        ])
        .args([
            "--no-sync-after-phase",
            "--quiet",
            "--output",
            &format!("json:{}", out.display()),
        ])
        .assert()
        .success();
    let j = read_json(&out);
    assert_eq!(j["cells"][0]["directions"][0]["ops"], 1_000_000);
    let rss = j["max_rss_kib"].as_u64().unwrap();
    assert!(rss < 64 * 1024, "peak RSS {rss} KiB for 1M files");
}
