//! The io workload: sequential or random reads and writes (or fio's trims,
//! alone or each followed by a write of its range) over a region of
//! one or more files (`nrfiles`, used in turn), mixed by `rwmixread`, with a
//! fixed block size, a range of sizes or a weighted split (fio's bsrange and
//! bssplit), an fsync or fdatasync every N writes, a final fsync of every
//! file, and an optional think time between operations.

mod passes;
mod prio;
mod region;
mod seqnr;
mod sizes;
mod syncs;

use super::{AlignedBuf, NextOp, Workload};
use crate::engine::Op;
use crate::plan::IoPlan;
use crate::stats::Instant;
use crate::stats::OpKind;
use region::Region;
use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// Error code counted for a read whose data fails verification ("VERIFY_MISMATCH").
pub use crate::errno::VERIFY_MISMATCH;
/// Mismatches described one by one; the rest are counted.
const MAX_NOTES: usize = 20;

/// One job's stream of reads and writes.
pub struct IoWorkload {
    /// Keeps the files open while the workload runs (empty for the null engine).
    _files: Vec<File>,
    /// One per file; `[-1]` for the null engine.
    fds: Vec<RawFd>,
    /// The file the next operation goes to (round robin, as fio's default).
    next_file: usize,
    /// Where the job is in its files, and when it is done.
    region: Region,
    fsync_on_close: bool,
    rng: fastrand::Rng,
    read_pct: u32,
    /// The next read or write's direction (true: read) when already drawn
    /// (`next_dir`) or set by the pacer.
    next_read: Option<bool>,
    random: bool,
    /// fio's trim directions: every I/O the region hands out is a trim.
    trims: bool,
    /// trimwrite, randtrimwrite: each trim is followed by a write of its range.
    trim_writes: bool,
    /// That write, when the last I/O was its trim: (fd, offset, len).
    paired: Option<(RawFd, u64, usize)>,
    /// Smallest block size: offsets are multiples of it.
    bs: u64,
    /// Random offsets are multiples of this: fio's blockalign, else `bs`.
    align: u64,
    bs_max: u64,
    /// Each read's and write's length (bs, bsrange, bssplit).
    sizes: sizes::Sizes,
    /// Bytes of each file.
    file_size: u64,
    /// Added to every offset: a rank's region of a file all ranks share.
    base: u64,
    /// fio's loop_cache_invalidate: a buffered job with invalidate drops
    /// its region's cached pages at each new pass (a wrap of a timed job, a
    /// new loop), as fio does, so that later passes read what fio's read.
    invalidate_passes: bool,
    /// Where in its slot's buffer a read lands (`FIO_BUFFERED_SKEW` or 0).
    read_skew: usize,
    /// Next sequential offset per file and direction.
    seq: Vec<[u64; 2]>,
    /// fio's sequential offset modifier (`RegionPlan::seq_add`).
    seq_add: i64,
    /// fio's random one, `rw=randread:N` (`RegionPlan::rand_seq`).
    seq_nr: Option<seqnr::SeqNr>,
    fsync_every: u64,
    fdatasync_every: u64,
    writes_since_fsync: u64,
    writes_since_fdatasync: u64,
    /// Files still to fsync at the end (end_fsync).
    end_fsyncs: usize,
    /// Operations handed out and not yet completed.
    inflight: usize,
    /// An end_fsync that failed.
    end_error: Option<String>,
    /// A size-based job has issued its last read or write (`end_op`).
    issued_all: bool,
    /// fio's cmdprio: each read's and write's priority.
    prio: prio::PrioDraw,
    /// fio's fill_device: a write's ENOSPC (or EDQUOT) fills the target
    /// (`full`), which ends the job as its size would, not as an error.
    fill_device: bool,
    full: bool,
    thinktime: Option<Duration>,
    last_done: Option<Instant>,
    /// --verify: stamp written blocks, check read ones.
    verify: bool,
    /// What writes carry, and the blocks read back (workload::fill).
    fill: super::fill::Fill,
    mismatches: u64,
    notes: Vec<String>,
    /// One buffer per in-flight slot. Writes send its random contents; reads
    /// overwrite it with file data, which is random too (laid out so).
    bufs: Vec<AlignedBuf>,
}

