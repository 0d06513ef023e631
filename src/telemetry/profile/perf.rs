//! perf_event_open(2) and its mmap ring buffer: one sampling event per
//! online CPU, for fslab's process with `inherit` (the threads the process
//! starts later are sampled too, into the same buffers), the software
//! `cpu-clock` event (an hrtimer: it works on VMs without PMU counters),
//! sampling IP, TID and the callchain (kernel stack, user stack as far as
//! frame pointers allow).
//!
//! The kernel refuses to mmap an inherited per-task event opened with
//! `cpu = -1`, so there is one event (and one buffer) per CPU, as
//! `perf record` does.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};

const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;

const PERF_SAMPLE_IP: u64 = 1 << 0;
const PERF_SAMPLE_TID: u64 = 1 << 1;
const PERF_SAMPLE_CALLCHAIN: u64 = 1 << 5;

// bits of perf_event_attr's flags word (the C bitfield, in declaration order)
const FLAG_DISABLED: u64 = 1 << 0;
const FLAG_INHERIT: u64 = 1 << 1;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;
const FLAG_FREQ: u64 = 1 << 10;

const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

// _IO('$', 0) and _IO('$', 1)
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_DISABLE: libc::c_ulong = 0x2401;

const PERF_RECORD_LOST: u32 = 2;
const PERF_RECORD_SAMPLE: u32 = 9;

/// `header.misc & PERF_RECORD_MISC_CPUMODE_MASK`.
const PERF_RECORD_MISC_CPUMODE_MASK: u16 = 7;
pub const PERF_RECORD_MISC_KERNEL: u16 = 1;
#[cfg(test)]
pub const PERF_RECORD_MISC_USER: u16 = 2;

/// Context markers inside a callchain (as u64: -128, -512...).
pub const PERF_CONTEXT_KERNEL: u64 = (-128i64) as u64;
pub const PERF_CONTEXT_USER: u64 = (-512i64) as u64;
/// Every value at or above this is a marker, not an address.
pub const PERF_CONTEXT_MAX: u64 = (-4095i64) as u64;

/// Offsets in `struct perf_event_mmap_page`.
const DATA_HEAD: usize = 1024;
const DATA_TAIL: usize = 1032;

/// `struct perf_event_attr` up to `__reserved_2` (PERF_ATTR_SIZE_VER5, 112
/// bytes): every kernel since 4.1 takes it.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_freq: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved_2: u16,
}

const ATTR_SIZE: usize = 112;
const _: () = assert!(std::mem::size_of::<PerfEventAttr>() == ATTR_SIZE);

/// Which step failed, and how.
#[derive(Debug)]
pub struct OpenError {
    pub step: &'static str,
    pub err: io::Error,
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.step, self.err)
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no memory effects; _SC_PAGESIZE is always defined.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// One record of a ring buffer, as [`Ring::drain`] hands it out.
pub enum Record<'a> {
    Sample {
        /// `header.misc & PERF_RECORD_MISC_CPUMODE_MASK`: where the IP is.
        cpumode: u16,
        ip: u64,
        tid: u32,
        /// Leaf first, with `PERF_CONTEXT_*` markers before each part.
        chain: &'a [u64],
    },
    /// The kernel dropped this many samples (the buffer was full).
    Lost(u64),
}

/// A sampling event on one CPU and its ring buffer (unmapped and closed on drop).
pub struct Ring {
    fd: OwnedFd,
    base: *mut u8,
    map_len: usize,
    page: usize,
    data_size: usize,
    scratch: Vec<u8>,
    chain: Vec<u64>,
}

// SAFETY: the mapping is owned by this value alone (no other pointer to it
// exists); every access goes through `&mut self` or `&self` methods that
// only read the head atomically, so moving it to another thread is sound.
unsafe impl Send for Ring {}

