//! Where in its files a job works and how much it does: fio's offset,
//! offset_increment, io_size/number_ios/loops, random_distribution,
//! random_generator, norandommap, file_service_type and the like. The
//! default is `fslab io`'s behaviour: the whole file, once (or until the
//! runtime), offsets uniform.

use serde::{Deserialize, Serialize};

/// A place or length in a file: bytes, or a percentage of the file's size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Amount {
    Bytes(u64),
    Percent(f64),
}

impl Amount {
    /// The bytes of a file of `len` bytes this amount is.
    pub fn of(self, len: u64) -> u64 {
        match self {
            Amount::Bytes(b) => b,
            Amount::Percent(p) => (len as f64 * p / 100.0) as u64,
        }
    }
}

/// How a write-only fio job's new file is made (fio's fallocate).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FreshFile {
    /// fallocate(2) of its size: allocated, unwritten (native, posix, 1: fio's default)
    Fallocate,
    /// fallocate with KEEP_SIZE: allocated, the file empty (keep)
    Keep,
    /// ftruncate to its size: sparse (truncate)
    Truncate,
    /// empty: the writes extend it (none, 0)
    Empty,
}

/// How random offsets are drawn (fio's random_distribution).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Distribution {
    #[default]
    Uniform,
    /// Zipf with exponent theta; `center` in [0, 1] or None (a random place).
    Zipf { theta: f64, center: Option<f64> },
    /// Pareto with power h (0 < h < 1).
    Pareto { h: f64, center: Option<f64> },
    /// fio's "normal": a sum of uniform draws, with deviation `dev` percent.
    Normal { dev: f64, center: Option<f64> },
    /// (percent of accesses, percent of the region), in order from the start.
    Zoned(Vec<(u32, f64)>),
    /// (percent of accesses, bytes), in order from the start.
    ZonedAbs(Vec<(u32, u64)>),
}

impl Distribution {
    pub fn is_uniform(&self) -> bool {
        matches!(self, Distribution::Uniform)
    }
}

/// How a job with several files picks the file of its next I/O (fio's
/// file_service_type).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileService {
    /// In turn (fio's default).
    #[default]
    RoundRobin,
    /// Each file until it is done, then the next.
    Sequential,
    /// A uniformly random file for each I/O.
    Random,
    /// A file drawn with a skewed distribution (no hashing: file 0 is the hottest).
    Skewed(Distribution),
}

/// O_SYNC or O_DSYNC on the job's files (fio's sync option).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SyncMode {
    #[default]
    None,
    Sync,
    Dsync,
}

/// fio's fadvise_hint: the advice posix_fadvise gets on each file as the
/// job opens it. The advice matters to buffered random reads: without
/// POSIX_FADV_RANDOM the kernel reads ahead of a miss whose preceding pages
/// are cached (mm/readahead.c: "traces a sequential stream would leave
/// behind"), so a random pass reads more than it asks for as the cache fills.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Fadvise {
    /// No advice (`fslab io`, fio's fadvise_hint=0).
    #[default]
    None,
    /// The job's pattern: RANDOM for random I/O, SEQUENTIAL otherwise
    /// (fio's default, fadvise_hint=1).
    Pattern,
    Sequential,
    Random,
}

