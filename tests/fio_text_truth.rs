//! `fslab fio`'s fio-format output holds no figure fslab did not measure
//! (issue 32): the same small job through fio 3.33 and `fslab fio`, and
//! every number of fslab's text checked against what fslab measured (its
//! JSON and result file of the same run) or against fio's own constant.
//! No timing is compared: only figures that follow from what the job did.

use crate::util::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// One run of `fslab fio ARGS --output-format=terse,json,normal
/// --results=FILE` in `cwd`.
struct Ours {
    terse: Vec<String>,
    text: String,
    json: Value,
    results: Value,
}

fn fslab_all_formats(cwd: &Path, args: &[String]) -> Ours {
    let results = cwd.join("results.json");
    let out = fslab()
        .current_dir(cwd)
        .arg("fio")
        .args(args)
        .arg("--output-format=terse,json,normal")
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
    // fio's order: the normal output's lines before the run, the terse
    // line, the JSON document, then the normal output's results
    let at = stdout.find("\n3;").expect("a terse line") + 1;
    let (head, rest) = stdout.split_at(at);
    let (terse, rest) = rest.split_once('\n').unwrap();
    let mut docs = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
    let json = docs.next().unwrap().unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let body = &rest[docs.byte_offset()..];
    Ours {
        terse: terse.split(';').map(String::from).collect(),
        text: format!("{head}{}", body.trim_start_matches('\n')),
        json,
        results: read_json(&results),
    }
}

/// fio's normal text and JSON of the job, from one run.
fn fio_text_json(cwd: &Path, args: &[String]) -> (String, Value) {
    let out = Command::new("fio")
        .current_dir(cwd)
        .args(args)
        .arg("--output-format=normal,json")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "fio {args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // fio 3.33 writes the JSON document first, then the text
    let at = if stdout.starts_with("{\n") {
        0
    } else {
        stdout.find("\n{\n").expect("fio's JSON document") + 1
    };
    let mut docs = serde_json::Deserializer::from_str(&stdout[at..]).into_iter::<Value>();
    let json = docs.next().unwrap().unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let end = at + docs.byte_offset();
    (format!("{}{}", &stdout[..at], &stdout[end..]), json)
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

/// The label of a line of fio's normal text: what precedes its first `:`
/// or `=`, without the unit ("clat (usec)" is "clat"); "|" for a
/// percentile row.
fn label(line: &str) -> String {
    let l = line.trim();
    if l.starts_with('|') {
        return "|".into();
    }
    let end = l.find([':', '=']).unwrap_or(l.len());
    let head = &l[..end];
    let head = head.split_once(" (").map_or(head, |(h, _)| h);
    head.trim().to_string()
}

/// The lines of the job block of `name` (its header to the blank line).
fn job_block<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let head = format!("{name}: (groupid=");
    text.lines()
        .skip_while(|l| !l.starts_with(&head))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect()
}

use fslab::report::fio_text::{lat_unit, num2str, Unit};

