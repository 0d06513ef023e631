//! The meta workload: bonnie++'s file creation test, with extended attributes.
//!
//! Each step is one file operation of the current phase (a create is open +
//! write + setxattr... + close). File names are computed from indices into a
//! stack buffer, and random order is a bijection on the indices (a Feistel
//! network with cycle walking), so memory stays flat from 10k to 10M files.

mod names;
mod phase;

pub use names::{file_name, Perm};

use super::{AlignedBuf, NextOp, Step, Workload};
use crate::engine::Engine;
use crate::plan::meta::XattrSpec;
use crate::plan::{MetaPlan, Order};
use crate::stats::OpKind;
use names::mix;
use phase::DirWalk;
use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;

/// One job's directories: open fds (for the *at calls) and absolute paths
/// (for getxattr where the kernel or engine has no getxattrat).
pub struct JobDirs {
    pub fds: Vec<OwnedFd>,
    pub paths: Vec<CString>,
}

/// The kind of work of one phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PhaseKind {
    Create,
    Stat,
    Delete,
    Getxattr,
    Rename,
    Readdir,
    OpenClose,
}

impl PhaseKind {
    pub fn dir(self) -> OpKind {
        match self {
            PhaseKind::Create => OpKind::Create,
            PhaseKind::Stat => OpKind::Stat,
            PhaseKind::Delete => OpKind::Delete,
            PhaseKind::Getxattr => OpKind::Getxattr,
            PhaseKind::Rename => OpKind::Rename,
            PhaseKind::Readdir => OpKind::Readdir,
            PhaseKind::OpenClose => OpKind::OpenClose,
        }
    }
}
/// The directory (of `dirs`) that file `idx` of a job's `files` goes in.
#[inline]
fn dir_index(idx: u64, files: u64, dirs: usize) -> usize {
    let dirs = dirs as u64;
    match idx.checked_mul(dirs) {
        Some(p) => (p / files) as usize,
        // 128-bit division is a library call: only when it is needed
        None => (idx as u128 * dirs as u128 / files as u128) as usize,
    }
}

/// Where the create phase of `order` put file `idx` of job `job`: the index
/// of its directory in the job's [`JobDirs`] and its name (before any rename
/// phase). For looking at the files between phases (xattr placement).
pub fn created_file(plan: &MetaPlan, job: u32, order: Order, idx: u64, dirs: usize) -> (usize, CString) {
    let mut buf = [0u8; 48];
    let prefix = plan.shared_dirs.then_some(job);
    let name = file_name(&mut buf, idx, prefix, order == Order::Random, false, plan.seed);
    (dir_index(idx, plan.files, dirs), name.to_owned())
}

/// One job's pass over its files in one phase.
pub struct MetaWorkload {
    kind: PhaseKind,
    order: Order,
    dirs: Arc<JobDirs>,
    /// Files of the job's name space (they map onto the directories).
    files: u64,
    /// How many this phase visits: all, or those a stonewalled create made.
    count: u64,
    /// Names with the random characters first (the random phases).
    random_first: bool,
    job_prefix: Option<u32>,
    renamed: bool,
    seed: u64,
    perm: Perm,
    size_min: u64,
    size_max: u64,
    xattrs: Vec<XattrSpec>,
    xvalue: Vec<u8>,
    xread: Vec<u8>,
    data: AlignedBuf,
    fsync: bool,
    next: u64,
    failed: bool,
    /// Read an xattr by absolute path (no getxattrat): said in a note.
    xattr_by_path: bool,
    /// Sequential stat walks the directories with readdir.
    walk: Option<(usize, DirWalk)>,
    path: Vec<u8>,
    /// The stat buffer, kept across files (not re-zeroed for each).
    st: Box<libc::statx>,
}

