//! `fslab fio`: fio job files (and fio's command-line jobs) mapped onto
//! fslab's io workload. Every fio option is either mapped, accepted with a
//! note saying how fslab differs, or rejected: all rejected options are
//! listed at once with their file:line, unless `--ignore-unsupported` turns
//! them into warnings. Each job becomes an `IoPlan` built through the same
//! validation as `fslab io`, so a bad value names the fio option and line.

use super::fiojob::{self, Job, Opt};
use super::{IoPlan, PlanError, Result};
use crate::cli::{CommonArgs, FioArgs, IoArgs};
use std::path::{Path, PathBuf};

/// fio output formats fslab writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FioFormat {
    /// fio's human text.
    Normal,
    /// fio's JSON (json+ is written as json, with a note).
    Json,
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
}

#[derive(Debug)]
pub struct FioPlan {
    pub jobs: Vec<FioJobPlan>,
    pub format: FioFormat,
    pub output: Option<PathBuf>,
    /// How fslab's run differs from fio's, said once each.
    pub notes: Vec<String>,
    pub quiet: bool,
}

/// Options that shape the job list rather than a job.
const STRUCTURAL: &[&str] = &[
    "stonewall",
    "wait_for_previous",
    "new_group",
    "group_reporting",
    "name",
    "description",
];

/// Options accepted without effect, with what to tell the user (empty: nothing to say).
const ACCEPTED: &[(&str, &str)] = &[
    ("thread", ""),
    (
        "invalidate",
        "invalidate: fslab does not drop a file's page cache before the job",
    ),
    ("norandommap", ""),
    ("random_generator", ""),
    ("fallocate", ""),
    ("overwrite", ""),
    (
        "create_on_open",
        "create_on_open: fslab creates and lays out every file before the timed run",
    ),
    (
        "unlink",
        "unlink: fslab always removes the files it created when the run ends",
    ),
    ("kb_base", ""),
    (
        "clocksource",
        "clocksource: fslab times with the TSC (quanta), whatever fio's clocksource says",
    ),
    ("percentile_list", ""),
    ("lat_percentiles", ""),
    ("clat_percentiles", ""),
    ("exitall_on_error", ""),
];

/// Time in fio's notation: a bare number is in `unit` ("s" for runtime, "us" for thinktime).
fn fio_time(v: &str, unit: &str) -> String {
    if !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()) {
        format!("{v}{unit}")
    } else {
        v.to_string()
    }
}

/// A fio time checked here, so that the message quotes the value as written
/// (`runtime=90` is shown as '90', not as the '90s' fslab io is given).
fn checked_time(v: &str, unit: &str) -> std::result::Result<String, String> {
    let t = fio_time(v, unit);
    match crate::units::parse_duration(&t) {
        Ok(_) => Ok(t),
        Err(crate::units::UnitError::DurationTooLong(_)) => {
            Err(crate::units::UnitError::DurationTooLong(v.to_string()).to_string())
        }
        Err(_) => Err(crate::units::UnitError::Duration(v.to_string()).to_string()),
    }
}

fn val(o: &Opt) -> std::result::Result<&str, String> {
    o.value
        .as_deref()
        .ok_or_else(|| format!("{} needs a value ({}=...)", o.key, o.key))
}

fn on(o: &Opt) -> bool {
    o.value.as_deref().map(|v| v != "0" && v != "false").unwrap_or(true)
}

