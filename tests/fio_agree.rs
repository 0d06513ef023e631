//! fio and `fslab fio` side by side on job files written in the styles of
//! public projects (tests/fio-jobs/agree, its README says whose and the
//! directives): each job file is either refused by fslab in one line naming
//! one of its options, or run by both tools and compared on what does not
//! depend on the machine's speed:
//! - the jobs' names and reporting groups, in order;
//! - the operations and bytes of each job and direction (untimed jobs):
//!   within 2% when the block size is fixed; with random block sizes
//!   (bssplit, bsrange) within what two independent draws of fio's own
//!   size distribution give (4 standard deviations of their difference);
//! - the block sizes done, from each tool's per-I/O latency log (fio's
//!   `write_lat_log` with `log_avg_msec=0`, fslab writes the same): the
//!   shares of (direction, size) differ by a total variation distance a
//!   sampling difference explains;
//! - where untimed random I/O lands (the logs' `log_offset=1` column): the
//!   same alignment, and the shares of the bytes done in twenty stretches
//!   of the space (a zoned distribution's shape; the random map's even cover);
//! - the files left in the job's directory: the prepared ones as they were
//!   (the same names and sizes, and the same bytes where nothing writes);
//!   the ones fio lays out stay, where fslab removes its own, which it must
//!   say in a note.
//!
//! IOPS are a matter of timing on a shared machine: bench/fio-agree.sh
//! compares them (alternating rounds), not this test. `gtod_reduce=1`
//! stops fio's per-I/O log (it reads no clock for it), so the test runs the
//! job files with `gtod_reduce=0`: the I/O is the same, only the clock reads
//! differ; the bench runs the files as written.

use crate::util::*;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The trailing `; key: value` directives of a job file.
struct Directives {
    ok: bool,
    args: Vec<String>,
    fslab_args: Vec<String>,
    prepare: Vec<(String, u64)>,
    device_mib: Option<u64>,
    /// `; offsets: exact`: every job's offsets in the same order in both
    /// tools (deterministic patterns: offset modifiers)
    exact_offsets: bool,
    /// `; says: TEXT`: fslab's stderr (its notes) must contain TEXT
    says: Vec<String>,
}

fn directives(text: &str) -> Directives {
    let mut d = Directives {
        ok: false,
        args: vec![],
        fslab_args: vec![],
        prepare: vec![],
        device_mib: None,
        exact_offsets: false,
        says: vec![],
    };
    for l in text.lines() {
        let Some((k, v)) = l.strip_prefix("; ").and_then(|l| l.split_once(':')) else {
            continue;
        };
        let v = v.trim();
        match k {
            "expect" => d.ok = v == "ok",
            "args" => d.args.extend(v.split_whitespace().map(String::from)),
            "fslab-args" => d.fslab_args.extend(v.split_whitespace().map(String::from)),
            "prepare" => {
                let (n, mib) = v.split_once(' ').unwrap();
                d.prepare.push((n.to_string(), mib.trim().parse().unwrap()));
            }
            "device" => d.device_mib = Some(v.parse().unwrap()),
            "offsets" => d.exact_offsets = v == "exact",
            "says" => d.says.push(v.to_string()),
            _ => {}
        }
    }
    d
}

/// Pseudo-random bytes for a prepared file, the same for both tools.
fn prepared_bytes(name: &str, mib: u64) -> Vec<u8> {
    let mut x: u64 = name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    (0..(mib << 20) / 8)
        .flat_map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()
        })
        .collect()
}

