//! Issue 31, items 1, 3 and 10: a plan's mkfs and mount strings cannot name
//! a device fslab did not check; a plan's device path is resolved once per
//! cell and held, so a symlink flipped during a run cannot redirect mkfs,
//! mount or the raw io cell; plan problems of the queue settings and the
//! quick suite's target are refused up front. Every decoy is a real loop
//! device carrying ext4 with a file on it, checksummed before and after.

use crate::util::*;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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

/// A 64 MiB loop device carrying ext4 with a file on it: data fslab did not
/// create and must never touch.
fn decoy() -> LoopDev {
    let lo = LoopDev::new(64);
    lo.mkfs("ext4");
    {
        let m = Mount::new(&lo.dev, "ext4", "");
        std::fs::write(m.path().join("precious"), "data fslab did not create\n".repeat(1000)).unwrap();
    }
    lo
}

fn ok() -> bool {
    require_root_with(&[
        "losetup",
        "mkfs.ext4",
        "mkfs.xfs",
        "mkfs.btrfs",
        "mount",
        "blkid",
        "wipefs",
    ])
}

/// One line per form: (fs type, the plan's mkfs/mount lines with DEV for
/// the decoy, what the refusal must say: file:line and the value).
fn option_forms(dev: &str, rdev: &str) -> Vec<(&'static str, String, String)> {
    let f = |ty: &'static str, lines: &str, want: &str| (ty, lines.replace("DEV", dev), want.replace("DEV", dev));
    vec![
        // extra btrfs devices
        f(
            "btrfs",
            r#"mkfs = ["DEV"]"#,
            r#"plan.toml:3: mkfs argument "DEV" is not an option"#,
        ),
        f(
            "btrfs",
            r#"mkfs = "-d raid1 -m raid1 DEV""#,
            r#"plan.toml:3: mkfs argument "DEV" is not an option"#,
        ),
        f(
            "btrfs",
            "mkfs = [\n  \"-f\",\n  \"DEV\",\n]",
            r#"plan.toml:5: mkfs argument "DEV" is not an option"#,
        ),
        f(
            "btrfs",
            r#"mkfs = "-f -- DEV""#,
            r#"plan.toml:3: mkfs argument "--" is not an option"#,
        ),
        f(
            "btrfs",
            r#"mkfs = "--rootdir /etc""#,
            r#"plan.toml:3: mkfs option "--rootdir" is not one fslab passes to mkfs.btrfs"#,
        ),
        // XFS external log, realtime and data sections
        f(
            "xfs",
            r#"mkfs = "-l logdev=DEV""#,
            r#"plan.toml:3: mkfs option "-l" "logdev=DEV": "logdev" is not a suboption"#,
        ),
        f(
            "xfs",
            r#"mkfs = ["-l", "size=16m,logdev=DEV"]"#,
            r#"plan.toml:3: mkfs option "-l" "size=16m,logdev=DEV": "logdev""#,
        ),
        f(
            "xfs",
            r#"mkfs = "-r rtdev=DEV""#,
            r#"plan.toml:3: mkfs option "-r" "rtdev=DEV": "rtdev" is not a suboption"#,
        ),
        f(
            "xfs",
            r#"mkfs = "-dname=DEV""#,
            r#"plan.toml:3: mkfs option "-d" "name=DEV": "name" is not a suboption"#,
        ),
        f(
            "xfs",
            r#"mkfs = "-d file=1,name=DEV""#,
            r#"plan.toml:3: mkfs option "-d" "file=1,name=DEV": "file""#,
        ),
        f(
            "xfs",
            r#"mkfs = "-l file=1,name=DEV""#,
            r#"plan.toml:3: mkfs option "-l" "file=1,name=DEV": "file""#,
        ),
        // ext4 external journal, and the device itself after the options
        f(
            "ext4",
            r#"mkfs = "-J device=DEV""#,
            r#"plan.toml:3: mkfs option "-J" "device=DEV": "device" is not a suboption"#,
        ),
        f(
            "ext4",
            r#"mkfs = "-F DEV""#,
            r#"plan.toml:3: mkfs argument "DEV" is not an option"#,
        ),
        f(
            "ext4",
            r#"mkfs = "-E offset=0 DEV""#,
            r#"plan.toml:3: mkfs argument "DEV" is not an option"#,
        ),
        f(
            "ext4",
            r#"mkfs = "-O journal_dev,DEV""#,
            r#"plan.toml:3: mkfs option "-O" "journal_dev,DEV": each item must be a name"#,
        ),
        // mount options that name a device
        f(
            "xfs",
            r#"mount = "logdev=DEV""#,
            r#"plan.toml:3: mount option "logdev=DEV" is not one fslab passes to mount -t xfs"#,
        ),
        f(
            "xfs",
            r#"mount = "noatime,rtdev=DEV""#,
            r#"plan.toml:3: mount option "rtdev=DEV""#,
        ),
        f(
            "ext4",
            r#"mount = "journal_path=DEV""#,
            r#"plan.toml:3: mount option "journal_path=DEV""#,
        ),
        f(
            "ext4",
            &format!(r#"mount = "journal_dev={rdev}""#),
            &format!(r#"plan.toml:3: mount option "journal_dev={rdev}""#),
        ),
        f(
            "btrfs",
            r#"mount = "device=DEV""#,
            r#"plan.toml:3: mount option "device=DEV" is not one fslab passes to mount -t btrfs"#,
        ),
        f(
            "ext4",
            r#"mount = "loop=DEV""#,
            r#"plan.toml:3: mount option "loop=DEV""#,
        ),
        f("ext4", r#"mount = "loop""#, r#"plan.toml:3: mount option "loop""#),
    ]
}

#[test]
fn mkfs_and_mount_options_naming_a_device_are_refused_and_the_decoy_is_untouched() {
    if !ok() {
        return;
    }
    let lo = decoy();
    let before = checksum(&lo.dev);
    let rdev = {
        use std::os::unix::fs::MetadataExt;
        let r = std::fs::metadata(&lo.dev).unwrap().rdev();
        format!("{}", (libc::major(r) << 8) | libc::minor(r))
    };
    let dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let out = dir.path().join("r.json");
    let mut cases = Vec::new();
    let forms = option_forms(&lo.dev, &rdev);
    for (i, (ty, lines, want)) in forms.iter().enumerate() {
        let sub = dir.path().join(i.to_string());
        std::fs::create_dir(&sub).unwrap();
        let plan = sub.join("plan.toml");
        std::fs::write(
            &plan,
            format!(
                "[[filesystem]]\ntype = \"{ty}\"\n{lines}\nsize = \"300m\"\n\
                 [[workload]]\ntype = \"io\"\nrw = \"randwrite\"\nsize = \"8m\"\nruntime = \"200ms\"\n"
            ),
        )
        .unwrap();
        let base = [
            "run",
            plan.to_str().unwrap(),
            "--quiet",
            "--scratch-dir",
            scratch.path().to_str().unwrap(),
            "--output",
            &format!("json:{}", out.display()),
        ];
        cases.push(refusal(&base, want.clone()));
        // consent to devices changes nothing: the options are not a device
        cases.push(refusal(
            &[&base[..], &["--allow-device", "--force-overwrite"]].concat(),
            want.clone(),
        ));
    }
    assert!(cases.len() >= 40);
    expect_refusals(&cases, &[&out]);
    assert_eq!(checksum(&lo.dev), before, "the decoy {} was changed", lo.dev);
    assert!(
        scratch_leftovers(scratch.path()).is_empty(),
        "{:?}",
        scratch_leftovers(scratch.path())
    );
}

/// A symlink at `link`, atomically replaced (a new link renamed over it).
fn point(link: &Path, to: &str) {
    let tmp = link.with_extension("new");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(to, &tmp).unwrap();
    std::fs::rename(&tmp, link).unwrap();
}

#[test]
fn a_plan_device_symlink_flipped_during_the_run_never_reaches_the_decoy() {
    if !ok() {
        return;
    }
    let consented = LoopDev::new(256);
    let lo = decoy();
    let before = checksum(&lo.dev);
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("disk");
    point(&link, &consented.dev);
    let plan = dir.path().join("plan.toml");
    // 10 repeats of an ext4 cell (mkfs, mount, io) and a raw cell (io on
    // the device itself): 20 cells, each resolving the link once
    std::fs::write(
        &plan,
        format!(
            "repeat = 10\n\
             [[filesystem]]\ntype = \"ext4\"\ndevice = \"{0}\"\n\
             [[filesystem]]\ntype = \"raw\"\ndevice = \"{0}\"\n\
             [[workload]]\ntype = \"io\"\nrw = \"randwrite\"\nsize = \"8m\"\nruntime = \"100ms\"\n",
            link.display()
        ),
    )
    .unwrap();
    let scratch = scratch_dir();
    let json = dir.path().join("r.json");
    let log = std::fs::File::create(dir.path().join("stderr")).unwrap();
    let mut child = std::process::Command::new(fslab_path())
        .args(["run", plan.to_str().unwrap(), "--quiet", "--allow-device"])
        .args(["--scratch-dir", scratch.path().to_str().unwrap()])
        .args(["--output", &format!("json:{}", json.display())])
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    // past the plan check (which must see the consented device): now flip
    wait_for_workdir(&mut child, scratch.path());
    let flipper = Flipper::start(&link, &consented.dev, &lo.dev);
    let status = child.wait().unwrap();
    let flips = flipper.stop();
    let err = std::fs::read_to_string(dir.path().join("stderr")).unwrap();
    assert!(flips > 10, "the link was flipped during the run ({flips} times)");
    assert_eq!(checksum(&lo.dev), before, "the decoy {} was changed: {err}", lo.dev);
    // cells whose claim found the decoy were refused (exit 1: failed cells);
    // every other cell ran on the consented device, from claim to unmount
    assert!(matches!(status.code(), Some(0 | 1)), "{status}: {err}");
    let j = read_json(&json);
    let cells = cells(&j);
    assert_eq!(cells.len(), 20, "{err}");
    let mut ran = 0;
    for c in cells {
        match c["error"].as_str() {
            // refused: the claim found the decoy, or saw the link change
            // between its look and its open
            Some(e) => assert!(
                (e.contains("no plan check consented to it") || e.contains("it changed while fslab opened it"))
                    && e.contains(&link.display().to_string()),
                "a cell failed for another reason: {e}"
            ),
            None => {
                ran += 1;
                assert_eq!(c["target"]["device"], consented.dev.as_str(), "{c}");
                assert_eq!(c["lab"]["scratch"]["device"], consented.dev.as_str(), "{c}");
            }
        }
    }
    assert!(ran > 0, "no cell ran at all: {err}");
    assert!(scratch_leftovers(scratch.path()).is_empty());
}

/// Flips `link` between `a` and `b` from a thread until the guard is dropped.
struct Flipper {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl Flipper {
    fn start(link: &Path, a: &str, b: &str) -> Flipper {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (stop, link, a, b) = (stop.clone(), link.to_path_buf(), a.to_string(), b.to_string());
            std::thread::spawn(move || {
                let mut flips = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    point(&link, if flips.is_multiple_of(2) { &b } else { &a });
                    flips += 1;
                    // not a race fix: only to leave the shared CPUs some room
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                flips
            })
        };
        Flipper {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops flipping; how many flips there were.
    fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for Flipper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn an_io_target_symlink_flipped_after_its_check_never_reaches_the_decoy() {
    if !ok() {
        return;
    }
    // `fslab io --target LINK --precondition`: the claim checks the device,
    // then the layout writes all of it and the workers write more; both
    // must open what was checked, not the link again
    let consented = LoopDev::new(32);
    let lo = decoy();
    let before = checksum(&lo.dev);
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("disk");
    point(&link, &consented.dev);
    let flipper = Flipper::start(&link, &consented.dev, &lo.dev);
    let mut ran = 0;
    let mut outcomes = Vec::new();
    for _ in 0..20 {
        let out = fslab()
            .args([
                "io",
                "--target",
                link.to_str().unwrap(),
                "--allow-device",
                "--precondition",
            ])
            .args(["--rw", "randwrite", "--size", "8m", "--runtime", "100ms", "--quiet"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        ran += (out.status.code() == Some(0)) as usize;
        outcomes.push((out.status.code(), err));
    }
    let flips = flipper.stop();
    assert!(flips > 10, "{flips} flips");
    assert_eq!(
        checksum(&lo.dev),
        before,
        "the decoy {} was changed: {outcomes:?}",
        lo.dev
    );
    for (code, err) in &outcomes {
        match code {
            Some(0) => {}
            // the decoy's ext4 refused at the check (2), or the link seen
            // changing between the claim's look and its open (1: an I/O error)
            Some(1 | 2) => assert!(
                err.contains("refusing to write to") || err.contains("it changed while fslab opened it"),
                "{err}"
            ),
            other => panic!("{other:?}: {err}"),
        }
    }
    assert!(ran > 0, "no run got past the check: {outcomes:?}");
}

/// A loop device over an image with a DOS partition table and its one
/// partition; detached on drop.
struct Partitioned {
    dev: String,
    _dir: tempfile::TempDir,
}

impl Partitioned {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("img");
        let mut mbr = vec![0u8; 512];
        // one Linux partition from sector 2048, 16 MiB long
        mbr[446 + 4] = 0x83;
        mbr[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
        mbr[446 + 12..446 + 16].copy_from_slice(&32768u32.to_le_bytes());
        mbr[510] = 0x55;
        mbr[511] = 0xAA;
        std::fs::write(&img, &mbr).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&img)
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        let o = std::process::Command::new("losetup")
            .args(["--find", "--show", "-P", img.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
        let disk = Partitioned { dev, _dir: dir };
        // added by hand (BLKPG), as kernels without partition-table parsers need
        let o = std::process::Command::new("addpart")
            .args([&disk.dev, "1", "2048", "32768"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        disk
    }

    /// The first partition's node, once the kernel has made it.
    fn part(&self) -> PathBuf {
        let p = PathBuf::from(format!("{}p1", self.dev));
        let t = std::time::Instant::now();
        while !p.exists() {
            assert!(t.elapsed() < std::time::Duration::from_secs(60), "no {}", p.display());
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        p
    }
}

impl Drop for Partitioned {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

#[test]
fn plan_problems_are_refused_up_front_naming_the_line_and_value() {
    if !ok() {
        return;
    }
    if !require("addpart (util-linux)", have("addpart")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let out = dir.path().join("r.json");
    let disk = Partitioned::new();
    let part = disk.part();
    let disk_name = disk.dev.trim_start_matches("/dev/").to_string();
    let small = Mount::new("tmpfs", "tmpfs", "size=64m");
    let w = "[[workload]]\ntype = \"io\"\nrw = \"randwrite\"\nsize = \"8m\"\nruntime = \"200ms\"\n";
    let mut n = 0;
    let mut plan = |text: &str| {
        n += 1;
        let sub = dir.path().join(n.to_string());
        std::fs::create_dir(&sub).unwrap();
        let p = sub.join("plan.toml");
        std::fs::write(&p, format!("{text}{w}")).unwrap();
        p.display().to_string()
    };
    let run = |plan: &str, extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = [
            "run",
            plan,
            "--quiet",
            "--scratch-dir",
            scratch.path().to_str().unwrap(),
            "--output",
            &format!("json:{}", out.display()),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let row = |args: Vec<String>, want: String| Refusal { args, want };
    let cases = vec![
        // a partition's queue is its disk's: refused by the plan check, not per cell
        row(
            run(
                &plan(&format!(
                    "[[filesystem]]\ntype = \"raw\"\ndevice = \"{}\"\nscheduler = \"none\"\n",
                    part.display()
                )),
                &["--allow-device"],
            ),
            format!(
                "plan.toml:4: scheduler = none: {} (filesystem 'raw') is a partition of {disk_name}",
                part.display()
            ),
        ),
        row(
            run(
                &plan(&format!(
                    "[[filesystem]]\ntype = \"ext4\"\ndevice = \"{}\"\n\nread_ahead_kb = 64\n",
                    part.display()
                )),
                &["--allow-device"],
            ),
            format!(
                "plan.toml:5: read_ahead_kb = 64: {} (filesystem 'ext4') is a partition",
                part.display()
            ),
        ),
        // a scheduler value with a newline: one line, the value escaped
        row(
            run(&plan("[[filesystem]]\ntype = \"raw\"\nscheduler = \"none\\n\"\n"), &[]),
            r"plan.toml:3: scheduler: unknown 'none\n'".into(),
        ),
        row(
            run(
                &plan("[[filesystem]]\ntype = \"raw\"\nscheduler = \"none\\nbfq\"\n"),
                &[],
            ),
            r"plan.toml:3: scheduler: unknown 'none\nbfq'".into(),
        ),
        // mkfs and mount strings outside the allow-list
        row(
            run(&plan("[[filesystem]]\ntype = \"ext4\"\nmkfs = \"-z /tmp/undo\"\n"), &[]),
            r#"plan.toml:3: mkfs option "-z" is not one fslab passes to mkfs.ext4"#.into(),
        ),
        row(
            run(
                &plan("[[filesystem]]\ntype = \"xfs\"\nmkfs = \"-p /etc/passwd\"\n"),
                &[],
            ),
            r#"plan.toml:3: mkfs option "-p" is not one fslab passes to mkfs.xfs"#.into(),
        ),
        row(
            run(
                &plan("[[filesystem]]\ntype = \"ext4\"\nmkfs = [\"-L\", \"a\\nb\"]\n"),
                &[],
            ),
            r#"plan.toml:3: mkfs option "-L" "a\nb": its value may hold only"#.into(),
        ),
        row(
            run(
                &plan("[[filesystem]]\ntype = \"tmpfs\"\nmount = \"size=1g,mpol=bind:/x\"\n"),
                &[],
            ),
            r#"plan.toml:3: mount option "mpol=bind:/x": its value may hold only"#.into(),
        ),
        row(
            run(
                &plan("[[filesystem]]\ntype = \"dir\"\npath = \"/tmp\"\nmount = \"noatime\"\n"),
                &[],
            ),
            "plan.toml:4: mount options given for a filesystem of type dir".into(),
        ),
        row(
            run(&plan("[[filesystem]]\ntype = \"raw\"\nmount = \"noatime\"\n"), &[]),
            "plan.toml:3: mount options given for a filesystem of type raw".into(),
        ),
        // the quick suite in a target too small for its io cells
        row(
            vec![
                "run".into(),
                "--target".into(),
                small.path().display().to_string(),
                "--quiet".into(),
                "--output".into(),
                format!("json:{}", out.display()),
            ],
            format!(
                "--target: '{}' has 64.0 MiB free, and the quick suite's",
                small.path().display()
            ),
        ),
        // ... and with --scratch, a scratch directory too small for its images
        row(
            vec![
                "run".into(),
                "--scratch".into(),
                "ext4,xfs".into(),
                "--scratch-dir".into(),
                small.path().display().to_string(),
                "--quiet".into(),
                "--output".into(),
                format!("json:{}", out.display()),
            ],
            format!(
                "--scratch-dir: '{}' has 64.0 MiB free, and the quick suite's 2 filesystem image(s) there need 512.0 MiB",
                small.path().display()
            ),
        ),
    ];
    expect_refusals(&cases, &[&out]);
    assert!(scratch_leftovers(scratch.path()).is_empty());
    assert!(
        std::fs::read_dir(small.path()).unwrap().next().is_none(),
        "nothing made in the small target"
    );
}

/// How many of `pid`'s descriptors are open on `dev`.
fn fds_on(pid: u32, dev: &str) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.flatten()
                .filter(|e| std::fs::read_link(e.path()).is_ok_and(|l| l == Path::new(dev)))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_plan_device_symlink_flipped_after_a_guest_cells_check_never_reaches_the_decoy() {
    // QEMU opened the plan's path after fslab's check; now it opens the
    // descriptor fslab holds. The link is flipped to the decoy once the
    // first guest holds the consented device (after the plan check, before
    // QEMU starts): that guest's cell must run on the consented device, and
    // the second guest (a kernel's guest runs all its cells in one boot, so
    // the plan names the kernel twice: two boots) must be refused when it
    // claims the path again. Debian's 6.12 cloud kernel, as tests/vm.rs
    // fetches it (examples/fetch-kernels.sh), under TCG.
    let kernels = std::env::var_os("FSLAB_KERNELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/fslab/kernels"));
    let k = kernels.join("6.12");
    if !ok()
        || !require_root_with(&["qemu-system-x86_64"])
        || !require(
            "Debian's 6.12 cloud kernel (examples/fetch-kernels.sh)",
            k.join("vmlinuz").exists(),
        )
    {
        return;
    }
    let consented = LoopDev::new(256);
    let lo = decoy();
    let before = checksum(&lo.dev);
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("disk");
    point(&link, &consented.dev);
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "repeat = 1\nkernels = [{{ name = \"a\", image = \"{0}\", modules = \"{1}\" }}, \
             {{ name = \"b\", image = \"{0}\", modules = \"{1}\" }}]\n\
             [vm]\ncpus = 1\nmemory = \"1g\"\naccel = \"tcg\"\n\
             [[filesystem]]\ntype = \"ext4\"\ndevice = \"{2}\"\n\
             [[workload]]\ntype = \"io\"\nrw = \"randwrite\"\nsize = \"8m\"\nruntime = \"200ms\"\n",
            k.join("vmlinuz").display(),
            k.join("modules").display(),
            link.display()
        ),
    )
    .unwrap();
    let scratch = scratch_dir();
    let json = dir.path().join("r.json");
    let log = std::fs::File::create(dir.path().join("stderr")).unwrap();
    let mut child = std::process::Command::new(fslab_path())
        .args(["run", plan.to_str().unwrap(), "--quiet", "--allow-device"])
        .args(["--scratch-dir", scratch.path().to_str().unwrap()])
        .args(["--output", &format!("json:{}", json.display())])
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    // the first cell's work directory comes after the plan check's claim is
    // gone; then the cell claims and holds the device
    wait_for_workdir(&mut child, scratch.path());
    let t = std::time::Instant::now();
    while fds_on(child.id(), &consented.dev) == 0 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "fslab ended before the cell held the device"
        );
        assert!(
            t.elapsed() < std::time::Duration::from_secs(60),
            "the cell never held the device"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    point(&link, &lo.dev);
    let status = child.wait().unwrap();
    let err = std::fs::read_to_string(dir.path().join("stderr")).unwrap();
    assert_eq!(checksum(&lo.dev), before, "the decoy {} was changed: {err}", lo.dev);
    assert_eq!(status.code(), Some(1), "the second guest's cell fails: {err}");
    let j = read_json(&json);
    let cells = cells(&j);
    assert_eq!(cells.len(), 2, "{err}");
    // the two kernels' guests run in a random order: the first ran, the second was refused
    let (ran, refused) = match cells[0]["error"].is_null() {
        true => (&cells[0], &cells[1]),
        false => (&cells[1], &cells[0]),
    };
    assert!(ran["error"].is_null(), "{}", ran["error"]);
    let disk = ran["lab"]["kernel"]["vm"]["disk"].as_str().unwrap_or_default();
    assert!(disk.ends_with(&format!("the host's {}", consented.dev)), "{disk}");
    let e = refused["error"].as_str().unwrap_or_default();
    assert!(e.contains("no plan check consented to it"), "{e}");
    assert!(scratch_leftovers(scratch.path()).is_empty());
}
