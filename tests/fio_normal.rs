//! `fslab fio`'s normal output has fio 3.33's lines in fio's order (issue
//! 33, done-when 3): ten job files of tests/fio-jobs (`n01`..`n10`: read,
//! write, a timed randrw mix, io_uring at iodepth 8, O_DIRECT, clones with
//! and without group_reporting, two stonewalled groups, fsync, O_DIRECT
//! io_uring writes), each run by fio and by fslab with `--eta=never` in a
//! copy of the job directory, and their texts compared line by line once
//! normalised (`normalise`): every number is a placeholder, and only what
//! fio itself chooses from the figures it measured is collapsed.

use crate::util::*;
use std::path::Path;

const JOBS: [&str; 10] = [
    "n01-normal-seq-read.fio",
    "n02-normal-seq-write.fio",
    "n03-normal-randrw-timed.fio",
    "n04-normal-uring-qd8.fio",
    "n05-normal-direct.fio",
    "n06-normal-group-reporting.fio",
    "n07-normal-numjobs.fio",
    "n08-normal-groups.fio",
    "n09-normal-fsync.fio",
    "n10-normal-uring-direct-write.fio",
];

/// Every number (digits, a fraction, and a unit prefix right after them:
/// num2str picks k/M/Ki/Mi... by magnitude) as `N`.
fn numbers(l: &str) -> String {
    let c: Vec<char> = l.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < c.len() {
        if !c[i].is_ascii_digit() {
            out.push(c[i]);
            i += 1;
            continue;
        }
        while i < c.len() && c[i].is_ascii_digit() {
            i += 1;
        }
        if i + 1 < c.len() && c[i] == '.' && c[i + 1].is_ascii_digit() {
            i += 1;
            while i < c.len() && c[i].is_ascii_digit() {
                i += 1;
            }
        }
        let prefix = |ch: char| matches!(ch, 'K' | 'M' | 'G' | 'T' | 'P');
        if i + 1 < c.len() && prefix(c[i]) && c[i + 1] == 'i' {
            i += 2;
        } else if i < c.len() && (prefix(c[i]) || c[i] == 'k') {
            i += 1;
        }
        out.push('N');
    }
    out
}

/// fio's text with what may differ between two runs of the same job made
/// alike, and nothing else:
/// - the version line: fio's "fio-3.33", fslab's "fslab-X.Y.Z";
/// - a run of latency distribution lines (`lat (usec)   : 250=...`) as one
///   line: which marks are non-empty, so how many lines, follows the
///   latencies measured;
/// - a percentile block's rows as one: how many fit in a row follows the
///   digits of the largest value;
/// - the unit of a latency line or percentile block (nsec, usec, msec)
///   and of the bw sample line (KiB/s, MiB/s over 1 GiB/s): fio picks it
///   from the figures;
/// - every number (with its unit prefix) as `N`, and the padding fio puts
///   before numbers (`%5llu`, `[%5llu]`) as nothing.
fn normalise(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut in_dist = false;
    for l in text.lines() {
        let t = l.trim();
        if t.starts_with("lat (") && t.contains(")   : ") {
            if !in_dist {
                out.push("lat distribution".into());
            }
            in_dist = true;
            continue;
        }
        in_dist = false;
        if let Some(row) = t.strip_prefix('|') {
            let row = numbers(row).replace(' ', "");
            match out.last_mut() {
                Some(last) if last.starts_with("percentiles row:") => last.push_str(&row),
                _ => out.push(format!("percentiles row:{row}")),
            }
            continue;
        }
        if (t.starts_with("fio-") || t.starts_with("fslab-")) && !t.contains(' ') {
            out.push("<version>".into());
            continue;
        }
        let mut l = l.to_string();
        for u in ["(nsec)", "(usec)", "(msec)"] {
            l = l.replace(u, "(<unit>)");
        }
        for u in ["(  KiB/s)", "(  MiB/s)", "(   kB/s)", "(   MB/s)"] {
            l = l.replace(u, "(<unit>/s)");
        }
        let l = numbers(&l);
        let mut squeezed = String::new();
        for ch in l.chars() {
            let prev = squeezed.chars().last();
            if ch == ' ' && matches!(prev, Some(' ' | '=' | '[')) {
                continue;
            }
            squeezed.push(ch);
        }
        out.push(squeezed);
    }
    out
}