/// How a job's offsets and amount of work are shaped. `Default` is what
/// `fslab io` does without these options.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct RegionPlan {
    /// Where each file's region starts (fio's offset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<Amount>,
    /// Added to the start for each further clone of the job (clone n: n × this).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset_increment: Option<Amount>,
    /// The job's size as a percentage of its (existing) file or device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_percent: Option<f64>,
    /// Bytes to move in all (fio's io_size); None = the size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_size: Option<u64>,
    /// Stop after this many I/Os (per loop: fio multiplies it by loops).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number_ios: Option<u64>,
    /// Passes over the region (fio's loops); None = 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loops: Option<u64>,
    #[serde(skip_serializing_if = "Distribution::is_uniform")]
    pub distribution: Distribution,
    /// Random offsets may repeat within a pass (no map of blocks done).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub norandommap: bool,
    /// A fio job: fio's rules where they differ from `fslab io`'s. Random
    /// offsets go through fio's random map (each pass touches every block
    /// once) unless norandommap or a non-uniform distribution; the clones
    /// of a job that share a file all start at `offset` (plus
    /// offset_increment), not at spread offsets; fio's passes and limits
    /// (loops, io_size, number_ios) end the job.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fio: bool,
    #[serde(skip_serializing_if = "is_default_service")]
    pub file_service: FileService,
    /// I/Os to a file before switching to the next (file_service_type's :N); 0 = 1.
    #[serde(skip_serializing_if = "is_zero")]
    pub file_batch: u64,
    /// The job's clones share their files (a filename_format without $jobnum).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub shared_files: bool,
    /// fio's offset modifier on sequential I/O (`rw=read:8k`, `rw=read:-8k`):
    /// added to each next offset, as holes (or, negative, reading
    /// backwards), wrapping at the region's ends as fio's
    /// `get_next_seq_offset` does.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub seq_add: i64,
    /// fio's ddir_seq_nr (`rw=randread:N`): a random offset only every
    /// N-th I/O (the first is one), the I/Os between going on from the
    /// last one's end (io_u.c `get_next_offset`); 0: never, after the
    /// first block. None: every I/O's offset is random (N = 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rand_seq: Option<u64>,
    /// fio's rw_sequencer=identical: with `rand_seq`, the I/Os between
    /// random ones repeat the last offset instead of going on from it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub seq_identical: bool,
    /// fio's extend_file for a job that only writes, without overwrite: its
    /// new files are made as fio's fallocate says, not written, before the
    /// run (its writes then allocate, or convert unwritten extents, as
    /// fio's do). None: written fully, as every other job's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fresh: Option<FreshFile>,
    /// Drop each file's page cache before the job (posix_fadvise DONTNEED),
    /// and again at each new pass of a buffered job (fio's
    /// loop_cache_invalidate), so every pass reads what fio's does.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub invalidate: bool,
    /// fio's fadvise_hint.
    #[serde(skip_serializing_if = "is_no_advice")]
    pub fadvise: Fadvise,
    /// Read each file's region once (into the page cache) before the job.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pre_read: bool,
    /// fsync each file when the job is done with it (after its timed phase).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fsync_on_close: bool,
    /// Lay the files out and do no I/O.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub create_only: bool,
    #[serde(skip_serializing_if = "is_no_sync")]
    pub sync: SyncMode,
    /// fio's fill_device (fill_fs): the job writes until the filesystem
    /// is full; ENOSPC (or EDQUOT) ends it without counting as an error.
    /// Its size is the free space when planned (an upper bound), its file
    /// is made empty (fio neither truncates nor fallocates it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fill: bool,
    /// The job's file is one an earlier job of this run wrote (fio's jobs
    /// naming one new filename=, the later one without a size): it is read
    /// at its size when the job starts, its blocks checked against what
    /// that job wrote.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reused: bool,
    /// The existing files fio's `filename=a:b:c` names, in order: the
    /// job's files, shared by its clones, each checked as an existing
    /// target is (`target` is the first). Empty: one target, or fslab's
    /// own files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub named: Vec<std::path::PathBuf>,
    /// fio's zonemode=strided (zonesize, zonerange, zoneskip).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<Zones>,
}

/// fio's strided zones (io_u.c `setup_strided_zone_mode`): the job works
/// in a zone of `range` bytes from the zone's start until it has moved
/// `size` bytes there (going round the zone again when `size` is larger),
/// then moves its zone `range + skip` further on, back to the region's
/// start past the file's end. The job's size still ends it: a zone that
/// passes the file's end ends the pass, as in fio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Zones {
    pub size: u64,
    pub range: u64,
    pub skip: u64,
}

fn is_default_service(s: &FileService) -> bool {
    *s == FileService::RoundRobin
}

fn is_zero_i64(n: &i64) -> bool {
    *n == 0
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_no_advice(a: &Fadvise) -> bool {
    *a == Fadvise::None
}

fn is_no_sync(s: &SyncMode) -> bool {
    *s == SyncMode::None
}

impl RegionPlan {
    /// True when nothing differs from `fslab io`'s default.
    pub fn is_default(&self) -> bool {
        *self == RegionPlan::default()
    }

    /// Where clone `clone`'s region of a file of `len` bytes starts, as
    /// fio's get_start_offset: a percentage (of the offset or the
    /// increment) is rounded up to a multiple of the smallest block.
    pub fn start(&self, clone: u32, len: u64, bs: u64) -> u64 {
        let pct = matches!(self.offset, Some(Amount::Percent(_)))
            || matches!(self.offset_increment, Some(Amount::Percent(_)));
        let base = self.offset.map(|o| o.of(len)).unwrap_or(0);
        let inc = self.offset_increment.map(|o| o.of(len)).unwrap_or(0);
        let o = base.saturating_add(inc.saturating_mul(clone as u64));
        if pct && bs > 0 {
            o.div_ceil(bs).saturating_mul(bs)
        } else {
            o
        }
    }

    /// Clone `clone`'s region of a file of `file_len` bytes: its start
    /// (percentages of `pct_base`: the existing file's size, or 0 for a file
    /// fslab creates, as fio computes them before it lays the file out) and
    /// length (`size`, cut at the file's end).
    pub fn span(&self, clone: u32, pct_base: u64, file_len: u64, size: u64, bs: u64) -> (u64, u64) {
        let start = self.start(clone, pct_base, bs).min(file_len);
        (start, size.min(file_len - start))
    }

    /// The largest start any of `clones` clones has in a file of `len` bytes.
    pub fn max_start(&self, clones: u32, len: u64, bs: u64) -> u64 {
        self.start(clones.saturating_sub(1), len, bs)
    }

    /// Whether random offsets go through the random map.
    pub fn random_map(&self) -> bool {
        self.fio && !self.norandommap && self.distribution.is_uniform()
    }

    /// Passes over the region (loops=0 is one, as in fio).
    pub fn loops(&self) -> u64 {
        self.loops.unwrap_or(1).max(1)
    }
}
