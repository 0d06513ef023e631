//! The telemetry beside a cell (`cell.system`): a real run on a scratch
//! loop device reports that device first in the stack, with the `iostat -x`
//! figures in the JSON.

use crate::util::*;

#[test]
fn a_direct_run_on_a_loop_device_reports_the_device_and_its_figures() {
    if !require_root_with(&["losetup"]) {
        return;
    }
    let lo = LoopDev::new(64);
    let dir = tempfile::tempdir().unwrap();
    let jp = dir.path().join("r.json");
    let out = fslab()
        .args([
            "io",
            "--target",
            &lo.dev,
            "--allow-device",
            "--direct",
            "--rw",
            "randread",
        ])
        .args(["--size", "32m", "--runtime", "2s", "--quiet"])
        .args(["--output", &format!("json:{}", jp.display())])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j = read_json(&jp);
    let cell = &j["cells"][0];
    let sys = &cell["system"];
    let name = lo.dev.trim_start_matches("/dev/");
    let top = &sys["devices"][0];
    assert_eq!(top["name"], name, "{sys}");
    assert_eq!(top["role"], "loop");
    assert!(top["above"].is_null());
    assert!(top["backing"].as_str().unwrap().ends_with("/img"), "{top}");
    let total = &top["total"];
    assert!(total["r_s"].as_f64().unwrap() > 0.0, "{total}");
    for k in [
        "w_s",
        "rmb_s",
        "r_await_ms",
        "rareq_kib",
        "aqu_sz",
        "util_pct",
        "f_s",
        "d_s",
    ] {
        assert!(total[k].is_number(), "{k} missing: {total}");
    }
    // 4 KiB O_DIRECT reads at depth 1: one request each, none merged
    let ops = cell["directions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["dir"] == "read")
        .unwrap()["ops"]
        .as_u64()
        .unwrap();
    let ios = total["read_ios"].as_u64().unwrap();
    assert!(
        ios >= ops && ios <= ops + ops / 100 + 16,
        "device {ios} reads, fslab {ops}"
    );
    assert!((total["rareq_kib"].as_f64().unwrap() - 4.0).abs() < 0.25, "{total}");
    assert_eq!(total["rrqm_s"].as_f64().unwrap(), 0.0);
    // per second, on the cell's clock, every device alike
    let samples = sys["samples"].as_array().unwrap();
    assert!(samples.len() >= 2, "{sys}");
    assert_eq!(top["samples"].as_array().unwrap().len(), samples.len());
    let per_s: u64 = top["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["read_ios"].as_u64().unwrap())
        .sum();
    assert_eq!(per_s, ios, "the samples add up to the total");
    assert!(sys["ncpus"].as_u64().unwrap() >= 1);
    assert!(sys["total"]["cpu"]["idle"].is_number());
    assert_eq!(sys["phases"][0]["name"], "run");
    // the device under the backing file, when it is on one
    if let Some(below) = sys["devices"].as_array().unwrap().get(1) {
        assert_eq!(below["above"], name);
    }
    // the loop device's share of fslab's read latency
    let share = sys["latency_share"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["device"] == name && s["dir"] == "read")
        .unwrap_or_else(|| panic!("no read share for {name}: {sys}"));
    assert_eq!(share["ops"].as_u64().unwrap(), ops);
    assert_eq!(share["device_ios"].as_u64().unwrap(), ios);
    assert!(share["share_pct"].as_f64().unwrap() > 0.0);
    assert!(sys["interference"]["cpu_threshold_pct"].as_f64().unwrap() == 10.0);
}

#[test]
fn no_telemetry_means_no_system_block() {
    let dir = tempfile::tempdir().unwrap();
    let jp = dir.path().join("r.json");
    let out = fslab()
        .args([
            "io",
            "--target",
            dir.path().to_str().unwrap(),
            "--size",
            "1m",
            "--runtime",
            "200ms",
        ])
        .args([
            "--quiet",
            "--no-telemetry",
            "--output",
            &format!("json:{}", jp.display()),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j = read_json(&jp);
    assert!(j["cells"][0].get("system").is_none());
}

/// Every rank samples its own machine; rank 0 gathers them all.
#[cfg(feature = "mpi")]
#[test]
fn every_mpi_rank_reports_its_machine() {
    if !require("mpirun (Debian openmpi-bin)", have("mpirun")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t");
    std::fs::create_dir_all(&target).unwrap();
    let jp = dir.path().join("r.json");
    let o = std::process::Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", "2"])
        .arg(fslab_path())
        .args([
            "io",
            "--size",
            "4m",
            "--runtime",
            "1500ms",
            "--quiet",
            "--target",
            target.to_str().unwrap(),
        ])
        .args(["--output", &format!("json:{}", jp.display())])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j = read_json(&jp);
    let sys = &j["cells"][0]["system"];
    let ranks = sys["ranks"].as_array().unwrap_or_else(|| panic!("no ranks: {sys}"));
    assert_eq!(ranks.len(), 2);
    for (i, r) in ranks.iter().enumerate() {
        assert_eq!(r["rank"].as_u64().unwrap(), i as u64);
        assert!(r["total"]["t_ms"].as_u64().unwrap() > 0, "{r}");
        assert!(r["interference"]["cpu_threshold_pct"].as_f64().unwrap() == 10.0);
    }
    assert_eq!(sys["phases"][0]["name"], "run");
    assert!(!sys["samples"].as_array().unwrap().is_empty());
}
