//! Result files: nothing is created or truncated before the command is
//! validated, unwritable outputs are refused up front, a run that measured
//! nothing leaves every file as it was, files are replaced whole; inputs that
//! are not regular files are refused at once instead of blocking.

use crate::util::*;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs fslab ARGS in `dir`; a run still going after `secs` is killed and fails the test.
fn within(dir: &Path, secs: u64, args: &[&str]) -> Output {
    let mut child = Command::new(fslab_path())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?}: still running after {secs} s (a hang)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Exit 2 with one line on stderr that has every piece of `want`.
fn assert_refused(o: &Output, args: &[&str], want: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: one line, got: {err}");
    for w in want {
        assert!(err.contains(w), "{args:?}: wanted '{w}' in: {err}");
    }
}

/// Every entry of `dir` with its bytes (directories as empty).
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    v.sort();
    v
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

#[test]
fn a_refused_run_leaves_existing_result_files_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = d.to_str().unwrap();
    std::fs::write(d.join("r.json"), b"{\"earlier\": \"results\"}\n").unwrap();
    std::fs::write(d.join("r.csv"), b"earlier,results\n").unwrap();
    std::fs::write(d.join("bad.toml"), b"[[workload]]\ntype = \"io\"\nbs = \"3x\"\n").unwrap();
    let before = snapshot(d);
    let outs = ["--output", "json:r.json", "--output", "csv:r.csv"];
    let cases: &[(&[&str], &str)] = &[
        (&["io", "--target", t, "--bs", "3x"], "--bs"),
        (&["io", "--target", "/nonexistent/x"], "--target"),
        // refused after validation, by the target's check: still nothing written
        (&["io", "--target", t, "--size", "900t"], "--size"),
        (&["meta", "--target", t, "--files", "none"], "--files"),
        (
            &["replay", "/nonexistent/load.txt", "--target", t],
            "/nonexistent/load.txt",
        ),
        (&["probe", "--target", t, "--phases", "idle"], "--phases"),
        (&["run", "bad.toml"], "bad.toml"),
        (&["run", "--target", t, "--runtime", "never"], "--runtime"),
    ];
    for (args, want) in cases {
        let all = [*args, &outs[..]].concat();
        let o = within(d, 30, &all);
        assert_refused(&o, &all, &[want]);
        assert_eq!(snapshot(d), before, "{all:?} changed a file in {t}");
    }
}

#[test]
fn outputs_that_cannot_be_written_are_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = d.to_str().unwrap();
    mkfifo(&d.join("fifo"));
    std::fs::create_dir(d.join("adir")).unwrap();
    std::os::unix::fs::symlink(d.join("elsewhere.json"), d.join("link.json")).unwrap();
    let fifo = d.join("fifo").display().to_string();
    let adir = d.join("adir").display().to_string();
    let link = d.join("link.json").display().to_string();
    let mut cases: Vec<(String, &str)> = vec![
        ("/dev/full".into(), "character device"),
        (fifo, "FIFO"),
        (adir, "directory"),
        (link, "symbolic link"),
        ("/dev/stdout".into(), "symbolic link"),
        ("/proc/version".into(), "cannot write"),
    ];
    // a read-only directory: as root only a read-only mount is one
    let ro = (is_root() && have("mount")).then(|| Mount::new("tmpfs", "tmpfs", "ro,size=1m"));
    if let Some(m) = &ro {
        cases.push((m.path().join("r.json").display().to_string(), "Read-only file system"));
    }
    for (path, why) in &cases {
        // a run that started would lay out 4 GiB: refused, it ends at once
        let out = format!("json:{path}");
        let args = ["io", "--target", t, "--size", "4g", "--quiet", "--output", &out];
        let o = within(d, 20, &args);
        assert_refused(&o, &args, &["--output", path, why]);
        assert!(leftovers(d).is_empty(), "{args:?}: a work directory was made");
    }
    // the other writers of files
    let res = d.join("a.json");
    std::fs::write(&res, "{}").unwrap();
    let args = ["report", res.to_str().unwrap(), "-o", "/dev/full"];
    assert_refused(&within(d, 20, &args), &args, &["--output", "/dev/full"]);
    let args = ["fio", "--name=x", "--rw=read", "--size=1m", "--output=/dev/full"];
    assert_refused(&within(d, 20, &args), &args, &["--output", "/dev/full"]);
    assert_eq!(std::fs::read_to_string(&res).unwrap(), "{}");
}

#[test]
fn two_outputs_to_one_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = d.to_str().unwrap();
    std::fs::write(d.join("r.json"), "mine").unwrap();
    std::fs::hard_link(d.join("r.json"), d.join("same.json")).unwrap();
    let abs = format!("html:{}", d.join("r.json").display());
    let pairs: &[[&str; 2]] = &[
        ["json:r.json", "csv:./r.json"],
        ["json:r.json", &abs],
        ["json:r.json", "text:same.json"],
    ];
    for [a, b] in pairs {
        let args = ["io", "--target", t, "--output", a, "--output", b];
        assert_refused(&within(d, 20, &args), &args, &["--output", b, "already the path of"]);
    }
    assert_eq!(std::fs::read_to_string(d.join("r.json")).unwrap(), "mine");
}

