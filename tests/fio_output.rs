//! What `fslab fio` writes, checked against fio 3.33 and its own tools: the
//! log files (names as fio names them, read by fio2gnuplot), the terse
//! line (the field count of fio's for the same job), json+ bins (fio's bin
//! values, read by fio_jsonplus_clat2csv), the `sync` object the etcd disk
//! check reads, and comma lists of formats.

use crate::util::*;
use fslab::stats::plat::{plat_idx_to_val, plat_val_to_idx};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Runs `fslab fio ARGS` in `cwd`; its stdout.
fn fslab_fio(cwd: &Path, args: &[&str]) -> String {
    let out = fslab()
        .current_dir(cwd)
        .arg("fio")
        .args(args)
        .arg("--quiet")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "fslab fio {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `fio ARGS` in `cwd`; its stdout.
fn fio(cwd: &Path, args: &[&str]) -> String {
    let out = Command::new("fio").current_dir(cwd).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "fio {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The `*.log` files in `dir`.
fn logs_in(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect()
}

/// A log's rows, each split at ", ".
fn rows(p: &Path) -> Vec<Vec<u64>> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| {
            l.split(", ")
                .map(|v| v.parse().unwrap_or_else(|_| panic!("{}: '{l}'", p.display())))
                .collect()
        })
        .collect()
}

fn job_args(data: &Path) -> Vec<String> {
    [
        "--name=lg",
        "--rw=randrw",
        "--bs=4k",
        "--size=4m",
        "--ioengine=psync",
        "--runtime=1",
        "--time_based",
        "--numjobs=2",
        "--write_bw_log=lg",
        "--write_iops_log=lg",
        "--write_lat_log=lg",
        "--write_hist_log=lg",
        "--log_hist_msec=100",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("--directory={}", data.display())])
    .collect()
}

