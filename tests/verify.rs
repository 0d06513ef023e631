//! `fslab io --verify crc32c`: data written with headers and CRC32C is
//! checked on every read, in the same run or in a later `--verify-only` run;
//! every single-bit corruption of the file is caught, an intact file passes.

use crate::util::*;

fn flip(path: &std::path::Path, bit: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, bit / 8).unwrap();
    b[0] ^= 1 << (bit % 8);
    f.write_all_at(&b, bit / 8).unwrap();
}

#[test]
fn every_single_bit_corruption_is_detected_and_an_intact_file_passes() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = dir.path().join("v.dat");
    std::fs::File::create(&file).unwrap().set_len(1 << 20).unwrap();
    let f = file.to_str().unwrap();
    // write and check in one run, over a preconditioned (stamped) file
    let json = dir.path().join("w.json");
    fslab()
        .args([
            "io",
            "--target",
            f,
            "--rw",
            "randrw",
            "--verify",
            "crc32c",
            "--precondition",
            "--force-overwrite",
        ])
        .args(["--runtime", "300ms", "--quiet", "--output"])
        .arg(format!("json:{}", json.display()))
        .assert()
        .success();
    let j = read_json(&json);
    for d in j["cells"][0]["directions"].as_array().unwrap() {
        assert!(d["ops"].as_u64().unwrap() > 0);
        assert!(d["errors"].as_object().unwrap().is_empty(), "{d}");
    }
    let verify_only = |out: &std::path::Path| {
        fslab()
            .args(["io", "--target", f, "--verify-only", "--quiet", "--output"])
            .arg(format!("json:{}", out.display()))
            .output()
            .unwrap()
    };
    let out = dir.path().join("v.json");
    assert_eq!(verify_only(&out).status.code(), Some(0), "the intact file passes");
    assert_eq!(read_json(&out)["cells"][0]["directions"][0]["ops"], 256);
    let mut rng = fastrand::Rng::with_seed(7);
    for trial in 0..100 {
        let bit = rng.u64(0..(1u64 << 20) * 8);
        flip(&file, bit);
        let o = verify_only(&out);
        assert_eq!(
            o.status.code(),
            Some(1),
            "trial {trial}: bit {bit} flipped: a failed run"
        );
        let j = read_json(&out);
        let c = &j["cells"][0];
        assert_eq!(
            c["directions"][0]["errors"]["VERIFY_MISMATCH"], 1,
            "trial {trial}: bit {bit}"
        );
        let block = bit / 8 / 4096 * 4096;
        let w = c["warnings"][0].as_str().unwrap();
        assert!(w.contains(&format!("offset {block}:")), "trial {trial}: {w}");
        flip(&file, bit);
    }
    assert_eq!(verify_only(&out).status.code(), Some(0), "restored, it passes again");
}

#[test]
fn verification_refuses_what_it_cannot_check() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    expect_usage(
        &["io", "--target", t, "--verify", "md5"],
        "invalid value 'md5' for '--verify <METHOD>'",
    );
    expect_usage(
        &["io", "--target", t, "--verify", "crc32c", "--bs", "4k-16k"],
        "--verify: needs one block size",
    );
    expect_usage(
        &["io", "--target", t, "--verify", "crc32c", "--bs", "16"],
        "--verify: blocks of 16 bytes",
    );
    expect_usage(&["io", "--target", t, "--verify-only"], "--verify-only: '");
    expect_usage(
        &["io", "--target", t, "--verify-only", "--runtime", "1s"],
        "--verify-only: reads every block once",
    );
    let file = dir.path().join("f.dat");
    std::fs::write(&file, vec![0u8; 65536]).unwrap();
    expect_usage(
        &[
            "io",
            "--target",
            file.to_str().unwrap(),
            "--verify",
            "crc32c",
            "--force-overwrite",
            "--rw",
            "randrw",
        ],
        "--verify: reads of blocks this run did not write",
    );
    // a directory target lays its files out stamped: reads verify in the same run
    fslab()
        .args([
            "io",
            "--target",
            t,
            "--rw",
            "randread",
            "--verify",
            "crc32c",
            "--size",
            "4m",
            "--runtime",
            "200ms",
            "--quiet",
        ])
        .assert()
        .success();
}

#[test]
fn on_error_stop_ends_at_the_first_failure_and_continue_counts_them_all() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = dir.path().join("v.dat");
    std::fs::File::create(&file).unwrap().set_len(1 << 20).unwrap();
    let f = file.to_str().unwrap();
    fslab()
        .args([
            "io",
            "--target",
            f,
            "--rw",
            "write",
            "--verify",
            "crc32c",
            "--precondition",
            "--force-overwrite",
            "--quiet",
        ])
        .assert()
        .success();
    for block in [10u64, 100, 200] {
        flip(&file, block * 4096 * 8 + 999);
    }
    let run = |mode: &str| {
        let out = dir.path().join(format!("{mode}.json"));
        let o = fslab()
            .args([
                "io",
                "--target",
                f,
                "--verify-only",
                "--quiet",
                "--on-error",
                mode,
                "--output",
            ])
            .arg(format!("json:{}", out.display()))
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(1),
            "{mode}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        read_json(&out)
    };
    let j = run("continue");
    let d = &j["cells"][0]["directions"][0];
    assert_eq!(d["errors"]["VERIFY_MISMATCH"], 3);
    assert_eq!(d["ops"], 253, "every other block read fine");
    let j = run("stop");
    let c = &j["cells"][0];
    assert_eq!(c["directions"][0]["errors"]["VERIFY_MISMATCH"], 1);
    assert_eq!(
        c["directions"][0]["ops"], 10,
        "blocks 0..10 read fine, block 10 failed, then the stop"
    );
    assert!(
        c["warnings"].to_string().contains("--on-error stop"),
        "{}",
        c["warnings"]
    );
    assert_eq!(j["interrupted"], false, "a stop on error is not an interruption");
    expect_usage(
        &["io", "--target", f, "--on-error", "panic"],
        "invalid value 'panic' for '--on-error <WHAT>'",
    );
}
