//! The options of fio's engines that do no file I/O: cpuio's (cpuload,
//! cpuchunks, cpumode, exit_on_io_done), exec's (program, arguments,
//! grace_time, std_redirect) and net's (`net.rs`). They are engine options in fio,
//! read once the job's engine is known: here in `finish`, from the job's
//! options as written; on a job of another engine they are refused, as
//! fio 3.33 refuses an option its engine does not have.

use super::State;
use crate::cli::FioArgs;
use crate::plan::fio::engines::{CpuLoad, ExecPlan};
use crate::plan::fio::FioEngine;
use crate::plan::fiojob::{Job, Opt};
use std::path::{Path, PathBuf};

/// Each engine's own options.
const ENGINES: &[(&str, &[&str])] = &[
    ("cpuio", &["cpuload", "cpuchunks", "cpumode", "exit_on_io_done"]),
    ("exec", &["program", "arguments", "grace_time", "std_redirect"]),
    (
        "net",
        &[
            "hostname",
            "port",
            "protocol",
            "proto",
            "listen",
            "pingpong",
            "nodelay",
            "interface",
            "ttl",
            "window_size",
            "mss",
        ],
    ),
];

/// The engine whose option `key` is.
fn engine_of(key: &str) -> Option<&'static str> {
    ENGINES.iter().find(|(_, keys)| keys.contains(&key)).map(|(e, _)| *e)
}

/// One option of this group; None when `key` is not one of them.
pub(super) fn map(_st: &mut State, key: &str, _o: &Opt) -> Option<Result<(), String>> {
    // read in `finish`, when the job's engine is known
    engine_of(key).map(|_| Ok(()))
}

/// After the job's last option: the engine's options, checked and set.
pub(super) fn finish(st: &mut State, job: &Job, fa: &FioArgs) {
    let engine = job.get("ioengine").and_then(|o| o.value.as_deref()).map(str::trim);
    // fio parses an engine's option only while that engine is set (a
    // [global] ioengine=cpuio); one a later ioengine= replaced is moot
    let mut set = "psync";
    for o in &job.opts {
        if o.key == "ioengine" {
            let v = o.value.as_deref().map(str::trim);
            set = ENGINES.iter().find(|(e, _)| v == Some(*e)).map_or("other", |(e, _)| *e);
        } else if let Some(e) = engine_of(&o.key).filter(|e| *e != set) {
            let now = engine.unwrap_or("psync");
            let why = format!("{}: an option of ioengine={e}, not of ioengine={now}", o.key);
            st.m.bad.push((o.at.clone(), why));
            return;
        }
    }
    match engine {
        Some("cpuio") => {
            if let Some(cpu) = cpu_load(st, job) {
                st.m.fio.engine = FioEngine::Cpu(cpu);
                noio_job(st, job, "cpuio");
            }
        }
        Some("exec") => {
            noio_job(st, job, "exec");
            if let Some(e) = exec(st, job, fa) {
                st.m.fio.engine = FioEngine::Exec(e);
            }
        }
        Some("net") => {
            if let Some(n) = super::net::plan(st, job) {
                st.m.fio.engine = FioEngine::Net(n);
            }
        }
        _ => {}
    }
}

/// A whole number of an option as written, or its default.
fn number(st: &mut State, job: &Job, key: &str, default: u32) -> Option<u32> {
    let Some(o) = job.get(key) else {
        return Some(default);
    };
    match o.value.as_deref().map(str::trim).unwrap_or("1").parse::<u32>() {
        Ok(n) => Some(n),
        Err(_) => {
            let v = o.value.as_deref().unwrap_or("");
            st.m.bad
                .push((o.at.clone(), format!("{key}: '{v}' is not a whole number")));
            None
        }
    }
}

/// cpuio's options, as fio's `fio_cpuio_init` reads them: cpuload is
/// required (fio: "cpu thread needs rate (cpuload=)") and capped at 100.
fn cpu_load(st: &mut State, job: &Job) -> Option<CpuLoad> {
    let at = job.get("ioengine").map_or_else(|| job.at.clone(), |o| o.at.clone());
    let load = number(st, job, "cpuload", 0)?;
    if load == 0 {
        let at = job.get("cpuload").map_or(at, |o| o.at.clone());
        st.m.bad.push((
            at,
            "ioengine=cpuio needs cpuload= (the percent of a CPU to burn, 1-100), as fio does".into(),
        ));
        return None;
    }
    let chunk_us = number(st, job, "cpuchunks", 50_000)?;
    let qsort = match job.get("cpumode").map(|o| (o, o.value.as_deref().map(str::trim))) {
        None | Some((_, Some("noop"))) => false,
        Some((_, Some("qsort"))) => true,
        Some((o, v)) => {
            let v = v.unwrap_or("");
            st.m.bad
                .push((o.at.clone(), format!("cpumode: '{v}' is not noop or qsort")));
            return None;
        }
    };
    Some(CpuLoad {
        load: load.min(100),
        chunk_us,
        qsort,
        exit_on_io_done: job.flag("exit_on_io_done"),
    })
}

