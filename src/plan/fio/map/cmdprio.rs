//! fio's cmdprio options of the libaio and io_uring engines
//! (cmdprio_percentage, cmdprio_class, cmdprio, cmdprio_bssplit; see
//! `plan/io/prio.rs` for what they become), with fio's checks
//! (engines/cmdprio.c `fio_cmdprio_init`).

use super::{val, State};
use crate::cli::FioArgs;
use crate::plan::fiojob::{Job, Opt};
use crate::plan::io::prio::{self, CmdPrio, PrioShare};

/// The options as written, settled in `finish` (per direction: read, write).
#[derive(Debug, Default)]
pub(super) struct PrioOpts {
    pct: [u32; 2],
    class: [u32; 2],
    level: [u32; 2],
    bssplit: Option<String>,
    /// The first cmdprio option's file:line.
    at: Option<String>,
}

/// One option of this group; None when `key` is not one of them.
pub(super) fn map(st: &mut State, key: &str, o: &Opt) -> Option<Result<(), String>> {
    let (lo, hi) = match key {
        "cmdprio_percentage" => (0, 100),
        "cmdprio_class" => (1, 3),
        "cmdprio" => (0, 7),
        "cmdprio_bssplit" => (0, 0),
        _ => return None,
    };
    let v = match val(o) {
        Ok(v) => v.trim(),
        Err(e) => return Some(Err(e)),
    };
    let p = &mut st.cmdprio;
    p.at.get_or_insert_with(|| o.at.clone());
    if key == "cmdprio_bssplit" {
        p.bssplit = Some(v.to_string());
        return Some(Ok(()));
    }
    let vals: Result<Vec<u32>, String> = prio::per_dir(v).iter().map(|x| prio::int(x, lo, hi)).collect();
    match vals {
        Ok(v) if v.len() == 2 => {
            let to = match key {
                "cmdprio_percentage" => &mut p.pct,
                "cmdprio_class" => &mut p.class,
                _ => &mut p.level,
            };
            *to = [v[0], v[1]];
        }
        Ok(_) => {
            st.m.bad
                .push((o.at.clone(), format!("{key}: '{v}' is not VALUE or READ,WRITE")))
        }
        Err(e) => st.m.bad.push((o.at.clone(), format!("{key}: {e}"))),
    }
    Some(Ok(()))
}

/// After the job's last option: the job's per-I/O priorities, or fio's
/// refusals (another engine, both forms at once, a bad split).
pub(super) fn finish(st: &mut State, _job: &Job, _fa: &FioArgs) {
    let p = std::mem::take(&mut st.cmdprio);
    let pl = &st.m.fio.placement;
    // fio's io_u->ioprio is the job's own (td->ioprio), which its logs show
    let default = match (pl.prioclass, pl.prio) {
        (None, None) => 0,
        (c, l) => prio::ioprio(c.unwrap_or(0) as u32, l.unwrap_or(0) as u32),
    };
    let bssplit = p.bssplit.as_deref().filter(|s| !s.is_empty());
    let Some(at) = p.at.clone().filter(|_| p.pct != [0, 0] || bssplit.is_some()) else {
        if default != 0 {
            st.m.cmdprio = Some(CmdPrio {
                dirs: [Vec::new(), Vec::new()],
                default,
            });
        }
        return;
    };
    if !matches!(st.a.engine.as_str(), "libaio" | "uring") {
        st.m.bad.push((
            at,
            format!(
                "cmdprio: options of the libaio and io_uring engines, not of ioengine={}",
                st.a.engine
            ),
        ));
        return;
    }
    if p.pct != [0, 0] && bssplit.is_some() {
        let why = "cmdprio_percentage and cmdprio_bssplit are mutually exclusive (as in fio)";
        st.m.bad.push((at, why.into()));
        return;
    }
    // fio: the class defaults to the highest (realtime) when not given
    let implicit = |d: usize| prio::ioprio(if p.class[d] == 0 { 1 } else { p.class[d] }, p.level[d]);
    let mut plan = CmdPrio {
        dirs: [Vec::new(), Vec::new()],
        default,
    };
    for d in 0..2 {
        plan.dirs[d] = match bssplit {
            Some(s) => match prio::bssplit(prio::per_dir(s).get(d).copied().unwrap_or(""), implicit(d)) {
                Ok(v) => v,
                Err(e) => {
                    st.m.bad.push((at.clone(), format!("cmdprio_bssplit: {e}")));
                    return;
                }
            },
            None if p.pct[d] > 0 => vec![PrioShare {
                bs: None,
                pct: p.pct[d],
                prio: implicit(d),
            }],
            None => Vec::new(),
        };
    }
    st.m.cmdprio = Some(plan);
}
