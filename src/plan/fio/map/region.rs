//! The region options of a fio job (see `plan/io/region.rs` for what they
//! become): where a job works, how much it does, how it picks offsets and
//! files, and the target-side options (create_only, fallocate, pre_read,
//! invalidate, fsync_on_close, sync, write_barrier).

use super::{on, val, State};
use crate::cli::FioArgs;
use crate::plan::fiojob::{Job, Opt};
use crate::plan::io::region::{Amount, Distribution, Fadvise, FileService, SyncMode};
use crate::units;

/// fio's `N` or `N%` (a size, or a percentage of the file).
fn amount(v: &str) -> Result<Amount, String> {
    if let Some(p) = v.trim().strip_suffix('%') {
        return match p.trim().parse::<f64>() {
            Ok(p) if (0.0..=100.0).contains(&p) => Ok(Amount::Percent(p)),
            _ => Err(format!("'{v}' is not a percentage from 0 to 100")),
        };
    }
    units::parse_size(v).map(Amount::Bytes).map_err(|e| e.to_string())
}

fn float(v: &str, what: &str) -> Result<f64, String> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .ok_or_else(|| format!("'{v}' is not a number ({what})"))
}

/// An optional `:center` in [0, 1].
fn center(v: Option<&str>) -> Result<Option<f64>, String> {
    v.map(|c| {
        float(c, "the center").and_then(|c| {
            if (0.0..=1.0).contains(&c) {
                Ok(c)
            } else {
                Err(format!("center {c} is not between 0 and 1"))
            }
        })
    })
    .transpose()
}

/// zipf:THETA[:CENTER], pareto:H[:CENTER], normal:DEV[:CENTER] (also gauss).
fn skewed(kind: &str, args: &[&str]) -> Result<Distribution, String> {
    let p = args.first().copied();
    let c = center(args.get(1).copied())?;
    Ok(match kind {
        "zipf" => {
            let theta = float(p.ok_or("zipf needs a theta (zipf:1.2)")?, "zipf's theta")?;
            if theta <= 0.0 || theta == 1.0 {
                return Err(format!("zipf theta {theta} must be above 0 and not 1"));
            }
            Distribution::Zipf { theta, center: c }
        }
        "pareto" => {
            let h = float(p.ok_or("pareto needs a power (pareto:0.2)")?, "pareto's power")?;
            if h <= 0.0 || h >= 1.0 {
                return Err(format!("pareto power {h} must be between 0 and 1"));
            }
            Distribution::Pareto { h, center: c }
        }
        _ => {
            let dev = p.map(|d| float(d, "the deviation")).transpose()?.unwrap_or(0.0);
            if !(0.0..=100.0).contains(&dev) {
                return Err(format!("normal deviation {dev} is not between 0 and 100"));
            }
            Distribution::Normal { dev, center: c }
        }
    })
}

