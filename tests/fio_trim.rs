//! fio's trims (issue 33: "trim workloads on fslab's own devices and
//! files"; fio 3.33's examples/falloc.fio): rw=trim, randtrim, trimwrite
//! and randtrimwrite discarding a consented loop device's range, and the
//! falloc engine punching holes in a file, each run by fio and by `fslab
//! fio` on the same job and compared on what they did (op counts, the
//! bytes the device reads back, the blocks the file keeps). Bad inputs
//! are refused in one line, exit 2, nothing touched.

use crate::util::*;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// What the device holds before each run: no zero byte anywhere.
const FILL: u8 = 0xA5;

/// (trim ios, trim bytes, write ios, write bytes) of each job of `tool`'s JSON.
fn counts(tool: &str, j: &serde_json::Value) -> Vec<(u64, u64, u64, u64)> {
    let n = |x: &serde_json::Value, d: &str, k: &str| {
        x[d][k].as_u64().unwrap_or_else(|| panic!("{tool}: no {d}.{k} in {x}"))
    };
    j["jobs"]
        .as_array()
        .unwrap_or_else(|| panic!("{tool}: no jobs"))
        .iter()
        .map(|x| {
            (
                n(x, "trim", "total_ios"),
                n(x, "trim", "io_bytes"),
                n(x, "write", "total_ios"),
                n(x, "write", "io_bytes"),
            )
        })
        .collect()
}

/// `tool` on `job` with `extra` (fslab's only), which must succeed; stdout.
fn ran(fio: bool, job: &Path, format: &str, extra: &[&str]) -> String {
    let mut c = fio_or_fslab(if fio { "fio" } else { "fslab" }, true);
    let out = c
        .arg(job)
        .arg(format!("--output-format={format}"))
        .args(if fio { &[][..] } else { extra })
        .output()
        .unwrap();
    let tool = if fio { "fio" } else { "fslab" };
    assert!(out.status.success(), "{tool}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(tool: &str, s: &str) -> serde_json::Value {
    serde_json::from_str(s.trim_start_matches(|c| c != '{')).unwrap_or_else(|e| panic!("{tool}: {e}: {s}"))
}

/// Writes FILL over the whole device.
fn fill(dev: &str) {
    let f = std::fs::OpenOptions::new().write(true).open(dev).unwrap();
    f.write_all_at(&vec![FILL; 16 << 20], 0).unwrap();
    f.sync_all().unwrap();
}

/// The device's bytes, read past its page cache.
fn contents(dev: &str) -> Vec<u8> {
    let f = std::fs::File::open(dev).unwrap();
    // a discard drops the range's cached pages; drop the rest too
    rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed).unwrap();
    let mut v = vec![0u8; 16 << 20];
    f.read_exact_at(&mut v, 0).unwrap();
    v
}

