//! fio's `ioengine` (and the metadata engines' `stat_type`): the engines
//! fslab maps onto its own (see `plan/fio/engines.rs` for the metadata
//! engines), and the ones it refuses in one line naming the engine and
//! where it was written.

use super::State;
use crate::cli::FioArgs;
use crate::plan::fio::engines::{refused, CpuLoad, MetaOp, StatType};
use crate::plan::fio::FioEngine;
use crate::plan::fiojob::{Job, Opt};

/// One option of this group; None when `key` is not one of them.
pub(super) fn map(st: &mut State, key: &str, o: &Opt) -> Option<Result<(), String>> {
    match key {
        "ioengine" => Some(ioengine(st, o)),
        // fio's default: each job's thread submits its own I/O, as fslab's
        "io_submit_mode" => Some(match super::val(o).map(str::trim) {
            // offload is settled with the engine, in `offload_checks`
            Ok("inline" | "offload") => Ok(()),
            Ok(v) => {
                st.m.bad
                    .push((o.at.clone(), format!("io_submit_mode: '{v}' is not inline or offload")));
                Ok(())
            }
            Err(e) => Err(e),
        }),
        "stat_type" => Some(match super::val(o) {
            Ok("stat") => set_stat(st, StatType::Stat),
            Ok("lstat") => set_stat(st, StatType::Lstat),
            Ok("statx") => set_stat(st, StatType::Statx),
            Ok(v) => {
                st.m.bad.push((
                    o.at.clone(),
                    format!("stat_type: '{v}' is not one of stat, lstat, statx"),
                ));
                Ok(())
            }
            Err(e) => Err(e),
        }),
        _ => None,
    }
}

fn set_stat(st: &mut State, s: StatType) -> Result<(), String> {
    // an option of the engine chosen last; kept for filestat/dirstat
    st.m.fio.engine = match st.m.fio.engine {
        FioEngine::Meta {
            op,
            bytes_per_file,
            write,
            ..
        } => FioEngine::Meta {
            op,
            stat: s,
            bytes_per_file,
            write,
        },
        _ => FioEngine::Meta {
            // resolved in `finish` when the job's engine is not a stat one
            op: MetaOp::FileStat,
            stat: s,
            bytes_per_file: u64::MAX,
            write: false,
        },
    };
    Ok(())
}

fn ioengine(st: &mut State, o: &Opt) -> Result<(), String> {
    let v = super::val(o)?;
    // a later ioengine= replaces an earlier one (a job's over its globals)
    let stat = match st.m.fio.engine {
        FioEngine::Meta { stat, .. } => stat,
        _ => StatType::Stat,
    };
    st.m.fio.engine = FioEngine::Io;
    st.refused_engine = None;
    if let Some(op) = MetaOp::from_name(v) {
        st.m.fio.engine = FioEngine::Meta {
            op,
            stat,
            bytes_per_file: 0,
            write: false,
        };
        // the engine that lays out the files fio lays out (filestat,
        // filedelete); the others' files are never written
        st.a.engine = if op.lays_out() { "sync" } else { "null" }.into();
        st.m.flag_at.push(("--engine", o.at.clone(), "ioengine".into()));
        return Ok(());
    }
    if v == "cpuio" || v == "exec" {
        // its options are read in `noio::finish`; known here, so that the
        // size and file rules (`settle`) see a job without files
        st.m.fio.engine = FioEngine::Cpu(CpuLoad::default());
    }
    if v == "net" {
        // as cpuio's, and its filename= is a host, not a file
        st.m.fio.engine = FioEngine::Net(Default::default());
    }
    if let Some(why) = refused(v) {
        st.refused_engine = Some((o.at.clone(), format!("ioengine={v}: fslab does not run it ({why})")));
        return Ok(());
    }
    st.a.engine = match v {
        "sync" | "psync" | "vsync" | "pvsync" | "pvsync2" => "sync".into(),
        "io_uring" => "uring".into(),
        "libaio" => "libaio".into(),
        "mmap" => "mmap".into(),
        "posixaio" => "posixaio".into(),
        "null" => "null".into(),
        "ftruncate" => "ftruncate".into(),
        "falloc" => "falloc".into(),
        // no I/O: no files; the job's worker is fio's engine itself (`noio`)
        "cpuio" | "exec" | "net" => "null".into(),
        other => {
            return Err(format!(
                "ioengine={other} is not supported (sync, psync, vsync, pvsync, pvsync2, io_uring, libaio, posixaio, mmap, null, ftruncate, falloc, cpuio, exec, net, \
                 filecreate, filestat, filedelete, dircreate, dirstat, dirdelete)"
            ))
        }
    };
    st.m.flag_at.push(("--engine", o.at.clone(), "ioengine".into()));
    Ok(())
}

