//! fio's zone options: zonemode, zonesize, zonerange, zoneskip (see
//! `plan/io/region.rs` `Zones` for what strided zones do). fio 3.33's
//! zonemode defaults to none, and none with a zonesize is an error (init.c
//! `fixup_options`: "--zonemode=none and --zonesize are not compatible"),
//! so a job file's zonesize always comes with zonemode=strided. zbd (zoned
//! block devices, write pointers) is refused.

use super::{val, State};
use crate::cli::FioArgs;
use crate::plan::fiojob::{Job, Opt};
use crate::plan::io::region::Zones;

/// The zone options as written, settled in `finish`: (value, file:line).
#[derive(Debug, Default)]
pub(super) struct ZoneOpts {
    strided: Option<String>,
    size: Option<(u64, String, String)>,
    range: u64,
    skip: u64,
}

/// One option of this group; None when `key` is not one of them.
pub(super) fn map(st: &mut State, key: &str, o: &Opt) -> Option<Result<(), String>> {
    if !matches!(key, "zonemode" | "zonesize" | "zonerange" | "zoneskip") {
        return None;
    }
    let v = match val(o) {
        Ok(v) => v.trim(),
        Err(e) => return Some(Err(e)),
    };
    let z = &mut st.zones;
    let size = || crate::units::parse_size(v).map_err(|e| format!("{key}: {e}"));
    let r = match key {
        "zonemode" => {
            match v {
                "none" => {
                    z.strided = None;
                    Ok(())
                }
                "strided" => {
                    z.strided = Some(o.at.clone());
                    Ok(())
                }
                "zbd" => return Some(Err(
                    "zonemode=zbd: zoned block devices (write pointers, zone resets) are not supported (none, strided)"
                        .into(),
                )),
                _ => Err(format!("zonemode: '{v}' is not none, strided or zbd")),
            }
        }
        "zonesize" => size().map(|n| z.size = (n > 0).then(|| (n, o.at.clone(), v.to_string()))),
        "zonerange" => size().map(|n| z.range = n),
        // a count of zones (`2z`) is zbd's
        _ if v.ends_with(['z', 'Z']) => return Some(Err(format!("zoneskip={v}: a skip in zones is zonemode=zbd's"))),
        _ => size().map(|n| z.skip = n),
    };
    if let Err(why) = r {
        st.m.bad.push((o.at.clone(), why));
    }
    Some(Ok(()))
}

/// After the job's last option: fio's checks of the zone options, and the
/// zones of a strided job with one open file (fio turns strided off for
/// more: "strided zone mode only really works with 1 file").
pub(super) fn finish(st: &mut State, job: &Job, _fa: &FioArgs) {
    let z = std::mem::take(&mut st.zones);
    match (&z.strided, &z.size) {
        (None, Some((_, at, v))) => st.m.bad.push((
            at.clone(),
            format!("zonesize={v}: needs zonemode=strided (fio: zonemode=none and zonesize are not compatible)"),
        )),
        (Some(at), None) => st.m.bad.push((
            at.clone(),
            "zonemode=strided: needs a zonesize (the bytes to move in each zone)".into(),
        )),
        (Some(_), Some((size, ..))) => {
            let open = job
                .get("openfiles")
                .and_then(|o| o.value.as_deref()?.trim().parse::<u64>().ok())
                .filter(|&n| n > 0)
                .unwrap_or(st.nrfiles);
            if open > 1 {
                st.m.notes
                    .push("zonemode=strided: off with more than one open file, as fio turns it off".into());
                return;
            }
            st.m.region.zones = Some(Zones {
                size: *size,
                range: if z.range > 0 { z.range } else { *size },
                skip: z.skip,
            });
        }
        (None, None) => {}
    }
}
