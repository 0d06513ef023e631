//! What each write carries, with fio's meaning (io_u.c fill_io_buffer,
//! small_content_scramble; lib/rand.c fill_random_buf_percentage):
//!
//! - random buffers, filled once, and scrambled before each write (the
//!   default, fio's scramble_buffers=1): every 512-byte chunk gets two
//!   words in bytes 48..64, mixed from its offset and a write counter (fio writes the raw offset and the time,
//!   whose zero high bytes compress; see `scramble`), so no two chunks
//!   written are equal: nothing deduplicates. Each
//!   slot's buffer also holds several random slices, one taken per write in
//!   turn, so that a job cycles through 256 KiB of distinct data and the
//!   file does not compress either (fio's files do: gzip -1 takes a fio
//!   file written with bs=4k to 7% of its size; fslab's stays above 99%,
//!   from bs=4k to 4m).
//!   The scramble touches 2 words (one cache line) per 512 bytes and
//!   copies nothing.
//! - refill_buffers: new contents before every write.
//! - zero_buffers, buffer_pattern: zeros or the pattern repeated.
//! - buffer_compress_percentage: in each chunk (buffer_compress_chunk, or
//!   the block), the first (100 - N)% random and the rest zeros (or the
//!   pattern), so a compressor takes the data to about N% less.
//! - dedupe_percentage: that share of the writes repeats the previous
//!   buffer exactly (fio's dedupe_mode=repeat), or one drawn from the
//!   working set (dedupe_mode=working_set: `WorkingSet`).
//! - verify: the block gets its header and checksum (`verify`), or the
//!   verify_pattern; as in fio, it is then not scrambled.

use super::verify::{self, Header, Kind, Readback};
use super::AlignedBuf;
use crate::plan::IoPlan;
use std::os::fd::RawFd;

/// Bytes of distinct random data a scrambled job cycles through (over all
/// its slots): 8 times gzip's window (32 KiB) and twice the unit btrfs
/// compresses (128 KiB extents), so neither finds a repeat. Not more: the
/// slices are the writes' source, and at 1 MiB they left the cache, which
/// cost 5-7% of a 128 KiB write's throughput on tmpfs (0.929-0.951x the
/// identical buffer's; 256 KiB: 1.007x; bench/io-write-tmpfs.sh). A
/// stream compressor with a window above 256 KiB (zstd -1 on a whole file)
/// does find the repeats.
const DISTINCT: usize = 1 << 18;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Random,
    Zero,
    Pattern,
    Compress,
}

/// One job's write contents and verification.
pub struct Fill {
    mode: Mode,
    refill: bool,
    scramble: bool,
    /// Bytes of one slice (the largest block, in whole pages).
    slice: usize,
    /// Slices per slot's buffer, and the one each slot writes next.
    slices: usize,
    next: Vec<usize>,
    /// Writes so far: the scramble's stamp and the verify header's generation.
    count: u64,
    /// The chunk compression applies to.
    chunk: usize,
    compress_pct: u32,
    pattern: Vec<u8>,
    dedupe_pct: u32,
    rng: fastrand::Rng,
    dedupe_rng: fastrand::Rng,
    last_seed: Option<u64>,
    /// fio's dedupe_mode=working_set.
    ws: Option<WorkingSet>,
    job: u32,
    seed: u64,
    /// The kind of each block's check; None without verify.
    verify: Option<Kind>,
    verify_pattern: Vec<u8>,
    verify_fmts: Vec<usize>,
    fatal: bool,
    failed: Option<String>,
    pub readback: Readback,
}