/// `tool` (fio, or fslab's `fio` command) on job `name`, in a copy of the
/// job directory, its files in a directory of their own: stdout, stderr.
fn run(fslab_tool: bool, name: &str, jobs: &Path, args: &[&str]) -> (String, String) {
    let cwd = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir_in("/var/tmp").unwrap();
    let copy = cwd.path().join("jobs");
    std::fs::create_dir(&copy).unwrap();
    for e in std::fs::read_dir(jobs).unwrap().flatten() {
        if e.path().is_file() {
            std::fs::copy(e.path(), copy.join(e.file_name())).unwrap();
        }
    }
    let out = crate::util::fio_or_fslab(if fslab_tool { "fslab" } else { "fio" }, false)
        .current_dir(&copy)
        .env("FSLAB_FIO_DIR", data.path())
        .args([name, "--eta=never"])
        .args(args)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    let tool = if fslab_tool { "fslab fio" } else { "fio" };
    assert!(out.status.success(), "{tool} {name}: {stderr}{stdout}");
    if fslab_tool {
        assert!(
            leftovers(data.path()).is_empty(),
            "{name}: {:?}",
            leftovers(data.path())
        );
    }
    (stdout, stderr)
}

/// Whether /var/tmp takes O_DIRECT (tmpfs before Linux 6.6 does not).
fn direct_ok() -> bool {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let p = d.path().join("probe");
    std::fs::write(&p, [0u8; 4096]).unwrap();
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&p)
        .is_ok()
}

/// The first line where the two differ, with both texts.
fn first_difference(a: &[String], b: &[String]) -> Option<String> {
    let n = a.len().max(b.len());
    (0..n).find(|&i| a.get(i) != b.get(i)).map(|i| {
        format!(
            "line {}: fio {:?}, fslab {:?}",
            i + 1,
            a.get(i).map_or("<none>", String::as_str),
            b.get(i).map_or("<none>", String::as_str)
        )
    })
}

#[test]
fn fslab_fio_normal_output_has_fios_lines_in_fios_order() {
    if !require("fio", have("fio")) {
        return;
    }
    let direct = direct_ok();
    let jobs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio-jobs");
    for name in JOBS {
        // the O_DIRECT jobs need a /var/tmp that takes it (tmpfs before 6.6 does not)
        if name.contains("direct") && !require("a /var/tmp that takes O_DIRECT", direct) {
            continue;
        }
        let (theirs, _) = run(false, name, &jobs, &[]);
        let (ours, err) = run(true, name, &jobs, &[]);
        // --eta=never: no progress, and no note but the one on the files
        // fslab removes where fio leaves them
        let others: Vec<&str> = err
            .lines()
            .filter(|l| !l.starts_with("fslab fio: note: files:"))
            .collect();
        assert!(others.is_empty(), "{name}: fslab's stderr: {err}");
        let (a, b) = (normalise(&theirs), normalise(&ours));
        if let Some(d) = first_difference(&a, &b) {
            panic!("{name}: {d}\n--- fio:\n{theirs}\n--- fslab:\n{ours}");
        }
        // what the comparison stands on: fio's lines are all there
        for want in ["Run status group 0 (all jobs):", "     issued rwts: total="] {
            assert!(ours.contains(want), "{name}: {ours}");
        }
    }
}

/// The text with the terse line and the JSON document as one line each.
fn formats(text: &str) -> String {
    let mut out = String::new();
    let mut in_json = false;
    for l in text.lines() {
        match l {
            "{" if !in_json => {
                in_json = true;
                out.push_str("<json>\n");
            }
            "}" if in_json => in_json = false,
            _ if in_json => {}
            _ if l.starts_with("3;") => out.push_str("<terse>\n"),
            _ => {
                out.push_str(l);
                out.push('\n');
            }
        }
    }
    out
}

