//! The region options against fio 3.33 itself: the same job files run by
//! fio and by `fslab fio` do the same number of I/Os (loops, io_size,
//! number_ios, offsets, the random map, distributions, file service), and
//! fslab's zipf and pareto offsets are distributed as fio's (the hot sets
//! of fio's own offset log, `write_lat_log` with `log_offset=1`).

use crate::util::*;
use std::path::Path;

fn jobs_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio-jobs")
}

/// (job name, total I/Os) of each job of a fio JSON report, in order.
fn total_ios(json: &str) -> Vec<(String, u64)> {
    // fio may print notes before its JSON
    let at = json.find('{').unwrap_or_else(|| panic!("no JSON in: {json}"));
    let j: serde_json::Value = serde_json::from_str(&json[at..]).unwrap_or_else(|e| panic!("{e}: {json}"));
    j["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|job| {
            let n = job["read"]["total_ios"].as_u64().unwrap() + job["write"]["total_ios"].as_u64().unwrap();
            (job["jobname"].as_str().unwrap().to_string(), n)
        })
        .collect()
}

fn run_fio(job: &Path, dir: &Path) -> Vec<(String, u64)> {
    let out = std::process::Command::new("fio")
        .current_dir(dir)
        .env("FSLAB_FIO_DIR", dir)
        .arg(job)
        .arg("--output-format=json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "fio {}: {}",
        job.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    total_ios(&String::from_utf8_lossy(&out.stdout))
}

fn run_fslab(job: &Path, dir: &Path) -> Vec<(String, u64)> {
    let out = fslab()
        .env("FSLAB_FIO_DIR", dir)
        .arg("fio")
        .arg(job)
        .args(["--output-format=json", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "fslab {}: {}",
        job.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    total_ios(&String::from_utf8_lossy(&out.stdout))
}

#[test]
fn op_counts_match_fio() {
    if !require("fio", have("fio")) {
        return;
    }
    for name in [
        "60-region-loops-io-size.fio",
        "61-region-offset.fio",
        "62-region-randommap.fio",
        "63-region-distributions.fio",
        "64-region-file-service.fio",
        "65-region-target.fio",
    ] {
        let job = jobs_dir().join(name);
        let fio_dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let fio = run_fio(&job, fio_dir.path());
        let work = tempfile::tempdir_in("/var/tmp").unwrap();
        let ours = run_fslab(&job, work.path());
        assert_eq!(ours, fio, "{name}: (job, I/Os) of fslab, then fio");
        assert!(leftovers(work.path()).is_empty(), "{name}: fslab left files");
    }
}

#[test]
fn offsets_and_percentages_of_an_existing_file_match_fio() {
    if !require("fio", have("fio")) {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let data = dir.path().join("existing.bin");
    std::fs::write(&data, vec![7u8; 1 << 20]).unwrap();
    let job = dir.path().join("pct.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}\nbs=4k\nrw=read\n\
             [pct]\noffset=25%\nsize=50%\n\
             [tail]\noffset=75%\nsize=50%\n\
             [from]\noffset=256k\n\
             [halves]\noffset_increment=50%\nnumjobs=2\n",
            data.display()
        ),
    )
    .unwrap();
    let fio = run_fio(&job, dir.path());
    assert_eq!(
        std::fs::metadata(&data).unwrap().len(),
        1 << 20,
        "fio kept the file's size"
    );
    let ours = run_fslab(&job, dir.path());
    assert_eq!(ours, fio, "(job, I/Os) of fslab, then fio");
    // fio's figures for this file: a half from 25%, a quarter to the end, 768k, then 1m and 512k
    let n: Vec<u64> = fio.iter().map(|j| j.1).collect();
    assert_eq!(n, [128, 64, 192, 256, 128]);
    assert!(data.exists(), "fslab leaves a file it did not create");
}

/// Hit shares of the hottest 1/5/10/25/50% of the blocks hit at least once.
fn hot_shares(blocks: impl Iterator<Item = u64>) -> Vec<f64> {
    let mut hits = std::collections::HashMap::<u64, u64>::new();
    let mut total = 0u64;
    for b in blocks {
        *hits.entry(b).or_default() += 1;
        total += 1;
    }
    let mut h: Vec<u64> = hits.into_values().collect();
    h.sort_unstable_by(|a, b| b.cmp(a));
    [1usize, 5, 10, 25, 50]
        .iter()
        .map(|p| h[..h.len() * p / 100].iter().sum::<u64>() as f64 / total as f64)
        .collect()
}

/// fio's offsets for `dist` on a 64 MiB file of 4 KiB blocks, 64Ki reads,
/// from its latency log (columns: time, value, direction, size, offset).
fn fio_offsets(dist: &str) -> Vec<u64> {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let log = dir.path().join("z");
    let out = std::process::Command::new("fio")
        .current_dir(dir.path())
        .args([
            "--name=z",
            "--rw=randread",
            "--bs=4k",
            "--size=64m",
            "--io_size=256m",
            "--ioengine=psync",
            "--disable_slat=1",
            "--log_offset=1",
            "--output-format=json",
        ])
        .arg(format!("--directory={}", dir.path().display()))
        .arg(format!("--random_distribution={dist}"))
        .arg(format!("--write_lat_log={}", log.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(dir.path().join("z_clat.1.log")).unwrap();
    text.lines()
        .map(|l| l.split(',').nth(4).unwrap().trim().parse::<u64>().unwrap() / 4096)
        .collect()
}

/// fslab's offsets for the same job: its io workload, as `fslab fio` builds it.
fn fslab_offsets(dist: fslab::plan::io::region::Distribution, n: usize) -> Vec<u64> {
    use fslab::engine::Op;
    let mut a = fslab::cli::IoArgs {
        rw: "randread".into(),
        bs: "4k".into(),
        jobs: "1".into(),
        engine: "null".into(),
        size: Some("64m".into()),
        ..Default::default()
    };
    a.common.target = ".".into();
    a.common.quiet = true;
    let mut plan = fslab::plan::IoPlan::from_args(&a).unwrap();
    plan.region.fio = true;
    plan.region.io_size = Some(256 << 20);
    plan.region.distribution = dist;
    let mut w = fslab::workload::io::IoWorkload::new(&plan, 0, vec![], 64 << 20, false, 1);
    let mut offs = Vec::new();
    while let Some(op) = fslab::workload::Workload::next_op(&mut w, 0) {
        if let Op::Read { offset, .. } = op.op {
            offs.push(offset / 4096);
        }
    }
    assert_eq!(offs.len(), n, "fslab's I/Os");
    offs
}

#[test]
fn zipf_and_pareto_offsets_distributed_as_fio() {
    if !require("fio", have("fio")) {
        return;
    }
    use fslab::plan::io::region::Distribution;
    for (spec, dist) in [
        (
            "zipf:1.2",
            Distribution::Zipf {
                theta: 1.2,
                center: None,
            },
        ),
        (
            "zipf:0.8",
            Distribution::Zipf {
                theta: 0.8,
                center: None,
            },
        ),
        ("pareto:0.2", Distribution::Pareto { h: 0.2, center: None }),
    ] {
        let fio = fio_offsets(spec);
        assert_eq!(fio.len(), 65536, "{spec}: fio's I/Os");
        let ours = fslab_offsets(dist, fio.len());
        let (f, o) = (hot_shares(fio.into_iter()), hot_shares(ours.into_iter()));
        eprintln!("{spec}: hottest 1/5/10/25/50% of the blocks hit: fio {f:.4?}, fslab {o:.4?}");
        for (i, (a, b)) in o.iter().zip(&f).enumerate() {
            assert!((a - b).abs() < 0.02, "{spec}: share {i}: fslab {a:.4}, fio {b:.4}");
        }
    }
}

/// Bytes the block device `dev` (/dev/loopN) has read so far.
fn device_read_bytes(dev: &str) -> u64 {
    let name = dev.trim_start_matches("/dev/");
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    // field 3: sectors read (512 bytes each)
    stat.split_whitespace().nth(2).unwrap().parse::<u64>().unwrap() * 512
}

#[test]
fn a_timed_buffered_reader_reads_the_device_on_every_pass_as_fio_does() {
    if !require_root_with(&["losetup", "mkfs.ext4"]) {
        return;
    }
    // A 4 MiB file read at random in 4 KiB blocks for a second: many passes.
    // fio drops the file's cached pages before the job and at each new pass
    // (invalidate=1, loop_cache_invalidate) and advises RANDOM
    // (fadvise_hint=1), so every read is a miss of exactly its block: the
    // device reads what the job reads. Without the per-pass drop the later
    // passes come from the page cache; without the advice the kernel reads
    // ahead of misses whose neighbours are cached.
    let fs = Scratch::new("ext4", 64);
    let tmp = tempfile::tempdir().unwrap();
    let job = job_file(
        tmp.path(),
        "passes.fio",
        &format!(
            "[passes]\ndirectory={}\nioengine=psync\nrw=randread\nbs=4k\nsize=4m\ntime_based\nruntime=1\n",
            fs.path().display()
        ),
    );
    let mut tools = vec![false];
    if require("fio", have("fio")) {
        tools.push(true);
    }
    for fio in tools {
        let tool = if fio { "fio" } else { "fslab" };
        let before = device_read_bytes(&fs.lo.dev);
        let r = run_fio_format(fio, &job, tmp.path(), "json");
        let after = device_read_bytes(&fs.lo.dev);
        assert_eq!(r.code, 0, "{tool}: {}", r.stderr);
        let read = r.json()["jobs"][0]["read"]["io_bytes"].as_f64().unwrap();
        let dev = (after - before) as f64;
        eprintln!("{tool}: the job read {read} bytes, the device {dev}");
        assert!(read > 3.0 * (4 << 20) as f64, "{tool}: {read} bytes is under 3 passes");
        assert!(
            dev / read > 0.9 && dev / read < 1.3,
            "{tool}: the device read {dev} bytes for {read}"
        );
    }
}