impl Ring {
    /// Opens the event for `pid` on `cpu`, disabled, sampling at `hz`, with
    /// a buffer of `pages` pages (a power of two).
    pub fn open(pid: i32, cpu: i32, hz: u64, pages: usize) -> Result<Ring, OpenError> {
        let attr = PerfEventAttr {
            type_: PERF_TYPE_SOFTWARE,
            size: ATTR_SIZE as u32,
            config: PERF_COUNT_SW_CPU_CLOCK,
            sample_freq: hz,
            sample_type: PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN,
            flags: FLAG_DISABLED | FLAG_INHERIT | FLAG_EXCLUDE_HV | FLAG_FREQ,
            ..Default::default()
        };
        // SAFETY: perf_event_open reads `size` (= size_of) bytes of `attr`,
        // which lives across the call; the other arguments are plain integers.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const PerfEventAttr,
                pid as libc::pid_t,
                cpu as libc::c_int,
                -1 as libc::c_int,
                PERF_FLAG_FD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(OpenError {
                step: "perf_event_open",
                err: io::Error::last_os_error(),
            });
        }
        // SAFETY: the syscall returned a new file descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        let page = page_size();
        let data_size = pages * page;
        let map_len = data_size + page;
        // SAFETY: a new shared mapping of the event's buffer (no existing
        // memory is affected); the result is checked against MAP_FAILED.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(OpenError {
                step: "mmap of the perf ring buffer",
                err: io::Error::last_os_error(),
            });
        }
        Ok(Ring {
            fd,
            base: base as *mut u8,
            map_len,
            page,
            data_size,
            scratch: Vec::new(),
            chain: Vec::new(),
        })
    }

    fn ioctl(&self, req: libc::c_ulong) -> io::Result<()> {
        // SAFETY: ENABLE and DISABLE take no argument pointer; the fd is ours.
        let r = unsafe { libc::ioctl(self.fd.as_raw_fd(), req as _, 0) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// Starts sampling (the event and the threads that inherited it).
    pub fn enable(&self) -> io::Result<()> {
        self.ioctl(PERF_EVENT_IOC_ENABLE)
    }

    /// Stops sampling.
    pub fn disable(&self) -> io::Result<()> {
        self.ioctl(PERF_EVENT_IOC_DISABLE)
    }

    fn head(&self) -> &AtomicU64 {
        // SAFETY: data_head is an aligned u64 in the first page of the
        // mapping, which lives as long as `self`; the kernel writes it
        // concurrently, hence the atomic access.
        unsafe { &*(self.base.add(DATA_HEAD) as *const AtomicU64) }
    }

    fn tail(&self) -> &AtomicU64 {
        // SAFETY: as `head`, for data_tail (written only by us).
        unsafe { &*(self.base.add(DATA_TAIL) as *const AtomicU64) }
    }

    /// Copies `dst.len()` bytes of the data area from position `pos` (mod
    /// its size) into `dst`.
    fn copy_out(&self, pos: u64, dst: &mut [u8]) {
        let off = (pos % self.data_size as u64) as usize;
        let first = dst.len().min(self.data_size - off);
        // SAFETY: off + first <= data_size and the rest (< data_size) starts
        // at the data area's beginning: both ranges lie in the mapping, in
        // the part the kernel wrote before publishing `head` (acquire load
        // in `drain`), and `dst` is a separate Vec.
        unsafe {
            let data = self.base.add(self.page);
            std::ptr::copy_nonoverlapping(data.add(off), dst.as_mut_ptr(), first);
            std::ptr::copy_nonoverlapping(data, dst.as_mut_ptr().add(first), dst.len() - first);
        }
    }

    /// Hands every record written since the last call to `f`, then gives
    /// the space back to the kernel.
    pub fn drain(&mut self, f: &mut dyn FnMut(Record<'_>)) {
        let head = self.head().load(Ordering::Acquire);
        let mut tail = self.tail().load(Ordering::Relaxed);
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut chain = std::mem::take(&mut self.chain);
        while tail + 8 <= head {
            let mut hdr = [0u8; 8];
            self.copy_out(tail, &mut hdr);
            let kind = u32::from_ne_bytes(hdr[0..4].try_into().expect("4 bytes"));
            let misc = u16::from_ne_bytes(hdr[4..6].try_into().expect("2 bytes"));
            let size = u16::from_ne_bytes(hdr[6..8].try_into().expect("2 bytes")) as u64;
            if size < 8 || tail + size > head {
                // a corrupt header: skip what is there rather than loop
                tail = head;
                break;
            }
            scratch.resize(size as usize, 0);
            self.copy_out(tail, &mut scratch);
            let body = &scratch[8..];
            let word = |i: usize| -> Option<u64> {
                body.get(i * 8..i * 8 + 8)
                    .map(|b| u64::from_ne_bytes(b.try_into().expect("8 bytes")))
            };
            match kind {
                PERF_RECORD_SAMPLE => {
                    if let (Some(ip), Some(pidtid), Some(nr)) = (word(0), word(1), word(2)) {
                        chain.clear();
                        chain.extend((0..nr as usize).map_while(|i| word(3 + i)));
                        f(Record::Sample {
                            cpumode: misc & PERF_RECORD_MISC_CPUMODE_MASK,
                            ip,
                            tid: (pidtid >> 32) as u32,
                            chain: &chain,
                        });
                    }
                }
                PERF_RECORD_LOST => {
                    if let Some(n) = word(1) {
                        f(Record::Lost(n));
                    }
                }
                _ => {}
            }
            tail += size;
        }
        self.tail().store(tail, Ordering::Release);
        self.scratch = scratch;
        self.chain = chain;
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping `open` made; no reference into
        // it outlives `self` (head/tail borrow `self`).
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.map_len);
        }
    }
}

/// The online CPUs (`/sys/devices/system/cpu/online`: "0-3,5").
pub fn online_cpus() -> Vec<i32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let mut v = parse_cpu_list(&text);
    if v.is_empty() {
        let n = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        v = (0..n as i32).collect();
    }
    v
}

pub fn parse_cpu_list(text: &str) -> Vec<i32> {
    let mut v = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<i32>(), b.parse::<i32>()) {
                    v.extend(a..=b);
                }
            }
            None => {
                if let Ok(a) = part.parse() {
                    v.push(a);
                }
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0-1\n"), [0, 1]);
        assert_eq!(parse_cpu_list("0,2-4,7"), [0, 2, 3, 4, 7]);
        assert!(parse_cpu_list("").is_empty());
    }
}
