//! Ctrl-C and SIGTERM: stop cleanly, write what was measured marked
//! interrupted, and leave no files behind.

use crate::util::*;
use std::time::Duration;

fn signal_after(sig: i32, wait: Duration, args: &[&str]) -> (std::process::Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out = format!("json:{}", dir.path().join("r.json").display());
    let mut all = vec!["io", "--target", dir.path().to_str().unwrap()];
    all.extend_from_slice(args);
    all.extend(["--output", &out]);
    let child = start(&all);
    std::thread::sleep(wait);
    (signal_and_wait(child, sig), dir)
}

#[test]
fn ctrl_c_writes_an_interrupted_result_and_removes_the_files() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let (out, dir) = signal_after(
            sig,
            Duration::from_millis(1500),
            &["--size", "8m", "--jobs", "2", "--runtime", "60s"],
        );
        assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
        let j = read_json(&dir.path().join("r.json"));
        assert_eq!(j["interrupted"], true);
        assert_eq!(j["cells"][0]["interrupted"], true);
        let ops = j["cells"][0]["directions"][0]["ops"].as_u64().unwrap();
        assert!(ops > 0, "what was measured before the stop is kept");
        let elapsed = j["cells"][0]["elapsed_ns"].as_u64().unwrap();
        assert!(elapsed < 5_000_000_000, "elapsed is up to the stop: {elapsed}");
        assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
    }
}

#[test]
fn ctrl_c_during_layout_leaves_nothing_and_a_valid_result() {
    // 4 GiB to lay out: the signal arrives long before it is done.
    let (out, dir) = signal_after(
        libc::SIGINT,
        Duration::from_millis(300),
        &["--size", "4g", "--runtime", "10s"],
    );
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let j = read_json(&dir.path().join("r.json"));
    assert_eq!(j["interrupted"], true);
    assert_eq!(j["cells"].as_array().unwrap().len(), 0);
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}
