//! `fslab examples list|show|write`: the example plans an installed binary
//! carries are the files of examples/ byte for byte (so the built-in copy
//! cannot go stale), they are written as plans `fslab run` reads, and
//! `write` never replaces or follows what is already in the directory.

use crate::util::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Every file of the tree's examples/: (name, path).
fn tree_examples() -> Vec<(String, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    v.sort();
    assert!(v.len() >= 7, "{v:?}");
    v
}

fn stdout_of(args: &[&str]) -> Vec<u8> {
    let out = fslab().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn every_example_file_is_listed_and_shown_as_in_the_tree() {
    let list = String::from_utf8(stdout_of(&["examples", "list"])).unwrap();
    // a name starts each entry; its description's further lines are indented
    let listed: Vec<&str> = list
        .lines()
        .filter(|l| !l.starts_with(' '))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    let tree = tree_examples();
    let names: Vec<&str> = tree.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(listed, names, "{list}");
    for l in list.lines() {
        assert!(l.chars().count() <= 80, "over 80 columns: {l}");
        // each name has its description beside it
        if !l.starts_with(' ') {
            assert!(l.split_whitespace().count() > 2, "no description: {l}");
        }
    }
    // the description is the first sentence of the file's leading comment
    let words = list.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(
            "seed-create-under-stream.toml Seed experiment 4: create latency under a streaming writer. seed-"
        ),
        "{list}"
    );
    for (name, path) in &tree {
        let want = std::fs::read(path).unwrap();
        assert_eq!(stdout_of(&["examples", "show", name]), want, "{name}");
        if let Some(stem) = name.strip_suffix(".toml") {
            assert_eq!(stdout_of(&["examples", "show", stem]), want, "{stem}");
        }
    }
}

#[test]
fn written_examples_are_the_files_and_parse_as_plans() {
    let tmp = tempfile::tempdir().unwrap();
    // a directory that does not exist yet is made
    let dir = tmp.path().join("ex");
    let shown = String::from_utf8(stdout_of(&["examples", "write", dir.to_str().unwrap()])).unwrap();
    let tree = tree_examples();
    assert_eq!(shown.lines().count(), tree.len(), "{shown}");
    let mut plans = 0;
    for (name, path) in &tree {
        let written = dir.join(name);
        assert!(shown.contains(written.to_str().unwrap()), "{shown}");
        assert_eq!(std::fs::read(&written).unwrap(), std::fs::read(path).unwrap(), "{name}");
        let mode = std::fs::metadata(&written).unwrap().permissions().mode();
        if name.ends_with(".sh") {
            assert!(mode & 0o100 != 0, "{name} is not executable: {mode:o}");
            let bash = std::process::Command::new("bash")
                .arg("-n")
                .arg(&written)
                .output()
                .unwrap();
            assert!(
                bash.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&bash.stderr)
            );
        }
        if name.ends_with(".toml") {
            let text = std::fs::read_to_string(&written).unwrap();
            let p = written.to_str().unwrap();
            let plan = fslab::plan::LabPlan::parse(p, &text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!plan.workloads.is_empty() && !plan.filesystems.is_empty(), "{name}");
            plans += 1;
        }
    }
    assert!(plans >= 6);
    // nothing but the examples (no temporary file left)
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), tree.len());
    // written again: refused, the first file named, nothing changed
    let out = fslab()
        .args(["examples", "write", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&tree[0].0) && err.lines().count() == 1, "{err}");
}

/// Refused (exit 2, one line naming the file), with nothing written in
/// the directory and `keep` as it was.
fn expect_refused_in(dir: &Path, taken: &str, keep: &dyn Fn()) {
    let before: Vec<_> = listing(dir);
    let out = fslab()
        .args(["examples", "write", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&dir.join(taken).display().to_string()), "{err}");
    assert!(out.stdout.is_empty());
    assert_eq!(listing(dir), before, "a refused write writes nothing");
    keep();
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn write_replaces_no_file_and_follows_no_symlink() {
    let tmp = tempfile::tempdir().unwrap();
    // a user's file of the same name
    let d1 = tmp.path().join("d1");
    std::fs::create_dir(&d1).unwrap();
    let mine = d1.join("seed-raw-vs-fs.toml");
    std::fs::write(&mine, "mine\n").unwrap();
    expect_refused_in(&d1, "seed-raw-vs-fs.toml", &|| {
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "mine\n");
    });
    // a symbolic link to a file elsewhere, and a dangling one
    let d2 = tmp.path().join("d2");
    std::fs::create_dir(&d2).unwrap();
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "victim\n").unwrap();
    std::os::unix::fs::symlink(&victim, d2.join("seed-samba-xattr.toml")).unwrap();
    expect_refused_in(&d2, "seed-samba-xattr.toml", &|| {
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "victim\n");
    });
    let d3 = tmp.path().join("d3");
    std::fs::create_dir(&d3).unwrap();
    let nowhere = tmp.path().join("nowhere");
    std::os::unix::fs::symlink(&nowhere, d3.join("fetch-kernels.sh")).unwrap();
    expect_refused_in(&d3, "fetch-kernels.sh", &|| {
        assert!(!nowhere.exists(), "the dangling link was followed");
        assert!(d3.join("fetch-kernels.sh").is_symlink());
    });
    // DIR itself a file
    let f = tmp.path().join("file");
    std::fs::write(&f, "x").unwrap();
    expect_usage(&["examples", "write", f.to_str().unwrap()], "is not a directory");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "x");
}

#[test]
fn bad_example_input_exits_2_in_one_line() {
    expect_usage(&["examples", "show", "nosuch"], "no example 'nosuch'");
    expect_usage(&["examples", "show"], "NAME");
    expect_usage(&["examples", "write"], "DIR");
    expect_usage(&["examples", "frobnicate"], "frobnicate");
    // as a bare `fslab`: the command's help, on stderr, exit 2
    let out = fslab().arg("examples").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("fslab examples list"));
}

/// A write that fails part-way (the filesystem fills up) removes the files
/// it made and nothing else: a decoy beside them keeps its bytes.
#[test]
fn a_failed_write_removes_only_what_it_made() {
    if !require_root_with(&["mount", "umount"]) {
        return;
    }
    // three pages: the decoy and two examples fit, the third does not
    let m = Mount::new("tmpfs", "tmpfs", "size=12k");
    let decoy = m.path().join("decoy.toml");
    let bytes = b"# a user's plan\nname = \"mine\"\n".repeat(20);
    std::fs::write(&decoy, &bytes).unwrap();
    let out = fslab()
        .args(["examples", "write", m.path().to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("writing '"), "{err}");
    assert_eq!(listing(m.path()), ["decoy.toml"], "{err}");
    assert_eq!(std::fs::read(&decoy).unwrap(), bytes, "the decoy changed");
}
