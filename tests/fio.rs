//! `fslab fio` against the job files in tests/fio-jobs: each says in its
//! trailing comments what must happen (`; expect: ok` with the number of
//! reported jobs, or `; expect: error: TEXT`), extra arguments (`; args:`)
//! and text the JSON output (or the error) must contain (`; has:`). The files
//! follow the constructs of fio's documentation, with small sizes.

use crate::util::*;
use std::path::Path;

struct Expect {
    ok: bool,
    error: String,
    jobs: usize,
    args: Vec<String>,
    has: Vec<String>,
}

fn expectations(text: &str) -> Expect {
    let mut e = Expect {
        ok: false,
        error: String::new(),
        jobs: 0,
        args: vec![],
        has: vec![],
    };
    for l in text.lines() {
        if let Some(v) = l.strip_prefix("; expect: ") {
            match v.strip_prefix("error: ") {
                Some(err) => e.error = err.trim().to_string(),
                None => e.ok = v.trim() == "ok",
            }
        } else if let Some(v) = l.strip_prefix("; jobs: ") {
            e.jobs = v.trim().parse().unwrap();
        } else if let Some(v) = l.strip_prefix("; args: ") {
            e.args = v.split_whitespace().map(String::from).collect();
        } else if let Some(v) = l.strip_prefix("; has: ") {
            e.has.push(v.trim().to_string());
        }
    }
    e
}

#[test]
fn job_files_run_or_fail_as_expected() {
    let jobs_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio-jobs");
    let mut files: Vec<_> = std::fs::read_dir(&jobs_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "fio"))
        .collect();
    files.sort();
    assert!(files.len() >= 25, "at least 25 job files, found {}", files.len());
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    for f in &files {
        let name = f.file_name().unwrap().to_str().unwrap();
        let e = expectations(&std::fs::read_to_string(f).unwrap());
        assert!(e.ok || !e.error.is_empty(), "{name}: no expectation");
        let out = fslab()
            .current_dir(&jobs_dir)
            .env("FSLAB_FIO_DIR", work.path())
            .args(["fio", name, "--output-format=json", "--quiet"])
            .args(&e.args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if e.ok {
            assert_eq!(out.status.code(), Some(0), "{name}: {stderr}");
            let j: serde_json::Value =
                serde_json::from_str(&stdout).unwrap_or_else(|err| panic!("{name}: not JSON ({err}): {stdout}"));
            let jobs = j["jobs"].as_array().unwrap();
            assert_eq!(jobs.len(), e.jobs, "{name}: reported jobs");
            for job in jobs {
                let ios = job["read"]["total_ios"].as_u64().unwrap() + job["write"]["total_ios"].as_u64().unwrap();
                assert!(ios > 0, "{name}: job {} did no I/O", job["jobname"]);
            }
            for h in &e.has {
                assert!(stdout.contains(h.as_str()), "{name}: '{h}' not in the JSON");
            }
        } else {
            assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{name}: one line: {stderr}");
            assert!(stderr.contains(&e.error), "{name}: wanted '{}' in: {stderr}", e.error);
            for h in &e.has {
                assert!(stderr.contains(h.as_str()), "{name}: '{h}' not in: {stderr}");
            }
            assert!(stdout.is_empty(), "{name}: nothing on stdout");
        }
        assert!(
            leftovers(work.path()).is_empty(),
            "{name} left {:?}",
            leftovers(work.path())
        );
    }
}

