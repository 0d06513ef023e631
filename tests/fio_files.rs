//! A job's files against fio 3.33 itself: `filename=a:b:c` lists (over
//! existing files, and new ones), `allow_file_create`, and the random
//! offset modifier (`rw=randread:N`). The same job runs under fio and
//! `fslab fio`; the names, I/O counts, per-I/O offsets (`write_lat_log`
//! with `log_offset=1`) and the files left afterwards are compared.

use crate::util::*;
use std::collections::BTreeMap;
use std::path::Path;

/// What one tool's run of a job gave.
#[derive(Debug)]
struct Run {
    /// (job name, read I/Os, write I/Os), in the report's order.
    jobs: Vec<(String, u64, u64)>,
    /// log N -> (offset, size, direction: 0 read, 1 write) of its I/Os in
    /// the order they were logged.
    logs: BTreeMap<u64, Vec<(u64, u64, u64)>>,
}

/// Runs `job` (a job file's text) under fio or fslab in `cwd`, with
/// per-I/O logs in `logs`; `extra` are more arguments for fslab only.
fn run(tool: &str, job: &str, cwd: &Path, logs: &Path, extra: &[&str]) -> Run {
    let file = job_file(logs, "job.fio", job);
    let mut cmd = fio_or_fslab(tool, true);
    if tool == "fslab" {
        cmd.args(extra);
    }
    let out = cmd
        .current_dir(cwd)
        .arg(&file)
        .arg("--output-format=json")
        .arg(format!("--write_lat_log={}/lg", logs.display()))
        .args(["--log_avg_msec=0", "--log_offset=1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{tool}: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_str(stdout.trim_start_matches(|c| c != '{'))
        .unwrap_or_else(|e| panic!("{tool} gave no JSON ({e}): {stdout}"));
    let jobs = j["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            let n = |d: &str| x[d]["total_ios"].as_u64().unwrap();
            (x["jobname"].as_str().unwrap().to_string(), n("read"), n("write"))
        })
        .collect();
    let mut logs_out = BTreeMap::new();
    for e in std::fs::read_dir(logs).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(n) = name.strip_prefix("lg_clat.").and_then(|r| r.strip_suffix(".log")) else {
            continue;
        };
        let ios: Vec<(u64, u64, u64)> = std::fs::read_to_string(e.path())
            .unwrap()
            .lines()
            .map(|l| {
                let c: Vec<u64> = l.split(',').map(|v| v.trim().parse().unwrap()).collect();
                (c[4], c[3], c[2])
            })
            .collect();
        logs_out.insert(n.parse().unwrap(), ios);
        std::fs::remove_file(e.path()).unwrap();
    }
    Run { jobs, logs: logs_out }
}

/// name -> (size, checksum) of each file in `dir`.
fn files_in(dir: &Path) -> BTreeMap<String, (u64, u64)> {
    use std::hash::{Hash, Hasher};
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| {
            let b = std::fs::read(e.path()).unwrap();
            let mut h = std::collections::hash_map::DefaultHasher::new();
            b.hash(&mut h);
            (
                e.file_name().to_string_lossy().into_owned(),
                (b.len() as u64, h.finish()),
            )
        })
        .collect()
}

/// Every logged offset of a run, sorted: where its I/Os landed in all.
fn all_offsets(r: &Run) -> Vec<u64> {
    let mut v: Vec<u64> = r.logs.values().flatten().map(|x| x.0).collect();
    v.sort_unstable();
    v
}

