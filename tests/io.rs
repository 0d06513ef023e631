//! `fslab io` end to end on real files.

use crate::util::*;
use serde_json::Value;

fn dir_result<'a>(j: &'a Value, dir: &str) -> &'a Value {
    j["cells"][0]["directions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["dir"] == dir)
        .unwrap_or_else(|| panic!("no {dir} in {j}"))
}

#[test]
fn timed_random_reads_write_a_complete_result_and_clean_up() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    fslab()
        .args([
            "io",
            "--target",
            dir.path().to_str().unwrap(),
            "--size",
            "8m",
            "--runtime",
            "1s",
            "--quiet",
        ])
        .args(["--output", &format!("json:{}", out.display())])
        .assert()
        .success();
    let j = read_json(&out);
    assert_eq!(j["schema_version"], 2);
    assert_eq!(j["interrupted"], false);
    assert!(j["host"]["kernel"].as_str().unwrap().len() > 1);
    let c = &j["cells"][0];
    assert_eq!(c["target"]["kind"], "directory");
    assert!(!c["target"]["fs_type"].as_str().unwrap().is_empty());
    assert_eq!(c["kind"], "io");
    assert_eq!(c["plan"]["rw"], "randread");
    let r = dir_result(&j, "read");
    let ops = r["ops"].as_u64().unwrap();
    assert!(ops > 100, "{r}");
    assert_eq!(r["bytes"].as_u64().unwrap(), ops * 4096);
    let elapsed = c["elapsed_ns"].as_f64().unwrap() / 1e9;
    assert!((0.99..1.2).contains(&elapsed), "measured {elapsed} s");
    assert!((r["iops"].as_f64().unwrap() - ops as f64 / elapsed).abs() < 1.0);
    let (p50, p99, max) = (
        r["lat"]["percentiles"]["50"].as_u64().unwrap(),
        r["lat"]["percentiles"]["99"].as_u64().unwrap(),
        r["lat"]["max_ns"].as_u64().unwrap(),
    );
    assert!(r["lat"]["min_ns"].as_u64().unwrap() <= p50 && p50 <= p99 && p99 <= max);
    let hist_total: u64 = r["lat"]["histogram"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b[1].as_u64().unwrap())
        .sum();
    assert_eq!(hist_total, ops, "the histogram holds every op");
    let series = c["series"].as_array().unwrap();
    assert!(!series.is_empty());
    let series_ops: u64 = series.iter().map(|p| p["read"]["ops"].as_u64().unwrap()).sum();
    assert_eq!(series_ops, ops, "the time series accounts for every op");
    assert!(j["max_rss_kib"].as_u64().unwrap() > 0);
    assert!(
        leftovers(dir.path()).is_empty(),
        "work directory removed: {:?}",
        leftovers(dir.path())
    );
}

#[test]
fn size_based_run_moves_exactly_size_bytes_and_fsyncs_every_n_writes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    fslab()
        .args([
            "io",
            "--target",
            dir.path().to_str().unwrap(),
            "--rw",
            "write",
            "--bs",
            "64k",
            "--size",
            "4m",
        ])
        .args([
            "--jobs",
            "2",
            "--fsync",
            "8",
            "--quiet",
            "--output",
            &format!("json:{}", out.display()),
        ])
        .assert()
        .success();
    let j = read_json(&out);
    let w = dir_result(&j, "write");
    assert_eq!(w["ops"], 128, "2 jobs x 4 MiB / 64 KiB");
    assert_eq!(w["bytes"], 2 * 4 * 1048576);
    assert_eq!(
        dir_result(&j, "fsync")["ops"],
        2 * (64 / 8 - 1),
        "an fsync after every 8 writes but the last (fio's cadence: none ends the job)"
    );
    assert_eq!(j["cells"][0]["cpu"]["jobs"].as_array().unwrap().len(), 2);
}

#[test]
fn paced_run_reports_latency_from_the_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    fslab()
        .args([
            "io",
            "--target",
            dir.path().to_str().unwrap(),
            "--size",
            "4m",
            "--rate-iops",
            "200",
            "--runtime",
            "1s",
        ])
        .args([
            "--lat-buckets",
            "1ms,10ms",
            "--quiet",
            "--output",
            &format!("json:{}", out.display()),
        ])
        .assert()
        .success();
    let j = read_json(&out);
    let r = dir_result(&j, "read");
    let ops = r["ops"].as_u64().unwrap();
    assert!((180..=202).contains(&ops), "paced at 200/s for 1 s: {ops}");
    let sched = &r["sched_lat"];
    assert!(sched.is_object(), "paced runs carry latency from the schedule");
    assert!(sched["mean_ns"].as_f64().unwrap() >= r["lat"]["mean_ns"].as_f64().unwrap());
    let b = r["lat_buckets"].as_array().unwrap();
    assert_eq!(b.len(), 2);
    assert_eq!(b[0]["le_ns"], 1_000_000);
    assert_eq!(b[1]["le_ns"], 10_000_000);
    assert!(b[0]["share"].as_f64().unwrap() <= b[1]["share"].as_f64().unwrap());
}