#[test]
fn fifos_given_as_inputs_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = d.to_str().unwrap();
    mkfifo(&d.join("in"));
    let cases: &[&[&str]] = &[
        &["run", "in"],
        &["fio", "in"],
        &["compare", "in"],
        &["report", "in", "-o", "page.html"],
        &["io", "--target", t, "--output", "json:in"],
    ];
    for args in cases {
        let o = within(d, 20, args);
        assert_refused(&o, args, &["'in'", "FIFO"]);
    }
    assert!(!d.join("page.html").exists());
}

#[test]
fn compare_and_report_refuse_unknown_layouts_and_one_file_given_twice() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = d.to_str().unwrap();
    let made = within(
        d,
        60,
        &[
            "io",
            "--target",
            t,
            "--engine",
            "null",
            "--runtime",
            "100ms",
            "--quiet",
            "--output",
            "json:a.json",
        ],
    );
    assert_eq!(made.status.code(), Some(0), "{}", String::from_utf8_lossy(&made.stderr));
    let mut j = read_json(&d.join("a.json"));
    j["schema_version"] = 99.into();
    std::fs::write(d.join("future.json"), j.to_string()).unwrap();
    j.as_object_mut().unwrap().remove("schema_version");
    std::fs::write(d.join("none.json"), j.to_string()).unwrap();
    std::fs::hard_link(d.join("a.json"), d.join("again.json")).unwrap();
    std::fs::write(d.join("page.html"), "earlier page").unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (&["a.json", "future.json"], &["future.json", "schema_version 99"]),
        (&["a.json", "none.json"], &["none.json", "schema_version"]),
        (&["a.json", "a.json"], &["a.json", "same file"]),
        (&["a.json", "./a.json"], &["./a.json", "same file"]),
        (&["a.json", "again.json"], &["again.json", "same file as 'a.json'"]),
    ];
    for (files, want) in cases {
        let args = [&["compare"][..], files].concat();
        assert_refused(&within(d, 20, &args), &args, want);
        let args = [&["report"][..], files, &["-o", "page.html"]].concat();
        assert_refused(&within(d, 20, &args), &args, want);
        assert_eq!(std::fs::read_to_string(d.join("page.html")).unwrap(), "earlier page");
    }
    // and a good one replaces the page whole, leaving nothing else
    let before: Vec<String> = snapshot(d).into_iter().map(|(n, _)| n).collect();
    let o = within(d, 20, &["report", "a.json", "-o", "page.html"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_to_string(d.join("page.html")).unwrap().contains("<html"));
    let after: Vec<String> = snapshot(d).into_iter().map(|(n, _)| n).collect();
    assert_eq!(after, before);
}

#[test]
fn a_failure_while_laying_out_writes_no_result_and_exits_1() {
    if !require_root_with(&["mount"]) {
        return;
    }
    // room for the work directory and its marker, not for the job's file
    let tiny = Mount::new("tmpfs", "tmpfs", "size=64m,nr_inodes=3");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for existing in [false, true] {
        if existing {
            std::fs::write(d.join("r.json"), "earlier").unwrap();
        }
        let before = snapshot(d);
        let args = [
            "io",
            "--target",
            tiny.path().to_str().unwrap(),
            "--size",
            "1m",
            "--quiet",
            "--output",
            "json:r.json",
        ];
        let o = within(d, 30, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("No space left"), "{err}");
        assert_eq!(
            snapshot(d),
            before,
            "nothing was measured: no file is written or changed"
        );
        assert!(leftovers(tiny.path()).is_empty(), "{:?}", leftovers(tiny.path()));
    }
}

#[test]
fn an_existing_result_file_is_replaced_whole_by_a_file_of_fslab_s_own() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = d.to_str().unwrap();
    std::fs::write(d.join("r.json"), "earlier").unwrap();
    std::fs::set_permissions(d.join("r.json"), std::fs::Permissions::from_mode(0o640)).unwrap();
    let o = within(
        d,
        60,
        &[
            "io",
            "--target",
            t,
            "--engine",
            "null",
            "--runtime",
            "100ms",
            "--quiet",
            "--output",
            "json:r.json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(read_json(&d.join("r.json"))["cells"].as_array().unwrap().len(), 1);
    // a new file of fslab's own: never the old file's mode (issue 31: a
    // planted 4777 became a setuid result), 0644 less the umask
    let mode = std::fs::metadata(d.join("r.json")).unwrap().permissions().mode();
    let umask = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .map(|v| u32::from_str_radix(v.trim(), 8).unwrap())
        .unwrap();
    assert_eq!(mode & 0o7777, 0o644 & !umask);
    let names: Vec<String> = snapshot(d).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["r.json"], "no temporary file is left");
}
