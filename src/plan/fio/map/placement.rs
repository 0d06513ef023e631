//! Where and at what priority a job's threads run: fio's cpumask,
//! cpus_allowed, cpus_allowed_policy, prio, prioclass and nice. Each clone
//! applies them to its own thread as it starts (`app::fio::engines`), as
//! fio's job threads do (backend.c `thread_main`).

use super::{val, State};
use crate::cli::FioArgs;
use crate::plan::fio::Placement;
use crate::plan::fiojob::{Job, Opt};

/// One option of this group; None when `key` is not one of them.
pub(super) fn map(st: &mut State, key: &str, o: &Opt) -> Option<Result<(), String>> {
    if !matches!(
        key,
        "cpumask" | "cpus_allowed" | "cpus_allowed_policy" | "prio" | "prioclass" | "nice"
    ) {
        return None;
    }
    let v = match val(o) {
        Ok(v) => v.trim(),
        Err(e) => return Some(Err(e)),
    };
    let p = &mut st.m.fio.placement;
    let r = match key {
        "cpumask" => mask(v).map(|c| p.cpus = Some(c)),
        "cpus_allowed" => list(v).map(|c| p.cpus = Some(c)),
        "cpus_allowed_policy" => match v {
            "shared" | "split" => {
                p.split = v == "split";
                Ok(())
            }
            _ => Err(format!("'{v}' is not shared or split")),
        },
        "prio" => int(v, 0, 7).map(|n| p.prio = Some(n as u8)),
        "prioclass" => int(v, 0, 3).map(|n| p.prioclass = Some(n as u8)),
        _ => int(v, -20, 19).map(|n| p.nice = Some(n as i32)),
    };
    if let Err(why) = r {
        st.m.bad.push((o.at.clone(), format!("{key}: {why}")));
    }
    Some(Ok(()))
}

fn int(v: &str, lo: i64, hi: i64) -> Result<i64, String> {
    match v.parse::<i64>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(format!("'{v}' is not a whole number from {lo} to {hi}")),
    }
}

/// The CPUs this process may run on: fio refuses a job naming another.
fn online() -> Vec<usize> {
    match rustix::thread::sched_getaffinity(None) {
        Ok(set) => (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| set.is_set(c))
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn checked(cpus: Vec<usize>, v: &str) -> Result<Vec<usize>, String> {
    let have = online();
    if let Some(c) = cpus.iter().find(|c| !have.contains(c)) {
        return Err(format!(
            "'{v}' names CPU {c}, which this process cannot run on (it may use {})",
            ranges(&have)
        ));
    }
    if cpus.is_empty() {
        return Err(format!("'{v}' names no CPU"));
    }
    Ok(cpus)
}

/// fio's cpumask: a bit mask, decimal or 0x hex.
fn mask(v: &str) -> Result<Vec<usize>, String> {
    let bits = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => v.parse::<u64>(),
    }
    .map_err(|_| format!("'{v}' is not a bit mask of CPUs"))?;
    checked((0..64).filter(|b| bits >> b & 1 == 1).collect(), v)
}

/// fio's cpus_allowed: "0,2-3" (ranges and single CPUs).
fn list(v: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for part in v.split(',').map(str::trim) {
        let n = |s: &str| {
            s.trim()
                .parse::<usize>()
                .ok()
                .filter(|&c| c < rustix::thread::CpuSet::MAX_CPU)
                .ok_or_else(|| format!("'{part}' is not a CPU number or range"))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (n(a)?, n(b)?);
                if a > b {
                    return Err(format!("'{part}': the range ends before it starts"));
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(n(part)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    checked(cpus, v)
}

fn ranges(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    out.join(",")
}

/// fio sets an I/O priority only when prio or prioclass is given; a prio
/// alone is in the best-effort class (fio's ioprio_value: class 0 is BE).
pub(super) fn finish(st: &mut State, _job: &Job, _fa: &FioArgs) {
    let p: &mut Placement = &mut st.m.fio.placement;
    if p.prio.is_some() && p.prioclass.is_none() {
        p.prioclass = Some(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_and_masks() {
        let first = online()[0];
        assert_eq!(list(&first.to_string()).unwrap(), [first]);
        assert_eq!(mask(&format!("0x{:x}", 1u64 << first)).unwrap(), [first]);
        assert!(list("5-3").unwrap_err().contains("ends before"));
        assert!(list("100000").is_err());
        assert!(mask("0").unwrap_err().contains("no CPU"));
        assert_eq!(ranges(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
    }
}