#[test]
fn ramp_is_excluded_and_null_engine_does_no_io() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    fslab()
        .args([
            "io",
            "--target",
            dir.path().to_str().unwrap(),
            "--engine",
            "null",
            "--ramp",
            "500ms",
            "--runtime",
            "1s",
        ])
        .args([
            "--rw",
            "randrw",
            "--quiet",
            "--output",
            &format!("json:{}", out.display()),
        ])
        .assert()
        .success();
    let j = read_json(&out);
    let elapsed = j["cells"][0]["elapsed_ns"].as_f64().unwrap() / 1e9;
    assert!((0.99..1.1).contains(&elapsed), "ramp excluded: measured {elapsed} s");
    let r = dir_result(&j, "read")["ops"].as_f64().unwrap();
    let w = dir_result(&j, "write")["ops"].as_f64().unwrap();
    assert!(r > 1e5, "null engine is fast: {r}");
    assert!((r / (r + w) - 0.5).abs() < 0.01, "default mix 50%");
}

#[test]
fn existing_file_is_read_without_being_changed() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("data");
    let content: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(&f, &content).unwrap();
    fslab()
        .args([
            "io",
            "--target",
            f.to_str().unwrap(),
            "--runtime",
            "500ms",
            "--jobs",
            "2",
            "--quiet",
        ])
        .assert()
        .success();
    assert_eq!(std::fs::read(&f).unwrap(), content);
}

