//! Work directories of distributed runs: rank 0 makes `fslab-<pid>-<n>` in
//! the shared target and every rank works in its own `rank<R>` inside it.
//! A rank that cannot see rank 0's directory is on a filesystem the ranks do
//! not share, which is refused: each host would measure its own disk.

use super::{live, make_workdir, refused, Guard, TargetError};
use crate::dist;
use std::path::{Path, PathBuf};

/// This process's work directory under `parent`, and the guard removing it.
pub fn run_workdir(parent: &Path) -> Result<(PathBuf, Guard), TargetError> {
    let coord = dist::coordinator();
    if coord.size() == 1 {
        let d = make_workdir(parent)?;
        return Ok((d.clone(), Guard::for_workdir(d)));
    }
    let rank = coord.rank();
    let made = if rank == 0 { Some(make_workdir(parent)) } else { None };
    let path = match &made {
        Some(Ok(d)) => d.to_string_lossy().into_owned().into_bytes(),
        _ => Vec::new(),
    };
    let top = coord.broadcast(path);
    if top.is_empty() {
        return Err(match made {
            Some(Err(e)) => e,
            _ => TargetError::OtherRank(format!(
                "rank 0 could not make its work directory in '{}'",
                parent.display()
            )),
        });
    }
    let top = PathBuf::from(String::from_utf8_lossy(&top).into_owned());
    let mine = top.join(format!("rank{rank}"));
    // locked like the run's directory: cleanup keeps it while this rank runs
    let result = super::workdir::make_rank_dir(&mine, rank);
    let failed: Vec<usize> = coord
        .all_gather_u64(result.is_err() as u64)
        .iter()
        .enumerate()
        .filter(|(_, &f)| f == 1)
        .map(|(r, _)| r)
        .collect();
    let guard = Guard {
        dir: (rank == 0).then(|| top.clone()),
        rank_dir: result.is_ok().then(|| mine.clone()),
        finished: false,
    };
    live::add_dir(if rank == 0 { &top } else { &mine });
    if let Err(e) = result {
        return Err(refused(
            "--target",
            format!(
                "cannot work in rank 0's directory {}: {e}: every rank needs the same --target on \
                 a filesystem they all share (NFS, Lustre, CephFS, BeeGFS...)",
                top.display()
            ),
        ));
    }
    if let Some(r) = failed.first() {
        return Err(TargetError::OtherRank(format!(
            "rank {r} could not use the work directory {} (its error says why)",
            top.display()
        )));
    }
    Ok((mine, guard))
}

/// Every rank learns whether every rank got through a step that may fail on
/// some of them only (laying out files, creating directories): all go on, or
/// all stop, so that no rank waits at a barrier for one that has given up.
pub fn agree<T, E: From<TargetError>>(r: Result<T, E>) -> Result<T, E> {
    let coord = dist::coordinator();
    if coord.size() == 1 {
        return r;
    }
    let failed = coord.all_gather_u64(r.is_err() as u64);
    match r {
        Err(e) => Err(e),
        Ok(_) if failed.contains(&1) => {
            let r = failed.iter().position(|&f| f == 1).unwrap_or(0);
            Err(TargetError::OtherRank(format!("rank {r} failed (its error says why)")).into())
        }
        ok => ok,
    }
}

/// An error path: gives the other ranks up to five seconds to remove their
/// `rank<R>` directories before rank 0 removes the run's directory. A rank
/// that is gone for good leaves it to `fslab cleanup`.
pub(super) fn wait_for_ranks_to_leave(top: &Path) {
    let t = std::time::Instant::now();
    while t.elapsed() < std::time::Duration::from_secs(5) {
        let others = std::fs::read_dir(top)
            .map(|rd| {
                rd.flatten()
                    .any(|e| e.file_name().to_string_lossy().starts_with("rank"))
            })
            .unwrap_or(false);
        if !others {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
