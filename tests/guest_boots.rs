//! One guest per kernel across its cells (issue 35, item 5): a kernel's
//! VM boots once and runs all of that kernel's cells, each on a fresh
//! filesystem. The boots are counted from the result file: each guest cell
//! carries the guest kernel's own boot ID (`/proc/sys/kernel/random/boot_id`,
//! a new random UUID at every boot), so one ID per kernel is one boot.
//! The kernels are Debian's cloud packages (examples/fetch-kernels.sh);
//! tests never fetch them.

use crate::util::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn kernel_entry(name: &str, d: &Path) -> String {
    format!(
        r#"{{ name = "{name}", image = "{}", modules = "{}" }}"#,
        d.join("vmlinuz").display(),
        d.join("modules").display()
    )
}

/// `fslab run PLAN` with its JSON result in `json`.
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

/// A short io workload every filesystem here runs (tmpfs has no O_DIRECT).
const WORKLOAD: &str = r#"
[[workload]]
name = "w"
type = "io"
rw = "randread"
bs = "4k"
size = "4m"
direct = false
runtime = "1s"
"#;

fn cells(j: &Value) -> &Vec<Value> {
    j["cells"].as_array().unwrap()
}

fn kernel_of(c: &Value) -> &str {
    c["lab"]["kernel"]["name"].as_str().unwrap()
}

/// QEMU processes with a file open under `dir` (none must outlive a run).
fn qemus_under(dir: &Path) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmd).contains("qemu-system")
                && std::fs::read_dir(e.path().join("fd"))
                    .map(|fds| {
                        fds.flatten()
                            .any(|f| std::fs::read_link(f.path()).is_ok_and(|t| t.starts_with(dir)))
                    })
                    .unwrap_or(false)
        })
        .count()
}

fn assert_clean(scratch: &Path) {
    assert!(
        scratch_leftovers(scratch).is_empty(),
        "{:?}",
        scratch_leftovers(scratch)
    );
    assert_eq!(qemus_under(scratch), 0, "a QEMU outlived the run");
}

