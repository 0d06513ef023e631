//! Disclosure: a root-only file named as a job, plan, load or result file
//! (or included by a job file) is refused without its contents reaching
//! stdout, stderr or any file; names reach the terminal without control
//! characters; and the messages of issue 31's item 10.

use crate::util::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The mark on every line of the secret files: none of it may be shown.
const MARK: &str = "4711";

/// A root-only (0600) file with `text`, every line of which carries [`MARK`].
fn secret(dir: &Path, name: &str, text: &str) -> String {
    assert!(text.lines().all(|l| l.contains(MARK)));
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    p.display().to_string()
}

/// Runs each `fslab ARGS` and checks: exit code 2, one line on stderr
/// containing `want`, nothing on stdout, [`MARK`] in neither, no file in
/// `outputs` created, and no file under `dir` but the secrets holding the
/// mark. Every failing case is listed.
fn refused_without_secret(dir: &Path, secrets: &[&str], cases: &[(Vec<String>, &str)], outputs: &[&Path]) {
    let mut failures = Vec::new();
    for (args, want) in cases {
        let out = fslab().args(args).output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        let mut why = Vec::new();
        if out.status.code() != Some(2) {
            why.push(format!("exit status {}, not 2", out.status));
        }
        if stderr.lines().count() != 1 || !stderr.contains(want) {
            why.push(format!("not one line with '{want}'"));
        }
        if !stdout.is_empty() {
            why.push("stdout not empty".into());
        }
        if stdout.contains(MARK) || stderr.contains(MARK) {
            why.push("THE SECRET WAS SHOWN".into());
        }
        for p in outputs {
            if p.exists() {
                why.push(format!("created {}", p.display()));
                let _ = std::fs::remove_file(p);
            }
        }
        for e in walkdir(dir) {
            let is_secret = secrets.iter().any(|s| Path::new(s) == e);
            if !is_secret && std::fs::read(&e).is_ok_and(|b| String::from_utf8_lossy(&b).contains(MARK)) {
                why.push(format!("{} holds the secret", e.display()));
            }
        }
        if !why.is_empty() {
            failures.push(format!("{args:?}: {}; stderr: {stderr:?}", why.join(", ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every regular file under `dir`.
fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                todo.push(e.path());
            } else if ft.is_file() {
                out.push(e.path());
            }
        }
    }
    out
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_root_only_file_read_as_any_input_is_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let target = d.join("target");
    std::fs::create_dir(&target).unwrap();
    let t = target.to_str().unwrap();
    // /etc/shadow's shape, and shapes that reach further into each parser
    let shadow = secret(
        d,
        "shadow",
        "SECRET-4711:$6$salt$hash:19000:0:99999:7:::\nroot-4711:*:19000:0:99999:7:::\n",
    );
    let spaced = secret(d, "spaced", "SECRET-4711 hunter2 x\n4711SECRET y z\n");
    let digits = secret(d, "digits", "4711SECRET y z\n");
    let json_str = secret(d, "json_str", "\"SECRET-4711:hunter2\"\n");
    let json_ver = secret(d, "json_ver", "{\"schema_version\": \"SECRET-4711\"}\n");
    let json_field = secret(
        d,
        "json_field",
        "{\"schema_version\": 2, \"fslab_version\": \"x\", \"host\": \"SECRET-4711\"}\n",
    );
    let json_enum = secret(
        d,
        "json_enum",
        "{\"schema_version\": 2, \"cells\": [{\"kind\": \"SECRET-4711\"}]}\n",
    );
    // a job file including it, and a plan whose replay workload loads it
    let job = d.join("inc.fio");
    std::fs::write(&job, format!("[a]\nrw=read\nsize=1m\ninclude {shadow}\n")).unwrap();
    let job_s = job.display().to_string();
    let plan_with = |name: &str, loadfile: &str| {
        let p = d.join(name);
        std::fs::write(
            &p,
            format!("[[filesystem]]\ntype = \"dir\"\npath = \"{t}\"\n[[workload]]\ntype = \"replay\"\nloadfile = \"{loadfile}\"\n"),
        )
        .unwrap();
        p.display().to_string()
    };
    let plan_shadow = plan_with("p1.toml", &shadow);
    let plan_spaced = plan_with("p2.toml", &spaced);
    let out_json = d.join("out.json");
    let out_html = d.join("out.html");
    let oj = format!("json:{}", out_json.display());
    let oh = out_html.to_str().unwrap();
    let fio_out = ["--output", out_json.to_str().unwrap()];
    let mut cases: Vec<(Vec<String>, &str)> = vec![
        // as a fio job file, and included by one
        (
            args(&[&["fio", &shadow][..], &fio_out].concat()),
            "shadow:1: line 1 is not a fio option",
        ),
        (args(&[&["fio", &spaced][..], &fio_out].concat()), "spaced:1:"),
        (
            args(&[&["fio", &job_s][..], &fio_out].concat()),
            "shadow:1: line 1 is not a fio option",
        ),
        // as a plan, and as a plan's load file
        (args(&["run", &shadow, "--output", &oj]), "shadow:1:"),
        (args(&["run", &spaced, "--output", &oj]), "spaced:1:"),
        (args(&["run", &plan_shadow, "--output", &oj]), "shadow:1: no operations"),
        (
            args(&["run", &plan_spaced, "--output", &oj]),
            "spaced:1: not a load-file operation",
        ),
        // as a load file
        (
            args(&["replay", "--target", t, &shadow, "--output", &oj]),
            "shadow:1: no operations",
        ),
        (
            args(&["replay", "--target", t, &spaced, "--output", &oj]),
            "spaced:1: not a load-file operation",
        ),
        (
            args(&["replay", "--target", t, &digits, "--output", &oj]),
            "digits:1: the line starts with a digit",
        ),
    ];
    // as a result file, for report and compare
    for f in [&shadow, &spaced, &json_str, &json_ver, &json_field, &json_enum] {
        cases.push((args(&["report", f, "-o", oh]), "not"));
        cases.push((args(&["compare", f]), "not"));
    }
    let secrets = [&shadow, &spaced, &digits, &json_str, &json_ver, &json_field, &json_enum].map(|s| s.as_str());
    refused_without_secret(d, &secrets, &cases, &[&out_json, &out_html]);
}

/// A job file someone else wrote includes only what they could read: root
/// does not read a root-only file for them (and does not quote it either).
#[test]
fn an_include_reaches_only_what_the_job_files_owner_could_read() {
    if !require("root (chown)", is_root()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    let shadow = secret(d, "shadow", "SECRET-4711:$6$salt$hash:19000:0:99999:7:::\n");
    let theirs = d.join("theirs.fio");
    std::fs::write(&theirs, "[a]\nrw=read\nsize=1m\ninclude shadow\n").unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), None).unwrap();
    let out = d.join("out.txt");
    let cases = vec![(
        args(&["fio", theirs.to_str().unwrap(), "--output", out.to_str().unwrap()]),
        "theirs.fio:4: '",
    )];
    refused_without_secret(d, &[&shadow], &cases, &[&out]);
    let stderr = fslab().args(["fio", theirs.to_str().unwrap()]).output().unwrap().stderr;
    assert!(
        String::from_utf8_lossy(&stderr).contains("owner (uid 65534) cannot read it"),
        "{}",
        String::from_utf8_lossy(&stderr)
    );
    // what they can read (world-readable) is included
    std::fs::write(d.join("shared.fio"), "bs=4k\n").unwrap();
    std::fs::write(&theirs, "[a]\nrw=read\nsize=1m\ninclude shared.fio\nbs=banana\n").unwrap();
    let stderr = fslab().args(["fio", theirs.to_str().unwrap()]).output().unwrap().stderr;
    assert!(
        String::from_utf8_lossy(&stderr).contains("theirs.fio:5"),
        "the include was read and the job file's own line judged: {}",
        String::from_utf8_lossy(&stderr)
    );
}

/// Issue 31 item 10: fio's `directory=` and `filename=` problems name the
/// option and its line (not `--target`), an unwritable `--profile-dir` is
/// refused before the run, and fslab fio's own flags after a command-line
/// job are fslab's (or refused clearly), not job options.
#[test]
fn fio_targets_profile_dirs_and_trailing_flags_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let target = d.join("target");
    std::fs::create_dir(&target).unwrap();
    let t = target.to_str().unwrap();
    let small = d.join("small");
    std::fs::write(&small, [0u8; 100]).unwrap();
    let job = |name: &str, text: &str| job_file(d, name, text).display().to_string();
    let nodir = job("nodir.fio", "[a]\nrw=read\nsize=1m\ndirectory=/nonexistent/fslab\n");
    let devnull = job("devnull.fio", "[a]\nrw=read\nsize=1m\ndirectory=/dev/null\n");
    let nofile = job("nofile.fio", "[a]\nrw=read\nsize=1m\nfilename=/nonexistent/fslab/f\n");
    let toobig = job(
        "toobig.fio",
        &format!("[a]\nrw=read\nsize=1m\nfilename={}\n", small.display()),
    );
    let out = d.join("out.txt");
    let o = out.to_str().unwrap();
    let json_x = format!("json:{}", d.join("x.json").display());
    let cli_job = ["fio", "--name=x", "--rw=read", "--size=1m", "--runtime=1"];
    let mut cases = vec![
        refusal(
            &["fio", &nodir, "--output", o],
            "nodir.fio:4: [a] directory: '/nonexistent/fslab'",
        ),
        refusal(
            &["fio", &devnull, "--output", o],
            "devnull.fio:4: [a] directory: '/dev/null' is not a directory",
        ),
        refusal(
            &["fio", &nofile, "--output", o],
            "nofile.fio:4: [a] filename: '/nonexistent/fslab'",
        ),
        refusal(
            &["fio", &toobig, "--output", o],
            "toobig.fio:3: [a] size: 1048576 bytes is more than the 100 bytes",
        ),
        refusal(
            &[&cli_job[..], &["--directory=/nonexistent/fslab", "--output", o]].concat(),
            "[x] directory: '/nonexistent/fslab'",
        ),
        // fslab's flags after a command-line job: fslab's, or refused saying why
        refusal(
            &[&cli_job[..], &["--directory", t, "--output", &json_x]].concat(),
            format!("--output: '{json_x}': fslab fio's --output is fio's, a file name"),
        ),
        refusal(
            &[&cli_job[..], &["--directory", t, "--profile-hz", "99"]].concat(),
            "--profile-hz: needs --profile",
        ),
        refusal(
            &[&cli_job[..], &["--directory", t, "--disturbed-cpu", "0"]].concat(),
            "--disturbed-cpu: '0'",
        ),
        // a profile directory fslab cannot write into, refused before the run
        refusal(
            &[
                "io",
                "--target",
                t,
                "--size",
                "1m",
                "--runtime",
                "1s",
                "--profile",
                "--profile-dir",
                "/proc/sys",
                "--output",
                &format!("json:{o}"),
            ],
            "--profile-dir: '/proc/sys' is on procfs",
        ),
    ];
    let _ro_mount = if is_root() && have("mount") {
        let m = Mount::new("tmpfs", "tmpfs", "ro,size=1m");
        cases.push(refusal(
            &[
                &cli_job[..],
                &[
                    "--directory",
                    t,
                    "--profile",
                    "--profile-dir",
                    m.path().to_str().unwrap(),
                    "--output",
                    o,
                ],
            ]
            .concat(),
            format!(
                "--profile-dir: '{}' is not a directory fslab can write",
                m.path().display()
            ),
        ));
        Some(m)
    } else {
        None
    };
    expect_refusals(&cases, &[&out, &d.join("x.json")]);
    // -q and --no-telemetry after the job are fslab fio's flags: the job runs
    let ran = fslab()
        .args(cli_job)
        .args(["--directory", t, "-q", "--no-telemetry", "--output", o])
        .output()
        .unwrap();
    assert_eq!(ran.status.code(), Some(0), "{}", String::from_utf8_lossy(&ran.stderr));
    assert!(
        std::fs::read_to_string(&out).unwrap().contains("x: (groupid="),
        "fio's text output"
    );
}

