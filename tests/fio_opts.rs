//! fio 3.33's option families that its own examples use, against fio
//! itself: the same small job run by fio and by `fslab fio`, compared on
//! what the job leaves behind or reports (not on speed):
//! - zonemode=strided (examples/disk-zone-profile.fio): which blocks of a
//!   zeroed file a zoned write job writes, and a zoned read's I/O count.
//! - fill_device (examples/surface-scan.fio), on a private tmpfs: the
//!   write phase fills it without an error, the verify phase reads and
//!   checks what it wrote, a scribble in between fails both tools' check.
//! - dedupe_mode=working_set, dedupe_global (examples/dedupe-global.fio):
//!   the written files' 4 KiB blocks, hashed: distinct blocks and the
//!   duplicate share per file and of both files together.
//! - cmdprio (examples/cmdprio-percentage.fio, cmdprio_bssplit's advanced
//!   form), libaio and io_uring: the priority column of both tools'
//!   per-I/O latency logs, with log_prio and without; and the kernel's
//!   refusal of a realtime priority without the capabilities for it.
//! - bssplit=READ,WRITE: the shares of (direction, block size) in both
//!   tools' per-I/O logs, and the I/O counts.
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

/// examples/surface-scan.fio's shape on a small filesystem: a write phase
/// with fill_device, then (create_serialize=0, no size) a verify phase of
/// the same file; `middle`: a job between them.
fn fill_job(dir: &Path, middle: &str) -> String {
    format!(
        "[global]\ndirectory={}\nthread\nbs=64k\nioengine=sync\nverify=meta\nverify_pattern=0xaa555aa5\nverify_interval=512\n\
         [write-phase]\nfilename=datafile.tmp\nrw=write\nfill_device=1\ndo_verify=0\n{middle}\
         [verify-phase]\nstonewall\ncreate_serialize=0\nfilename=datafile.tmp\nrw=read\ndo_verify=1\n",
        dir.display()
    )
}

/// Free bytes of the filesystem at `p`.
fn free(p: &Path) -> u64 {
    let out = std::process::Command::new("stat")
        .args(["-f", "-c", "%a %S"])
        .arg(p)
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    let v: Vec<u64> = t.split_whitespace().map(|x| x.parse().unwrap()).collect();
    v[0] * v[1]
}