/// Every figure of fslab's job block, checked: against fslab's own JSON,
/// terse line and result file of the same run, or against fio's text of
/// the same job where the figure is fio's constant; and no line that fio
/// does not print.
fn check_job_block(what: &str, ours: &Ours, fio_text: &str) {
    let name = ours.json["jobs"][0]["jobname"].as_str().unwrap().to_string();
    let j = &ours.json["jobs"][0];
    let cell = &ours.results["cells"][0];
    let block = job_block(&ours.text, &name);
    let theirs = job_block(fio_text, &name);
    assert!(
        !block.is_empty() && !theirs.is_empty(),
        "{what}: {}\n{fio_text}",
        ours.text
    );
    // no line fio does not have (fslab's own warnings aside)
    let fio_labels: Vec<String> = theirs.iter().map(|l| label(l)).collect();
    for l in &block {
        let lb = label(l);
        assert!(
            lb == "warning" || fio_labels.contains(&lb),
            "{what}: fslab prints '{l}', a line fio does not have:\n{}",
            theirs.join("\n")
        );
    }
    // fio's constants for this job: the latency line (no latency target)
    // and the IO depths of a job with one I/O in flight
    for head in ["latency", "IO depths"] {
        let find = |b: &[&str]| b.iter().find(|l| label(l) == head).map(|l| l.trim().to_string());
        assert_eq!(find(&block), find(&theirs), "{what}: {head}");
    }
    // the read line: IOPS and bandwidth of the result file's counts over
    // its whole milliseconds, as fio's integers and num2str write them
    let dir = &cell["directions"][0];
    assert_eq!(dir["dir"], "read", "{what}: {cell}");
    let read = fields(&ours.text, "read:");
    // fio's runtime: the microseconds rounded up to a millisecond
    let (bytes, ms) = (num(&dir["bytes"]), (num(&cell["elapsed_ns"]) / 1000).div_ceil(1000));
    let ops = num(&dir["ops"]);
    assert_eq!(
        field(&read, "IOPS"),
        num2str(ops * 1000 / ms, 4, 1, false, Unit::None),
        "{what}"
    );
    let bw = num2str(bytes * 1000 / ms, 4, 1, true, Unit::BytePerSec);
    assert!(
        field(&read, "BW").starts_with(&format!("{bw} (")),
        "{what}: {read:?}, {bw}"
    );
    // the group's line: its bytes over its runtime (one job here)
    let group = fields(&ours.text, "READ:");
    assert!(field(&group, "bw").starts_with(&format!("{bw} (")), "{what}: {group:?}");
    assert!(field(&group, "io").starts_with(&num2str(bytes, 4, 1, true, Unit::Byte)));
    assert_eq!(field(&group, "run"), format!("{ms}-{ms}msec"), "{what}");
    // clat and lat: the JSON's figures in fio's unit, none shown as a 0 it was not
    for (head, key) in [("clat (", "clat_ns"), ("lat (", "lat_ns")] {
        let l = &j["read"][key];
        let (min, max, mean) = (num(&l["min"]), num(&l["max"]), l["mean"].as_f64().unwrap());
        let (unit, div) = lat_unit(min, max, l["stddev"].as_f64().unwrap());
        let line = block
            .iter()
            .find(|x| x.trim_start().starts_with(head))
            .unwrap_or_else(|| panic!("{what}: no {head} line"));
        assert!(line.contains(&format!("({unit})")), "{what}: {line}");
        let f = fields(line, head);
        let n = |v: u64| num2str(v / div, 6, 1, false, Unit::None);
        assert_eq!(field(&f, "min"), n(min), "{what}: {line}");
        assert_eq!(field(&f, "max"), n(max), "{what}: {line}");
        assert_eq!(field(&f, "avg"), format!("{:.2}", mean / div as f64), "{what}: {line}");
        assert!(min / div > 0, "{what}: a {min} ns minimum shows as 0: {line}");
    }
    // the clat percentiles: the JSON's, each non-zero where the JSON's is
    let pct = &j["read"]["clat_ns"]["percentile"];
    let shown: Vec<(String, u64)> = block
        .iter()
        .filter(|l| l.trim_start().starts_with('|'))
        .flat_map(|l| l.trim_start().trim_start_matches('|').split("],"))
        .filter_map(|c| {
            let (p, v) = c.split_once("th=[")?;
            Some((
                p.trim().to_string(),
                v.trim().trim_end_matches(']').trim().parse().ok()?,
            ))
        })
        .collect();
    assert_eq!(shown.len(), 17, "{what}: {block:?}");
    let unit = block.iter().find(|l| l.contains("clat percentiles")).unwrap();
    // fio rounds each up to the unit, a thousand at a time
    let steps = ["nsec", "usec", "msec"].iter().position(|u| unit.contains(*u)).unwrap();
    for (p, v) in &shown {
        let key = format!("{:.6}", p.parse::<f64>().unwrap());
        let want = num(&pct[&key]);
        let up = (0..steps).fold(want, |v, _| v.div_ceil(1000));
        assert_eq!(*v, up, "{what}: {p}th in {unit}");
        assert!(*v > 0 || want == 0, "{what}: the {p}th ({want} ns) shows as 0 {unit}");
    }
    // the cpu line: usr and sys from the result file's CPU times over the
    // jobs' summed runtimes (fio's total_run_time); ctx, majf and minf the
    // same counts in text, terse, JSON and result file
    let cpu = fields(&ours.text, "cpu ");
    let keys: Vec<&str> = cpu.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["usr", "sys", "ctx", "majf", "minf"], "{what}");
    let jobs = cell["cpu"]["jobs"].as_array().unwrap();
    let secs = jobs.iter().map(|j| num(&j["elapsed_ns"])).sum::<u64>() as f64 / 1e9;
    for (k, ns) in [("usr", "user_ns"), ("sys", "sys_ns")] {
        let want = num(&cell["cpu"][ns]) as f64 / 1e9 / secs * 100.0;
        assert_eq!(field(&cpu, k), format!("{want:.2}"), "{what} {k}");
    }
    let rusage = &cell["cpu"]["rusage"];
    // terse version 3: usr, sys, ctx, majf, minf are fields 87 to 91
    for (i, k) in ["ctx", "majf", "minf"].iter().enumerate() {
        let printed: u64 = field(&cpu, k).parse().unwrap();
        assert_eq!(printed, num(&j[*k]), "{what} {k}: text and JSON differ");
        assert_eq!(printed, num(&rusage[*k]), "{what} {k}: text and result file differ");
        assert_eq!(ours.terse[89 + i], printed.to_string(), "{what} {k}: terse");
    }
    // short and dropped I/Os: counted (the result file's), none dropped
    assert_eq!(j["read"]["short_ios"], dir["short_ops"], "{what}");
    assert_eq!(j["read"]["drop_ios"], 0, "{what}");
    // the error: fio's errno, the same in text, terse and JSON
    assert_eq!(ours.terse[4], j["error"].to_string(), "{what}");
}

