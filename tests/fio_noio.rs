//! fio's engines that move no data through a file's bytes (issue 33: fio
//! 3.33's examples ftruncate.fio, cpuio.fio, exec.fio), run by fio and by
//! `fslab fio` on the same job and compared on what they did: the jobs'
//! names, groups and operations, a truncated file's size, the CPU burnt,
//! a program's effect and its redirected output. Bad inputs are refused in
//! one line, exit 2, nothing created.

use crate::util::*;
use std::path::Path;

/// (name, group, reads, writes, bytes written) of each job of `tool`'s JSON.
fn jobs(tool: &str, j: &serde_json::Value) -> Vec<(String, u64, u64, u64, u64)> {
    j["jobs"]
        .as_array()
        .unwrap_or_else(|| panic!("{tool}: no jobs"))
        .iter()
        .map(|x| {
            (
                x["jobname"].as_str().unwrap().to_string(),
                x["groupid"].as_u64().unwrap(),
                x["read"]["total_ios"].as_u64().unwrap(),
                x["write"]["total_ios"].as_u64().unwrap(),
                x["write"]["io_bytes"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// `tool` on `job`, which must succeed; its JSON.
fn ran(fio: bool, job: &Path, dir: &Path, extra: &[&str]) -> serde_json::Value {
    let mut c = fio_or_fslab(if fio { "fio" } else { "fslab" }, true);
    let out = c
        .arg(job)
        .arg("--output-format=json")
        .args(if fio { &[][..] } else { extra })
        .env("FSLAB_FIO_DIR", dir)
        .current_dir(dir)
        .output()
        .unwrap();
    let tool = if fio { "fio" } else { "fslab" };
    assert!(out.status.success(), "{tool}: {}", String::from_utf8_lossy(&out.stderr));
    let s = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(s.trim_start_matches(|c| c != '{')).unwrap_or_else(|e| panic!("{tool}: {e}: {s}"))
}

/// ftruncate.fio's two jobs, untimed over 1 MiB: a sequential write is
/// 256 truncates growing the file, a random one (norandommap) 256 to random
/// sizes; both tools count each as a 4 KiB write in their own group, and
/// direct=1 opens the file O_DIRECT as fio does (a directory under /var/tmp).
#[test]
fn ftruncate_counts_are_fios() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let job = job_file(
        work.path(),
        "ft.fio",
        "[global]\nioengine=ftruncate\ndirectory=${FSLAB_FIO_DIR}\nsize=1m\nstonewall\nfilename=truncate\n\
         direct=1\nbs=4k\n[grow-truncate]\nrw=write\n[rand-truncate]\nrw=randwrite\nnorandommap\n",
    );
    let fio = jobs("fio", &ran(true, &job, work.path(), &[]));
    std::fs::remove_file(work.path().join("truncate")).unwrap();
    let ours = jobs("fslab", &ran(false, &job, work.path(), &[]));
    assert_eq!(fio, ours);
    assert_eq!(fio[0], ("grow-truncate".into(), 0, 0, 256, 1 << 20));
}

/// The file a write-only ftruncate job leaves: fio truncates an existing
/// 1 MiB file to each write's offset, the last at 1 MiB - 4 KiB; fslab
/// (with --force-overwrite, its consent to work in a file it did not
/// make) leaves the same size; a random job leaves a size on a 4 KiB step.
#[test]
fn ftruncate_leaves_fios_file_size() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = work.path().join("t");
    for rw in ["write", "randwrite\nnorandommap"] {
        let job = job_file(
            work.path(),
            "ft.fio",
            &format!(
                "[j]\nioengine=ftruncate\nfilename={}\nsize=1m\nbs=4k\nrw={rw}\n",
                file.display()
            ),
        );
        let mut sizes = Vec::new();
        for fio in [true, false] {
            std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
            ran(fio, &job, work.path(), &["--force-overwrite"]);
            sizes.push(std::fs::metadata(&file).unwrap().len());
        }
        if rw == "write" {
            assert_eq!(sizes, [(1 << 20) - 4096; 2], "{rw}");
        } else {
            assert!(sizes.iter().all(|s| s % 4096 == 0 && *s < 1 << 20), "{rw}: {sizes:?}");
        }
    }
}

/// ftruncate.fio as written (time_based, runtime cut to 1 s): both tools
/// run its two jobs in two groups and count writes.
#[test]
fn ftruncate_example_runs() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio-jobs/noio/ftruncate.fio"))
        .unwrap();
    let job = job_file(work.path(), "ftruncate.fio", &text);
    let fio = jobs("fio", &ran(true, &job, work.path(), &[]));
    // fio leaves the file it laid out; fslab makes its own
    std::fs::remove_file(work.path().join("truncate")).unwrap();
    let ours = jobs("fslab", &ran(false, &job, work.path(), &[]));
    let shape =
        |v: &[(String, u64, u64, u64, u64)]| v.iter().map(|x| (x.0.clone(), x.1, x.2, x.3 > 0)).collect::<Vec<_>>();
    assert_eq!(shape(&fio), shape(&ours));
}

/// What fio's ftruncate engine fails with EINVAL (every operation but a
/// write) is refused at the ioengine's line, before anything is made.
#[test]
fn ftruncate_refusals() {
    let work = tempfile::tempdir().unwrap();
    let file = |name: &str, extra: &str| {
        job_file(
            work.path(),
            name,
            &format!(
                "[j]\nioengine=ftruncate\ndirectory={}\nsize=64k\n{extra}\n",
                work.path().display()
            ),
        )
        .display()
        .to_string()
    };
    let cases = [
        (file("r.fio", "rw=read"), "r.fio:2: [j] ioengine=ftruncate with rw=read"),
        (
            file("m.fio", "rw=randrw"),
            "m.fio:2: [j] ioengine=ftruncate with rw=randrw",
        ),
        (
            file("s.fio", "rw=write\nfsync=4"),
            "s.fio:2: [j] ioengine=ftruncate with fsync",
        ),
        (
            file("v.fio", "rw=write\nverify=md5"),
            "v.fio:2: [j] ioengine=ftruncate with verify",
        ),
    ];
    let rows: Vec<Refusal> = cases.iter().map(|(f, want)| refusal(&["fio", f], *want)).collect();
    expect_refusals(&rows, &[&work.path().join("j.0.0")]);
    let left: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), cases.len(), "only the job files: {left:?}");
}
