//! `fslab fio`: fio job files (and fio's command-line jobs) mapped onto
//! fslab's io workload. Every fio option is either mapped, accepted with a
//! note saying how fslab differs, or rejected: all rejected options are
//! listed at once with their file:line, unless `--ignore-unsupported` turns
//! them into warnings. Each job becomes an `IoPlan` built through the same
//! validation as `fslab io`, so a bad value names the fio option and line.

pub mod control;
pub mod engines;
mod map;
pub mod output;
pub mod steady;

pub use control::ControlOpts;
pub use engines::FioEngine;
pub use output::{FioFormat, FioFormats, LatReport, LogOpts};

use super::fiojob;
use super::{IoPlan, OutputFormat, OutputSpec, Outputs, PlanError, Presentation, Result};
use crate::cli::FioArgs;
use crate::units::excerpt;
use map::{bounded, checked_time, map_job};
use std::path::{Path, PathBuf};

/// What a fio job has beyond its `IoPlan`: how it starts, ends and fails,
/// its logs and its engine's kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FioJobOpts {
    pub control: ControlOpts,
    pub logs: LogOpts,
    pub engine: FioEngine,
    /// steadystate, ss_dur, ss_ramp.
    pub steady: steady::SteadyOpts,
    /// cpumask/cpus_allowed, prio/prioclass, nice.
    pub placement: Placement,
}

/// Where and at what priority each clone's thread runs (fio's cpumask,
/// cpus_allowed, cpus_allowed_policy, prio, prioclass, nice); applied by
/// the thread itself as it starts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Placement {
    /// The CPUs the job's threads may run on; None: wherever this process may.
    pub cpus: Option<Vec<usize>>,
    /// cpus_allowed_policy=split: clone i runs on the i-th CPU of `cpus` alone.
    pub split: bool,
    /// ioprio_set's class (1 realtime, 2 best-effort, 3 idle) and level (0-7).
    pub prioclass: Option<u8>,
    pub prio: Option<u8>,
    pub nice: Option<i32>,
}

/// One fio job (a section, with its numjobs clones).
#[derive(Debug, Clone)]
pub struct FioJobPlan {
    pub name: String,
    pub plan: IoPlan,
    /// Jobs of one segment run together; segments run in order (stonewall).
    pub segment: usize,
    /// Reporting group (fio's groupid): a new one at each stonewall or new_group.
    pub group: usize,
    pub group_reporting: bool,
    /// The options as written, for "job options" in the JSON.
    pub options: Vec<(String, String)>,
    /// fio's options beyond the io workload's.
    pub fio: FioJobOpts,
    /// Where the job's section starts (file:line, or "command line").
    pub at: String,
    /// (fslab io flag, file:line, fio option) of each mapped option, so
    /// that a refusal of the target checks names the fio option and its
    /// line (`locate`); an empty option is a flag of fslab fio's own.
    pub flag_at: Vec<(&'static str, String, String)>,
    /// The earlier job (its index in the run's jobs) whose new file this
    /// job works on: both name one new filename=, this one in a later
    /// segment, without a size and with create_serialize=0: fio sizes it
    /// from the file as the job starts (examples/surface-scan.fio's
    /// verify phase).
    pub reuse: Option<usize>,
}

impl FioJobPlan {
    /// A refusal of `flag` (an `fslab io` flag the job was mapped onto,
    /// such as --target from directory=) told as the fio option and line
    /// it came from: "job.fio:4: [a] directory: '/x': No such file".
    pub fn locate(&self, flag: &str, msg: &str) -> PlanError {
        let name = excerpt(&self.name);
        match self.flag_at.iter().rev().find(|(f, _, _)| *f == flag) {
            Some((_, at, key)) if key.is_empty() => PlanError::new(at.as_str(), format!("[{name}] {msg}")),
            Some((_, at, key)) => PlanError::new(at.as_str(), format!("[{name}] {key}: {msg}")),
            None => PlanError::new(
                self.at.as_str(),
                format!("[{name}] {}: {msg}", flag.trim_start_matches("--")),
            ),
        }
    }
}

/// A validated `fslab fio` run: its jobs. Where its reports go
/// (--output-format, --output, --results) and --quiet are its
/// `Presentation`, made with it (`from_args`).
#[derive(Debug)]
pub struct FioPlan {
    pub jobs: Vec<FioJobPlan>,
    /// How fslab's run differs from fio's, said once each.
    pub notes: Vec<String>,
    /// What to do instead of running (fio's --parse-only, --showcmd).
    pub instead: Option<Instead>,
}

/// fio's flags that read the jobs and run nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum Instead {
    /// --parse-only: the jobs were read and checked; nothing to print.
    ParseOnly,
    /// --showcmd: the job files as one fio command line (fio 3.33's form:
    /// each section's options in file order, a job's after its `--name=`).
    ShowCmd(String),
}