impl MetaWorkload {
    /// Job `job`'s pass of phase `kind`. `created`: how many files this job's
    /// create phase made when a stonewall cut it short (None: all of them).
    pub fn new(
        plan: &MetaPlan,
        job: u32,
        dirs: Arc<JobDirs>,
        kind: PhaseKind,
        order: Order,
        renamed: bool,
        created: Option<u64>,
    ) -> Self {
        let seed = plan.seed ^ mix(job as u64);
        let count = match kind {
            PhaseKind::Create => plan.files,
            _ => created.unwrap_or(plan.files).min(plan.files),
        };
        let xmax = plan.xattrs.iter().map(|x| x.size).max().unwrap_or(0);
        let mut xvalue = vec![0u8; xmax];
        fastrand::Rng::with_seed(seed).fill(&mut xvalue);
        let mut data = AlignedBuf::new(plan.size_max.max(1) as usize, 4096);
        fastrand::Rng::with_seed(seed ^ 1).fill(data.as_mut_slice());
        MetaWorkload {
            kind,
            order,
            dirs,
            files: plan.files,
            count,
            random_first: order == Order::Random,
            job_prefix: plan.shared_dirs.then_some(job),
            renamed,
            seed: plan.seed,
            // files 0..count exist (creates go in numeric order, also the
            // random one, so a stonewalled create made the first `count`)
            perm: Perm::new(count, seed ^ kind as u64),
            size_min: plan.size_min,
            size_max: plan.size_max,
            xattrs: plan.xattrs.clone(),
            xread: vec![0u8; xmax.max(1)],
            xvalue,
            data,
            fsync: plan.fsync,
            next: 0,
            failed: false,
            xattr_by_path: false,
            walk: None,
            path: Vec::with_capacity(512),
            // SAFETY: statx is plain integers; all-zero is a valid value.
            st: Box::new(unsafe { std::mem::zeroed() }),
        }
    }

    /// Size of file `idx`: fixed, or drawn per file from [min, max].
    #[inline]
    fn size_of(&self, idx: u64) -> u64 {
        if self.size_max == self.size_min {
            self.size_max
        } else {
            self.size_min + mix(idx ^ self.seed ^ 0x51ce) % (self.size_max - self.size_min + 1)
        }
    }

    #[inline]
    fn dir_of(&self, idx: u64) -> usize {
        dir_index(idx, self.files, self.dirs.fds.len())
    }

    fn dirfd(&self, d: usize) -> RawFd {
        self.dirs.fds[d].as_raw_fd()
    }

    /// Absolute path of `name` in directory `d`, NUL-terminated, in `self.path`.
    fn full_path(&mut self, d: usize, name: &CStr) -> *const libc::c_char {
        self.path.clear();
        self.path.extend_from_slice(self.dirs.paths[d].as_bytes());
        self.path.push(b'/');
        self.path.extend_from_slice(name.to_bytes_with_nul());
        self.path.as_ptr() as *const libc::c_char
    }

    /// The file of step `i`: bonnie++ creates in numeric order in both
    /// passes (the random create differs by its names) and visits files in
    /// a random order in the random stat, delete and extra phases.
    fn index(&self, i: u64) -> u64 {
        match (self.order, self.kind) {
            (Order::Seq, _) | (Order::Random, PhaseKind::Create) => i,
            (Order::Random, _) => self.perm.at(i),
        }
    }

    fn name<'b>(&self, buf: &'b mut [u8; 48], idx: u64, renamed: bool) -> &'b CStr {
        file_name(buf, idx, self.job_prefix, self.random_first, renamed, self.seed)
    }
}

impl Workload for MetaWorkload {
    fn items_done(&self) -> u64 {
        self.next
    }

    fn next_op(&mut self, _slot: usize) -> Option<NextOp> {
        None
    }

    fn notes(&mut self) -> Vec<String> {
        if self.xattr_by_path {
            vec![format!(
                "{}: getxattr by absolute path (no getxattrat(2) in this kernel or engine): \
                 the rate includes resolving each path from /",
                self.kind.dir().name()
            )]
        } else {
            Vec::new()
        }
    }

    fn queues(&self) -> bool {
        false
    }

    fn step(&mut self, e: &mut dyn Engine) -> Option<Step> {
        if self.failed {
            return None;
        }
        let dir = self.kind.dir();
        let result = match (self.kind, self.order) {
            (PhaseKind::Stat, Order::Seq) => self.seq_stat(e)?,
            (PhaseKind::Readdir, _) => self.readdir()?,
            _ => self.file_op(e)?,
        };
        if result < 0 {
            // One failure ends this job's phase: later files depend on it
            // (a file that was not created can't be stat'ed).
            self.failed = true;
        }
        Some(Step::new(dir, result))
    }
}
