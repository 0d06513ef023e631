//! The one integration test binary: real runs of the fslab binary.

mod util;

mod bad_input;
mod cleanup;
mod compare_formats;
mod device;
mod faultfs;
mod faults;
mod fio;
mod fio_buffers;
mod fio_latency;
mod fio_output;
mod fio_pacing;
mod fio_parser;
mod fio_region;
mod fio_steady;
mod html;
mod io;
mod io_buffers;
mod lab;
mod layering;
mod meta;
mod mpi;
mod probe;
mod profile;
mod quick_suite;
mod replay;
mod results;
mod schema;
mod signals;
mod snapshots;
mod stdout_table;
mod telemetry_core;
mod uring;
mod verify;
mod xattr_placement;
