//! The table of bad inputs across every command (issue 19): each refused
//! with exit 2 and one line naming the flag or file:line and the value, within
//! a deadline, creating no output file. More cases are appended to the lists
//! below (or given to `expect_refusals` from another test).

use crate::util::*;

/// Filesystem type mounted at `mount_point`, from /proc/self/mountinfo.
fn fs_type_at(mount_point: &str) -> Option<String> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .ok()?
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let sep = f.iter().position(|x| *x == "-")?;
            (f.get(4) == Some(&mount_point)).then(|| f.get(sep + 1).map(|s| s.to_string()))?
        })
}

const HUGE: &str = "18446744073709551615";
const HUGE_S: &str = "18446744073709551615s";

/// Bad durations and sizes (the overflows that panicked), negative values,
/// pseudo filesystems as targets, and the unclear messages of issue 19, for
/// every command: command lines, fio job files and plan files. Each is
/// refused with exit 2 and one line naming the flag or file:line and the
/// value, within a deadline, creating no output file.
#[test]
fn table_of_bad_inputs_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap().to_string();
    let t = t.as_str();
    let out = dir.path().join("out.json");
    let fio_out = dir.path().join("fio.out");
    let html = dir.path().join("report.html");
    let json = format!("json:{}", out.display());
    let fio_output = format!("--output={}", fio_out.display());
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let file = write("plain-file", "x");
    let load = write(
        "ok.load",
        "NTCreateX \"\\clients\\client1\\f\" 0x40 0x2 3 NT_STATUS_OK\nClose 3 NT_STATUS_OK\n",
    );
    // every measuring command gets --output first (a value-less flag at the
    // end of a case must not take it), and the output must never appear;
    // --target the tempdir unless the case gives its own
    let with_out = |cmd: &str, args: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = vec![cmd.into(), "--output".into(), json.clone()];
        if !args.contains(&"--target") {
            v.extend(["--target".into(), t.into()]);
        }
        v.extend(args.iter().map(|s| s.to_string()));
        v
    };
    let mut cases: Vec<Refusal> = Vec::new();
    let mut add = |args: Vec<String>, want: String| cases.push(Refusal { args, want });
    let long = |flag: &str, v: &str| format!("{flag}: '{v}' is longer than the 30-day maximum");

    // io
    for (args, want) in [
        (vec!["--runtime", HUGE_S], long("--runtime", HUGE_S)),
        (vec!["--runtime", HUGE], long("--runtime", HUGE)),
        (vec!["--runtime", "31d"], long("--runtime", "31d")),
        (vec!["--runtime", "1s", "--ramp", HUGE_S], long("--ramp", HUGE_S)),
        (vec!["--thinktime", HUGE_S], long("--thinktime", HUGE_S)),
        (vec!["--stonewall", HUGE_S], long("--stonewall", HUGE_S)),
        (
            vec!["--lat-buckets", &format!("1ms,{HUGE_S}")],
            long("--lat-buckets", HUGE_S),
        ),
        (vec!["--engine", "uring", "--sqpoll", HUGE_S], long("--sqpoll", HUGE_S)),
        (vec!["--runtime", "-1s"], "--runtime: '-1s' is not a duration".into()),
        (
            vec!["--runtime", "1s", "--ramp", "-5s"],
            "--ramp: '-5s' is not a duration".into(),
        ),
        (
            vec!["--thinktime", "-1ms"],
            "--thinktime: '-1ms' is not a duration".into(),
        ),
        (vec!["--stonewall", "-3s"], "--stonewall: '-3s' is neither".into()),
        (
            vec!["--lat-buckets", "-1ms"],
            "--lat-buckets: '-1ms' is not a duration".into(),
        ),
        (vec!["--bs", "-4k"], "--bs: '-4k' is neither a size nor a range".into()),
        (vec!["--bs", "4k-"], "--bs: '4k-' is neither a size nor a range".into()),
        (vec!["--bs", "16e"], "--bs: '16e' is larger than 8 EiB".into()),
        (vec!["--bssplit", "-4k/50:8k"], "--bssplit: '-4k/50'".into()),
        (vec!["--size", "-1m"], "--size: '-1m' is not a size".into()),
        (vec!["--size", "16e"], "--size: '16e' is larger than 8 EiB".into()),
        (
            vec!["--size", "18446744073709551615k"],
            "--size: '18446744073709551615k' is larger than 8 EiB".into(),
        ),
        (vec!["--target", "/proc"], "--target: '/proc' is on procfs".into()),
        (
            vec!["--target", "/proc/self/status"],
            "--target: '/proc/self/status' is on procfs".into(),
        ),
        (
            vec!["--on-error", "sometimes"],
            "invalid value 'sometimes' for '--on-error <WHAT>'".into(),
        ),
        (vec!["--bogus"], "'--bogus'".into()),
        (vec!["--rw"], "'--rw <PATTERN>'".into()),
        (vec!["--runtime"], "'--runtime <DUR>'".into()),
        (vec!["--size-based"], "--runtime".into()),
    ] {
        add(with_out("io", &args), want);
    }
    if fs_type_at("/sys").as_deref() == Some("sysfs") {
        add(
            with_out("io", &["--target", "/sys/kernel"]),
            "--target: '/sys/kernel' is on sysfs".into(),
        );
        add(
            with_out("meta", &["--target", "/sys"]),
            "--target: '/sys' is on sysfs".into(),
        );
    }
    if fs_type_at("/dev").as_deref() == Some("devtmpfs") {
        add(
            with_out("io", &["--target", "/dev"]),
            "--target: '/dev' is on devtmpfs".into(),
        );
    }

    // meta
    for (args, want) in [
        (vec!["--bonnie", HUGE], format!("--bonnie: '{HUGE}'")),
        // 2^54 x 1024 wrapped to 0, then blamed on --files
        (
            vec!["--bonnie", "18014398509481984"],
            "--bonnie: '18014398509481984'".into(),
        ),
        (
            vec!["--bonnie", "1:0:0:2000"],
            "--bonnie: '1:0:0:2000': 2000 directories".into(),
        ),
        (vec!["--stonewall", HUGE_S], long("--stonewall", HUGE_S)),
        (vec!["--stonewall", "-1s"], "--stonewall: '-1s'".into()),
        (
            vec!["--file-size", "-1"],
            "--file-size: '-1' is neither a size nor a range".into(),
        ),
        (
            vec!["--file-size", "16e"],
            "--file-size: '16e' is larger than 8 EiB".into(),
        ),
        (vec!["--target", "/proc"], "--target: '/proc' is on procfs".into()),
        (
            vec!["--files", "3g", "--dirs", "2g"],
            "--dirs: 2000000000 directories are kept open".into(),
        ),
        (
            vec!["--on-error", "never"],
            "invalid value 'never' for '--on-error <WHAT>'".into(),
        ),
        (vec!["--bonnie"], "'--bonnie <N:MAX:MIN:DIRS>'".into()),
    ] {
        add(with_out("meta", &args), want);
    }

    // probe
    for (args, want) in [
        (vec!["--phases", &format!("idle:{HUGE_S}")], long("--phases", HUGE_S)),
        (
            vec!["--phases", "idle:20d,after:20d"],
            "--phases: 'idle:20d,after:20d' adds up to more than the 30-day maximum".into(),
        ),
        (vec!["--runtime", HUGE_S], long("--runtime", HUGE_S)),
        (vec!["--interval", HUGE_S], long("--interval", HUGE_S)),
        (vec!["--stall", HUGE_S], long("--stall", HUGE_S)),
        (vec!["--runtime", "-1s"], "--runtime: '-1s' is not a duration".into()),
        (
            vec!["--interval", "-100ms"],
            "--interval: '-100ms' is not a duration".into(),
        ),
        (vec!["--count", "-5"], "--count: '-5' is not a whole number".into()),
        (
            vec!["--read-file-size", "16e"],
            "--read-file-size: '16e' is larger".into(),
        ),
        (vec!["--load", "stream-write:16e"], "--load: 'stream-write:16e'".into()),
        (
            vec![
                "--phases",
                "idle:1s,load:1s",
                "--load",
                &format!("io:--runtime {HUGE_S}"),
            ],
            long("--runtime", HUGE_S),
        ),
        (vec!["--target", "/proc"], "--target: '/proc' is on procfs".into()),
    ] {
        add(with_out("probe", &args), want);
    }

    // replay: flags (the load file is valid)
    for (args, want) in [
        (vec!["--time", HUGE_S], long("--time", HUGE_S)),
        (vec!["--warmup", HUGE_S], long("--warmup", HUGE_S)),
        (vec!["--time", "-1s"], "--time: '-1s' is not a duration".into()),
        (vec!["--warmup", "-1s"], "--warmup: '-1s' is not a duration".into()),
        (vec!["--xattr-size", "-1"], "--xattr-size: '-1' is not a size".into()),
        (vec!["--clients", "-2"], "--clients: '-2' is not a whole number".into()),
        (
            vec!["--timestamps", "sometimes"],
            "invalid value 'sometimes' for '--timestamps <MODE>'".into(),
        ),
    ] {
        let mut a = vec![load.as_str()];
        a.extend(args);
        add(with_out("replay", &a), want);
    }

    // fio: job-file contents and the command line
    let jobs = [
        (
            "mix.fio",
            "[j]\nrw=randrw\nrwmixwrite=150\nsize=1m\n",
            ":3: [j] rwmixwrite: '150'",
        ),
        (
            "fsz.fio",
            "[j]\nrw=read\nfilesize=1m\nnrfiles=18446744073709551615\n",
            ":3: [j] filesize=1m × nrfiles=18446744073709551615",
        ),
        (
            "fbig.fio",
            "[j]\nrw=read\nfilesize=8e\nnrfiles=2\n",
            ":3: [j] filesize: '8e' is larger than 8 EiB",
        ),
        (
            "rt.fio",
            "[j]\nrw=read\nsize=1m\nruntime=18446744073709551615\n",
            ":4: [j] runtime: '18446744073709551615' is longer than the 30-day maximum",
        ),
        (
            "ramp.fio",
            "[j]\nrw=read\nsize=1m\nruntime=1\ntime_based\nramp_time=99999999999999999999999\n",
            ":6: [j] ramp_time: '99999999999999999999999' is longer",
        ),
        (
            "tt.fio",
            "[j]\nrw=read\nsize=1m\nthinktime=18446744073709551615\n",
            ":4: [j] thinktime: '18446744073709551615' is longer",
        ),
        (
            "sd.fio",
            "[j]\nrw=read\nsize=1m\nstartdelay=18446744073709551615\n",
            ":4: [j] startdelay: '18446744073709551615' is longer than the 30-day maximum",
        ),
        (
            "nrf.fio",
            "[j]\nrw=read\nsize=1m\nnrfiles=x\n",
            ":4: [j] nrfiles: 'x' is not a whole number",
        ),
        (
            "proc.fio",
            "[j]\nrw=read\nsize=1m\ndirectory=/proc\n",
            ":4: [j] directory: '/proc' is on procfs",
        ),
        (
            "nj.fio",
            "[j]\nrw=read\nsize=1m\nnumjobs=0\n",
            ":4: [j] numjobs: must be at least 1",
        ),
        (
            "negbs.fio",
            "[j]\nrw=read\nsize=1m\nbs=-4k\n",
            ":4: [j] bs: '-4k' is neither",
        ),
        (
            "gl.fio",
            "[global]\nruntime=31d\n[j]\nrw=read\nsize=1m\n",
            ":2: [j] runtime: '31d' is longer",
        ),
    ];
    for (name, text, want) in jobs {
        let p = write(name, text);
        add(vec!["fio".into(), fio_output.clone(), p.clone()], format!("{p}{want}"));
    }
    let two = write(
        "two.fio",
        &format!("[global]\ndirectory={t}\nsize=1m\n[a]\nrw=read\n[b]\nrw=write\n"),
    );
    for (args, want) in [
        (
            vec![two.as_str(), "--section", "c"],
            "--section: no job section named 'c' (the job files have: a, b)",
        ),
        (vec![two.as_str(), "--section"], "--section: needs a value"),
        (
            vec![two.as_str(), "--runtime", HUGE],
            "--runtime: '18446744073709551615' is longer",
        ),
        (
            vec!["--runtime=18446744073709551615", two.as_str()],
            "--runtime: '18446744073709551615' is longer",
        ),
        (vec![two.as_str(), "--runtime=-1"], "--runtime: '-1' is not a duration"),
        (vec!["--size=-1", two.as_str()], "--size: '-1' is not a size"),
        (vec![two.as_str(), "--size", "16e"], "--size: '16e' is larger"),
        (vec!["--bogus"], "--bogus: not a flag of fslab fio"),
        (
            vec!["--name=a", "--rw=randrw", "--size=1m", "--rwmixwrite=101"],
            "command line: [a] rwmixwrite: '101'",
        ),
        (
            vec!["--name=a", "--rw=read", "--size=1m", "--thinktime=99999999999999999999"],
            "command line: [a] thinktime: '99999999999999999999' is longer",
        ),
    ] {
        let mut a = vec!["fio".to_string(), fio_output.clone()];
        a.extend(args.iter().map(|s| s.to_string()));
        add(a, want.into());
    }

    // run: the quick suite's flags
    for (args, want) in [
        (vec!["--runtime", HUGE_S], long("--runtime", HUGE_S)),
        (
            vec!["--runtime", "11d"],
            "--runtime: '11d' is longer than the 10-day maximum of the quick suite".into(),
        ),
        (vec!["--runtime", "-1s"], "--runtime: '-1s' is not a duration".into()),
        (
            vec!["--scratch", "ext4,ext4"],
            "--scratch: 'ext4' is given twice".into(),
        ),
        (
            vec!["--scratch", "tmpfs", "--scratch", "tmpfs"],
            "--scratch: 'tmpfs' is given twice".into(),
        ),
        (
            vec!["--target", "/nonexistent/fslab-x"],
            "--target: '/nonexistent/fslab-x'".into(),
        ),
        (vec!["--target", "/proc"], "--target: '/proc' is on procfs".into()),
        (
            vec!["--target", &file],
            format!("--target: '{file}' is not a directory"),
        ),
        (vec!["--repeat", "-1"], "--repeat: '-1'".into()),
        (
            vec!["--retry-disturbed", "-1"],
            "--retry-disturbed: '-1' is not a whole number from 0 to 100".into(),
        ),
        (
            vec!["--retry-disturbed", "many"],
            "--retry-disturbed: 'many' is not a whole number".into(),
        ),
        (vec!["--retry-disturbed", "101"], "--retry-disturbed: '101'".into()),
        (
            vec!["--disturbed-cpu", "0"],
            "--disturbed-cpu: '0' is not a percentage in (0, 100]".into(),
        ),
        (vec!["--disturbed-cpu", "150%"], "--disturbed-cpu: '150%'".into()),
    ] {
        add(with_out("run", &args), want);
    }
    // run: plan-file contents
    let fs_dir = format!("[[filesystem]]\ntype = \"dir\"\npath = \"{t}\"\n");
    let plans = [
        (
            "p-nodir.toml",
            "[[filesystem]]\ntype = \"dir\"\npath = \"/nonexistent/fslab-x\"\n[[workload]]\ntype = \"meta\"\n"
                .to_string(),
            ":3: path: '/nonexistent/fslab-x'".to_string(),
        ),
        (
            "p-proc.toml",
            "[[filesystem]]\ntype = \"dir\"\npath = \"/proc\"\n[[workload]]\ntype = \"meta\"\n".into(),
            ":3: path: '/proc' is on procfs".into(),
        ),
        (
            "p-file.toml",
            format!("[[filesystem]]\ntype = \"dir\"\npath = \"{file}\"\n[[workload]]\ntype = \"meta\"\n"),
            format!(":3: path: '{file}' is not a directory"),
        ),
        (
            "p-rt.toml",
            format!("{fs_dir}[[workload]]\ntype = \"io\"\nruntime = \"{HUGE_S}\"\n"),
            format!(":6: runtime: '{HUGE_S}' is longer than the 30-day maximum"),
        ),
        (
            "p-neg.toml",
            format!("{fs_dir}[[workload]]\ntype = \"io\"\nruntime = \"-1s\"\n"),
            ":6: runtime: '-1s' is not a duration".into(),
        ),
        (
            "p-ramp.toml",
            format!("{fs_dir}[[workload]]\ntype = \"io\"\nruntime = \"1s\"\nramp = \"{HUGE_S}\"\n"),
            format!(":7: ramp: '{HUGE_S}' is longer"),
        ),
        (
            "p-tt.toml",
            format!("{fs_dir}[[workload]]\ntype = \"io\"\nthinktime = {HUGE}\n"),
            format!(":6: thinktime: '{HUGE}' is longer"),
        ),
        (
            "p-sw.toml",
            format!("{fs_dir}[[workload]]\ntype = \"meta\"\nstonewall = \"99999999d\"\n"),
            ":6: stonewall: '99999999d' is longer".into(),
        ),
        (
            "p-ph.toml",
            format!("{fs_dir}[[workload]]\ntype = \"probe\"\nphases = \"idle:{HUGE_S}\"\n"),
            format!(":6: phases: '{HUGE_S}' is longer"),
        ),
        (
            "p-bon.toml",
            format!("{fs_dir}[[workload]]\ntype = \"meta\"\nbonnie = \"{HUGE}\"\n"),
            format!(":6: bonnie: '{HUGE}'"),
        ),
        (
            "p-bs.toml",
            format!("{fs_dir}[[workload]]\ntype = \"io\"\nbs = \"-4k\"\n"),
            ":6: bs: '-4k' is neither".into(),
        ),
        (
            "p-size.toml",
            "[[filesystem]]\ntype = \"ext4\"\nsize = \"18446744073709551615k\"\n[[workload]]\ntype = \"meta\"\n".into(),
            ":3: size: '18446744073709551615k' is larger than 8 EiB".into(),
        ),
        (
            "p-retry.toml",
            format!("retry-disturbed = -2\n{fs_dir}[[workload]]\ntype = \"meta\"\n"),
            ":1: retry-disturbed must be a whole number from 0 to 100".into(),
        ),
        (
            "p-dcpu.toml",
            format!("name = \"d\"\ndisturbed-cpu = 0\n{fs_dir}[[workload]]\ntype = \"meta\"\n"),
            ":2: disturbed-cpu must be a percentage in (0, 100]".into(),
        ),
        (
            "p-time.toml",
            format!("{fs_dir}[[workload]]\ntype = \"replay\"\nloadfile = \"{load}\"\ntime = \"{HUGE_S}\"\n"),
            format!(":7: time: '{HUGE_S}' is longer"),
        ),
    ];
    for (name, text, want) in plans {
        let p = write(name, &text);
        add(
            vec!["run".into(), p.clone(), "--output".into(), json.clone()],
            format!("{p}{want}"),
        );
    }

    // compare, report, cleanup: their flags
    let res = write("r.json", "{}");
    let html_s = html.display().to_string();
    for (args, want) in [
        (vec!["compare"], "<RESULTS.json>"),
        (vec!["compare", &res, "--bogus"], "'--bogus'"),
        (vec!["compare", &res, "--baseline"], "'--baseline <NAME>'"),
        (vec!["report", "-o", &html_s], "<RESULTS.json>"),
        (vec!["report", &res, "--bogus", "-o", &html_s], "'--bogus'"),
        (vec!["report", &res, "-o"], "'--output <FILE>'"),
        (vec!["cleanup", "--bogus"], "'--bogus'"),
        (vec!["cleanup", "--dry-run=yes"], "'--dry-run'"),
        (
            vec!["cleanup", "/nonexistent/fslab-cleanup-x"],
            "No such file or directory",
        ),
    ] {
        let r = refusal(&args, want);
        add(r.args, r.want);
    }

    assert!(cases.len() >= 100, "{} cases", cases.len());
    expect_refusals(&cases, &[&out, &fio_out, &html]);
    // and the same inputs with the output files already there: none is changed
    expect_refusals_leaving(&cases, &[&out, &fio_out, &html]);
    let left = leftovers(dir.path());
    assert!(left.is_empty(), "a refused run creates nothing: {left:?}");
}