/// With every format asked, the lines come in fio's order: the normal
/// output's lines before the run, the terse line, the JSON document, then
/// the normal output's results.
#[test]
fn a_format_list_is_written_in_fios_order() {
    if !require("fio", have("fio")) {
        return;
    }
    let jobs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio-jobs");
    let name = JOBS[0];
    let all = ["--output-format=normal,json,terse"];
    let (theirs, _) = run(false, name, &jobs, &all);
    let (ours, _) = run(true, name, &jobs, &all);
    let (a, b) = (normalise(&formats(&theirs)), normalise(&formats(&ours)));
    if let Some(d) = first_difference(&a, &b) {
        panic!("{name}: {d}\n--- fio:\n{theirs}\n--- fslab:\n{ours}");
    }
    assert!(
        b.iter().any(|l| l == "<json>") && b.iter().any(|l| l == "<terse>"),
        "{b:?}"
    );
    // the JSON's disk_util: the devices of the text's Disk stats, fio's keys
    let disks = |text: &str| -> Vec<serde_json::Value> {
        let at = text.find("\n{\n").expect("a JSON document") + 1;
        let mut docs = serde_json::Deserializer::from_str(&text[at..]).into_iter::<serde_json::Value>();
        let j = docs.next().unwrap().unwrap();
        j["disk_util"].as_array().unwrap().clone()
    };
    let (t, o) = (disks(&theirs), disks(&ours));
    let keys = |v: &[serde_json::Value]| -> Vec<Vec<String>> {
        v.iter()
            .map(|d| d.as_object().unwrap().keys().cloned().collect())
            .collect()
    };
    assert_eq!(keys(&t), keys(&o), "{t:?} {o:?}");
    for d in &o {
        let name = d["name"].as_str().unwrap();
        assert!(ours.contains(&format!("  {name}: ios=")), "{name}: {ours}");
    }
}

#[test]
fn the_normalisation_keeps_words_and_order() {
    let fio = "  read: IOPS=13.6k, BW=106MiB/s (111MB/s)(32.1MiB/303msec)\n\
               \x20   clat (usec): min=38, max=5049, avg=60.18, stdev=216.41\n\
               \x20    |  1.00th=[   41],  5.00th=[ 4113],\n\
               \x20    | 10.00th=[   43]\n\
               \x20 lat (usec)   : 4=7.27%, 10=23.33%\n\
               \x20 lat (msec)   : 2=0.03%\n\
               \x20  bw (  KiB/s): min= 4352, max= 4352, per=92.44%\n\
               fio-3.33\n";
    let fslab = "  read: IOPS=6095, BW=1321KiB/s (1353kB/s)(9984KiB/7msec)\n\
                 \x20   clat (nsec): min=3195, max=8597.6k, avg= 5399.04, stdev=1792.45\n\
                 \x20    |  1.00th=[ 3408],\n\
                 \x20    |  5.00th=[10432], 10.00th=[ 3664]\n\
                 \x20 lat (nsec)   : 750=24.27%\n\
                 \x20  bw (  MiB/s): min=1104, max=1104, per=100.00%\n\
                 fslab-0.1.0\n";
    assert_eq!(normalise(fio), normalise(fslab));
    assert_eq!(
        normalise(fio)[0],
        " read: IOPS=N, BW=NB/s (NB/s)(NB/Nmsec)",
        "{:?}",
        normalise(fio)
    );
    // a line fio has and fslab not, or the other order, is a difference
    let swapped = "fio-3.33\n  read: IOPS=1, BW=1B/s (1B/s)(1B/1msec)\n";
    assert!(first_difference(&normalise(fio), &normalise(swapped)).is_some());
    assert_ne!(normalise("  write: IOPS=1"), normalise("  read: IOPS=1"));
}
