//! Where an io job is in its files, and how much it does: fio's loop of
//! passes with its byte and I/O limits (`Region`), the random map or
//! distribution of blocks, and which file the next I/O goes to (fio's
//! file_service_type). Apart from `io.rs` because it is the job's
//! bookkeeping across passes, not the making of one operation.

use crate::plan::io::region::{FileService, Zones};
use crate::plan::IoPlan;
use crate::workload::offsets::{BlockDist, BlockMap};

/// How the next file is picked (the plan's FileService, drawn from).
enum Service {
    RoundRobin,
    Sequential,
    Random,
    Skewed(BlockDist),
}

/// fio's file_service_type draws: a file is `value >> FSERVICE_SHIFT` of
/// `files << FSERVICE_SHIFT` ranges (fio's FIO_FSERVICE_SHIFT).
const FSERVICE_SHIFT: u32 = 13;

/// How much a job does and where it is, as fio's loop of passes
/// (backend.c's keep_running and io_bytes_exceeded): a pass covers each
/// file's region once (sequentially, or every block once through the
/// random map); the job makes `loops` passes, each cut short once the job
/// has issued `(io_size or size) × loops` bytes or `number_ios × loops`
/// I/Os; after them, more passes only while io_size is not reached.
/// Without the map (norandommap, a skewed distribution) a pass has no end
/// and the limits end the job. A timed job loops until its runtime.
pub(super) struct Region {
    pub(super) size_based: bool,
    /// Sequential I/O wraps at the end of a file instead of ending the
    /// file's pass: timed jobs, and `fslab io`'s jobs (a shared file's jobs
    /// start at spread offsets and wrap to cover it all).
    pub(super) wrap: bool,
    pub(super) create_only: bool,
    io_size: Option<u64>,
    bytes_cap: u64,
    /// `bytes_cap` before rounding down to whole blocks: fio's
    /// keep_running compares the bytes done with the size as written.
    size_cap: u64,
    ios_cap: u64,
    bs_max: u64,
    passes_left: u64,
    bytes: u64,
    ios: u64,
    /// Per file: this pass is done with it.
    pub(super) done: Vec<bool>,
    pub(super) maps: Option<Vec<BlockMap>>,
    pub(super) dist: Option<BlockDist>,
    service: Service,
    batch: u64,
    left_on_file: u64,
    first: bool,
    /// fio's strided zones: the plan's, and where the job is in them.
    zone: Option<Zone>,
}

/// Strided zones in progress (fio's td->zone_bytes and f->file_offset).
struct Zone {
    z: Zones,
    /// Bytes moved in the current zone.
    bytes: u64,
    /// The current zone's start in the region.
    start: u64,
}

impl Region {
    pub(super) fn new(plan: &IoPlan, files: usize, file_size: u64, rng: &mut fastrand::Rng) -> Region {
        let r = &plan.region;
        let blocks = (file_size / plan.shape.bs).max(1);
        // a strided job draws its random blocks in its zone (fio's
        // last_block and random map are zonerange's)
        let span = r.zones.map_or(file_size, |z| z.range);
        let unit = blocks * plan.shape.bs * files as u64;
        let loops = r.loops();
        let random = plan.shape.rw.random();
        let service = r.file_service.clone();
        Region {
            size_based: !plan.limits.time_based,
            wrap: plan.limits.time_based || !r.fio,
            create_only: r.create_only,
            io_size: r.io_size,
            bytes_cap: r.io_size.unwrap_or(unit).saturating_mul(loops),
            size_cap: r.io_size.unwrap_or(file_size * files as u64).saturating_mul(loops),
            ios_cap: r.number_ios.map(|n| n.saturating_mul(loops)).unwrap_or(u64::MAX),
            bs_max: plan.shape.bs_max,
            passes_left: loops - 1,
            bytes: 0,
            ios: 0,
            done: vec![false; files],
            maps: (random && r.random_map()).then(|| {
                (0..files)
                    .map(|_| BlockMap::new((span / plan.shape.bs).max(1)))
                    .collect()
            }),
            // fio draws a distribution's blocks in blockalign's units (its
            // last_block divides by ba, which is the smallest size by default)
            dist: (random && !r.distribution.is_uniform()).then(|| {
                let align = plan.shape.blockalign.unwrap_or(plan.shape.bs);
                BlockDist::new(&r.distribution, (span / align).max(1), align, true, rng)
            }),
            batch: r.file_batch.max(1),
            left_on_file: 0,
            first: true,
            zone: r.zones.filter(|_| files == 1).map(|z| Zone { z, bytes: 0, start: 0 }),
            service: match service {
                FileService::Skewed(d) => {
                    Service::Skewed(BlockDist::new(&d, (files as u64) << FSERVICE_SHIFT, 1, false, rng))
                }
                FileService::RoundRobin => Service::RoundRobin,
                FileService::Sequential => Service::Sequential,
                FileService::Random => Service::Random,
            },
        }
    }

