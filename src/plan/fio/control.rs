//! How fio jobs start, end and fail, beyond running their I/O: startdelay,
//! exitall, exitall_on_error, exit_what, wait_for, flow, continue_on_error,
//! ignore_error, latency_target (fio's queue-depth search) and steadystate.

/// A job's control options. `Default`: start with the others, stop at the
/// first error of the job, never stop the others.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ControlOpts {}