/// fio's random_distribution value.
fn distribution(v: &str) -> Result<Distribution, String> {
    if v.contains(',') {
        return Err(String::new());
    }
    let (kind, rest) = match v.find(':') {
        Some(i) => (&v[..i], &v[i + 1..]),
        None => (v, ""),
    };
    match kind {
        "random" => Ok(Distribution::Uniform),
        "zipf" | "pareto" | "normal" | "gauss" => {
            let args: Vec<&str> = rest.split(':').filter(|s| !s.is_empty()).collect();
            skewed(kind, &args)
        }
        "zoned" | "zoned_abs" => {
            let mut access = 0u32;
            let mut zones = Vec::new();
            for z in rest.split(':').filter(|s| !s.is_empty()) {
                // zoned: a zone without its size (`20/`, `20`) takes a share
                // of what the others leave, as in fio (`zone_split_ddir`)
                let (a, s) = match z.split_once('/') {
                    Some(x) => x,
                    None if kind == "zoned" => (z, ""),
                    None => return Err(format!("zone '{z}' is not ACCESS%/SIZE")),
                };
                let a = units::parse_percent(a).map_err(|e| e.to_string())?;
                access += a;
                zones.push((a, s.trim()));
            }
            if zones.is_empty() || zones.len() > 256 {
                return Err(format!("{kind} needs 1 to 256 zones (ACCESS/SIZE:...)"));
            }
            if access != 100 {
                return Err(format!("the zones' access percentages add up to {access}, not 100"));
            }
            if kind == "zoned" {
                let mut total = 0.0;
                let mut out = Vec::new();
                let mut missing = Vec::new();
                for (a, s) in zones {
                    // fio reads a size of 0 as missing too
                    let p = match s.trim_end_matches('%') {
                        "" => 0.0,
                        s => float(s, "a zone's size percentage")?,
                    };
                    if p == 0.0 {
                        missing.push(out.len());
                    }
                    total += p;
                    out.push((a, p));
                }
                if !missing.is_empty() && total <= 100.0 {
                    // fio's integer share: (100 - the others) / the missing ones
                    let share = ((100.0 - total).floor() as u64 / missing.len() as u64) as f64;
                    for &i in &missing {
                        out[i].1 = share;
                    }
                    total += share * missing.len() as f64;
                }
                if !(0.0..=100.0 + 1e-9).contains(&total) || out.iter().any(|z| z.1 < 0.0) {
                    return Err(format!("the zones' sizes add up to {total}%, more than 100%"));
                }
                Ok(Distribution::Zoned(out))
            } else {
                let mut out = Vec::new();
                for (a, s) in zones {
                    out.push((a, units::parse_size(s).map_err(|e| e.to_string())?));
                }
                Ok(Distribution::ZonedAbs(out))
            }
        }
        _ => Err(format!(
            "'{v}' is not a distribution (random, zipf:T, pareto:H, normal:D, zoned:..., zoned_abs:...)"
        )),
    }
}

/// fio's file_service_type: KIND[:N] (N = I/Os per switch, or the skew).
fn file_service(v: &str) -> Result<(FileService, u64), String> {
    let (kind, n) = match v.split_once(':') {
        Some((k, n)) => (k, Some(n)),
        None => (v, None),
    };
    let batch = |n: Option<&str>| -> Result<u64, String> {
        n.map(|n| units::parse_count(n).map_err(|e| e.to_string()))
            .transpose()
            .map(|b| b.unwrap_or(0))
    };
    Ok(match kind {
        "roundrobin" => (FileService::RoundRobin, batch(n)?),
        "sequential" => (FileService::Sequential, batch(n)?),
        "random" => (FileService::Random, batch(n)?),
        "zipf" | "pareto" | "normal" | "gauss" => {
            let args: Vec<&str> = n.into_iter().collect();
            let d = match (kind, args.is_empty()) {
                // fio's defaults when no value is given
                ("zipf", true) => Distribution::Zipf {
                    theta: 1.1,
                    center: None,
                },
                ("pareto", true) => Distribution::Pareto { h: 0.2, center: None },
                _ => skewed(kind, &args)?,
            };
            (FileService::Skewed(d), 0)
        }
        _ => {
            return Err(format!(
                "'{v}' is not a file service type (roundrobin, sequential, random, zipf, pareto, normal, gauss)"
            ))
        }
    })
}

