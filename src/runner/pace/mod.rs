//! Pacing: when a worker's next operation may go. Two pacers (without
//! one, `runner::sync::Plain` runs as fast as the workload goes), the parts
//! fio's is made of, and the hook through which they drive the inline
//! engines' loop (`runner::sync`), one concern per file:
//!
//! - `grid`: a fixed grid of slots, shared by `--rate-iops` and the probe;
//! - `fio`: fio's pacing from a `PacingPlan`, made of its rate `schedule`
//!   per direction, `think` (thinktime), `min_rate` (rate_min) and `flow`;
//! - `wait`: the waits they all go through, never past the deadline;
//! - `hook`: the `Pace` trait the inline engines' loop is generic over.
//!
//! The queued loop (`runner::queued`) uses `Grid` and `FioPacer` directly:
//! there a wait must leave room for reaping, which this hook cannot.

mod fio;
mod flow;
mod grid;
mod hook;
mod min_rate;
mod schedule;
mod think;
mod wait;

pub(crate) use fio::{FioPacer, FioSync};
pub(crate) use grid::{Grid, GridSync};
pub use grid::{PacedOp, Pacing, SPIN};
pub(crate) use hook::{Done, Pace};
pub(crate) use schedule::Waited;
pub(crate) use wait::{wait_due, wait_until};