/// The same O_DIRECT randread through fio and `fslab fio` (psync, then
/// io_uring): every figure of fslab's job block is measured or fio's
/// constant (check_job_block), and the cpu line's ctx, majf and minf are
/// getrusage's counts of the job's threads, as fio's: fslab counts a
/// context switch per read where fio does (each O_DIRECT read waits for
/// the device), and on the null engine (nothing waits) next to none.
#[test]
fn every_figure_of_fslab_fio_text_is_measured() {
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
        let (fio_text, theirs) = fio_text_json(cwd.path(), &job);
        let t = &theirs["jobs"][0];
        let ours = fslab_all_formats(cwd.path(), &job);
        check_job_block(engine, &ours, &fio_text);
        let j = &ours.json["jobs"][0];
        let (ctx, n) = (num(&j["ctx"]), ios(j));
        assert_eq!(n, 1024, "{engine}: {j}");
        assert_eq!(j["read"]["short_ios"], 0, "{engine}: full 4k reads of a 4m file");
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
    let ours = fslab_all_formats(cwd.path(), &job);
    let j = &ours.json["jobs"][0];
    assert_eq!(ios(j), 16384);
    assert!(num(&j["ctx"]) * 10 < ios(j), "null engine: {j}");
}

/// A result that did not count ctx, majf, minf or short I/Os (the
/// committed fixture, from an older version) renders without them: no
/// `ctx=` in the text, no keys in the JSON, empty terse fields; given the
/// counts, every format prints them.
#[test]
fn figures_a_result_did_not_count_are_left_out_not_zero() {
    use fslab::report::{fio_json::FioJson, fio_terse::FioTerse, fio_text::FioText, Reporter};
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/io.json");
    let mut r = fslab::model::parse_report(&std::fs::read_to_string(&p).unwrap()).unwrap();
    let render = |r: &fslab::model::Report, f: &dyn Reporter| String::from_utf8(f.render(r)).unwrap();
    assert!(r.cells[0].cpu.rusage.is_none());
    let text = render(&r, &FioText);
    let cpu = fields(&text, "cpu ");
    let keys: Vec<&str> = cpu.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["usr", "sys"], "{text}");
    let j: Value = serde_json::from_str(&render(&r, &FioJson)).unwrap();
    for k in ["ctx", "majf", "minf"] {
        assert!(j["jobs"][0].get(k).is_none(), "{k}");
    }
    assert!(j["jobs"][0]["read"].get("short_ios").is_none());
    let terse = render(&r, &FioTerse);
    let t: Vec<&str> = terse.lines().next().unwrap().split(';').collect();
    assert_eq!(t.len(), 121);
    assert_eq!(&t[89..92], ["", "", ""]);
    r.cells[0].cpu.rusage = Some(fslab::model::RusageCounts {
        ctx: 97608,
        majf: 3,
        minf: 41,
    });
    let text = render(&r, &FioText);
    let cpu = fields(&text, "cpu ");
    assert_eq!(
        (field(&cpu, "ctx"), field(&cpu, "majf"), field(&cpu, "minf")),
        ("97608", "3", "41")
    );
    let j: Value = serde_json::from_str(&render(&r, &FioJson)).unwrap();
    assert_eq!(
        (&j["jobs"][0]["ctx"], &j["jobs"][0]["minf"]),
        (&97608.into(), &41.into())
    );
    let terse = render(&r, &FioTerse);
    let t: Vec<&str> = terse.lines().next().unwrap().split(';').collect();
    assert_eq!(&t[89..92], ["97608", "3", "41"]);
}
