//! fio's engines that move no data through a file's bytes (issue 33: fio
//! 3.33's examples ftruncate.fio, cpuio.fio, exec.fio), run by fio and by
//! `fslab fio` on the same job and compared on what they did: the jobs'
//! names, groups and operations, a truncated file's size, the CPU burnt,
//! a program's effect and its redirected output. Bad inputs are refused in
//! one line, exit 2, nothing created.

use crate::util::*;
use std::path::Path;

/// (name, group, reads, writes, bytes written) of each job of `tool`'s JSON.
fn jobs(tool: &str, j: &serde_json::Value) -> Vec<(String, u64, u64, u64, u64)> {
    j["jobs"]
        .as_array()
        .unwrap_or_else(|| panic!("{tool}: no jobs"))
        .iter()
        .map(|x| {
            (
                x["jobname"].as_str().unwrap().to_string(),
                x["groupid"].as_u64().unwrap(),
                x["read"]["total_ios"].as_u64().unwrap(),
                x["write"]["total_ios"].as_u64().unwrap(),
                x["write"]["io_bytes"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// `tool` on `job`, which must succeed; its JSON.
fn ran(fio: bool, job: &Path, dir: &Path, extra: &[&str]) -> serde_json::Value {
    let mut c = fio_or_fslab(if fio { "fio" } else { "fslab" }, true);
    let out = c
        .arg(job)
        .arg("--output-format=json")
        .args(if fio { &[][..] } else { extra })
        .env("FSLAB_FIO_DIR", dir)
        .current_dir(dir)
        .output()
        .unwrap();
    let tool = if fio { "fio" } else { "fslab" };
    assert!(out.status.success(), "{tool}: {}", String::from_utf8_lossy(&out.stderr));
    let s = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(s.trim_start_matches(|c| c != '{')).unwrap_or_else(|e| panic!("{tool}: {e}: {s}"))
}

/// ftruncate.fio's two jobs, untimed over 1 MiB: a sequential write is
/// 256 truncates growing the file, a random one (norandommap) 256 to random
/// sizes; both tools count each as a 4 KiB write in their own group, and
/// direct=1 opens the file O_DIRECT as fio does (a directory under /var/tmp).
#[test]
fn ftruncate_counts_are_fios() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let job = job_file(
        work.path(),
        "ft.fio",
        "[global]\nioengine=ftruncate\ndirectory=${FSLAB_FIO_DIR}\nsize=1m\nstonewall\nfilename=truncate\n\
         direct=1\nbs=4k\n[grow-truncate]\nrw=write\n[rand-truncate]\nrw=randwrite\nnorandommap\n",
    );
    let fio = jobs("fio", &ran(true, &job, work.path(), &[]));
    std::fs::remove_file(work.path().join("truncate")).unwrap();
    let ours = jobs("fslab", &ran(false, &job, work.path(), &[]));
    assert_eq!(fio, ours);
    assert_eq!(fio[0], ("grow-truncate".into(), 0, 0, 256, 1 << 20));
}

/// The file a write-only ftruncate job leaves: fio truncates an existing
/// 1 MiB file to each write's offset, the last at 1 MiB - 4 KiB; fslab
/// (with --force-overwrite, its consent to work in a file it did not
/// make) leaves the same size; a random job leaves a size on a 4 KiB step.
#[test]
fn ftruncate_leaves_fios_file_size() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = work.path().join("t");
    for rw in ["write", "randwrite\nnorandommap"] {
        let job = job_file(
            work.path(),
            "ft.fio",
            &format!(
                "[j]\nioengine=ftruncate\nfilename={}\nsize=1m\nbs=4k\nrw={rw}\n",
                file.display()
            ),
        );
        let mut sizes = Vec::new();
        for fio in [true, false] {
            std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
            ran(fio, &job, work.path(), &["--force-overwrite"]);
            sizes.push(std::fs::metadata(&file).unwrap().len());
        }
        if rw == "write" {
            assert_eq!(sizes, [(1 << 20) - 4096; 2], "{rw}");
        } else {
            assert!(sizes.iter().all(|s| s % 4096 == 0 && *s < 1 << 20), "{rw}: {sizes:?}");
        }
    }
}

/// ftruncate.fio as written (time_based, runtime cut to 1 s): both tools
/// run its two jobs in two groups and count writes.
#[test]
fn ftruncate_example_runs() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio-jobs/noio/ftruncate.fio"))
        .unwrap();
    let job = job_file(work.path(), "ftruncate.fio", &text);
    let fio = jobs("fio", &ran(true, &job, work.path(), &[]));
    // fio leaves the file it laid out; fslab makes its own
    std::fs::remove_file(work.path().join("truncate")).unwrap();
    let ours = jobs("fslab", &ran(false, &job, work.path(), &[]));
    let shape =
        |v: &[(String, u64, u64, u64, u64)]| v.iter().map(|x| (x.0.clone(), x.1, x.2, x.3 > 0)).collect::<Vec<_>>();
    assert_eq!(shape(&fio), shape(&ours));
}

/// What fio's ftruncate engine fails with EINVAL (every operation but a
/// write) is refused at the ioengine's line, before anything is made.
#[test]
fn ftruncate_refusals() {
    let work = tempfile::tempdir().unwrap();
    let file = |name: &str, extra: &str| {
        job_file(
            work.path(),
            name,
            &format!(
                "[j]\nioengine=ftruncate\ndirectory={}\nsize=64k\n{extra}\n",
                work.path().display()
            ),
        )
        .display()
        .to_string()
    };
    let cases = [
        (file("r.fio", "rw=read"), "r.fio:2: [j] ioengine=ftruncate with rw=read"),
        (
            file("m.fio", "rw=randrw"),
            "m.fio:2: [j] ioengine=ftruncate with rw=randrw",
        ),
        (
            file("s.fio", "rw=write\nfsync=4"),
            "s.fio:2: [j] ioengine=ftruncate with fsync",
        ),
        (
            file("v.fio", "rw=write\nverify=md5"),
            "v.fio:2: [j] ioengine=ftruncate with verify",
        ),
    ];
    let rows: Vec<Refusal> = cases.iter().map(|(f, want)| refusal(&["fio", f], *want)).collect();
    expect_refusals(&rows, &[&work.path().join("j.0.0")]);
    // with do_verify=0 nothing is read back: fio runs it, and so does fslab
    let ok = file("ok.fio", "rw=write\nverify=md5\ndo_verify=0");
    let out = fio_or_fslab("fslab", true).arg(&ok).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::remove_file(&ok).unwrap();
    let left: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), cases.len(), "only the job files: {left:?}");
}

