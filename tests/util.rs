//! Helpers shared by the integration tests: running the binary, prerequisites
//! that skip (or fail under FSLAB_REQUIRE_ALL=1), and guards for loop devices
//! and mounts that are always undone.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The fslab binary under test.
pub fn fslab() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("fslab").expect("fslab binary");
    c.env_remove("RUST_LOG");
    c
}

/// `fslab run PLAN --repeat N --output json:OUT`, quiet and without
/// telemetry, which must succeed.
pub fn run_plan(plan: impl AsRef<std::ffi::OsStr>, repeats: u32, out: &Path) {
    let o = fslab()
        .arg("run")
        .arg(plan)
        .args([
            "--quiet",
            "--no-telemetry",
            "--repeat",
            &repeats.to_string(),
            "--output",
        ])
        .arg(format!("json:{}", out.display()))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
}

pub fn fslab_path() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fslab"))
}

/// True when the prerequisite holds. Otherwise skips (prints why and returns
/// false) or, with FSLAB_REQUIRE_ALL=1 as in CI, fails the test.
pub fn require(what: &str, ok: bool) -> bool {
    if ok {
        return true;
    }
    if std::env::var("FSLAB_REQUIRE_ALL").as_deref() == Ok("1") {
        panic!("prerequisite missing and FSLAB_REQUIRE_ALL=1: {what}");
    }
    eprintln!("skipped: needs {what}");
    false
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Root plus the tools: the common prerequisite of device tests.
pub fn require_root_with(tools: &[&str]) -> bool {
    if !require("root", is_root()) {
        return false;
    }
    tools.iter().all(|t| require(t, have(t)))
}

fn sh(args: &[&str]) -> String {
    let o = Command::new(args[0]).args(&args[1..]).output().expect("spawn");
    assert!(
        o.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A loop device over a sparse image in a temporary directory; detached on drop.
pub struct LoopDev {
    pub dev: String,
    _dir: tempfile::TempDir,
}

impl LoopDev {
    pub fn new(size_mib: u64) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("img");
        std::fs::File::create(&img).unwrap().set_len(size_mib << 20).unwrap();
        // The kernel picks a free device: never a hard-coded /dev/loopN.
        let dev = sh(&["losetup", "--find", "--show", img.to_str().unwrap()]);
        LoopDev { dev, _dir: dir }
    }

    pub fn mkfs(&self, fs: &str) {
        match fs {
            "ext4" => sh(&["mkfs.ext4", "-q", "-F", &self.dev]),
            "xfs" => sh(&["mkfs.xfs", "-q", "-f", &self.dev]),
            other => panic!("no mkfs for {other}"),
        };
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// A mount in a temporary directory; unmounted on drop.
pub struct Mount {
    pub dir: tempfile::TempDir,
}

impl Mount {
    pub fn new(source: &str, fstype: &str, opts: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["mount", "-t", fstype];
        if !opts.is_empty() {
            args.extend(["-o", opts]);
        }
        args.extend([source, dir.path().to_str().unwrap()]);
        sh(&args);
        Mount { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let p = self.dir.path().to_str().unwrap().to_string();
        if Command::new("umount")
            .arg(&p)
            .status()
            .map(|s| !s.success())
            .unwrap_or(true)
        {
            let _ = Command::new("umount").args(["-l", &p]).status();
        }
    }
}

/// Entries fslab left in `dir` (work directories are named fslab-*).
pub fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("fslab-"))
        .collect()
}

/// Parses a result JSON file.
pub fn read_json(p: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: invalid JSON: {e}\n{text}", p.display()))
}

/// Reads a result file as fslab's own typed model (`fslab::model::Report`,
/// the reader `fslab compare` uses): a test names fields the compiler
/// checks, and a renamed field fails the build rather than read as null.
/// (`read_json` is for what the model does not describe: other tools'
/// output, or a test of the file's exact keys.)
pub fn read_report(p: &Path) -> fslab::model::Report {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    fslab::model::parse_report(&text).unwrap_or_else(|e| panic!("{}: not a result file: {e}", p.display()))
}

/// What one run of fio, or of fslab's `fio`, on a job file gave.
pub struct FioRun {
    /// "fio" or "fslab".
    pub tool: &'static str,
    /// The output parsed from its first `{` (fio may print notes before
    /// it); None when there was no JSON, as for a refused job file.
    pub json: Option<serde_json::Value>,
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    /// From spawning to exit.
    pub wall: std::time::Duration,
}

impl FioRun {
    /// The JSON output; fails the test, naming the tool and its stderr, when
    /// there was none.
    pub fn json(&self) -> &serde_json::Value {
        self.json
            .as_ref()
            .unwrap_or_else(|| panic!("{} gave no JSON: {}\n{}", self.tool, self.stdout, self.stderr))
    }
}

/// Runs fio 3.33 (`fio` true) or fslab's `fio` (quiet) on the job file `job`
/// with `--output-format=FORMAT` and FSLAB_FIO_DIR=`dir` (the job files'
/// `directory=${FSLAB_FIO_DIR}`). Always returns: the caller checks the code.
pub fn run_fio_format(fio: bool, job: &Path, dir: &Path, format: &str) -> FioRun {
    let mut cmd = if fio {
        Command::new("fio")
    } else {
        let mut c = Command::new(fslab_path());
        c.env_remove("RUST_LOG").arg("fio");
        c
    };
    cmd.arg(job)
        .arg(format!("--output-format={format}"))
        .env("FSLAB_FIO_DIR", dir);
    if !fio {
        cmd.arg("--quiet");
    }
    let t = std::time::Instant::now();
    let tool = if fio { "fio" } else { "fslab" };
    let out = cmd.output().unwrap_or_else(|e| panic!("{tool}: {e}"));
    let wall = t.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let json = serde_json::from_str(stdout.trim_start_matches(|c| c != '{')).ok();
    FioRun {
        tool,
        json,
        code: out.status.code().unwrap_or(-1),
        stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        wall,
    }
}

/// `fio`, or `fslab fio` (`tool` "fslab"; quiet unless `quiet` is false):
/// the same job run by either tool, fslab without RUST_LOG.
pub fn fio_or_fslab(tool: &str, quiet: bool) -> Command {
    if tool == "fio" {
        return Command::new("fio");
    }
    let mut c = Command::new(fslab_path());
    c.env_remove("RUST_LOG").arg("fio");
    if quiet {
        c.arg("--quiet");
    }
    c
}

/// [`run_fio_format`] with JSON output.
pub fn run_fio(fio: bool, job: &Path, dir: &Path) -> FioRun {
    run_fio_format(fio, job, dir, "json")
}

/// Writes `text` to `dir/name`; its path.
pub fn job_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Cells of a result file.
pub fn cells(j: &serde_json::Value) -> &Vec<serde_json::Value> {
    j["cells"].as_array().expect("cells")
}

/// Runs the built-in quick suite (`fslab run` without a plan) in `dir` for
/// `runtime` a cell, with text on stdout and the JSON result in a file;
/// checks it exited 0 and returns the text and the result.
pub fn run_quick_suite(dir: &Path, runtime: &str) -> (String, serde_json::Value) {
    let json = dir.join("quick.json");
    let out = fslab()
        .current_dir(dir)
        // wide: the tests read the summary's rows whole
        .args(["run", "--runtime", runtime, "--quiet", "--width", "300"])
        .args(["--output", "text", "--output"])
        .arg(format!("json:{}", json.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    (String::from_utf8_lossy(&out.stdout).into_owned(), read_json(&json))
}

/// A fresh filesystem of `fs` on its own loop device, mounted in a temporary
/// directory; unmounted, then detached, when dropped (fields drop in order).
pub struct Scratch {
    pub mount: Mount,
    pub lo: LoopDev,
}

impl Scratch {
    pub fn new(fs: &str, size_mib: u64) -> Self {
        let lo = LoopDev::new(size_mib);
        lo.mkfs(fs);
        Scratch {
            mount: Mount::new(&lo.dev, fs, ""),
            lo,
        }
    }

    pub fn path(&self) -> &Path {
        self.mount.path()
    }
}

/// `fslab ARGS` must be refused as bad usage: exit 2, one line on stderr
/// containing `want`, nothing on stdout.
pub fn expect_usage(args: &[&str], want: &str) {
    let out = fslab().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: one line, got: {err}");
    assert!(err.contains(want), "{args:?}: wanted '{want}' in: {err}");
    assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
}

/// Starts fslab in the background (stdout discarded, stderr kept).
pub fn start(args: &[&str]) -> std::process::Child {
    Command::new(fslab_path())
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the child catches SIGINT and SIGTERM (its handlers are in
/// place: /proc's SigCgt), or has ended. Before that a signal takes the
/// default action and kills the process outright, with nothing yet made;
/// a test that counts its random delay from the spawn instead hits that
/// window whenever exec and start-up take longer than the delay (a loaded
/// CI machine).
pub fn wait_for_handlers(child: &mut std::process::Child) {
    let want = (1u64 << (libc::SIGINT - 1)) | (1u64 << (libc::SIGTERM - 1));
    let status = format!("/proc/{}/status", child.id());
    let t = std::time::Instant::now();
    loop {
        let caught = std::fs::read_to_string(&status)
            .ok()
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("SigCgt:"))?.to_string();
                u64::from_str_radix(line["SigCgt:".len()..].trim(), 16).ok()
            })
            .unwrap_or(0);
        if caught & want == want || child.try_wait().unwrap().is_some() {
            return;
        }
        assert!(
            t.elapsed() < std::time::Duration::from_secs(30),
            "fslab caught no SIGINT/SIGTERM within 30 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// Sends `sig` to a child this test started (by pid) and waits for it, at most 10 s.
pub fn signal_and_wait(mut child: std::process::Child, sig: i32) -> std::process::Output {
    // SAFETY: kill(2) on the pid of our own child.
    unsafe { libc::kill(child.id() as i32, sig) };
    let t = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            t.elapsed() < std::time::Duration::from_secs(10),
            "fslab did not stop after signal {sig}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Waits until fslab has made its work directory in `dir` (it is past
/// validation: from now on a signal leaves a result).
pub fn wait_for_workdir(child: &mut std::process::Child, dir: &std::path::Path) {
    let t = std::time::Instant::now();
    while leftovers(dir).is_empty() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "fslab ended before it made its work directory"
        );
        assert!(
            t.elapsed() < std::time::Duration::from_secs(30),
            "no work directory appeared in {}",
            dir.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Mount points at or below `dir` (from /proc/self/mountinfo).
pub fn mounts_under(dir: &Path) -> Vec<String> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter_map(|l| l.split(' ').nth(4).map(String::from))
        .filter(|m| Path::new(m).starts_with(&dir))
        .collect()
}

/// Loop devices whose backing file lies below `dir`.
pub fn loops_backed_in(dir: &Path) -> Vec<String> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    std::fs::read_dir("/sys/block")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let b = std::fs::read_to_string(e.path().join("loop/backing_file")).ok()?;
            let b = b.trim().trim_end_matches(" (deleted)").to_string();
            Path::new(&b).starts_with(&dir).then_some(b)
        })
        .collect()
}

/// Everything fslab may leave in a scratch directory: entries, mounts, loop devices.
pub fn scratch_leftovers(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path().display().to_string())
        .collect();
    v.extend(mounts_under(dir).into_iter().map(|m| format!("mount {m}")));
    v.extend(loops_backed_in(dir).into_iter().map(|l| format!("loop backed by {l}")));
    v
}

/// A scratch directory for fslab's images, on disk (not tmpfs), removed on drop.
pub fn scratch_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("fslab-test-")
        .tempdir_in("/var/tmp")
        .unwrap()
}

/// One bad input for [`expect_refusals`]: the arguments of `fslab`, and text
/// its one-line refusal must contain (the flag or file:line, and the value).
pub struct Refusal {
    pub args: Vec<String>,
    pub want: String,
}

/// A [`Refusal`] from string slices.
pub fn refusal(args: &[&str], want: impl Into<String>) -> Refusal {
    Refusal {
        args: args.iter().map(|s| s.to_string()).collect(),
        want: want.into(),
    }
}

/// How long a refused command may take: far more than validating takes, so
/// only a hang (a run that started, a blocking read) reaches it.
pub const REFUSAL_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

/// Runs each case as `fslab ARGS` and checks it is refused as bad usage:
/// exit code 2 (never 101, a panic, nor a signal), exactly one line on stderr
/// containing `want` and no "panicked", nothing on stdout, none of the
/// `must_not_exist` paths (the cases' output files) created, and an answer
/// within [`REFUSAL_DEADLINE`]: a hang is killed (by pid) and fails the case.
/// Every failing case is listed, not only the first.
pub fn expect_refusals(cases: &[Refusal], must_not_exist: &[&Path]) {
    let capture = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        if let Err(why) = refused_once(c, must_not_exist, capture.path(), i) {
            failures.push(format!("{:?}: {why}", c.args));
        }
        for p in must_not_exist {
            // a failed case must not make the next ones fail too
            let _ = std::fs::remove_file(p);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad inputs were not refused as they should be:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// [`expect_refusals`] with each of `existing` present before every case
/// (a result of an earlier run): each must be left byte for byte as it was.
pub fn expect_refusals_leaving(cases: &[Refusal], existing: &[&Path]) {
    let capture = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let before: Vec<Vec<u8>> = existing
            .iter()
            .map(|p| {
                let b = format!("an earlier result at {}\n", p.display()).into_bytes();
                std::fs::write(p, &b).unwrap();
                b
            })
            .collect();
        let mut why = refused_once(c, &[], capture.path(), i)
            .err()
            .into_iter()
            .collect::<Vec<_>>();
        for (p, b) in existing.iter().zip(&before) {
            if std::fs::read(p).ok().as_ref() != Some(b) {
                why.push(format!("{} was changed", p.display()));
            }
            let _ = std::fs::remove_file(p);
        }
        if !why.is_empty() {
            failures.push(format!("{:?}: {}", c.args, why.join("; ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad inputs changed an existing file or were not refused:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

fn refused_once(c: &Refusal, must_not_exist: &[&Path], capture: &Path, i: usize) -> Result<(), String> {
    use std::process::Stdio;
    // files, not pipes: a run that should not have started cannot block on a full pipe
    let (out_p, err_p) = (capture.join(format!("{i}.out")), capture.join(format!("{i}.err")));
    let mut child = Command::new(fslab_path())
        .args(&c.args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_p).unwrap())
        .stderr(std::fs::File::create(&err_p).unwrap())
        .spawn()
        .map_err(|e| format!("spawn: {e}"))?;
    let t = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| format!("wait: {e}"))? {
            break s;
        }
        if t.elapsed() > REFUSAL_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {REFUSAL_DEADLINE:?}: a hang (killed)"));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let stdout = std::fs::read_to_string(&out_p).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_p).unwrap_or_default();
    let mut why = Vec::new();
    if status.code() != Some(2) {
        why.push(format!("exit status {status}, not 2"));
    }
    if stderr.contains("panicked") {
        why.push("a panic".into());
    }
    if stderr.lines().count() != 1 {
        why.push(format!("{} lines on stderr, not 1", stderr.lines().count()));
    }
    if !stderr.contains(&c.want) {
        why.push(format!("no '{}' in the message", c.want));
    }
    if !stdout.is_empty() {
        why.push(format!("stdout not empty: {stdout:?}"));
    }
    for p in must_not_exist {
        if p.exists() {
            why.push(format!("created {}", p.display()));
        }
    }
    if why.is_empty() {
        Ok(())
    } else {
        Err(format!("{}; stderr: {stderr:?}", why.join(", ")))
    }
}

/// Read syscalls process `pid` has made (`/proc/PID/io`'s syscr).
pub fn reads_of(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("syscr:").and_then(|v| v.trim().parse().ok()))
        })
        .unwrap_or(0)
}

/// Makes sure this boot's calibration card of this build is cached: a run
/// that has to measure it first reads thousands of times in a second (the
/// card's cached-pread and copy loops), which `wait_for_reads` must not
/// take for the timed phase.
pub fn warm_calibration() {
    static WARM: std::sync::Once = std::sync::Once::new();
    WARM.call_once(|| {
        let out = Command::new(fslab_path()).arg("calibrate").output().unwrap();
        assert!(
            out.status.success(),
            "fslab calibrate: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
}

/// Waits until `child` has made `n` more read syscalls than now: a run of
/// random reads is in its timed phase (its layout only writes, the
/// telemetry sampler reads a few /proc files a second, far from 5000, and
/// the calibration card is read from its cache: start `child` after
/// `warm_calibration`).
pub fn wait_for_reads(child: &mut std::process::Child, n: u64) {
    let at = reads_of(child.id());
    while reads_of(child.id()) < at + n {
        assert!(child.try_wait().unwrap().is_none(), "fslab ended before reading");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Debian's cloud kernel `name` (6.1, 6.12) as examples/fetch-kernels.sh
/// leaves it under $FSLAB_KERNELS (default /var/cache/fslab/kernels), if
/// the machine can boot it (root, QEMU, mkfs.ext4). No test fetches it:
/// .ci/run does, once, before the tests (two tests fetching at once would
/// race on one cache).
pub fn debian_kernel(name: &str) -> Option<PathBuf> {
    if !require_root_with(&["qemu-system-x86_64", "mkfs.ext4"]) {
        return None;
    }
    let d = std::env::var_os("FSLAB_KERNELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/fslab/kernels"))
        .join(name);
    require(
        &format!("Debian's cloud kernel {name} (examples/fetch-kernels.sh)"),
        d.join("vmlinuz").exists(),
    )
    .then_some(d)
}
