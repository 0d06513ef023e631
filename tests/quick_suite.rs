//! The built-in quick suite (`fslab run` without a plan): its probes run
//! under a stream that lasts their load phase, the append+fdatasync probe
//! stands beside create, and the summary prints `—` where a figure does
//! not apply instead of placeholders; and the probe's time-based stream.

use crate::util::*;

/// The rows of the text summary's table, split into their columns.
fn summary_rows(text: &str) -> Vec<Vec<String>> {
    let Some((_, table)) = text.rsplit_once("summary\n") else {
        panic!("no summary in {text}");
    };
    table
        .lines()
        .filter(|l| l.starts_with('│'))
        // the table's style draws no inner borders: columns are at least
        // three spaces apart, and no cell holds two spaces in a row
        .map(|l| {
            l.trim_matches('│')
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect()
        })
        .collect()
}

#[test]
fn quick_suite_probes_run_under_their_load_and_the_summary_has_no_placeholders() {
    let dir = tempfile::tempdir().unwrap();
    let (text, j) = run_quick_suite(dir.path(), "1s");
    let probes: Vec<&serde_json::Value> = cells(&j).iter().filter(|c| c["kind"] == "probe").collect();
    let ops: Vec<(&str, &str)> = probes
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["probe"]["op"].as_str().unwrap()))
        .collect();
    assert_eq!(
        ops,
        [
            ("create-under-stream", "create"),
            ("append-fdatasync-under-stream", "append-fsync")
        ]
    );
    for c in &probes {
        assert_eq!(c["job_errors"].as_array().map_or(0, |e| e.len()), 0, "{c}");
        let phases = c["probe"]["phases"].as_array().unwrap();
        let names: Vec<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["idle", "load", "after"]);
        let load = &phases[1];
        // the stream wrote until the phase ended: no early end recorded
        assert!(load.get("load_end_ns").is_none(), "{load}");
        assert!(load["load_bytes"].as_u64().unwrap() > 0, "{load}");
        assert!(load["probes"].as_u64().unwrap() > 0, "{load}");
        // nor a warning that the load ran out before its phase did
        let warnings = c["warnings"].as_array().unwrap();
        assert!(
            !warnings.iter().any(|w| w.as_str().unwrap().contains("wrote its size")),
            "{warnings:?}"
        );
    }

    let rows = summary_rows(&text);
    assert_eq!(
        rows[0],
        ["cell", "operation", "ops/s", "MB/s", "mean", "p99", "max", "stalls"]
    );
    let body = &rows[1..];
    assert!(!body.is_empty(), "{text}");
    for r in body {
        assert_eq!(r.len(), 8, "{r:?}");
        // no figure stands in for one that does not apply
        for (i, v) in r.iter().enumerate().skip(2) {
            assert!(i == 7 || (v != "0.0" && v != "0"), "{r:?} in\n{text}");
        }
    }
    // " !" marks a cell other processes disturbed
    let by_cell = |name: &str| {
        body.iter()
            .filter(|r| r[0].trim_end_matches(" !") == name)
            .collect::<Vec<_>>()
    };
    for name in ["create-under-stream", "append-fdatasync-under-stream"] {
        let rows = by_cell(name);
        assert_eq!(rows.len(), 3, "{name}: {rows:?}");
        for r in rows {
            // a probe's rate is its grid's and it moves no data; it has its
            // own figures: latency and the number of stalls
            assert_eq!((r[2].as_str(), r[3].as_str()), ("—", "—"), "{r:?}");
            assert!(r[4] != "—" && r[5] != "—" && r[6] != "—", "{r:?}");
            assert!(r[7].parse::<u64>().is_ok(), "stalls: {r:?}");
        }
    }
    for r in by_cell("meta-16k") {
        assert_eq!(r[3], "—", "metadata moves no data: {r:?}");
        assert_ne!(r[2], "—", "{r:?}");
    }
    for r in by_cell("seqwrite-1m-direct") {
        assert!(r[3].parse::<f64>().unwrap() > 0.0, "{r:?}");
        assert_eq!(r[7], "—", "{r:?}");
    }
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}

/// One probe run's load phase, from its result file.
fn load_phase(args: &[&str]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("p.json");
    let out = fslab()
        .args(["probe", "--op", "stat", "--interval", "100ms", "--quiet", "--target"])
        .arg(dir.path())
        .args(args)
        .arg("--output")
        .arg(format!("json:{}", json.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let j = read_json(&json);
    let c = &cells(&j)[0];
    assert_eq!(c["job_errors"].as_array().map_or(0, |e| e.len()), 0, "{c}");
    let phases = c["probe"]["phases"].as_array().unwrap();
    phases.iter().find(|p| p["name"] == "load").unwrap().clone()
}

#[test]
fn a_stream_without_size_writes_until_its_phase_ends_rewriting_its_capped_file() {
    // 1 MiB of cap, rewritten for 3 s: far more than the cap goes through
    let p = load_phase(&["--phases", "load:3s", "--load", "stream-write:bs=64k,cap=1m"]);
    assert!(p.get("load_end_ns").is_none(), "{p}");
    assert!(p["load_bytes"].as_u64().unwrap() > 1 << 20, "{p}");
}

#[test]
fn a_stream_with_a_size_still_stops_when_it_has_written_it() {
    let p = load_phase(&["--phases", "load:3s", "--load", "stream-write:1m,bs=64k"]);
    assert_eq!(p["load_bytes"].as_u64(), Some(1 << 20), "{p}");
    let end = p["load_end_ns"].as_u64().expect("the stream ended early");
    assert!(end < p["end_ns"].as_u64().unwrap(), "{p}");
}

#[test]
fn stream_load_options_that_do_not_fit_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    for (load, want) in [
        ("stream-write:1g,cap=2g", "cap= bounds a time-based stream"),
        ("stream-write:fsync-end", "fsync-end needs a SIZE"),
        ("stream-write:cap=4k", "bs <= cap"),
        ("stream-write:cap=lots", "--load: 'stream-write:cap=lots'"),
    ] {
        expect_usage(&["probe", "--target", t, "--phases", "load:1s", "--load", load], want);
    }
}