/// ftruncate cuts files: on an existing file fslab did not make, named
/// directly or through a symlink, the job is refused without
/// --force-overwrite and the file keeps every byte.
#[test]
fn ftruncate_leaves_a_file_it_may_not_write() {
    let work = tempfile::tempdir().unwrap();
    let victim = work.path().join("victim");
    std::fs::write(&victim, (0..1u32 << 20).map(|i| (i * 7 + 3) as u8).collect::<Vec<u8>>()).unwrap();
    std::os::unix::fs::symlink(&victim, work.path().join("link")).unwrap();
    let job = |name: &str| {
        job_file(
            work.path(),
            &format!("{name}.fio"),
            &format!(
                "[j]\nioengine=ftruncate\nfilename={}\nrw=write\nbs=4k\n",
                work.path().join(name).display()
            ),
        )
        .display()
        .to_string()
    };
    let before = std::fs::read(&victim).unwrap();
    for j in [job("victim"), job("link")] {
        let out = fio_or_fslab("fslab", true).arg(&j).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{j}: {err}");
        assert!(
            err.lines().count() == 1 && err.contains("add --force-overwrite"),
            "{j}: {err}"
        );
        assert!(std::fs::read(&victim).unwrap() == before, "{j} changed the file");
    }
}

/// `tool` on `job` in `dir` (stdout to a file): its JSON and the CPU time
/// (user + system, seconds) of the process and everything it waited for,
/// from wait4(2) of that one child.
fn ran_timed(fio: bool, job: &Path, dir: &Path) -> (serde_json::Value, f64) {
    let out_p = dir.join(if fio { "fio.out" } else { "fslab.out" });
    let mut child = fio_or_fslab(if fio { "fio" } else { "fslab" }, true)
        .arg(job)
        .arg("--output-format=json")
        .current_dir(dir)
        .stdout(std::fs::File::create(&out_p).unwrap())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // SAFETY: rusage is plain integers; all-zero is a valid value
    let (mut status, mut ru) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    // SAFETY: wait4 of our own child into locals
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    assert_eq!(pid, child.id() as i32);
    // reaped by wait4 already: std's wait only learns so (ECHILD)
    let _ = child.wait();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "status {status:#x}"
    );
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let s = std::fs::read_to_string(&out_p).unwrap();
    let j = serde_json::from_str(s.trim_start_matches(|c| c != '{')).unwrap();
    (j, secs(ru.ru_utime) + secs(ru.ru_stime))
}

