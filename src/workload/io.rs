//! The io workload: sequential or random reads and writes over a region of
//! one or more files (`nrfiles`, used in turn), mixed by `rwmixread`, with a
//! fixed block size, a range of sizes or a weighted split (fio's bsrange and
//! bssplit), an fsync or fdatasync every N writes, a final fsync of every
//! file, and an optional think time between operations.

use super::{AlignedBuf, NextOp, Workload};
use crate::engine::Op;
use crate::plan::IoPlan;
use crate::stats::Instant;
use crate::stats::OpKind;
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
    rng: fastrand::Rng,
    read_pct: u32,
    random: bool,
    /// Smallest block size: offsets are multiples of it.
    bs: u64,
    bs_max: u64,
    /// Cumulative (percent, size) for bssplit.
    split: Vec<(u32, u64)>,
    /// Bytes of each file.
    file_size: u64,
    /// Added to every offset: a rank's region of a file all ranks share.
    base: u64,
    /// Next sequential offset per file and direction.
    seq: Vec<[u64; 2]>,
    /// Bytes still to move when size-based.
    remaining: Option<u64>,
    fsync_every: u64,
    fdatasync_every: u64,
    writes_since_fsync: u64,
    writes_since_fdatasync: u64,
    /// Files still to fsync at the end (end_fsync).
    end_fsyncs: usize,
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
    /// With a shared file, sequential jobs start at evenly spread offsets.
    pub fn new(plan: &IoPlan, job: u32, files: Vec<File>, file_size: u64, shared: bool, depth: usize) -> Self {
        let fds: Vec<RawFd> = if files.is_empty() {
            vec![-1]
        } else {
            files.iter().map(|f| f.as_raw_fd()).collect()
        };
        let blocks = (file_size / plan.bs).max(1);
        let start = if shared && !plan.rw.random() {
            blocks * job as u64 / plan.jobs as u64 * plan.bs
        } else {
            0
        };
        let mut rng = fastrand::Rng::with_seed(plan.seed ^ (job as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut fill = super::fill::Fill::new(plan, job, depth.max(1));
        let bufs = (0..depth.max(1))
            .map(|_| {
                let mut b = AlignedBuf::new(fill.slot_len(), 4096);
                rng.fill(&mut b.as_mut_slice()[..plan.bs_max as usize]);
                fill.init(b.as_mut_slice());
                b
            })
            .collect();
        let mut acc = 0;
        let split = plan
            .bssplit
            .iter()
            .map(|&(size, pct)| {
                acc += pct;
                (acc, size)
            })
            .collect();
        let n = fds.len();
        IoWorkload {
            _files: files,
            next_file: 0,
            rng,
            read_pct: plan.rw.read_pct(plan.rwmixread),
            random: plan.rw.random(),
            bs: plan.bs,
            bs_max: plan.bs_max,
            split,
            file_size: file_size.max(plan.bs_max),
            base: 0,
            seq: vec![[start, start]; n],
            remaining: if plan.time_based {
                None
            } else {
                Some(blocks * plan.bs * n as u64)
            },
            fsync_every: plan.fsync_every,
            fdatasync_every: plan.fdatasync_every,
            writes_since_fsync: 0,
            writes_since_fdatasync: 0,
            end_fsyncs: if plan.end_fsync && plan.writes() { n } else { 0 },
            thinktime: plan.thinktime,
            last_done: None,
            verify: plan.verify,
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
        let (buf, buf_index) = (self.bufs[slot].as_ptr(), slot as u16);
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
        })
    }

    /// This operation's length: fixed, from the split, or a multiple of the
    /// smallest size within the range.
    #[inline]
    fn next_len(&mut self) -> u64 {
        if !self.split.is_empty() {
            let r = self.rng.u32(0..100);
            return self
                .split
                .iter()
                .find(|(c, _)| r < *c)
                .map(|x| x.1)
                .unwrap_or(self.bs_max);
        }
        if self.bs_max == self.bs {
            return self.bs;
        }
        self.bs * self.rng.u64(1..=self.bs_max / self.bs)
    }
}

impl Workload for IoWorkload {
    fn files(&self) -> Vec<RawFd> {
        self.fds.iter().copied().filter(|&fd| fd >= 0).collect()
    }

    fn buffers(&self) -> Vec<(*mut u8, usize)> {
        self.bufs.iter().map(|b| (b.as_ptr(), b.len())).collect()
    }

    fn on_complete(&mut self, op: &NextOp, result: i64) -> i64 {
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
        self.fill.failed()
    }

    fn waits(&self) -> bool {
        !self.fill.stopped()
            && self
                .fill
                .readback
                .waits(self.remaining == Some(0) && self.end_fsyncs == 0)
    }

    fn next_due(&mut self) -> Option<Instant> {
        Some(self.last_done? + self.thinktime?)
    }