/// One option of this group; None when `key` is not one of them.
pub(super) fn map(st: &mut State, key: &str, o: &Opt) -> Option<Result<(), String>> {
    let r = &mut st.m.region;
    let mut bad = None::<String>;
    let v = || val(o);
    match key {
        "offset" | "offset_increment" => match v().map(amount) {
            Ok(Ok(a)) if key == "offset" => r.offset = Some(a),
            Ok(Ok(a)) => r.offset_increment = Some(a),
            Ok(Err(e)) => bad = Some(e),
            Err(e) => bad = Some(e),
        },
        // a size is map.rs's (the last size= wins, as in fio)
        "size" if !o.value.as_deref().is_some_and(|v| v.trim().ends_with('%')) => {
            r.size_percent = None;
            return None;
        }
        // a percentage of the file or device
        "size" if o.value.as_deref().is_some_and(|v| v.trim().ends_with('%')) => match v().map(amount) {
            Ok(Ok(Amount::Percent(p))) if p > 0.0 => r.size_percent = Some(p),
            Ok(Ok(_)) => bad = Some("a size of 0% does no I/O".into()),
            Ok(Err(e)) | Err(e) => bad = Some(e),
        },
        "io_size" | "io_limit" => match v().map(units::parse_size) {
            Ok(Ok(0)) => r.io_size = None,
            Ok(Ok(s)) => r.io_size = Some(s),
            Ok(Err(e)) => bad = Some(e.to_string()),
            Err(e) => bad = Some(e),
        },
        "number_ios" => match v().map(units::parse_size) {
            Ok(Ok(0)) => r.number_ios = None,
            Ok(Ok(n)) => r.number_ios = Some(n),
            Ok(Err(_)) => bad = Some(format!("'{}' is not a whole number", o.value.as_deref().unwrap_or(""))),
            Err(e) => bad = Some(e),
        },
        "loops" => match v().map(|s| s.trim().parse::<u64>()) {
            Ok(Ok(n)) => r.loops = Some(n),
            Ok(Err(_)) => bad = Some(format!("'{}' is not a whole number", o.value.as_deref().unwrap_or(""))),
            Err(e) => bad = Some(e),
        },
        "random_distribution" => match v().map(distribution) {
            Ok(Ok(d)) => r.distribution = d,
            Ok(Err(e)) if e.is_empty() => {
                return Some(Err(format!(
                    "random_distribution={}: different distributions per direction are not supported",
                    o.value.as_deref().unwrap_or("")
                )))
            }
            Ok(Err(e)) | Err(e) => bad = Some(e),
        },
        "random_generator" => match v() {
            Ok("tausworthe" | "lfsr" | "tausworthe64") => st.m.notes.push(format!(
                "random_generator={}: fslab draws its random numbers with its own generator; the offsets are distributed as fio's, in another order",
                o.value.as_deref().unwrap_or("")
            )),
            Ok(x) => bad = Some(format!("'{x}' is not a generator (tausworthe, lfsr, tausworthe64)")),
            Err(e) => bad = Some(e),
        },
        "norandommap" => r.norandommap = on(o),
        // only rw=randread:N's I/Os between random ones differ (fio's default N is 1)
        "rw_sequencer" => match o.value.as_deref().map(str::trim) {
            Some("sequential") => r.seq_identical = false,
            Some("identical") => r.seq_identical = true,
            x => bad = Some(format!("'{}' is not sequential or identical", x.unwrap_or(""))),
        },
        "file_service_type" => match v().map(file_service) {
            Ok(Ok((s, n))) => {
                r.file_service = s;
                r.file_batch = n;
            }
            Ok(Err(e)) | Err(e) => bad = Some(e),
        },
        "openfiles" => match v().map(|s| s.trim().parse::<u64>()) {
            Ok(Ok(_)) => st
                .m
                .notes
                .push("openfiles: fslab keeps every file of a job open for the whole run".into()),
            Ok(Err(_)) => bad = Some(format!("'{}' is not a whole number", o.value.as_deref().unwrap_or(""))),
            Err(e) => bad = Some(e),
        },
        "filename_format" => match v() {
            // only the sharing matters: fslab names the files in its own work directory
            Ok(f) => {
                r.shared_files = !f.contains("$jobnum");
                st.m.notes.push(format!(
                    "filename_format={f}: fslab names the files in its own work directory (the clones {} them, as fio's names say)",
                    if r.shared_files { "share" } else { "do not share" }
                ));
            }
            Err(e) => bad = Some(e),
        },
        "unique_filename" => {}
        "fill_device" | "fill_fs" => r.fill = on(o),
        "create_only" => r.create_only = on(o),
        "pre_read" => r.pre_read = on(o),
        "invalidate" => r.invalidate = on(o),
        // fio 3.33's values: 0, 1 (the job's pattern), sequential, random
        "fadvise_hint" => match o.value.as_deref().map(str::trim).unwrap_or("1") {
            "0" => r.fadvise = Fadvise::None,
            "1" => r.fadvise = Fadvise::Pattern,
            "sequential" => r.fadvise = Fadvise::Sequential,
            "random" => r.fadvise = Fadvise::Random,
            x => bad = Some(format!("'{x}' is not one of 0, 1, sequential, random")),
        },
        "fsync_on_close" => {
            r.fsync_on_close = on(o);
            if r.fsync_on_close {
                st.m.notes.push(
                    "fsync_on_close: fslab fsyncs each file as the job closes it, after its timed phase (outside its figures)".into(),
                );
            }
        }
        "sync" => match o.value.as_deref().unwrap_or("1") {
            "0" | "none" | "false" => r.sync = SyncMode::None,
            "1" | "sync" | "true" => r.sync = SyncMode::Sync,
            "dsync" => r.sync = SyncMode::Dsync,
            x => bad = Some(format!("'{x}' is not one of none, sync, dsync, 0, 1")),
        },
        "fallocate" => match v() {
            Ok("none" | "native" | "posix" | "keep" | "truncate" | "0" | "1") => {}
            Ok(x) => bad = Some(format!("'{x}' is not one of none, native, posix, keep, truncate")),
            Err(e) => bad = Some(e),
        },
        "write_barrier" => match v().map(|s| s.trim().parse::<u64>()) {
            Ok(Ok(0)) => {}
            Ok(Ok(_)) => st.m.notes.push(
                "write_barrier: fio marks barrier writes only for engines fslab does not have (sg); fslab's writes carry no barrier"
                    .into(),
            ),
            Ok(Err(_)) => bad = Some(format!("'{}' is not a whole number", o.value.as_deref().unwrap_or(""))),
            Err(e) => bad = Some(e),
        },
        _ => return None,
    }
    if let Some(b) = bad {
        st.m.bad.push((o.at.clone(), format!("{key}: {b}")));
    }
    Some(Ok(()))
}