/// cpuio.fio's first job (cpuload=50, two clones, noop, runtime 1 s):
/// both tools run it as the same two jobs and count the same burns (a
/// 50 ms spin, then a 50 ms sleep: 10 in a second, within 2); fslab's
/// process really burns about half of two CPUs' second. Bounds are wide
/// (a shared machine takes CPU from the spin, which ends by the clock):
/// at least a fifth of the duty cycle, and clearly less than all of both
/// CPUs (2 s), which a duty cycle that does not sleep would take.
#[test]
fn cpuio_burns_its_duty_cycle() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let job = job_file(
        work.path(),
        "cpu.fio",
        "[global]\nioengine=cpuio\ntime_based\nruntime=1\n[burn_2x50_noop]\ncpuload=50\nnumjobs=2\ncpumode=noop\n",
    );
    let (fio, fio_cpu) = ran_timed(true, &job, work.path());
    let (ours, cpu) = ran_timed(false, &job, work.path());
    let (fio, ours) = (jobs("fio", &fio), jobs("fslab", &ours));
    let names = |v: &[(String, u64, u64, u64, u64)]| v.iter().map(|x| (x.0.clone(), x.1)).collect::<Vec<_>>();
    assert_eq!(names(&fio), names(&ours));
    for (a, b) in fio.iter().zip(&ours) {
        assert!(a.2.abs_diff(b.2) <= 2 && b.2 >= 5, "burns: fio {fio:?} fslab {ours:?}");
        assert_eq!((b.3, b.4), (0, 0), "no writes, no bytes");
    }
    assert!(
        (0.2..1.6).contains(&cpu),
        "fslab burnt {cpu:.2} s of CPU (fio {fio_cpu:.2} s) for 2 x 50% of 1 s"
    );
}

/// cpumode=qsort burns by sorting (fio's four qsorts), and cpuload=100
/// does not sleep: one clone for 2 s takes most of two CPU seconds, at
/// least a seventh of them on a shared machine (others take the CPU; a
/// debug build's comparator is slow, hence 2 s for a sort to finish).
#[test]
fn cpuio_qsort_at_full_load_burns() {
    let work = tempfile::tempdir().unwrap();
    let job = job_file(
        work.path(),
        "q.fio",
        "[q]\nioengine=cpuio\nruntime=2\ncpuload=100\ncpumode=qsort\n",
    );
    let (ours, cpu) = ran_timed(false, &job, work.path());
    let ours = jobs("fslab", &ours);
    assert!(ours[0].2 >= 1, "{ours:?}");
    assert!(
        (0.3..3.2).contains(&cpu),
        "fslab burnt {cpu:.2} s of CPU for 100% of 2 s"
    );
}

/// exit_on_io_done, as fio 3.33 decides it: a cpuio job beside a job
/// doing I/O ends when that job ends (none of its burns when the I/O is
/// quick); without the option it runs its runtime. A job still to come (a
/// later group) counts as pending I/O whatever its engine, so then the
/// job runs on; once the I/O jobs have exited and none is to come, it
/// ends at once. (L: about 1 s of 20 ms cycles; S: at most two.)
#[test]
fn cpuio_exit_on_io_done() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let global = "[global]\nioengine=cpuio\ncpuload=50\ncpuchunks=10000\nruntime=1\n[d]\nioengine=null\nsize=64k\n";
    for (text, want) in [
        ("[c]\nexit_on_io_done=1\n[e]\n", "-SL"),
        (
            "[c]\nexit_on_io_done=1\n[f]\nstonewall\nexit_on_io_done=1\n[g]\nstonewall\nexit_on_io_done=1\n",
            "-LLS",
        ),
    ] {
        let job = job_file(work.path(), "e.fio", &format!("{global}{text}"));
        for fio in [true, false] {
            let v = jobs(if fio { "fio" } else { "fslab" }, &ran(fio, &job, work.path(), &[]));
            let got: String = v
                .iter()
                .map(|x| match x.2 {
                    _ if x.0 == "d" => '-',
                    0..=2 => 'S',
                    25.. => 'L',
                    _ => '?',
                })
                .collect();
            assert_eq!(got, want, "fio {fio}: {v:?}");
        }
    }
}