/// The loop device's discard limits (`lsblk -D`'s DISC-MAX, from sysfs):
/// a loop device discards by punching its backing file's range, which then
/// reads as zeros; 0 where it does not discard at all.
fn discard_max(dev: &str) -> u64 {
    let name = Path::new(dev).file_name().unwrap().to_str().unwrap();
    std::fs::read_to_string(format!("/sys/block/{name}/queue/discard_max_bytes"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// Each trim direction on a 16 MiB loop device (a sparse file on the test
/// machine's filesystem), over [1 MiB, 3 MiB) in 64 KiB blocks (over
/// [0, 2 MiB) for randtrimwrite: fio 3.33 gets its writes wrong with an
/// offset, a note in fslab), with a different engine each (psync, libaio
/// and io_uring at depth 8, sync):
/// fio and fslab count the same trims (32) and, for trimwrite, the same
/// writes of the trimmed ranges; after a pure trim the range reads as
/// zeros in both, after a trimwrite it holds written data; outside the
/// range the device is byte for byte as it was filled. fslab needs
/// --allow-device, the consent it already asks for writes.
#[test]
fn trims_on_a_loop_device_are_fios() {
    if !require_root_with(&["losetup", "fio"]) {
        return;
    }
    let lo = LoopDev::new(16);
    assert!(discard_max(&lo.dev) > 0, "{}: the loop device discards", lo.dev);
    let work = tempfile::tempdir().unwrap();
    for (rw, engine) in [
        ("trim", "psync"),
        ("randtrim", "libaio\niodepth=8"),
        ("trimwrite", "io_uring\niodepth=8"),
        ("randtrimwrite", "sync"),
    ] {
        let start = if rw == "randtrimwrite" { 0 } else { 1usize << 20 };
        let end = start + (2 << 20);
        let job = job_file(
            work.path(),
            "t.fio",
            &format!(
                "[t]\nfilename={}\nrw={rw}\nioengine={engine}\nbs=64k\noffset={start}\nsize=2m\ndirect=1\n",
                lo.dev
            ),
        );
        let mut got = Vec::new();
        for fio in [true, false] {
            fill(&lo.dev);
            let tool = if fio { "fio" } else { "fslab" };
            let out = ran(fio, &job, "json", &["--allow-device"]);
            got.push(counts(tool, &json(tool, &out)));
            let v = contents(&lo.dev);
            assert!(
                v[..start].iter().chain(&v[end..]).all(|&b| b == FILL),
                "{tool} {rw}: only the job's range changes"
            );
            let range = &v[start..end];
            if rw.ends_with("write") {
                assert!(range.iter().any(|&b| b != 0), "{tool} {rw}: written after its trims");
            } else {
                assert!(
                    range.iter().all(|&b| b == 0),
                    "{tool} {rw}: the range reads back as zeros"
                );
            }
        }
        let writes = if rw.ends_with("write") { 32 } else { 0 };
        assert_eq!(got[0], vec![(32, 2 << 20, writes, writes << 16)], "fio {rw}");
        assert_eq!(got[0], got[1], "{rw}: fslab's counts are fio's");
    }
}

/// fio's normal output of a trim job: the `trim:` line (and no `read:` or
/// `write:` line), the `TRIM:` line of its run status, `issued rwts` with
/// the trims third; fslab prints the same lines.
#[test]
fn trim_lines_of_the_normal_output_are_fios() {
    if !require_root_with(&["losetup", "fio"]) {
        return;
    }
    let lo = LoopDev::new(16);
    let work = tempfile::tempdir().unwrap();
    let job = job_file(
        work.path(),
        "n.fio",
        &format!("[n]\nfilename={}\nrw=randtrim\nbs=128k\nsize=4m\n", lo.dev),
    );
    let shape = |s: &str| -> Vec<String> {
        s.lines()
            .filter_map(|l| {
                let t = l.trim_start();
                ["read:", "write:", "trim:", "READ:", "WRITE:", "TRIM:"]
                    .iter()
                    .find(|p| t.starts_with(*p))
                    .map(|p| p.to_string())
                    .or_else(|| {
                        t.starts_with("issued rwts")
                            .then(|| t.split(" short").next().unwrap().to_string())
                    })
            })
            .collect()
    };
    let fio = shape(&ran(true, &job, "normal", &[]));
    let ours = shape(&ran(false, &job, "normal", &["--allow-device"]));
    assert_eq!(fio, ["trim:", "issued rwts: total=0,0,32,0", "TRIM:"]);
    assert_eq!(ours, fio);
}

/// The blocks of `f` that hold data: SEEK_DATA/SEEK_HOLE's extents.
fn data_extents(f: &std::fs::File) -> Vec<(u64, u64)> {
    use rustix::fs::SeekFrom;
    let len = f.metadata().unwrap().len();
    let mut out = Vec::new();
    let mut at = 0;
    while at < len {
        let Ok(d) = rustix::fs::seek(f, SeekFrom::Data(at)) else {
            break;
        };
        let h = rustix::fs::seek(f, SeekFrom::Hole(d)).unwrap();
        out.push((d, h));
        at = h;
    }
    out
}

/// examples/falloc.fio's engine on an existing 1 MiB sparse file: a
/// random falloc write job allocates every block (16 of 64 KiB), then a
/// sequential trim job punches [256 KiB, 768 KiB) out of it. fio and fslab
/// (with --force-overwrite, its consent to work in a file it did not make)
/// count the same writes and trims and leave the same size, allocated
/// bytes (st_blocks) and data extents (SEEK_DATA/SEEK_HOLE: none on ext4,
/// whose fallocated extents are unwritten, so read as holes).
#[test]
fn falloc_leaves_fios_allocation() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = work.path().join("frag");
    let job = job_file(
        work.path(),
        "f.fio",
        &format!(
            "[global]\nioengine=falloc\nfilename={}\nbs=64k\n\
             [alloc]\nrw=randwrite\nsize=1m\n\
             [punch]\nstonewall\nrw=trim\noffset=256k\nsize=512k\n",
            file.display()
        ),
    );
    let mut seen = Vec::new();
    for fio in [true, false] {
        let _ = std::fs::remove_file(&file);
        std::fs::File::create(&file).unwrap().set_len(1 << 20).unwrap();
        let tool = if fio { "fio" } else { "fslab" };
        let c = counts(tool, &json(tool, &ran(fio, &job, "json", &["--force-overwrite"])));
        let f = std::fs::File::open(&file).unwrap();
        let m = f.metadata().unwrap();
        seen.push((c, m.len(), std::os::unix::fs::MetadataExt::blocks(&m), data_extents(&f)));
    }
    assert_eq!(seen[0].0, [(0, 0, 16, 1 << 20), (8, 512 << 10, 0, 0)], "fio's counts");
    // the half not punched, and an extent tree block
    let kept = seen[0].2 * 512;
    assert!((512 << 10..=528 << 10).contains(&kept), "fio's allocated bytes: {kept}");
    assert_eq!(seen[0], seen[1], "fslab leaves what fio leaves");
}

/// Bad trim and falloc jobs, each refused in one line naming the option's
/// file:line (or flag) and the value, exit 2, with nothing made in the
/// job's directory nor any output file written.
#[test]
fn bad_trim_and_falloc_jobs_are_refused() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path().display().to_string();
    let file = |name: &str, text: &str| job_file(work.path(), name, text).display().to_string();
    let out = work.path().join("out.json");
    let o = format!("--output={}", out.display());
    let cases = [
        (
            file("a.fio", &format!("[t]\ndirectory={d}\nrw=trim\nsize=1m\n")),
            "a.fio:3: [t] rw: rw=trim: a trim discards a block device's range",
        ),
        (
            file("b.fio", &format!("[t]\nfilename={d}/x\nrw=randtrimwrite\nsize=1m\n")),
            "b.fio:3: [t] rw: rw=randtrimwrite: a trim discards",
        ),
        (
            file(
                "c.fio",
                &format!("[f]\nioengine=falloc\ndirectory={d}\nrw=randread\nsize=1m\n"),
            ),
            "c.fio:2: [f] ioengine=falloc with rw=randread",
        ),
        (
            file(
                "e.fio",
                &format!("[f]\nioengine=falloc\ndirectory={d}\nrw=write\nfsync=4\nsize=1m\n"),
            ),
            "e.fio:2: [f] ioengine=falloc with fsync",
        ),
        (
            file(
                "g.fio",
                &format!("[f]\nioengine=falloc\ndirectory={d}\nrw=write\nverify=crc32c\nsize=1m\n"),
            ),
            "g.fio:2: [f] ioengine=falloc with verify",
        ),
        (
            file(
                "h.fio",
                &format!("[v]\nioengine=falloc\ndirectory={d}\nrw=trim\nsize=1m\nverify=crc32c\n"),
            ),
            "h.fio:2: [v] ioengine=falloc with verify",
        ),
    ];
    let mut rows: Vec<Refusal> = cases.iter().map(|(f, want)| refusal(&["fio", f, &o], *want)).collect();
    rows.push(refusal(
        &["io", "--target", &d, "--rw", "trimwrite", "--size", "1m"],
        "--rw: rw=trimwrite: a trim discards",
    ));
    rows.push(refusal(
        &[
            "io", "--target", &d, "--rw", "randtrim", "--size", "1m", "--verify", "crc32c",
        ],
        "--verify: rw=randtrim: fslab does not verify",
    ));
    expect_refusals(&rows, &[&out, &work.path().join("x")]);
    let left: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), cases.len(), "only the job files: {left:?}");
}