/// After the job's last option: values that depend on several options.
pub(super) fn finish(st: &mut State, job: &Job, _fa: &FioArgs) {
    let given = |k: &str| job.opts.iter().any(|o| o.key.replace('-', "_") == k);
    let r = &mut st.m.region;
    r.fio = true;
    // fio's default invalidate=1; pre_read clears it
    if !given("invalidate") {
        r.invalidate = true;
    }
    // fio's default fadvise_hint=1
    if !given("fadvise_hint") {
        r.fadvise = Fadvise::Pattern;
    }
    if r.pre_read {
        r.invalidate = false;
    }
    if (given("fallocate") || given("create_only")) && r.fresh.is_none() {
        let n = "fallocate: fslab writes its files fully before the run, whatever fio's fallocate says".to_string();
        if given("fallocate") && !st.m.notes.contains(&n) {
            st.m.notes.push(n);
        }
    }
    if r.size_percent.is_some() && st.filesize.is_some() {
        r.size_percent = None;
    }
    existing_formatted_files(st, job);
    fill(st, job);
}

/// fio's fill_device (filesetup.c, backend.c): fio makes the job's size
/// unlimited and stops it at ENOSPC. fslab needs a bound, and takes the
/// free space of the filesystem the job writes on when planned (the job
/// cannot pass it; ENOSPC still ends it, `workload::io`), rounded up to a
/// block. Its new file is made empty: fio neither truncates nor
/// fallocates it. An existing file would be written past its end until
/// the filesystem is full: refused, as fslab never extends a file it did
/// not create; a device is filled to its end (with the device consent).
fn fill(st: &mut State, job: &Job) {
    if !st.m.region.fill {
        return;
    }
    let o = job.get("fill_device").or_else(|| job.get("fill_fs"));
    let at = o.map_or_else(|| job.at.clone(), |o| o.at.clone());
    if matches!(st.a.rw.as_str(), "read" | "randread") {
        st.m.bad.push((
            at,
            "fill_device=1: the job does not write, so it cannot fill anything".into(),
        ));
        return;
    }
    let target = std::path::Path::new(&st.a.common.target);
    match std::fs::metadata(target) {
        Ok(m) if m.is_dir() => {
            st.m.region.fresh = Some(crate::plan::io::region::FreshFile::Empty);
            if st.a.size.is_some() {
                return;
            }
            let bs = units::parse_size(&st.a.bs).unwrap_or(4096).max(1);
            let Ok(fs) = rustix::fs::statvfs(target) else {
                st.m.bad.push((at, format!("fill_device=1: cannot read the free space of '{}'", target.display())));
                return;
            };
            let free = fs.f_bavail.saturating_mul(fs.f_frsize);
            st.a.size = Some(free.div_ceil(bs).max(1).saturating_mul(bs).to_string());
            st.m.notes.push(format!(
                "fill_device=1: fslab writes until the filesystem is full (ENOSPC ends the job, not as an error), at most the {} free when planned",
                units::Bytes(free)
            ));
        }
        Ok(m) if m.is_file() => st.m.bad.push((
            at,
            format!(
                "fill_device=1: '{}' exists, and fio would write past its end until the filesystem is full; fslab never extends a file it did not create (give a new filename=)",
                target.display()
            ),
        )),
        _ => {}
    }
}

