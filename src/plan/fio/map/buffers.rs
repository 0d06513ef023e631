//! The buffers options of a fio job (see `plan/io/buffers.rs` for what they
//! become): write contents (scramble_buffers, refill_buffers, zero_buffers,
//! buffer_pattern, buffer_compress_percentage, buffer_compress_chunk,
//! dedupe_percentage) and verification (verify, verify_pattern, do_verify,
//! verify_backlog, verify_backlog_batch, verify_fatal), with fio's rules for
//! how they change each other (options.c callbacks, init.c fixup_options and
//! init_flags).

use super::{on, val, State};
use crate::cli::FioArgs;
use crate::plan::fiojob::{Job, Opt};
use crate::plan::io::buffers::{parse_pattern, VerifyKind};

/// fio's verify= methods fslab does not compute.
const OTHER_VERIFY: &[&str] = &[
    "crc32", "crc16", "crc7", "sha1", "sha224", "sha384", "sha512", "sha3-224", "sha3-256", "sha3-384", "sha3-512",
    "xxhash", "null",
];

fn reads(rw: &str) -> bool {
    rw.contains("read") || rw == "rw" || rw == "randrw"
}

/// One option of this group; None when `key` is not one of them.
pub(super) fn map(st: &mut State, key: &str, o: &Opt) -> Option<Result<(), String>> {
    let bad = |st: &mut State, why: String| st.m.bad.push((o.at.clone(), format!("{key}: {why}")));
    let pct = |st: &mut State| -> Option<u32> {
        match val(o).and_then(|v| crate::units::parse_percent(v).map_err(|e| e.to_string())) {
            Ok(p) => Some(p),
            Err(e) => {
                st.m.bad.push((o.at.clone(), format!("{key}: {e}")));
                None
            }
        }
    };
    let b = &mut st.m.buffers;
    match key {
        "scramble_buffers" => b.scramble = on(o),
        "refill_buffers" => {
            b.refill = on(o);
            b.given.refill = true;
        }
        "zero_buffers" => {
            b.zero = on(o);
            b.given.zero = true;
        }
        "buffer_pattern" => match val(o).and_then(|v| parse_pattern(v, false)) {
            Ok((p, _)) => {
                // options.c str_buffer_pattern_cb: a job that reads, or
                // compresses, refills (reads would overwrite the pattern)
                let b = &mut st.m.buffers;
                b.pattern = p;
                b.refill = b.compress_pct > 0 || reads(&st.a.rw);
                b.scramble = false;
                b.zero = false;
            }
            Err(e) => bad(st, e),
        },
        "buffer_compress_percentage" => {
            if let Some(p) = pct(st) {
                let b = &mut st.m.buffers;
                b.compress_pct = p;
                b.given.compress = true;
            }
        }
        "buffer_compress_chunk" => match val(o).and_then(|v| crate::units::parse_size(v).map_err(|e| e.to_string())) {
            Ok(c) => st.m.buffers.compress_chunk = c,
            Err(e) => bad(st, e),
        },
        "dedupe_percentage" => {
            if let Some(p) = pct(st) {
                let b = &mut st.m.buffers;
                b.dedupe_pct = p;
                b.given.compress = true;
                b.refill = true;
            }
        }
        "dedupe_mode" => match val(o).map(str::trim) {
            Ok("repeat") => b.given.working_set = false,
            Ok("working_set") => b.given.working_set = true,
            Ok(v) => bad(st, format!("'{v}' is not repeat or working_set")),
            Err(e) => return Some(Err(e)),
        },
        "dedupe_working_set_percentage" => {
            if let Some(p) = pct(st) {
                st.m.buffers.given.ws_pct = Some(p);
            }
        }
        "dedupe_global" => b.given.dedupe_global = on(o),
        "verify" => match val(o) {
            Ok("0" | "none") => {
                st.a.verify = None;
            }
            Ok(v) => match VerifyKind::parse(v) {
                Some(k) => {
                    st.m.buffers.verify.kind = k;
                    st.a.verify = Some("crc32c".into());
                    st.m.flag_at.push(("--verify", o.at.clone(), key.to_string()));
                }
                None if OTHER_VERIFY.contains(&v) => {
                    return Some(Err(format!(
                        "verify={v} is not supported (md5, crc64, sha256, crc32c, meta, pattern)"
                    )))
                }
                None => bad(st, format!("'{v}' is not one of fio's verify methods")),
            },
            Err(e) => return Some(Err(e)),
        },
        "verify_pattern" => match val(o).and_then(|v| parse_pattern(v, true)) {
            Ok((p, f)) => {
                let v = &mut st.m.buffers.verify;
                v.pattern = p;
                v.pattern_offsets = f;
                // options.c str_verify_pattern_cb: no verify yet means verify=pattern
                if st.a.verify.is_none() {
                    v.kind = VerifyKind::Pattern;
                    st.a.verify = Some("crc32c".into());
                    st.m.flag_at.push(("--verify", o.at.clone(), key.to_string()));
                }
            }
            Err(e) => bad(st, e),
        },
        "do_verify" => b.given.do_verify = Some(on(o)),
        // the job's blocks are read once and checked, nothing is written
        "verify_only" => {
            st.a.verify_only = on(o);
            st.m.flag_at.push(("--verify-only", o.at.clone(), key.to_string()));
        }
        "verify_fatal" => b.verify.fatal = on(o),
        "verify_backlog" | "verify_backlog_batch" => {
            match val(o).and_then(|v| crate::units::parse_count(v).map_err(|e| e.to_string())) {
                Ok(n) if key == "verify_backlog" => st.m.buffers.verify.backlog = n,
                Ok(n) => st.m.buffers.verify.batch = n,
                Err(e) => bad(st, e),
            }
        }
        "verify_interval" => {
            // checked against the block size once it is known
            let v = match val(o) {
                Ok(v) => v.to_string(),
                Err(e) => return Some(Err(e)),
            };
            match (crate::units::parse_size(&v), crate::units::parse_size(&st.a.bs)) {
                (Ok(i), Ok(bs)) if i < bs && i > 0 && bs % i == 0 => st.m.notes.push(format!(
                    "verify_interval={v}: fio stamps a verify header every {v} of a block; fslab stamps and checks each whole block (the same bytes are checked, a mismatch is located to the block)"
                )),
                (Ok(i), Ok(bs)) if i == bs => {}
                _ => {
                    return Some(Err(format!(
                        "verify_interval={v}: fslab checks whole blocks (verify_interval = bs, or a divisor of it, only)"
                    )))
                }
            }
        }
        "verify_async" | "verify_async_cpus" => {
            st.m.notes
                .push(format!("{key}: fslab checks each block in the job's own thread"))
        }
        "verify_dump" => {
            st.m.notes
                .push("verify_dump: fslab reports a mismatch in words, it writes no dump files".into())
        }
        "verify_state_save" | "verify_state_load" => {
            if on(o) {
                st.m.notes.push(format!(
                    "{key}: fslab keeps no verify state between runs (--verify-only reads a file back)"
                ));
            }
        }
        "verify_offset" | "experimental_verify" | "trim_verify_zero" => {
            return Some(Err(format!("{key} is not supported")))
        }
        _ => return None,
    }
    Some(Ok(()))
}

