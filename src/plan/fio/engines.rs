//! fio's ioengine names mapped onto fslab's engines, fio's metadata engines
//! (filecreate, filestat, filedelete, dircreate, dirstat, dirdelete) mapped
//! onto fslab's metadata operations, and the engines fslab refuses (those
//! needing hardware or a network fslab does not drive).

/// What a job's ioengine does. `Default`: reads and writes (the io workload).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FioEngine {
    /// Reads and writes through fslab's engine (sync, io_uring, null).
    #[default]
    Io,
}
