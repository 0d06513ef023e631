//! fio's random offset modifier, `rw=randread:N` (options.c `str_rw_cb`
//! sets ddir_seq_nr; io_u.c `get_next_offset`, `get_next_block`): a
//! random job draws a new random offset only every N-th I/O, the first
//! one included (fio starts its count at 1), and the I/Os between go on
//! from where the last one ended (`get_next_seq_offset`), or repeat its
//! offset with `rw_sequencer=identical`. Those between are left out of
//! the random map (fio marks them `IO_U_F_BUSY_OK`), so a later random
//! draw may land on a block they read; one that would start past the
//! file's end takes a random block instead, also unmarked. The count is
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
            let next = self.seq[f][d];
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
