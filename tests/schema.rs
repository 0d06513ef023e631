//! The JSON Schema of the result file (docs/result.schema.json, made by
//! `fslab schema` from the model types): the checked-in file is the one the
//! code generates, and every result fslab writes validates against it: the
//! committed fixtures, and a fresh result of each command (io, meta, replay,
//! probe, fio's `--results`, run).
//!
//! The fixtures are schema 1, a layout the reader still takes but the
//! schema (which describes the current one) does not: each is checked to be
//! refused as it is (on its `schema_version`), and to validate once read
//! and written again, as `fslab compare` and `fslab report` see it.
//!
//! Each validation is done twice: against the schema as published (open:
//! a later fslab may add fields) and against a strict copy that refuses any
//! property the schema does not name, so a field written but not described
//! (a hand-written `Serialize` drifting from its schema) fails here.

use crate::util::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const REGENERATE: &str = "cargo run --release -- schema > docs/result.schema.json";

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn checked_in() -> Value {
    let p = repo("docs/result.schema.json");
    let text =
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e} (make it with `{REGENERATE}`)", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `schema` with `unevaluatedProperties: false` on every object schema that
/// names its properties, except the branches of a oneOf/anyOf/allOf: those
/// describe part of the object around them (a flattened enum), whose own
/// `unevaluatedProperties` sees what the branch evaluated.
fn strict(schema: &Value) -> Value {
    fn walk(v: &mut Value, branch: bool) {
        match v {
            Value::Object(m) => {
                if !branch && m.contains_key("properties") && !m.contains_key("additionalProperties") {
                    m.insert("unevaluatedProperties".into(), false.into());
                }
                for (k, sub) in m.iter_mut() {
                    let is_branches = matches!(k.as_str(), "oneOf" | "anyOf" | "allOf");
                    match sub {
                        Value::Array(items) if is_branches => items.iter_mut().for_each(|i| walk(i, true)),
                        _ => walk(sub, false),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| walk(i, false)),
            _ => {}
        }
    }
    let mut s = schema.clone();
    walk(&mut s, false);
    s
}

/// Every way `doc` breaks `schema`, one line each (empty: valid).
fn violations(schema: &Value, doc: &Value) -> Vec<String> {
    let v = jsonschema::validator_for(schema).expect("the schema compiles");
    v.iter_errors(doc)
        .take(100)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// `doc` (named `what`) validates against the schema, open and strict.
pub(crate) fn assert_valid(what: &str, doc: &Value) {
    let schema = checked_in();
    for (how, s) in [("schema", schema.clone()), ("strict schema", strict(&schema))] {
        let errs = violations(&s, doc);
        assert!(errs.is_empty(), "{what} breaks the {how}:\n{}", errs.join("\n"));
    }
}

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn the_checked_in_schema_is_the_generated_one() {
    let out = fslab().arg("schema").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let generated = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        generated,
        fslab::model::result_schema_text(),
        "`fslab schema` prints the model's schema"
    );
    let p = repo("docs/result.schema.json");
    let file = std::fs::read_to_string(&p).unwrap_or_default();
    assert!(
        file == generated,
        "docs/result.schema.json differs from the schema the model types give (a field changed?): \
         regenerate it with `{REGENERATE}` and review the diff"
    );
    // the hidden command stays out of the help
    let help = fslab().arg("--help").output().unwrap();
    assert!(!String::from_utf8_lossy(&help.stdout).contains("schema"));
}

/// The strict copy refuses what the open one lets through: an unnamed
/// property, at the top and inside a cell (so the strict checks below can fail).
#[test]
fn the_strict_schema_refuses_unknown_properties() {
    let schema = checked_in();
    let mut doc: Value = serde_json::from_str(&written(&fixture("io"))).unwrap();
    assert!(violations(&strict(&schema), &doc).is_empty());
    doc["cells"][0]["no_such_field"] = 1.into();
    doc["cells"][0]["target"]["neither"] = 1.into();
    assert!(violations(&schema, &doc).is_empty(), "the published schema is open");
    let errs = violations(&strict(&schema), &doc);
    assert!(errs.iter().any(|e| e.contains("no_such_field")), "{errs:?}");
    assert!(errs.iter().any(|e| e.contains("neither")), "{errs:?}");
    // and a wrong type is refused by both
    doc["cells"][0]["elapsed_ns"] = "soon".into();
    assert!(violations(&schema, &doc).iter().any(|e| e.contains("elapsed_ns")));
}

fn fixture(name: &str) -> PathBuf {
    repo("tests/fixtures").join(format!("{name}.json"))
}

/// A result file as fslab reads it and writes it again (schema 1 upgraded).
fn written(p: &Path) -> String {
    use fslab::report::{json::Json, Reporter};
    let text = std::fs::read_to_string(p).unwrap();
    let r = fslab::model::parse_report(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    String::from_utf8(Json.render(&r)).unwrap()
}

#[test]
fn every_fixture_validates_once_read() {
    let schema = checked_in();
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(repo("tests/fixtures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    fixtures.sort();
    assert!(fixtures.len() >= 5, "{fixtures:?}");
    for p in &fixtures {
        let name = p.display().to_string();
        let raw = read_json(p);
        if raw["schema_version"] != fslab::model::SCHEMA_VERSION {
            // an older layout: the schema names the one it describes
            let errs = violations(&schema, &raw);
            assert!(
                errs.iter().any(|e| e.contains("schema_version")),
                "{name}: schema_version {} passes the schema: {errs:?}",
                raw["schema_version"]
            );
        }
        let doc: Value = serde_json::from_str(&written(p)).unwrap();
        assert_valid(&format!("{name} (read and written again)"), &doc);
    }
}

/// A load file of every kind of line the fixtures' replay has.
const LOAD: &str = r#"Mkdir "\clients" NT_STATUS_OK
Deltree "\clients\client1" NT_STATUS_OK
Mkdir "\clients\client1" NT_STATUS_OK
NTCreateX "\clients\client1\f" 0x40 0x2 3 NT_STATUS_OK
WriteX 3 0 65536 65536 NT_STATUS_OK
ReadX 3 0 65536 65536 NT_STATUS_OK
QUERY_FILE_INFORMATION 3 258 NT_STATUS_OK
Close 3 NT_STATUS_OK
Unlink "\clients\client1\f" 0x6 NT_STATUS_OK
"#;

/// Runs `fslab ARGS` (which writes its result file to `out`) and returns it.
fn fresh(args: &[String], out: &Path) -> Value {
    let o = fslab().args(args).output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "fslab {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&o.stderr)
    );
    read_json(out)
}

#[test]
fn a_fresh_result_of_every_command_validates() {
    let work = tempfile::tempdir().unwrap();
    let t = work.path().display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = |n: &str| dir.path().join(format!("{n}.json"));
    let json = |n: &str| format!("json:{}", out(n).display());
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<String>>();
    let load = dir.path().join("load.txt");
    std::fs::write(&load, LOAD).unwrap();
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"schema\"\nrepeat = 1\n[[filesystem]]\nname = \"here\"\ntype = \"dir\"\npath = \"{t}\"\n\
             [[workload]]\nname = \"rr\"\ntype = \"io\"\nrw = \"randread\"\nsize = \"4m\"\nruntime = \"1s\"\n\
             [[workload]]\nname = \"m\"\ntype = \"meta\"\nfiles = \"100\"\n"
        ),
    )
    .unwrap();
    let runs: Vec<(&str, Vec<String>)> = vec![
        (
            "io",
            s(&[
                "io",
                "--target",
                &t,
                "--rw",
                "randrw",
                "--size",
                "4m",
                "--runtime",
                "1s",
                "--quiet",
            ]),
        ),
        // paced, with syncs, two jobs and a stonewall: the optional parts of a direction
        (
            "io",
            s(&[
                "io",
                "--target",
                &t,
                "--rw",
                "write",
                "--size",
                "4m",
                "--jobs",
                "2",
                "--rate-iops",
                "2000",
                "--fsync",
                "8",
                "--runtime",
                "1s",
                "--stonewall",
                "500ms",
                "--quiet",
            ]),
        ),
        (
            "meta",
            s(&[
                "meta",
                "--target",
                &t,
                "--files",
                "100",
                "--xattr",
                "user.fslab:64",
                "--quiet",
            ]),
        ),
        (
            "replay",
            s(&[
                "replay",
                load.to_str().unwrap(),
                "--target",
                &t,
                "--clients",
                "2",
                "--time",
                "1s",
                "--quiet",
            ]),
        ),
        (
            "probe",
            s(&[
                "probe",
                "--target",
                &t,
                "--interval",
                "100ms",
                "--phases",
                "idle:500ms,load:500ms",
                "--load",
                "stream-write:16m",
                "--quiet",
            ]),
        ),
        ("run", s(&["run", plan.to_str().unwrap(), "--quiet"])),
    ];
    let mut kinds = Vec::new();
    for (i, (name, mut args)) in runs.into_iter().enumerate() {
        let file = format!("{name}-{i}");
        args.extend(s(&["--output", &json(&file)]));
        let doc = fresh(&args, &out(&file));
        assert_eq!(doc["command"], name);
        assert_valid(&format!("a fresh `fslab {name}` result"), &doc);
        kinds.extend(doc["cells"].as_array().unwrap().iter().map(|c| c["kind"].clone()));
    }
    // fslab fio writes fio's formats to --output, its own result file to --results
    let fio_args = s(&[
        "fio",
        "--name=j",
        "--rw=randwrite",
        "--bs=4k",
        "--size=4m",
        "--runtime=1",
        &format!("--directory={t}"),
        "--output-format=json",
        &format!("--output={}", dir.path().join("fio-own.json").display()),
        &format!("--results={}", out("fio").display()),
        "--quiet",
    ]);
    let doc = fresh(&fio_args, &out("fio"));
    assert_eq!(doc["command"], "fio");
    assert!(
        doc["cells"][0]["plan"]["fio"]["options"].is_object(),
        "{}",
        doc["cells"][0]["plan"]
    );
    assert_valid("a fresh `fslab fio --results` result", &doc);
    kinds.push(doc["cells"][0]["kind"].clone());
    for k in ["io", "meta", "replay", "probe", "fio"] {
        assert!(kinds.contains(&k.into()), "no {k} cell among {kinds:?}");
    }
}

/// `fslab fio --results` refuses fio's own output file, naming the flag.
#[test]
fn fio_results_need_a_file_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("out.json").display().to_string();
    let o = fslab()
        .args(["fio", "--name=j", "--rw=read", "--size=1m"])
        .arg(format!("--directory={}", dir.path().display()))
        .args([format!("--output={f}"), format!("--results={f}")])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--results") && err.contains("--output"), "{err}");
    assert!(!Path::new(&f).exists(), "nothing is written");
}