    /// Whether the job's limits allow one more I/O (io_bytes_exceeded).
    pub(super) fn may_issue(&self) -> bool {
        !self.size_based || (self.bytes < self.bytes_cap && self.ios < self.ios_cap)
    }

    /// Whether fio would look for another I/O (keep_running): its bytes
    /// are compared with the size as written, not rounded to blocks. A
    /// sync cadence fires only then (1 MiB in 2300-byte writes with
    /// fdatasync=1: 455 writes, 455 syncs).
    pub(super) fn continues(&self) -> bool {
        !self.size_based || (self.bytes < self.size_cap && self.ios < self.ios_cap)
    }

    pub(super) fn issued(&mut self, len: u64) {
        self.bytes += len;
        self.ios += 1;
        if let Some(z) = &mut self.zone {
            z.bytes += len;
        }
    }

    /// fio's setup_strided_zone_mode before an I/O in direction `dir` of
    /// file `f` (of `size` bytes), whose next sequential offsets are
    /// `seq`: the next zone once this one has had its bytes (back to the
    /// start past the file's end), the zone's start again when its range
    /// is done, and the random map cleared with each new round of the
    /// range. Returns the zone's (start, range); None without zones.
    pub(super) fn zone_step(&mut self, f: usize, seq: &mut [u64; 2], dir: usize, size: u64) -> Option<(u64, u64)> {
        let zone = self.zone.as_mut()?;
        let z = zone.z;
        if zone.bytes >= z.size {
            zone.bytes = 0;
            zone.start = zone.start.saturating_add(z.range).saturating_add(z.skip);
            if zone.start >= size {
                zone.start = 0;
            }
            seq[dir] = zone.start;
        }
        if seq[dir] >= zone.start.saturating_add(z.range) {
            seq[dir] = zone.start;
        }
        if zone.bytes % z.range == 0 {
            *seq = [zone.start; 2];
            if let Some(m) = self.maps.as_mut().and_then(|m| m.get_mut(f)) {
                m.clear();
            }
        }
        Some((zone.start, z.range))
    }

    /// A new pass starts the zones again from the region's start.
    pub(super) fn restart_zones(&mut self) {
        if let Some(z) = &mut self.zone {
            z.bytes = 0;
            z.start = 0;
        }
    }

    /// Whether another pass starts once every file is done (keep_running).
    pub(super) fn next_pass(&mut self) -> bool {
        if !self.size_based {
            return true;
        }
        if self.passes_left > 0 {
            self.passes_left -= 1;
            return self.may_issue();
        }
        if self.ios >= self.ios_cap {
            return false;
        }
        // after the loops, only io_size keeps the job going (its files are done)
        match self.io_size {
            Some(limit) => self.bytes < limit && limit - self.bytes >= self.bs_max,
            None => false,
        }
    }

    /// The file of the next I/O (fio's file_service_type) after file `cur`,
    /// skipping files this pass is done with; None when it is done with all.
    pub(super) fn pick_file(&mut self, cur: usize, rng: &mut fastrand::Rng) -> Option<usize> {
        let n = self.done.len();
        if n == 1 {
            return (!self.done[0]).then_some(0);
        }
        if self.done.iter().all(|&d| d) {
            return None;
        }
        let switch = self.left_on_file == 0 || self.done[cur];
        let f = if !switch {
            cur
        } else {
            let start = match &self.service {
                Service::RoundRobin => (cur + 1) % n,
                Service::Sequential => cur,
                Service::Random => rng.usize(0..n),
                Service::Skewed(d) => (d.next(rng) >> FSERVICE_SHIFT) as usize % n,
            };
            // the first file not done from there (round robin's first is file 0)
            // the first file is file 0, as fio's
            let start = if self.first && !matches!(self.service, Service::Random | Service::Skewed(_)) {
                0
            } else {
                start
            };
            let f = (0..n).map(|k| (start + k) % n).find(|&f| !self.done[f])?;
            self.left_on_file = self.batch;
            f
        };
        self.first = false;
        self.left_on_file = self.left_on_file.saturating_sub(1);
        Some(f)
    }
}
