//! The BPF object's shared memory as fslab reads it: the layouts of
//! `bpf/anatomy.bpf.c`'s `struct slot`, `struct sleep` and `struct window`
//! (kept in step by `layouts_match_the_object`), mapped read-only from the
//! kernel's mmapable arrays and read with volatile loads.
//!
//! This is the only unsafe code of the anatomy: the mmap and munmap, and
//! reads at offsets inside the mapping (bounds checked against its length).

use std::os::fd::AsFd;

/// `struct slot`: a 128-byte header, then `RING` sleeps of 48 bytes.
pub const RING: u64 = 64;
pub const MAX_SLOTS: u32 = 256;
const SLOT_HEADER: usize = 128;
pub const SLOT_SIZE: usize = SLOT_HEADER + RING as usize * SLEEP_SIZE;
/// Entries of `tids`, the threads direct-mapped by tid.
pub const NTIDS: u32 = 65536;
const SLEEP_SIZE: usize = 48;
/// `struct window`: 10 ms of block completions.
pub const WINDOW_NS: u64 = 10_000_000;
pub const NWINDOWS: u64 = 8192;
const WINDOW_SIZE: usize = 64;
/// `struct lazy`: a stack taken when a long sleeper came back (seq, len, 48 frames).
pub const LAZY_DEPTH: usize = 48;
const LAZY_SIZE: usize = 16 + LAZY_DEPTH * 8;
/// A sleep's `stack` when its frames are in the lazy map (`LAZY_STACK`).
pub const LAZY_STACK: i32 = -2;

/// A read-only mapping of an mmapable BPF array.
pub struct Mapping {
    ptr: *const u8,
    len: usize,
}

// SAFETY: the mapping is shared memory the kernel writes; fslab only reads
// it with volatile loads, so moving it to another thread is sound.
unsafe impl Send for Mapping {}
// SAFETY: as for Send: reads from any number of threads at once are
// volatile loads of memory nothing in fslab writes.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes of the array map behind `fd`.
    pub fn new(fd: impl AsFd, len: usize) -> std::io::Result<Mapping> {
        // SAFETY: a fresh shared read-only mapping of a BPF map's fd;
        // nothing else refers to the address range it returns.
        let ptr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                rustix::mm::ProtFlags::READ,
                rustix::mm::MapFlags::SHARED,
                fd.as_fd(),
                0,
            )
        }?;
        Ok(Mapping {
            ptr: ptr as *const u8,
            len,
        })
    }

    #[inline]
    fn u64_at(&self, off: usize) -> u64 {
        assert!(off + 8 <= self.len && off.is_multiple_of(8));
        // SAFETY: in bounds and aligned (checked above) within a live mapping.
        unsafe { (self.ptr.add(off) as *const u64).read_volatile() }
    }

    #[inline]
    fn u32_at(&self, off: usize) -> u32 {
        assert!(off + 4 <= self.len && off.is_multiple_of(4));
        // SAFETY: as `u64_at`.
        unsafe { (self.ptr.add(off) as *const u32).read_volatile() }
    }

    fn bytes_at(&self, off: usize, out: &mut [u8]) {
        for (i, b) in out.iter_mut().enumerate() {
            assert!(off + i < self.len);
            // SAFETY: in bounds (checked above) within a live mapping.
            *b = unsafe { self.ptr.add(off + i).read_volatile() };
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the range `new` mapped; nothing reads it after this.
        let _ = unsafe { rustix::mm::munmap(self.ptr as *mut _, self.len) };
    }
}

/// A thread's counters at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counters {
    pub seq: u64,
    pub off_ns: u64,
    pub runq_ns: u64,
    pub blk_n: u64,
    pub blk_queue_ns: u64,
    pub blk_dev_ns: u64,
}

