//! What `fslab fio` says of its jobs before they run, as fio does: each
//! job's line ("name: (g=0): rw=..., bs=..., ioengine=..., iodepth=N"),
//! the count of processes started, and the files each clone laid out.
//! Kept in the report so the normal output is a function of it alone.

use serde::{Deserialize, Serialize};

/// One job of the job file (its clones share the line).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FioJobHead {
    pub name: String,
    pub groupid: usize,
    /// fio's name of the pattern: read, write, randread, randwrite, rw, randrw,
    /// trim, randtrim, trimwrite, randtrimwrite.
    pub rw: String,
    /// The smallest and largest block of reads, writes and trims, bytes.
    pub bs: [[u64; 2]; 3],
    /// As the job names it (fio's default: psync).
    pub ioengine: String,
    /// As the job wrote it (fio's default: 1).
    pub iodepth: u32,
    /// numjobs.
    pub clones: u32,
    /// `thread`: the clones are threads (fio says processes otherwise).
    pub thread: bool,
    /// kb_base (1024 unless the job says 1000): fio's unit prefixes.
    pub kb_base: u32,
    /// A synchronous engine with iodepth over 1: each clone says, as
    /// fio's, that the depth is capped at 1.
    #[serde(default)]
    pub depth_capped: bool,
    /// What the job's engine says as each clone starts (fio's cpuio and
    /// exec print their settings, exec what it runs), the same for each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub engine_says: Vec<String>,
    /// Per clone that laid out its files before the run, in run order:
    /// how many files and their bytes in all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub laid_out: Vec<LaidOut>,
}

/// The files one clone laid out (fio's "Laying out IO file").
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaidOut {
    pub files: u32,
    pub bytes: u64,
}
