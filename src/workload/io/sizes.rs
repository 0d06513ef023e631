//! Each read's and write's length: one size, a range, or a weighted split
//! per direction (fio's bssplit=READ,WRITE).

use crate::plan::IoShape;

/// The job's block sizes, as `IoWorkload::next_len` draws them.
pub(super) struct Sizes {
    pub(super) bs: u64,
    pub(super) bs_max: u64,
    /// Cumulative (percent, size) of read's split, then write's (empty:
    /// no split; write's empty: read's).
    split: [Vec<(u32, u64)>; 2],
}

fn cumulative(split: &[(u64, u32)]) -> Vec<(u32, u64)> {
    let mut acc = 0;
    split
        .iter()
        .map(|&(size, pct)| {
            acc += pct;
            (acc, size)
        })
        .collect()
}

impl Sizes {
    pub(super) fn new(shape: &IoShape) -> Self {
        Sizes {
            bs: shape.bs,
            bs_max: shape.bs_max,
            split: [cumulative(&shape.bssplit), cumulative(&shape.bssplit_write)],
        }
    }

    /// Whether writes draw from a split of their own.
    pub(super) fn own_write(&self) -> bool {
        !self.split[1].is_empty()
    }

    /// The smallest length of a read (`read`) or a write: fio ends the job
    /// when it does not fit between a random offset and the file's end
    /// (io_u.c `get_next_buflen`), which only a write split of larger
    /// sizes than the read one's can meet.
    pub(super) fn min(&self, read: bool) -> u64 {
        match &self.split[if !read && self.own_write() { 1 } else { 0 }] {
            s if s.is_empty() => self.bs,
            s => s.iter().map(|x| x.1).min().unwrap_or(self.bs),
        }
    }

    /// This operation's length: fixed, from the split, or drawn in the range
    /// as fio draws it (io_u.c `get_next_buflen`): the smallest size plus a
    /// uniform fraction of the largest, down to a multiple of the smallest,
    /// at most the largest. That is every multiple of the smallest alike
    /// when the largest is one; when it is not (4k-10k), the largest takes
    /// the draws above it (4k and 8k 40% each, 10k 20%, as in fio).
    #[inline]
    pub(super) fn next(&self, rng: &mut fastrand::Rng, read: bool) -> u64 {
        let split = if !read && self.own_write() {
            &self.split[1]
        } else {
            &self.split[0]
        };
        if !split.is_empty() {
            let r = rng.u32(0..100);
            return split.iter().find(|(c, _)| r < *c).map(|x| x.1).unwrap_or(self.bs_max);
        }
        if self.bs_max == self.bs {
            return self.bs;
        }
        let v = self.bs + rng.u64(0..self.bs_max);
        (v - v % self.bs).min(self.bs_max)
    }
}
