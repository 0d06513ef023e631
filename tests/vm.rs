//! Kernels as a plan dimension (issue 24): cells under Debian's kernels in
//! QEMU virtual machines, beside the host's. The kernels are Debian's cloud
//! packages, fetched by examples/fetch-kernels.sh (apt-get download,
//! dpkg-deb -x) into $FSLAB_KERNELS (default /var/cache/fslab/kernels).
//! Tests never fetch them (.ci/run does, once).
//! Failure tests use the guest's test hooks (`fslab.test=panic|hang` on the
//! kernel command line, through FSLAB_VM_APPEND) and `accel = "tcg"`, so no
//! probe boot runs.

use crate::util::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// QEMU processes with a file open under `dir` (the test's own scratch
/// directory): fslab gives QEMU its files as descriptors, so its command
/// line names none of them.
fn qemus_under(dir: &Path) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if !cmd.contains("qemu-system") {
                return None;
            }
            let under = std::fs::read_dir(e.path().join("fd"))
                .ok()?
                .flatten()
                .any(|f| std::fs::read_link(f.path()).is_ok_and(|t| t.starts_with(dir)));
            under.then_some(cmd)
        })
        .collect()
}

fn plan(dir: &Path, kernels: &str, vm: &str, runtime: &str) -> PathBuf {
    let p = dir.join("plan.toml");
    std::fs::write(
        &p,
        format!(
            r#"name = "vm-test"
repeat = 1
kernels = [{kernels}]

[vm]
cpus = 1
memory = "1g"
{vm}

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
runtime = "{runtime}"
"#
        ),
    )
    .unwrap();
    p
}

fn kernel_entry(name: &str, d: &Path) -> String {
    format!(
        r#"{{ name = "{name}", image = "{}", modules = "{}" }}"#,
        d.join("vmlinuz").display(),
        d.join("modules").display()
    )
}

fn run(plan: &Path, scratch: &Path, json: &Path, append: &str) -> std::process::Output {
    std::process::Command::new(fslab_path())
        .args([
            "run",
            plan.to_str().unwrap(),
            "--scratch-dir",
            scratch.to_str().unwrap(),
        ])
        .args(["--output", &format!("json:{}", json.display())])
        .env("FSLAB_VM_APPEND", append)
        .output()
        .unwrap()
}

fn cells(j: &Value) -> &Vec<Value> {
    j["cells"].as_array().unwrap()
}

