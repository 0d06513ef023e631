//! fio's steady-state stop (steadystate, ss_dur, ss_ramp) in `fslab fio`:
//! a steady (rate-limited) job attains and ends before its runtime, an
//! impossible criterion runs to its runtime with attained 0, the
//! "steadystate" object has fio 3.33's keys and agrees with its own samples.

use crate::util::*;
use serde_json::Value;
use std::collections::BTreeSet;

/// fio 3.33's "steadystate" object for tests/fio-jobs/112 (group_reporting,
/// two clones at rate_iops=300, bw:2%, ss_dur=4, ss_ramp=2), as fio printed it.
const FIO_333: &str = r#"{"ss":"bw:2.000000%","duration":4,"attained":1,"criterion":"0.433622%",
 "max_deviation":10660.25,"slope":0.0,"data":{"bw_mean":2458418,"iops_mean":599,
 "iops":[601,600,601,597],"bw":[2464160,2460059,2461696,2447758]}}"#;

/// Runs a job file (its text, with `DIR` for the work directory) and
/// returns the JSON (or the normal text with `normal`).
fn run(job: &str, normal: bool) -> String {
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let text = job.replace("DIR", &work.path().display().to_string());
    let f = job_file(dir.path(), "j.fio", &text);
    let fmt = if normal { "normal" } else { "json" };
    let r = run_fio_format(false, &f, work.path(), fmt);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(leftovers(work.path()).is_empty());
    r.stdout
}

fn jobs(job: &str) -> Vec<Value> {
    let j: Value = serde_json::from_str(&run(job, false)).unwrap();
    j["jobs"].as_array().unwrap().clone()
}

/// Every key of an object, and of the objects in it, as paths.
fn keys(v: &Value, at: &str, out: &mut BTreeSet<String>) {
    if let Value::Object(m) = v {
        for (k, x) in m {
            let p = format!("{at}/{k}");
            keys(x, &p, out);
            out.insert(p);
        }
    }
}

/// A figure of fio's "criterion" string ("0.433622%" or "-1.000000").
fn figure(s: &Value) -> f64 {
    s.as_str().unwrap().trim_end_matches('%').parse().unwrap()
}

