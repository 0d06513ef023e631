//! The io workload: sequential or random reads and writes of `bs` blocks over a
//! region of one file, mixed by `rwmixread`, with an fsync every N writes.

use super::{AlignedBuf, NextOp, Workload};
use crate::engine::Op;
use crate::plan::IoPlan;
use crate::stats::Dir;
use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};

/// One job's stream of reads and writes.
pub struct IoWorkload {
    /// Keeps the file open while the workload runs (None for the null engine).
    _file: Option<File>,
    fd: RawFd,
    rng: fastrand::Rng,
    read_pct: u32,
    random: bool,
    bs: u64,
    /// Number of blocks in the file region.
    blocks: u64,
    /// Next sequential block per direction (relative to `first_block`).
    seq: [u64; 2],
    /// Bytes still to move when size-based.
    remaining: Option<u64>,
    fsync_every: u64,
    writes_since_fsync: u64,
    /// One buffer per in-flight slot. Writes send its random contents; reads
    /// overwrite it with file data, which is random too (laid out so).
    bufs: Vec<AlignedBuf>,
}

impl IoWorkload {
    /// Job `job` of `plan`, on `fd` whose usable size is `file_size`. With a
    /// shared file, sequential jobs start at evenly spread offsets.
    pub fn new(plan: &IoPlan, job: u32, file: Option<File>, file_size: u64, shared: bool, depth: usize) -> Self {
        let fd = file.as_ref().map(|f| f.as_raw_fd()).unwrap_or(-1);
        let blocks = (file_size / plan.bs).max(1);
        let start = if shared && !plan.rw.random() {
            blocks * job as u64 / plan.jobs as u64
        } else {
            0
        };
        let mut rng = fastrand::Rng::with_seed(plan.seed ^ (job as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let bufs = (0..depth.max(1))
            .map(|_| {
                let mut b = AlignedBuf::new(plan.bs as usize, 4096);
                rng.fill(b.as_mut_slice());
                b
            })
            .collect();
        IoWorkload {
            _file: file,
            fd,
            rng,
            read_pct: plan.rw.read_pct(plan.rwmixread),
            random: plan.rw.random(),
            bs: plan.bs,
            blocks,
            seq: [start, start],
            remaining: if plan.runtime.is_some() {
                None
            } else {
                Some(blocks * plan.bs)
            },
            fsync_every: plan.fsync_every,
            writes_since_fsync: 0,
            bufs,
        }
    }
}

impl Workload for IoWorkload {
    fn files(&self) -> Vec<RawFd> {
        if self.fd >= 0 {
            vec![self.fd]
        } else {
            vec![]
        }
    }

    fn buffers(&self) -> Vec<(*mut u8, usize)> {
        self.bufs.iter().map(|b| (b.as_ptr(), b.len())).collect()
    }

    #[inline]
    fn next_op(&mut self, slot: usize) -> Option<NextOp> {
        if self.fsync_every > 0 && self.writes_since_fsync >= self.fsync_every {
            self.writes_since_fsync = 0;
            return Some(NextOp {
                op: Op::Fsync { fd: self.fd },
                dir: Dir::Fsync,
                len: 0,
            });
        }
        if let Some(r) = &mut self.remaining {
            if *r == 0 {
                return None;
            }
            *r = r.saturating_sub(self.bs);
        }
        let read = match self.read_pct {
            100 => true,
            0 => false,
            p => self.rng.u32(0..100) < p,
        };
        let block = if self.random {
            self.rng.u64(0..self.blocks)
        } else {
            let s = &mut self.seq[!read as usize];
            let b = *s;
            *s = if b + 1 >= self.blocks { 0 } else { b + 1 };
            b
        };
        let offset = block * self.bs;
        let len = self.bs as usize;
        let buf = self.bufs[slot].as_ptr();
        let buf_index = slot as u16;
        Some(if read {
            NextOp {
                op: Op::Read {
                    fd: self.fd,
                    offset,
                    buf,
                    len,
                    buf_index,
                },
                dir: Dir::Read,
                len: self.bs,
            }
        } else {
            self.writes_since_fsync += 1;
            NextOp {
                op: Op::Write {
                    fd: self.fd,
                    offset,
                    buf,
                    len,
                    buf_index,
                },
                dir: Dir::Write,
                len: self.bs,
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
        let mut w = IoWorkload::new(&p, 0, None, 64 * 4096, false, 1);
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
        let mut w = IoWorkload::new(&p, 0, None, 1 << 20, false, 1);
        let (mut r, mut wr, mut fs) = (0, 0, 0);
        let mut since = 0;
        for _ in 0..100_000 {
            let op = w.next_op(0).unwrap();
            match op.dir {
                Dir::Read => r += 1,
                Dir::Write => {
                    wr += 1;
                    since += 1;
                    assert!(since <= 4);
                }
                Dir::Fsync => {
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