fn digest(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &c| {
        (h ^ c as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// One job as a tool reported it.
#[derive(Debug, Clone, PartialEq)]
struct JobOut {
    name: String,
    group: u64,
    /// [read, write]: operations (None where the format has no count) and bytes
    ios: [Option<u64>; 2],
    bytes: [u64; 2],
}

/// What one tool's run of a job file gave.
struct Outcome {
    code: i32,
    stderr: String,
    jobs: Vec<JobOut>,
    /// (log N, direction 0 read / 1 write, block size) -> operations, from
    /// the per-I/O logs (one a job or clone)
    sizes: BTreeMap<(u64, u64, u64), u64>,
    /// log N -> the (offset, size) of its I/Os (log_offset=1)
    offsets: BTreeMap<u64, Vec<(u64, u64)>>,
    /// the job directory's files afterwards: name -> (size, digest)
    files: BTreeMap<String, (u64, u64)>,
}

fn run_tool(fio: bool, jobs_dir: &Path, name: &str, d: &Directives, dev: Option<&str>) -> Outcome {
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let (work, copy) = (tmp.path().join("w"), tmp.path().join("j"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&copy).unwrap();
    for e in std::fs::read_dir(jobs_dir).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap();
        // see the module's comment: the per-I/O log needs the clock
        std::fs::write(copy.join(e.file_name()), text.replace("gtod_reduce=1", "gtod_reduce=0")).unwrap();
    }
    for (n, mib) in &d.prepare {
        std::fs::write(work.join(n), prepared_bytes(n, *mib)).unwrap();
    }
    let terse = d.args.iter().any(|a| a == "--minimal");
    let mut cmd = crate::util::fio_or_fslab(if fio { "fio" } else { "fslab" }, true);
    if !fio {
        cmd.args(&d.fslab_args);
    }
    cmd.current_dir(&copy).env("FSLAB_FIO_DIR", &work).arg(name);
    if !terse {
        cmd.arg("--output-format=json");
    }
    cmd.args(&d.args)
        .arg(format!("--write_lat_log={}/lg", tmp.path().display()))
        .args(["--log_avg_msec=0", "--log_offset=1"]);
    if let Some(dev) = dev {
        cmd.env("FSLAB_FIO_DEV", dev);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let tool = if fio { "fio" } else { "fslab" };
    let mut o = Outcome {
        code: out.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        jobs: vec![],
        sizes: BTreeMap::new(),
        offsets: BTreeMap::new(),
        files: BTreeMap::new(),
    };
    if o.code != 0 {
        return o;
    }
    if terse {
        for l in stdout.lines().filter(|l| l.starts_with("3;")) {
            let f: Vec<&str> = l.split(';').collect();
            let kib = |i: usize| f[i].parse::<u64>().unwrap() * 1024;
            o.jobs.push(JobOut {
                name: f[2].to_string(),
                group: f[3].parse().unwrap(),
                ios: [None, None],
                bytes: [kib(5), kib(46)],
            });
        }
    } else {
        let j: serde_json::Value = serde_json::from_str(stdout.trim_start_matches(|c| c != '{'))
            .unwrap_or_else(|e| panic!("{name}: {tool} gave no JSON ({e}): {stdout}"));
        for x in j["jobs"].as_array().unwrap() {
            let dir = |d: &str| (x[d]["total_ios"].as_u64().unwrap(), x[d]["io_bytes"].as_u64().unwrap());
            let (r, w) = (dir("read"), dir("write"));
            o.jobs.push(JobOut {
                name: x["jobname"].as_str().unwrap().to_string(),
                group: x["groupid"].as_u64().unwrap(),
                ios: [Some(r.0), Some(w.0)],
                bytes: [r.1, w.1],
            });
        }
    }
    for e in std::fs::read_dir(tmp.path()).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if let Some(log) = n.strip_prefix("lg_clat.").and_then(|r| r.strip_suffix(".log")) {
            let log: u64 = log.parse().unwrap();
            for l in std::fs::read_to_string(e.path()).unwrap().lines() {
                let c: Vec<u64> = l.split(',').map(|v| v.trim().parse().unwrap()).collect();
                *o.sizes.entry((log, c[2], c[3])).or_default() += 1;
                o.offsets.entry(log).or_default().push((c[4], c[3]));
            }
        }
    }
    for e in std::fs::read_dir(&work).unwrap().flatten() {
        let b = std::fs::read(e.path()).unwrap();
        o.files.insert(
            e.file_name().to_string_lossy().into_owned(),
            (b.len() as u64, digest(&b)),
        );
    }
    o
}

/// The options a job file sets (keys, as written), for a refusal's check.
fn option_keys(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split([';', '#']).next().unwrap().trim())
        .filter(|l| !l.is_empty() && !l.starts_with('['))
        .map(|l| l.split('=').next().unwrap().trim().to_string())
        .collect()
}

/// The total variation distance between two size histograms, over
/// (direction, size) when there are at most 16 sizes, else over (direction,
/// power-of-two class) (the random map's trimmed blocks take many sizes),
/// and the bound a sampling difference stays under: twice the expected
/// distance of two samples of one distribution (sqrt(k / (pi n)) for k
/// classes and n draws), plus 1%.
fn size_distance(a: &BTreeMap<(u64, u64), u64>, b: &BTreeMap<(u64, u64), u64>) -> (f64, f64) {
    let sizes: std::collections::HashSet<u64> = a.keys().chain(b.keys()).map(|k| k.1).collect();
    let exact = sizes.len() <= 16;
    let classes = |h: &BTreeMap<(u64, u64), u64>| {
        let mut c: HashMap<(u64, u64), f64> = HashMap::new();
        let n: u64 = h.values().sum();
        for (&(d, s), &k) in h {
            let class = if exact { s } else { 63 - s.leading_zeros() as u64 };
            *c.entry((d, class)).or_default() += k as f64 / n.max(1) as f64;
        }
        (c, n)
    };
    let ((ca, na), (cb, nb)) = (classes(a), classes(b));
    let keys: std::collections::HashSet<_> = ca.keys().chain(cb.keys()).collect();
    let tv = keys
        .iter()
        .map(|k| (ca.get(k).unwrap_or(&0.0) - cb.get(k).unwrap_or(&0.0)).abs())
        .sum::<f64>()
        / 2.0;
    let n = na.min(nb).max(1) as f64;
    (tv, 0.01 + 2.0 * (keys.len() as f64 / (std::f64::consts::PI * n)).sqrt())
}

/// The coefficient of variation of the block sizes in `h` (one direction or all).
fn size_cv(h: &BTreeMap<(u64, u64), u64>) -> f64 {
    let n: f64 = h.values().sum::<u64>() as f64;
    let mean = h.iter().map(|(&(_, s), &k)| s as f64 * k as f64).sum::<f64>() / n;
    let var = h
        .iter()
        .map(|(&(_, s), &k)| (s as f64 - mean).powi(2) * k as f64)
        .sum::<f64>()
        / n;
    var.sqrt() / mean
}

/// Compares the two runs of one job file; the disagreements, each in a line.
fn compare(name: &str, text: &str, d: &Directives, fio: &Outcome, ours: &Outcome) -> Vec<String> {
    let mut bad = Vec::new();
    let names = |o: &Outcome| o.jobs.iter().map(|j| (j.name.clone(), j.group)).collect::<Vec<_>>();
    if names(fio) != names(ours) {
        bad.push(format!(
            "names and groups: fio {:?}, fslab {:?}",
            names(fio),
            names(ours)
        ));
        return bad;
    }
    let timed = text.contains("time_based");
    let random_sizes = text.contains("bssplit") || text.contains("bsrange");
    let mixed = text.contains("rw=randrw") || text.contains("rw=rw");
    // how far two runs of one job may differ by their draws alone (4
    // standard deviations of the difference of two independent runs):
    // with random sizes, N blocks covering a fixed number of bytes vary by
    // cv/sqrt(N) (renewal); a mix's directions are binomial draws of N
    let flat: BTreeMap<(u64, u64), u64> = fio.sizes.iter().fold(BTreeMap::new(), |mut m, (&(_, dr, s), &k)| {
        *m.entry((dr, s)).or_default() += k;
        m
    });
    let cv = size_cv(&flat);
    let spread = |n: u64| 4.0 * std::f64::consts::SQRT_2 * cv / (n.max(1) as f64).sqrt();
    let close = |a: u64, b: u64, t: f64| a.abs_diff(b) as f64 <= (t * a.max(b) as f64).max(2.0);
    for (f, o) in fio.jobs.iter().zip(&ours.jobs) {
        if timed {
            continue;
        }
        let total = |j: &JobOut| j.ios[0].zip(j.ios[1]).map(|(r, w)| r + w);
        let n = total(f).unwrap_or(1);
        let t_total = if random_sizes { spread(n).max(0.02) } else { 0.02 };
        if let (Some(a), Some(b)) = (total(f), total(o)) {
            if !close(a, b, t_total) {
                bad.push(format!(
                    "{}: fio {a} operations, fslab {b} (tolerance {:.1}%)",
                    f.name,
                    t_total * 100.0
                ));
            }
        }
        let (bf, bo) = (f.bytes[0] + f.bytes[1], o.bytes[0] + o.bytes[1]);
        if !close(bf, bo, 0.02) {
            bad.push(format!("{}: fio {bf} bytes, fslab {bo}", f.name));
        }
        for (di, dir) in ["read", "write"].iter().enumerate() {
            let t = if mixed {
                let p = f.ios[di].map_or(0.5, |k| k as f64 / n.max(1) as f64);
                let binomial = 4.0 * (2.0 * n as f64 * p * (1.0 - p)).sqrt() / (p * n as f64).max(1.0);
                t_total + binomial
            } else {
                t_total
            };
            if let (Some(a), Some(b)) = (f.ios[di], o.ios[di]) {
                if !close(a, b, t) {
                    bad.push(format!(
                        "{} {dir}: fio {a} operations, fslab {b} (tolerance {:.1}%)",
                        f.name,
                        t * 100.0
                    ));
                }
            }
            if !close(f.bytes[di], o.bytes[di], t.max(0.02)) {
                bad.push(format!(
                    "{} {dir}: fio {} bytes, fslab {}",
                    f.name, f.bytes[di], o.bytes[di]
                ));
            }
        }
    }
    // each job's own log (a timed job's share of the segment is the machine's)
    let logs: std::collections::BTreeSet<u64> = fio.sizes.keys().chain(ours.sizes.keys()).map(|k| k.0).collect();
    for log in logs {
        let of = |o: &Outcome| -> BTreeMap<(u64, u64), u64> {
            o.sizes
                .iter()
                .filter(|(k, _)| k.0 == log)
                .map(|(&(_, dr, s), &k)| ((dr, s), k))
                .collect()
        };
        let (a, b) = (of(fio), of(ours));
        let (tv, bound) = size_distance(&a, &b);
        if tv > bound {
            bad.push(format!(
                "block sizes of log {log}: distance {tv:.3} > {bound:.3}: fio {a:?} fslab {b:?}"
            ));
        }
    }
    // where random I/O lands (untimed: a timed pass covers what the
    // machine's speed let it): the same alignment, and the same shares of
    // twenty stretches of the space (a zoned or skewed distribution's shape)
    if !timed && text.contains("rw=rand") {
        for (log, a) in &fio.offsets {
            let Some(b) = ours.offsets.get(log) else {
                bad.push(format!("log {log}: fio's, not fslab's"));
                continue;
            };
            let align = |v: &[(u64, u64)]| {
                v.iter()
                    .filter(|o| o.0 != 0)
                    .map(|o| o.0.trailing_zeros())
                    .min()
                    .unwrap_or(0)
                    .min(20)
            };
            if align(a) != align(b) {
                bad.push(format!(
                    "log {log}: offsets aligned to 2^{} in fio, 2^{} in fslab",
                    align(a),
                    align(b)
                ));
            }
            // the bytes each stretch got: the random map gives every byte
            // once, whatever sizes its blocks were trimmed to
            let span = a.iter().chain(b).map(|o| o.0).max().unwrap() + 1;
            let shares = |v: &[(u64, u64)]| -> HashMap<u64, f64> {
                let total: u64 = v.iter().map(|o| o.1).sum();
                v.iter().fold(HashMap::new(), |mut m, &(o, len)| {
                    *m.entry(o * 20 / span).or_default() += len as f64 / total.max(1) as f64;
                    m
                })
            };
            let (ha, hb) = (shares(a), shares(b));
            let tv = (0..20)
                .map(|k| (ha.get(&k).unwrap_or(&0.0) - hb.get(&k).unwrap_or(&0.0)).abs())
                .sum::<f64>()
                / 2.0;
            // byte shares of blocks of varied sizes vary as (1 + cv^2) more draws would
            let n = a.len().min(b.len()).max(1) as f64 / (1.0 + cv * cv);
            let bound = 0.01 + 2.0 * (20.0 / (std::f64::consts::PI * n)).sqrt();
            if tv > bound {
                bad.push(format!(
                    "log {log}: the bytes of twenty stretches differ by {tv:.3} > {bound:.3}: fio {ha:?} fslab {hb:?}"
                ));
            }
        }
    }
    for want in &d.says {
        if !ours.stderr.contains(want.as_str()) {
            bad.push(format!("fslab did not say '{want}': {}", ours.stderr));
        }
    }
    if d.exact_offsets && fio.offsets != ours.offsets {
        for (log, a) in &fio.offsets {
            let b = ours.offsets.get(log).cloned().unwrap_or_default();
            if *a != b {
                let at = a
                    .iter()
                    .zip(&b)
                    .position(|(x, y)| x != y)
                    .unwrap_or(a.len().min(b.len()));
                bad.push(format!(
                    "log {log}: offsets differ from I/O {at} on: fio {:?} fslab {:?}",
                    &a[at..(at + 4).min(a.len())],
                    &b[at.min(b.len())..(at + 4).min(b.len())]
                ));
            }
        }
    }
    let (nf, no): (u64, u64) = (fio.sizes.values().sum(), ours.sizes.values().sum());
    if !timed && !random_sizes && nf.abs_diff(no) as f64 > (0.02 * nf as f64).max(2.0) {
        bad.push(format!("logged operations: fio {nf}, fslab {no}"));
    }
    // the files: prepared ones as they were, fio's own left, fslab's removed (said)
    let writes = text.contains("write") || text.contains("rw=rw");
    for (n, mib) in &d.prepare {
        let want = prepared_bytes(n, *mib);
        for (tool, o) in [("fio", fio), ("fslab", ours)] {
            match o.files.get(n) {
                None => bad.push(format!("{tool} removed the prepared {n}")),
                Some(&(len, _)) if len != want.len() as u64 => {
                    bad.push(format!("{tool} left the prepared {n} at {len} bytes"))
                }
                Some(&(_, sum)) if !writes && sum != digest(&want) => {
                    bad.push(format!("{tool} changed the prepared {n}"))
                }
                _ => {}
            }
        }
    }
    let made = |o: &Outcome| {
        o.files
            .iter()
            .filter(|(n, _)| !d.prepare.iter().any(|(p, _)| p == *n))
            .map(|(n, &(len, _))| (n.clone(), len))
            .collect::<Vec<_>>()
    };
    if !made(ours).is_empty() {
        bad.push(format!("fslab left files in the job's directory: {:?}", made(ours)));
    }
    if !made(fio).is_empty() && !ours.stderr.contains("fio leaves them") {
        bad.push(format!(
            "fio left {:?} and fslab removed its own without a note saying so",
            made(fio)
        ));
    }
    if bad.is_empty() {
        eprintln!("{name}: agrees ({} jobs, {nf} logged I/Os)", fio.jobs.len());
    }
    bad
}

#[test]
fn job_files_of_public_projects_agree_with_fio() {
    if !require("fio", have("fio")) {
        return;
    }
    let jobs_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio-jobs/agree");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&jobs_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "fio"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "at least 15 job files, found {}", files.len());
    let mut failures = Vec::new();
    let (mut agreed, mut refused) = (0, 0);
    for f in &files {
        let name = f.file_name().unwrap().to_str().unwrap();
        let text = std::fs::read_to_string(f).unwrap();
        let d = directives(&text);
        let lo = match d.device_mib {
            Some(mib) => {
                if !require_root_with(&["losetup"]) {
                    continue;
                }
                Some(LoopDev::new(mib))
            }
            None => None,
        };
        let dev = lo.as_ref().map(|l| l.dev.as_str());
        let ours = run_tool(false, &jobs_dir, name, &d, dev);
        if ours.code == 2 && !d.ok {
            // a refusal: one line, naming one of the file's options
            let keys = option_keys(&text);
            if ours.stderr.lines().count() != 1 || !keys.iter().any(|k| ours.stderr.contains(k.as_str())) {
                failures.push(format!(
                    "{name}: not a one-line refusal naming an option: {}",
                    ours.stderr
                ));
            }
            refused += 1;
            eprintln!("{name}: refused: {}", ours.stderr.trim());
            continue;
        }
        if ours.code != 0 {
            failures.push(format!("{name}: fslab exited {}: {}", ours.code, ours.stderr));
            continue;
        }
        let fio = run_tool(true, &jobs_dir, name, &d, dev);
        assert_eq!(fio.code, 0, "{name}: fio failed: {}", fio.stderr);
        for b in compare(name, &text, &d, &fio, &ours) {
            failures.push(format!("{name}: {b}"));
        }
        agreed += 1;
    }
    assert!(
        failures.is_empty(),
        "{} disagreement(s) with fio:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{agreed} job files agree with fio, {refused} refused");
}

/// The logs of what a job does not measure (disable_clat, gtod_reduce's
/// four) are not written, as fio writes none: the same log files from
/// both tools, and the same number of lines in each (fslab measured
/// everything and wrote clat and lat lines where fio had none).
#[test]
fn logs_of_what_is_not_measured_are_left_out_as_fios() {
    if !require("fio", have("fio")) {
        return;
    }
    for extra in ["disable_clat=1", "disable_lat=1\ndisable_slat=1", "gtod_reduce=1"] {
        let logs = |fio: bool| {
            let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
            let job = job_file(
                tmp.path(),
                "j.fio",
                &format!(
                    "[a]\ndirectory={d}\nsize=1m\nrw=read\nbs=4k\n{extra}\n\
                     write_lat_log={d}/lg\nwrite_iops_log={d}/lg\nlog_avg_msec=0\n",
                    d = tmp.path().display()
                ),
            );
            let r = run_fio_format(fio, &job, tmp.path(), "terse");
            assert_eq!(r.code, 0, "{}: {}", r.tool, r.stderr);
            let mut v: Vec<(String, usize)> = std::fs::read_dir(tmp.path())
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("lg_"))
                .map(|n| {
                    let lines = std::fs::read_to_string(tmp.path().join(&n)).unwrap().lines().count();
                    (n, lines)
                })
                .collect();
            v.sort();
            v
        };
        assert_eq!(logs(false), logs(true), "{extra}: fslab's logs, then fio's");
    }
}

/// Offset modifiers fslab does not do, or cannot read, are refused in one
/// line naming the option and its value.
#[test]
fn offset_modifiers_it_does_not_do_are_refused() {
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let d = format!("--directory={}", work.path().display());
    let case = |rw: &str, want: &str| refusal(&["fio", &d, "--name=j", "--size=1m", rw], want);
    expect_refusals(
        &[
            case("--rw=randread:8k", "rw: '8k' after 'randread:' is not a whole number"),
            case("--rw=read:x8", "rw: 'x8' after 'read:' is not a size"),
            case("--rw=write:-", "rw: '-' after 'write:' is not a size"),
        ],
        &[],
    );
    assert!(leftovers(work.path()).is_empty());
}

/// verify_interval below the block size (fio's examples/surface-scan.fio
/// writes 512 with 64 KiB blocks): fslab checks the same bytes a whole
/// block at a time and says so; an interval that does not divide the
/// block is refused in one line.
#[test]
fn a_verify_interval_dividing_the_block_runs_with_a_note() {
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let job = |interval: &str| {
        let p = job_file(
            work.path(),
            "v.fio",
            &format!(
                "[v]\ndirectory={}\nrw=write\nbs=64k\nsize=1m\nverify=crc32c\nverify_interval={interval}\n",
                work.path().display()
            ),
        );
        fslab()
            .arg("fio")
            .arg(&p)
            .args(["--output-format=json", "--quiet"])
            .output()
            .unwrap()
    };
    let out = job("512");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("verify_interval=512: fio stamps a verify header every 512"),
        "{stderr}"
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["jobs"][0]["write"]["io_bytes"], 1 << 20);
    assert_eq!(
        j["jobs"][0]["read"]["io_bytes"],
        1 << 20,
        "the written blocks read back and checked"
    );
    let out = job("3000");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("verify_interval=3000: fslab checks whole blocks"),
        "{stderr}"
    );
    assert!(leftovers(work.path()).is_empty());
}

