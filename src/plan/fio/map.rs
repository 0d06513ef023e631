//! One fio job mapped onto `fslab io` flags and fslab's typed fio parts:
//! the table of fio options fslab maps, accepts with a note, or rejects.
//! Each group of options has its own module (`region`, `buffers`,
//! `pacing`, `control`, `steady`, `latency`, `output`, `engines`); an option is offered to each
//! in turn before the table here.

mod buffers;
mod cmdprio;
mod control;
mod engines;
pub(super) mod files;
mod latency;
mod net;
mod noio;
mod output;
mod pacing;
mod placement;
mod region;
mod settle;
mod steady;
mod units;
mod zones;

use super::FioJobOpts;
use crate::cli::{CommonArgs, FioArgs, IoArgs};
use crate::plan::fiojob::{Job, Opt};
use crate::plan::{BufferPlan, IoPlan, PacingPlan, RegionPlan};

/// A group's mapping of one option: None when `key` is not one of its
/// options; `Err` when fslab does not support it (listed with its file:line
/// and skipped with --ignore-unsupported). A value no run can have goes to
/// `st.m.bad` instead.
type MapFn = fn(&mut State, &str, &Opt) -> Option<std::result::Result<(), String>>;

/// A group's checks after the job's last option (values that depend on several).
type FinishFn = fn(&mut State, &Job, &FioArgs);

