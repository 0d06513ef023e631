//! Many clients: the `Coordinator` that ties the processes of one run
//! together. On one machine there is one process (rank 0 of 1) and its worker
//! threads are the clients; started by `mpirun` or `srun` in a build with the
//! `mpi` feature, every MPI rank is a process with its own workers, phases
//! start on a barrier and the ranks' statistics are merged exactly on rank 0.
//!
//! The runner and the commands talk to `coordinator()` only, so the same code
//! path serves one machine and many. MPI calls are made from the main thread
//! only (MPI_THREAD_FUNNELED): workers never touch the coordinator.

#[cfg(feature = "mpi")]
mod mpi;

use std::sync::OnceLock;

/// The processes of one run, as seen by one of them.
pub trait Coordinator: Send + Sync {
    /// This process's rank, 0..size.
    fn rank(&self) -> usize;
    /// Number of processes in the run.
    fn size(&self) -> usize;
    /// Returns when every rank has called it.
    fn barrier(&self);
    /// Every rank's `mine`, in rank order, on rank 0 (None elsewhere).
    fn gather(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>>;
    /// Rank 0's `mine` on every rank.
    fn broadcast(&self, mine: Vec<u8>) -> Vec<u8>;
    /// Every rank's `mine`, in rank order, on every rank (small values only).
    fn all_gather_u64(&self, mine: u64) -> Vec<u64>;
    /// Tells every other rank that this one reached the stonewall `at_ns`
    /// after the phase started (`--stonewall first`). Non-blocking.
    fn announce_stonewall(&self, at_ns: u64);
    /// The earliest stonewall another rank announced since the last call, if any.
    fn poll_stonewall(&self) -> Option<u64>;
    /// Ends a phase's stonewall messages: receives those still on their way,
    /// so that none leaks into the next phase. Every rank calls it.
    fn finish_stonewall(&self);
    /// Name of the machine this rank runs on.
    fn host(&self) -> String {
        rustix::system::uname().nodename().to_string_lossy().into_owned()
    }
}

/// One process: the default, and every command outside MPI.
pub struct Local;

impl Coordinator for Local {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn barrier(&self) {}
    fn gather(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>> {
        Some(vec![mine.to_vec()])
    }
    fn broadcast(&self, mine: Vec<u8>) -> Vec<u8> {
        mine
    }
    fn all_gather_u64(&self, mine: u64) -> Vec<u64> {
        vec![mine]
    }
    fn announce_stonewall(&self, _at_ns: u64) {}
    fn poll_stonewall(&self) -> Option<u64> {
        None
    }
    fn finish_stonewall(&self) {}
}

static COORD: OnceLock<Box<dyn Coordinator>> = OnceLock::new();

/// The run's coordinator (`Local` unless `init` started MPI).
pub fn coordinator() -> &'static dyn Coordinator {
    COORD.get_or_init(|| Box::new(Local)).as_ref()
}

/// True when `flag` holds on any rank (every rank calls it): a decision all
/// ranks take alike, such as stopping between phases after a signal.
pub fn any(flag: bool) -> bool {
    coordinator().all_gather_u64(flag as u64).contains(&1)
}

/// True when this process is one of several ranks.
pub fn is_distributed() -> bool {
    coordinator().size() > 1
}

/// The MPI launcher variable that shows this process was started by one, if any.
///
/// Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE; MPICH's and Intel's hydra and
/// Slurm's PMI-2 set PMI_SIZE; PMIx launchers (srun --mpi=pmix, Open MPI 5)
/// set PMIX_RANK.
pub fn launcher() -> Option<(&'static str, String)> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .into_iter()
        .find_map(|v| std::env::var(v).ok().map(|val| (v, val)))
}

/// This process's rank as the launcher's environment gives it (0 if none does).
pub fn launcher_rank() -> usize {
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"]
        .into_iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
        .unwrap_or(0)
}

/// What `init` leaves to `main`: dropping it ends MPI (MPI_Finalize).
pub struct Session {
    #[cfg(feature = "mpi")]
    _universe: Option<::mpi::environment::Universe>,
}

/// Starts MPI when a launcher started this process (and the build has MPI).
/// An MPI launch of a build without MPI is refused: N copies of a
/// single-process run would each measure a share of the machine and each
/// report it as the whole.
pub fn init() -> Result<Session, String> {
    let Some((var, val)) = launcher() else {
        // srun without an MPI plugin starts its tasks as unrelated processes
        if let Ok(n) = std::env::var("SLURM_STEP_NUM_TASKS") {
            if n.trim().parse::<u32>().is_ok_and(|n| n > 1) {
                return Err(format!(
                    "srun started {n} tasks (SLURM_STEP_NUM_TASKS={n}) without an MPI plugin: they would \
                     run as {n} unrelated copies; use `srun --mpi=pmix` (or pmi2) with a build with \
                     MPI (docs/distributed.md), or run one task"
                ));
            }
        }
        return Ok(Session {
            #[cfg(feature = "mpi")]
            _universe: None,
        });
    };
    #[cfg(feature = "mpi")]
    {
        let _ = (var, val);
        let (universe, coord) = mpi::MpiCoordinator::start()?;
        let _ = COORD.set(Box::new(coord));
        Ok(Session {
            _universe: Some(universe),
        })
    }
    #[cfg(not(feature = "mpi"))]
    Err(format!(
        "started by an MPI launcher ({var}={val}) but this fslab was built without MPI: \
         build it with `cargo build --release --features mpi` (see docs/distributed.md), \
         or run it without mpirun/srun"
    ))
}
