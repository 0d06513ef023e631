//! The text table stays on stdout whatever is written to files (as
//! hyperfine keeps its terminal output whatever it exports): only another
//! format on stdout (`--output json`, `--output json:-`) or `--quiet`
//! replaces it. `fslab run --format` lays the printed tables out.

use crate::util::fslab;
use std::path::Path;

/// Two `dir` filesystems (no root needed) and one short meta workload.
fn plan(dir: &Path) -> String {
    let (a, b) = (dir.join("a"), dir.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let p = dir.join("plan.toml");
    std::fs::write(
        &p,
        format!(
            "[[filesystem]]\nname = \"first\"\ntype = \"dir\"\npath = \"{}\"\n\
             [[filesystem]]\nname = \"second\"\ntype = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"small\"\ntype = \"meta\"\nfiles = \"200\"\n",
            a.display(),
            b.display()
        ),
    )
    .unwrap();
    p.display().to_string()
}

/// `fslab ARGS... --output json:DIR/r.json`: its stdout, after checking it
/// succeeded and wrote a result file with at least one cell.
fn run_with_json(dir: &Path, args: &[&str], extra: &[&str]) -> String {
    let json = dir.join("r.json");
    let _ = std::fs::remove_file(&json);
    let out = fslab()
        .args(args)
        .arg("--output")
        .arg(format!("json:{}", json.display()))
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = crate::util::read_report(&json);
    assert!(!r.cells.is_empty(), "{args:?}: no cells in the result");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn io_prints_its_table_beside_a_json_file() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().to_str().unwrap();
    let io = ["io", "--target", t, "--size", "4m", "--runtime", "200ms"];
    let out = run_with_json(d.path(), &io, &[]);
    assert!(out.contains("IOPS") && out.contains("read"), "{out}");
    assert!(out.contains("host: "), "{out}");
    let quiet = run_with_json(d.path(), &io, &["--quiet"]);
    assert_eq!(quiet, "", "--quiet prints nothing on stdout");
}

#[test]
fn meta_prints_its_table_beside_a_json_file() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().to_str().unwrap();
    let meta = ["meta", "--target", t, "--files", "200"];
    let out = run_with_json(d.path(), &meta, &[]);
    assert!(out.contains("files/s") && out.contains("create"), "{out}");
    assert_eq!(run_with_json(d.path(), &meta, &["-q"]), "");
}

#[test]
fn run_prints_its_comparison_beside_a_json_file() {
    let d = tempfile::tempdir().unwrap();
    let p = plan(d.path());
    let out = run_with_json(d.path(), &["run", &p], &[]);
    assert!(
        out.contains("first (baseline)") && out.contains("second") && out.contains("seq-create ops/s"),
        "{out}"
    );
    assert_eq!(run_with_json(d.path(), &["run", &p], &["--quiet"]), "");
    // --format lays the same tables out for a mail: ASCII, 80 columns
    let plain = run_with_json(d.path(), &["run", &p], &["--format", "plain"]);
    assert!(
        plain.contains("first (baseline)") && plain.contains("seq-create ops/s ^"),
        "{plain}"
    );
    for l in plain.lines() {
        assert!(l.is_ascii() && l.chars().count() <= 80, "{l:?}");
    }
    assert!(!plain.contains('│'), "{plain}");
}

#[test]
fn a_text_file_does_not_take_the_text_off_stdout() {
    let d = tempfile::tempdir().unwrap();
    let txt = d.path().join("r.txt");
    let out = fslab()
        .args(["meta", "--files", "100", "--target"])
        .arg(d.path())
        .arg("--output")
        .arg(format!("text:{}", txt.display()))
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let file = std::fs::read_to_string(&txt).unwrap();
    assert!(file.contains("files/s"), "{file}");
    assert!(stdout.contains("files/s"), "{stdout}");
}

/// stdout given to JSON, as `json` or `json:-`: only JSON there.
#[test]
fn json_on_stdout_replaces_the_text() {
    let d = tempfile::tempdir().unwrap();
    for spec in ["json", "json:-"] {
        let out = fslab()
            .args(["meta", "--files", "100", "--output", spec, "--target"])
            .arg(d.path())
            .arg("--output")
            .arg(format!("csv:{}", d.path().join("r.csv").display()))
            .output()
            .unwrap();
        assert!(out.status.success(), "{spec}");
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{spec}: stdout is not only JSON: {e}"));
        assert_eq!(v["command"], "meta");
    }
}

/// The evidence of every flag of every cell of the result file at `json`,
/// but a flag whose evidence is part of its verdict's own (a noise bound's
/// evidence is the disturbance: the quiet line says the bound with it).
fn flag_evidence(json: &Path) -> Vec<String> {
    let r = crate::util::read_report(json);
    r.cells
        .iter()
        .flat_map(|c| c.verdict.iter())
        .flat_map(|v| v.flags.iter().filter(move |f| !v.evidence.contains(&f.evidence)))
        .map(|f| f.evidence.clone())
        .collect()
}

#[test]
fn quiet_warnings_keep_the_flags_in_the_json_and_count_them() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().to_str().unwrap();
    // under a second: the cell is always flagged too-short
    let io = ["io", "--target", t, "--size", "4m", "--runtime", "200ms"];
    // each flag's evidence on one line, as the JSON has it
    let loud = run_with_json(d.path(), &io, &["--width", "1000"]);
    let flags = flag_evidence(&d.path().join("r.json"));
    assert!(!flags.is_empty(), "a 200 ms cell has no flag");
    assert!(
        flags.iter().all(|f| loud.contains(f.as_str())),
        "{flags:?} not all in:\n{loud}"
    );
    let quiet = run_with_json(d.path(), &io, &["--quiet-warnings", "--width", "1000"]);
    let flags = flag_evidence(&d.path().join("r.json"));
    assert!(!flags.is_empty(), "--quiet-warnings removed the flags from the JSON");
    for f in &flags {
        assert!(
            !quiet.contains(f.as_str()),
            "'{f}' printed with --quiet-warnings:\n{quiet}"
        );
    }
    let verdict = quiet
        .lines()
        .find(|l| l.starts_with("verdict: "))
        .expect("no verdict line");
    assert!(
        verdict.contains("-bound") || verdict.contains("bound unknown"),
        "{verdict}"
    );
    assert!(verdict.ends_with(" in the JSON"), "{verdict}");
}

#[test]
fn a_plans_quiet_warnings_key_does_what_the_flag_does() {
    let d = tempfile::tempdir().unwrap();
    let p = plan(d.path());
    // the lab's system section wraps its lines at 100 columns
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let loud = squash(&run_with_json(d.path(), &["run", &p], &[]));
    let flags = flag_evidence(&d.path().join("r.json"));
    assert!(!flags.is_empty(), "two 200-file meta cells had no flag");
    assert!(loud.contains(&squash(&flags[0])), "'{}' not in:\n{loud}", flags[0]);
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, format!("quiet-warnings = true\n{text}")).unwrap();
    let quiet = squash(&run_with_json(d.path(), &["run", &p], &[]));
    let flags = flag_evidence(&d.path().join("r.json"));
    assert!(!flags.is_empty());
    for f in &flags {
        assert!(
            !quiet.contains(&squash(f)),
            "'{f}' printed with quiet-warnings = true:\n{quiet}"
        );
    }
    assert!(quiet.contains(" in the JSON"), "{quiet}");
}