impl Fill {
    /// Job `job` of `plan`, with `depth` slots.
    pub fn new(plan: &IoPlan, job: u32, depth: usize) -> Self {
        let b = &plan.buffers;
        let v = &b.verify;
        let mode = if b.compress_pct > 0 || b.dedupe_pct > 0 {
            Mode::Compress
        } else if !b.pattern.is_empty() {
            Mode::Pattern
        } else if b.zero {
            Mode::Zero
        } else {
            Mode::Random
        };
        let scramble = b.scramble && !plan.shape.verify && mode == Mode::Random && !b.refill;
        let slice = (plan.shape.bs_max as usize).div_ceil(4096) * 4096;
        let depth = depth.max(1);
        let slices = if scramble {
            DISTINCT.div_ceil(depth * slice).clamp(1, 64)
        } else {
            1
        };
        // each fio thread's data are its own (fio seeds each buf_state)
        let td = b.td as u64 + job as u64;
        let seed = plan.seed ^ (td + 1).wrapping_mul(0xA24B_AED4_963E_E407);
        Fill {
            mode,
            refill: b.refill,
            scramble,
            slice,
            slices,
            next: vec![0; depth],
            count: 0,
            chunk: match b.compress_chunk {
                0 => plan.shape.bs as usize,
                c => (c as usize).min(plan.shape.bs as usize),
            },
            compress_pct: b.compress_pct.min(100),
            pattern: b.pattern.clone(),
            dedupe_pct: b.dedupe_pct.min(100),
            rng: fastrand::Rng::with_seed(seed),
            dedupe_rng: fastrand::Rng::with_seed(seed ^ 0x5851_F42D_4C95_7F2D),
            last_seed: None,
            ws: b.working_set.map(|w| {
                let pages = plan.shape.size.unwrap_or(0) * w.pct as u64 / 100 / plan.shape.bs.max(1);
                let tds = (b.tds as u64).max(td + 1);
                WorkingSet {
                    pages,
                    share: if w.global { (pages / tds).max(1) } else { pages.max(1) },
                    tds,
                    td,
                    unique: 0,
                    rng: fastrand::Rng::with_seed(seed ^ 0x2545_F491_4F6C_DD1D),
                    base: plan.seed,
                }
            }),
            job,
            seed: plan.seed,
            verify: plan.shape.verify.then_some(v.kind),
            verify_pattern: v.pattern.clone(),
            verify_fmts: v.pattern_offsets.clone(),
            fatal: v.fatal,
            failed: None,
            readback: if plan.shape.verify && plan.writes() {
                Readback::new(v.after_write, v.backlog, v.batch)
            } else {
                Readback::default()
            },
        }
    }

    /// Bytes of each slot's buffer.
    pub fn slot_len(&self) -> usize {
        self.slice * self.slices
    }

    /// The first contents of a slot's buffer, whose first block the caller
    /// filled with random bytes already.
    pub fn init(&mut self, buf: &mut [u8]) {
        match self.mode {
            Mode::Random => {
                let head = self.slice.min(buf.len());
                self.rng.fill(&mut buf[head..]);
            }
            _ => {
                // one fill per slice, as fio fills each io_u's buffer once
                // (a buffered reader's skew bytes after them are not one)
                for s in buf.chunks_exact_mut(self.slice) {
                    self.fill(s);
                }
            }
        }
    }

    /// This write's seed: a new one, or the last one for a repeated buffer
    /// (one of the working set's with dedupe_mode=working_set; at 100%
    /// fio repeats one buffer in either mode).
    fn buffer_seed(&mut self) -> u64 {
        let repeat = match self.dedupe_pct {
            0 => false,
            100 => true,
            p => self.dedupe_rng.u32(1..=100) <= p,
        };
        if let Some(ws) = self.ws.as_mut().filter(|_| self.dedupe_pct < 100) {
            return if repeat && ws.pages > 0 {
                ws.repeat()
            } else {
                ws.unique()
            };
        }
        match self.last_seed {
            Some(s) if repeat => s,
            _ => {
                let s = self.rng.u64(..);
                self.last_seed = Some(s);
                s
            }
        }
    }

    /// Fills `s` as the mode says (fio's fill_io_buffer).
    fn fill(&mut self, s: &mut [u8]) {
        match self.mode {
            Mode::Zero => s.fill(0),
            Mode::Pattern => verify::fill_pattern(s, &self.pattern, &[], 0),
            Mode::Random => fastrand::Rng::with_seed(self.buffer_seed()).fill(s),
            Mode::Compress => {
                let mut r = fastrand::Rng::with_seed(self.buffer_seed());
                let keep = 100 - self.compress_pct as usize;
                for c in s.chunks_mut(self.chunk.max(1)) {
                    let random = c.len() * keep / 100;
                    r.fill(&mut c[..random]);
                    if self.pattern.is_empty() {
                        c[random..].fill(0);
                    } else {
                        verify::fill_pattern(&mut c[random..], &self.pattern, &[], 0);
                    }
                }
            }
        }
    }

    /// Readies slot `slot`'s buffer for a write of `len` bytes at `offset`
    /// of `fd`; returns where the write takes its data from (within `buf`).
    #[inline]
    pub fn before_write(&mut self, buf: &mut AlignedBuf, slot: usize, fd: RawFd, offset: u64, len: usize) -> *mut u8 {
        let mut at = 0;
        if self.slices > 1 {
            let n = &mut self.next[slot];
            at = *n * self.slice;
            *n = (*n + 1) % self.slices;
        }
        self.count = self.count.wrapping_add(1);
        let block = &mut buf.as_mut_slice()[at..at + len];
        if self.refill {
            self.fill(block);
        } else if self.scramble {
            scramble(block, offset, self.count ^ self.seed.rotate_left(32));
        }
        if let Some(k) = self.verify {
            if !self.verify_pattern.is_empty() {
                verify::fill_pattern(block, &self.verify_pattern, &self.verify_fmts, offset);
            }
            let h = Header {
                offset,
                job: self.job,
                generation: self.count as u32,
                seed: self.seed,
            };
            verify::stamp_kind(block, h, k);
            self.readback.submitted(fd, offset);
        }
        buf.as_mut_slice()[at..].as_mut_ptr()
    }