fn flag_of(e: &PlanError) -> &str {
    e.flag.as_str()
}

impl FioPlan {
    /// The plan and its presentation: fio's report in every format of
    /// --output-format, to --output or stdout, and fslab's own result file
    /// (JSON) to --results.
    pub fn from_args(fa: &FioArgs) -> Result<(FioPlan, Presentation)> {
        let eff = effective_args(fa)?;
        let fa = &eff;
        let jobs = collect_jobs(fa)?;
        if let Some(plan) = instead_of_running(fa)? {
            return Ok((plan, Presentation::default()));
        }
        let mut notes = Vec::new();
        let formats = output::formats(fa, &mut notes)?;
        let (out, unsupported) = plan_jobs(&jobs, fa, &mut notes)?;
        if !unsupported.is_empty() {
            if fa.ignore_unsupported {
                for u in &unsupported {
                    eprintln!("fslab fio: warning: ignored {}", crate::units::shown(u));
                }
            } else {
                return Err(PlanError::new(
                    "JOBFILE",
                    format!(
                        "options fslab does not support (--ignore-unsupported skips them): {}",
                        unsupported.join("; ")
                    ),
                ));
            }
        }
        if out.is_empty() {
            return Err(PlanError::new("JOBFILE", "every job was skipped"));
        }
        if fa.readonly {
            if let Some(j) = out.iter().find(|j| j.plan.writes()) {
                return Err(PlanError::new(
                    j.at.as_str(),
                    format!(
                        "[{}] --readonly: this job writes (rw={}), and fio's --readonly refuses it",
                        excerpt(&j.name),
                        j.plan.shape.rw.name()
                    ),
                ));
            }
        }
        output::check_logs(&out)?;
        for k in 0..out.len() {
            control::wait_target(&out, k).map_err(|(at, why)| PlanError::new(at, why))?;
        }
        steady::check_groups(&out).map_err(|(at, why)| PlanError::new(at, why))?;
        let presentation = presentation(fa, formats)?;
        let instead = fa.parse_only.then_some(Instead::ParseOnly);
        Ok((
            FioPlan {
                jobs: out,
                notes,
                instead,
            },
            presentation,
        ))
    }
}

/// fio's --showcmd: the plan that prints the job files instead of running
/// them; None to run. Checks fio's ETA flags too.
fn instead_of_running(fa: &FioArgs) -> Result<Option<FioPlan>> {
    if fa.showcmd {
        let files: Vec<PathBuf> = fa
            .args
            .iter()
            .filter(|a| !a.starts_with("--"))
            .map(PathBuf::from)
            .collect();
        let plan = FioPlan {
            jobs: Vec::new(),
            notes: Vec::new(),
            instead: Some(Instead::ShowCmd(fiojob::showcmd(&files)?)),
        };
        return Ok(Some(plan));
    }
    if let Some(v) = fa.eta.as_deref().filter(|v| !["always", "never", "auto"].contains(v)) {
        return Err(PlanError::new(
            "--eta",
            format!("'{}' is not always, never or auto", excerpt(v)),
        ));
    }
    for (flag, v) in [("--eta-newline", &fa.eta_newline), ("--eta-interval", &fa.eta_interval)] {
        if let Some(v) = v {
            checked_time(v, "s").map_err(|e| PlanError::new(flag, e))?;
        }
    }
    Ok(None)
}