/// A result file's cells with `name` as their name, written to `path`.
fn result_named(path: &Path, name: &str) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/io.json");
    let mut j: serde_json::Value = serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
    for c in j["cells"].as_array_mut().unwrap() {
        c["name"] = name.into();
    }
    std::fs::write(path, serde_json::to_vec(&j).unwrap()).unwrap();
}

/// Control characters of a terminal (ESC, BEL, CR, a newline inside a
/// name) in `out`: any C0 byte but newline, or a C1 control.
fn control_chars(out: &str) -> Vec<char> {
    out.chars()
        .filter(|&c| (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c))
        .collect()
}

/// Issue 31 item 9: names reach the terminal with their control characters
/// escaped (\x1b), in every table format, in messages and in file labels.
#[test]
fn names_reach_the_terminal_without_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let evil = "evil\u{1b}[2J\u{1b}]0;owned\u{7}\rFORGED\nline \u{202e}kcab";
    let a = d.join("a.json");
    result_named(&a, evil);
    // a label (the file's name) with an escape in it
    let b = d.join("b\u{1b}[31m.json");
    result_named(&b, evil);
    for format in ["text", "plain", "markdown", "csv"] {
        let out = fslab()
            .args(["compare", "--format", format])
            .arg(&a)
            .arg(&b)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        // CSV quotes a field with a newline, as CSV does: that newline is data
        let bad: Vec<char> = control_chars(&text);
        assert!(bad.is_empty(), "{format}: {bad:?} in:\n{text}");
        assert!(
            text.contains("\\x1b[2J") && text.contains("\\x1b[31m"),
            "{format}:\n{text}"
        );
        if format != "csv" {
            assert!(
                text.contains("\\x0aline"),
                "a name's newline is escaped in a table: {format}\n{text}"
            );
        }
    }
    // a refusal quoting a job name and a value: one line, escaped
    let job = job_file(d, "j.fio", "[a\u{1b}[2Jb]\nrw=read\nbs=\u{1b}]0;x\u{7}\n");
    let out = fslab().args(["fio"]).arg(&job).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(control_chars(&err).is_empty() && err.contains("[a\\x1b[2Jb]"), "{err}");
    // a run's own table (fio's section name as the cell's name)
    let target = d.join("t");
    std::fs::create_dir(&target).unwrap();
    let out = fslab()
        .args([
            "fio",
            "--name=x\u{1b}[2J\u{9b}y",
            "--rw=read",
            "--size=64k",
            "--runtime=1",
            "--directory",
        ])
        .arg(&target)
        .output()
        .unwrap();
    let (so, se) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert_eq!(out.status.code(), Some(0), "{se}");
    assert!(
        control_chars(&so).is_empty() && control_chars(&se).is_empty(),
        "{so}\n{se}"
    );
    assert!(so.contains("x\\x1b[2J\\u009by"), "{so}");
}

/// Issue 31 item 9: `fslab compare` of a result whose name is megabytes
/// long is linear in the name. The text tables show at most
/// MAX_CELL_CHARS of a name (comfy_table's layout of a cell is more than
/// linear in its length), and plain's wrap no longer drains a long word
/// from its front; so the output is small whatever the name's length, and
/// the run ends far within the (very generous) bound, where a 50 MB name
/// took more than 30 s before.
#[test]
fn compare_of_a_five_megabyte_name_is_quick_and_small() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let long = "n".repeat(5 << 20);
    result_named(&a, &format!("{long} {long}"));
    for format in ["text", "plain", "markdown"] {
        let t = std::time::Instant::now();
        let out = fslab().args(["compare", "--format", format]).arg(&a).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(
            out.stdout.len() < 64 << 10,
            "{format}: {} bytes: a table shows a name cut short",
            out.stdout.len()
        );
        // a table this wide is laid out as records, headed by the name cut short
        assert!(String::from_utf8_lossy(&out.stdout).contains("more)"), "{format}");
        assert!(
            t.elapsed() < std::time::Duration::from_secs(120),
            "{format}: {:?}",
            t.elapsed()
        );
    }
}
