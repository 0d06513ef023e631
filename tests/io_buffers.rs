//! What `fslab io` writes: non-repeating data by default (a compressor
//! finds nothing to take), or, asked for, a pattern or compressible blocks.

use crate::util::*;
use std::path::Path;

/// Writes a 16 MiB file with `fslab io --rw write` and the flags; its size
/// under `gzip -1` over its own size.
fn gzip_ratio(dir: &Path, bs: &str, flags: &[&str]) -> f64 {
    gzip_ratio_of(dir, 16 << 20, bs, flags)
}

/// `gzip_ratio` with a file of `size` bytes.
fn gzip_ratio_of(dir: &Path, size: usize, bs: &str, flags: &[&str]) -> f64 {
    let f = dir.join("data");
    std::fs::write(&f, vec![0u8; size]).unwrap();
    fslab()
        .args([
            "io",
            "--rw",
            "write",
            "--bs",
            bs,
            "--force-overwrite",
            "--quiet",
            "--target",
        ])
        .arg(&f)
        .args(flags)
        .assert()
        .success();
    let out = std::process::Command::new("gzip")
        .arg("-1")
        .arg("-c")
        .arg(&f)
        .output()
        .unwrap();
    assert!(out.status.success());
    out.stdout.len() as f64 / size as f64
}

#[test]
fn written_data_does_not_compress() {
    if !require("gzip", have("gzip")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // fslab io's default block size; shrinks by less than 5%
    let r = gzip_ratio(dir.path(), "4k", &[]);
    assert!(r > 0.95, "gzip -1 takes the file to {:.1}%", r * 100.0);
}

#[test]
fn large_block_writes_do_not_compress() {
    if !require("gzip", have("gzip")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // From 1 MiB up one buffer is written block after block; 64 MiB so the
    // file is mostly written after the scramble's 8 rounds (the raw offsets
    // fio scrambles in left 94.1% at 1m, 95.5% at 4m)
    for bs in ["64k", "1m", "4m"] {
        let r = gzip_ratio_of(dir.path(), 64 << 20, bs, &[]);
        assert!(r > 0.95, "bs {bs}: gzip -1 takes the file to {:.1}%", r * 100.0);
    }
}

#[test]
fn buffer_pattern_and_compress_percentage_are_written_as_asked() {
    if !require("gzip", have("gzip")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // every block the same pattern: next to nothing left
    let r = gzip_ratio(dir.path(), "4k", &["--buffer-pattern", "0xdeadbeef"]);
    assert!(r < 0.05, "pattern: {:.1}%", r * 100.0);
    let data = std::fs::read(dir.path().join("data")).unwrap();
    assert_eq!(&data[..8], &[0xde, 0xad, 0xbe, 0xef, 0xde, 0xad, 0xbe, 0xef]);
    // half of each block zeros: about half left
    let r = gzip_ratio(dir.path(), "4k", &["--buffer-compress-percentage", "50"]);
    assert!((0.4..0.65).contains(&r), "compress 50: {:.1}%", r * 100.0);
}

#[test]
fn bad_buffer_flags_exit_2_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    for (args, want) in [
        (&["--buffer-pattern", "%o"][..], "--buffer-pattern:"),
        (&["--buffer-pattern", "\"open"][..], "--buffer-pattern:"),
        (
            &["--buffer-compress-percentage", "101"][..],
            "--buffer-compress-percentage:",
        ),
        (
            &["--buffer-pattern", "0x01", "--verify", "crc32c"][..],
            "--buffer-pattern: conflicts with --verify",
        ),
    ] {
        expect_usage(&[&["io", "--target", t, "--rw", "write"][..], args].concat(), want);
    }
    assert!(leftovers(dir.path()).is_empty());
}