/// One sleep of the ring.
#[derive(Clone, Debug, Default)]
pub struct RawSleep {
    pub dur: u64,
    pub stack: i32,
    pub waker: u32,
    pub waker_stack: i32,
    pub state: u32,
    /// The waker's comm, NUL-padded: made a string only for a slow
    /// operation's report (`--anatomy` reads every sleep of every operation).
    pub waker_comm: [u8; 16],
    /// The frames of a lazily taken stack (`stack == LAZY_STACK`), copied
    /// by the worker before the ring moves on; empty otherwise.
    pub frames: Vec<u64>,
}

impl RawSleep {
    /// The waker's comm as text ("" when nobody was recorded).
    pub fn waker_name(&self) -> String {
        let n = self.waker_comm.iter().position(|&c| c == 0).unwrap_or(16);
        String::from_utf8_lossy(&self.waker_comm[..n]).into_owned()
    }
}

/// One 10 ms window of block completions.
#[derive(Clone, Copy, Debug, Default)]
pub struct Window {
    pub epoch: u64,
    pub n: u64,
    pub writes: u64,
    pub bytes: u64,
    pub queue_ns: u64,
    pub dev_ns: u64,
    pub dev_max: u64,
}

impl Mapping {
    #[inline]
    pub fn counters(&self, slot: u32) -> Counters {
        let b = slot as usize * SLOT_SIZE;
        Counters {
            seq: self.u64_at(b),
            off_ns: self.u64_at(b + 8),
            runq_ns: self.u64_at(b + 16),
            blk_n: self.u64_at(b + 24),
            blk_queue_ns: self.u64_at(b + 32),
            blk_dev_ns: self.u64_at(b + 40),
        }
    }

    pub fn sleep(&self, slot: u32, seq: u64) -> RawSleep {
        let b = slot as usize * SLOT_SIZE + SLOT_HEADER + (seq % RING) as usize * SLEEP_SIZE;
        let mut waker_comm = [0u8; 16];
        self.bytes_at(b + 32, &mut waker_comm);
        RawSleep {
            dur: self.u64_at(b + 8),
            stack: self.u32_at(b + 16) as i32,
            waker: self.u32_at(b + 20),
            waker_stack: self.u32_at(b + 24) as i32,
            state: self.u32_at(b + 28),
            waker_comm,
            frames: Vec::new(),
        }
    }

    /// On the lazy map: the frames of sleep `seq` of `slot`, None when the
    /// entry holds another sleep's (the ring moved on) or none.
    pub fn lazy_frames(&self, slot: u32, seq: u64) -> Option<Vec<u64>> {
        let b = (slot as usize * RING as usize + (seq % RING) as usize) * LAZY_SIZE;
        if self.u64_at(b) != seq {
            return None;
        }
        let len = (self.u64_at(b + 8) as usize).min(LAZY_DEPTH);
        let frames: Vec<u64> = (0..len).map(|i| self.u64_at(b + 16 + i * 8)).collect();
        // read again: a sleep that landed meanwhile may have rewritten it
        (self.u64_at(b) == seq && !frames.is_empty()).then_some(frames)
    }

    pub fn window(&self, epoch: u64) -> Window {
        let b = (epoch % NWINDOWS) as usize * WINDOW_SIZE;
        Window {
            epoch: self.u64_at(b),
            n: self.u64_at(b + 8),
            writes: self.u64_at(b + 16),
            bytes: self.u64_at(b + 24),
            queue_ns: self.u64_at(b + 32),
            dev_ns: self.u64_at(b + 40),
            dev_max: self.u64_at(b + 48),
        }
    }
}

/// Sizes of the two mappings.
pub const SLOTS_LEN: usize = SLOT_SIZE * MAX_SLOTS as usize;
pub const WINDOWS_LEN: usize = WINDOW_SIZE * NWINDOWS as usize;
/// Entries of the lazy map: a ring's worth per slot.
pub const LAZY_ENTRIES: u32 = MAX_SLOTS * RING as u32;
pub const LAZY_LEN: usize = LAZY_SIZE * LAZY_ENTRIES as usize;

