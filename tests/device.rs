//! Block devices: consent, and refusal of devices that hold data.

use crate::util::*;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;

fn head(dev: &str) -> Vec<u8> {
    let mut b = vec![0u8; 1 << 20];
    std::fs::File::open(dev).unwrap().read_exact(&mut b).unwrap();
    b
}

fn io_on(dev: &str, extra: &[&str]) -> std::process::Output {
    fslab()
        .args(["io", "--target", dev, "--runtime", "300ms", "--size", "8m", "--quiet"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn a_device_needs_allow_device() {
    if !require_root_with(&["losetup"]) {
        return;
    }
    let lo = LoopDev::new(16);
    let out = io_on(&lo.dev, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("add --allow-device"));
}

#[test]
fn a_device_carrying_a_filesystem_is_refused_for_writes() {
    if !require_root_with(&["losetup", "mkfs.ext4", "mkfs.xfs"]) {
        return;
    }
    for (fs, what) in [("ext4", "ext4"), ("xfs", "XFS")] {
        let lo = LoopDev::new(320);
        lo.mkfs(fs);
        let before = head(&lo.dev);
        for args in [&["--rw", "randwrite"][..], &["--precondition"][..]] {
            let out = io_on(&lo.dev, &[&["--allow-device"], args].concat());
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{fs} {args:?}: {err}");
            assert!(
                err.contains(&format!(
                    "its first blocks carry an {what} filesystem (blkid: TYPE={fs})"
                )),
                "{err}"
            );
            assert!(err.contains("--force-overwrite"), "{err}");
        }
        // reading is harmless and allowed
        let out = io_on(&lo.dev, &["--allow-device", "--rw", "randread"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(head(&lo.dev), before, "{fs}: the filesystem was not touched");
    }
}

#[test]
fn a_mounted_device_is_refused_even_when_its_signature_is_gone() {
    if !require_root_with(&["losetup", "mkfs.ext4", "mount"]) {
        return;
    }
    let lo = LoopDev::new(64);
    lo.mkfs("ext4");
    let m = Mount::new(&lo.dev, "ext4", "");
    let out = io_on(&lo.dev, &["--allow-device", "--rw", "randwrite"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("it is mounted on {}", m.path().display())),
        "{err}"
    );
    // the claim (O_EXCL) fails on a mounted device: not even reads, not even forced
    for args in [
        &["--rw", "randread"][..],
        &["--rw", "randwrite", "--force-overwrite"][..],
    ] {
        let out = io_on(&lo.dev, &[&["--allow-device"], args].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(&format!("refusing to use {}", lo.dev)), "{err}");
    }
}

#[test]
fn a_blank_device_is_preconditioned_and_measured_raw() {
    if !require_root_with(&["losetup"]) {
        return;
    }
    let lo = LoopDev::new(32);
    let res = tempfile::tempdir().unwrap();
    let jp = res.path().join("r.json");
    let out = io_on(
        &lo.dev,
        &[
            "--allow-device",
            "--precondition",
            "--rw",
            "randrw",
            "--direct",
            "--output",
            &format!("json:{}", jp.display()),
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j = read_json(&jp);
    let t = &j["cells"][0]["target"];
    assert_eq!(t["kind"], "block-device");
    assert_eq!(t["fs_type"], "raw");
    assert!(t["loop_backing_file"].as_str().unwrap().ends_with("/img"));
    assert_eq!(t["direct_honoured"], true);
    assert!(
        head(&lo.dev).iter().any(|&b| b != 0),
        "preconditioning wrote the device"
    );
    // without --precondition, reads of a device warn that they may hit never-written blocks
    let out = io_on(&lo.dev, &["--allow-device", "--output", "text"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("was not preconditioned"));
}

/// crc32c of every byte of the device.
fn checksum(dev: &str) -> u32 {
    let mut f = std::fs::File::open(dev).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let mut crc = 0;
    loop {
        match f.read(&mut buf).unwrap() {
            0 => return crc,
            n => crc = crc32c::crc32c_append(crc, &buf[..n]),
        }
    }
}

fn tool(args: &[&str]) {
    let o = std::process::Command::new(args[0]).args(&args[1..]).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// Writes image file `img` at the start of `dev`.
fn copy_to(img: &std::path::Path, dev: &str) {
    use std::io::Write;
    let data = std::fs::read(img).unwrap();
    let mut f = std::fs::OpenOptions::new().write(true).open(dev).unwrap();
    f.write_all(&data).unwrap();
    f.sync_all().unwrap();
}

/// A 16 MiB loop device carrying `kind`, made by the real tool.
fn decoy(kind: &str) -> LoopDev {
    let lo = LoopDev::new(16);
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("precious"), "data fslab did not create").unwrap();
    let img = tmp.path().join("img");
    match kind {
        "minix" => tool(&["mkfs.minix", &lo.dev]),
        "bfs" => tool(&["mkfs.bfs", &lo.dev]),
        "cramfs" => {
            tool(&["mkfs.cramfs", src.to_str().unwrap(), img.to_str().unwrap()]);
            copy_to(&img, &lo.dev);
        }
        "squashfs" => {
            tool(&[
                "mksquashfs",
                src.to_str().unwrap(),
                img.to_str().unwrap(),
                "-quiet",
                "-noappend",
            ]);
            copy_to(&img, &lo.dev);
        }
        // swap with a bfs superblock over its first sector: blkid -p calls
        // it ambivalent (exit 8), wipefs lists both
        "swap+bfs" => {
            tool(&["mkswap", &lo.dev]);
            std::fs::File::create(&img).unwrap().set_len(1 << 20).unwrap();
            tool(&["mkfs.bfs", img.to_str().unwrap()]);
            let mut head = std::fs::read(&img).unwrap();
            head.truncate(512);
            std::fs::write(&img, head).unwrap();
            copy_to(&img, &lo.dev);
        }
        other => panic!("no decoy {other}"),
    }
    lo
}

/// `fslab run` on a one-filesystem plan naming `dev` (type ext4 or raw).
fn run_plan_on(dev: &str, fs_type: &str, extra: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "[[filesystem]]\ntype = \"{fs_type}\"\ndevice = \"{dev}\"\n\
             [[workload]]\ntype = \"io\"\nrw = \"randwrite\"\nsize = \"8m\"\nruntime = \"200ms\"\n"
        ),
    )
    .unwrap();
    let scratch = scratch_dir();
    fslab()
        .args(["run", plan.to_str().unwrap(), "--quiet", "--allow-device"])
        .args(["--scratch-dir", scratch.path().to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap()
}

/// Every way fslab could write `dev` is refused (exit 2, naming the device
/// and `want`), and no byte of it changes.
fn assert_untouched_by_every_writer(dev: &str, want: &[&str]) {
    let before = checksum(dev);
    let mut outs = Vec::new();
    for args in [&["--rw", "randwrite"][..], &["--precondition"][..]] {
        outs.push((
            format!("io {args:?}"),
            io_on(dev, &[&["--allow-device"], args].concat()),
        ));
    }
    for fs in ["ext4", "raw"] {
        outs.push((format!("run {fs}"), run_plan_on(dev, fs, &[])));
    }
    for (what, out) in outs {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains(dev), "{what}: names the device: {err}");
        for w in want {
            assert!(err.contains(w), "{what}: wanted '{w}' in: {err}");
        }
        assert_eq!(err.lines().count(), 1, "{what}: one line: {err}");
    }
    assert_eq!(checksum(dev), before, "{dev} ({want:?}) was changed");
}

#[test]
fn devices_carrying_what_the_old_check_missed_are_refused_and_untouched() {
    if !require_root_with(&[
        "losetup",
        "blkid",
        "wipefs",
        "mkfs.minix",
        "mkfs.bfs",
        "mkfs.cramfs",
        "mkswap",
    ]) {
        return;
    }
    for (kind, want) in [
        (
            "minix",
            &["its first blocks carry a minix filesystem (blkid: TYPE=minix)"][..],
        ),
        ("bfs", &["a bfs filesystem (blkid: TYPE=bfs)"]),
        ("cramfs", &["a cramfs filesystem (blkid: TYPE=cramfs)"]),
        (
            "swap+bfs",
            &[
                "more than one signature (blkid: ambivalent result)",
                "swap space (wipefs: swap at offset 0xff6)",
            ],
        ),
    ] {
        let lo = decoy(kind);
        assert_untouched_by_every_writer(&lo.dev, want);
        assert_untouched_by_every_writer(&lo.dev, &["--force-overwrite"]);
    }
}

#[test]
fn a_squashfs_device_is_refused_and_untouched() {
    if !require_root_with(&["losetup", "blkid", "wipefs", "mksquashfs"]) {
        return;
    }
    let lo = decoy("squashfs");
    assert_untouched_by_every_writer(&lo.dev, &["a squashfs filesystem (blkid: TYPE=squashfs)"]);
}

/// A helper process holding `dev` open O_EXCL until dropped (killed by pid).
struct Holder(std::process::Child);

impl Holder {
    fn new(dev: &str) -> Self {
        use std::io::BufRead;
        let mut c = std::process::Command::new("python3")
            .args([
                "-c",
                "import os,sys\nfd=os.open(sys.argv[1], os.O_RDONLY|os.O_EXCL)\nprint('held', flush=True)\nsys.stdin.read()",
                dev,
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(c.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "held", "the helper claimed {dev}");
        Holder(c)
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_device_another_process_holds_exclusively_is_refused_and_untouched() {
    if !require_root_with(&["losetup", "python3"]) {
        return;
    }
    // blank: fslab would use it, were it not held
    let lo = LoopDev::new(16);
    let before = checksum(&lo.dev);
    let held = Holder::new(&lo.dev);
    let want = "another program or the kernel holds it";
    assert_untouched_by_every_writer(&lo.dev, &[want]);
    // not even read, nor with --force-overwrite
    for args in [&["--rw", "randread"][..], &["--precondition", "--force-overwrite"][..]] {
        let out = io_on(&lo.dev, &[&["--allow-device"], args].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{err}");
    }
    let out = run_plan_on(&lo.dev, "ext4", &["--force-overwrite"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    drop(held);
    assert_eq!(checksum(&lo.dev), before, "untouched");
}

/// Descriptors fslab (pid `pid`) has open on block device `dev`.
fn fds_on(pid: u32, dev: &str) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    std::fs::read_link(e.path())
                        .map(|l| l == std::path::Path::new(dev))
                        .unwrap_or(false)
                })
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn fslab_holds_the_device_exclusively_while_it_runs() {
    if !require_root_with(&["losetup", "mkfs.ext4"]) {
        return;
    }
    let lo = LoopDev::new(32);
    let child = start(&[
        "io",
        "--target",
        &lo.dev,
        "--allow-device",
        "--rw",
        "randwrite",
        "--size",
        "8m",
        "--runtime",
        "120s",
        "--quiet",
    ]);
    let pid = child.id();
    // Two descriptors at once: the claim and a worker's (before the claim,
    // fslab opens the device only briefly, one descriptor at a time).
    let t = std::time::Instant::now();
    while fds_on(pid, &lo.dev) < 2 {
        assert!(
            t.elapsed() < std::time::Duration::from_secs(10),
            "fslab never opened {}",
            lo.dev
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let excl = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&lo.dev);
    assert_eq!(
        excl.map(|_| ()).map_err(|e| e.raw_os_error()),
        Err(Some(libc::EBUSY)),
        "claimed by fslab"
    );
    let mkfs = std::process::Command::new("mkfs.ext4")
        .args(["-q", "-F", &lo.dev])
        .output()
        .unwrap();
    assert!(!mkfs.status.success(), "mkfs cannot open a device fslab holds");
    // the run is still on (it ends only when told): the checks above saw it hold the claim
    let out = signal_and_wait(child, libc::SIGINT);
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    // released at exit
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&lo.dev)
        .unwrap();
}

#[test]
fn a_plan_device_is_checked_and_formatted_for_every_cell() {
    if !require_root_with(&["losetup", "blkid", "wipefs", "mkfs.ext4", "mount"]) {
        return;
    }
    // blank; two filesystems of the plan on it, each made fresh twice: each
    // cell's check finds what fslab itself made there and lets it be
    let lo = LoopDev::new(64);
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "repeat = 2\n[[filesystem]]\ntype = \"ext4\"\ndevice = \"{0}\"\n\
             [[filesystem]]\ntype = \"raw\"\ndevice = \"{0}\"\n\
             [[workload]]\ntype = \"io\"\nrw = \"randrw\"\nsize = \"8m\"\nruntime = \"200ms\"\n",
            lo.dev
        ),
    )
    .unwrap();
    let scratch = scratch_dir();
    let jp = dir.path().join("r.json");
    let out = fslab()
        .args(["run", plan.to_str().unwrap(), "--quiet", "--allow-device"])
        .args(["--scratch-dir", scratch.path().to_str().unwrap()])
        .args(["--output", &format!("json:{}", jp.display())])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j = read_json(&jp);
    let cells = j["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4);
    for c in cells {
        assert!(c["error"].is_null(), "{c}");
        assert_eq!(c["target"]["device"], lo.dev.as_str(), "on the plan's device");
        // what fslab made there is fslab's own: no "writing although" warning
        assert!(!c["warnings"].to_string().contains("although"), "{}", c["warnings"]);
    }
    assert!(scratch_leftovers(scratch.path()).is_empty());
}

#[test]
fn fio_jobs_on_one_device_share_fslab_s_claim() {
    if !require_root_with(&["losetup"]) {
        return;
    }
    // a second O_EXCL open from one process fails: the jobs run at once on
    // one claim
    let lo = LoopDev::new(16);
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("j.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}\nsize=8m\nruntime=200ms\ntime_based\nbs=4k\n[r]\nrw=randread\n[w]\nrw=randwrite\n",
            lo.dev
        ),
    )
    .unwrap();
    let out = fslab()
        .args(["fio", job.to_str().unwrap(), "--allow-device", "--output-format=json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["jobs"].as_array().unwrap().len(), 2);
    assert!(j["jobs"][0]["read"]["io_bytes"].as_u64().unwrap() > 0, "{j}");
    assert!(j["jobs"][1]["write"]["io_bytes"].as_u64().unwrap() > 0, "{j}");
}