#[test]
fn text_output_is_the_default_and_help_has_examples() {
    let dir = tempfile::tempdir().unwrap();
    let out = fslab()
        .args([
            "io",
            "--target",
            dir.path().to_str().unwrap(),
            "--size",
            "1m",
            "--runtime",
            "300ms",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    for want in ["IOPS", "MB/s", "p99.9", "≤2.00 ms", "read", "cpu:"] {
        assert!(s.contains(want), "missing {want}: {s}");
    }
    let help = fslab().args(["io", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("Examples:"));
}

#[test]
fn tmpfs_ignoring_o_direct_is_flagged() {
    if !require_root_with(&["mount"]) {
        return;
    }
    let m = Mount::new("tmpfs", "tmpfs", "size=64m");
    let out_json = m.path().join("r.json");
    let out = fslab()
        .args([
            "io",
            "--target",
            m.path().to_str().unwrap(),
            "--size",
            "4m",
            "--direct",
            "--runtime",
            "300ms",
        ])
        .args(["--output", "text", "--output", &format!("json:{}", out_json.display())])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("O_DIRECT: NOT honoured"), "{text}");
    assert!(text.contains("warning: O_DIRECT is not honoured"), "{text}");
    let j = read_json(&out_json);
    assert_eq!(j["cells"][0]["target"]["fs_type"], "tmpfs");
    assert_eq!(j["cells"][0]["target"]["direct_honoured"], false);
}

/// DESIGN experiment 2 on ext4 on a loop device: per direction IOPS, MB/s,
/// mean, p50/p99/p99.9 and the share at or under 2 ms, the same in text and JSON.
#[test]
fn mixed_direct_io_on_ext4_loop_device_text_matches_json() {
    if !require_root_with(&["losetup", "mkfs.ext4", "mount"]) {
        return;
    }
    let m = Scratch::new("ext4", 256);
    let res = tempfile::tempdir().unwrap();
    let (tp, jp) = (res.path().join("r.txt"), res.path().join("r.json"));
    fslab()
        .args([
            "io",
            "--target",
            m.path().to_str().unwrap(),
            "--rw",
            "randrw",
            "--rwmixread",
            "90",
            "--bs",
            "16k",
        ])
        .args(["--jobs", "16", "--direct", "--size", "4m", "--runtime", "2s", "--quiet"])
        // one row per direction, whole
        .args(["--width", "300"])
        .args([
            "--output",
            &format!("text:{}", tp.display()),
            "--output",
            &format!("json:{}", jp.display()),
        ])
        .assert()
        .success();
    let text = std::fs::read_to_string(&tp).unwrap();
    let j = read_json(&jp);
    let t = &j["cells"][0]["target"];
    assert_eq!(t["fs_type"], "ext4");
    assert_eq!(t["device"], m.lo.dev.as_str());
    assert_eq!(t["direct_honoured"], true);
    assert!(t["dio_offset_align"].as_u64().unwrap() >= 512);
    assert!(text.contains("O_DIRECT: honoured"), "{text}");
    for dir in ["read", "write"] {
        let r = dir_result(&j, dir);
        assert!(r["ops"].as_u64().unwrap() > 0);
        let row = text
            .lines()
            .find(|l| l.trim_start_matches(['│', ' ']).starts_with(&format!("{dir} ")))
            .unwrap_or_else(|| panic!("no {dir} row in {text}"));
        let cells: Vec<&str> = row
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty() && *c != "│")
            .collect();
        use fslab::units::{fmt_rate, Nanos};
        let lat = |k: &str| Nanos(r["lat"]["percentiles"][k].as_u64().unwrap()).to_string();
        let want = [
            r["ops"].as_u64().unwrap().to_string(),
            fmt_rate(r["iops"].as_f64().unwrap()),
            format!("{:.1}", r["mb_s"].as_f64().unwrap()),
            format!("{:.1}", r["mib_s"].as_f64().unwrap()),
            Nanos(r["lat"]["mean_ns"].as_f64().unwrap() as u64).to_string(),
            lat("50"),
            lat("99"),
            lat("99.9"),
            Nanos(r["lat"]["max_ns"].as_u64().unwrap()).to_string(),
            format!("{:.2}%", r["lat_buckets"][0]["share"].as_f64().unwrap() * 100.0),
        ];
        assert_eq!(r["lat_buckets"][0]["le_ns"], 2_000_000);
        assert_eq!(&cells[1..11], &want[..], "{dir} row: {row}");
    }
    assert!(leftovers(m.path()).is_empty());
}

#[test]
fn o_direct_alignment_is_enforced_on_ext4() {
    if !require_root_with(&["losetup", "mkfs.ext4", "mount"]) {
        return;
    }
    let m = Scratch::new("ext4", 64);
    let out = fslab()
        .args([
            "io",
            "--target",
            m.path().to_str().unwrap(),
            "--size",
            "1m",
            "--bs",
            "1000",
            "--direct",
            "--runtime",
            "1s",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--bs: 1000 is not a multiple of the O_DIRECT offset alignment"),
        "{err}"
    );
    assert!(leftovers(m.path()).is_empty(), "refused run removed its files");
    // an aligned size that is not a page multiple works, from page-aligned buffers
    fslab()
        .args([
            "io",
            "--target",
            m.path().to_str().unwrap(),
            "--size",
            "1m",
            "--bs",
            "1536",
            "--direct",
        ])
        .args(["--rw", "randrw", "--runtime", "300ms", "--quiet"])
        .assert()
        .success();
}

/// fio tooling reads fslab's fio-json: the fields fio-plot uses, matching
/// fslab's own JSON; and the CSV carries the same numbers.
#[test]
fn fio_json_and_csv_outputs_carry_the_same_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let (fj, js, csv) = (
        dir.path().join("f.json"),
        dir.path().join("r.json"),
        dir.path().join("r.csv"),
    );
    fslab()
        .args([
            "io",
            "--target",
            dir.path().to_str().unwrap(),
            "--rw",
            "randrw",
            "--rwmixread",
            "70",
        ])
        .args(["--size", "4m", "--runtime", "1s", "--jobs", "2", "--quiet"])
        .args([
            "--output",
            &format!("fio-json:{}", fj.display()),
            "--output",
            &format!("json:{}", js.display()),
        ])
        .args(["--output", &format!("csv:{}", csv.display())])
        .assert()
        .success();
    let f = read_json(&fj);
    let j = read_json(&js);
    assert!(f["fio version"].as_str().unwrap().starts_with("fslab-"));
    assert!(f["global options"].is_object());
    let job = &f["jobs"][0];
    assert_eq!(job["jobname"], "io");
    for k in ["iodepth", "numjobs", "bs", "rw"] {
        assert!(job["job options"][k].is_string(), "{k}");
    }
    assert_eq!(job["job options"]["numjobs"], "2");
    for (fd, d) in [("read", 0), ("write", 1)] {
        let ours = &j["cells"][0]["directions"][d];
        let theirs = &job[fd];
        assert_eq!(theirs["iops"].as_f64(), ours["iops"].as_f64());
        assert_eq!(theirs["total_ios"], ours["ops"]);
        assert_eq!(theirs["lat_ns"]["mean"].as_f64(), ours["lat"]["mean_ns"].as_f64());
        assert_eq!(
            theirs["bw"].as_u64().unwrap(),
            (ours["bytes_per_s"].as_f64().unwrap() / 1024.0) as u64
        );
        assert_eq!(
            theirs["clat_ns"]["percentile"]["99.000000"],
            ours["lat"]["percentiles"]["99"]
        );
        assert!(theirs["iops_stddev"].is_number());
    }
    let total: f64 = ["latency_ns", "latency_us", "latency_ms"]
        .iter()
        .flat_map(|k| job[k].as_object().unwrap().values().map(|v| v.as_f64().unwrap()))
        .sum();
    assert!((total - 100.0).abs() < 0.01, "latency buckets cover every I/O: {total}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("cell,filesystem,workload,repeat,operation,phase,metric,value\n"));
    let ops = text.lines().find(|l| l.starts_with("io,,,,read,,ops,")).unwrap();
    assert_eq!(
        ops.rsplit(',').next().unwrap(),
        j["cells"][0]["directions"][0]["ops"].to_string()
    );
}