/// `struct tidslot` of `tids`: a thread and its slot + 1 (0: free).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TidSlot {
    pub tid: u32,
    pub slot: u32,
}

// SAFETY: plain old data, two u32 without padding, any bit pattern valid.
unsafe impl aya::Pod for TidSlot {}

/// `struct histkey` of `devhist`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HistKey {
    pub dev: u32,
    pub layer: u16,
    pub dir: u16,
    pub bucket: u32,
    pub pad: u32,
}

// SAFETY: plain old data, no padding (4 + 2 + 2 + 4 + 4 bytes), any bit
// pattern valid.
unsafe impl aya::Pod for HistKey {}

/// `struct lbakey` of `lbamap`: a device's sectors per 100 ms, MiB and class.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LbaKey {
    pub dev: u32,
    /// CLOCK_MONOTONIC / 100 ms.
    pub t: u32,
    /// The sector >> 11: MiB of the device.
    pub lba: u32,
    pub class: u32,
}

/// `LbaKey::t`'s unit.
pub const LBA_TIME_NS: u64 = 100_000_000;

// SAFETY: plain old data, four u32 without padding, any bit pattern valid.
unsafe impl aya::Pod for LbaKey {}

/// `struct lbaval`: the sectors submitted and the last MiB they reached.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct LbaVal {
    pub sectors: u64,
    pub last: u64,
}

// SAFETY: plain old data, two u64 without padding, any bit pattern valid.
unsafe impl aya::Pod for LbaVal {}

/// The value at the middle of log-linear bucket `b` of `devhist`
/// (`bucket_of` in the C source: exact under 128, then 128 per power of two).
pub fn bucket_value(b: u32) -> u64 {
    const SUB: u32 = 7;
    if b < (1 << SUB) {
        return b as u64;
    }
    let e = (b >> SUB) + SUB - 1;
    let sub = (b & ((1 << SUB) - 1)) as u64;
    let low = (1u64 << e) | (sub << (e - SUB));
    low + (1u64 << (e - SUB)) / 2
}

/// The kernel's dev_t (major << 20 | minor) as "major:minor".
pub fn dev_name(dev: u32) -> String {
    format!("{}:{}", dev >> 20, dev & 0xf_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C source's `bucket_of`, in Rust, against `bucket_value`.
    fn bucket_of(v: u64) -> u32 {
        if v < 128 {
            return v as u32;
        }
        let e = 63 - v.leading_zeros();
        let sub = ((v >> (e - 7)) & 127) as u32;
        ((e - 7 + 1) << 7) | sub
    }

    #[test]
    fn buckets_round_trip_within_one_percent() {
        for v in [1u64, 127, 128, 129, 1000, 4096, 123_456, 10_000_000, 3_000_000_000] {
            let m = bucket_value(bucket_of(v));
            let err = (m as f64 - v as f64).abs() / v as f64;
            assert!(err < 0.01, "{v} -> {m}");
        }
    }

    #[test]
    fn layouts_match_the_object() {
        // the C source's sizes, as compiled into the checked-in object
        let src = include_str!("../../../bpf/anatomy.bpf.c");
        assert!(src.contains("#define RING 64"));
        assert!(src.contains("#define MAX_SLOTS 256"));
        assert!(src.contains("#define NWINDOWS 8192"));
        assert!(src.contains("#define WINDOW_NS 10000000ULL"));
        assert!(src.contains(&format!("#define LAZY_DEPTH {LAZY_DEPTH}\n")));
        assert!(src.contains(&format!("#define LAZY_STACK {LAZY_STACK}\n")));
        assert_eq!(SLOT_SIZE, 3200);
        assert!(src.contains(&format!("#define NTIDS {NTIDS}\n")));
        assert_eq!(dev_name((7 << 20) | 3), "7:3");
    }
}
