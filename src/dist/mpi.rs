//! The MPI coordinator (cargo feature `mpi`): ranks of MPI_COMM_WORLD.
//!
//! Only the main thread calls MPI (MPI_THREAD_FUNNELED is all it asks of
//! the library): the runner's main thread polls for stonewall messages while
//! the workers run, and makes the collectives between phases.

use super::Coordinator;
use mpi::environment::{Threading, Universe};
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, Rank, SimpleCommunicator};
use mpi::traits::{CommunicatorCollectives, Root};
use std::cell::Cell;

/// Tags of fslab's point-to-point messages (collectives have their own context).
const TAG_STONEWALL: i32 = 0x5700;
const TAG_GATHER: i32 = 0x6700;

pub struct MpiCoordinator {
    rank: usize,
    size: usize,
    host: String,
    main: std::thread::ThreadId,
    /// Stonewall messages this rank sent and received in the current phase.
    sent: Cell<bool>,
    received: Cell<u64>,
}

// SAFETY: the coordinator is used from the main thread only (checked by
// `world()`); the Cells are never touched from another thread.
unsafe impl Sync for MpiCoordinator {}
// SAFETY: as Sync: it never leaves the main thread, it only must be
// storable in the process-wide coordinator.
unsafe impl Send for MpiCoordinator {}

impl MpiCoordinator {
    pub fn start() -> Result<(Universe, Self), String> {
        let (universe, _threading) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or_else(|| "MPI was already initialised".to_string())?;
        let world = universe.world();
        let host = mpi::environment::processor_name()
            .unwrap_or_else(|_| rustix::system::uname().nodename().to_string_lossy().into_owned());
        Ok((
            universe,
            MpiCoordinator {
                rank: world.rank() as usize,
                size: world.size() as usize,
                host,
                main: std::thread::current().id(),
                sent: Cell::new(false),
                received: Cell::new(0),
            },
        ))
    }

    fn world(&self) -> SimpleCommunicator {
        assert_eq!(
            std::thread::current().id(),
            self.main,
            "MPI is called from the main thread only"
        );
        SimpleCommunicator::world()
    }
}

impl Coordinator for MpiCoordinator {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn host(&self) -> String {
        self.host.clone()
    }

    fn barrier(&self) {
        self.world().barrier();
    }

    fn gather(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>> {
        let world = self.world();
        if self.rank != 0 {
            world.process_at_rank(0).send_with_tag(mine, TAG_GATHER);
            return None;
        }
        let mut all = vec![mine.to_vec()];
        for r in 1..self.size {
            let (v, _) = world.process_at_rank(r as Rank).receive_vec_with_tag::<u8>(TAG_GATHER);
            all.push(v);
        }
        Some(all)
    }

    fn broadcast(&self, mine: Vec<u8>) -> Vec<u8> {
        let world = self.world();
        let root = world.process_at_rank(0);
        let mut len = mine.len() as u64;
        root.broadcast_into(&mut len);
        let mut buf = if self.rank == 0 { mine } else { vec![0u8; len as usize] };
        root.broadcast_into(&mut buf[..]);
        buf
    }

    fn all_gather_u64(&self, mine: u64) -> Vec<u64> {
        let mut all = vec![0u64; self.size];
        self.world().all_gather_into(&mine, &mut all[..]);
        all
    }

    fn announce_stonewall(&self, at_ns: u64) {
        if self.sent.replace(true) {
            return;
        }
        let world = self.world();
        for r in (0..self.size).filter(|&r| r != self.rank) {
            // 8 bytes go out eagerly: this does not wait for the receiver.
            world.process_at_rank(r as Rank).send_with_tag(&at_ns, TAG_STONEWALL);
        }
    }

    fn poll_stonewall(&self) -> Option<u64> {
        let world = self.world();
        let mut earliest: Option<u64> = None;
        while world.any_process().immediate_probe_with_tag(TAG_STONEWALL).is_some() {
            let (at, _) = world.any_process().receive_with_tag::<u64>(TAG_STONEWALL);
            self.received.set(self.received.get() + 1);
            earliest = Some(earliest.map_or(at, |e| e.min(at)));
        }
        earliest
    }

    fn finish_stonewall(&self) {
        // Every announcing rank sent one message to each other rank.
        let senders: u64 = self.all_gather_u64(self.sent.get() as u64).iter().sum();
        let expected = senders - self.sent.get() as u64;
        let world = self.world();
        while self.received.get() < expected {
            let _ = world.any_process().receive_with_tag::<u64>(TAG_STONEWALL);
            self.received.set(self.received.get() + 1);
        }
        self.sent.set(false);
        self.received.set(0);
    }
}
