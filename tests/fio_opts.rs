//! fio 3.33's option families that its own examples use, against fio
//! itself: the same small job run by fio and by `fslab fio`, compared on
//! what the job leaves behind or reports (not on speed):
//! - zonemode=strided (examples/disk-zone-profile.fio): which blocks of a
//!   zeroed file a zoned write job writes, and a zoned read's I/O count.
//!
//! Bad values of these options are refused in one line (exit 2) before
//! anything is created.

use crate::util::*;
use std::path::Path;

/// Which `bs`-byte blocks of `path` hold a non-zero byte.
fn written_blocks(path: &Path, bs: usize) -> Vec<bool> {
    let data = std::fs::read(path).unwrap();
    data.chunks(bs).map(|b| b.iter().any(|&x| x != 0)).collect()
}

/// A file of `len` zero bytes at `path` (made again: sparse, nothing written).
fn zeroed(path: &Path, len: u64) {
    let f = std::fs::File::create(path).unwrap();
    f.set_len(len).unwrap();
}

/// Runs `tool` on `job` (fslab with --force-overwrite: the job's file is
/// the test's); its JSON output, after checking it exited 0.
fn run(tool: &str, job: &Path, dir: &Path) -> serde_json::Value {
    let mut c = fio_or_fslab(tool, true);
    if tool == "fslab" {
        c.arg("--force-overwrite");
    }
    let out = c
        .current_dir(dir)
        .arg(job)
        .arg("--output-format=json")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{tool} {}: {text}\n{}",
        job.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(text.trim_start_matches(|c| c != '{')).unwrap_or_else(|e| panic!("{tool}: {e}: {text}"))
}

/// The I/Os of job `i` in direction `dir` of a fio JSON report.
fn ios(j: &serde_json::Value, i: usize, dir: &str) -> u64 {
    j["jobs"][i][dir]["total_ios"].as_u64().unwrap()
}

/// Strided zones as fio 3.33 does them: a sequential zoned write leaves
/// exactly fio's blocks written (zones of zonesize, zonerange going round
/// again, zoneskip's gaps, the wrap at the file's end), a random one
/// writes every block of the same zones (the random map is the zone's),
/// and a zoned read does fio's I/O count, a zone past the file's end
/// ending it (5m zones with 1m skips of a 16 MiB file: 14 MiB).
#[test]
fn strided_zones_write_what_fio_writes() {
    if !require("fio", have("fio")) {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = dir.path().join("zoned");
    let cases = [
        ("write", "zonesize=256k\nzoneskip=512k"),
        ("write", "zonesize=512k\nzonerange=256k\nzoneskip=256k"),
        ("write", "zonesize=128k\nzonerange=256k\nzoneskip=64k\noffset=64k"),
        ("randwrite", "zonesize=256k\nzoneskip=512k"),
        ("randwrite", "zonesize=512k\nzonerange=256k\nzoneskip=1m"),
    ];
    for (rw, zones) in cases {
        let text = format!(
            "[z]\nfilename={}\nbs=4k\nrw={rw}\nzonemode=strided\n{zones}\n",
            file.display()
        );
        let job = job_file(dir.path(), "z.fio", &text);
        let mut got = Vec::new();
        for tool in ["fio", "fslab"] {
            zeroed(&file, 4 << 20);
            let j = run(tool, &job, dir.path());
            got.push((ios(&j, 0, "write"), written_blocks(&file, 4096)));
        }
        assert_eq!(got[0].0, got[1].0, "{rw} {zones}: writes (fio, fslab)");
        assert!(got[0].1.iter().any(|&w| !w), "{rw} {zones}: the zones leave gaps");
        assert_eq!(got[0].1, got[1].1, "{rw} {zones}: the blocks written differ from fio's");
    }
    // reads of a prepared file: a zone past its end ends the job
    let data: Vec<u8> = (0..16u32 << 20).map(|i| (i % 251) as u8 | 1).collect();
    std::fs::write(&file, data).unwrap();
    for zones in ["zonesize=5m\nzoneskip=1m", "zonesize=3m\nzonerange=1m\nzoneskip=2m"] {
        let text = format!(
            "[z]\nfilename={}\nbs=4k\nrw=read\nzonemode=strided\n{zones}\n",
            file.display()
        );
        let job = job_file(dir.path(), "r.fio", &text);
        let (fio, fslab) = (run("fio", &job, dir.path()), run("fslab", &job, dir.path()));
        assert_eq!(
            ios(&fio, 0, "read"),
            ios(&fslab, 0, "read"),
            "{zones}: reads (fio, fslab)"
        );
    }
}

/// Bad zone options are refused in one line naming them, before anything
/// is laid out: zonesize without zonemode=strided (fio: "zonemode=none and
/// zonesize are not compatible"), strided without a zonesize, zbd, a skip
/// in zones, a mode fio does not have.
#[test]
fn bad_zone_options_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let job = |name: &str, opts: &str| {
        let text = format!("[j]\ndirectory={}\nsize=1m\nrw=read\n{opts}\n", work.display());
        job_file(dir.path(), name, &text).display().to_string()
    };
    let cases = [
        (
            job("a.fio", "zonesize=1m"),
            ":5: [j] zonesize=1m: needs zonemode=strided",
        ),
        (
            job("b.fio", "zonemode=strided"),
            ":5: [j] zonemode=strided: needs a zonesize",
        ),
        (job("c.fio", "zonemode=zbd"), ":5: zonemode=zbd"),
        (
            job("d.fio", "zonemode=strided\nzonesize=1m\nzoneskip=2z"),
            ":7: zoneskip=2z",
        ),
        (job("e.fio", "zonemode=diagonal"), ":5: [j] zonemode: 'diagonal'"),
        (job("f.fio", "zonemode=strided\nzonesize=1q"), ":6: [j] zonesize: '1q'"),
    ];
    let rows: Vec<Refusal> = cases
        .iter()
        .map(|(j, want)| refusal(&["fio", j], format!("{j}{want}")))
        .collect();
    expect_refusals(&rows, &[&work]);
}