/// fio's size in bytes of a value as written (the smallest of a range).
fn bytes(v: &str) -> Option<u64> {
    crate::units::parse_size(v)
        .ok()
        .or_else(|| crate::units::parse_size(v.split(['-', ':', ',']).next()?).ok())
}

/// io_submit_mode=offload (fio's rate-submit.c): the job hands each I/O
/// to one of `iodepth` submit threads, and each thread queues it and waits
/// for it. With an async engine that is the same concurrency as the job
/// submitting its own, which is what fslab does (with a note); with a sync
/// engine at a depth above 1 it is `iodepth` concurrent I/Os, where fslab
/// would cap the depth at 1: refused. fio refuses io_uring with offload.
fn offload_checks(st: &mut State, job: &Job) {
    let Some(o) = job
        .get("io_submit_mode")
        .filter(|o| o.value.as_deref().map(str::trim) == Some("offload"))
    else {
        return;
    };
    let depth = st.a.iodepth.trim().parse::<u64>().unwrap_or(1);
    let why = match st.a.engine.as_str() {
        "uring" => {
            Some("io_submit_mode=offload with ioengine=io_uring: fio refuses it (use a sync engine)".to_string())
        }
        "libaio" | "posixaio" => None,
        _ if depth > 1 => Some(format!(
            "io_submit_mode=offload with a synchronous engine at iodepth={depth}: fio runs {depth} submit \
             threads, fslab would cap the depth at 1 (use libaio)"
        )),
        _ => None,
    };
    match why {
        Some(why) => st.m.bad.push((o.at.clone(), why)),
        None => st.m.notes.push(
            "io_submit_mode=offload: each job submits its own I/O at the same depth (fio hands each I/O \
             to one of iodepth submit threads)"
                .into(),
        ),
    }
}

/// fio caps a sync engine's queue depth at 1 with a note (fio 3.33: "both
/// iodepth >= 1 and synchronous I/O engine are selected, queue depth will
/// be capped at 1"); fslab io refuses --iodepth on them.
fn cap_sync_depth(st: &mut State) {
    if !matches!(st.a.engine.as_str(), "uring" | "libaio" | "posixaio")
        && st.a.iodepth.trim().parse::<u64>().is_ok_and(|d| d > 1)
    {
        st.m.notes.push(format!(
            "iodepth={} with a synchronous engine: capped at 1, as fio does",
            st.a.iodepth.trim()
        ));
        st.a.iodepth = "1".into();
        st.m.flag_at.retain(|(flag, ..)| *flag != "--iodepth");
    }
}

/// fsync=N and fdatasync=N, settled: a job that does not write has no
/// sync cadence. Where fio 3.33's is not one per N writes, a note: its
/// io_uring (and posixaio) at a depth above 1 issues more syncs than
/// fsync=N asks (fsync=8 over 128 writes at depth 4: 49-52, not 15,
/// varying from run to run): a write its full queue refuses un-counts
/// itself, and the cadence check fires again on the same count. With a
/// read/write mix, a read after the Nth write is preceded by another sync
/// (fixed in fio 3.38, commit 704a8cfe). fslab issues one per N writes.
fn settle_syncs(st: &mut State) {
    if matches!(st.a.rw.as_str(), "read" | "randread" | "trim" | "randtrim") {
        // fio's should_fsync: a job that does not write never syncs, and
        // its fsync=N is no error (a [global] fsync= over read jobs)
        st.a.fsync = None;
        st.a.fdatasync = None;
    }
    let syncs = [&st.a.fsync, &st.a.fdatasync]
        .iter()
        .any(|o| o.as_deref().is_some_and(|v| v.trim() != "0"));
    if matches!(st.a.engine.as_str(), "uring" | "posixaio")
        && syncs
        && st.a.iodepth.trim().parse::<u64>().is_ok_and(|d| d > 1)
    {
        st.m.notes.push(format!(
            "fsync/fdatasync with ioengine={} at iodepth>1: fio issues extra syncs whenever its queue is \
                 full (a refused write un-counts itself); fslab issues one every N writes",
            if st.a.engine == "uring" { "io_uring" } else { "posixaio" }
        ));
    }
    if syncs && matches!(st.a.rw.as_str(), "rw" | "readwrite" | "randrw") {
        // fio 3.33, randrw fsync=8 over 1 MiB: 27 syncs for 124 writes
        st.m.notes.push(
            "fsync/fdatasync with a read/write mix: fio before 3.38 also syncs before each read that follows \
             the Nth write; fslab syncs once every N writes, as fio 3.38 (\"io_u: Ensure fsync only after write(s)\")"
                .into(),
        );
    }
}

