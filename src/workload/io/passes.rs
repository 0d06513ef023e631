//! The io workload's passes over its files: fio's random map, and what a
//! new pass (a wrap, a loop) resets and drops from the page cache.

use super::IoWorkload;

impl IoWorkload {
    /// fio's random map (io_u.c): a random block of the file in units of
    /// the smallest block size, the next free one from there, and the I/O
    /// trimmed to the free run it lands in (`mark_random_map`), so a
    /// bssplit's large blocks shrink as the map fills: fio 3.33 did 13,960
    /// I/Os of 117 sizes where untrimmed blocks made 5,822 of 8. A block
    /// that would pass the file's end is cut there too (fio draws its size
    /// again until it fits).
    pub(super) fn mapped_offset(&mut self, f: usize, len: &mut u64, size: u64) -> Option<u64> {
        if self.bs > size {
            return None;
        }
        let maps = self.region.maps.as_mut().expect("a mapped region");
        let m = &mut maps[f];
        let blocks = m.blocks();
        let mut wrapped = false;
        let b = match m.next_free(self.rng.u64(0..blocks)) {
            Some(b) => b,
            None if self.region.size_based => return None,
            None => {
                m.clear();
                wrapped = true;
                self.rng.u64(0..blocks)
            }
        };
        let run = m.mark_free_run(b, len.div_ceil(self.bs));
        *len = (*len).min(run * self.bs).min(size - b * self.bs);
        if wrapped {
            self.drop_cache(f);
        }
        Some(self.bs * b)
    }

    /// A new pass: every file from its start, its map empty.
    pub(super) fn reset_files(&mut self) {
        self.region.done.iter_mut().for_each(|d| *d = false);
        if let Some(maps) = &mut self.region.maps {
            maps.iter_mut().for_each(|m| m.clear());
        }
        self.seq.iter_mut().for_each(|s| *s = [0, 0]);
        self.seq_nr.iter_mut().for_each(super::seqnr::SeqNr::new_pass);
        self.region.restart_zones();
        for f in 0..self._files.len() {
            self.drop_cache(f);
        }
    }

    /// fio's loop_cache_invalidate of file `f`'s region, when the job has it.
    #[cold]
    pub(super) fn drop_cache(&self, f: usize) {
        if !self.invalidate_passes {
            return;
        }
        if let Some(file) = self._files.get(f) {
            let len = std::num::NonZeroU64::new(self.file_size);
            let _ = rustix::fs::fadvise(file, self.base, len, rustix::fs::Advice::DontNeed);
        }
    }
}