/// fio's report in every format of --output-format, to --output or stdout
/// (nowhere for /dev/null), fslab's own result file to --results, and
/// --quiet (or --eta=never).
fn presentation(fa: &FioArgs, formats: output::FioFormats) -> Result<Presentation> {
    if let Some((f, p)) = fa.output.as_deref().and_then(|o| o.split_once(':')) {
        // fslab's other commands take --output FORMAT:FILE; fio's (and
        // so fslab fio's) --output is a file name: say so rather than
        // write fio's text into a file named "json:x"
        const FORMATS: &[&str] = &[
            "text",
            "json",
            "csv",
            "html",
            "fio-json",
            "bonnie-csv",
            "timeline-csv",
            "normal",
            "json+",
            "terse",
        ];
        if FORMATS.contains(&f) {
            return Err(PlanError::new(
                "--output",
                format!(
                    "'{}': fslab fio's --output is fio's, a file name; write --output-format={f} --output {}, \
                         or --results {} for fslab's own result file",
                    excerpt(fa.output.as_deref().unwrap_or_default()),
                    excerpt(p),
                    excerpt(p)
                ),
            ));
        }
    }
    // fio --output=/dev/null (CI wrappers that read only --results, or
    // only the exit code): nothing of fio's report is written
    let discard = fa
        .output
        .as_deref()
        .is_some_and(|p| Path::new(p) == Path::new("/dev/null"));
    let output = fa
        .output
        .as_ref()
        .filter(|_| !discard)
        .map(|p| super::check_path("--output", Path::new(p)))
        .transpose()?;
    let results = fa
        .results
        .as_ref()
        .map(|p| super::check_path("--results", Path::new(p)))
        .transpose()?;
    if results.is_some() && results == output {
        return Err(PlanError::new(
            "--results",
            "is the --output file: give fslab's result file a path of its own",
        ));
    }
    let mut outputs = Outputs(Vec::new());
    if !discard {
        outputs.0.push(OutputSpec {
            format: OutputFormat::Fio(formats),
            path: output,
        });
    }
    if let Some(p) = results {
        outputs.0.push(OutputSpec {
            format: OutputFormat::Json,
            path: Some(p),
        });
    }
    Ok(Presentation {
        outputs,
        quiet: fa.quiet || fa.eta.as_deref() == Some("never"),
    })
}

