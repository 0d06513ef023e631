//! Where a meta cell's xattrs live (issue 21): FIEMAP with FIEMAP_FLAG_XATTR
//! on a sample of the created files, in the JSON (`cells[0].xattrs`) and one
//! line of the text report.

use crate::util::*;
use serde_json::Value;
use std::process::Command;

/// A loop device formatted with `mkfs ARGS`, mounted; undone on drop
/// (the mount before the device).
struct Fs {
    mount: Mount,
    _lo: LoopDev,
}

fn make_fs(fs: &str, args: &[&str], size_mib: u64) -> Fs {
    let lo = LoopDev::new(size_mib);
    let st = Command::new(format!("mkfs.{fs}"))
        .args(args)
        .arg(&lo.dev)
        .status()
        .unwrap();
    assert!(st.success(), "mkfs.{fs} {args:?}");
    Fs {
        mount: Mount::new(&lo.dev, fs, ""),
        _lo: lo,
    }
}

/// `fslab meta` with one xattr of `size` bytes on `target`: the cell's
/// xattr placement and the text report.
fn placement(target: &std::path::Path, size: usize) -> (Value, String) {
    let res = tempfile::tempdir().unwrap();
    let json = res.path().join("m.json");
    let text = res.path().join("m.txt");
    let xattr = format!("user.test:{size}");
    let o = fslab()
        .args(["meta", "--target", target.to_str().unwrap()])
        .args(["--files", "600", "--dirs", "3", "--jobs", "2", "--order", "seq"])
        .args(["--xattr", &xattr, "--quiet"])
        .args(["--output", &format!("json:{}", json.display())])
        .args(["--output", &format!("text:{}", text.display())])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j = read_json(&json);
    assert!(leftovers(target).is_empty());
    (j["cells"][0]["xattrs"].clone(), std::fs::read_to_string(&text).unwrap())
}

fn counts(x: &Value) -> [u64; 4] {
    ["sampled", "in_inode", "external", "none"].map(|k| x[k].as_u64().unwrap_or_else(|| panic!("{k}: {x}")))
}

#[test]
fn ext4_inode_size_decides_where_a_256_byte_xattr_lives() {
    if !require_root_with(&["losetup", "mkfs.ext4", "mount"]) {
        return;
    }
    // 256-byte inodes leave 96 bytes for in-inode xattrs: the value goes to
    // an external block; 512-byte inodes hold it
    let small = make_fs("ext4", &["-q", "-F", "-I", "256"], 64);
    let (x, text) = placement(small.mount.path(), 256);
    assert_eq!(counts(&x), [64, 0, 64, 0], "{x}");
    assert!(x.get("error").is_none(), "{x}");
    assert!(
        text.contains("xattrs: 64 of 64 sampled files keep them in an external block (FIEMAP)"),
        "{text}"
    );
    drop(small);
    let big = make_fs("ext4", &["-q", "-F", "-I", "512"], 64);
    let (x, text) = placement(big.mount.path(), 256);
    assert_eq!(counts(&x), [64, 64, 0, 0], "{x}");
    assert!(
        text.contains("xattrs: 64 of 64 sampled files keep them in the inode (FIEMAP)"),
        "{text}"
    );
}

#[test]
fn xfs_keeps_short_values_in_the_inode_and_256_bytes_outside() {
    if !require_root_with(&["losetup", "mkfs.xfs", "mount"]) {
        return;
    }
    // XFS reports its shortform (in-inode) attributes as no extent; a
    // shortform value must be under 255 bytes, so 256 bytes take a leaf
    // block whatever the inode size (xfs_bmap -a agrees)
    let fs = make_fs("xfs", &["-q", "-f", "-i", "size=2048"], 320);
    let (x, _) = placement(fs.mount.path(), 200);
    assert_eq!(counts(&x), [64, 64, 0, 0], "{x}");
    let (x, _) = placement(fs.mount.path(), 256);
    assert_eq!(counts(&x), [64, 0, 64, 0], "{x}");
}

#[test]
fn tmpfs_without_fiemap_reports_why_and_does_not_fail() {
    if !require_root_with(&["mount"]) {
        return;
    }
    let m = Mount::new("tmpfs", "tmpfs", "size=32m");
    let (x, text) = placement(m.path(), 64);
    assert_eq!(x["sampled"], 0, "{x}");
    let e = x["error"].as_str().unwrap_or_else(|| panic!("an error: {x}"));
    assert!(
        e.contains("on tmpfs") && e.contains("the filesystem has no fiemap"),
        "{e}"
    );
    assert!(text.contains("xattrs: where they live is unknown: FIEMAP"), "{text}");
}

#[test]
fn no_placement_without_xattrs() {
    let dir = tempfile::tempdir().unwrap();
    let res = tempfile::tempdir().unwrap();
    let json = res.path().join("m.json");
    let o = fslab()
        .args([
            "meta",
            "--target",
            dir.path().to_str().unwrap(),
            "--files",
            "50",
            "--quiet",
        ])
        .args(["--output", &format!("json:{}", json.display())])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(read_json(&json)["cells"][0].get("xattrs").is_none());
}

#[test]
fn lab_meta_cells_report_the_placement_too() {
    if !require_root_with(&["losetup", "mkfs.ext4", "mount"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("p.toml");
    std::fs::write(
        &plan,
        r#"name = "xattr-placement"
repeat = 1
[[filesystem]]
name = "ext4-256"
type = "ext4"
mkfs = "-I 256"
size = "64m"
[[filesystem]]
name = "ext4-512"
type = "ext4"
mkfs = "-I 512"
size = "64m"
[[workload]]
name = "x"
type = "meta"
files = 300
xattr = ["user.test:256"]
"#,
    )
    .unwrap();
    let (json, text) = (dir.path().join("r.json"), dir.path().join("r.txt"));
    let o = fslab()
        .current_dir(dir.path())
        .args(["run", plan.to_str().unwrap(), "--quiet", "--width", "300"])
        .args(["--output", &format!("json:{}", json.display())])
        .args(["--output", &format!("text:{}", text.display())])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j = read_json(&json);
    let by_name = |n: &str| {
        let c = j["cells"].as_array().unwrap().iter().find(|c| c["name"] == n);
        counts(&c.unwrap_or_else(|| panic!("no cell {n}"))["xattrs"])
    };
    assert_eq!(by_name("ext4-256/x"), [64, 0, 64, 0]);
    assert_eq!(by_name("ext4-512/x"), [64, 64, 0, 0]);
    let text = std::fs::read_to_string(&text).unwrap();
    assert!(
        text.contains("xattrs, ext4-256/x: 64 of 64 sampled files keep them in an external block (FIEMAP)"),
        "{text}"
    );
    assert!(
        text.contains("xattrs, ext4-512/x: 64 of 64 sampled files keep them in the inode (FIEMAP)"),
        "{text}"
    );
}