/// A job that only writes, without overwrite, gets a new file made as
/// fio's extend_file makes it (by its fallocate), not one written first;
/// a job that reads, or overwrite=1, gets a written one (its plan says
/// which, in the result file).
#[test]
fn a_write_only_jobs_new_file_is_made_as_fios() {
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    for (opts, want) in [
        ("rw=randwrite", Some("fallocate")),
        ("rw=write\nfallocate=none", Some("empty")),
        ("rw=write\nfallocate=truncate", Some("truncate")),
        ("rw=randwrite\noverwrite=1", None),
        ("rw=randrw", None),
    ] {
        let job = job_file(
            work.path(),
            "w.fio",
            &format!("[w]\ndirectory={}\nsize=1m\nbs=64k\n{opts}\n", work.path().display()),
        );
        let res = work.path().join("r.json");
        let out = fslab()
            .arg("fio")
            .arg(&job)
            .args(["--output=/dev/null", "--quiet", "--results"])
            .arg(&res)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{opts}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r = read_json(&res);
        let cell = &cells(&r)[0];
        assert_eq!(cell["plan"]["region"]["fresh"].as_str(), want, "{opts}");
        let bytes: u64 = cell["directions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(bytes, 1 << 20, "{opts}: the job's bytes");
        std::fs::remove_file(&res).unwrap();
    }
    assert!(leftovers(work.path()).is_empty());
}