/// After the job's last option: fio's fixup_options and init_flags.
pub(super) fn finish(st: &mut State, job: &Job, fa: &FioArgs) {
    let verifying = st.a.verify.is_some();
    let b = &mut st.m.buffers;
    if b.compress_pct == 100 {
        // fully compressible: zeroed once
        b.zero = true;
        b.compress_pct = 0;
    } else if b.compress_pct > 0 && !b.given.refill {
        b.refill = true;
    }
    // init_flags: scramble unless told to zero; io_u.c: never with
    // compression or dedupe, nor with verify (its header makes blocks unique)
    b.scramble = b.scramble && !(b.zero && b.given.zero) && !b.given.compress;
    // fio's do_verify defaults to 1
    b.verify.after_write = b.given.do_verify.unwrap_or(true);
    if !verifying {
        b.verify = Default::default();
    } else {
        let kind = b.verify.kind;
        if kind == VerifyKind::Pattern && b.verify.pattern.is_empty() {
            st.m.bad
                .push((job.at.clone(), "verify=pattern needs a verify_pattern".into()));
        }
        if let Ok(bs) = crate::units::parse_size(&st.a.bs) {
            if bs < kind.header_len() as u64 {
                st.m.bad.push((
                    job.at.clone(),
                    format!(
                        "verify={}: blocks of {bs} bytes cannot hold its {}-byte header",
                        kind.name(),
                        kind.header_len()
                    ),
                ));
            }
        }
        if b.verify.after_write && st.a.runtime.is_some() && !st.a.size_based {
            if b.verify.backlog == 0 {
                st.m.notes.push(
                    "verify: the job is time_based, so its writes use all of the runtime and the read-back never starts (as in fio); verify_backlog checks along the way".into(),
                );
            }
        } else if !b.verify.after_write && b.verify.backlog == 0 {
            st.m.notes
                .push("verify: do_verify=0, so fslab checks only the blocks the job reads".into());
        }
    }
    working_set(st, job, fa);
    st.m.buffers.given = Default::default();
}

/// dedupe_mode=working_set with fio's checks (init.c fixup_options): the
/// set is a share of the job's size=, so it needs one, one file per job,
/// and room for the unique pages the set's own take.
fn working_set(st: &mut State, job: &Job, fa: &FioArgs) {
    let b = &st.m.buffers;
    if !b.given.working_set || b.dedupe_pct == 0 {
        return;
    }
    let pct = b.given.ws_pct.unwrap_or(5);
    let at = job.get("dedupe_mode").map_or_else(|| job.at.clone(), |o| o.at.clone());
    let why = if job.get("size").is_none() && fa.size.is_none() {
        Some("needs the job's size= (fio: \"pregenerated dedupe working set requires size to be set\")".to_string())
    } else if st.nrfiles != 1 {
        Some(format!("one file per job only, as in fio (nrfiles={})", st.nrfiles))
    } else if pct + b.dedupe_pct > 100 {
        Some(format!(
            "dedupe_working_set_percentage={pct} and dedupe_percentage={} add up to more than 100 (fio: the set's pages are unique)",
            b.dedupe_pct
        ))
    } else {
        None
    };
    match why {
        Some(w) => st.m.bad.push((at, format!("dedupe_mode=working_set: {w}"))),
        None => {
            let global = b.given.dedupe_global;
            st.m.buffers.working_set = Some(crate::plan::io::buffers::WorkingSet { pct, global });
        }
    }
}