/// What every engine without I/O shares: no files (fslab's null engine
/// lays out none), reads as what fio counts, and a runtime to end it:
/// without one fio's job never ends. A rate or thinktime is fio's own
/// business there (the engine sets its thinktime), so fslab refuses them.
fn noio_job(st: &mut State, job: &Job, name: &str) {
    let at = job.get("ioengine").map_or_else(|| job.at.clone(), |o| o.at.clone());
    st.a.engine = "null".into();
    st.a.rw = "read".into();
    st.a.size.get_or_insert_with(|| "4k".into());
    let runtime =
        st.a.runtime
            .as_deref()
            .and_then(|r| crate::units::parse_duration(r).ok());
    if runtime.is_none_or(|r| r.is_zero()) {
        st.m.bad.push((
            at.clone(),
            format!("ioengine={name} without runtime=: fio's {name} job never ends"),
        ));
    }
    for key in ["thinktime", "rate", "rate_iops", "rate_min", "rate_iops_min"] {
        if let Some(o) = job.get(key) {
            st.m.bad.push((
                o.at.clone(),
                format!("{key} with ioengine={name}: the engine paces itself (fio overrides its thinktime); fslab does not mix the two"),
            ));
        }
    }
}

/// exec's options, as fio's exec_background reads them: the program is
/// required and must exist before anything runs (fio would fork a copy of
/// itself that fails its execvp and carries on as fio); the redirect files
/// may not replace a file fslab did not create, unless --force-overwrite.
fn exec(st: &mut State, job: &Job, fa: &FioArgs) -> Option<ExecPlan> {
    let at = job.get("ioengine").map_or_else(|| job.at.clone(), |o| o.at.clone());
    let Some(p) = job
        .get("program")
        .filter(|o| o.value.as_deref().is_some_and(|v| !v.trim().is_empty()))
    else {
        st.m.bad.push((
            at,
            "ioengine=exec needs program= (fio: \"no program is defined\")".into(),
        ));
        return None;
    };
    let name = job.reported_name();
    let runtime =
        st.a.runtime
            .as_deref()
            .and_then(|r| crate::units::parse_duration(r).ok())?;
    let args = job.get("arguments").and_then(|o| o.value.as_deref());
    let args = args.map(|a| a.replace("%r", &runtime.as_secs().to_string()).replace("%n", name));
    let line = format!("{} {}", p.value.as_deref().unwrap_or(""), args.unwrap_or_default());
    let argv: Vec<String> = line.split(' ').filter(|w| !w.is_empty()).map(String::from).collect();
    let Some(program) = find_program(&argv[0]) else {
        let why = format!(
            "program: '{}' is not an executable file (nor found on PATH)",
            crate::units::excerpt(&argv[0])
        );
        st.m.bad.push((p.at.clone(), why));
        return None;
    };
    let grace_s = number(st, job, "grace_time", 1)?;
    let redirect = if job.get("std_redirect").is_none() || job.flag("std_redirect") {
        Some(redirect_files(st, job, fa)?)
    } else {
        None
    };
    Some(ExecPlan {
        program,
        argv,
        grace_s,
        redirect,
        overwrite: fa.force_overwrite,
        runtime,
    })
}

/// `word` as execvp finds it: a path when it has a '/', else the first
/// executable regular file of that name on PATH.
fn find_program(word: &str) -> Option<PathBuf> {
    let runs = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if word.contains('/') {
        return runs(Path::new(word)).then(|| PathBuf::from(word));
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| {
            if d.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                d
            }
            .join(word)
        })
        .find(|p| runs(p))
}

/// std_redirect's files, NAME.stdout and NAME.stderr in the working
/// directory (fio's), checked: a name that leaves the directory, or a file
/// there already (fio truncates it), is refused; --force-overwrite allows
/// replacing a regular file, never following a symlink.
fn redirect_files(st: &mut State, job: &Job, fa: &FioArgs) -> Option<[PathBuf; 2]> {
    let at = job
        .get("std_redirect")
        .or(job.get("program"))
        .map_or_else(|| job.at.clone(), |o| o.at.clone());
    let name = job.reported_name();
    if name.contains('/') || name.starts_with('.') {
        let at = job.get("name").map_or(at, |o| o.at.clone());
        let why = format!("std_redirect: the job's name '{}' would put its output files outside the working directory (rename the job, or std_redirect=0)", crate::units::excerpt(name));
        st.m.bad.push((at, why));
        return None;
    }
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            st.m.bad.push((at, format!("std_redirect: the working directory: {e}")));
            return None;
        }
    };
    let files = [cwd.join(format!("{name}.stdout")), cwd.join(format!("{name}.stderr"))];
    for f in &files {
        let Ok(m) = std::fs::symlink_metadata(f) else { continue };
        let why = if !m.file_type().is_file() {
            "exists and is not a regular file (a symlink, a directory...)"
        } else if !fa.force_overwrite {
            "exists already, and this run did not make it (fio would truncate it); add --force-overwrite to replace it"
        } else {
            continue;
        };
        st.m.bad.push((at, format!("std_redirect: {} {why}", f.display())));
        return None;
    }
    Some(files)
}
