//! The control options of a fio job (see `plan/fio/control.rs` for what
//! they become): startdelay, exitall, exitall_on_error, exit_what,
//! wait_for, continue_on_error, ignore_error; flow_watermark is refused (flow
//! is a pacing option, steadystate `steady.rs`'s, latency_target `latency.rs`'s).

use super::{checked_time, on, val, State};
use crate::cli::FioArgs;
use crate::plan::fio::control::ExitWhat;
use crate::plan::fiojob::{Job, Opt};
use crate::plan::io::pacing::{ERR_READ, ERR_VERIFY, ERR_WRITE};
use std::time::Duration;

/// A fio time in seconds by default.
fn secs(v: &str) -> Result<Duration, String> {
    let t = checked_time(v.trim(), "s")?;
    crate::units::parse_duration(&t).map_err(|e| e.to_string())
}

/// The errno names fio's ignore_error takes (and numbers).
fn errno(name: &str) -> Option<i32> {
    const NAMES: &[(&str, i32)] = &[
        ("EPERM", libc::EPERM),
        ("ENOENT", libc::ENOENT),
        ("EINTR", libc::EINTR),
        ("EIO", libc::EIO),
        ("ENXIO", libc::ENXIO),
        ("E2BIG", libc::E2BIG),
        ("EBADF", libc::EBADF),
        ("EAGAIN", libc::EAGAIN),
        ("ENOMEM", libc::ENOMEM),
        ("EACCES", libc::EACCES),
        ("EFAULT", libc::EFAULT),
        ("EBUSY", libc::EBUSY),
        ("EEXIST", libc::EEXIST),
        ("ENODEV", libc::ENODEV),
        ("EINVAL", libc::EINVAL),
        ("EFBIG", libc::EFBIG),
        ("ENOSPC", libc::ENOSPC),
        ("ESPIPE", libc::ESPIPE),
        ("EROFS", libc::EROFS),
        ("ENODATA", libc::ENODATA),
        ("ETIMEDOUT", libc::ETIMEDOUT),
        ("EILSEQ", libc::EILSEQ),
        ("EOPNOTSUPP", libc::EOPNOTSUPP),
        ("EDQUOT", libc::EDQUOT),
        ("ECANCELED", libc::ECANCELED),
        ("EREMOTEIO", libc::EREMOTEIO),
        ("EBADMSG", libc::EBADMSG),
    ];
    if let Ok(n) = name.parse::<i32>() {
        return (n > 0).then_some(n);
    }
    NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|x| x.1)
}

/// One option of this group; None when `key` is not one of them.
pub(super) fn map(st: &mut State, key: &str, o: &Opt) -> Option<Result<(), String>> {
    let c = &mut st.m.fio.control;
    let mut bad = |why: String| st.m.bad.push((o.at.clone(), format!("{key}: {why}")));
    match key {
        "startdelay" => {
            let v = match val(o) {
                Ok(v) => v,
                Err(e) => return Some(Err(e)),
            };
            let range = match v.split_once('-') {
                Some((lo, hi)) => secs(lo).and_then(|lo| Ok((lo, secs(hi)?))),
                None => secs(v).map(|d| (d, d)),
            };
            match range {
                Ok((lo, hi)) if lo <= hi => c.start_delay = Some((lo, hi)),
                Ok(_) => bad(format!("'{v}': the range's low end is above its high end")),
                Err(e) => bad(e),
            }
        }
        "exitall" => c.exitall = on(o),
        "exitall_on_error" => c.exitall_on_error = on(o),
        "exit_what" => match val(o) {
            Ok("group") => c.exit_what = ExitWhat::Group,
            Ok("stonewall") => c.exit_what = ExitWhat::Stonewall,
            Ok("all") => c.exit_what = ExitWhat::All,
            Ok(v) => bad(format!("'{v}' is not group, stonewall or all")),
            Err(e) => return Some(Err(e)),
        },
        "wait_for" => match val(o) {
            Ok(v) => c.wait_for = Some((v.trim().to_string(), o.at.clone())),
            Err(e) => return Some(Err(e)),
        },
        "continue_on_error" => {
            let v = match val(o) {
                Ok(v) => v,
                Err(e) => return Some(Err(e)),
            };
            let mut mask = 0u8;
            for part in v.split(',') {
                mask |= match part.trim() {
                    "none" | "0" => 0,
                    "read" => 1 << ERR_READ,
                    "write" => 1 << ERR_WRITE,
                    "io" => (1 << ERR_READ) | (1 << ERR_WRITE),
                    "verify" => 1 << ERR_VERIFY,
                    "all" | "1" => (1 << ERR_READ) | (1 << ERR_WRITE) | (1 << ERR_VERIFY),
                    p => {
                        bad(format!("'{p}' is not none, read, write, io, verify or all"));
                        0
                    }
                };
            }
            st.m.pacing.errors_mut().continue_mask = mask;
        }
        "ignore_error" => {
            let v = match val(o) {
                Ok(v) => v,
                Err(e) => return Some(Err(e)),
            };
            let lists: Vec<&str> = v.split(',').collect();
            if lists.len() > 3 {
                bad(format!("'{v}' has more than three lists (read,write,verify)"));
                return Some(Ok(()));
            }
            for (class, l) in lists.iter().enumerate() {
                if l.trim().is_empty() {
                    continue;
                }
                let mut errs = Vec::new();
                for e in l.split(':') {
                    match errno(e.trim()) {
                        Some(n) => errs.push(n),
                        None => {
                            bad(format!("'{e}' is not an errno name (EIO, ENOSPC...) or number"));
                            return Some(Ok(()));
                        }
                    }
                }
                // fio: a list overrides continue_on_error for its class
                let pol = st.m.pacing.errors_mut();
                pol.ignore[class] = Some(errs);
                pol.continue_mask |= 1 << class;
            }
        }
        // flow, flow_id and flow_sleep are pacing's; fio 3.33 has no watermark
        "flow_watermark" => {
            return Some(Err(format!(
                "{key} is not supported (fio's old token flow; fio 3.33 weighs jobs with flow=N)"
            )))
        }
        _ => return None,
    }
    Some(Ok(()))
}

/// After the job's last option: values that depend on several options.
pub(super) fn finish(st: &mut State, _job: &Job, _fa: &FioArgs) {
    let c = &st.m.fio.control;
    if c.exitall && c.exit_what == ExitWhat::All {
        st.m.notes.push(
            "exit_what=all: once this exitall job has ended, the jobs after the next stonewall do not run; fio lists them with no I/O, fslab leaves them out"
                .into(),
        );
    }
}