/// A trim job on a device without the consent fslab asks for writes is
/// refused and discards nothing: the device named directly, through a
/// symlink in a directory, or with a region past the device's end (with
/// consent). The device reads back as it was filled.
#[test]
fn trims_need_the_device_consent() {
    if !require_root_with(&["losetup"]) {
        return;
    }
    let lo = LoopDev::new(16);
    fill(&lo.dev);
    let work = tempfile::tempdir().unwrap();
    let link = work.path().join("disk");
    std::os::unix::fs::symlink(&lo.dev, &link).unwrap();
    let job = |name: &str, target: &str, extra: &str| {
        job_file(
            work.path(),
            name,
            &format!("[t]\nfilename={target}\nrw=trim\nbs=64k\n{extra}\n"),
        )
        .display()
        .to_string()
    };
    let (direct, via, past) = (
        job("d.fio", &lo.dev, "size=1m"),
        job("l.fio", &link.display().to_string(), "size=1m"),
        job("p.fio", &lo.dev, "offset=15m\nsize=2m"),
    );
    let out = work.path().join("out.json");
    let o = format!("--output={}", out.display());
    expect_refusals(
        &[
            refusal(&["fio", &direct, &o], "add --allow-device"),
            refusal(&["fio", &via, &o], "add --allow-device"),
            refusal(&["fio", &past, &o, "--allow-device"], "more than the device's"),
        ],
        &[&out],
    );
    assert!(contents(&lo.dev).iter().all(|&b| b == FILL), "nothing discarded");
}