/// Maps one job's options onto `fslab io` flags. Returns the args, the
/// (fslab flag -> fio option location and key) map for errors, the rejected
/// options, and the bad values of supported ones.
struct Mapped {
    args: IoArgs,
    flag_at: Vec<(&'static str, String, String)>,
    unsupported: Vec<String>,
    /// (file:line, "key: why"): a supported option with a value no run can
    /// have; refused whatever --ignore-unsupported says.
    bad: Vec<(String, String)>,
    notes: Vec<String>,
    percentiles: Vec<f64>,
}

fn map_job(job: &Job, target_default: &str, fa: &FioArgs) -> Mapped {
    let mut a = IoArgs {
        common: CommonArgs {
            target: target_default.to_string(),
            quiet: true,
            ..Default::default()
        },
        rw: "read".into(),
        ..Default::default()
    };
    let mut m = Mapped {
        args: IoArgs::default(),
        flag_at: Vec::new(),
        unsupported: Vec::new(),
        bad: Vec::new(),
        notes: Vec::new(),
        percentiles: Vec::new(),
    };
    let (mut size, mut filesize, mut nrfiles) = (None::<(String, String)>, None::<(String, String)>, 1u64);
    let mut time_based = false;
    let mut runtime = None::<String>;
    let mut filename: Option<(String, String)> = None;
    let mut directory: Option<(String, String)> = None;
    for o in &job.opts {
        let key = o.key.replace('-', "_");
        let at = o.at.clone();
        let mut set = |flag: &'static str| m.flag_at.push((flag, at.clone(), key.clone()));
        let mut bad = None::<String>;
        let r: std::result::Result<(), String> = (|| {
            match key.as_str() {
                k if STRUCTURAL.contains(&k) => {}
                "rw" | "readwrite" => {
                    let v = val(o)?;
                    a.rw = match v {
                        "read" | "write" | "randread" | "randwrite" | "randrw" => v.to_string(),
                        "rw" | "readwrite" => "rw".into(),
                        other => {
                            return Err(format!(
                                "rw={other} is not supported (read, write, randread, randwrite, rw, randrw)"
                            ))
                        }
                    };
                    set("--rw");
                }
                "rwmixread" => {
                    a.rwmixread = val(o)?.to_string();
                    set("--rwmixread");
                }
                "rwmixwrite" => match crate::units::parse_percent(val(o)?) {
                    Ok(w) => {
                        a.rwmixread = (100 - w).to_string();
                        set("--rwmixread");
                    }
                    Err(e) => bad = Some(format!("rwmixwrite: {e}")),
                },
                "bs" | "blocksize" | "bsrange" | "blocksize_range" => {
                    let v = val(o)?;
                    if v.contains(',') {
                        return Err(format!(
                            "{key}={v}: different read and write block sizes are not supported"
                        ));
                    }
                    a.bs = v.to_string();
                    set("--bs");
                }
                "bssplit" => {
                    let v = val(o)?;
                    if v.contains(',') {
                        return Err(format!(
                            "bssplit={v}: different read and write splits are not supported"
                        ));
                    }
                    a.bssplit = Some(v.to_string());
                    set("--bssplit");
                }
                "size" => {
                    let v = val(o)?;
                    if v.ends_with('%') {
                        return Err(format!("size={v}: a percentage of the device is not supported"));
                    }
                    size = Some((v.to_string(), o.at.clone()));
                }
                "filesize" => filesize = Some((val(o)?.to_string(), o.at.clone())),
                "nrfiles" => match val(o)?.parse() {
                    Ok(n) => {
                        nrfiles = n;
                        a.nrfiles = nrfiles.to_string();
                        set("--nrfiles");
                    }
                    Err(_) => bad = Some(format!("nrfiles: '{}' is not a whole number", val(o)?)),
                },
                "filename" => {
                    let v = val(o)?;
                    if v.contains(':') {
                        return Err(format!(
                            "filename={v}: several files per job (':') are not supported; use nrfiles"
                        ));
                    }
                    filename = Some((v.to_string(), o.at.clone()));
                }
                "directory" => {
                    let v = val(o)?;
                    if v.contains(':') {
                        return Err(format!("directory={v}: several directories are not supported"));
                    }
                    directory = Some((v.to_string(), o.at.clone()));
                }
                "numjobs" => {
                    a.jobs = val(o)?.to_string();
                    set("--jobs");
                }
                "ioengine" => {
                    let v = val(o)?;
                    a.engine = match v {
                        "sync" | "psync" | "vsync" | "pvsync" | "pvsync2" => "sync".into(),
                        "io_uring" => "uring".into(),
                        "libaio" => {
                            m.notes
                                .push("ioengine=libaio runs as io_uring (fslab has no libaio engine)".into());
                            "uring".into()
                        }
                        "null" => "null".into(),
                        other => {
                            return Err(format!(
                                "ioengine={other} is not supported (sync, psync, pvsync, io_uring, libaio, null)"
                            ))
                        }
                    };
                    set("--engine");
                }
                "iodepth" => {
                    a.iodepth = val(o)?.to_string();
                    set("--iodepth");
                }
                "iodepth_batch" | "iodepth_batch_submit" => {
                    a.iodepth_batch = Some(val(o)?.to_string());
                    set("--iodepth-batch");
                }
                "direct" => a.direct = on(o),
                "buffered" => a.direct = !on(o),
                "fsync" => {
                    let v = val(o)?;
                    a.fsync = (v != "0").then(|| v.to_string());
                    set("--fsync");
                }
                "fdatasync" => {
                    let v = val(o)?;
                    a.fdatasync = (v != "0").then(|| v.to_string());
                    set("--fdatasync");
                }
                "end_fsync" => {
                    a.end_fsync = on(o);
                    set("--end-fsync");
                }
                "runtime" | "timeout" => match checked_time(val(o)?, "s") {
                    Ok(t) => {
                        runtime = Some(t);
                        set("--runtime");
                    }
                    Err(e) => bad = Some(format!("{key}: {e}")),
                },
                "time_based" => time_based = on(o),
                "ramp_time" => match checked_time(val(o)?, "s") {
                    Ok(t) => {
                        a.ramp = Some(t);
                        set("--ramp");
                    }
                    Err(e) => bad = Some(format!("ramp_time: {e}")),
                },
                "rate_iops" => {
                    let v = val(o)?;
                    if v.contains(',') {
                        return Err(format!("rate_iops={v}: per-direction rates are not supported"));
                    }
                    a.rate_iops = Some(v.to_string());
                    set("--rate-iops");
                }
                "randrepeat" => {
                    // fio's default (1) repeats the offsets run after run, as fslab's fixed seed does
                    if !on(o) && a.common.seed.is_none() {
                        let t = std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map(|d| d.as_nanos() as u64)
                            .unwrap_or(1);
                        a.common.seed = Some(t.to_string());
                        set("--seed");
                    }
                }
                "randseed" => {
                    a.common.seed = Some(val(o)?.to_string());
                    set("--seed");
                }
                "thinktime" => match checked_time(val(o)?, "us") {
                    Ok(t) => {
                        a.thinktime = Some(t);
                        set("--thinktime");
                    }
                    Err(e) => bad = Some(format!("thinktime: {e}")),
                },
                "percentile_list" => {
                    for p in val(o)?.split(':') {
                        let p: f64 = p
                            .parse()
                            .map_err(|_| format!("percentile_list: '{p}' is not a number"))?;
                        if !(0.0..=100.0).contains(&p) {
                            return Err(format!("percentile_list: {p} is not between 0 and 100"));
                        }
                        m.percentiles.push(p);
                    }
                }
                "verify" => match val(o)? {
                    "0" | "none" => {}
                    "crc32c" | "crc32c-intel" => {
                        a.verify = Some("crc32c".into());
                        set("--verify");
                        m.notes.push(
                            "verify: fslab checks every block it reads; it does not read a write-only job back afterwards"
                                .into(),
                        );
                    }
                    v => return Err(format!("verify={v} is not supported (crc32c)")),
                },
                k if ACCEPTED.iter().any(|(a, _)| *a == k) => {
                    let note = ACCEPTED.iter().find(|(a, _)| *a == k).map(|x| x.1).unwrap_or("");
                    if !note.is_empty() {
                        m.notes.push(note.to_string());
                    }
                }
                _ => return Err(format!("{key} is not supported")),
            }
            Ok(())
        })();
        if let Err(e) = r {
            m.unsupported.push(format!("{}: {e}", o.at));
        }
        if let Some(b) = bad {
            m.bad.push((o.at.clone(), b));
        }
    }
    // fio: size is the job's total over its files; filesize is each file's.
    match (&filesize, &size) {
        (Some((fs, at)), _) => match crate::units::parse_size(fs) {
            Ok(v) => match v.checked_mul(nrfiles.max(1)).filter(|t| *t <= crate::units::MAX_SIZE) {
                Some(total) => {
                    a.size = Some(total.to_string());
                    m.flag_at.push(("--size", at.clone(), "filesize".into()));
                }
                None => m.bad.push((
                    at.clone(),
                    format!(
                        "filesize={fs} × nrfiles={nrfiles}: the job's size is more than 8 EiB, the largest file size Linux has"
                    ),
                )),
            },
            Err(e) => m.bad.push((at.clone(), format!("filesize: {e}"))),
        },
        (None, Some((s, at))) => {
            a.size = Some(s.clone());
            m.flag_at.push(("--size", at.clone(), "size".into()));
        }
        (None, None) => {}
    }
    if let Some(s) = &fa.size {
        a.size = Some(s.clone());
    }
    if let Some(r) = fa.runtime.as_ref().map(|r| fio_time(r, "s")).or(runtime) {
        a.runtime = Some(r);
        a.size_based = !time_based;
    } else if time_based {
        m.unsupported.push(format!("{}: time_based needs a runtime", job.at));
    }
    if let Some((f, at)) = filename {
        let p = match &directory {
            Some((d, _)) => Path::new(d).join(&f),
            None => PathBuf::from(&f),
        };
        if p.exists() {
            a.common.target = p.display().to_string();
            m.flag_at.push(("--target", at, "filename".into()));
            a.allow_device = fa.allow_device;
            a.force_overwrite = fa.force_overwrite;
        } else {
            // fio would create it: fslab creates its own work file beside it
            a.common.target = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .display()
                .to_string();
            m.notes.push(format!(
                "filename={f}: fslab works in its own directory in {} instead (and removes it afterwards)",
                a.common.target
            ));
        }
    } else if let Some((d, at)) = directory {
        a.common.target = d;
        m.flag_at.push(("--target", at, "directory".into()));
    }
    a.shared_file = false;
    m.args = a;
    m
}

fn flag_of(e: &PlanError) -> &str {
    e.flag.as_str()
}

impl FioPlan {
    pub fn from_args(fa: &FioArgs) -> Result<FioPlan> {
        // fio's own flags may come after the job files, as --flag=VALUE
        // (or --flag VALUE, as fio's getopt takes them too)
        const VALUE_FLAGS: &[&str] = &["--output-format", "--output", "--runtime", "--size", "--section"];
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
                ("--runtime", Some(v)) => eff.runtime = Some(v),
                ("--size", Some(v)) => eff.size = Some(v),
                ("--section", Some(v)) => eff.section = Some(v),
                ("--ignore-unsupported", None) => eff.ignore_unsupported = true,
                ("--allow-device", None) => eff.allow_device = true,
                ("--force-overwrite", None) => eff.force_overwrite = true,
                ("--quiet", None) => eff.quiet = true,
                _ => eff.args.push(a.clone()),
            }
        }
        let fa = &eff;
        // fslab fio's own values, checked before any job so that errors name the flag
        if let Some(r) = &fa.runtime {
            checked_time(r, "s").map_err(|e| PlanError::new("--runtime", e))?;
        }
        if let Some(sz) = &fa.size {
            crate::units::parse_size(sz).map_err(|e| PlanError::new("--size", e))?;
        }
        let (files, cli): (Vec<&String>, Vec<&String>) = fa.args.iter().partition(|a| !a.starts_with("--"));
        let mut jobs = if files.is_empty() {
            Vec::new()
        } else {
            let paths: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
            fiojob::parse_files(&paths, fa.section.as_deref())?
        };
        let cli: Vec<String> = cli.into_iter().cloned().collect();
        let cli_jobs = fiojob::parse_cli_jobs(&cli)?;
        if cli_jobs.is_empty() && !cli.is_empty() {
            // options with no --name to belong to: most likely a mistyped flag
            return Err(PlanError::new(
                cli[0].as_str(),
                "not a flag of fslab fio, nor an option of a command-line job (those follow --name=NAME)",
            ));
        }
        jobs.extend(cli_jobs);
        if jobs.is_empty() {
            return Err(PlanError::new(
                "JOBFILE",
                "give a job file or a command-line job (--name=NAME --rw=... )",
            ));
        }
        let format = match fa.output_format.as_str() {
            "normal" => FioFormat::Normal,
            "json" => FioFormat::Json,
            "json+" => FioFormat::Json,
            other => {
                return Err(PlanError::new(
                    "--output-format",
                    format!("'{other}' is not supported (normal, json, json+)"),
                ))
            }
        };
        let mut notes = Vec::new();
        if fa.output_format == "json+" {
            notes.push("--output-format=json+ is written as json (no per-bin latency lists)".into());
        }
        let mut out = Vec::new();
        let mut unsupported = Vec::new();
        let (mut segment, mut group) = (0usize, 0usize);
        for (i, job) in jobs.iter().enumerate() {
            if i > 0 && (job.flag("stonewall") || job.flag("wait_for_previous")) {
                segment += 1;
                group += 1;
            } else if i > 0 && job.flag("new_group") {
                group += 1;
            }
            let mapped = map_job(job, ".", fa);
            for n in mapped.notes {
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
            if let Some((at, why)) = mapped.bad.first() {
                return Err(PlanError::new(at.as_str(), format!("[{}] {why}", job.name)));
            }
            if !mapped.unsupported.is_empty() {
                unsupported.extend(mapped.unsupported);
                if !fa.ignore_unsupported {
                    continue;
                }
            }
            let mut plan = IoPlan::from_args(&mapped.args).map_err(|e| {
                // a value fslab fio's own flag set names that flag
                if (e.flag == "--runtime" && fa.runtime.is_some()) || (e.flag == "--size" && fa.size.is_some()) {
                    return PlanError::new(e.flag.as_str(), format!("[{}] {}", job.name, e.msg));
                }
                let (at, key) = mapped
                    .flag_at
                    .iter()
                    .rev()
                    .find(|(f, _, _)| *f == flag_of(&e))
                    .map(|(_, at, key)| (at.clone(), key.clone()))
                    .unwrap_or_else(|| (job.at.clone(), e.flag.trim_start_matches("--").to_string()));
                PlanError::new(at, format!("[{}] {key}: {}", job.name, e.msg))
            })?;
            plan.quiet = true;
            if !mapped.percentiles.is_empty() {
                plan.lat_percentiles = mapped.percentiles;
            }
            out.push(FioJobPlan {
                name: job.name.clone(),
                plan,
                segment,
                group,
                group_reporting: job.flag("group_reporting"),
                options: job
                    .opts
                    .iter()
                    .map(|o| (o.key.clone(), o.value.clone().unwrap_or_default()))
                    .collect(),
            });
        }
        if !unsupported.is_empty() {
            if fa.ignore_unsupported {
                for u in &unsupported {
                    eprintln!("fslab fio: warning: ignored {u}");
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
        // Jobs that run together share the runner's settings.
        for s in 0..=segment {
            let seg: Vec<&FioJobPlan> = out.iter().filter(|j| j.segment == s).collect();
            if let Some(first) = seg.first() {
                for j in &seg[1..] {
                    let (a, b) = (&first.plan, &j.plan);
                    let same = a.engine == b.engine
                        && a.iodepth == b.iodepth
                        && a.iodepth_batch == b.iodepth_batch
                        && a.runtime == b.runtime
                        && a.ramp == b.ramp
                        && a.rate_iops == b.rate_iops;
                    if !same {
                        return Err(PlanError::new(
                            "JOBFILE",
                            format!(
                                "jobs '{}' and '{}' run at the same time but differ in ioengine, iodepth, runtime, ramp_time or rate_iops; fslab runs such jobs together only with the same values (add stonewall to run them one after the other)",
                                first.name, j.name
                            ),
                        ));
                    }
                }
            }
        }
        if out.is_empty() {
            return Err(PlanError::new("JOBFILE", "every job was skipped"));
        }
        Ok(FioPlan {
            jobs: out,
            format,
            output: fa
                .output
                .as_ref()
                .map(|p| super::check_path("--output", Path::new(p)))
                .transpose()?,
            notes,
            quiet: fa.quiet,
        })
    }
}