/// fio's ftruncate engine fails every io_u that is not a write with
/// EINVAL (engines/ftruncate.c): a job that reads (rw=read, a mix,
/// do_verify's read-back) or syncs (fsync=, fdatasync=, end_fsync) would
/// end on its first such operation with err=22. fslab refuses it instead,
/// at the ioengine's line, naming what fio would fail.
fn ftruncate_checks(st: &mut State, job: &Job) {
    let at = job.get("ioengine").map_or_else(|| job.at.clone(), |o| o.at.clone());
    let why = |what: &str| {
        format!("ioengine=ftruncate with {what}: fio's ftruncate engine fails it with EINVAL (it only truncates, on writes)")
    };
    let syncs = [&st.a.fsync, &st.a.fdatasync]
        .iter()
        .any(|o| o.as_deref().is_some_and(|v| v.trim() != "0"));
    if !matches!(st.a.rw.as_str(), "write" | "randwrite") {
        let what = if st.a.rw.contains("trim") {
            "its trims"
        } else {
            "its reads"
        };
        let rw = format!("rw={} ({what})", st.a.rw);
        st.m.bad.push((at, why(&rw)));
    } else if syncs || st.a.end_fsync {
        st.m.bad.push((at, why("fsync/fdatasync/end_fsync")));
    } else if st.a.verify.is_some() && job.get("do_verify").is_none_or(|_| job.flag("do_verify")) {
        st.m.bad.push((at, why("verify (its read-back)")));
    }
}

/// fio's falloc engine makes a sync a fallocate of zero bytes (EINVAL,
/// engines/falloc.c), and verifies nothing it could read back (no data is
/// moved): such a job is refused at the ioengine's line. Its reads
/// (fallocate with KEEP_SIZE) allocate, which fio does through a file it
/// opens read-write whatever the job does; fslab opens a reading job's
/// files read-only, and refuses it rather than change a file it only reads.
fn falloc_checks(st: &mut State, job: &Job) {
    let at = job.get("ioengine").map_or_else(|| job.at.clone(), |o| o.at.clone());
    let syncs = [&st.a.fsync, &st.a.fdatasync]
        .iter()
        .any(|o| o.as_deref().is_some_and(|v| v.trim() != "0"));
    let why = if st.a.rw.contains("read") || st.a.rw == "rw" {
        format!("ioengine=falloc with rw={}: its reads allocate (fallocate KEEP_SIZE), which fslab does not do to a file it opens to read", st.a.rw)
    } else if syncs || st.a.end_fsync {
        "ioengine=falloc with fsync/fdatasync/end_fsync: fio's falloc engine fails a sync with EINVAL".into()
    } else if st.a.verify.is_some() {
        "ioengine=falloc with verify: it moves no data to verify".into()
    } else {
        return;
    };
    st.m.bad.push((at, why));
}

/// What fio does with a trim job that fslab does not do the same way.
/// fio 3.33's randtrimwrite with an offset= writes each pair's write the
/// offset past its trim (get_next_offset adds the file's offset to the
/// trim's start, which holds it already), and as that is never where the
/// last trim was, keeps rewriting the one block (offset=1m, 2 MiB: 1 trim,
/// 32 writes of one block): a note, fslab writes where the trim went.
/// fio 3.33's trimwrite never syncs (set_rw_ddir turns the sync's turn
/// into a trim or a write): a note, fslab syncs every N writes as 3.38.
/// fio paces trims (rate's third value, or its one value for all three
/// directions); fslab paces only reads and writes: refused.
fn trim_checks(st: &mut State, job: &Job) {
    if !matches!(st.a.rw.as_str(), "trim" | "randtrim" | "trimwrite" | "randtrimwrite") {
        return;
    }
    let offset = job.get("offset").and_then(|o| o.value.as_deref()).map(str::trim);
    if st.a.rw == "randtrimwrite" && offset.is_some_and(|v| crate::units::parse_size(v).ok() != Some(0)) {
        st.m.notes.push(
            "rw=randtrimwrite with offset=: fio 3.33 writes past each trimmed block by the offset, then keeps \
             rewriting that block; fslab writes each trimmed range, once"
                .into(),
        );
    }
    let syncs = [&st.a.fsync, &st.a.fdatasync]
        .iter()
        .any(|o| o.as_deref().is_some_and(|v| v.trim() != "0"));
    if syncs && st.a.rw.ends_with("trimwrite") {
        st.m.notes.push(format!(
            "fsync/fdatasync with rw={}: fio 3.33 issues no sync (the sync's turn becomes a trim or a write; \
             fixed in fio 3.38, \"io_u: Support fsync for --rw=trimwrite\"); fslab syncs every N writes, as fio 3.38",
            st.a.rw
        ));
    }
    for key in ["rate", "rate_min", "ratemin", "rate_iops", "rate_iops_min"] {
        if let Some(o) = job
            .get(key)
            .filter(|o| o.value.as_deref().is_some_and(|v| v.trim() != "0"))
        {
            let v = o.value.as_deref().unwrap_or("").trim();
            let why = format!(
                "{key}={v} with rw={}: fio paces the trims too; fslab does not pace trims",
                st.a.rw
            );
            st.m.bad.push((o.at.clone(), why));
            return;
        }
    }
}