/// cpuio's bad values, refused in one line at their own line: no
/// cpuload (fio: "cpu thread needs rate"), a cpumode fio does not have,
/// an option of cpuio on another engine, and no runtime (fio's job
/// would never end).
#[test]
fn cpuio_refusals() {
    let work = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| job_file(work.path(), name, text).display().to_string();
    let cases = [
        (
            file("a.fio", "[j]\nioengine=cpuio\nruntime=1\n"),
            "a.fio:2: [j] ioengine=cpuio needs cpuload=",
        ),
        (
            file("b.fio", "[j]\nioengine=cpuio\nruntime=1\ncpuload=10\ncpumode=fft\n"),
            "b.fio:5: [j] cpumode: 'fft'",
        ),
        (
            file("c.fio", "[j]\nioengine=psync\nsize=4k\ncpuload=10\n"),
            "c.fio:4: [j] cpuload: an option of ioengine=cpuio",
        ),
        (
            file("d.fio", "[j]\nioengine=cpuio\ncpuload=10\n"),
            "d.fio:2: [j] ioengine=cpuio without runtime=",
        ),
        (
            file("e.fio", "[j]\nioengine=cpuio\ncpuload=x\nruntime=1\n"),
            "e.fio:3: [j] cpuload: 'x' is not a whole number",
        ),
    ];
    let rows: Vec<Refusal> = cases.iter().map(|(f, want)| refusal(&["fio", f], *want)).collect();
    expect_refusals(&rows, &[]);
    let left: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), cases.len(), "only the job files: {left:?}");
}

/// An executable shell script `name` in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// Whether process `pid` still exists (as anything but a zombie).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
}

/// The pid a script wrote to `p`, once it has.
fn pid_in(p: &Path) -> i32 {
    let t = std::time::Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(p).ok().and_then(|s| s.trim().parse().ok()) {
            return pid;
        }
        assert!(t.elapsed().as_secs() < 30, "{} never appeared", p.display());
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// exec as fio runs it, in both tools: the program gets fio's argv (%n
/// the job's name, %r the runtime in seconds, split at spaces), its stdout
/// and stderr go to NAME.stdout and NAME.stderr in the working directory
/// (std_redirect=1, fio's default), and when the runtime is over it gets
/// SIGTERM (its trap writes "term" within the grace time) and is gone when
/// the tool returns. A second job ignores SIGTERM with grace_time=0: killed.
/// Both count the job's 50 ms ticks as reads of no bytes, in one group.
#[test]
fn exec_runs_and_ends_the_program_as_fio() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let polite = script(
        d,
        "polite.sh",
        "echo \"$@\"; echo to-stderr >&2; echo $$ > \"$1.pid\"\ntrap 'echo term > \"$1.term\"; exit 0' TERM\nwhile :; do sleep 0.05; done",
    );
    let stubborn = script(
        d,
        "stubborn.sh",
        "trap '' TERM; echo $$ > \"$1.pid\"\nwhile :; do sleep 0.05; done",
    );
    let job = job_file(
        d,
        "x.fio",
        &format!(
            "[global]\ntime_based\nruntime=1\nioengine=exec\n[mon]\nprogram={}\narguments=%n x %r\n\
             [hard]\nprogram={}\narguments=%n\ngrace_time=0\nstd_redirect=0\n",
            polite.display(),
            stubborn.display()
        ),
    );
    let mut seen = Vec::new();
    for fio in [true, false] {
        let v = jobs(if fio { "fio" } else { "fslab" }, &ran(fio, &job, d, &[]));
        let ticks: Vec<u64> = v.iter().map(|x| x.2).collect();
        assert!(ticks.iter().all(|&n| (5..=14).contains(&n)), "fio {fio}: {v:?}");
        let files: Vec<String> = ["mon.stdout", "mon.stderr", "mon.term"]
            .iter()
            .map(|f| std::fs::read_to_string(d.join(f)).unwrap_or_else(|e| panic!("fio {fio}: {f}: {e}")))
            .collect();
        for name in ["mon", "hard"] {
            let pid = pid_in(&d.join(format!("{name}.pid")));
            assert!(!running(pid), "fio {fio}: {name}'s program {pid} still runs");
        }
        seen.push((v.iter().map(|x| (x.0.clone(), x.1, x.4)).collect::<Vec<_>>(), files));
        for f in ["mon.stdout", "mon.stderr", "mon.term", "mon.pid", "hard.pid"] {
            let _ = std::fs::remove_file(d.join(f));
        }
    }
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[0].1, ["mon x 1\n", "to-stderr\n", "term\n"]);
}

