//! Arithmetic that holds (issue 32): a device's share of fslab's latency
//! is a part of fslab's time, never above 100%, also when another process
//! writes to the disk under the loop device fslab measures. Where the
//! device's time is not fslab's alone the share is absent and the reason
//! is said, in the JSON and in the text.

use crate::util::*;
use fslab::model::Report;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

/// Every latency share of every cell: at most 100%, and a missing one says why.
fn check_shares(r: &Report) -> Vec<(String, String, Option<f64>, Option<String>)> {
    let mut seen = Vec::new();
    for s in r
        .cells
        .iter()
        .filter_map(|c| c.system.as_ref())
        .flat_map(|s| &s.latency_share)
    {
        let (dev, dir) = (s.device.as_str(), s.dir.name());
        if let Some(p) = s.share_pct {
            assert!((0.0..=100.0).contains(&p), "{dev} {dir}: share {p}% in {s:?}");
            assert!(s.unattributed.is_none(), "{s:?}");
        } else if s.ops > 0 && s.device_ios > 0 {
            assert!(s.unattributed.is_some(), "{dev} {dir}: no share and no reason: {s:?}");
        }
        seen.push((dev.to_string(), dir.to_string(), s.share_pct, s.unattributed.clone()));
    }
    seen
}

/// The other tenant's shell loop, ended with its whole process group (its
/// running dd too) when dropped, also when the test panics.
struct Tenant(std::process::Child);

impl Drop for Tenant {
    fn drop(&mut self) {
        // SAFETY: kill(2) of the process group this test started (pgid = its pid)
        unsafe {
            libc::kill(-(self.0.id() as i32), libc::SIGKILL);
        }
        let _ = self.0.wait();
    }
}

#[test]
fn foreign_writes_to_the_disk_under_a_loop_device_are_not_fslab_s_share() {
    if !require_root_with(&["losetup", "mkfs.ext4", "mount", "dd"]) {
        return;
    }
    let lo = LoopDev::new(256);
    lo.mkfs("ext4");
    let m = Mount::new(&lo.dev, "ext4", "");
    // the other tenant: direct writes to a file on the disk under the loop
    // device's image (both in the root filesystem's temporary directories)
    let other = tempfile::tempdir_in("/var/tmp").unwrap();
    // (256 MiB rewritten over and over: it writes for as long as fslab
    // runs, in bounded space; a process group of its own, ended whole)
    let foreign = other.path().join("foreign");
    let dd = Tenant(
        Command::new("sh")
            .arg("-c")
            .arg(format!(
                "while :; do dd if=/dev/zero of='{}' bs=1M count=256 oflag=direct conv=notrunc 2>/dev/null; done",
                foreign.display()
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap(),
    );
    let out_dir = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    // direct and buffered, reads and writes: each direction of each device
    for (i, direct) in [true, false].into_iter().enumerate() {
        let jp = out_dir.path().join(format!("r{i}.json"));
        let mut cmd = fslab();
        cmd.args(["io", "--target"])
            .arg(m.path())
            .args(["--rw", "randrw", "--size", "32m", "--runtime", "3s"])
            .args(["--output", "text", "--output", &format!("json:{}", jp.display())])
            .args(["--width", "300"]);
        if direct {
            cmd.arg("--direct");
        }
        let out = cmd.output().unwrap();
        runs.push((out, jp));
    }
    // the tenant ends before anything is asserted
    drop(dd);
    drop(other);
    let name = lo.dev.trim_start_matches("/dev/").to_string();
    for (out, jp) in runs {
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let seen = check_shares(&read_report(&jp));
        assert!(seen.iter().any(|s| s.0 == name), "no share for {name}: {seen:?}");
        // the disk under the image carried the tenant's gigabytes of writes:
        // its write time is not fslab's
        let below: Vec<_> = seen.iter().filter(|s| s.0 != name).collect();
        assert!(!below.is_empty(), "no device under {name}: {seen:?}");
        let w = below
            .iter()
            .find(|s| s.1 == "write")
            .unwrap_or_else(|| panic!("no write share below {name}: {seen:?}"));
        let why =
            w.3.as_deref()
                .unwrap_or_else(|| panic!("a write share beside dd's writes: {w:?}"));
        // said in the text too, under the share lines
        assert!(
            text.contains(&format!("— {} write: ", w.0)),
            "the reason for {} is not in the text:\n{text}",
            w.0
        );
        assert!(text.contains("(share —, see below)"), "{text}");
        eprintln!("{}: {why}", jp.display());
    }
}
