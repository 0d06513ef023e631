//! fio's buffer contents and verification, checked against fio itself:
//! a file written with buffer_compress_percentage=50 compresses as fio's
//! does; the default (scrambled) contents do not compress; a corrupted
//! byte is caught by the read-back and verify_fatal stops the job.

use crate::util::*;
use std::path::Path;
use std::process::Command;

/// Bytes of `gzip -1` (or `zstd -1`) of `path`, as a share of its size.
fn ratio(tool: &str, path: &Path) -> f64 {
    let out = Command::new(tool).args(["-1", "-c"]).arg(path).output().unwrap();
    assert!(out.status.success(), "{tool} failed");
    out.stdout.len() as f64 / std::fs::metadata(path).unwrap().len() as f64
}

/// Runs a job file `text` with fslab; the file it names exists already.
fn fslab_job(dir: &Path, name: &str, text: &str) -> std::process::Output {
    let job = dir.join(name);
    std::fs::write(&job, text).unwrap();
    fslab()
        .arg("fio")
        .arg(&job)
        .args(["--output-format=json", "--force-overwrite"])
        .output()
        .unwrap()
}

fn job_text(file: &Path, extra: &str) -> String {
    format!("[w]\nfilename={}\nrw=write\nbs=4k\nsize=16m\n{extra}\n", file.display())
}

#[test]
fn compression_as_fio_and_default_incompressible() {
    if !require("fio", have("fio")) || !require("gzip", have("gzip")) {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let (ours, theirs) = (dir.path().join("fslab.dat"), dir.path().join("fio.dat"));
    for (extra, pct) in [("buffer_compress_percentage=50", Some(0.5)), ("", None)] {
        std::fs::File::create(&ours).unwrap().set_len(16 << 20).unwrap();
        let out = fslab_job(dir.path(), "c.fio", &job_text(&ours, extra));
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(std::fs::metadata(&ours).unwrap().len(), 16 << 20);
        let mut fio = Command::new("fio");
        fio.args(["--name=w", "--rw=write", "--bs=4k", "--size=16m", "--output=/dev/null"])
            .arg(format!("--filename={}", theirs.display()));
        if !extra.is_empty() {
            fio.arg(format!("--{extra}"));
        }
        assert!(fio.status().unwrap().success());
        let (g_ours, g_fio) = (ratio("gzip", &ours), ratio("gzip", &theirs));
        match pct {
            Some(p) => {
                // both about half: random halves of each chunk, zeros in the rest
                assert!(
                    (g_ours - g_fio).abs() < 0.03,
                    "gzip -1: fslab {g_ours:.3}, fio {g_fio:.3}"
                );
                assert!((g_ours - p).abs() < 0.05, "gzip -1: fslab {g_ours:.3}");
                if have("zstd") {
                    let (z_ours, z_fio) = (ratio("zstd", &ours), ratio("zstd", &theirs));
                    assert!(
                        (z_ours - z_fio).abs() < 0.03,
                        "zstd -1: fslab {z_ours:.3}, fio {z_fio:.3}"
                    );
                }
            }
            None => {
                // scrambled by default: gzip takes off less than 5%
                assert!(g_ours > 0.95, "gzip -1 shrinks fslab's default data to {g_ours:.3}");
                // no two 512-byte chunks alike: nothing for a device to deduplicate
                let data = std::fs::read(&ours).unwrap();
                let chunks: std::collections::HashSet<&[u8]> = data.chunks(512).collect();
                assert_eq!(chunks.len(), data.len() / 512);
            }
        }
    }
}

#[test]
fn a_corrupted_byte_is_caught_and_verify_fatal_stops_the_job() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = dir.path().join("v.dat");
    std::fs::File::create(&file).unwrap().set_len(16 << 20).unwrap();
    // written and read back at once: all good
    let out = fslab_job(dir.path(), "w.fio", &job_text(&file, "verify=md5"));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["jobs"][0]["read"]["total_ios"], 4096, "every block read back");
    assert_eq!(j["jobs"][0]["error"], 0);
    // one byte changed behind fslab's back, in block 100's payload
    let mut data = std::fs::read(&file).unwrap();
    data[100 * 4096 + 2000] ^= 0x40;
    std::fs::write(&file, &data).unwrap();
    // read back (fio's verify_only): the mismatch is reported (and counted
    // as a failed read), and with verify_fatal the job stops there
    for (fatal, reads) in [(0, 4095), (1, 100)] {
        let out = fslab_job(
            dir.path(),
            "r.fio",
            &job_text(&file, &format!("verify=md5\nverify_only=1\nverify_fatal={fatal}")),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "a failed check fails the run: {stderr}");
        assert!(
            stderr.contains("offset 409600: MD5"),
            "verify_fatal={fatal}: the mismatch named: {stderr}"
        );
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let r = j["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
        assert_eq!(r, reads, "verify_fatal={fatal}: reads");
        if fatal == 1 {
            assert!(stderr.contains("verify_fatal"), "{stderr}");
        }
    }
}