    #[inline]
    fn next_op(&mut self, slot: usize) -> Option<NextOp> {
        let fd = self.fds[self.next_file];
        if self.fsync_every > 0 && self.writes_since_fsync >= self.fsync_every {
            self.writes_since_fsync = 0;
            return Some(NextOp {
                op: Op::Fsync { fd },
                dir: OpKind::Fsync,
                len: 0,
            });
        }
        if self.fdatasync_every > 0 && self.writes_since_fdatasync >= self.fdatasync_every {
            self.writes_since_fdatasync = 0;
            return Some(NextOp {
                op: Op::Fdatasync { fd },
                // counted with fsync, as fio's "sync" statistics are
                dir: OpKind::Fsync,
                len: 0,
            });
        }
        if self.fill.stopped() {
            return None;
        }
        if let Some(op) = self.read_back(slot, false) {
            return Some(op);
        }
        let len = self.next_len();
        if let Some(r) = &mut self.remaining {
            if *r == 0 {
                if self.end_fsyncs > 0 {
                    self.end_fsyncs -= 1;
                    return Some(NextOp {
                        op: Op::Fsync {
                            fd: self.fds[self.end_fsyncs],
                        },
                        dir: OpKind::Fsync,
                        len: 0,
                    });
                }
                return self.read_back(slot, true);
            }
            *r = r.saturating_sub(len);
        }
        let read = match self.read_pct {
            100 => true,
            0 => false,
            p => self.rng.u32(0..100) < p,
        };
        let f = self.next_file;
        if self.fds.len() > 1 {
            self.next_file = (f + 1) % self.fds.len();
        }
        let offset = self.base
            + if self.random {
                self.bs * self.rng.u64(0..=(self.file_size - len) / self.bs)
            } else {
                let s = &mut self.seq[f][!read as usize];
                if *s + len > self.file_size {
                    *s = 0;
                }
                let o = *s;
                *s += len;
                o
            };
        let mut buf = self.bufs[slot].as_ptr();
        let buf_index = slot as u16;
        let len_usize = len as usize;
        Some(if read {
            NextOp {
                op: Op::Read {
                    fd,
                    offset,
                    buf,
                    len: len_usize,
                    buf_index,
                },
                dir: OpKind::Read,
                len,
            }
        } else {
            self.writes_since_fsync += 1;
            self.writes_since_fdatasync += 1;
            buf = self
                .fill
                .before_write(&mut self.bufs[slot], slot, fd, offset, len_usize);
            NextOp {
                op: Op::Write {
                    fd,
                    offset,
                    buf,
                    len: len_usize,
                    buf_index,
                },
                dir: OpKind::Write,
                len,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::IoArgs;

    fn plan(rw: &str, extra: impl FnOnce(&mut IoArgs)) -> IoPlan {
        let mut a = IoArgs {
            rw: rw.into(),
            rwmixread: "90".into(),
            bs: "4k".into(),
            jobs: "1".into(),
            engine: "null".into(),
            ..Default::default()
        };
        a.common.target = ".".into();
        a.common.quiet = true;
        extra(&mut a);
        IoPlan::from_args(&a).unwrap()
    }

    #[test]
    fn size_based_sequential_covers_the_file_once() {
        let p = plan("write", |_| {});
        let mut w = IoWorkload::new(&p, 0, vec![], 64 * 4096, false, 1);
        let mut offs = vec![];
        while let Some(op) = w.next_op(0) {
            if let Op::Write { offset, .. } = op.op {
                offs.push(offset);
            }
        }
        assert_eq!(offs, (0..64).map(|b| b * 4096).collect::<Vec<_>>());
    }

    #[test]
    fn mix_and_fsync_cadence() {
        let p = plan("randrw", |a| {
            a.runtime = Some("1s".into());
            a.fsync = Some("4".into());
        });
        let mut w = IoWorkload::new(&p, 0, vec![], 1 << 20, false, 1);
        let (mut r, mut wr, mut fs) = (0, 0, 0);
        let mut since = 0;
        for _ in 0..100_000 {
            let op = w.next_op(0).unwrap();
            match op.dir {
                OpKind::Read => r += 1,
                OpKind::Write => {
                    wr += 1;
                    since += 1;
                    assert!(since <= 4);
                }
                OpKind::Fsync => {
                    assert_eq!(since, 4);
                    since = 0;
                    fs += 1;
                }
                other => panic!("io workload produced {other:?}"),
            }
            if let Op::Read { offset, .. } | Op::Write { offset, .. } = op.op {
                assert!(offset % 4096 == 0 && offset < 1 << 20);
            }
        }
        let share = r as f64 / (r + wr) as f64;
        assert!((share - 0.9).abs() < 0.01, "read share {share}");
        assert_eq!(fs, wr / 4);
    }
}