/// Ctrl-C (SIGINT) during an exec job's runtime: fslab ends the program
/// it started (SIGTERM, then SIGKILL after the grace time) and exits; no
/// program is left running.
#[test]
fn exec_program_ends_on_ctrl_c() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let prog = script(
        d,
        "p.sh",
        "trap '' TERM; echo $$ > \"$1.pid\"\nwhile :; do sleep 0.05; done",
    );
    let job = job_file(
        d,
        "c.fio",
        &format!(
            "[c]\nioengine=exec\nruntime=60\nprogram={}\narguments=%n\nstd_redirect=0\n",
            prog.display()
        ),
    );
    let child = std::process::Command::new(fslab_path())
        .args(["fio", "--quiet"])
        .arg(&job)
        .current_dir(d)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = pid_in(&d.join("c.pid"));
    assert!(running(pid));
    let out = signal_and_wait(child, libc::SIGINT);
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!running(pid), "the program {pid} outlived fslab");
}

/// `fslab fio JOB` in `dir`: refused in one line containing `want`, exit 2.
fn refused_in(dir: &Path, job: &Path, extra: &[&str], want: &str) {
    let out = fio_or_fslab("fslab", true)
        .arg(job)
        .args(extra)
        .current_dir(dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(want), "want {want:?} in: {err}");
    assert!(out.stdout.is_empty());
}

/// exec's bad inputs, one line each naming file:line, exit 2, nothing
/// created or changed: a program that does not exist (fio would fork a copy
/// of itself that fails to exec), no program, a redirect file already
/// there (fio would truncate it) unless --force-overwrite, a symlink there
/// even then, a name that leaves the directory, a bad grace_time, exec's
/// option on another engine, no runtime.
#[test]
fn exec_refusals() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let job = |name: &str, text: &str| job_file(d, name, &format!("[global]\nruntime=1\nioengine=exec\n{text}"));
    let rows = [
        (
            job("a.fio", "[j]\nprogram=/usr/sbin/no-such-turbostat\n"),
            "a.fio:5: [j] program: '/usr/sbin/no-such-turbostat'",
        ),
        (
            job("b.fio", "[j]\nprogram=no-such-program-on-path\n"),
            "b.fio:5: [j] program: 'no-such-program-on-path'",
        ),
        (
            job("c.fio", "[j]\narguments=1\n"),
            "c.fio:3: [j] ioengine=exec needs program=",
        ),
        (
            job("e.fio", "[j]\nprogram=/bin/true\ngrace_time=soon\n"),
            "e.fio:6: [j] grace_time: 'soon'",
        ),
        (
            job("f.fio", "[j]\nname=../up\nprogram=/bin/true\n"),
            "f.fio:5: [j] std_redirect: the job's name '../up'",
        ),
        (
            job_file(d, "g.fio", "[j]\nsize=4k\nprogram=/bin/true\n"),
            "g.fio:3: [j] program: an option of ioengine=exec",
        ),
        (
            job_file(d, "h.fio", "[j]\nioengine=exec\nprogram=/bin/true\n"),
            "h.fio:2: [j] ioengine=exec without runtime=",
        ),
    ];
    for (f, want) in &rows {
        refused_in(d, f, &[], want);
    }
    // an earlier file of the user's where the output would go: left as it was
    let mine = d.join("k.stdout");
    std::fs::write(&mine, "mine\n").unwrap();
    let k = job("k.fio", "[k]\nprogram=/bin/true\n");
    refused_in(
        d,
        &k,
        &[],
        &format!(
            "k.fio:5: [k] std_redirect: {} exists already, and this run did not make it",
            mine.display()
        ),
    );
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "mine\n");
    // a symlink there is refused even with --force-overwrite, and not followed
    std::fs::remove_file(&mine).unwrap();
    std::os::unix::fs::symlink(d.join("target"), &mine).unwrap();
    refused_in(d, &k, &["--force-overwrite"], "is not a regular file");
    assert!(!d.join("target").exists());
    std::fs::remove_file(&mine).unwrap();
    let mut left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.retain(|f| !f.ends_with(".fio"));
    assert!(left.is_empty(), "created: {left:?}");
}

