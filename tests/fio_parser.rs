//! fslab fio's parser and metadata engines against fio 3.33 itself: the same
//! job file, run by both, gives the same operation counts; and fio's
//! command-line forms (`--name=global`, `--directory=` as a default).

use crate::util::*;
use std::path::Path;
use std::process::Command;

/// A job's read and write figures from fio's JSON: (total_ios, io_bytes, clat N) each.
fn counts(j: &serde_json::Value) -> Vec<[u64; 6]> {
    j["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|job| {
            let r = &job["read"];
            let w = &job["write"];
            [
                r["total_ios"].as_u64().unwrap(),
                r["io_bytes"].as_u64().unwrap(),
                r["clat_ns"]["N"].as_u64().unwrap(),
                w["total_ios"].as_u64().unwrap(),
                w["io_bytes"].as_u64().unwrap(),
                w["clat_ns"]["N"].as_u64().unwrap(),
            ]
        })
        .collect()
}

fn run_fio(job: &Path) -> serde_json::Value {
    let out = Command::new("fio")
        .arg(job)
        .arg("--output-format=json")
        .output()
        .unwrap();
    assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn run_fslab(job: &Path) -> serde_json::Value {
    let out = fslab()
        .arg("fio")
        .arg(job)
        .args(["--output-format=json", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "fslab: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn metadata_engines_count_as_fio_does() {
    if !require("fio", have("fio")) {
        return;
    }
    for (name, body) in [
        ("filecreate", "ioengine=filecreate\nnrfiles=40\n"),
        ("filecreate-size", "ioengine=filecreate\nnrfiles=10\nsize=400k\n"),
        ("filecreate-write", "ioengine=filecreate\nnrfiles=25\nrw=write\n"),
        ("filestat", "ioengine=filestat\nnrfiles=10\nfilesize=8k\nbs=4k\n"),
        (
            "filestat-statx",
            "ioengine=filestat\nstat_type=statx\nnrfiles=12\nfilesize=4k\n",
        ),
        (
            "filedelete",
            "ioengine=filedelete\nnrfiles=16\nfilesize=4k\nnumjobs=2\n",
        ),
    ] {
        let fio_dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let fslab_dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let jobs = tempfile::tempdir().unwrap();
        let write = |dir: &Path| {
            let p = jobs
                .path()
                .join(format!("{name}-{}.fio", dir.file_name().unwrap().to_string_lossy()));
            std::fs::write(&p, format!("[{name}]\ndirectory={}\n{body}", dir.display())).unwrap();
            p
        };
        let theirs = counts(&run_fio(&write(fio_dir.path())));
        let ours = counts(&run_fslab(&write(fslab_dir.path())));
        assert_eq!(
            ours, theirs,
            "{name}: fslab vs fio [read ios, bytes, clat N, write ios, bytes, clat N]"
        );
        assert!(theirs.iter().all(|c| c[2] + c[5] > 0), "{name}: fio timed nothing");
        assert!(
            leftovers(fslab_dir.path()).is_empty(),
            "{name}: fslab left {:?}",
            leftovers(fslab_dir.path())
        );
    }
}

#[test]
fn filecreate_on_the_command_line_counts_as_fio_does() {
    if !require("fio", have("fio")) {
        return;
    }
    // --size is also fslab fio's own flag: the count must follow it
    let run = |fslab_run: bool| {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let args = [
            "--name=fc".to_string(),
            "--ioengine=filecreate".into(),
            format!("--directory={}", dir.path().display()),
            "--nrfiles=50".into(),
            "--size=400k".into(),
            "--output-format=json".into(),
        ];
        let out = if fslab_run {
            fslab().arg("fio").args(&args).arg("--quiet").output().unwrap()
        } else {
            Command::new("fio").args(&args).output().unwrap()
        };
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        counts(&serde_json::from_slice(&out.stdout).unwrap())
    };
    let theirs = run(false);
    assert_eq!(theirs, vec![[100, 409600, 50, 0, 0, 0]], "fio 3.33's figures");
    assert_eq!(run(true), theirs);
}

#[test]
fn command_line_globals_are_the_job_files_defaults() {
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let jobs = tempfile::tempdir().unwrap();
    // no directory in the file: the command line's --directory (fio's default) is where it runs
    let job = jobs.path().join("j.fio");
    std::fs::write(&job, "[a]\nsize=1m\n[b]\nsize=1m\nrw=read\n").unwrap();
    let out = fslab()
        .arg("fio")
        .arg(&job)
        .arg(format!("--directory={}", work.path().display()))
        .args(["--name=global", "--rw=write", "--output-format=json", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["jobs"].as_array().unwrap().len(), 2, "--name=global is no job");
    assert_eq!(j["jobs"][0]["write"]["io_bytes"], 1 << 20, "a's rw from --name=global");
    assert_eq!(j["jobs"][1]["read"]["io_bytes"], 1 << 20, "b's own rw= wins");
    assert!(leftovers(work.path()).is_empty());
}

#[test]
fn inline_comments_as_fio_reads_them() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let jobs = tempfile::tempdir().unwrap();
    let job = jobs.path().join("c.fio");
    std::fs::write(
        &job,
        format!(
            "[c] ; header\ndirectory={} ; dir\nioengine=null\nsize=1m;x\nbs=8k# y\nrw=write ; z\n",
            work.path().display()
        ),
    )
    .unwrap();
    let theirs = counts(&run_fio(&job));
    let ours = counts(&run_fslab(&job));
    assert_eq!(ours[0][3], theirs[0][3], "write ios");
    assert_eq!(ours[0][4], theirs[0][4], "write bytes");
}