/// `fa` with fslab fio's own flags taken out of its trailing arguments.
/// fio's own flags may come after the job files and after a command-line
/// job's options, as --flag=VALUE (or --flag VALUE, as fio's getopt takes
/// them too): every flag of `fslab fio` does, telemetry's and `-q` too, so
/// none is taken for a job option. `main` installs the telemetry hooks
/// from what this returns.
pub fn effective_args(fa: &FioArgs) -> Result<FioArgs> {
    const VALUE_FLAGS: &[&str] = &[
        "--output-format",
        "--output",
        "--results",
        "--runtime",
        "--size",
        "--section",
        "--terse-version",
        "--status-interval",
        "--eta",
        "--eta-newline",
        "--eta-interval",
        "--profile-dir",
        "--profile-hz",
        "--disturbed-cpu",
    ];
    let mut eff = fa.clone();
    eff.args.clear();
    let mut args = fa.args.iter();
    while let Some(a) = args.next() {
        let (k, v) = match a.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None if VALUE_FLAGS.contains(&a.as_str()) => match args.next() {
                Some(v) => (a.as_str(), Some(v.clone())),
                None => return Err(PlanError::new(a.as_str(), format!("needs a value ({a}=VALUE)"))),
            },
            None => (a.as_str(), None),
        };
        match (k, v) {
            ("--output-format", Some(v)) => eff.output_format = v,
            ("--output", Some(v)) => eff.output = Some(v),
            ("--results", Some(v)) => eff.results = Some(v),
            ("--runtime", Some(v)) => eff.runtime = Some(v),
            ("--size", Some(v)) => eff.size = Some(v),
            ("--section", Some(v)) => eff.section = Some(v),
            ("--ignore-unsupported", None) => eff.ignore_unsupported = true,
            ("--allow-device", None) => eff.allow_device = true,
            ("--force-overwrite", None) => eff.force_overwrite = true,
            ("--quiet" | "-q", None) => eff.quiet = true,
            ("--no-telemetry", None) => eff.telemetry.no_telemetry = true,
            ("--profile", None) => eff.telemetry.profile = true,
            ("--profile-dir", Some(v)) => eff.telemetry.profile_dir = Some(v),
            ("--profile-hz", Some(v)) => eff.telemetry.profile_hz = Some(v),
            ("--anatomy", None) => eff.telemetry.anatomy = true,
            ("--explain-slow", Some(v)) => eff.telemetry.explain_slow = Some(v),
            ("--disturbed-cpu", Some(v)) => eff.telemetry.disturbed_cpu = Some(v),
            ("--minimal", None) => eff.minimal = true,
            ("--terse-version", Some(v)) => eff.terse_version = Some(v),
            ("--status-interval", Some(v)) => eff.status_interval = Some(v),
            ("--eta", Some(v)) => eff.eta = Some(v),
            ("--eta-newline", Some(v)) => eff.eta_newline = Some(v),
            ("--eta-interval", Some(v)) => eff.eta_interval = Some(v),
            ("--parse-only", None) => eff.parse_only = true,
            ("--showcmd", None) => eff.showcmd = true,
            ("--readonly", None) => eff.readonly = true,
            // fio's getopt takes `--directory DIR` and `--filename FILE` too:
            // options of the command line's global section, not job files
            ("--directory" | "--filename", None) => match args.next() {
                Some(v) => eff.args.push(format!("{a}={v}")),
                None => return Err(PlanError::new(a.as_str(), format!("needs a value ({a}=VALUE)"))),
            },
            _ => eff.args.push(a.clone()),
        }
    }
    Ok(eff)
}

/// A job file's text and command-line arguments parsed and mapped as
/// `fslab fio` does, without running anything (the fuzz target): the jobs'
/// plans, or the error the user would see.
#[doc(hidden)]
pub fn plan_text(text: &str, cli: &[String]) -> Result<Vec<FioJobPlan>> {
    let (global, mut jobs) = fiojob::parse_cli(cli)?;
    if !text.is_empty() {
        jobs.extend(fiojob::under_globals(fiojob::parse_text("fuzz.fio", text)?, &global));
    }
    let fa = FioArgs::default();
    let mut notes = Vec::new();
    plan_jobs(&jobs, &fa, &mut notes).map(|(plans, _)| plans)
}

/// The jobs of the job files, then the command-line jobs; at least one.
fn collect_jobs(fa: &FioArgs) -> Result<Vec<fiojob::Job>> {
    // fslab fio's own values, checked before any job so that errors name the flag
    if let Some(r) = &fa.runtime {
        checked_time(r, "s").map_err(|e| PlanError::new("--runtime", e))?;
    }
    if let Some(sz) = &fa.size {
        crate::units::parse_size(sz).map_err(|e| PlanError::new("--size", e))?;
    }
    let (files, cli): (Vec<&String>, Vec<&String>) = fa.args.iter().partition(|a| !a.starts_with("--"));
    let cli: Vec<String> = cli.into_iter().cloned().collect();
    let (global, mut jobs) = fiojob::parse_cli(&cli)?;
    if files.is_empty() && jobs.is_empty() && !cli.is_empty() {
        // options with no --name to belong to: most likely a mistyped flag
        return Err(PlanError::new(
            cli[0].as_str(),
            "not a flag of fslab fio, nor an option of a command-line job (those follow --name=NAME)",
        ));
    }
    if !files.is_empty() {
        // fio: the command line's jobs first, then the job files', each
        // starting from the command line's globals (--directory=, --name=global ...)
        let paths: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
        let file_jobs = fiojob::parse_files(&paths, fa.section.as_deref())?;
        jobs.extend(fiojob::under_globals(file_jobs, &global));
    }
    if jobs.is_empty() {
        return Err(PlanError::new(
            "JOBFILE",
            "give a job file or a command-line job (--name=NAME --rw=... )",
        ));
    }
    Ok(jobs)
}