    /// A write finished with `result`: its block may be read back.
    #[inline]
    pub fn written(&mut self, fd: RawFd, offset: u64, len: usize, result: i64) {
        self.readback.completed(fd, offset, len, result);
    }

    /// Checks a block read at `offset`; with verify_fatal, a mismatch stops the job.
    pub fn check(&mut self, block: &[u8], offset: u64) -> Result<(), String> {
        let r = match self.verify {
            Some(Kind::Pattern) => verify::check_pattern(block, &self.verify_pattern, &self.verify_fmts, offset),
            _ => verify::check(block, offset),
        };
        if let Err(e) = &r {
            if self.fatal && self.failed.is_none() {
                self.failed = Some(format!("verify: {e} (verify_fatal: the job stopped)"));
            }
        }
        r
    }

    /// True once verify_fatal stopped the job.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.failed.is_some()
    }

    /// Why the job stopped (verify_fatal after a mismatch).
    pub fn failed(&self) -> Option<String> {
        self.failed.clone()
    }
}

/// fio's small_content_scramble, with every word it writes mixed: in each
/// 512-byte chunk, two words at 48..64 from the chunk's offset and `stamp`
/// (fio: the time) through splitmix64's finalizer (a bijection, so the
/// chunks of one write never repeat each other, and a new stamp makes new
/// chunks). fio stores the raw offset and time, whose high bytes are
/// zeros, in two lines of the chunk; when one buffer is written block
/// after block its offset line moves every write, and after 8 writes 10%
/// of the bytes were zeros and gzip -1 took the file to 94% (measured: 64
/// MiB at bs=1m). Mixed words leave the bytes uniform (99.5% at every bs).
/// One cache line and one finalizer per chunk (fio touches two lines).
#[inline]
fn scramble(block: &mut [u8], offset: u64, stamp: u64) {
    let key = mix(stamp);
    let mut o = offset;
    for c in block.chunks_exact_mut(512) {
        let a = mix(o ^ key);
        // a multiply by an odd constant: a bijection of a's uniform bits
        let b = a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ key;
        c[48..56].copy_from_slice(&a.to_le_bytes());
        c[56..64].copy_from_slice(&b.to_le_bytes());
        o += 512;
    }
}

/// fio's dedupe working set in progress (dedupe.c, io_u.c
/// get_buf_state): a page is a seed of the job's data stream, the k-th
/// of thread `td`'s being `page(td, k)`; the job's own new buffers are its
/// pages in turn, and a repeated one is a page of the set: the job's first
/// `pages`, or with dedupe_global `share` first pages of each thread from
/// the job's own on.
struct WorkingSet {
    pages: u64,
    share: u64,
    tds: u64,
    td: u64,
    /// The job's new pages so far.
    unique: u64,
    rng: fastrand::Rng,
    base: u64,
}

impl WorkingSet {
    fn page(&self, td: u64, k: u64) -> u64 {
        mix(self.base ^ mix((td + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)) ^ k)
    }

    fn unique(&mut self) -> u64 {
        self.unique += 1;
        self.page(self.td, self.unique - 1)
    }

    /// A page drawn uniformly from the set (fio's
    /// dedupe_working_set_index_state draw).
    fn repeat(&mut self) -> u64 {
        let i = self.rng.u64(0..self.pages);
        let owner = (self.td + i / self.share) % self.tds;
        self.page(owner, i % self.share)
    }
}