impl IoWorkload {
    /// Works in `[base, base + file_size)` of its files instead of from 0.
    pub fn with_base(mut self, base: u64) -> Self {
        self.base = base;
        self
    }

    /// Gives rank `rank` of a distributed run its own random stream (rank 0
    /// keeps the one a single process has, so `--seed` still reproduces it).
    pub fn for_rank(mut self, rank: usize) -> Self {
        if rank > 0 {
            let s = self.rng.u64(..) ^ (rank as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
            self.rng = fastrand::Rng::with_seed(s);
        }
        self
    }

    /// Job `job` of `plan`, on `files` (each of usable size `file_size`).
    /// With a shared file, sequential jobs start at evenly spread offsets
    /// (`fslab io --shared-file`); a fio job's clones all start at the
    /// file's start (or their `offset_increment`), as fio's do.
    pub fn new(plan: &IoPlan, job: u32, files: Vec<File>, file_size: u64, shared: bool, depth: usize) -> Self {
        let fds: Vec<RawFd> = if files.is_empty() {
            vec![-1]
        } else {
            files.iter().map(|f| f.as_raw_fd()).collect()
        };
        let blocks = (file_size / plan.shape.bs).max(1);
        let start = if shared && !plan.shape.rw.random() && !plan.region.fio {
            blocks * job as u64 / plan.jobs as u64 * plan.shape.bs
        } else {
            0
        };
        let mut rng = fastrand::Rng::with_seed(plan.seed ^ (job as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut fill = super::fill::Fill::new(plan, job, depth.max(1));
        let read_skew = if plan.region.fio && !plan.ioengine.direct {
            FIO_BUFFERED_SKEW
        } else {
            0
        };
        let bufs = (0..depth.max(1))
            .map(|_| {
                let mut b = AlignedBuf::new(fill.slot_len() + read_skew, 4096);
                rng.fill(&mut b.as_mut_slice()[..plan.shape.bs_max as usize]);
                fill.init(b.as_mut_slice());
                b
            })
            .collect();
        let n = fds.len();
        let region = Region::new(plan, n, file_size.max(plan.shape.bs_max), &mut rng);
        let start = if plan.region.fio { 0 } else { start };
        // fio's should_fsync: only a job that writes data syncs (a trim-only one does not)
        let syncs = plan.writes() && (!plan.shape.rw.trims() || plan.shape.rw.trim_writes());
        IoWorkload {
            _files: files,
            next_file: 0,
            region,
            fsync_on_close: plan.region.fsync_on_close && syncs,
            rng,
            read_pct: plan.shape.rw.read_pct(plan.shape.rwmixread),
            next_read: None,
            random: plan.shape.rw.random(),
            trims: plan.shape.rw.trims(),
            trim_writes: plan.shape.rw.trim_writes(),
            paired: None,
            bs: plan.shape.bs,
            align: plan.shape.blockalign.unwrap_or(plan.shape.bs),
            bs_max: plan.shape.bs_max,
            sizes: sizes::Sizes::new(&plan.shape),
            file_size: file_size.max(plan.shape.bs_max),
            base: 0,
            invalidate_passes: plan.region.invalidate && !plan.ioengine.direct,
            read_skew,
            seq: vec![[start, start]; n],
            seq_add: plan.region.seq_add,
            seq_nr: seqnr::SeqNr::new(plan, n),
            fsync_every: plan.shape.fsync_every,
            fdatasync_every: plan.shape.fdatasync_every,
            writes_since_fsync: 0,
            writes_since_fdatasync: 0,
            end_fsyncs: if plan.shape.end_fsync && syncs { n } else { 0 },
            inflight: 0,
            end_error: None,
            issued_all: false,
            prio: prio::PrioDraw::new(plan.ioengine.cmdprio.as_ref(), plan.seed ^ job as u64),
            fill_device: plan.region.fill,
            full: false,
            thinktime: plan.shape.thinktime,
            last_done: None,
            verify: plan.shape.verify,
            fill,
            mismatches: 0,
            notes: Vec::new(),
            bufs,
            fds,
        }
    }

    /// The next block to read back and check (fio's verify_backlog, and
    /// do_verify once `writes_done`), into slot `slot`'s buffer.
    fn read_back(&mut self, slot: usize, writes_done: bool) -> Option<NextOp> {
        let (fd, offset, len) = self.fill.readback.next(writes_done)?;
        let (buf, buf_index) = (self.bufs[slot].as_ptr().wrapping_add(self.read_skew), slot as u16);
        Some(NextOp {
            op: Op::Read {
                fd,
                offset,
                buf,
                len,
                buf_index,
            },
            dir: OpKind::Read,
            len: len as u64,
            prio: 0,
        })
    }

    /// rwmixread's draw: true for a read.
    #[inline]
    fn draw_read(&mut self) -> bool {
        match self.read_pct {
            100 => true,
            0 => false,
            p => self.rng.u32(0..100) < p,
        }
    }

    /// This operation's length (`sizes::Sizes::next`).
    #[inline]
    fn next_len(&mut self, read: bool) -> u64 {
        self.sizes.next(&mut self.rng, read)
    }

    /// The end of a size-based job: the final fsyncs (end_fsync), then
    /// reading the written blocks back (do_verify), then none.
    fn end_op(&mut self, slot: usize) -> Option<NextOp> {
        self.issued_all = true;
        if self.end_fsyncs > 0 {
            if self.inflight > 0 {
                // asked again after a completion (`waits`)
                return None;
            }
            self.end_fsync();
        }
        self.read_back(slot, true)
    }

    #[inline]
    /// The next operation (`Workload::next_op`, which counts it in flight).
    fn pick_op(&mut self, slot: usize) -> Option<NextOp> {
        if self.region.create_only {
            return None;
        }
        if let Some(sync) = self.cadence_sync() {
            return Some(sync);
        }
        if self.fill.stopped() {
            return None;
        }
        if let Some(op) = self.read_back(slot, false) {
            return Some(op);
        }
        if let Some((fd, offset, len)) = self.paired.take() {
            // the write of a trimwrite's pair, issued even when the trim
            // was the region's last
            return Some(self.write_op(slot, fd, offset, len));
        }
        let mut len = self.next_len(true);
        if self.full || !self.region.may_issue() {
            return self.end_op(slot);
        }
        let read = self.next_read.take().unwrap_or_else(|| self.draw_read());
        if !read && self.sizes.own_write() {
            len = self.next_len(false);
        }
        let (f, offset) = loop {
            let Some(f) = self.pick_file() else {
                // every file done: the pass is over
                if !self.region.next_pass() {
                    return self.end_op(slot);
                }
                self.reset_files();
                continue;
            };
            match self.offset_in(f, &mut len, read) {
                Some(o) => break (f, o),
                None => self.region.done[f] = true,
            }
        };
        self.region.issued(len);
        let fd = self.fds[f];
        let offset = self.base + offset;
        let len_usize = len as usize;
        if self.trims {
            // fio's trimwrite: the write goes where the trim went (io_u.c
            // get_next_offset, get_next_buflen); only the trims count
            // toward the region's bytes, as fio doubles its total for them
            if self.trim_writes {
                self.paired = Some((fd, offset, len_usize));
            }
            return Some(NextOp {
                op: Op::Trim {
                    fd,
                    offset,
                    len: len_usize,
                },
                dir: OpKind::Trim,
                len,
                prio: 0,
            });
        }
        if !read {
            return Some(self.write_op(slot, fd, offset, len_usize));
        }
        // within the slot's buffer: it has `read_skew` bytes more
        let buf = self.bufs[slot].as_ptr().wrapping_add(self.read_skew);
        Some(NextOp {
            op: Op::Read {
                fd,
                offset,
                buf,
                len: len_usize,
                buf_index: slot as u16,
            },
            dir: OpKind::Read,
            len,
            prio: self.prio.pick(true, len),
        })
    }

    /// A write of `len` bytes at `offset` of `fd` from slot `slot`'s buffer.
    fn write_op(&mut self, slot: usize, fd: RawFd, offset: u64, len: usize) -> NextOp {
        self.writes_since_fsync += 1;
        self.writes_since_fdatasync += 1;
        let buf = self.fill.before_write(&mut self.bufs[slot], slot, fd, offset, len);
        NextOp {
            op: Op::Write {
                fd,
                offset,
                buf,
                len,
                buf_index: slot as u16,
            },
            dir: OpKind::Write,
            len: len as u64,
            prio: self.prio.pick(false, len as u64),
        }
    }

    /// The file of the next I/O (`Region::pick_file`); None when this pass
    /// is done with all.
    fn pick_file(&mut self) -> Option<usize> {
        let f = self.region.pick_file(self.next_file, &mut self.rng)?;
        self.next_file = f;
        Some(f)
    }

    /// Where in file `f` an I/O of `len` bytes goes; None when this pass is
    /// done with the file (its end reached, or every block of its map used).
    fn offset_in(&mut self, f: usize, len: &mut u64, read: bool) -> Option<u64> {
        match self.seq_nr {
            Some(_) => self.offset_seq_nr(f, len, read),
            None => self.offset_drawn(f, len, read),
        }
    }

    /// `offset_in` as drawn for this I/O alone (`seqnr` draws only some).
    fn offset_drawn(&mut self, f: usize, len: &mut u64, read: bool) -> Option<u64> {
        let size = self.file_size;
        // strided zones: offsets in the zone; one past the file's end ends
        // the pass, as fio's get_next_offset fails there
        let zone = self.region.zone_step(f, &mut self.seq[f], !read as usize, size);
        let (zstart, span) = zone.unwrap_or((0, size));
        let min = self.sizes.min(read);
        if self.region.maps.is_some() {
            let o = zstart + self.mapped_offset(f, len, span)?;
            return (o + (*len).max(min) <= size).then_some(o);
        }
        if !self.random && self.bs_max != self.bs {
            // a drawn size that passes the file's end is drawn again until
            // it fits, as fio does (`io_u_fits` in `get_next_buflen`), when
            // the smallest does: the pass reads the file to its end
            let o = self.seq[f][!read as usize];
            if o + *len > size && o + self.bs <= size {
                for _ in 0..64 {
                    *len = self.next_len(read);
                    if o + *len <= size {
                        break;
                    }
                }
                if o + *len > size {
                    *len = (size - o) / self.bs * self.bs;
                }
            }
        }
        let len = *len;
        // fio's blockalign (the block size when not given)
        let align = self.align;
        if len > size {
            return None;
        }
        let last = (span.max(len) - len) / align;
        if !self.random {
            let mut o = self.seq[f][!read as usize];
            if self.seq_add != 0 && o != 0 && o < size {
                // fio's get_next_seq_offset: the modifier is added to the
                // last end; past either end of the file it wraps, forward
                // holes to the start, backwards to the end plus the modifier
                let p = o as i128 + self.seq_add as i128;
                o = if p < 0 || p >= size as i128 {
                    if self.seq_add > 0 {
                        0
                    } else {
                        (size as i128 + self.seq_add as i128).max(0) as u64
                    }
                } else {
                    p as u64
                };
            }
            if o + len > size {
                if !self.region.wrap || zone.is_some() {
                    return None;
                }
                o = 0;
                self.drop_cache(f);
            }
            self.seq[f][!read as usize] = o + len;
            return Some(o);
        }
        let b = match &self.region.dist {
            Some(d) => {
                let b = d.next(&mut self.rng);
                if b > last {
                    b % (last + 1)
                } else {
                    b
                }
            }
            None => self.rng.u64(0..=last),
        };
        let o = zstart + align * b;
        (o + len.max(min) <= size).then_some(o)
    }
}

impl Drop for IoWorkload {
    /// fio's fsync_on_close: each file is fsynced as the job closes it
    /// (here after the timed phase: the sync is not in the job's figures).
    fn drop(&mut self) {
        if self.fsync_on_close {
            for f in &self._files {
                let _ = f.sync_all();
            }
        }
    }
}

/// Bytes past a page boundary where a buffered fio job's reads land: where
/// fio's own buffer does (fio 3.33 page-aligns its buffers only for
/// O_DIRECT or mem_align; else they are malloc's, 16 bytes into an mmap'd
/// page). The copy from the page cache cares: 1 MiB cached sequential
/// reads into a page-aligned buffer ran at 0.93-0.97x fio's here, 16 bytes
/// in at 0.96-1.05x (4 alternating rounds each; 64 bytes in was as slow as
/// page-aligned). Writes and `fslab io` keep page-aligned buffers.
const FIO_BUFFERED_SKEW: usize = 16;

impl Workload for IoWorkload {
    fn files(&self) -> Vec<RawFd> {
        self.fds.iter().copied().filter(|&fd| fd >= 0).collect()
    }

    fn buffers(&self) -> Vec<(*mut u8, usize)> {
        self.bufs.iter().map(|b| (b.as_ptr(), b.len())).collect()
    }

    fn on_complete(&mut self, op: &NextOp, mut result: i64) -> i64 {
        self.inflight -= 1;
        let no_space = [-(libc::ENOSPC as i64), -(libc::EDQUOT as i64)].contains(&result);
        if self.fill_device && no_space && matches!(op.op, Op::Write { .. }) {
            // fio's fill_device end: counted as an I/O that moved nothing
            self.full = true;
            result = 0;
        }
        if self.thinktime.is_some() {
            self.last_done = Some(Instant::now());
        }
        if self.verify {
            if let Op::Write { fd, offset, len, .. } = op.op {
                self.fill.written(fd, offset, len, result);
            }
            if let Op::Read { buf, offset, len, .. } = op.op {
                if result == len as i64 {
                    // SAFETY: the slot's buffer holds `len` bytes just read; it is
                    // not reused before this completion is handled.
                    let block = unsafe { std::slice::from_raw_parts(buf as *const u8, len) };
                    if let Err(e) = self.fill.check(block, offset) {
                        self.mismatches += 1;
                        if self.notes.len() < MAX_NOTES {
                            self.notes.push(format!("verify: {e}"));
                        }
                        return -(VERIFY_MISMATCH as i64);
                    }
                }
            }
        }
        result
    }

    fn notes(&mut self) -> Vec<String> {
        let mut n = std::mem::take(&mut self.notes);
        if self.mismatches > MAX_NOTES as u64 {
            n.push(format!(
                "verify: {} more mismatches not listed",
                self.mismatches - MAX_NOTES as u64
            ));
        }
        n
    }

    fn error(&self) -> Option<String> {
        self.fill.failed().or_else(|| self.end_error.clone())
    }

    fn waits(&self) -> bool {
        let ending = self.issued_all && self.end_fsyncs > 0 && self.inflight > 0;
        ending || !self.fill.stopped() && self.fill.readback.waits(self.issued_all && self.end_fsyncs == 0)
    }

    fn next_due(&mut self) -> Option<Instant> {
        Some(self.last_done? + self.thinktime?)
    }

    fn next_dir(&mut self) -> Option<OpKind> {
        if self.trims {
            return Some(if self.paired.is_some() {
                OpKind::Write
            } else {
                OpKind::Trim
            });
        }
        let read = match self.next_read {
            Some(r) => r,
            None => {
                let r = self.draw_read();
                self.next_read = Some(r);
                r
            }
        };
        Some(if read { OpKind::Read } else { OpKind::Write })
    }

    fn set_next_dir(&mut self, dir: OpKind) {
        // a trim job's directions are its own (the pacer steers only a mix)
        if self.trims {
            return;
        }
        self.next_read = Some(dir == OpKind::Read);
    }

    #[inline]
    fn next_op(&mut self, slot: usize) -> Option<NextOp> {
        let op = self.pick_op(slot)?;
        self.inflight += 1;
        Some(op)
    }
}

#[cfg(test)]
mod tests;
