//! The workers of fio's engines that do no I/O: cpuio (burns a CPU at a
//! duty cycle). Each is a workload whose step is the engine's whole
//! operation, timed by the runner as fio times the engine's queue, and
//! whose pause after it is `next_due` (the runner's wait, never past the
//! deadline, outside the operation's latency, as fio's thinktime).

use crate::engine::Engine;
use crate::plan::fio::engines::CpuLoad;
use crate::stats::{Instant, OpKind};
use crate::workload::{NextOp, Step, Workload};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// fio's qsort_size: 256 Ki 32-bit integers.
const QSORT_LEN: usize = 256 << 10;

/// One cpuio clone: engines/cpu.c's queue and thinktime.
pub struct CpuBurn {
    load: u64,
    /// The last burn (noop: always cpuchunks).
    burn: Duration,
    /// cpumode=qsort's integers, sorted four ways each operation.
    data: Option<Vec<i32>>,
    /// When the next burn is due: the last one's end plus its pause.
    due: Option<Instant>,
    /// exit_on_io_done: the token every worker doing I/O in the segment
    /// holds, watched (a weak reference: this worker does no I/O), so a
    /// strong count of 1 (the segment's own) means none is left; None:
    /// the job runs to its runtime.
    io_alive: Option<Weak<()>>,
}

impl CpuBurn {
    pub fn new(c: &CpuLoad, io_alive: Option<&Arc<()>>) -> Self {
        CpuBurn {
            load: c.load.clamp(1, 100) as u64,
            burn: Duration::from_micros(c.chunk_us as u64),
            data: c.qsort.then(qsort_data),
            due: None,
            io_alive: io_alive.filter(|_| c.exit_on_io_done).map(Arc::downgrade),
        }
    }

    /// fio's thinktime after a burn: burn * (100 - load) / load.
    fn pause(&self) -> Duration {
        self.burn * (100 - self.load) as u32 / self.load as u32
    }
}

/// fio's qsort_init: its multiply-with-carry generator from a fixed seed.
fn qsort_data() -> Vec<i32> {
    let (mut w, mut z) = (521_288_629u32, 362_436_069u32);
    (0..QSORT_LEN)
        .map(|_| {
            z = 36969u32.wrapping_mul(z & 65535).wrapping_add(z >> 16);
            w = 18000u32.wrapping_mul(w & 65535).wrapping_add(w >> 16);
            (z << 16).wrapping_add(w) as i32
        })
        .collect()
}

/// fio's do_qsort, with the C library's qsort as fio calls it (so the
/// work per burn is fio's, and as fast in a debug build of fslab):
/// ascending, descending, by byte (as signed bytes), descending again.
fn qsort(d: &mut [i32]) {
    extern "C" fn up(a: *const libc::c_void, b: *const libc::c_void) -> libc::c_int {
        // SAFETY: qsort hands two pointers into the array it sorts, of i32
        let (a, b) = unsafe { (*(a as *const i32), *(b as *const i32)) };
        (a > b) as libc::c_int - (a < b) as libc::c_int
    }
    extern "C" fn down(a: *const libc::c_void, b: *const libc::c_void) -> libc::c_int {
        up(b, a)
    }
    extern "C" fn bytes(a: *const libc::c_void, b: *const libc::c_void) -> libc::c_int {
        // SAFETY: as `up`, of the array's bytes
        let (a, b) = unsafe { (*(a as *const i8), *(b as *const i8)) };
        a as libc::c_int - b as libc::c_int
    }
    let (p, n) = (d.as_mut_ptr() as *mut libc::c_void, d.len());
    // SAFETY: `d` is valid for `n` i32s (4n bytes), exclusively borrowed
    // for these calls, and each comparator reads only the elements it is
    // handed, as the element size says
    unsafe {
        libc::qsort(p, n, 4, Some(up));
        libc::qsort(p, n, 4, Some(down));
        libc::qsort(p, n * 4, 1, Some(bytes));
        libc::qsort(p, n, 4, Some(down));
    }
}

/// fio's usec_spin: busy until `d` has passed on the clock.
fn spin(d: Duration) {
    let t = std::time::Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

impl Workload for CpuBurn {
    fn next_op(&mut self, _slot: usize) -> Option<NextOp> {
        None
    }

    fn queues(&self) -> bool {
        false
    }

    fn next_due(&mut self) -> Option<Instant> {
        self.due
    }

    fn step(&mut self, _e: &mut dyn Engine) -> Option<Step> {
        if self.io_alive.as_ref().is_some_and(|a| a.strong_count() <= 1) {
            // fio: td->done once no I/O job runs or waits to
            return None;
        }
        let start = std::time::Instant::now();
        match &mut self.data {
            None => spin(self.burn),
            Some(d) => {
                qsort(d);
                // fio adjusts its cycle to the last qsort's time
                self.burn = start.elapsed().max(Duration::from_micros(1));
            }
        }
        self.due = Some(Instant::now() + self.pause());
        Some(Step::new(OpKind::Read, 0))
    }
}