#[test]
fn two_vm_kernels_boot_once_each_for_all_their_cells() {
    let (Some(k61), Some(k612)) = (debian_kernel("6.1"), debian_kernel("6.12")) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let p = dir.path().join("plan.toml");
    std::fs::write(
        &p,
        format!(
            "name = \"boots\"\nrepeat = 2\nkernels = [{}, {}, \"host\"]\n\
             [vm]\ncpus = 1\nmemory = \"1g\"\n\
             [[filesystem]]\nname = \"ext4\"\ntype = \"ext4\"\nsize = \"128m\"\n\
             [[filesystem]]\nname = \"tmpfs\"\ntype = \"tmpfs\"\nsize = \"64m\"\n{WORKLOAD}",
            kernel_entry("6.1", &k61),
            kernel_entry("6.12", &k612)
        ),
    )
    .unwrap();
    let json = dir.path().join("r.json");
    let out = run(&p, scratch.path(), &json, "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {err}", out.status);
    let j = read_json(&json);
    crate::schema::assert_valid("a result with guests running several cells", &j);
    let c = cells(&j);
    // 3 kernels x 2 filesystems x 1 workload x 2 repeats, every one ran
    assert_eq!(c.len(), 12, "{j}");
    for cell in c {
        assert!(cell["error"].is_null(), "{}: {}", cell["name"], cell["error"]);
        assert!(cell["directions"][0]["ops"].as_u64().unwrap() > 0, "{}", cell["name"]);
    }
    let mut seen = BTreeSet::new();
    for cell in c {
        let l = &cell["lab"];
        seen.insert((
            kernel_of(cell).to_string(),
            l["filesystem"].to_string(),
            l["repeat"].as_u64(),
        ));
    }
    assert_eq!(seen.len(), 12, "each kernel x filesystem x repeat once: {seen:?}");
    let host_boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let mut boots: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for k in ["6.1", "6.12"] {
        let mine: Vec<&Value> = c.iter().filter(|x| kernel_of(x) == k).collect();
        assert_eq!(mine.len(), 4, "{k}");
        let vms: Vec<&Value> = mine.iter().map(|x| &x["lab"]["kernel"]["vm"]).collect();
        let ids: BTreeSet<&str> = vms.iter().map(|v| v["boot_id"].as_str().unwrap()).collect();
        // one boot ID: the guest kernel booted once for all four cells
        assert_eq!(ids.len(), 1, "{k}: boots {ids:?}");
        let id = *ids.iter().next().unwrap();
        assert_eq!(id.len(), 36, "a kernel's UUID: {id}");
        assert_ne!(id, host_boot.trim(), "the guest's own boot, not the host's");
        boots.insert(k, ids);
        // the boot's record in each cell: its duration, the cells sharing
        // it in the order they ran, and each cell's place among them
        let names: Vec<&Value> = vms[0]["boot_cells"].as_array().unwrap().iter().collect();
        assert_eq!(names.len(), 4, "{}", vms[0]);
        let boot_ns = vms[0]["boot_ns"].as_u64().unwrap();
        assert!(boot_ns > 0);
        let mut by_order: Vec<&&Value> = mine.iter().collect();
        by_order.sort_by_key(|x| x["lab"]["order"].as_u64().unwrap());
        for (n, x) in by_order.iter().enumerate() {
            let vm = &x["lab"]["kernel"]["vm"];
            assert_eq!(vm["boot_place"].as_u64(), Some(n as u64 + 1), "{vm}");
            assert_eq!(vm["boot_ns"].as_u64(), Some(boot_ns));
            assert_eq!(&vm["boot_cells"][n], &x["name"], "{vm}");
            assert!(vm["overhead_ns"].as_u64().unwrap() < vm["boot_to_result_ns"].as_u64().unwrap());
        }
        // only the first cell's cost holds the boot
        let first = &by_order[0]["lab"]["kernel"]["vm"];
        assert!(first["boot_to_result_ns"].as_u64().unwrap() > boot_ns);
        // the ext4 cells made a fresh filesystem each, on the guest's disk
        for x in mine.iter().filter(|x| x["lab"]["filesystem"] == "ext4") {
            assert_eq!(x["target"]["fs_type"], "ext4");
            assert!(
                x["target"]["device"].as_str().unwrap().starts_with("/dev/vd"),
                "{}",
                x["target"]
            );
        }
        // a guest's cells ran one after another: consecutive places in the run
        let orders: Vec<u64> = by_order.iter().map(|x| x["lab"]["order"].as_u64().unwrap()).collect();
        assert_eq!(orders[3] - orders[0], 3, "{k}: {orders:?}");
    }
    assert_ne!(boots["6.1"], boots["6.12"]);
    // every cell has its own place in the run
    let orders: BTreeSet<u64> = c.iter().map(|x| x["lab"]["order"].as_u64().unwrap()).collect();
    assert_eq!(orders, (1..=12).collect());
    for k in ["6.1", "6.12"] {
        assert_eq!(
            err.matches(&format!("booting kernel {k} once for 4 cells")).count(),
            1,
            "{err}"
        );
    }
    assert!(err.contains("one boot ("), "{err}");
    // the host's cells ran on the host
    assert!(c
        .iter()
        .filter(|x| kernel_of(x) == "host")
        .all(|x| x["lab"]["kernel"]["vm"].is_null()));
    assert_clean(scratch.path());
}

