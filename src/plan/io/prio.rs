//! fio's per-I/O priorities (engines/cmdprio.c, for the libaio and
//! io_uring engines): cmdprio_percentage with cmdprio_class and cmdprio,
//! or cmdprio_bssplit (simple: `bs/perc:...` at cmdprio_class/cmdprio;
//! advanced: `bs/perc/class/level:...`), each per direction (`read,write`).
//! The chosen priority goes into each I/O (io_uring's sqe ioprio, libaio's
//! aio_reqprio with IOCB_FLAG_IOPRIO); the others keep the job's own
//! (prioclass/prio), which is also what fio logs for them.

use serde::{Deserialize, Serialize};

/// A share of one direction's I/Os (of one block size, or of all) and the
/// ioprio value (class << 13 | level) they carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PrioShare {
    /// None: every block size (cmdprio_percentage).
    pub bs: Option<u64>,
    pub pct: u32,
    pub prio: u16,
}

/// A job's per-I/O priorities (without shares: the job's own priority,
/// carried by each I/O and logged as fio logs it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CmdPrio {
    /// Read's shares, then write's.
    pub dirs: [Vec<PrioShare>; 2],
    /// The job's own ioprio value (prioclass/prio; 0: none): the others'.
    pub default: u16,
}

/// fio's ioprio_value.
pub fn ioprio(class: u32, level: u32) -> u16 {
    ((class << 13) | level) as u16
}

/// `v` as one value per direction (`A` for both, `A,B` read and write).
pub fn per_dir(v: &str) -> Vec<&str> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    match parts.as_slice() {
        [a] => vec![a, a],
        [a, b] => vec![a, b],
        _ => parts,
    }
}

/// A whole number in `lo..=hi`.
pub fn int(v: &str, lo: u32, hi: u32) -> Result<u32, String> {
    match v.trim().parse::<u32>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(format!("'{v}' is not a whole number from {lo} to {hi}")),
    }
}

/// One direction's cmdprio_bssplit (fio's split_parse_prio_ddir): entries
/// `bs/perc` (at `implicit`) or `bs/perc/class/level`; zero shares are
/// dropped; a block size's shares add up to at most 100.
pub fn bssplit(v: &str, implicit: u16) -> Result<Vec<PrioShare>, String> {
    let mut out: Vec<PrioShare> = Vec::new();
    for e in v.split(':').map(str::trim).filter(|e| !e.is_empty()) {
        let f: Vec<&str> = e.split('/').collect();
        let (bs, pct) = match f.as_slice() {
            [bs, pct] | [bs, pct, _, _] => (
                crate::units::parse_size(bs).map_err(|e| e.to_string())?,
                int(pct, 0, 100)?,
            ),
            _ => return Err(format!("'{e}' is not BS/PERCENT or BS/PERCENT/CLASS/LEVEL")),
        };
        let prio = match f.as_slice() {
            [_, _, c, l] => ioprio(int(c, 1, 3)?, int(l, 0, 7)?),
            _ => implicit,
        };
        if pct == 0 {
            continue;
        }
        if out.iter().filter(|s| s.bs == Some(bs)).map(|s| s.pct).sum::<u32>() + pct > 100 {
            return Err(format!("the shares of block size {bs} add up to more than 100"));
        }
        out.push(PrioShare {
            bs: Some(bs),
            pct,
            prio,
        });
    }
    Ok(out)
}
