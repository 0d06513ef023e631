//! What timed writes carry (fio's scramble_buffers, refill_buffers,
//! zero_buffers, buffer_pattern, buffer_compress_percentage,
//! dedupe_percentage) and how written data is verified (verify=md5, crc64,
//! sha256, meta, pattern, do_verify, verify_backlog, verify_fatal).

use serde::{Deserialize, Serialize};

/// The contents of write buffers. `Default` is `fslab io`'s behaviour.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BufferPlan {}

impl BufferPlan {
    /// True when nothing differs from `fslab io`'s default.
    pub fn is_default(&self) -> bool {
        *self == BufferPlan::default()
    }
}