#[test]
fn a_cell_that_fails_in_a_guest_keeps_the_others_of_its_boot() {
    let Some(k) = debian_kernel("6.12") else { return };
    let dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let p = dir.path().join("plan.toml");
    // two ext4 filesystems (two disks of one guest) and a tmpfs whose
    // mount the guest's kernel refuses
    std::fs::write(
        &p,
        format!(
            "repeat = 1\nkernels = [{}]\n[vm]\ncpus = 1\nmemory = \"1g\"\naccel = \"tcg\"\ntimeout = \"5m\"\n\
             [[filesystem]]\nname = \"a\"\ntype = \"ext4\"\nsize = \"96m\"\n\
             [[filesystem]]\nname = \"b\"\ntype = \"ext4\"\nsize = \"128m\"\nmkfs = [\"-b\", \"1024\"]\n\
             [[filesystem]]\nname = \"bad\"\ntype = \"tmpfs\"\nmount = \"huge=bogus\"\n{WORKLOAD}",
            kernel_entry("6.12", &k)
        ),
    )
    .unwrap();
    let json = dir.path().join("r.json");
    let out = run(&p, scratch.path(), &json, "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let j = read_json(&json);
    let c = cells(&j);
    assert_eq!(c.len(), 3, "{j}");
    let by_fs = |f: &str| c.iter().find(|x| x["lab"]["filesystem"] == f).unwrap();
    let bad = by_fs("bad");
    // the guest's own failure of that cell: its mount, under the guest's kernel
    assert!(
        bad["error"].as_str().is_some_and(|e| e.contains("mount -t tmpfs")),
        "{}",
        bad["error"]
    );
    let (a, b) = (by_fs("a"), by_fs("b"));
    for x in [a, b] {
        assert!(x["error"].is_null(), "{}", x["error"]);
        assert!(x["directions"][0]["ops"].as_u64().unwrap() > 0);
    }
    // one boot, two disks: each filesystem on its own
    let id = |x: &Value| x["lab"]["kernel"]["vm"]["boot_id"].as_str().unwrap().to_string();
    assert_eq!(id(a), id(b));
    assert_eq!(id(bad), id(a), "the failed cell ran in the same boot");
    assert_ne!(a["target"]["device"], b["target"]["device"]);
    assert_eq!(err.matches("booting kernel 6.12 once for 3 cells").count(), 1, "{err}");
    assert_clean(scratch.path());
}

#[test]
fn a_guest_that_dies_keeps_its_finished_cells_and_fails_the_rest() {
    let Some(k) = debian_kernel("6.12") else { return };
    let dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let p = dir.path().join("plan.toml");
    std::fs::write(
        &p,
        format!(
            "repeat = 3\nkernels = [{}]\n[vm]\ncpus = 1\nmemory = \"1g\"\naccel = \"tcg\"\ntimeout = \"5m\"\n\
             [[filesystem]]\nname = \"t\"\ntype = \"tmpfs\"\nsize = \"64m\"\n{WORKLOAD}",
            kernel_entry("6.12", &k)
        ),
    )
    .unwrap();
    let json = dir.path().join("r.json");
    // the guest's test hook: a kernel panic right after its first result
    let out = run(&p, scratch.path(), &json, "fslab.test=panic-after-first");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let j = read_json(&json);
    let c = cells(&j);
    assert_eq!(c.len(), 3, "{j}");
    let mut c: Vec<&Value> = c.iter().collect();
    c.sort_by_key(|x| x["lab"]["order"].as_u64().unwrap());
    assert!(c[0]["error"].is_null(), "the finished cell is kept: {}", c[0]["error"]);
    assert!(c[0]["directions"][0]["ops"].as_u64().unwrap() > 0);
    for x in &c[1..] {
        let e = x["error"].as_str().unwrap_or_default();
        assert!(e.contains("the guest kernel panicked"), "{e}");
        assert!(e.contains("Kernel panic"), "the console's tail: {e}");
    }
    assert!(c[2]["error"].as_str().unwrap().contains("never started"));
    assert_clean(scratch.path());
}

#[test]
fn ctrl_c_in_a_guest_keeps_its_finished_cells_and_stops_the_vm() {
    let Some(k) = debian_kernel("6.12") else { return };
    let dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let p = dir.path().join("plan.toml");
    std::fs::write(
        &p,
        format!(
            "repeat = 2\nkernels = [{}]\n[vm]\ncpus = 1\nmemory = \"1g\"\naccel = \"tcg\"\ntimeout = \"10m\"\n\
             [[filesystem]]\nname = \"t\"\ntype = \"tmpfs\"\nsize = \"64m\"\n{WORKLOAD}",
            kernel_entry("6.12", &k)
        ),
    )
    .unwrap();
    let json = dir.path().join("r.json");
    // the guest's test hook: its init hangs after its first result
    let child = std::process::Command::new(fslab_path())
        .args([
            "run",
            p.to_str().unwrap(),
            "--scratch-dir",
            scratch.path().to_str().unwrap(),
        ])
        .args(["--output", &format!("json:{}", json.display())])
        .env("FSLAB_VM_APPEND", "fslab.test=hang-after-first")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    // the first result is in the result file once the guest hangs
    loop {
        let hung = std::fs::read_dir(scratch.path()).unwrap().flatten().any(|e| {
            std::fs::read_to_string(e.path().join("console.log")).is_ok_and(|c| c.contains("hanging (fslab.test=hang)"))
        });
        if hung && json.exists() && cells(&read_json(&json)).len() == 1 {
            break;
        }
        assert!(
            t.elapsed() < std::time::Duration::from_secs(300),
            "the guest never hung"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(qemus_under(scratch.path()), 1, "the guest runs");
    let out = signal_and_wait(child, libc::SIGINT);
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let j = read_json(&json);
    assert!(j["interrupted"].as_bool().unwrap());
    let c = cells(&j);
    assert_eq!(c.len(), 1, "the finished cell, and no failure for the stopped one: {j}");
    assert!(c[0]["error"].is_null(), "{}", c[0]["error"]);
    assert!(c[0]["directions"][0]["ops"].as_u64().unwrap() > 0);
    assert_clean(scratch.path());
}

#[test]
fn an_adaptive_run_boots_once_per_segment_of_repeats() {
    let Some(k) = debian_kernel("6.12") else { return };
    let dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let p = dir.path().join("plan.toml");
    // looks after repeats 2 and 3: the repeats 1-2 in one boot, 3 in another
    std::fs::write(
        &p,
        format!(
            "repeat = {{ min = 2, max = 3 }}\nkernels = [{}, \"host\"]\n[vm]\ncpus = 1\nmemory = \"1g\"\naccel = \"tcg\"\n\
             [[filesystem]]\nname = \"t\"\ntype = \"tmpfs\"\nsize = \"64m\"\n{WORKLOAD}",
            kernel_entry("6.12", &k)
        ),
    )
    .unwrap();
    let json = dir.path().join("r.json");
    let out = run(&p, scratch.path(), &json, "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {err}", out.status);
    let j = read_json(&json);
    let ran = j["lab"]["decision"]["repeats_run"].as_u64().unwrap();
    assert!((2..=3).contains(&ran), "{}", j["lab"]["decision"]);
    let guest: Vec<&Value> = cells(&j).iter().filter(|x| kernel_of(x) == "6.12").collect();
    assert_eq!(guest.len() as u64, ran);
    let id_of = |rep: u64| {
        guest
            .iter()
            .find(|x| x["lab"]["repeat"].as_u64() == Some(rep))
            .map(|x| x["lab"]["kernel"]["vm"]["boot_id"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(id_of(1), id_of(2), "repeats 1 and 2 share the first segment's boot");
    if ran == 3 {
        assert_ne!(id_of(2), id_of(3), "the next segment boots again");
    }
    let boots = err.matches("booting kernel 6.12 once for").count() as u64;
    assert_eq!(boots, ran - 1, "{err}");
    assert_clean(scratch.path());
}

#[test]
fn filesystems_on_one_plan_device_share_its_one_disk_in_the_guest() {
    let Some(k) = debian_kernel("6.12") else { return };
    if !require_root_with(&["losetup"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let dev = LoopDev::new(256);
    let p = dir.path().join("plan.toml");
    // two filesystems on one device, as on the host one after the other:
    // one claim, one disk of the guest, a fresh mkfs per cell
    std::fs::write(
        &p,
        format!(
            "repeat = 1\nkernels = [{}]\n[vm]\ncpus = 1\nmemory = \"1g\"\naccel = \"tcg\"\n\
             [[filesystem]]\nname = \"a\"\ntype = \"ext4\"\ndevice = \"{d}\"\n\
             [[filesystem]]\nname = \"b\"\ntype = \"ext4\"\nmkfs = [\"-b\", \"1024\"]\ndevice = \"{d}\"\n{WORKLOAD}",
            kernel_entry("6.12", &k),
            d = dev.dev
        ),
    )
    .unwrap();
    let json = dir.path().join("r.json");
    let out = std::process::Command::new(fslab_path())
        .args(["run", p.to_str().unwrap(), "--allow-device", "--scratch-dir"])
        .arg(scratch.path())
        .args(["--output", &format!("json:{}", json.display())])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j = read_json(&json);
    let c = cells(&j);
    assert_eq!(c.len(), 2, "{j}");
    for x in c {
        assert!(x["error"].is_null(), "{}", x["error"]);
        assert!(x["lab"]["kernel"]["vm"]["disk"].as_str().unwrap().contains(&dev.dev));
        assert_eq!(x["target"]["device"], c[0]["target"]["device"]);
    }
    assert_eq!(
        c[0]["lab"]["kernel"]["vm"]["boot_id"],
        c[1]["lab"]["kernel"]["vm"]["boot_id"]
    );
    assert_clean(scratch.path());
}
