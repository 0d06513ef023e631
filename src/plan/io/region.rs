//! Where in its files a job works and how much it does: fio's offset,
//! offset_increment, io_size/number_ios/loops, random_distribution,
//! random_generator, norandommap, file_service_type and the like. The
//! default is `fslab io`'s behaviour: the whole file, once (or until the
//! runtime), offsets uniform.

use serde::{Deserialize, Serialize};

/// How a job's offsets and amount of work are shaped. `Default` is what
/// `fslab io` does without these options.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RegionPlan {}

impl RegionPlan {
    /// True when nothing differs from `fslab io`'s default.
    pub fn is_default(&self) -> bool {
        *self == RegionPlan::default()
    }
}