/// The groups, in the order an option is offered to them.
const GROUPS: &[(MapFn, FinishFn)] = &[
    (engines::map, engines::finish),
    (noio::map, noio::finish),
    (region::map, region::finish),
    (buffers::map, buffers::finish),
    (pacing::map, pacing::finish),
    (control::map, control::finish),
    (steady::map, steady::finish),
    (latency::map, latency::finish),
    (output::map, output::finish),
    (placement::map, placement::finish),
    (zones::map, zones::finish),
    (cmdprio::map, cmdprio::finish),
    (files::map, files::finish),
];

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
    ("overwrite", ""),
    (
        "create_on_open",
        "create_on_open: fslab creates and lays out every file before the timed run",
    ),
    (
        "unlink",
        "unlink: fslab always removes the files it created when the run ends",
    ),
    // read by `units` before the other options, as fio does
    ("kb_base", ""),
    (
        "clocksource",
        "clocksource: fslab times with the TSC (quanta), whatever fio's clocksource says",
    ),
    // files are laid out before the timed phase: in which order is not measured
    ("create_serialize", ""),
    ("percentile_list", ""),
    ("lat_percentiles", ""),
    ("clat_percentiles", ""),
    // fio's tiobench profile registers these among every job's options:
    // outside profile=tiobench fio reads them and ignores them (its own
    // examples/steadystate.fio and waitfor.fio write threads=1)
    (
        "threads",
        "threads: an option of fio's tiobench profile; fio ignores it in other jobs, and so does fslab (thread is fio's option for threads)",
    ),
    (
        "block",
        "block: an option of fio's tiobench profile; fio ignores it in other jobs, and so does fslab (bs is the block size)",
    ),
    (
        "numruns",
        "numruns: an option of fio's tiobench profile; fio ignores it in other jobs, and so does fslab",
    ),
    (
        "dir",
        "dir: an option of fio's tiobench profile; fio ignores it in other jobs, and so does fslab (directory is the job's directory)",
    ),
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
pub(super) fn checked_time(v: &str, unit: &str) -> std::result::Result<String, String> {
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
pub(super) struct Mapped {
    pub(super) args: IoArgs,
    pub(super) flag_at: Vec<(&'static str, String, String)>,
    pub(super) unsupported: Vec<String>,
    /// (file:line, "key: why"): a supported option with a value no run can
    /// have; refused whatever --ignore-unsupported says.
    pub(super) bad: Vec<(String, String)>,
    pub(super) notes: Vec<String>,
    pub(super) percentiles: Vec<f64>,
    pub(super) region: RegionPlan,
    pub(super) buffers: BufferPlan,
    pub(super) pacing: PacingPlan,
    pub(super) fio: FioJobOpts,
    /// blockalign/ba: (bytes, file:line), checked against the block sizes
    /// once the job's last option is read.
    pub(super) blockalign: Option<(u64, String)>,
    /// bssplit's write part when it differs from the read one: (value, file:line).
    pub(super) bssplit_write: Option<(String, String)>,
    /// fio's cmdprio options: the io plan's engine part.
    pub(super) cmdprio: Option<crate::plan::io::prio::CmdPrio>,
}

impl Mapped {
    /// Sets on `plan` (made from `args`) what fio's options give beyond
    /// `fslab io`'s flags: the parts they fill, and the percentiles. A
    /// fio-only option is a field of its part, read where the part is.
    pub(super) fn apply_parts(&mut self, plan: &mut IoPlan) -> std::result::Result<(), (String, String)> {
        plan.region = std::mem::take(&mut self.region);
        plan.buffers = std::mem::take(&mut self.buffers);
        plan.pacing = std::mem::take(&mut self.pacing);
        plan.ioengine.cmdprio = self.cmdprio.take();
        if let Some((w, at)) = self.bssplit_write.take() {
            let split = crate::plan::io::parse_bssplit(&w).map_err(|e| (at.clone(), format!("bssplit: {}", e.msg)))?;
            let s = &mut plan.shape;
            // fio aligns each direction's random offsets to its own
            // smallest block and draws them in the random map's units
            // (io_u.c): with unequal smallest blocks its writes land past
            // the file's end and end the job early, which fslab does not do
            let w_min = split.iter().map(|x| x.0).min().unwrap_or(s.bs);
            if w_min != s.bs {
                return Err((
                    at,
                    format!(
                        "bssplit: a write split whose smallest block ({w_min}) is not the read one's ({}) is not supported",
                        s.bs
                    ),
                ));
            }
            s.bs = split.iter().map(|x| x.0).fold(s.bs, u64::min);
            s.bs_max = split.iter().map(|x| x.0).fold(s.bs_max, u64::max);
            s.bssplit_write = split;
        }
        if !self.percentiles.is_empty() {
            plan.lat_percentiles = std::mem::take(&mut self.percentiles);
        }
        // blockalign: random offsets on multiples of it; the smallest block
        // size is the default, and fio's random map works in it
        match self.blockalign.take() {
            Some((ba, _)) if ba == plan.shape.bs || !plan.shape.rw.random() => {}
            Some((ba, at)) if plan.region.random_map() => {
                return Err((
                    at,
                    format!(
                        "blockalign={ba}: with fio's random map fslab aligns random I/O to the smallest block size ({}) only (add norandommap, or drop blockalign)",
                        plan.shape.bs
                    ),
                ))
            }
            Some((ba, _)) => plan.shape.blockalign = Some(ba),
            None => {}
        }
        Ok(())
    }
}

/// A job's mapping in progress: the io flags so far, and the options whose
/// meaning depends on others (sizes, runtime, file names) until the job's
/// last option is read.
struct State {
    a: IoArgs,
    m: Mapped,
    size: Option<(String, String)>,
    filesize: Option<(String, String)>,
    nrfiles: u64,
    time_based: bool,
    runtime: Option<String>,
    /// fio's filename=: its names (a:b:c is three) and file:line.
    filename: Option<(Vec<String>, String)>,
    directory: Option<(String, String)>,
    /// An ioengine fslab refuses: (file:line, why), the job's one error.
    refused_engine: Option<(String, String)>,
    zones: zones::ZoneOpts,
    cmdprio: cmdprio::PrioOpts,
}

pub(super) fn map_job(job: &Job, target_default: &str, fa: &FioArgs) -> Mapped {
    let mut st = State {
        a: IoArgs {
            common: CommonArgs {
                target: target_default.to_string(),
                quiet: true,
                ..Default::default()
            },
            rw: "read".into(),
            ..Default::default()
        },
        m: Mapped {
            args: IoArgs::default(),
            flag_at: Vec::new(),
            unsupported: Vec::new(),
            bad: Vec::new(),
            notes: Vec::new(),
            percentiles: Vec::new(),
            region: RegionPlan::default(),
            buffers: BufferPlan::default(),
            pacing: PacingPlan::default(),
            fio: FioJobOpts::default(),
            blockalign: None,
            cmdprio: None,
            bssplit_write: None,
        },
        size: None,
        filesize: None,
        nrfiles: 1,
        time_based: false,
        runtime: None,
        filename: None,
        directory: None,
        refused_engine: None,
        zones: Default::default(),
        cmdprio: Default::default(),
    };
    let opts = units::as_fio_reads_all(job, &mut st.m);
    'opts: for o in &opts {
        let key = o.key.replace('-', "_");
        for (map, _) in GROUPS {
            if let Some(r) = map(&mut st, &key, o) {
                if let Err(e) = r {
                    st.m.unsupported.push(format!("{}: {e}", o.at));
                }
                continue 'opts;
            }
        }
        map_option(&mut st, o);
    }
    settle::settle(&mut st, job, fa);
    for (_, finish) in GROUPS {
        finish(&mut st, job, fa);
    }
    st.a.shared_file = false;
    st.m.args = st.a;
    // each message is cut by the long values written on its own line
    // (messages start with, or are kept with, their option's file:line):
    // linear in the job, however many options and messages it has
    let long = |v: &str| v.chars().nth(crate::units::EXCERPT_CHARS).is_some();
    let mut by_at: std::collections::HashMap<&str, Vec<&str>> = std::collections::HashMap::new();
    for o in &job.opts {
        if let Some(v) = o.value.as_deref().filter(|v| long(v)) {
            by_at.entry(o.at.as_str()).or_default().push(v);
        }
    }
    let values_at = |at: &str| by_at.get(at).map(Vec::as_slice).unwrap_or_default();
    for msg in st.m.unsupported.iter_mut() {
        // "file:line: why": the file:line is before one of the first ": "
        let at = msg
            .match_indices(": ")
            .take(4)
            .map(|(i, _)| &msg[..i])
            .find(|at| by_at.contains_key(at))
            .unwrap_or_default()
            .to_string();
        *msg = bounded(std::mem::take(msg), values_at(&at), &job.name);
    }
    for (at, why) in st.m.bad.iter_mut() {
        *why = bounded(std::mem::take(why), values_at(at), &job.name);
    }
    st.m
}

/// `msg` with each of `values` it quotes (long values of the option it is
/// about) and the job's `name` cut to a short excerpt (`units::excerpt`):
/// the mapping's messages quote values as written, and a message quotes at
/// most a short piece of its input.
pub(super) fn bounded(mut msg: String, values: &[&str], name: &str) -> String {
    for v in values {
        if msg.contains(v) {
            msg = msg.replace(v, &crate::units::excerpt(v));
        }
    }
    if name.chars().nth(crate::units::EXCERPT_CHARS).is_some() && msg.contains(name) {
        msg = msg.replace(name, &crate::units::excerpt(name));
    }
    msg
}

/// One option of a job: the table of fio options fslab maps, accepts or
/// rejects.
fn map_option(st: &mut State, o: &Opt) {
    let State {
        a,
        m,
        size,
        filesize,
        nrfiles,
        time_based,
        runtime,
        filename,
        directory,
        ..
    } = st;
    let key = o.key.replace('-', "_");
    let at = o.at.clone();
    let mut set = |flag: &'static str| m.flag_at.push((flag, at.clone(), key.clone()));
    let mut bad = None::<String>;
    let r: std::result::Result<(), String> = (|| {
        match key.as_str() {
            k if STRUCTURAL.contains(&k) => {}
            "rw" | "readwrite" => {
                let written = val(o)?;
                // fio's offset modifier: rw=read:8k adds 8k after each I/O
                // (holes; negative: backwards); on random I/O it is a count
                // of I/Os per new random offset (fio's ddir_seq_nr)
                let (v, modifier) = match written.split_once(':') {
                    Some((k, md)) => (k.trim(), Some(md.trim())),
                    None => (written, None),
                };
                if let (Some(md), true) = (modifier, v.starts_with("rand")) {
                    match md.parse::<u64>() {
                        Ok(n) => m.region.rand_seq = (n != 1).then_some(n),
                        Err(_) => bad = Some(format!(
                            "rw: '{md}' after '{v}:' is not a whole number (I/Os per random offset, as in rw=randread:8)"
                        )),
                    }
                } else if let Some(md) = modifier {
                    let (neg, mag) = match md.strip_prefix('-') {
                        Some(x) => (true, x),
                        None => (false, md),
                    };
                    match crate::units::parse_size(mag).ok().and_then(|n| i64::try_from(n).ok()) {
                        Some(n) => m.region.seq_add = if neg { -n } else { n },
                        None => {
                            bad = Some(format!(
                                "rw: '{md}' after '{v}:' is not a size (an offset modifier, as in rw=read:8k)"
                            ));
                            return Ok(());
                        }
                    }
                }
                a.rw = match v {
                    "read" | "write" | "randread" | "randwrite" | "randrw" | "trim" | "randtrim" | "trimwrite"
                    | "randtrimwrite" => v.to_string(),
                    "rw" | "readwrite" => "rw".into(),
                    other => {
                        return Err(format!(
                        "rw={other} is not supported (read, write, randread, randwrite, rw, randrw, trim, randtrim, \
                             trimwrite, randtrimwrite)"
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
                // fio's READ,WRITE[,TRIM]: one part is every direction's
                let v = val(o)?;
                let parts: Vec<&str> = v.split(',').map(str::trim).collect();
                let (r, w) = (
                    parts[0],
                    parts.get(1).copied().filter(|w| !w.is_empty() && *w != parts[0]),
                );
                if parts.len() > 2 || r.is_empty() {
                    return Err(format!(
                        "bssplit={v}: a trim split, or a write split without a read one, is not supported"
                    ));
                }
                a.bssplit = Some(r.to_string());
                m.bssplit_write = w.map(|w| (w.to_string(), at.clone()));
                set("--bssplit");
            }
            "size" => {
                *size = Some((val(o)?.to_string(), o.at.clone()));
            }
            "filesize" => *filesize = Some((val(o)?.to_string(), o.at.clone())),
            "blockalign" | "ba" => {
                let v = val(o)?;
                if v.contains(',') {
                    return Err(format!("{key}={v}: per-direction alignments are not supported"));
                }
                match crate::units::parse_size(v) {
                    Ok(0) => bad = Some(format!("{key}: must be more than 0")),
                    Ok(ba) => m.blockalign = Some((ba, at.clone())),
                    Err(e) => bad = Some(format!("{key}: {e}")),
                }
            }
            "nrfiles" | "nr_files" => match val(o)?.parse() {
                Ok(n) => {
                    *nrfiles = n;
                    a.nrfiles = nrfiles.to_string();
                    set("--nrfiles");
                }
                Err(_) => bad = Some(format!("nrfiles: '{}' is not a whole number", val(o)?)),
            },
            "filename" => match files::names(val(o)?) {
                n if n.is_empty() => bad = Some(format!("filename: '{}' names no file", val(o)?)),
                n => *filename = Some((n, o.at.clone())),
            },
            // a list (a:b) is settled with the job's files (`files::directory`)
            "directory" => *directory = Some((val(o)?.to_string(), o.at.clone())),
            "numjobs" => {
                a.jobs = val(o)?.to_string();
                set("--jobs");
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
                    *runtime = Some(t);
                    set("--runtime");
                }
                Err(e) => bad = Some(format!("{key}: {e}")),
            },
            "time_based" => *time_based = on(o),
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