/// filename=a:b:c\:d over three existing files (one named with a colon):
/// one job over all three, its clones sharing them, the size split among
/// them or each file's own; the same I/O counts and offsets as fio's,
/// the files taken in fio's order (file_service_type), and the files left
/// byte for byte as they were.
#[test]
fn a_list_of_existing_files_runs_over_them_as_fio_does() {
    if !require("fio", have("fio")) {
        return;
    }
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let (dir, logs) = (tmp.path().join("d"), tmp.path().join("logs"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&logs).unwrap();
    for (i, n) in ["a", "b", "c:d"].iter().enumerate() {
        std::fs::write(dir.join(n), vec![i as u8 + 1; 256 << 10]).unwrap();
    }
    let before = files_in(&dir);
    let job = format!(
        "[global]\ndirectory={}\nfilename=a:b:c\\:d\nbs=4k\nioengine=psync\n\
         [whole]\nrw=randread\nnumjobs=2\nfile_service_type=roundrobin\n\
         [split]\nstonewall\nrw=read\nsize=384k\nfile_service_type=sequential\n\
         [turns]\nstonewall\nrw=read\nsize=48k\n\
         [each]\nstonewall\nrw=randread\nfilesize=64k\n",
        dir.display()
    );
    let fio = run("fio", &job, tmp.path(), &logs, &[]);
    assert_eq!(files_in(&dir), before, "fio left the files as they were");
    let ours = run("fslab", &job, tmp.path(), &logs, &[]);
    assert_eq!(files_in(&dir), before, "fslab left the files as they were");
    // each clone reads every block of the three files; the split job 128k of each
    let want = [
        ("whole", 192),
        ("whole", 192),
        ("split", 96),
        ("turns", 12),
        ("each", 48),
    ];
    let counts = |r: &Run| r.jobs.iter().map(|(n, r, w)| (n.clone(), r + w)).collect::<Vec<_>>();
    let want: Vec<(String, u64)> = want.iter().map(|(n, c)| (n.to_string(), *c)).collect();
    assert_eq!(counts(&fio), want, "fio's (job, I/Os)");
    assert_eq!(counts(&ours), want, "fslab's (job, I/Os)");
    // the same offsets in all: every block of each file once per clone,
    // and the first 128k of each file for the split job
    assert_eq!(all_offsets(&ours), all_offsets(&fio), "offsets of fslab, then fio");
    assert_eq!(all_offsets(&fio).len(), 540);
    // file_service_type picks the files in fio's order: sequential reads
    // each file to its share's end in turn, roundrobin (the default)
    // takes a block of each in turn
    let order = |r: &Run, log: u64| r.logs[&log].iter().map(|x| x.0 / 4096).collect::<Vec<_>>();
    let split: Vec<u64> = (0..3).flat_map(|_| 0..32).collect();
    let turns: Vec<u64> = (0..4).flat_map(|b| [b; 3]).collect();
    assert_eq!((order(&fio, 3), order(&fio, 4)), (split.clone(), turns.clone()), "fio");
    assert_eq!((order(&ours, 3), order(&ours, 4)), (split, turns), "fslab");
}

/// A list of files that do not exist: fio creates them, each of size /
/// files, shared by the clones; fslab works in files of its own in their
/// directory (said in a note) with the same I/Os, and removes them.
#[test]
fn a_list_of_new_files_splits_the_size_as_fio_does() {
    if !require("fio", have("fio")) {
        return;
    }
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let (dir, logs) = (tmp.path().join("d"), tmp.path().join("logs"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&logs).unwrap();
    let job = format!(
        "[w]\ndirectory={}\nfilename=x:y\nrw=write\nbs=4k\nsize=256k\nnumjobs=2\nioengine=psync\n",
        dir.display()
    );
    let fio = run("fio", &job, tmp.path(), &logs, &[]);
    let left = files_in(&dir);
    let sizes: Vec<(&str, u64)> = left.iter().map(|(n, s)| (n.as_str(), s.0)).collect();
    assert_eq!(sizes, [("x", 128 << 10), ("y", 128 << 10)], "fio's files");
    for n in ["x", "y"] {
        std::fs::remove_file(dir.join(n)).unwrap();
    }
    let ours = run("fslab", &job, tmp.path(), &logs, &[]);
    assert_eq!(ours.jobs, fio.jobs, "(job, reads, writes) of fslab, then fio");
    assert_eq!(fio.jobs, [("w".to_string(), 0, 64), ("w".to_string(), 0, 64)]);
    assert_eq!(all_offsets(&ours), all_offsets(&fio), "offsets of fslab, then fio");
    assert!(leftovers(&dir).is_empty(), "fslab removes its own files");
}

/// One filename= with nrfiles=4: fio's job has the one file it names
/// (nr_files is cut to the names' count), of the whole size; so has
/// fslab's (its own file, not four of a quarter each).
#[test]
fn nrfiles_beyond_the_named_files_is_cut_as_fio_cuts_it() {
    if !require("fio", have("fio")) {
        return;
    }
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let (dir, logs) = (tmp.path().join("d"), tmp.path().join("logs"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&logs).unwrap();
    let job = format!(
        "[n]\ndirectory={}\nfilename=one\nnrfiles=4\nrw=read\nbs=4k\nsize=256k\nioengine=psync\n",
        dir.display()
    );
    let fio = run("fio", &job, tmp.path(), &logs, &[]);
    let sizes: Vec<u64> = files_in(&dir).values().map(|x| x.0).collect();
    assert_eq!(sizes, [256 << 10], "fio's one file");
    std::fs::remove_file(dir.join("one")).unwrap();
    let ours = run("fslab", &job, tmp.path(), &logs, &[]);
    assert_eq!(ours.jobs, fio.jobs);
    let want: Vec<u64> = (0..64).map(|b| b * 4096).collect();
    assert_eq!(all_offsets(&fio), want);
    assert_eq!(
        all_offsets(&ours),
        want,
        "fslab's offsets span one file of the whole size"
    );
}

/// The filename= list's bad inputs and the files it must not touch: each
/// refused in one line naming the list, exit 2, the files unchanged and
/// nothing new made.
#[test]
fn a_list_fslab_cannot_run_as_fio_would_is_refused() {
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let d = tmp.path();
    std::fs::write(d.join("a"), vec![1u8; 256 << 10]).unwrap();
    std::fs::write(d.join("b"), vec![2u8; 256 << 10]).unwrap();
    std::fs::write(d.join("big"), vec![3u8; 512 << 10]).unwrap();
    std::os::unix::fs::symlink("/proc/self/status", d.join("link")).unwrap();
    std::fs::create_dir(d.join("sub")).unwrap();
    let before = files_in(d);
    // the names are under the directory, as fio joins them (an absolute
    // name too); the device and the symlink to /proc are named without it
    let dir = format!("--directory={}", d.display());
    let case = |args: &[&str], want: &str| {
        let mut a = vec!["fio", "--name=j", "--bs=4k", dir.as_str()];
        a.extend_from_slice(args);
        refusal(&a, want)
    };
    let a = d.join("a").display().to_string();
    let bare = |list: String, want: &str| refusal(&["fio", "--name=j", "--bs=4k", &format!("--filename={list}")], want);
    expect_refusals(
        &[
            case(&["--filename=a:nope"], "a exists and"),
            bare(format!("{a}:/dev/null"), "'/dev/null' is not"),
            bare(format!("{a}:{}", d.join("link").display()), "proc"),
            case(&["--filename=a:/dev/null"], "/dev/null does not"),
            case(&["--filename=a:a"], "twice"),
            case(&["--filename=a:b", "--rw=write"], "--force-overwrite"),
            case(&["--filename=a:b", "--size=1m"], "more than"),
            case(&["--filename=a:big"], "same bytes"),
            case(&["--filename=x:sub/y", "--size=1m"], "one directory"),
            case(&["--filename=x:y"], "you need to specify size="),
            case(&["--filename=a:b", "--nrfiles=1"], "nrfiles=1 with filename=a:b"),
            case(&["--filename=:"], "names no file"),
            refusal(
                &[
                    "fio",
                    "--name=j",
                    "--size=1m",
                    &format!("--directory={0}:{0}", d.display()),
                ],
                "several directories",
            ),
        ],
        &[],
    );
    assert_eq!(files_in(d), before, "the files are as they were");
    let mut names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["a", "b", "big", "link", "sub"], "nothing new made");
    assert!(leftovers(&d.join("sub")).is_empty());
}

/// allow_file_create=0: over an existing file the job runs as fio's (the
/// same I/Os, the file as it was); where the file does not exist fio fails
/// the job ("file creation disallowed by allow_file_create=0") and makes
/// nothing, and fslab refuses it in one line before anything runs.
#[test]
fn allow_file_create_0_runs_only_on_files_that_exist() {
    if !require("fio", have("fio")) {
        return;
    }
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let (dir, logs) = (tmp.path().join("d"), tmp.path().join("logs"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(dir.join("there"), vec![5u8; 256 << 10]).unwrap();
    let before = files_in(&dir);
    let job = |name: &str| {
        format!(
            "[j]\ndirectory={}\nfilename={name}\nrw=randread\nbs=4k\nsize=256k\nioengine=psync\nallow_file_create=0\n",
            dir.display()
        )
    };
    let fio = run("fio", &job("there"), tmp.path(), &logs, &[]);
    let ours = run("fslab", &job("there"), tmp.path(), &logs, &[]);
    assert_eq!(fio.jobs, [("j".to_string(), 64, 0)]);
    assert_eq!(ours.jobs, fio.jobs, "(job, reads, writes) of fslab, then fio");
    assert_eq!(files_in(&dir), before);
    // a file that is not there: fio fails the job and creates nothing
    let file = job_file(&logs, "new.fio", &job("new"));
    let out = std::process::Command::new("fio").arg(&file).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "fio: {err}");
    assert!(
        err.contains("file creation disallowed by allow_file_create=0"),
        "fio: {err}"
    );
    assert_eq!(files_in(&dir), before, "fio made nothing");
    let file = file.display().to_string();
    let bad = job_file(&logs, "bad.fio", "[j]\nsize=1m\nallow_file_create=maybe\n")
        .display()
        .to_string();
    expect_refusals(
        &[
            refusal(&["fio", &file], "new.fio:8: [j] allow_file_create=0: "),
            refusal(&["fio", &file], "file creation disallowed by allow_file_create=0"),
            refusal(
                &["fio", &bad],
                "bad.fio:3: [j] allow_file_create: 'maybe' is not 0 or 1",
            ),
        ],
        &[],
    );
    assert_eq!(files_in(&dir), before, "fslab made nothing");
    assert!(leftovers(&dir).iter().all(|n| n == "there"));
}

/// rw=randread:8 (fio's ddir_seq_nr): a random offset every 8th I/O, the
/// 7 between going on from it (past the file's end, a random block); with
/// rw_sequencer=identical the 7 repeat its offset. fio's per-I/O offset
/// log and fslab's have the same structure: the same counts, runs only
/// broken at every 8th I/O (or after the file's last block), and as many
/// distinct random offsets.
#[test]
fn random_offsets_every_n_ios_as_fio_draws_them() {
    if !require("fio", have("fio")) {
        return;
    }
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let (dir, logs) = (tmp.path().join("d"), tmp.path().join("logs"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&logs).unwrap();
    let size = 1u64 << 20;
    for seqr in ["sequential", "identical"] {
        let job = format!(
            "[r]\ndirectory={}\nrw=randread:8\nrw_sequencer={seqr}\nbs=4k\nsize=1m\nioengine=psync\n",
            dir.display()
        );
        for tool in ["fio", "fslab"] {
            let r = run(tool, &job, tmp.path(), &logs, &[]);
            assert_eq!(r.jobs, [("r".to_string(), 256, 0)], "{tool} {seqr}");
            let ios = &r.logs[&1];
            assert_eq!(ios.len(), 256, "{tool} {seqr}");
            for (i, w) in ios.windows(2).enumerate().map(|(i, w)| (i + 1, w)) {
                if i % 8 == 0 {
                    continue;
                }
                let ok = match seqr {
                    "identical" => w[1].0 == w[0].0,
                    _ => w[1].0 == w[0].0 + 4096 || w[0].0 + 4096 == size,
                };
                assert!(ok, "{tool} {seqr}: I/O {i} at {} after {}", w[1].0, w[0].0);
            }
            // every 8th I/O is a new random block of the map: 32 distinct
            let starts: std::collections::BTreeSet<u64> = ios.iter().step_by(8).map(|x| x.0).collect();
            assert_eq!(
                starts.len(),
                32,
                "{tool} {seqr}: the random offsets are distinct (the map)"
            );
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
        }
    }
    // randrw:4: the count is the job's, the runs each direction's own
    // (fio's last_pos per direction: a direction's first run starts at 0)
    let job = format!(
        "[m]\ndirectory={}\nrw=randrw:4\nbs=4k\nsize=1m\nioengine=psync\n",
        dir.display()
    );
    for tool in ["fio", "fslab"] {
        let r = run(tool, &job, tmp.path(), &logs, &[]);
        let ios = &r.logs[&1];
        assert_eq!(ios.len(), 256, "{tool} randrw");
        let mut last: [Option<u64>; 2] = [None, None];
        for (i, io) in ios.iter().enumerate() {
            let d = io.2 as usize;
            if i % 4 != 0 {
                let want = last[d].map_or(0, |o| o + 4096);
                assert!(
                    io.0 == want || want == size,
                    "{tool} randrw: I/O {i} at {} where {want}",
                    io.0
                );
            }
            last[d] = Some(io.0);
        }
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
    }
    let d = format!("--directory={}", dir.display());
    expect_refusals(
        &[
            refusal(
                &["fio", &d, "--name=j", "--size=1m", "--rw=randread:x"],
                "rw: 'x' after 'randread:' is not a whole number",
            ),
            refusal(
                &["fio", &d, "--name=j", "--size=1m", "--rw=randrw:-1"],
                "rw: '-1' after 'randrw:' is not a whole number",
            ),
            refusal(
                &["fio", &d, "--name=j", "--size=1m", "--rw_sequencer=backwards"],
                "rw_sequencer: 'backwards' is not sequential or identical",
            ),
        ],
        &[],
    );
    assert!(leftovers(&dir).is_empty());
}