/// fill_device as fio 3.33 runs it: on a 32 MiB tmpfs the write phase
/// writes until ENOSPC and ends without an error (fio's writes within a
/// block or two of the filesystem's size, fslab's as many within 2%), the
/// verify phase reads back every whole block fio's reads and finds them
/// as written (fslab's headers: a phase that read a file of its own would
/// find none). fslab's results file, written on the filesystem it filled
/// (where fio's comes out empty), is whole, and fslab leaves nothing and
/// the space free. A job between the
/// phases that writes the file without verify makes both tools' check
/// fail.
#[test]
fn fill_device_fills_then_the_verify_phase_reads_it() {
    if !require_root_with(&["fio"]) {
        return;
    }
    let m = Mount::new("fslab-fill-test", "tmpfs", "size=32m");
    let dir = m.path();
    let jobs_dir = tempfile::tempdir().unwrap();
    let job = job_file(jobs_dir.path(), "fill.fio", &fill_job(dir, ""));
    let empty = free(dir);
    let mut got = Vec::new();
    for tool in ["fio", "fslab"] {
        // fio's own results on the filled filesystem come out empty; fslab
        // removes its files first
        let out = if tool == "fio" { jobs_dir.path() } else { dir }.join("out.json");
        let r = fio_or_fslab(tool, true)
            .arg(&job)
            .arg("--output-format=json")
            .arg(format!("--output={}", out.display()))
            .output()
            .unwrap();
        assert_eq!(
            r.status.code(),
            Some(0),
            "{tool}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        let text = std::fs::read_to_string(&out).unwrap();
        // fio may write its notes before the JSON
        let j: serde_json::Value = serde_json::from_str(text.trim_start_matches(|c| c != '{'))
            .unwrap_or_else(|e| panic!("{tool}: the results on the filled filesystem: {e}"));
        let jobs = j["jobs"].as_array().unwrap();
        assert!(jobs.iter().all(|x| x["error"] == 0), "{tool}: {jobs:?}");
        got.push((ios(&j, 0, "write"), ios(&j, 1, "read")));
        std::fs::remove_file(&out).unwrap();
        let _ = std::fs::remove_file(dir.join("datafile.tmp"));
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            // fio's verify state files
            let _ = std::fs::remove_file(e.path());
        }
        assert!(leftovers(dir).is_empty(), "{tool} left {:?}", leftovers(dir));
    }
    assert_eq!(free(dir), empty, "the space is free again");
    let ((fw, fr), (sw, sr)) = (got[0], got[1]);
    let full = (32 << 20) / (64 << 10);
    assert!(
        fw + 2 >= full && fr + 2 >= full,
        "fio filled 32 MiB: {fw} writes, {fr} reads"
    );
    assert!(sw.abs_diff(fw) * 50 <= fw, "writes: fio {fw}, fslab {sw}");
    assert!(sr.abs_diff(fr) <= 2, "verified reads: fio {fr}, fslab {sr}");
    // a scribble over the file between the phases: both checks fail
    let middle = "[scribble]\nstonewall\ncreate_serialize=0\nfilename=datafile.tmp\nrw=write\nverify=0\n";
    let job = job_file(jobs_dir.path(), "scribble.fio", &fill_job(dir, middle));
    for tool in ["fio", "fslab"] {
        let r = fio_or_fslab(tool, true).arg(&job).output().unwrap();
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{tool}: the check fails: {err}");
        assert!(err.contains("verify"), "{tool}: {err}");
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// fill_device's refusals, in one line before anything is written: a job
/// that does not write, and an existing file, which filling would extend
/// past its end (fslab never extends a file it did not create): left as
/// it was.
#[test]
fn bad_fill_device_jobs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let existing = dir.path().join("existing.dat");
    let work = dir.path().join("work");
    let j1 = job_file(
        dir.path(),
        "r.fio",
        &format!("[j]\ndirectory={}\nrw=read\nfill_device=1\n", dir.path().display()),
    );
    let j2 = job_file(
        dir.path(),
        "e.fio",
        &format!("[j]\nfilename={}\nrw=write\nfill_fs=1\n", existing.display()),
    );
    let (j1, j2) = (j1.display().to_string(), j2.display().to_string());
    let rows = vec![
        refusal(
            &["fio", &j1],
            format!("{j1}:4: [j] fill_device=1: the job does not write"),
        ),
        refusal(
            &["fio", "--force-overwrite", &j2],
            format!("{j2}:4: [j] fill_device=1: '{}' exists", existing.display()),
        ),
    ];
    expect_refusals_leaving(&rows, &[&existing]);
    expect_refusals(&rows[..1], &[&work]);
}

/// (blocks, distinct blocks) of the 4 KiB blocks of `files`, together.
fn distinct_blocks(files: &[&Path]) -> (usize, usize) {
    use std::collections::HashSet;
    let mut all = 0;
    let mut seen = HashSet::new();
    for f in files {
        let data = std::fs::read(f).unwrap();
        for b in data.chunks(4096) {
            all += 1;
            seen.insert(b.to_vec());
        }
    }
    (all, seen.len())
}

/// fio's dedupe modes in what the files hold (dedupe-global.fio's jobs at
/// 8 MiB): per file and for both files together, the distinct 4 KiB
/// blocks are within 8% of fio's and the duplicate share within 0.05 (two
/// runs of fio with other seeds differ by up to 5% here). The modes are
/// told apart by it: with dedupe_global half of each file's working set is
/// the other job's pages, so a file alone holds 1440 distinct blocks where
/// without it 1130 (fio), and both files together 2311; mode repeat's
/// files are each other's strangers (2107 together: not the same data in
/// both jobs).
#[test]
fn dedupe_working_set_blocks_match_fio() {
    if !require("fio", have("fio")) {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let (fa, fb) = (dir.path().join("a.dat"), dir.path().join("b.dat"));
    for (mode, global) in [("working_set", 1), ("working_set", 0), ("repeat", 0)] {
        let text = format!(
            "[global]\nioengine=libaio\niodepth=256\nsize=8m\ndedupe_mode={mode}\ndedupe_global={global}\n\
             dedupe_percentage=50\nblocksize=4k\nrw=write\nbuffer_compress_percentage=50\n\
             dedupe_working_set_percentage=50\n[a]\nfilename={}\n[b]\nfilename={}\n",
            fa.display(),
            fb.display()
        );
        let job = job_file(dir.path(), "d.fio", &text);
        let mut got = Vec::new();
        for tool in ["fio", "fslab"] {
            zeroed(&fa, 8 << 20);
            zeroed(&fb, 8 << 20);
            run(tool, &job, dir.path());
            got.push([
                distinct_blocks(&[&fa]),
                distinct_blocks(&[&fb]),
                distinct_blocks(&[&fa, &fb]),
            ]);
        }
        for (i, what) in ["a", "b", "a and b"].iter().enumerate() {
            let ((n, fio), (m, fslab)) = (got[0][i], got[1][i]);
            assert_eq!(n, m, "{mode} global={global} {what}: blocks");
            let share = |d: usize| 1.0 - d as f64 / n as f64;
            eprintln!("{mode} global={global} {what}: distinct fio {fio}, fslab {fslab} of {n}");
            assert!(
                fio.abs_diff(fslab) * 100 <= fio * 8,
                "{mode} global={global} {what}: distinct fio {fio}, fslab {fslab}"
            );
            assert!(
                (share(fio) - share(fslab)).abs() <= 0.05,
                "{mode} global={global} {what}: duplicate share"
            );
        }
    }
}

/// dedupe_mode=working_set's refusals (fio's fixup_options checks), in one
/// line before anything is laid out: no size=, several files, a set and a
/// dedupe share over 100%; and a mode fio does not have.
#[test]
fn bad_dedupe_jobs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let job = |name: &str, opts: &str| {
        let text = format!(
            "[j]\ndirectory={}\nrw=write\ndedupe_percentage=50\n{opts}\n",
            work.display()
        );
        job_file(dir.path(), name, &text).display().to_string()
    };
    let ws = "dedupe_mode=working_set";
    let cases = [
        (
            job("a.fio", &format!("filename=new.dat\n{ws}")),
            ":6: [j] dedupe_mode=working_set: needs the job's size=".to_string(),
        ),
        (
            job("b.fio", &format!("size=1m\nnrfiles=2\n{ws}")),
            ":7: [j] dedupe_mode=working_set: one file per job only".into(),
        ),
        (
            job("c.fio", &format!("size=1m\n{ws}\ndedupe_working_set_percentage=60")),
            ":6: [j] dedupe_mode=working_set: dedupe_working_set_percentage=60 and dedupe_percentage=50".into(),
        ),
        (
            job("d.fio", "size=1m\ndedupe_mode=sometimes"),
            ":6: [j] dedupe_mode: 'sometimes'".into(),
        ),
        (
            job("e.fio", &format!("size=1m\n{ws}\ndedupe_working_set_percentage=101")),
            ":7: [j] dedupe_working_set_percentage".into(),
        ),
    ];
    let rows: Vec<Refusal> = cases
        .iter()
        .map(|(j, want)| refusal(&["fio", j], format!("{j}{want}")))
        .collect();
    expect_refusals(&rows, &[&work]);
}

/// The shares of (block size, priority column) among the entries of a
/// per-I/O log.
fn prio_shares(log: &Path) -> std::collections::BTreeMap<(u64, String), f64> {
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let mut n = std::collections::BTreeMap::new();
    let mut all = 0.0;
    for l in text.lines() {
        let v: Vec<&str> = l.split(", ").collect();
        *n.entry((v[3].parse().unwrap(), v[v.len() - 1].to_string()))
            .or_insert(0.0) += 1.0;
        all += 1.0;
    }
    n.values_mut().for_each(|c| *c /= all);
    n
}

/// Per-I/O priorities as fio 3.33 gives them: the same job run by both
/// tools logs each (block size, priority) in the same share within 0.04
/// (4096 random reads: a share's binomial spread is under 0.01). With
/// log_prio the column is the ioprio value (cmdprio_class=1: 0x2000 for
/// 20%, the job's prioclass=3 0x6000 for the rest; the advanced
/// cmdprio_bssplit's 0x2001 and 0x6002 within the 4k reads, none for the
/// 16k ones); without it, 1 for a realtime class. A job without cmdprio
/// logs its own prioclass/prio for every I/O, whatever its engine.
#[test]
fn cmdprio_shares_in_the_logs_match_fio() {
    if !require("fio", have("fio")) {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = dir.path().join("dev.dat");
    let data: Vec<u8> = (0..16u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&file, data).unwrap();
    let cases = [
        (
            "libaio",
            "bs=4k\nprioclass=3\ncmdprio_percentage=20\ncmdprio_class=1\nlog_prio=1",
        ),
        (
            "io_uring",
            "bs=4k\nprioclass=3\ncmdprio_percentage=20\ncmdprio_class=1\nlog_prio=1",
        ),
        (
            "io_uring",
            "bssplit=4k/40:16k/60\ncmdprio_bssplit=4k/25/1/1:4k/75/3/2:16k/0\nlog_prio=1\nnumber_ios=4096",
        ),
        ("libaio", "bs=4k\ncmdprio_percentage=30"),
        // no cmdprio: every I/O logs the job's own priority (fio's td->ioprio)
        ("psync", "bs=4k\nprioclass=1\nprio=2\nlog_prio=1\nnumber_ios=1024"),
        ("psync", "bs=4k\nprioclass=1\nnumber_ios=1024"),
    ];
    for (engine, opts) in cases {
        let mut got = Vec::new();
        for tool in ["fio", "fslab"] {
            let log = dir.path().join(tool);
            let text = format!(
                "[p]\nfilename={}\nrw=randread\nioengine={engine}\niodepth=8\nwrite_lat_log={}\n{opts}\n",
                file.display(),
                log.display()
            );
            let job = job_file(dir.path(), "p.fio", &text);
            run(tool, &job, dir.path());
            got.push(prio_shares(&dir.path().join(format!("{tool}_lat.1.log"))));
        }
        eprintln!("{engine} {opts:?}: fio {:?}\n  fslab {:?}", got[0], got[1]);
        let keys: std::collections::BTreeSet<_> = got.iter().flat_map(|g| g.keys().cloned()).collect();
        for k in keys {
            let (f, s) = (
                got[0].get(&k).copied().unwrap_or(0.0),
                got[1].get(&k).copied().unwrap_or(0.0),
            );
            assert!(
                (f - s).abs() <= 0.04,
                "{engine} {opts}: {k:?}: fio {f:.3}, fslab {s:.3}"
            );
        }
    }
}

/// The cmdprio options' refusals, in one line before anything is laid
/// out: an engine that carries no per-I/O priority, both forms at once, a
/// class or level out of range, a block size's shares over 100, an entry
/// that is neither form.
#[test]
fn bad_cmdprio_jobs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let job = |name: &str, opts: &str| {
        let text = format!("[j]\ndirectory={}\nsize=1m\nrw=randread\n{opts}\n", work.display());
        job_file(dir.path(), name, &text).display().to_string()
    };
    let cases = [
        (
            job("a.fio", "ioengine=psync\ncmdprio_percentage=20"),
            ":6: [j] cmdprio: options of the libaio and io_uring engines",
        ),
        (
            job("b.fio", "ioengine=libaio\ncmdprio_percentage=20\ncmdprio_bssplit=4k/10"),
            ":6: [j] cmdprio_percentage and cmdprio_bssplit are mutually exclusive",
        ),
        (
            job("c.fio", "ioengine=libaio\ncmdprio_class=4"),
            ":6: [j] cmdprio_class: '4'",
        ),
        (job("d.fio", "ioengine=io_uring\ncmdprio=9"), ":6: [j] cmdprio: '9'"),
        (
            job("e.fio", "ioengine=libaio\ncmdprio_bssplit=4k/60:4k/50"),
            ":6: [j] cmdprio_bssplit: the shares of block size 4096 add up to more than 100",
        ),
        (
            job("f.fio", "ioengine=libaio\ncmdprio_bssplit=4k/60/1"),
            ":6: [j] cmdprio_bssplit: '4k/60/1'",
        ),
    ];
    let rows: Vec<Refusal> = cases
        .iter()
        .map(|(j, want)| refusal(&["fio", j], format!("{j}{want}")))
        .collect();
    expect_refusals(&rows, &[&work]);
}

/// The shares of (direction, block size) among a per-I/O log's entries.
fn size_shares(log: &Path) -> std::collections::BTreeMap<(String, u64), f64> {
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let mut n = std::collections::BTreeMap::new();
    let mut all = 0.0;
    for l in text.lines() {
        let v: Vec<&str> = l.split(", ").collect();
        *n.entry((v[2].to_string(), v[3].parse().unwrap())).or_insert(0.0) += 1.0;
        all += 1.0;
    }
    n.values_mut().for_each(|c| *c /= all);
    n
}

/// A split per direction (fio's bssplit=READ,WRITE): reads and writes
/// take their own sizes in fio's shares (within 0.04 of fio's, the random
/// map trimming some to 8k and 12k in both), the I/O counts within 10%.
/// Unequal smallest blocks are refused: fio then aligns writes to theirs
/// and ends the job at the first that does not fit, at random.
#[test]
fn per_direction_bssplit_matches_fio() {
    if !require("fio", have("fio")) {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = dir.path().join("dev.dat");
    std::fs::write(&file, vec![7u8; 16 << 20]).unwrap();
    let mut got = Vec::new();
    for tool in ["fio", "fslab"] {
        let log = dir.path().join(tool);
        let text = format!(
            "[j]\nfilename={}\nrw=randrw\nioengine=libaio\niodepth=8\nbssplit=4k/50:16k/50,4k/25:16k/75\nwrite_lat_log={}\n",
            file.display(),
            log.display()
        );
        let job = job_file(dir.path(), "s.fio", &text);
        let j = run(tool, &job, dir.path());
        got.push((
            ios(&j, 0, "read") + ios(&j, 0, "write"),
            size_shares(&dir.path().join(format!("{tool}_lat.1.log"))),
        ));
    }
    eprintln!("fio {:?}\nfslab {:?}", got[0], got[1]);
    let (f, s) = (got[0].0, got[1].0);
    assert!(f.abs_diff(s) * 10 <= f, "I/Os: fio {f}, fslab {s}");
    let keys: std::collections::BTreeSet<_> = got.iter().flat_map(|g| g.1.keys().cloned()).collect();
    for k in keys {
        let (a, b) = (
            got[0].1.get(&k).copied().unwrap_or(0.0),
            got[1].1.get(&k).copied().unwrap_or(0.0),
        );
        assert!((a - b).abs() <= 0.04, "{k:?}: fio {a:.3}, fslab {b:.3}");
    }
    // refused in one line, before anything is made
    let work = dir.path().join("work");
    let bad = |name: &str, split: &str| {
        let text = format!(
            "[j]\ndirectory={}\nsize=1m\nrw=randrw\nbssplit={split}\n",
            work.display()
        );
        job_file(dir.path(), name, &text).display().to_string()
    };
    let (a, b) = (bad("a.fio", "64k/40:1m/60,1m/100"), bad("b.fio", "4k,4k,4k"));
    expect_refusals(
        &[
            refusal(
                &["fio", &a],
                format!("{a}:5: [j] bssplit: a write split whose smallest block (1048576)"),
            ),
            refusal(&["fio", &b], format!("{b}:5: bssplit=4k,4k,4k: a trim split")),
        ],
        &[&work],
    );
}

/// The priority reaches the kernel with each I/O: without CAP_SYS_NICE and
/// CAP_SYS_ADMIN the kernel refuses a realtime ioprio (EPERM, errno 1), so
/// with cmdprio_class=1 both tools' jobs end in that error, on libaio and
/// on io_uring, and without a cmdprio share neither does.
#[test]
fn cmdprio_reaches_the_kernel() {
    if !require_root_with(&["fio", "capsh"]) {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = dir.path().join("d.dat");
    std::fs::write(&file, vec![5u8; 4 << 20]).unwrap();
    for engine in ["libaio", "io_uring"] {
        for (pct, want) in [(100, 1), (0, 0)] {
            let text = format!(
                "[p]\nfilename={}\nrw=randread\nbs=4k\nioengine={engine}\niodepth=4\ncmdprio_percentage={pct}\ncmdprio_class=1\nnumber_ios=64\n",
                file.display()
            );
            let job = job_file(dir.path(), "p.fio", &text);
            for tool in ["fio", "fslab"] {
                let cmd = match tool {
                    "fio" => format!("fio {} --output-format=json", job.display()),
                    _ => format!(
                        "{} fio --quiet {} --output-format=json",
                        fslab_path().display(),
                        job.display()
                    ),
                };
                let out = std::process::Command::new("capsh")
                    .args(["--drop=cap_sys_nice,cap_sys_admin", "--", "-c", &cmd])
                    .env_remove("RUST_LOG")
                    .output()
                    .unwrap();
                let text = String::from_utf8_lossy(&out.stdout);
                let j: serde_json::Value = serde_json::from_str(text.trim_start_matches(|c| c != '{'))
                    .unwrap_or_else(|e| panic!("{tool} {engine}: {e}: {text}"));
                assert_eq!(j["jobs"][0]["error"], want, "{tool} {engine} cmdprio_percentage={pct}");
            }
        }
    }
}