/// A falloc trim job (a hole punched in a file) on an existing file fslab
/// did not create, directly or through a symlink, is refused without
/// --force-overwrite, and the file is left byte for byte.
#[test]
fn falloc_trims_of_an_existing_file_need_consent() {
    let work = tempfile::tempdir().unwrap();
    let victim = work.path().join("theirs");
    let link = work.path().join("link");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let job = |name: &str, target: &Path| {
        job_file(
            work.path(),
            name,
            &format!(
                "[p]\nioengine=falloc\nfilename={}\nrw=randtrim\nbs=16\n",
                target.display()
            ),
        )
        .display()
        .to_string()
    };
    let (direct, via) = (job("d.fio", &victim), job("l.fio", &link));
    expect_refusals_leaving(
        &[
            refusal(&["fio", &direct], "add --force-overwrite"),
            refusal(&["fio", &via], "add --force-overwrite"),
        ],
        &[&victim],
    );
}

/// The per-I/O latency log of a trim job: one entry per trim, each with
/// fio's direction 2 (DDIR_TRIM) and the block size, in fio's and fslab's.
#[test]
fn trims_are_in_the_per_io_logs_as_fios() {
    if !require_root_with(&["losetup", "fio"]) {
        return;
    }
    let lo = LoopDev::new(16);
    let work = tempfile::tempdir().unwrap();
    let job = job_file(
        work.path(),
        "l.fio",
        &format!("[l]\nfilename={}\nrw=randtrim\nbs=64k\nsize=1m\n", lo.dev),
    );
    let mut seen = Vec::new();
    for tool in ["fio", "fslab"] {
        let prefix = work.path().join(tool);
        let out = fio_or_fslab(tool, true)
            .arg(&job)
            .args(if tool == "fslab" { &["--allow-device"][..] } else { &[] })
            .arg(format!("--write_lat_log={}", prefix.display()))
            .arg("--log_avg_msec=0")
            .output()
            .unwrap();
        assert!(out.status.success(), "{tool}: {}", String::from_utf8_lossy(&out.stderr));
        let log = std::fs::read_to_string(format!("{}_lat.1.log", prefix.display())).unwrap();
        let cols: Vec<(String, String)> = log
            .lines()
            .map(|l| {
                let c: Vec<&str> = l.split(", ").collect();
                (c[2].to_string(), c[3].to_string())
            })
            .collect();
        seen.push(cols);
    }
    assert_eq!(seen[0], vec![("2".to_string(), "65536".to_string()); 16], "fio's log");
    assert_eq!(seen[0], seen[1]);
}