/// The checks every reported object must pass: fio's keys, a window of
/// `dur` samples, means that are those of the samples (fio's integer
/// means), and a deviation that is the samples' own.
fn check_object(ss: &Value, dur: u64) {
    let (mut want, mut got) = (BTreeSet::new(), BTreeSet::new());
    keys(&serde_json::from_str(FIO_333).unwrap(), "", &mut want);
    keys(ss, "", &mut got);
    assert_eq!(got, want, "fio 3.33's keys: {ss}");
    assert_eq!(ss["duration"], dur);
    let iops: Vec<u64> = ss["data"]["iops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    let bw: Vec<u64> = ss["data"]["bw"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!((iops.len() as u64, bw.len() as u64), (dur, dur), "{ss}");
    assert_eq!(ss["data"]["iops_mean"], iops.iter().sum::<u64>() / dur, "{ss}");
    assert_eq!(ss["data"]["bw_mean"], bw.iter().sum::<u64>() / dur, "{ss}");
}

#[test]
fn a_steady_job_attains_and_stops_before_its_runtime() {
    let j = jobs(
        "[steady]\ndirectory=DIR\nrw=randread\nbs=4k\nsize=4m\nrate_iops=500\ntime_based\nruntime=30\n\
         steadystate=iops:20%\nss_dur=3\n",
    );
    assert_eq!(j.len(), 1);
    let ss = &j[0]["steadystate"];
    check_object(ss, 3);
    assert_eq!(ss["ss"], "iops:20.000000%");
    assert_eq!(ss["attained"], 1, "{ss}");
    assert_eq!(ss["slope"], 0.0, "a deviation criterion has no slope: {ss}");
    // the deviation is the samples' largest distance from their mean, and
    // the criterion that figure over the mean, below the limit
    let iops: Vec<f64> = ss["data"]["iops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let mean = iops.iter().sum::<f64>() / 3.0;
    let dev = iops.iter().map(|x| (x - mean).abs()).fold(0.0, f64::max);
    assert!((ss["max_deviation"].as_f64().unwrap() - dev).abs() < 1e-6, "{ss}");
    let crit = figure(&ss["criterion"]);
    assert!((crit - 100.0 * dev / mean).abs() < 1e-3 && crit < 20.0, "{ss}");
    // three samples a second apart, then the stop: long before the 30 s
    let ms = j[0]["job_runtime"].as_u64().unwrap();
    assert!((2_000..30_000 / 2).contains(&ms), "stopped after {ms} ms: {ss}");
    assert_eq!(
        j[0]["read"]["total_ios"].as_u64().unwrap() * 4096,
        j[0]["read"]["io_bytes"]
    );
}

#[test]
fn an_impossible_criterion_runs_to_the_runtime_unattained() {
    let j = jobs(
        "[never]\ndirectory=DIR\nrw=randread\nbs=4k\nsize=4m\nrate_iops=200\ntime_based\nruntime=3\n\
         steadystate=iops_slope:0\nss_dur=2\n",
    );
    let ss = &j[0]["steadystate"];
    check_object(ss, 2);
    assert_eq!(ss["ss"], "iops_slope:0.000000");
    assert_eq!(ss["attained"], 0, "{ss}");
    assert_eq!(ss["max_deviation"], 0.0, "a slope criterion has no deviation: {ss}");
    // absolute: no % on the criterion, which is the slope itself
    assert!(!ss["criterion"].as_str().unwrap().ends_with('%'), "{ss}");
    assert!(
        (figure(&ss["criterion"]) - ss["slope"].as_f64().unwrap()).abs() < 1e-5,
        "{ss}"
    );
    assert!(
        j[0]["job_runtime"].as_u64().unwrap() >= 2_900,
        "ran to its runtime: {}",
        j[0]
    );
}

#[test]
fn group_reporting_checks_the_group_as_one() {
    let j = jobs(
        "[grp]\ndirectory=DIR\nrw=randread\nbs=4k\nsize=4m\nrate_iops=300\nnumjobs=2\ngroup_reporting\n\
         time_based\nruntime=30\nss=bw:10%\nss_dur=2\nss_ramp=1\n",
    );
    assert_eq!(j.len(), 1, "one report for the group");
    let ss = &j[0]["steadystate"];
    check_object(ss, 2);
    assert_eq!(ss["ss"], "bw:10.000000%");
    assert_eq!(ss["attained"], 1, "{ss}");
    // the samples are both clones' together: twice one clone's 1.2 MB/s
    let bw = ss["data"]["bw_mean"].as_u64().unwrap();
    assert!(bw > 300 * 4096 * 3 / 2, "the group's bandwidth, not one clone's: {ss}");
    assert!(j[0]["job_runtime"].as_u64().unwrap() < 2 * 15_000, "{}", j[0]);
}

#[test]
fn without_group_reporting_each_clone_is_checked_alone() {
    let j = jobs(
        "[solo]\ndirectory=DIR\nrw=randread\nbs=4k\nsize=4m\nrate_iops=300\nnumjobs=2\n\
         time_based\nruntime=30\nsteadystate=iops:20%\nss_dur=2\n",
    );
    assert_eq!(j.len(), 2, "one report per clone");
    for job in &j {
        let ss = &job["steadystate"];
        check_object(ss, 2);
        assert_eq!(ss["attained"], 1, "{ss}");
        // one clone's own rate, not the pair's
        let iops = ss["data"]["iops_mean"].as_u64().unwrap();
        assert!(iops < 300 * 3 / 2, "one clone's IOPS: {ss}");
        assert!(job["job_runtime"].as_u64().unwrap() < 15_000, "{job}");
    }
}

#[test]
fn ss_dur_alone_uses_fios_default_and_text_has_fios_line() {
    let text = run(
        "[dflt]\ndirectory=DIR\nrw=randread\nbs=4k\nsize=4m\nrate_iops=200\ntime_based\nruntime=3\nss_dur=2\n",
        true,
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("  steadystate  : attained="))
        .unwrap_or_else(|| panic!("no steadystate line in:\n{text}"));
    // fio's default criterion, iops_slope:0.01%
    assert!(line.contains(", iops slope=") && line.ends_with('%'), "{line}");
    assert!(line.contains(", bw=") && line.contains("B/s ("), "{line}");
    // a job without ss_dur has no object
    let j = jobs("[plain]\ndirectory=DIR\nrw=randread\nsize=4m\nruntime=200ms\ntime_based\nsteadystate=iops:5%\n");
    assert!(j[0].get("steadystate").is_none(), "{}", j[0]);
}