#[test]
fn logs_are_named_as_fios_and_read_by_fio2gnuplot() {
    if !require("fio2gnuplot (fio's tools)", have("fio2gnuplot")) {
        return;
    }
    let data = tempfile::tempdir_in("/var/tmp").unwrap();
    let ours = tempfile::tempdir_in("/var/tmp").unwrap();
    let mut args = job_args(data.path());
    args.push("--log_avg_msec=100".into());
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    fslab_fio(ours.path(), &a);
    let names = logs_in(ours.path());
    let want: BTreeSet<String> = ["bw", "iops", "lat", "clat", "slat", "clat_hist"]
        .iter()
        .flat_map(|k| (1..=2).map(move |n| format!("lg_{k}.{n}.log")))
        .collect();
    assert_eq!(names, want);
    if have("fio") {
        // fio names the same job's logs the same
        let theirs = tempfile::tempdir_in("/var/tmp").unwrap();
        fio(theirs.path(), &a);
        assert_eq!(logs_in(theirs.path()), names);
    }
    // windowed entries: time, value, direction, 0, 0; times within the run
    for k in ["bw", "iops", "lat", "clat"] {
        let r = rows(&ours.path().join(format!("lg_{k}.1.log")));
        assert!(r.len() >= 10, "{k}: {} rows", r.len());
        for row in &r {
            assert_eq!(row.len(), 5, "{k}: {row:?}");
            assert!(
                row[0] <= 1100 && row[2] <= 1 && row[3] == 0 && row[4] == 0,
                "{k}: {row:?}"
            );
        }
    }
    // psync has no submission latency: fio's slat log is empty too
    assert!(rows(&ours.path().join("lg_slat.1.log")).is_empty());
    // the histogram: time, direction, bs, then fio's 1856 bins
    let h = rows(&ours.path().join("lg_clat_hist.1.log"));
    assert!(!h.is_empty());
    assert!(h.iter().all(|r| r.len() == 3 + 1856 && r[2] == 4096));
    // fio2gnuplot reads the bw log and agrees on its count and mean
    let bw = rows(&ours.path().join("lg_bw.1.log"));
    let g = tempfile::tempdir_in("/var/tmp").unwrap();
    std::fs::copy(ours.path().join("lg_bw.1.log"), g.path().join("lg_bw.1.log")).unwrap();
    let out = Command::new("fio2gnuplot")
        .current_dir(g.path())
        .args(["-p", "*_bw.1.log"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let global = std::fs::read_to_string(g.path().join("_bw.1.global")).unwrap();
    let field = |k: &str| -> f64 {
        global
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .unwrap_or_else(|| panic!("{k} in {global}"))
            .parse()
            .unwrap()
    };
    assert_eq!(field("values_count") as usize, bw.len(), "{global}");
    let mean = bw.iter().map(|r| r[1] as f64).sum::<f64>() / bw.len() as f64;
    assert!((field("avg") - mean).abs() < 0.01, "{global} vs {mean}");
}

#[test]
fn per_io_logs_have_an_entry_per_io() {
    let data = tempfile::tempdir_in("/var/tmp").unwrap();
    let ours = tempfile::tempdir_in("/var/tmp").unwrap();
    let d = format!("--directory={}", data.path().display());
    let j = fslab_fio(
        ours.path(),
        &[
            "--name=pio",
            "--rw=write",
            "--bs=8k",
            "--size=1m",
            "--write_bw_log",
            "--write_iops_log=io",
            "--per_job_logs=0",
            "--output-format=json",
            &d,
        ],
    );
    let j: serde_json::Value = serde_json::from_str(&j).unwrap();
    assert_eq!(j["jobs"][0]["write"]["total_ios"], 128);
    // write_bw_log without a value: the job's name; per_job_logs=0: no number
    let bw = rows(&ours.path().join("pio_bw.log"));
    let iops = rows(&ours.path().join("io_iops.log"));
    assert_eq!((bw.len(), iops.len()), (128, 128));
    assert!(iops.iter().all(|r| r[1] == 1 && r[2] == 1 && r[3] == 8192));
    assert!(bw.windows(2).all(|w| w[0][0] <= w[1][0]), "times in order");
}

#[test]
fn log_offset_puts_each_ios_offset_in_the_fifth_column_as_fio_does() {
    let data = tempfile::tempdir_in("/var/tmp").unwrap();
    let d = format!("--directory={}", data.path().display());
    // a random read of a 1 MiB file with fio's random map touches every
    // 4 KiB block once: both tools' offsets are the same set, in some order
    let args = [
        "--name=lo",
        "--rw=randread",
        "--bs=4k",
        "--size=1m",
        "--ioengine=psync",
        "--write_lat_log=lo",
        "--write_iops_log=lo",
        "--log_offset=1",
        "--output-format=json",
        &d,
    ];
    let ours = tempfile::tempdir_in("/var/tmp").unwrap();
    fslab_fio(ours.path(), &args);
    let offsets = |dir: &Path, kind: &str| -> Vec<u64> {
        let r = rows(&dir.join(format!("lo_{kind}.1.log")));
        assert!(
            r.iter().all(|row| row.len() == 6 && row[3] == 4096 && row[5] == 0),
            "{kind}: {r:?}"
        );
        let mut o: Vec<u64> = r.iter().map(|row| row[4]).collect();
        o.sort_unstable();
        o
    };
    let want: Vec<u64> = (0..256).map(|b| b * 4096).collect();
    for kind in ["clat", "lat", "iops"] {
        assert_eq!(offsets(ours.path(), kind), want, "{kind}");
    }
    // the lat and clat lines of one I/O name the same offset
    let lat = rows(&ours.path().join("lo_lat.1.log"));
    let clat = rows(&ours.path().join("lo_clat.1.log"));
    assert_eq!(
        lat.iter().map(|r| r[4]).collect::<Vec<_>>(),
        clat.iter().map(|r| r[4]).collect::<Vec<_>>()
    );
    if have("fio") {
        let theirs = tempfile::tempdir_in("/var/tmp").unwrap();
        fio(theirs.path(), &args);
        assert_eq!(offsets(theirs.path(), "clat"), want, "fio's own");
    }
    // averaged windows carry no offset, as fio's
    let avg = tempfile::tempdir_in("/var/tmp").unwrap();
    let mut windowed = args.to_vec();
    windowed.extend(["--log_avg_msec=10", "--time_based", "--runtime=200ms"]);
    fslab_fio(avg.path(), &windowed);
    let r = rows(&avg.path().join("lo_clat.1.log"));
    assert!(
        !r.is_empty() && r.iter().all(|row| row.len() == 6 && row[3] == 0 && row[4] == 0),
        "{r:?}"
    );
}

/// The fields of terse lines.
fn terse_fields(s: &str) -> Vec<String> {
    let line = s.lines().next().unwrap_or("");
    line.split(';').map(String::from).collect()
}

#[test]
fn terse_has_fios_fields() {
    if !require("fio", have("fio")) {
        return;
    }
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let job = [
        "--name=t",
        "--ioengine=null",
        "--rw=randrw",
        "--size=8m",
        "--percentile_list=50:99",
    ];
    let ours = terse_fields(&fslab_fio(d.path(), &[&job[..], &["--output-format=terse"]].concat()));
    let theirs = terse_fields(&fio(d.path(), &[&job[..], &["--output-format=terse"]].concat()));
    // the null engine has no disk: fio's 121 fields
    assert_eq!(theirs.len(), 121, "{theirs:?}");
    assert_eq!(ours.len(), theirs.len(), "{ours:?}");
    assert_eq!((ours[0].as_str(), ours[2].as_str(), ours[3].as_str()), ("3", "t", "0"));
    // same shape field by field: percentiles where fio has them, '%' where fio has it
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        let shape = |s: &str| {
            (
                s.contains('='),
                s.ends_with('%'),
                s.split('=').next().unwrap_or("").to_string(),
            )
        };
        if i == 1 {
            continue; // the version string
        }
        if a.contains('=') || b.contains('=') {
            assert_eq!(shape(a).2, shape(b).2, "field {i}: {a} vs {b}");
        }
        assert_eq!(
            (shape(a).0, shape(a).1),
            (shape(b).0, shape(b).1),
            "field {i}: {a} vs {b}"
        );
    }
    // --minimal is terse
    let m = terse_fields(&fslab_fio(d.path(), &[&job[..], &["--minimal"]].concat()));
    assert_eq!(m.len(), 121);
    // a job on a disk: fio and fslab add the same disks, 9 fields each
    let data = tempfile::tempdir_in("/var/tmp").unwrap();
    let dir = format!("--directory={}", data.path().display());
    let job = [
        "--name=f",
        "--rw=write",
        "--size=1m",
        dir.as_str(),
        "--output-format=terse",
    ];
    let theirs = terse_fields(&fio(d.path(), &job));
    let ours = terse_fields(&fslab_fio(d.path(), &job));
    assert!(
        theirs.len() > 121 && (theirs.len() - 121).is_multiple_of(9),
        "{theirs:?}"
    );
    assert_eq!(ours.len(), theirs.len(), "{ours:?}");
    // the disks' names in fio's order; counts are each tool's own run
    let names = |f: &[String]| f[121..].iter().step_by(9).cloned().collect::<Vec<_>>();
    assert_eq!(names(&ours), names(&theirs));
    for f in [&ours, &theirs] {
        assert!(f[129].ends_with('%'), "util: {f:?}");
    }
    // ios, merges and ticks per direction and in_queue: integer counts
    for v in &ours[122..129] {
        assert!(v.parse::<u64>().is_ok(), "{v}: {ours:?}");
    }
}

#[test]
fn json_plus_bins_are_fios_and_read_by_clat2csv() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let data = tempfile::tempdir_in("/var/tmp").unwrap();
    let dir = format!("--directory={}", data.path().display());
    let out = d.path().join("plus.json");
    let o = format!("--output={}", out.display());
    let job = ["--name=jp", "--rw=randread", "--size=4m", dir.as_str()];
    fslab_fio(d.path(), &[&job[..], &["--output-format=json+", o.as_str()]].concat());
    let j = read_json(&out);
    let clat = &j["jobs"][0]["read"]["clat_ns"];
    let bins = clat["bins"].as_object().expect("json+ has clat_ns.bins");
    let total: u64 = bins.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(total, j["jobs"][0]["read"]["total_ios"].as_u64().unwrap());
    for k in bins.keys() {
        let v: u64 = k.parse().unwrap();
        assert_eq!(plat_idx_to_val(plat_val_to_idx(v)), v, "bin {k} is not one of fio's");
    }
    // without json+ there are none
    let plain = fslab_fio(d.path(), &[&job[..], &["--output-format=json"]].concat());
    assert!(!plain.contains("\"bins\""));
    if have("fio") {
        // fio's own bins are values of the same set (checks the bin arithmetic against fio)
        let theirs: serde_json::Value =
            serde_json::from_str(&fio(d.path(), &[&job[..], &["--output-format=json+"]].concat())).unwrap();
        let tb = theirs["jobs"][0]["read"]["clat_ns"]["bins"].as_object().unwrap();
        assert!(!tb.is_empty());
        for k in tb.keys() {
            let v: u64 = k.parse().unwrap();
            assert_eq!(plat_idx_to_val(plat_val_to_idx(v)), v, "fio's bin {k}");
        }
        let keys = |o: &serde_json::Value| -> BTreeSet<String> { o.as_object().unwrap().keys().cloned().collect() };
        assert_eq!(keys(clat), keys(&theirs["jobs"][0]["read"]["clat_ns"]));
    }
    if !require("fio_jsonplus_clat2csv", have("fio_jsonplus_clat2csv")) {
        return;
    }
    let csv = d.path().join("plus.csv");
    let st = Command::new("fio_jsonplus_clat2csv")
        .arg(&out)
        .arg(&csv)
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let text = std::fs::read_to_string(d.path().join("plus_job0.csv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(", ").collect();
    let col = head.iter().position(|h| *h == "read_clat_ns_count").unwrap();
    let counted: u64 = lines
        .map(|l| l.split(", ").nth(col).unwrap_or("").trim().parse::<u64>().unwrap_or(0))
        .sum();
    assert_eq!(counted, total);
}

#[test]
fn sync_object_as_the_etcd_check_reads_it() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let data = tempfile::tempdir_in("/var/tmp").unwrap();
    let dir = format!("--directory={}", data.path().display());
    // the etcd disk check's job
    let job = [
        "--name=etcd",
        "--rw=write",
        "--ioengine=sync",
        "--fdatasync=1",
        "--size=1m",
        "--bs=2300",
        dir.as_str(),
        "--output-format=json",
    ];
    let j: serde_json::Value = serde_json::from_str(&fslab_fio(d.path(), &job)).unwrap();
    let sync = &j["jobs"][0]["sync"];
    let writes = j["jobs"][0]["write"]["total_ios"].as_u64().unwrap();
    // fio 3.33 counts only fsyncs in total_ios (0 here); N is their
    // number: one after each write, the last too (2300 B do not divide
    // 1 MiB, so fio looks for one more I/O, and syncs first)
    assert_eq!(sync["total_ios"], 0, "{sync}");
    assert_eq!(sync["lat_ns"]["N"].as_u64().unwrap(), writes, "{sync}");
    let p99 = sync["lat_ns"]["percentile"]["99.000000"].as_u64().unwrap();
    assert!(p99 > 0 && p99 <= sync["lat_ns"]["max"].as_u64().unwrap());
    if have("fio") {
        let theirs: serde_json::Value = serde_json::from_str(&fio(d.path(), &job)).unwrap();
        let t = &theirs["jobs"][0]["sync"];
        assert_eq!(t["total_ios"], sync["total_ios"]);
        let (n, tn) = (
            sync["lat_ns"]["N"].as_u64().unwrap(),
            t["lat_ns"]["N"].as_u64().unwrap(),
        );
        assert_eq!(n, tn, "fdatasyncs: fslab {n}, fio {tn}");
        let keys = |o: &serde_json::Value| -> BTreeSet<String> { o.as_object().unwrap().keys().cloned().collect() };
        assert_eq!(keys(sync), keys(t));
        assert_eq!(keys(&sync["lat_ns"]), keys(&t["lat_ns"]));
    }
}

#[test]
fn format_lists_and_latency_reporting_options() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let job = ["--name=fl", "--ioengine=null", "--rw=read", "--size=1m"];
    let both = fslab_fio(d.path(), &[&job[..], &["--output-format=json,normal"]].concat());
    // fio's order: the normal output's lines before the run, the JSON
    // document, then the normal output's results
    let at = both
        .find("\n{\n")
        .expect("a JSON document after the lines before the run")
        + 1;
    assert!(both[..at].starts_with("fl: (g=0): rw=read"), "{both}");
    let mut docs = serde_json::Deserializer::from_str(&both[at..]).into_iter::<serde_json::Value>();
    let j = docs.next().unwrap().unwrap();
    assert_eq!(j["jobs"][0]["jobname"], "fl");
    let results = &both[at + docs.byte_offset()..];
    assert!(results.starts_with("\n\nfl: (groupid=0, jobs=1)"), "{both}");
    let t = fslab_fio(d.path(), &[&job[..], &["--output-format=terse,json"]].concat());
    assert!(t.starts_with("3;"), "{t}");
    // percentiles where asked: lat_percentiles=1, clat_percentiles=0
    let j: serde_json::Value = serde_json::from_str(&fslab_fio(
        d.path(),
        &[
            &job[..],
            &[
                "--lat_percentiles=1",
                "--clat_percentiles=0",
                "--percentile_list=50:99.9",
                "--output-format=json",
            ],
        ]
        .concat(),
    ))
    .unwrap();
    let r = &j["jobs"][0]["read"];
    assert!(r["clat_ns"].get("percentile").is_none(), "{r}");
    let p: BTreeSet<String> = r["lat_ns"]["percentile"].as_object().unwrap().keys().cloned().collect();
    assert_eq!(p, ["50.000000", "99.900000"].iter().map(|s| s.to_string()).collect());
    // gtod_reduce: the latencies reported empty, as fio reports them
    let j: serde_json::Value = serde_json::from_str(&fslab_fio(
        d.path(),
        &[&job[..], &["--gtod_reduce=1", "--output-format=json"]].concat(),
    ))
    .unwrap();
    let r = &j["jobs"][0]["read"];
    for k in ["slat_ns", "clat_ns", "lat_ns"] {
        assert_eq!(r[k]["N"], 0, "{k}: {r}");
    }
    assert_eq!(r["total_ios"], 256);
    assert_eq!(r["bw_samples"], 0);
    // bad values and unsupported ones, each named
    expect_usage(
        &[&["fio"], &job[..], &["--percentile_list=50:101"]].concat(),
        "percentile_list: 101 is not in (0, 100]",
    );
    expect_usage(
        &[&["fio"], &job[..], &["--output-format=json,xml"]].concat(),
        "--output-format: 'xml' is not supported",
    );
    expect_usage(
        &[&["fio"], &job[..], &["--terse-version=2"]].concat(),
        "--terse-version",
    );
}