/// Each job mapped and built into an `IoPlan`, in order: the plans and the
/// unsupported options (their jobs are skipped unless --ignore-unsupported).
/// New notes are added to `notes` once each.
fn plan_jobs(jobs: &[fiojob::Job], fa: &FioArgs, notes: &mut Vec<String>) -> Result<(Vec<FioJobPlan>, Vec<String>)> {
    let mut out = Vec::new();
    let mut unsupported = Vec::new();
    let (mut segment, mut group) = (0usize, 0usize);
    let mut new_files = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        if i > 0 && (job.flag("stonewall") || job.flag("wait_for_previous")) {
            segment += 1;
            group += 1;
        } else if i > 0 && job.flag("new_group") {
            group += 1;
        }
        let mut mapped = map_job(job, ".", fa);
        let new_file = new_file_path(job);
        let (note, mut reuse) = new_file_shared(job, new_file.as_deref(), segment, fa, &new_files);
        mapped.notes.extend(note);
        for n in std::mem::take(&mut mapped.notes) {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
        if let Some((at, why)) = mapped.bad.first() {
            return Err(PlanError::new(at.as_str(), format!("[{}] {why}", excerpt(&job.name))));
        }
        if !mapped.unsupported.is_empty() {
            // a [global] option fslab lacks is in every job: listed once
            for u in std::mem::take(&mut mapped.unsupported) {
                if !unsupported.contains(&u) {
                    unsupported.push(u);
                }
            }
            if !fa.ignore_unsupported {
                continue;
            }
        }
        let mut plan = job_plan(job, &mapped, fa)?;
        if plan.jobs != 1 || plan.shape.nrfiles != 1 {
            reuse = None;
        }
        mapped
            .apply_parts(&mut plan)
            .map_err(|(at, why)| PlanError::new(at.as_str(), format!("[{}] {why}", excerpt(&job.name))))?;
        out.push(FioJobPlan {
            name: job.reported_name().to_string(),
            plan,
            segment,
            group,
            group_reporting: job.flag("group_reporting"),
            options: job
                .opts
                .iter()
                .map(|o| (o.key.clone(), o.value.clone().unwrap_or_default()))
                .collect(),
            fio: std::mem::take(&mut mapped.fio),
            at: job.at.clone(),
            flag_at: {
                let mut f = std::mem::take(&mut mapped.flag_at);
                // fslab fio's own --size and --runtime override the job's
                for (flag, given) in [("--size", &fa.size), ("--runtime", &fa.runtime)] {
                    if given.is_some() {
                        f.push((flag, flag.to_string(), String::new()));
                    }
                }
                f
            },
            reuse,
        });
        match new_file {
            Some(p) if !new_files.iter().any(|(q, ..)| *q == p) => {
                new_files.push((p, job.name.clone(), out.len() - 1, segment))
            }
            _ => {}
        }
    }
    // fio's thread numbers: each clone's data are its own, and
    // dedupe_global spreads its working set over them all
    let tds: u32 = out.iter().map(|j| j.plan.jobs).sum();
    let mut td = 0;
    for j in &mut out {
        (j.plan.buffers.td, j.plan.buffers.tds) = (td, tds);
        td += j.plan.jobs;
    }
    Ok((out, unsupported))
}