/// A note when `filename_format` names files already in the job's
/// directory (OpenZFS's suite reads the files its mkfiles job left): fio
/// would read or write those, fslab works in files of its own and leaves
/// them as they are. Said, not silent; the first few names are checked.
fn existing_formatted_files(st: &mut State, job: &Job) {
    let Some(f) = job.get("filename_format").and_then(|o| o.value.as_deref()) else {
        return;
    };
    let dir = std::path::Path::new(&st.a.common.target);
    let clones: u64 = st.a.jobs.trim().parse().unwrap_or(1);
    let mut found = Vec::new();
    'names: for c in 0..clones.clamp(1, 8) {
        for n in 0..st.nrfiles.clamp(1, 8) {
            let name = f
                .replace("$jobname", &job.name)
                .replace("$jobnum", &c.to_string())
                .replace("$filenum", &n.to_string());
            if name.contains('/') || found.contains(&name) {
                continue;
            }
            if std::fs::symlink_metadata(dir.join(&name)).is_ok() {
                found.push(name);
                if found.len() == 3 {
                    break 'names;
                }
            }
        }
    }
    if let Some(first) = found.first() {
        st.m.notes.push(format!(
            "filename_format={}: {} is already in {}: fio would use it (and its siblings); fslab lays out files of its own and leaves those as they are",
            crate::units::excerpt(f),
            crate::units::excerpt(first),
            crate::units::excerpt(&dir.display().to_string())
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's examples/rand-zones.fio ends in a zone without its size: it
    /// takes what the others leave (fio 3.33's zone_split_ddir).
    #[test]
    fn a_zone_without_its_size_takes_the_rest_as_in_fio() {
        let zones = |v: &str| match distribution(v).unwrap() {
            Distribution::Zoned(z) => z,
            other => panic!("{other:?}"),
        };
        assert_eq!(zones("zoned:50/5:30/15:20/"), vec![(50, 5.0), (30, 15.0), (20, 80.0)]);
        assert_eq!(zones("zoned:50/5:30/15:20"), vec![(50, 5.0), (30, 15.0), (20, 80.0)]);
        assert_eq!(zones("zoned:40/:40/0:20/10"), vec![(40, 45.0), (40, 45.0), (20, 10.0)]);
        assert!(distribution("zoned_abs:50/1m:50").is_err());
        assert!(distribution("zoned:60/10:30/20").is_err(), "access adds up to 90");
    }
}