#[test]
fn a_log_path_through_a_symlink_is_refused_before_the_run() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let real = d.path().join("real");
    std::fs::write(&real, "keep").unwrap();
    std::os::unix::fs::symlink(&real, d.path().join("s_bw.1.log")).unwrap();
    let p = format!("--write_bw_log={}", d.path().join("s").display());
    expect_usage(
        &["fio", "--name=s", "--ioengine=null", "--rw=read", "--size=1m", &p],
        "symbolic link",
    );
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "keep");
}

#[test]
fn fio_plot_draws_fslabs_logs() {
    // fio-plot comes from pip, not from Debian: CI (Debian packages only)
    // may lack it, so FSLAB_REQUIRE_ALL does not demand it
    if !have("fio-plot") {
        eprintln!("skipped: needs fio-plot (pip install fio-plot; not a Debian package)");
        return;
    }
    let data = tempfile::tempdir_in("/var/tmp").unwrap();
    let logs = tempfile::tempdir_in("/var/tmp").unwrap();
    // fio-plot's 2D graph reads logs named as its bench-fio names them
    let p = "randread-iodepth-1-numjobs-1";
    let (bw, iops, lat) = (
        format!("--write_bw_log={p}"),
        format!("--write_iops_log={p}"),
        format!("--write_lat_log={p}"),
    );
    let dir = format!("--directory={}", data.path().display());
    fslab_fio(
        logs.path(),
        &[
            "--name=fp",
            "--rw=randread",
            "--size=4m",
            "--runtime=2",
            "--time_based",
            "--log_avg_msec=500",
            &bw,
            &iops,
            &lat,
            &dir,
        ],
    );
    let png = logs.path().join("graph.png");
    let out = Command::new("fio-plot")
        .args([
            "-i",
            logs.path().to_str().unwrap(),
            "-T",
            "fslab",
            "-g",
            "-r",
            "randread",
        ])
        .args([
            "-d",
            "1",
            "-n",
            "1",
            "-t",
            "bw",
            "iops",
            "lat",
            "-o",
            png.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::metadata(&png).unwrap().len() > 10_000);
}

#[test]
fn a_failed_jobs_error_is_fios_errno() {
    if !require("root", is_root()) || !require("/dev/fuse", std::path::Path::new("/dev/fuse").exists()) {
        return;
    }
    // reads of a fault filesystem fail with EIO after the first 16 (every
    // read reaches it: FOPEN_DIRECT_IO), as fio 3.33 reports: "error": 5
    // and err= 5 whether the error ended the job or, with
    // continue_on_error, was only its first
    let m = crate::faultfs::FaultMount::new();
    m.faults.direct_io(true);
    let jobs = tempfile::tempdir().unwrap();
    let job = "[bad]\ndirectory=${FSLAB_FIO_DIR}\nrw=read\nbs=4k\nsize=1m\n";
    for (name, text, continued) in [
        ("ends.fio", job.to_string(), false),
        (
            "goes-on.fio",
            format!("{job}continue_on_error=read\nignore_error=EIO\n"),
            true,
        ),
    ] {
        let f = job_file(jobs.path(), name, &text);
        let mut tools = vec![false];
        if have("fio") {
            tools.push(true);
        }
        for fio in tools {
            for format in ["json", "normal"] {
                m.faults.clear();
                m.faults.fail(crate::faultfs::Op::Read, libc::EIO, 16);
                let r = run_fio_format(fio, &f, m.dir.path(), format);
                if format == "json" {
                    let j = &r.json()["jobs"][0];
                    assert_eq!(j["error"], 5, "{} {name}: {j}", r.tool);
                    if continued {
                        assert!(j["total_err"].as_u64().unwrap() > 0, "{} {name}: {j}", r.tool);
                        assert_eq!(j["first_error"], 5, "{} {name}", r.tool);
                    }
                } else {
                    assert!(
                        r.stdout.contains("(groupid=0, jobs=1): err= 5"),
                        "{} {name}: {}",
                        r.tool,
                        r.stdout
                    );
                }
                m.faults.clear();
                for e in std::fs::read_dir(m.dir.path()).unwrap().flatten() {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
}