/// splitmix64's finalizer: a bijection of u64 whose output bits each
/// depend on every input bit.
#[inline]
fn mix(x: u64) -> u64 {
    let x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::IoArgs;
    use std::collections::HashSet;

    fn plan(extra: impl FnOnce(&mut IoPlan)) -> IoPlan {
        let mut a = IoArgs {
            rw: "write".into(),
            rwmixread: "50".into(),
            bs: "4k".into(),
            jobs: "1".into(),
            engine: "null".into(),
            ..Default::default()
        };
        a.common.target = ".".into();
        a.common.quiet = true;
        let mut p = IoPlan::from_args(&a).unwrap();
        extra(&mut p);
        p
    }

    /// `n` writes of 4 KiB at consecutive offsets, as one file.
    fn write(p: &IoPlan, n: u64) -> Vec<u8> {
        let mut f = Fill::new(p, 0, 1);
        let mut b = AlignedBuf::new(f.slot_len(), 4096);
        fastrand::Rng::with_seed(1).fill(&mut b.as_mut_slice()[..4096]);
        f.init(b.as_mut_slice());
        let mut out = Vec::new();
        for i in 0..n {
            let at = f.before_write(&mut b, 0, 3, i * 4096, 4096) as usize - b.as_ptr() as usize;
            out.extend_from_slice(&b.as_mut_slice()[at..at + 4096]);
        }
        out
    }

    #[test]
    fn default_writes_never_repeat_a_chunk() {
        let data = write(&plan(|_| {}), 512);
        let chunks: HashSet<&[u8]> = data.chunks(512).collect();
        assert_eq!(chunks.len(), data.len() / 512);
    }

    #[test]
    fn large_blocks_written_again_and_again_stay_uniform() {
        // bs=1m with one slot: one slice, the same buffer every write, its
        // scrambled words rewritten; the stale words must not pile up zeros
        // (raw offsets did: 10% zero bytes after 8 writes, gzip -1 took 6%)
        let bs = 1 << 20;
        let p = plan(|p| {
            p.shape.bs = bs as u64;
            p.shape.bs_max = bs as u64;
        });
        let mut f = Fill::new(&p, 0, 1);
        assert_eq!(f.slot_len(), bs);
        let mut b = AlignedBuf::new(f.slot_len(), 4096);
        fastrand::Rng::with_seed(1).fill(&mut b.as_mut_slice()[..bs]);
        f.init(b.as_mut_slice());
        let mut zeros = 0;
        for i in 0..16u64 {
            let at = f.before_write(&mut b, 0, 3, i * bs as u64, bs) as usize - b.as_ptr() as usize;
            zeros += b.as_mut_slice()[at..at + bs].iter().filter(|x| **x == 0).count();
        }
        // uniform bytes: 1/256 = 0.39% zeros
        let share = zeros as f64 / (16 * bs) as f64;
        assert!(share < 0.005, "{:.2}% zero bytes", share * 100.0);
    }

    #[test]
    fn without_scramble_blocks_repeat() {
        let data = write(&plan(|p| p.buffers.scramble = false), 16);
        let blocks: HashSet<&[u8]> = data.chunks(4096).collect();
        assert_eq!(blocks.len(), 1);
    }

    #[test]
    fn compress_percentage_zeroes_the_tail_of_each_chunk() {
        let data = write(
            &plan(|p| {
                p.buffers.compress_pct = 25;
                p.buffers.refill = true;
                p.buffers.compress_chunk = 1024;
            }),
            8,
        );
        let zeros = data.iter().filter(|b| **b == 0).count() as f64 / data.len() as f64;
        assert!((zeros - 0.25).abs() < 0.01, "{zeros}");
        for c in data.chunks(1024) {
            assert!(c[768..].iter().all(|b| *b == 0));
        }
    }

    #[test]
    fn dedupe_percentage_repeats_that_share_of_buffers() {
        let data = write(
            &plan(|p| {
                p.buffers.dedupe_pct = 40;
                p.buffers.refill = true;
            }),
            2000,
        );
        let blocks: HashSet<&[u8]> = data.chunks(4096).collect();
        let unique = blocks.len() as f64 / 2000.0;
        assert!((unique - 0.6).abs() < 0.05, "{unique}");
    }

    #[test]
    fn verified_writes_check_and_verify_fatal_stops() {
        for kind in [Kind::Md5, Kind::Crc64, Kind::Sha256, Kind::Pattern] {
            let p = plan(|p| {
                p.shape.verify = true;
                p.buffers.verify.kind = kind;
                p.buffers.verify.fatal = true;
                p.buffers.verify.pattern = vec![0xde, 0xad, 0, 0, 0, 0, 0, 0, 0, 0];
                p.buffers.verify.pattern_offsets = vec![2];
            });
            let mut f = Fill::new(&p, 0, 1);
            let mut b = AlignedBuf::new(f.slot_len(), 4096);
            f.init(b.as_mut_slice());
            let at = f.before_write(&mut b, 0, 3, 8192, 4096) as usize - b.as_ptr() as usize;
            let mut block = b.as_mut_slice()[at..at + 4096].to_vec();
            assert_eq!(f.check(&block, 8192), Ok(()), "{kind:?}");
            assert!(!f.stopped());
            block[3000] ^= 1;
            assert!(f.check(&block, 8192).is_err(), "{kind:?}");
            assert!(f.stopped() && f.failed().unwrap().contains("verify_fatal"));
        }
    }

    #[test]
    fn patterns_and_zeros() {
        let data = write(
            &plan(|p| {
                p.buffers.pattern = vec![1, 2, 3];
                p.buffers.scramble = false;
            }),
            2,
        );
        for b in data.chunks(4096) {
            assert!(b.chunks(3).all(|c| c == &[1, 2, 3][..c.len()]));
        }
        let data = write(
            &plan(|p| {
                p.buffers.zero = true;
                p.buffers.scramble = false;
            }),
            2,
        );
        assert!(data.iter().all(|b| *b == 0));
    }
}
