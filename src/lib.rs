//! fslab: a filesystem and storage laboratory.
//!
//! Data flow: `cli` parses strings; `plan` validates them into a typed,
//! immutable plan (every error names its flag); `target` prepares where the
//! work runs and returns a guard that undoes it; `runner` drives N workers,
//! each owning an `engine` (how an operation is executed), a `workload` (which
//! operation comes next) and its `stats`; the merged stats become a
//! `model::Report`, which each reporter renders.

pub mod app;
pub mod cli;
pub mod dist;
pub mod engine;
pub mod errno;
pub mod host_facts;
pub mod interrupt;
pub mod model;
pub mod plan;
pub mod report;
pub mod runner;
pub mod stats;
mod sys;
pub mod target;
pub mod telemetry;
#[cfg(test)]
mod testing;
pub mod units;
pub mod vm;
pub mod workload;
