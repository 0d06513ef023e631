//! The engines options of a fio job (see `plan/fio/engines.rs` or `plan/io/engines.rs`
//! for what they become).

use super::State;
use crate::cli::FioArgs;
use crate::plan::fiojob::{Job, Opt};

/// One option of this group; None when `key` is not one of them.
pub(super) fn map(_st: &mut State, _key: &str, _o: &Opt) -> Option<Result<(), String>> {
    None
}

/// After the job's last option: values that depend on several options.
pub(super) fn finish(_st: &mut State, _job: &Job, _fa: &FioArgs) {}