#[test]
fn command_line_jobs_and_normal_output() {
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let out = fslab()
        .arg("fio")
        .arg(format!("--directory={}", work.path().display()))
        .args([
            "--size=4m",
            "--name=rr",
            "--rw=randread",
            "--bs=4k",
            "--runtime=200ms",
            "--time_based",
        ])
        .args(["--name=sw", "--rw=write", "--bs=64k", "--stonewall"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    for want in [
        "rr: (groupid=0, jobs=1)",
        "  read: IOPS=",
        "clat percentiles (",
        "sw: (groupid=1, jobs=1)",
        "  write: IOPS=",
        "Run status group 1 (all jobs):",
        "  WRITE: bw=",
    ] {
        assert!(text.contains(want), "'{want}' missing from:\n{text}");
    }
    assert!(leftovers(work.path()).is_empty());
    // fio's flags after the job file, and --output FILE
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("j.fio");
    std::fs::write(
        &job,
        format!("[j]\ndirectory={}\nrw=read\nsize=4m\n", work.path().display()),
    )
    .unwrap();
    let json = dir.path().join("out.json");
    fslab()
        .arg("fio")
        .arg(&job)
        .arg("--output-format=json")
        .arg(format!("--output={}", json.display()))
        .assert()
        .success()
        .stdout("");
    let j = read_json(&json);
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 4 << 20);
    expect_usage(
        &["fio", "--output-format=xml", job.to_str().unwrap()],
        "invalid value 'xml' for '--output-format <FORMAT>'",
    );
    expect_usage(&["fio"], "give a job file or a command-line job");
}

/// Jobs that differ in engine and iodepth run side by side in one segment,
/// each with its own depth: the iodepth-1 job never has a second operation
/// in flight, the iodepth-16 one does (O_DIRECT reads through io_uring
/// complete asynchronously).
#[test]
fn jobs_that_differ_run_side_by_side() {
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("j.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\ndirectory={}\nsize=8m\nrw=randread\nbs=4k\ndirect=1\ntime_based\nruntime=500ms\n\
             [qd1]\nioengine=psync\n[qd16]\nioengine=io_uring\niodepth=16\n",
            work.path().display()
        ),
    )
    .unwrap();
    let out = fslab()
        .arg("fio")
        .arg(&job)
        .args(["--output-format=json", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let jobs = j["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    let depth = |name: &str| {
        let job = jobs.iter().find(|x| x["jobname"] == name).unwrap();
        assert!(job["read"]["total_ios"].as_u64().unwrap() > 0, "{name} did no I/O");
        assert_eq!(job["groupid"], 0, "{name}: one group");
        job["iodepth_level"].clone()
    };
    let d1 = depth("qd1");
    assert_eq!(d1["1"].as_f64(), Some(100.0), "qd1: {d1}");
    let d16 = depth("qd16");
    let deeper: f64 = ["2", "4", "8", "16"].iter().filter_map(|k| d16[*k].as_f64()).sum();
    assert!(deeper > 0.0, "qd16 never had two reads in flight: {d16}");
    assert!(leftovers(work.path()).is_empty());
}

/// numjobs clones naming one `filename=` share that one file, as fio's do:
/// on a 3 MiB tmpfs the two clones of a 2 MiB job fit (one file), where a
/// file for each would not. Two jobs naming one new file are told that fio
/// would share it between them and fslab does not.
#[test]
fn clones_of_one_filename_share_one_file() {
    if !require_root_with(&["mount"]) {
        return;
    }
    let m = Mount::new("tmpfs", "tmpfs", "size=3m");
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("j.fio");
    let text = format!(
        "[global]\ndirectory={}\nsize=2m\nbs=64k\nfilename=one.dat\n[clones]\nrw=read\nnumjobs=2\n",
        m.path().display()
    );
    std::fs::write(&job, &text).unwrap();
    let out = fslab()
        .arg("fio")
        .arg(&job)
        .args(["--output-format=json", "--quiet"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("shared by the job's clones"), "{stderr}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for c in j["jobs"].as_array().unwrap() {
        // each clone reads the whole shared file from its start, as in fio
        assert_eq!(c["read"]["io_bytes"], 2 << 20, "{}", c["jobname"]);
    }
    std::fs::write(&job, format!("{text}[other]\nrw=read\n")).unwrap();
    let out = fslab()
        .arg("fio")
        .arg(&job)
        .args(["--output-format=json", "--quiet", "--size=512k"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("jobs 'clones' and 'other' share this file in fio"),
        "{stderr}"
    );
    assert!(leftovers(m.path()).is_empty(), "{:?}", leftovers(m.path()));
}

/// With group_reporting, fio's `job_runtime` is the sum of the clones'
/// own times (fio 3.33: 4003 ms for 4 clones of 1 s), while the
/// direction's `runtime` is the longest clone's.
#[test]
fn group_reporting_sums_the_clones_job_runtime() {
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let jobs_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio-jobs");
    let out = fslab()
        .current_dir(&jobs_dir)
        .env("FSLAB_FIO_DIR", work.path())
        .args(["fio", "14-group-reporting.fio", "--output-format=json", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let job = &j["jobs"][0];
    let (sum, longest) = (
        job["job_runtime"].as_u64().unwrap(),
        job["read"]["runtime"].as_u64().unwrap(),
    );
    // each clone's time is at most the longest's; all four ran the 300 ms
    assert!(sum <= 4 * longest + 4, "{sum} vs {longest}");
    assert!(sum >= 3 * longest, "{sum} vs {longest}: not summed over the clones");
}

/// fio's harmless command-line flags, as CI wrappers pass them: --eta,
/// --eta-newline, --output=/dev/null run; --parse-only checks and runs
/// nothing; --showcmd prints what fio prints; --readonly refuses a job
/// that writes, in one line.
#[test]
fn fios_harmless_flags_are_accepted() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("j.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\ndirectory={}\nsize=1m\nbs=4k\n[r]\nrw=read\n[global]\nbs=8k\n[w]\nrw=randwrite\n",
            work.path().display()
        ),
    )
    .unwrap();
    let run = |args: &[&str]| fslab().arg("fio").arg(&job).args(args).output().unwrap();
    let out = run(&["--eta=never", "--eta-newline=2", "--output=/dev/null"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "--output=/dev/null: nothing on stdout");
    let out = run(&["--parse-only"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    let ours = run(&["--showcmd"]);
    let fio = std::process::Command::new("fio")
        .arg("--showcmd")
        .arg(&job)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&fio.stdout)
    );
    let out = run(&["--readonly"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("[w] --readonly: this job writes (rw=randwrite)"),
        "{stderr}"
    );
    let out = run(&["--eta=sometimes"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(leftovers(work.path()).is_empty(), "{:?}", leftovers(work.path()));
}

/// With the random map on (fio's default), a bssplit block is trimmed to
/// the free run it lands in (fio's `mark_random_map`): the map's last free
/// blocks are read in pieces, so there are far more I/Os, of many more
/// sizes, than the split's own (OpenZFS's random_readwrite ran at 0.11x
/// fio's IOPS while fslab read whole blocks over used ones). fslab and fio
/// on one job: the counts agree within 10% (fio's own spread over seeds was
/// 6% here, whole blocks gave less than half), both read the file's bytes
/// exactly once, and both have sizes beyond the split's eight.
#[test]
fn bssplit_blocks_are_trimmed_by_the_random_map_as_fios() {
    if !require("fio", have("fio")) {
        return;
    }
    let run = |tool: &str| {
        let work = tempfile::tempdir_in("/var/tmp").unwrap();
        let job = work.path().join("j.fio");
        std::fs::write(
            &job,
            format!(
                "[global]\ndirectory={d}\nsize=32m\n[split]\nrw=randread\n\
                 bssplit=512/10:1k/10:2k/10:4k/20:8k/20:16k/10:32k/10:64k/10\n\
                 write_lat_log={d}/l\nlog_avg_msec=0\n",
                d = work.path().display()
            ),
        )
        .unwrap();
        let out = crate::util::fio_or_fslab(tool, true)
            .arg(&job)
            .arg("--output-format=json")
            .output()
            .unwrap();
        assert!(out.status.success(), "{tool}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        let j: serde_json::Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
        let log = std::fs::read_to_string(work.path().join("l_clat.1.log")).unwrap();
        let sizes: std::collections::BTreeSet<u64> = log
            .lines()
            .filter_map(|l| l.split(',').nth(3)?.trim().parse().ok())
            .collect();
        (
            j["jobs"][0]["read"]["total_ios"].as_u64().unwrap(),
            j["jobs"][0]["read"]["io_bytes"].as_u64().unwrap(),
            sizes.len(),
        )
    };
    let (fio_ios, fio_bytes, fio_sizes) = run("fio");
    let (ios, bytes, sizes) = run("fslab");
    assert_eq!(fio_bytes, 32 << 20, "fio reads the file once");
    assert_eq!(bytes, 32 << 20, "fslab reads the file once");
    let ratio = ios as f64 / fio_ios as f64;
    assert!((0.9..=1.1).contains(&ratio), "fslab {ios} I/Os, fio {fio_ios}");
    assert!(fio_sizes > 8 && sizes > 8, "sizes: fslab {sizes}, fio {fio_sizes}");
}

/// A job without size= over a file already in its directory under fio's
/// name for it (`JOB.0.0`, as OpenZFS's suite lays files out in one job
/// and reads them in the next) reads that file at its size, as fio does,
/// and leaves it as it was; a job that would write it is refused without
/// --force-overwrite (it is not fslab's), and a symlink planted under that
/// name is refused whatever the consent.
#[test]
fn a_sizeless_job_reads_the_file_already_there() {
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let data: Vec<u8> = (0..3u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let file = work.path().join("seq.0.0");
    std::fs::write(&file, &data).unwrap();
    let job = |rw: &str, extra: &[&str]| {
        let p = work.path().join(format!("{rw}.fio"));
        std::fs::write(
            &p,
            format!(
                "[global]\ndirectory={}\nbs=128k\n[seq]\nrw={rw}\n",
                work.path().display()
            ),
        )
        .unwrap();
        fslab()
            .arg("fio")
            .arg(&p)
            .args(["--output-format=json", "--quiet"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = job("read", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 3 << 20, "the existing file, whole");
    assert_eq!(j["jobs"][0]["read"]["total_ios"], 24);
    let out = job("write", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&file).unwrap(), data, "the file is as it was");
    // with consent it is written, as an existing filename= is
    let out = job("write", &["--force-overwrite"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_ne!(std::fs::read(&file).unwrap(), data, "written with --force-overwrite");
    // a symlink planted under fio's name is not followed, even with consent
    // to overwrite: the file it points at is not in the job's directory
    let elsewhere = tempfile::tempdir_in("/var/tmp").unwrap();
    let victim = elsewhere.path().join("victim");
    std::fs::write(&victim, &data).unwrap();
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&victim, &file).unwrap();
    for (rw, extra) in [("read", &[][..]), ("write", &["--force-overwrite"][..])] {
        let out = job(rw, extra);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{rw}: {stderr}");
        assert!(
            stderr.contains("is not a regular file in the job's directory"),
            "{stderr}"
        );
    }
    assert_eq!(
        std::fs::read(&victim).unwrap(),
        data,
        "the symlink's target is as it was"
    );
}

/// blockalign puts every random offset on its boundary, in fslab as in fio
/// (checked with log_offset's column of each tool's per-I/O log).
#[test]
fn blockalign_aligns_random_offsets_as_fios() {
    if !require("fio", have("fio")) {
        return;
    }
    for tool in ["fio", "fslab"] {
        let work = tempfile::tempdir_in("/var/tmp").unwrap();
        let job = work.path().join("j.fio");
        std::fs::write(
            &job,
            format!(
                "[a]\ndirectory={d}\nsize=4m\nbs=4k\nrw=randread\nblockalign=64k\nnorandommap\n\
                 write_lat_log={d}/l\nlog_avg_msec=0\nlog_offset=1\n",
                d = work.path().display()
            ),
        )
        .unwrap();
        let out = crate::util::fio_or_fslab(tool, true)
            .arg(&job)
            .arg("--output-format=terse")
            .output()
            .unwrap();
        assert!(out.status.success(), "{tool}: {}", String::from_utf8_lossy(&out.stderr));
        let log = std::fs::read_to_string(work.path().join("l_clat.1.log")).unwrap();
        let offsets: Vec<u64> = log
            .lines()
            .map(|l| l.split(',').nth(4).unwrap().trim().parse().unwrap())
            .collect();
        assert_eq!(offsets.len(), 1024, "{tool}: 4 MiB of 4 KiB reads");
        assert!(
            offsets.iter().all(|o| o % 65536 == 0),
            "{tool}: an offset off the 64 KiB boundary"
        );
    }
}