/// --force-overwrite: the user's consent to replace an existing regular
/// NAME.stdout (fio truncates it); the program's output is then all it holds.
#[test]
fn exec_force_overwrite_replaces_a_regular_file() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    std::fs::write(d.join("k.stdout"), "an older, longer output\n").unwrap();
    let job = job_file(
        d,
        "k.fio",
        "[k]\nioengine=exec\nruntime=1\nprogram=/bin/echo\narguments=hi %n\n",
    );
    ran(false, &job, d, &["--force-overwrite"]);
    assert_eq!(std::fs::read_to_string(d.join("k.stdout")).unwrap(), "hi k\n");
}

/// The normal output of a cpuio job is fio's: no "(g=0): rw=..." line for
/// an engine without I/O (only the clones' "..."), the engine's own line
/// per clone after "Starting", and in each job's block no "read:" line
/// (no bytes, so no runtime) but its burns in "issued rwts".
#[test]
fn cpuio_normal_output_is_fios() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let job = job_file(
        work.path(),
        "n.fio",
        "[b]\nioengine=cpuio\nruntime=1\ncpuload=50\ncpuchunks=100000\nnumjobs=2\n",
    );
    let mut shapes = Vec::new();
    for tool in ["fio", "fslab"] {
        let out = fio_or_fslab(tool, false)
            .arg(&job)
            .current_dir(work.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{tool}");
        let text = String::from_utf8_lossy(&out.stdout).replace("fslab-", "fio-");
        let head: Vec<String> = text
            .lines()
            .take_while(|l| !l.is_empty())
            .map(|l| {
                if l.starts_with("fio-") {
                    "fio-V".into()
                } else {
                    l.to_string()
                }
            })
            .collect();
        let issued: Vec<&str> = text.lines().filter(|l| l.contains("issued rwts: total=")).collect();
        assert!(!text.contains(" read:"), "{tool}: {text}");
        assert_eq!(issued.len(), 2, "{tool}: {text}");
        assert!(
            issued.iter().all(|l| l.contains("total=5,0,0,0")),
            "{tool}: 100 ms burns, 100 ms sleeps: {text}"
        );
        shapes.push(head);
    }
    assert_eq!(shapes[0], shapes[1]);
    assert_eq!(shapes[0][3], "b (noop): ioengine=cpuio, cpuload=50, cpucycle=100000");
}

/// fio's terse line of a cpuio job: the read direction's KiB, bandwidth,
/// IOPS and runtime are all 0 (no bytes moved, so fio keeps no runtime),
/// in fslab's as in fio's.
#[test]
fn cpuio_terse_has_no_rate() {
    if !require("fio", have("fio")) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let job = job_file(work.path(), "t.fio", "[b]\nioengine=cpuio\nruntime=1\ncpuload=50\n");
    let mut rows = Vec::new();
    for tool in ["fio", "fslab"] {
        let out = fio_or_fslab(tool, true)
            .arg(&job)
            .arg("--output-format=terse")
            .current_dir(work.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let line = text
            .lines()
            .find(|l| l.starts_with("3;"))
            .unwrap_or_else(|| panic!("{tool}: {text}"));
        let f: Vec<String> = line.split(';').map(String::from).collect();
        rows.push((f[2].clone(), f[5..9].to_vec()));
    }
    assert_eq!(rows[0], rows[1]);
    assert_eq!(rows[0].1, ["0", "0", "0", "0"]);
}