/// The file `job` names with `filename=` when it does not exist yet.
/// One name only: a list's files are never another job's (`map::files`).
fn new_file_path(job: &fiojob::Job) -> Option<PathBuf> {
    let [f] = &map::files::names(job.get("filename")?.value.as_deref()?)[..] else {
        return None;
    };
    let dir = job
        .get("directory")
        .and_then(|d| d.value.as_deref())
        .map(map::files::names);
    let path = map::files::joined(dir.as_ref().and_then(|d| d.first()).map(String::as_str), f);
    (!path.exists()).then_some(path)
}

/// When `job` names a new file (`path`) an earlier job named too
/// (`seen`: path, job name, index, segment): in fio the jobs share it. A
/// job in a later segment without a size and with create_serialize=0
/// works on the earlier one's file at its size then, as fio's (the reuse:
/// that job's index); else each job works in a file of its own, said in
/// a note.
fn new_file_shared(
    job: &fiojob::Job,
    path: Option<&Path>,
    segment: usize,
    fa: &FioArgs,
    seen: &[(PathBuf, String, usize, usize)],
) -> (Option<String>, Option<usize>) {
    let Some((_, first, idx, seg)) = path.and_then(|p| seen.iter().find(|(q, ..)| q == p)) else {
        return (None, None);
    };
    if *first == job.name {
        return (None, None);
    }
    let f = job.get("filename").and_then(|o| o.value.as_deref()).unwrap_or("");
    let (f, first, name) = (excerpt(f), excerpt(first), excerpt(&job.name));
    let sized = ["size", "filesize", "io_size", "io_limit"]
        .iter()
        .any(|k| job.get(k).is_some());
    // with create_serialize (fio's default) fio sets every job's files up
    // before the first runs, and refuses this one ("you need to specify size=")
    let at_start = !job
        .get("create_serialize")
        .is_some_and(|o| matches!(o.value.as_deref().map(str::trim), Some("0" | "false")));
    if *seg < segment && !sized && !at_start && fa.size.is_none() {
        let n = format!("filename={f}: job '{name}' works on the file job '{first}' wrote, at its size when '{name}' starts, as in fio");
        return (Some(n), Some(*idx));
    }
    let n = format!("filename={f}: jobs '{first}' and '{name}' share this file in fio; in fslab each job works in a file of its own");
    (Some(n), None)
}

/// The job's `IoPlan`, through `fslab io`'s validation; an error names the
/// fio option (and file:line) the failing flag came from.
fn job_plan(job: &fiojob::Job, mapped: &map::Mapped, fa: &FioArgs) -> Result<IoPlan> {
    IoPlan::from_args(&mapped.args).map_err(|e| {
        // the long values of the option(s) on the line the error is about
        let long_at = |at: &str| -> Vec<&str> {
            job.opts
                .iter()
                .filter(|o| o.at == at)
                .filter_map(|o| o.value.as_deref())
                .filter(|v| v.chars().nth(crate::units::EXCERPT_CHARS).is_some())
                .collect()
        };
        // a value fslab fio's own flag set names that flag
        if (e.flag == "--runtime" && fa.runtime.is_some()) || (e.flag == "--size" && fa.size.is_some()) {
            let msg = bounded(e.msg.clone(), &[], &job.name);
            return PlanError::new(e.flag.as_str(), format!("[{}] {msg}", excerpt(&job.name)));
        }
        let (at, key) = mapped
            .flag_at
            .iter()
            .rev()
            .find(|(f, _, _)| *f == flag_of(&e))
            .map(|(_, at, key)| (at.clone(), key.clone()))
            .unwrap_or_else(|| (job.at.clone(), e.flag.trim_start_matches("--").to_string()));
        let msg = bounded(e.msg.clone(), &long_at(&at), &job.name);
        PlanError::new(at, format!("[{}] {key}: {msg}", excerpt(&job.name)))
    })
}
