//! Block devices: consent, and refusal of devices that hold data.

use crate::util::*;
use std::io::Read;

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
    for (fs, what) in [("ext4", "ext2/3/4"), ("xfs", "XFS")] {
        let lo = LoopDev::new(320);
        lo.mkfs(fs);
        let before = head(&lo.dev);
        for args in [&["--rw", "randwrite"][..], &["--precondition"][..]] {
            let out = io_on(&lo.dev, &[&["--allow-device"], args].concat());
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{fs} {args:?}: {err}");
            assert!(
                err.contains(&format!("its first blocks carry an {what} filesystem")),
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
