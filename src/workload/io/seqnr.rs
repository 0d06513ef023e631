//! fio's random offset modifier, `rw=randread:N` (options.c `str_rw_cb`
//! sets ddir_seq_nr; io_u.c `get_next_offset`, `get_next_block`): a
//! random job draws a new random offset only every N-th I/O, the first
//! one included (fio starts its count at 1), and the I/Os between go on
//! from where the last one ended (`get_next_seq_offset`), or repeat its
//! offset with `rw_sequencer=identical`. Those between are left out of
//! the random map (fio marks them `IO_U_F_BUSY_OK`), so a later random
//! draw may land on a block they read; one that would start past the
//! file's end takes a random block instead, also unmarked (a timed job
//! on one file starts again from the file's start). The count is
//! the job's, across its files and directions; the last offsets are
//! each file's and direction's, as fio's `last_pos` and `last_start`.

use super::IoWorkload;
use crate::plan::IoPlan;

/// Where a job is in fio's count of I/Os per random offset.
pub(super) struct SeqNr {
    /// fio's ddir_seq_nr: a random offset every this many I/Os (0: never).
    every: u64,
    /// I/Os until the next random one (fio's td->ddir_seq_nr).
    left: u64,
    identical: bool,
    /// Per file and direction: where the last I/O started.
    last_start: Vec<[u64; 2]>,
}

impl SeqNr {
    /// None when every offset is random (fio's N = 1, the default).
    pub(super) fn new(plan: &IoPlan, files: usize) -> Option<SeqNr> {
        let every = plan.region.rand_seq.filter(|_| plan.shape.rw.random())?;
        Some(SeqNr {
            every,
            left: 1,
            identical: plan.region.seq_identical,
            last_start: vec![[0, 0]; files],
        })
    }

    /// A new pass: no last offsets (fio's fio_file_reset); the count goes on.
    pub(super) fn new_pass(&mut self) {
        self.last_start.iter_mut().for_each(|l| *l = [0, 0]);
    }

    /// Whether this I/O draws a random offset (fio's `rw_seq_hit`).
    fn hit(&mut self) -> bool {
        if self.every == 0 {
            return false;
        }
        self.left -= 1;
        if self.left == 0 {
            self.left = self.every;
            return true;
        }
        false
    }
}

impl IoWorkload {
    /// The offset of a random job's I/O under fio's ddir_seq_nr (`SeqNr`);
    /// None when this pass is done with file `f`.
    pub(super) fn offset_seq_nr(&mut self, f: usize, len: &mut u64, read: bool) -> Option<u64> {
        let d = !read as usize;
        let s = self.seq_nr.as_mut().expect("a job with fio's ddir_seq_nr");
        let (hit, identical, last) = (s.hit(), s.identical, s.last_start[f][d]);
        let o = if hit {
            self.offset_drawn(f, len, read)?
        } else if identical {
            last
        } else {
            let mut next = self.seq[f][d];
            // a timed job on one file starts again from its start (fio's
            // get_next_seq_offset with time_based and nr_files=1)
            if next >= self.file_size && !self.region.size_based && self.fds.len() == 1 {
                next = 0;
            }
            match next + *len <= self.file_size {
                true => next,
                false => match self.unmarked_block(f, *len) {
                    Some(o) => o,
                    None => self.offset_drawn(f, len, read)?,
                },
            }
        };
        self.seq[f][d] = o + *len;
        if let Some(s) = self.seq_nr.as_mut() {
            s.last_start[f][d] = o;
        }
        Some(o)
    }

    /// A random block of file `f` for an I/O past the file's end, left out
    /// of the random map (a free one of it, as fio's draw); None when the
    /// map is full.
    fn unmarked_block(&mut self, f: usize, len: u64) -> Option<u64> {
        let size = self.file_size;
        if len > size {
            return None;
        }
        let o = match self.region.maps.as_ref() {
            Some(maps) => {
                let m = &maps[f];
                m.next_free(self.rng.u64(0..m.blocks()))? * self.bs
            }
            None => self.rng.u64(0..=(size - len) / self.align) * self.align,
        };
        (o + len <= size).then_some(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Op;
    use crate::workload::Workload;

    /// The offsets of `ops` reads of a 16-block file with a random offset
    /// every 4th I/O, size-based or timed (null engine: no file opened).
    fn offsets(timed: bool, ops: usize) -> Vec<u64> {
        let mut a = crate::cli::IoArgs {
            rw: "randread".into(),
            bs: "4k".into(),
            jobs: "1".into(),
            engine: "null".into(),
            ..Default::default()
        };
        a.common.target = ".".into();
        a.common.quiet = true;
        if timed {
            a.runtime = Some("1s".into());
        }
        let mut p = IoPlan::from_args(&a).unwrap();
        p.region.fio = true;
        p.region.rand_seq = Some(4);
        let mut w = IoWorkload::new(&p, 0, vec![], 16 * 4096, false, 1);
        let mut out = vec![];
        while let Some(op) = w.next_op(0).filter(|_| out.len() < ops) {
            if let Op::Read { offset, .. } = op.op {
                out.push(offset / 4096);
            }
            let len = op.len as i64;
            w.on_complete(&op, len);
        }
        out
    }

    /// Every 4th I/O (the first too) is a random block; the 3 between
    /// follow on, past the end a random block (size-based) or the file's
    /// start (timed, one file), as fio's get_next_seq_offset.
    #[test]
    fn every_nth_offset_is_random_and_the_rest_follow_on() {
        let sized = offsets(false, 1000);
        assert_eq!(sized.len(), 16, "{sized:?}");
        let timed = offsets(true, 4000);
        let mut wraps = 0;
        for (i, w) in timed.windows(2).enumerate().map(|(i, w)| (i + 1, w)) {
            if i % 4 != 0 {
                assert!(w[1] == w[0] + 1 || (w[0] == 15 && w[1] == 0), "I/O {i}: {w:?}");
                wraps += (w[0] == 15) as u32;
            }
        }
        assert!(wraps > 0, "a run reached the file's end");
        for (i, w) in sized.windows(2).enumerate().map(|(i, w)| (i + 1, w)) {
            assert!(i % 4 == 0 || w[1] == w[0] + 1 || w[0] == 15, "I/O {i}: {w:?}");
        }
    }
}
