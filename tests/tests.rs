//! The one integration test binary: real runs of the fslab binary.

mod util;

mod bad_input;
mod cleanup;
mod cli_conventions;
mod device;
mod faultfs;
mod faults;
mod fio;
mod fio_buffers;
mod fio_output;
mod fio_pacing;
mod fio_parser;
mod fio_region;
mod html;
mod io;
mod lab;
mod layering;
mod meta;
mod mpi;
mod probe;
mod profile;
mod replay;
mod results;
mod signals;
mod snapshots;
mod telemetry_core;
mod uring;
mod verify;
mod xattr_placement;