#[test]
fn a_guest_cell_runs_under_its_kernel_and_reads_as_a_host_cell_does() {
    let Some(k) = debian_kernel("6.12") else { return };
    let dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let p = plan(dir.path(), &format!("{}, \"host\"", kernel_entry("6.12", &k)), "", "1s");
    let json = dir.path().join("r.json");
    let out = run(&p, scratch.path(), &json, "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{}: {err}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    let j = read_json(&json);
    crate::schema::assert_valid("a result with a guest cell", &j);
    let c = cells(&j);
    assert_eq!(c.len(), 2, "{j}");
    // the arms run in a random order: the cells by their kernel
    let of = |k: &str| c.iter().find(|x| x["lab"]["kernel"]["name"] == k).unwrap();
    let (guest, host) = (of("6.12"), of("host"));
    assert!(guest["error"].is_null(), "{}", guest["error"]);
    assert_eq!(guest["name"], "6.12/randread");
    let gk = &guest["lab"]["kernel"];
    assert_eq!(gk["name"], "6.12");
    assert!(gk["release"].as_str().unwrap().starts_with("6.12."), "{gk}");
    let vm = &gk["vm"];
    assert!(["kvm", "tcg"].contains(&vm["accel"].as_str().unwrap()), "{vm}");
    assert_eq!(vm["cpus"], 1);
    assert_eq!(vm["memory_bytes"], 1u64 << 30);
    assert!(vm["disk"].as_str().unwrap().contains("cache=none"), "{vm}");
    assert_eq!(vm["guest"]["kernel"], gk["release"]);
    let (boot, over) = (
        vm["boot_to_result_ns"].as_u64().unwrap(),
        vm["overhead_ns"].as_u64().unwrap(),
    );
    assert!(boot > over && over > 0, "boot to result {boot} ns, overhead {over} ns");
    if vm["accel"] == "tcg" {
        assert!(vm["emulated"].as_bool().unwrap());
        let w = guest["warnings"].to_string();
        assert!(w.contains("emulated"), "{w}");
    }
    // the guest measured its own virtio disk, with the same figures as the host's cell
    assert_eq!(guest["target"]["device"], "/dev/vda", "{}", guest["target"]);
    assert_eq!(guest["target"]["fs_type"], "ext4");
    let reads = guest["directions"][0]["ops"].as_u64().unwrap();
    assert!(reads > 0, "{}", guest["directions"]);
    // the host's cell names the running kernel and no VM
    let uname = std::process::Command::new("uname").arg("-r").output().unwrap();
    assert_eq!(
        host["lab"]["kernel"]["release"],
        String::from_utf8_lossy(&uname.stdout).trim()
    );
    assert!(host["lab"]["kernel"]["vm"].is_null());
    // boot to result is said per cell
    assert!(err.contains("boot to result"), "{err}");
    // compare and report treat the guest's cell as any other
    let cmp = fslab().args(["compare", json.to_str().unwrap()]).output().unwrap();
    let text = String::from_utf8_lossy(&cmp.stdout);
    assert!(cmp.status.success(), "{}", String::from_utf8_lossy(&cmp.stderr));
    assert!(text.contains("ext4@6.12") && text.contains("ext4@host"), "{text}");
    assert!(text.contains("kernel 6.12."), "{text}");
    let html = dir.path().join("r.html");
    let rep = fslab()
        .args(["report", json.to_str().unwrap(), "-o", html.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(rep.status.success(), "{}", String::from_utf8_lossy(&rep.stderr));
    assert!(std::fs::read_to_string(&html).unwrap().contains("ext4@6.12"));
    assert!(
        scratch_leftovers(scratch.path()).is_empty(),
        "{:?}",
        scratch_leftovers(scratch.path())
    );
    assert!(qemus_under(scratch.path()).is_empty());
}

#[test]
fn a_guest_that_panics_fails_its_cell_with_the_console_tail_and_the_others_run() {
    let Some(k) = debian_kernel("6.12") else { return };
    let dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let p = plan(
        dir.path(),
        &format!("{}, \"host\"", kernel_entry("6.12", &k)),
        "accel = \"tcg\"\ntimeout = \"5m\"",
        "1s",
    );
    let json = dir.path().join("r.json");
    let out = run(&p, scratch.path(), &json, "fslab.test=panic");
    let j = read_json(&json);
    let c = cells(&j);
    assert_eq!(c.len(), 2, "{j}");
    // the arms run in a random order: the cells by their kernel
    let of = |k: &str| c.iter().find(|x| x["lab"]["kernel"]["name"] == k).unwrap();
    let (guest, host) = (of("6.12"), of("host"));
    let e = guest["error"].as_str().unwrap_or_default();
    assert!(e.contains("the guest kernel panicked"), "{e}");
    assert!(e.contains("Kernel panic"), "the console's tail: {e}");
    assert!(host["error"].is_null(), "the host's cell ran: {}", host["error"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        scratch_leftovers(scratch.path()).is_empty(),
        "{:?}",
        scratch_leftovers(scratch.path())
    );
    assert!(qemus_under(scratch.path()).is_empty());
}

#[test]
fn a_guest_that_hangs_fails_at_its_timeout_and_leaves_nothing() {
    let Some(k) = debian_kernel("6.12") else { return };
    let dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let p = plan(
        dir.path(),
        &kernel_entry("6.12", &k),
        "accel = \"tcg\"\ntimeout = \"60s\"",
        "1s",
    );
    let json = dir.path().join("r.json");
    let t = Instant::now();
    let out = run(&p, scratch.path(), &json, "fslab.test=hang");
    let took = t.elapsed();
    let j = read_json(&json);
    let e = cells(&j)[0]["error"].as_str().unwrap_or_default().to_string();
    assert!(e.contains("no result within 1m"), "{e}");
    // a busy machine may not have booted the guest to its init by then:
    // the tail is the kernel's own lines
    assert!(
        e.contains("the guest's console ended with:\n    ["),
        "the console's tail: {e}"
    );
    assert!(took >= Duration::from_secs(60), "{took:?}");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        scratch_leftovers(scratch.path()).is_empty(),
        "{:?}",
        scratch_leftovers(scratch.path())
    );
    assert!(qemus_under(scratch.path()).is_empty());
}

/// Starts `fslab run` on a hanging guest and waits until the guest is up.
fn start_hanging(p: &Path, scratch: &Path, json: &Path) -> std::process::Child {
    let mut child = std::process::Command::new(fslab_path())
        .args(["run", p.to_str().unwrap(), "--scratch-dir", scratch.to_str().unwrap()])
        .args(["--output", &format!("json:{}", json.display())])
        .env("FSLAB_VM_APPEND", "fslab.test=hang")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // the guest is up and hanging: its console says so
    let t = Instant::now();
    loop {
        let up = std::fs::read_dir(scratch).unwrap().flatten().any(|e| {
            std::fs::read_to_string(e.path().join("console.log"))
                .map(|c| c.contains("hanging (fslab.test=hang)"))
                .unwrap_or(false)
        });
        if up {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "fslab ended before the guest was up"
        );
        assert!(t.elapsed() < Duration::from_secs(300), "the guest never came up");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!qemus_under(scratch).is_empty(), "QEMU runs");
    child
}

#[test]
fn a_sigkilled_fslab_leaves_no_vm_and_cleanup_removes_its_files() {
    let Some(k) = debian_kernel("6.12") else { return };
    let dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let p = plan(
        dir.path(),
        &kernel_entry("6.12", &k),
        "accel = \"tcg\"\ntimeout = \"10m\"",
        "1s",
    );
    let json = dir.path().join("r.json");
    let mut child = start_hanging(&p, scratch.path(), &json);
    child.kill().unwrap();
    child.wait().unwrap();
    // QEMU's parent-death signal ends it with fslab
    let t = Instant::now();
    while !qemus_under(scratch.path()).is_empty() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{:?}",
            qemus_under(scratch.path())
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !scratch_leftovers(scratch.path()).is_empty(),
        "SIGKILL leaves the work directory"
    );
    let out = fslab()
        .args(["cleanup", scratch.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        scratch_leftovers(scratch.path()).is_empty(),
        "{:?}",
        scratch_leftovers(scratch.path())
    );
}

#[test]
fn ctrl_c_during_a_guest_cell_stops_its_vm_and_cleans_up() {
    let Some(k) = debian_kernel("6.12") else { return };
    let dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let p = plan(
        dir.path(),
        &kernel_entry("6.12", &k),
        "accel = \"tcg\"\ntimeout = \"10m\"",
        "1s",
    );
    let json = dir.path().join("r.json");
    let child = start_hanging(&p, scratch.path(), &json);
    let out = signal_and_wait(child, libc::SIGINT);
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(read_json(&json)["interrupted"].as_bool().unwrap());
    assert!(
        qemus_under(scratch.path()).is_empty(),
        "{:?}",
        qemus_under(scratch.path())
    );
    assert!(
        scratch_leftovers(scratch.path()).is_empty(),
        "{:?}",
        scratch_leftovers(scratch.path())
    );
}

#[test]
fn bad_kernel_input_is_refused_in_one_line() {
    if !require_root_with(&["mkfs.ext4"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let write = |name: &str, text: &str| {
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let fs =
        "[[filesystem]]\nname = \"e\"\ntype = \"ext4\"\n[[workload]]\nname = \"w\"\ntype = \"io\"\nruntime = \"1s\"\n";
    let missing = write(
        "missing.toml",
        &format!("kernels = [{{ name = \"x\", image = \"/nonexistent/vmlinuz\" }}]\n{fs}"),
    );
    let unknown = write(
        "unknown.toml",
        &format!("kernels = [{{ name = \"x\", img = \"/boot/x\" }}]\n{fs}"),
    );
    let accel = write(
        "accel.toml",
        &format!("kernels = [\"host\"]\n[vm]\naccel = \"hvf\"\n{fs}"),
    );
    let twice = write("twice.toml", &format!("kernels = [\"host\", \"host\"]\n{fs}"));
    let image = write("image", "not a kernel");
    let dirplan = write(
        "dir.toml",
        &format!(
            "kernels = [{{ name = \"x\", image = \"{image}\" }}]\n[[filesystem]]\nname = \"d\"\ntype = \"dir\"\npath = \"{}\"\n[[workload]]\nname = \"w\"\ntype = \"io\"\nruntime = \"1s\"\n",
            d.display()
        ),
    );
    expect_usage(&["run", &missing, "--kernel", "/nonexistent/bzImage"], "--kernel");
    expect_usage(&["run", &missing], "missing.toml:1");
    expect_usage(&["run", &unknown], "unknown.toml:1: unknown key 'img' in a kernel");
    expect_usage(&["run", &accel], "accel.toml:3: accel: unknown 'hvf'");
    expect_usage(&["run", &twice], "twice.toml:1: two kernels are named 'host'");
    expect_usage(&["run", &dirplan], "which a kernel in a virtual machine cannot reach");
    expect_usage(
        &["run", &missing, "--kernel", &format!("{image},color=red")],
        "--kernel",
    );
}

#[test]
fn a_plan_device_runs_under_a_guest_and_a_mounted_one_is_refused_untouched() {
    let Some(k) = debian_kernel("6.12") else { return };
    if !require_root_with(&["losetup"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let write = |name: &str, dev: &str, repeat: u32| {
        let p = dir.path().join(name);
        std::fs::write(
            &p,
            format!(
                "repeat = {repeat}\nkernels = [{}]\n[vm]\ncpus = 1\nmemory = \"1g\"\naccel = \"tcg\"\n\
                 [[filesystem]]\nname = \"ext4\"\ntype = \"ext4\"\ndevice = \"{dev}\"\n\
                 [[workload]]\nname = \"w\"\ntype = \"io\"\nrw = \"randread\"\nsize = \"8m\"\nruntime = \"1s\"\n",
                kernel_entry("6.12", &k)
            ),
        )
        .unwrap();
        p
    };
    // fslab's claim on the device and its record of what the guest made:
    // the second cell on the same device is not refused as someone else's
    let blank = LoopDev::new(256);
    let p = write("dev.toml", &blank.dev, 2);
    let json = dir.path().join("r.json");
    let out = std::process::Command::new(fslab_path())
        .args(["run", p.to_str().unwrap(), "--allow-device", "--scratch-dir"])
        .arg(scratch.path())
        .args(["--output", &format!("json:{}", json.display())])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j = read_json(&json);
    for c in cells(&j) {
        assert!(c["error"].is_null(), "{}", c["error"]);
        assert!(c["lab"]["kernel"]["vm"]["disk"].as_str().unwrap().contains(&blank.dev));
    }
    assert_eq!(cells(&j).len(), 2);
    // a mounted device with data on it: refused before any VM, its data as it was
    let used = LoopDev::new(64);
    used.mkfs("ext4");
    let m = Mount::new(&used.dev, "ext4", "");
    let decoy = m.path().join("decoy");
    std::fs::write(&decoy, b"someone else's data").unwrap();
    let p = write("mounted.toml", &used.dev, 1);
    let out = std::process::Command::new(fslab_path())
        .args([
            "run",
            p.to_str().unwrap(),
            "--allow-device",
            "--force-overwrite",
            "--scratch-dir",
        ])
        .arg(scratch.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&decoy).unwrap(), b"someone else's data");
    assert!(qemus_under(scratch.path()).is_empty());
    assert!(
        scratch_leftovers(scratch.path()).is_empty(),
        "{:?}",
        scratch_leftovers(scratch.path())
    );
}
