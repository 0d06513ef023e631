//! `fslab fio`'s fio-format output holds no figure fslab did not measure
//! (issue 32): the same small job through fio 3.33 and `fslab fio`, and
//! every number of fslab's text checked against what fslab measured (its
//! JSON and result file of the same run) or against fio's own constant.
//! No timing is compared: only figures that follow from what the job did.

use crate::util::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// `fslab fio ARGS --output-format=json,normal --results=FILE` in `cwd`:
/// the text, fio's JSON document and fslab's result file, of one run.
fn fslab_text_json_results(cwd: &Path, args: &[String]) -> (String, Value, Value) {
    let results = cwd.join("results.json");
    let out = fslab()
        .current_dir(cwd)
        .arg("fio")
        .args(args)
        .arg("--output-format=json,normal")
        .arg(format!("--results={}", results.display()))
        .arg("--quiet")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "fslab fio {args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // fio's order: the normal text, then the JSON document
    let at = stdout.find("\n{\n").expect("a JSON document after the text") + 1;
    let json = serde_json::from_str(&stdout[at..]).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    (stdout[..at].to_string(), json, read_json(&results))
}

/// fio's JSON of the job.
fn fio_json(cwd: &Path, args: &[String]) -> Value {
    let out = Command::new("fio")
        .current_dir(cwd)
        .args(args)
        .arg("--output-format=json")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "fio {args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim_start_matches(|c| c != '{')).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// `key=value` pairs of the text's line that starts (after spaces) with
/// `head`, the values without their `%`.
fn fields(text: &str, head: &str) -> Vec<(String, String)> {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(head))
        .unwrap_or_else(|| panic!("no '{head}' line in:\n{text}"));
    let body = line.split_once(':').map_or(line, |(_, b)| b);
    body.split(',')
        .filter_map(|f| f.trim().split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().trim_end_matches('%').to_string()))
        .collect()
}

fn field<'a>(f: &'a [(String, String)], k: &str) -> &'a str {
    f.iter()
        .find(|(n, _)| n == k)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {k} in {f:?}"))
}

fn num(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Reads and writes of a fio JSON job.
fn ios(j: &Value) -> u64 {
    num(&j["read"]["total_ios"]) + num(&j["write"]["total_ios"])
}

/// A tempdir on a filesystem that takes O_DIRECT (/var/tmp is tmpfs on some hosts).
fn direct_dir() -> Option<tempfile::TempDir> {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let p = d.path().join("probe");
    std::fs::write(&p, [0u8; 4096]).unwrap();
    use std::os::unix::fs::OpenOptionsExt;
    let ok = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&p)
        .is_ok();
    std::fs::remove_file(&p).unwrap();
    require("a /var/tmp that takes O_DIRECT", ok).then_some(d)
}

/// The cpu line's ctx, majf and minf are getrusage's counts of the job's
/// threads, as fio's: on O_DIRECT reads (each waits for the device) fslab
/// counts a context switch per read where fio does, on the null engine
/// (nothing waits) next to none; text, JSON and the result file of one run
/// give the same counts, and usr/sys are the result file's CPU times.
#[test]
fn cpu_line_counts_are_measured_as_fios_are() {
    if !require("fio", have("fio")) {
        return;
    }
    let Some(data) = direct_dir() else {
        return;
    };
    let dir = format!("--directory={}", data.path().display());
    for engine in ["psync", "io_uring"] {
        let cwd = tempfile::tempdir().unwrap();
        let job: Vec<String> = [
            "--name=ct",
            "--rw=randread",
            "--bs=4k",
            "--size=4m",
            "--direct=1",
            &format!("--ioengine={engine}"),
            &dir,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let theirs = fio_json(cwd.path(), &job);
        let t = &theirs["jobs"][0];
        let (text, json, results) = fslab_text_json_results(cwd.path(), &job);
        let j = &json["jobs"][0];
        let cpu = fields(&text, "cpu ");
        let keys: Vec<&str> = cpu.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["usr", "sys", "ctx", "majf", "minf"], "{engine}: {text}");
        let rusage = &results["cells"][0]["cpu"]["rusage"];
        for k in ["ctx", "majf", "minf"] {
            let printed: u64 = field(&cpu, k).parse().unwrap();
            assert_eq!(printed, num(&j[k]), "{engine} {k}: text and JSON differ");
            assert_eq!(printed, num(&rusage[k]), "{engine} {k}: text and result file differ");
        }
        // usr and sys: the result file's CPU times over its elapsed time
        let cell = &results["cells"][0];
        let secs = num(&cell["elapsed_ns"]) as f64 / 1e9;
        for (k, ns) in [("usr", "user_ns"), ("sys", "sys_ns")] {
            let want = num(&cell["cpu"][ns]) as f64 / 1e9 / secs * 100.0;
            assert_eq!(field(&cpu, k), format!("{want:.2}"), "{engine} {k}");
        }
        let (ctx, n) = (num(&j["ctx"]), ios(j));
        assert_eq!(n, 1024, "{engine}: {j}");
        // fio switched at each read: so does fslab on the same job (a tenth
        // of the reads leaves room for reads the device completes at once)
        if num(&t["ctx"]) * 2 >= ios(t) {
            assert!(
                ctx * 10 >= n,
                "{engine}: fslab ctx={ctx} for {n} O_DIRECT reads; fio's: {t}"
            );
        }
        assert!(
            num(&t["ctx"]) == 0 || ctx > 0,
            "{engine}: fio counted switches, fslab none"
        );
    }
    // the null engine waits for nothing: next to no switch for 16384 I/Os
    let cwd = tempfile::tempdir().unwrap();
    let job: Vec<String> = ["--name=nl", "--ioengine=null", "--rw=read", "--bs=4k", "--size=64m"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (_, json, _) = fslab_text_json_results(cwd.path(), &job);
    let j = &json["jobs"][0];
    assert_eq!(ios(j), 16384);
    assert!(num(&j["ctx"]) * 10 < ios(j), "null engine: {j}");
}
