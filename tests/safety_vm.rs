//! What a plan, a scratch directory's name, a HOME or a modules directory
//! can make fslab's virtual machines do (issue 31): QEMU is given its files
//! as descriptors, never a path inside an option string; the KVM probe's
//! cache is used only in a directory of the running user's alone; modules
//! are read within bounds and checked before any cell.

use crate::util::*;
use serde_json::Value;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A plan of one ext4 cell under kernel `k` (accel auto: the KVM probe
/// boots too), with `extra` at its top.
fn vm_plan(dir: &Path, k: &Path, extra: &str) -> PathBuf {
    let p = dir.join("plan.toml");
    std::fs::write(
        &p,
        format!(
            r#"name = "vm-safety"
repeat = 1
{extra}
kernels = [{{ name = "6.12", image = "{}", modules = "{}" }}]

[vm]
cpus = 1
memory = "1g"

[[filesystem]]
name = "ext4"
type = "ext4"
size = "256m"

[[workload]]
name = "randread"
type = "io"
rw = "randread"
bs = "4k"
size = "8m"
direct = true
runtime = "1s"
"#,
            k.join("vmlinuz").display(),
            k.join("modules").display()
        ),
    )
    .unwrap();
    p
}

fn run_vm(plan: &Path, args: &[&str], home: &Path, json: &Path, cwd: &Path) -> std::process::Output {
    Command::new(fslab_path())
        .current_dir(cwd)
        .arg("run")
        .arg(plan)
        .args(args)
        .args(["--output", &format!("json:{}", json.display())])
        .env("HOME", home)
        .env_remove("XDG_CACHE_HOME")
        .env_remove("FSLAB_VM_APPEND")
        .output()
        .unwrap()
}

/// The one cell's VM facts, after checking the run succeeded.
fn vm_of(out: &std::process::Output, json: &Path) -> Value {
    let err = String::from_utf8_lossy(&out.stderr);
    let cell_error = std::fs::read(json)
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .map(|j| j["cells"][0]["error"].to_string());
    assert!(
        out.status.success(),
        "{}: {err}; cell error {cell_error:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    let j = read_json(json);
    let c = &j["cells"][0];
    assert!(c["error"].is_null(), "{}", c["error"]);
    c["lab"]["kernel"]["vm"].clone()
}

/// A file's bytes and inode facts, to show it was not touched.
fn fingerprint(p: &Path) -> (Vec<u8>, u64, i64, i64) {
    let m = std::fs::symlink_metadata(p).unwrap();
    (std::fs::read(p).unwrap(), m.ino(), m.mtime(), m.mtime_nsec())
}

/// A directory private to root, for HOME.
fn private_home(parent: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let h = parent.join("home");
    std::fs::create_dir(&h).unwrap();
    std::fs::set_permissions(&h, std::fs::Permissions::from_mode(0o700)).unwrap();
    h
}

/// The cache entries (`kvm-probe-*`) under `home`'s cache directory.
fn cache_entries(home: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(home.join(".cache/fslab"))
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn a_scratch_dir_named_like_qemu_options_reaches_qemu_only_as_descriptors() {
    let Some(k) = debian_kernel("6.12") else { return };
    let base = scratch_dir();
    // the victim and a scratch directory whose name, pasted into
    // `-chardev file,path=...`, made QEMU truncate the victim and write its
    // console there: `.../D,path=/VICTIM,logfile=L`; QEMU opens the
    // logfile first, `L/fslab-PID-N/console.log` from fslab's working
    // directory, where L leads back into the scratch directory
    let victim = base.path().join("victim");
    std::fs::write(&victim, b"a file fslab did not create\n").unwrap();
    let before = fingerprint(&victim);
    let evil = PathBuf::from(format!(
        "{}/D,path={},logfile=L",
        base.path().display(),
        victim.display()
    ));
    std::fs::create_dir_all(&evil).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = private_home(dir.path());
    let json = dir.path().join("r.json");
    let cwd = dir.path().join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    symlink(&evil, cwd.join("L")).unwrap();

    // from --scratch-dir
    let p = vm_plan(dir.path(), &k, "");
    let out = run_vm(&p, &["--scratch-dir", evil.to_str().unwrap()], &home, &json, &cwd);
    assert_eq!(fingerprint(&victim), before, "the victim was touched");
    let vm = vm_of(&out, &json);
    assert!(scratch_leftovers(&evil).is_empty(), "{:?}", scratch_leftovers(&evil));
    // the KVM probe's QEMU ran in the same directory (auto), and what it
    // found is cached only when it reached a verdict on the kernel
    let reason = vm["accel_reason"].as_str().unwrap().to_string();
    let entries = cache_entries(&home);
    if reason.contains("reached fslab's init") || reason.contains("printed nothing") {
        assert_eq!(entries.len(), 1, "{reason}: {entries:?}");
        let m = std::fs::symlink_metadata(&entries[0]).unwrap();
        assert!(m.is_file() && m.uid() == 0, "{entries:?}");
    } else if reason.contains("KVM probe") {
        // QEMU failed under KVM, or the boot was too slow to tell: no verdict
        assert!(entries.is_empty(), "{reason}: cached {entries:?}");
    }

    // from the plan's scratch-dir key
    let p = vm_plan(
        dir.path(),
        &k,
        &format!("scratch-dir = {}", toml_string(evil.to_str().unwrap())),
    );
    let out = run_vm(&p, &[], &home, &json, &cwd);
    assert_eq!(fingerprint(&victim), before, "the victim was touched");
    vm_of(&out, &json);
    assert!(scratch_leftovers(&evil).is_empty(), "{:?}", scratch_leftovers(&evil));
}

fn toml_string(s: &str) -> String {
    format!("'{s}'")
}

#[test]
fn a_kvm_probe_cache_in_another_users_home_is_neither_read_nor_written() {
    let Some(k) = debian_kernel("6.12") else { return };
    // sudo -E: HOME is another user's (uid 65534), who plants in its cache
    // directory a symlink where the probe's temporary file went, then a
    // verdict for the kernel
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cache = home.join(".cache/fslab");
    std::fs::create_dir_all(&cache).unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"root's file\n").unwrap();
    let name = fslab::vm::accel::cache_name(&k.join("vmlinuz")).unwrap();
    let (verdict, tmp) = (cache.join(&name), cache.join(format!("{name}.tmp")));
    symlink(&victim, &tmp).unwrap();
    let own = |p: &Path| std::os::unix::fs::lchown(p, Some(65534), Some(65534)).unwrap();
    for p in [&home, &home.join(".cache"), &cache, &tmp] {
        own(p);
    }
    let listing = |d: &Path| {
        let mut v: Vec<_> = std::fs::read_dir(d).unwrap().flatten().map(|e| e.file_name()).collect();
        v.sort();
        v
    };
    let scratch = scratch_dir();
    let json = dir.path().join("r.json");
    let p = vm_plan(dir.path(), &k, "");
    for round in ["a planted symlink", "a planted verdict"] {
        if round == "a planted verdict" {
            std::fs::write(&verdict, "kvm\nplanted verdict\n").unwrap();
            own(&verdict);
        }
        let v_before = fingerprint(&victim);
        let p_before = verdict.exists().then(|| fingerprint(&verdict));
        let names_before = listing(&cache);
        let out = run_vm(
            &p,
            &["--scratch-dir", scratch.path().to_str().unwrap()],
            &home,
            &json,
            dir.path(),
        );
        assert_eq!(fingerprint(&victim), v_before, "{round}: written through the symlink");
        assert_eq!(verdict.exists().then(|| fingerprint(&verdict)), p_before, "{round}");
        assert_eq!(
            listing(&cache),
            names_before,
            "{round}: fslab wrote in another user's directory"
        );
        let vm = vm_of(&out, &json);
        let reason = vm["accel_reason"].as_str().unwrap();
        assert!(
            !reason.contains("planted") && !reason.contains("cached"),
            "{round}: the planted verdict was read: {reason}"
        );
        assert!(scratch_leftovers(scratch.path()).is_empty());
    }
}

/// A modules directory with modules.builtin naming virtio_pci and
/// virtio_console, as Debian's cloud kernels have them.
fn modules_dir(parent: &Path, name: &str) -> PathBuf {
    let m = parent.join(name);
    std::fs::create_dir_all(m.join("kernel/drivers/block")).unwrap();
    std::fs::write(
        m.join("modules.builtin"),
        "kernel/drivers/virtio/virtio_pci.ko\nkernel/drivers/char/virtio_console.ko\n",
    )
    .unwrap();
    m
}

/// A plan of one tmpfs cell under a dummy kernel image with modules `m`:
/// everything it is refused for is found before a VM would start.
fn module_plan(dir: &Path, name: &str, m: &Path, vm: &str) -> PathBuf {
    let vm = if vm.is_empty() { "cpus = 1" } else { vm };
    let image = dir.join("vmlinuz");
    if !image.exists() {
        std::fs::write(&image, b"not booted: refused before").unwrap();
    }
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(
        &p,
        format!(
            r#"name = "modules"
kernels = [{{ name = "k", image = "{}", modules = "{}" }}]

[vm]
{vm}

[[filesystem]]
name = "t"
type = "tmpfs"
size = "64m"

[[workload]]
name = "w"
type = "io"
rw = "randread"
bs = "4k"
size = "1m"
runtime = "1s"
"#,
            image.display(),
            m.display()
        ),
    )
    .unwrap();
    p
}

/// A module that decompresses to 2 GiB of zeros: 64 MiB compressed once by
/// `tool`, the stream repeated 32 times (each tool reads concatenated
/// streams as one file).
fn bomb(tool: &str, to: &Path) {
    // gzip's ratio needs its best level; xz and zstd are quick at their fastest
    let level = if tool == "gzip" { "-9" } else { "-1" };
    let mut c = Command::new(tool)
        .args([level, "-c"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut w = c.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..64 {
            std::io::Write::write_all(&mut w, &zeros).unwrap();
        }
    });
    let out = c.wait_with_output().unwrap();
    feeder.join().unwrap();
    assert!(out.status.success());
    std::fs::write(to, out.stdout.repeat(32)).unwrap();
}

#[test]
fn bad_vm_settings_and_modules_are_refused_before_any_cell() {
    if !require_root_with(&["qemu-system-x86_64"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scratch = scratch_dir();
    let out = d.join("r.json");
    let mut cases = Vec::new();
    let mut case = |name: &str, m: &Path, vm: &str, want: String| {
        let p = module_plan(d, name, m, vm);
        let plan = p.to_str().unwrap().to_string();
        cases.push(refusal(
            &[
                "run",
                &plan,
                "--scratch-dir",
                scratch.path().to_str().unwrap(),
                "--output",
                &format!("json:{}", out.display()),
            ],
            want,
        ));
    };
    let good = modules_dir(d, "good");
    let at = |n: &str, line: usize| format!("{}:{line}", d.join(format!("{n}.toml")).display());
    case(
        "cpus",
        &good,
        "cpus = 256",
        format!("{}: cpus = 256: must be from 1 to 255", at("cpus", 5)),
    );
    // memory = "64t": more than any host here has
    case(
        "memory",
        &good,
        "memory = \"64t\"",
        format!("{}: memory = 64", at("memory", 5)),
    );
    // a module that is not a kernel object
    let text = modules_dir(d, "text");
    let ko = text.join("kernel/drivers/block/virtio_blk.ko");
    std::fs::write(&ko, b"#!/bin/sh\necho not a module\n").unwrap();
    case(
        "text",
        &text,
        "",
        format!("{}: module {} is not a kernel module", at("text", 2), ko.display()),
    );
    // no virtio modules and no modules.builtin
    let empty = d.join("empty");
    std::fs::create_dir(&empty).unwrap();
    case(
        "empty",
        &empty,
        "",
        format!(
            "{}: modules {} has no virtio_pci module",
            at("empty", 2),
            empty.display()
        ),
    );
    // module bombs: small files that decompress to 2 GiB
    for (tool, ext) in [("xz", "xz"), ("zstd", "zst"), ("gzip", "gz")] {
        if !have(tool) {
            continue;
        }
        let m = modules_dir(d, &format!("bomb-{ext}"));
        let f = m.join(format!("kernel/drivers/block/virtio_blk.ko.{ext}"));
        bomb(tool, &f);
        assert!(std::fs::metadata(&f).unwrap().len() < 8 << 20);
        case(
            &format!("bomb-{ext}"),
            &m,
            "",
            format!(
                "{}: module {} is larger than 64 MiB decompressed",
                at(&format!("bomb-{ext}"), 2),
                f.display()
            ),
        );
    }
    // a depends= chain of 60,000 links
    let chain = modules_dir(d, "chain");
    let obj = |deps: &str| {
        let mut v = vec![0u8; 64];
        v[..4].copy_from_slice(b"\x7fELF");
        v[4] = 2;
        v[16] = 1;
        v[18] = 62;
        v.extend_from_slice(format!("\0depends={deps}\0").as_bytes());
        v
    };
    let blk = chain.join("kernel/drivers/block");
    std::fs::write(blk.join("virtio_blk.ko"), obj("m0")).unwrap();
    for i in 0..60_000 {
        std::fs::write(blk.join(format!("m{i}.ko")), obj(&format!("m{}", i + 1))).unwrap();
    }
    case(
        "chain",
        &chain,
        "",
        format!(
            "{}: modules {}: the guest would load more than 256 modules",
            at("chain", 2),
            chain.display()
        ),
    );
    expect_refusals(&cases, &[&out]);
    // nothing made: no work directory, no image, no temporary file
    assert!(
        scratch_leftovers(scratch.path()).is_empty(),
        "{:?}",
        scratch_leftovers(scratch.path())
    );
}

/// `/sys/block/DISK/queue/NAME` of a loop device, the scheduler as its active one.
fn queue_attrs(dev: &str) -> Vec<(String, String)> {
    let disk = dev.trim_start_matches("/dev/");
    [
        "scheduler",
        "nr_requests",
        "wbt_lat_usec",
        "max_sectors_kb",
        "rotational",
        "read_ahead_kb",
    ]
    .iter()
    .filter_map(|n| {
        let v = std::fs::read_to_string(format!("/sys/block/{disk}/queue/{n}")).ok()?;
        let v = v.trim();
        let v = v
            .split_whitespace()
            .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
            .unwrap_or(v);
        Some((n.to_string(), v.to_string()))
    })
    .collect()
}

#[test]
fn queue_settings_a_sigkilled_fslab_left_are_put_back_by_cleanup() {
    if !require_root_with(&["losetup"]) {
        return;
    }
    let lo = LoopDev::new(128);
    let before = queue_attrs(&lo.dev);
    let get = |n: &str| before.iter().find(|(k, _)| k == n).unwrap().1.clone();
    let disk = lo.dev.trim_start_matches("/dev/").to_string();
    let offered = std::fs::read_to_string(format!("/sys/block/{disk}/queue/scheduler")).unwrap();
    let offered = offered.replace(['[', ']'], "");
    let sched = ["mq-deadline", "none", "kyber", "bfq"]
        .into_iter()
        .find(|s| *s != get("scheduler") && offered.split_whitespace().any(|o| o == *s))
        .expect("a loop device offers a second scheduler");
    let ra = if get("read_ahead_kb") == "64" { 256 } else { 64 };
    let nr = if get("nr_requests") == "32" { 16 } else { 32 };
    let rot = get("rotational") != "1";
    let dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let plan = dir.path().join("q.toml");
    std::fs::write(
        &plan,
        format!(
            "[[filesystem]]\nname = \"q\"\ntype = \"raw\"\ndevice = \"{}\"\nscheduler = \"{sched}\"\n\
             read_ahead_kb = {ra}\nnr_requests = {nr}\nrotational = {rot}\n\
             [[workload]]\ntype = \"io\"\nrw = \"randread\"\nsize = \"8m\"\nruntime = \"60s\"\n",
            lo.dev
        ),
    )
    .unwrap();
    let mut child = Command::new(fslab_path())
        .args([
            "run",
            plan.to_str().unwrap(),
            "--allow-device",
            "--quiet",
            "--scratch-dir",
        ])
        .arg(scratch.path())
        .args(["--output", &format!("json:{}", dir.path().join("r.json").display())])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // the cell runs once its settings are in place and recorded
    let t = std::time::Instant::now();
    let marker = loop {
        let m = std::fs::read_dir(scratch.path())
            .unwrap()
            .flatten()
            .find_map(|e| std::fs::read_to_string(e.path().join(".fslab-workdir")).ok())
            .filter(|m| m.contains("queue-set"));
        if let Some(m) = m {
            break m;
        }
        assert!(child.try_wait().unwrap().is_none(), "fslab ended before its cell ran");
        assert!(t.elapsed() < std::time::Duration::from_secs(120), "no cell started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    child.kill().unwrap(); // SIGKILL: no guard runs
    child.wait().unwrap();
    let during = queue_attrs(&lo.dev);
    assert_ne!(during, before, "the plan's settings were in place: {marker}");
    assert!(
        during.contains(&("scheduler".to_string(), sched.to_string())),
        "{during:?}"
    );

    // a planted look-alike in the same place, not root's: its records are not followed
    let fake = scratch.path().join("fslab-1-0");
    std::fs::create_dir(&fake).unwrap();
    let host = String::from_utf8(Command::new("hostname").output().unwrap().stdout).unwrap();
    let sys = std::fs::canonicalize(format!("/sys/class/block/{disk}")).unwrap();
    std::fs::write(
        fake.join(".fslab-workdir"),
        format!(
            "pid 1\nhost {}\nlock flock\nqueue {}/queue/read_ahead_kb 4\n",
            host.trim(),
            sys.display()
        ),
    )
    .unwrap();
    for p in [&fake, &fake.join(".fslab-workdir")] {
        std::os::unix::fs::lchown(p, Some(65534), Some(65534)).unwrap();
    }

    let out = fslab().args(["cleanup"]).arg(scratch.path()).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(
        queue_attrs(&lo.dev),
        before,
        "every attribute fslab changed is back: {stdout}{stderr}"
    );
    assert!(stdout.contains("put back"), "{stdout}");
    assert!(stderr.contains("not this user's own"), "{stderr}");
    assert!(
        scratch_leftovers(scratch.path()).is_empty(),
        "{:?}",
        scratch_leftovers(scratch.path())
    );
}