/// What an engine fails that fio would end the job on, and where fio does
/// what its direction does not say.
fn engine_checks(st: &mut State, job: &Job) {
    match st.a.engine.as_str() {
        "ftruncate" => ftruncate_checks(st, job),
        "falloc" => falloc_checks(st, job),
        _ => {}
    }
    trim_checks(st, job);
}

/// After the job's last option: a refused engine is the job's one error;
/// a metadata engine gets what fio counts per file and its direction.
pub(super) fn finish(st: &mut State, job: &Job, fa: &FioArgs) {
    if let Some((at, why)) = st.refused_engine.take() {
        // one line: the engine's own options (hostname=, port=...) are moot
        st.m.unsupported.clear();
        st.m.bad.insert(0, (at, why));
        return;
    }
    offload_checks(st, job);
    cap_sync_depth(st);
    settle_syncs(st);
    engine_checks(st, job);
    let FioEngine::Meta { op, stat, .. } = st.m.fio.engine else {
        return;
    };
    let at = job
        .get("ioengine")
        .map(|o| o.at.clone())
        .unwrap_or_else(|| job.at.clone());
    if !matches!(job.get("ioengine").and_then(|o| o.value.as_deref()), Some(e) if MetaOp::from_name(e).is_some()) {
        // stat_type without a metadata engine: fio ignores an engine's option
        // it does not have... and so does fslab
        st.m.fio.engine = FioEngine::Io;
        return;
    }
    let bs = bytes(&st.a.bs).unwrap_or(4096).max(1);
    let write = match st.a.rw.as_str() {
        "read" | "randread" => false,
        "write" | "randwrite" => true,
        rw => {
            st.m.unsupported.push(format!(
                "{at}: ioengine={}: rw={rw} (fslab counts a metadata engine's operations as reads or as writes)",
                op.name()
            ));
            false
        }
    };
    if st.time_based {
        st.m.unsupported.push(format!(
            "{at}: ioengine={} with time_based: fslab makes one pass over the job's files",
            op.name()
        ));
    }
    if st.m.flag_at.iter().any(|(f, _, k)| *f == "--target" && k == "filename") {
        st.m.unsupported.push(format!(
            "{at}: ioengine={} on an existing filename=: fslab runs metadata engines only on files it creates in its own directory",
            op.name()
        ));
    }
    // fio: the diskless engines count `bs` per file, or the job's size
    // spread over its files; filestat and filedelete the laid-out file (0
    // here: known once laid out)
    let nrfiles = st.nrfiles.max(1);
    let bytes_per_file = if op.lays_out() {
        0
    } else {
        match fa
            .size
            .as_deref()
            .or(st.size.as_ref().map(|(v, _)| v.as_str()))
            .and_then(bytes)
        {
            Some(size) => (size / nrfiles / bs * bs).max(bs),
            None => bs,
        }
    };
    st.m.fio.engine = FioEngine::Meta {
        op,
        stat,
        bytes_per_file,
        write,
    };
    st.m.notes.push(match op {
        MetaOp::FileCreate => {
            "ioengine=filecreate: each file is one timed open(2) (fio's clat); fslab's time also holds its close(2), \
             and the files go when the run ends (fio leaves them)"
                .to_string()
        }
        MetaOp::DirCreate => {
            "ioengine=dircreate: each directory is one timed mkdir(2) (fio's clat); they go when the run ends (fio 3.34+ \
             has this engine, fio 3.33 does not)"
                .to_string()
        }
        MetaOp::DirStat | MetaOp::DirDelete => format!(
            "ioengine={}: each directory is one timed operation (fio's clat), made before the run as fio does \
             (fio 3.34+ has this engine, fio 3.33 does not)",
            op.name()
        ),
        _ => format!("ioengine={}: each file is one timed operation (fio's clat)", op.name()),
    });
    if matches!(op, MetaOp::FileStat | MetaOp::DirStat) && stat != StatType::Statx {
        st.m.notes.push(format!(
            "stat_type={}: fslab stats with statx(2) (fio calls {}(2))",
            if stat == StatType::Lstat { "lstat" } else { "stat" },
            if stat == StatType::Lstat { "lstat" } else { "stat" }
        ));
    }
}
