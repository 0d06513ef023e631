//! The libaio engine: Linux native AIO through its own syscalls
//! (io_setup, io_submit, io_getevents, io_destroy), as fio's `libaio`
//! engine uses them. Reads and writes are queued as iocbs and pushed with
//! one io_submit per commit; everything else (fsync, fdatasync and the
//! metadata operations) runs as a blocking syscall once nothing is in
//! flight, which is what fio's libaio does with its syncs (`fio_libaio_queue`
//! returns FIO_Q_BUSY until the queue drained, then syncs inline).
//!
//! Why not io_uring under the name: the two differ where people measure
//! them. On a file whose filesystem cannot do the I/O asynchronously
//! (tmpfs with O_DIRECT, most buffered I/O), io_submit performs it inside
//! the submitting thread, while io_uring hands it to an io-wq worker
//! thread; at queue depth 1 that is a thread hop per I/O, 3-14x slower
//! on tmpfs (issue 33's kbench, Azure guide and QubesOS jobs). A user who
//! wrote libaio gets libaio's behaviour.
//!
//! No crate is used: libaio itself is a thin C wrapper over these four
//! syscalls, and the kernel ABI (`linux/aio_abi.h`) is stable.

use super::{Caps, Completion, Engine, Op, Submit, SyncEngine};
use std::io;

/// `struct iocb` of `linux/aio_abi.h` (little-endian field order: `aio_key`
/// before `aio_rw_flags`; this crate builds only for little-endian Linux).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: i32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const _: () = assert!(std::mem::size_of::<Iocb>() == 64);
const _: () = assert!(std::mem::size_of::<IoEvent>() == 32);
#[cfg(target_endian = "big")]
compile_error!("the libaio engine's iocb layout is the little-endian one");

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
/// linux/aio_abi.h: aio_reqprio is set.
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

pub struct LibaioEngine {
    /// The kernel's `aio_context_t`.
    ctx: u64,
    depth: usize,
    /// Queued, not yet io_submit'ted.
    pending: Vec<Iocb>,
    /// Submitted to the kernel, not yet reaped.
    inflight: usize,
    /// Completions known without the kernel: an iocb io_submit refused.
    ready: Vec<Completion>,
    events: Vec<IoEvent>,
    /// io_submit's array of iocb pointers, kept to not allocate per commit.
    ptrs: Vec<*mut Iocb>,
    /// The next reads' and writes' aio_reqprio (`Engine::set_prio`).
    prio: u16,
}

fn ret(r: libc::c_long) -> io::Result<usize> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

impl LibaioEngine {
    /// A context for `depth` operations in flight.
    pub fn new(depth: u32) -> io::Result<Self> {
        let depth = depth.max(1) as usize;
        let mut ctx: u64 = 0;
        // SAFETY: io_setup writes the new context id into `ctx`, a local.
        let r = unsafe { libc::syscall(libc::SYS_io_setup, depth as libc::c_long, &mut ctx as *mut u64) };
        ret(r).map_err(|e| {
            let why = match e.raw_os_error() {
                Some(libc::EAGAIN) => format!(
                    "io_setup({depth}) failed: {e}: the system-wide limit fs.aio-max-nr is reached \
                     (raise it with sysctl, or lower the queue depth)"
                ),
                Some(libc::ENOSYS) => "io_setup is not available (ENOSYS): the kernel lacks native AIO \
                     (CONFIG_AIO) or a seccomp filter hides it; use --engine uring or sync"
                    .to_string(),
                _ => format!("io_setup({depth}) failed: {e}"),
            };
            io::Error::new(e.kind(), why)
        })?;
        Ok(LibaioEngine {
            ctx,
            depth,
            pending: Vec::with_capacity(depth),
            inflight: 0,
            ready: Vec::new(),
            events: vec![IoEvent::default(); depth],
            ptrs: Vec::with_capacity(depth),
            prio: 0,
        })
    }

    fn queue(&mut self, opcode: u16, fd: i32, buf: u64, len: usize, offset: u64, token: u64) -> Submit {
        if self.pending.len() + self.inflight >= self.depth {
            return Submit::Busy;
        }
        self.pending.push(Iocb {
            aio_data: token,
            aio_lio_opcode: opcode,
            // a negative fd stays invalid (EBADF), as the other engines'
            aio_fildes: fd as u32,
            aio_buf: buf,
            aio_nbytes: len as u64,
            aio_offset: offset as i64,
            // fio's libaio: the priority travels with IOCB_FLAG_IOPRIO
            aio_reqprio: self.prio as i16,
            aio_flags: if self.prio != 0 { IOCB_FLAG_IOPRIO } else { 0 },
            ..Default::default()
        });
        Submit::Queued
    }
}

impl Drop for LibaioEngine {
    fn drop(&mut self) {
        // io_destroy waits for what is still in flight, so no buffer is
        // written after the engine is gone (Engine::submit's contract).
        // SAFETY: `ctx` is this engine's context, destroyed once.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx as libc::c_ulong) };
    }
}

impl Engine for LibaioEngine {
    fn name(&self) -> &'static str {
        "libaio"
    }

    fn caps(&self) -> Caps {
        Caps {
            inline: false,
            real_io: true,
            max_depth: self.depth,
            xattr_at: SyncEngine.caps().xattr_at,
        }
    }

    fn set_prio(&mut self, prio: u16) {
        self.prio = prio;
    }

    /// # Safety
    /// As [`Engine::submit`].
    unsafe fn submit(&mut self, op: &Op, token: u64) -> Submit {
        match *op {
            Op::Read {
                fd, offset, buf, len, ..
            } => self.queue(IOCB_CMD_PREAD, fd, buf as u64, len, offset, token),
            Op::Write {
                fd, offset, buf, len, ..
            } => self.queue(IOCB_CMD_PWRITE, fd, buf as u64, len, offset, token),
            // fio's libaio: a sync waits for the queue to drain, then runs
            // inline (IOCB_CMD_FSYNC would complete it out of order)
            _ if self.pending.len() + self.inflight > 0 => Submit::Busy,
            // SAFETY: the caller's contract, passed on; the op is done
            // when SyncEngine's submit returns.
            _ => unsafe { SyncEngine.submit(op, token) },
        }
    }

    fn commit(&mut self) -> io::Result<()> {
        let mut at = 0;
        while at < self.pending.len() {
            self.ptrs.clear();
            self.ptrs.extend(self.pending[at..].iter_mut().map(|c| c as *mut Iocb));
            // SAFETY: the iocbs are this engine's and stay put for the call
            // (the kernel copies each one in); their buffers are the
            // caller's, valid until reaped (Engine::submit's contract).
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx as libc::c_ulong,
                    self.ptrs.len() as libc::c_long,
                    self.ptrs.as_mut_ptr(),
                )
            };
            match ret(r) {
                Ok(n) => {
                    self.inflight += n;
                    at += n;
                }
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) && self.inflight > 0 => break,
                // The first iocb is refused (a bad fd, a misaligned O_DIRECT
                // buffer): that operation completes with the error, as it
                // would under io_uring, and the rest go on.
                Err(e) => {
                    self.ready.push(Completion {
                        token: self.pending[at].aio_data,
                        result: -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
                    });
                    at += 1;
                }
            }
        }
        self.pending.drain(..at);
        Ok(())
    }

    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        self.commit()?;
        let have = self.ready.len();
        out.append(&mut self.ready);
        if self.inflight == 0 {
            return Ok(());
        }
        let want = min.saturating_sub(have).min(self.inflight);
        loop {
            // SAFETY: `events` holds room for `inflight` (≤ depth) events;
            // a null timeout waits for `want`.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx as libc::c_ulong,
                    want as libc::c_long,
                    self.inflight as libc::c_long,
                    self.events.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            match ret(r) {
                Ok(n) => {
                    self.inflight -= n;
                    out.extend(self.events[..n].iter().map(|e| Completion {
                        token: e.data,
                        result: e.res,
                    }));
                    return Ok(());
                }
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! What libaio does beyond the conformance tests of every engine.
    use super::*;
    use crate::engine::NO_BUF_INDEX;
    use crate::workload::AlignedBuf;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;

    fn read(fd: i32, offset: u64, buf: *mut u8, len: usize) -> Op {
        Op::Read {
            fd,
            offset,
            buf,
            len,
            buf_index: NO_BUF_INDEX,
        }
    }

    #[test]
    fn a_sync_waits_for_the_queue_to_drain() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[1u8; 8192]).unwrap();
        let fd = f.as_raw_fd();
        let mut e = LibaioEngine::new(4).unwrap();
        let mut buf = [0u8; 4096];
        // SAFETY: `buf` outlives the op, which is reaped below before it is read.
        let queued = unsafe { e.submit(&read(fd, 0, buf.as_mut_ptr(), 4096), 1) };
        assert_eq!(queued, Submit::Queued);
        e.commit().unwrap();
        // SAFETY: fsync holds no buffer.
        assert_eq!(unsafe { e.submit(&Op::Fsync { fd }, 2) }, Submit::Busy);
        let mut out = Vec::new();
        e.reap(1, &mut out).unwrap();
        assert_eq!(out, [Completion { token: 1, result: 4096 }]);
        // SAFETY: as above.
        assert_eq!(unsafe { e.submit(&Op::Fsync { fd }, 2) }, Submit::Done(0));
        assert_eq!(buf, [1u8; 4096]);
    }

    /// io_submit refuses a misaligned O_DIRECT iocb as a whole call: that
    /// operation completes with EINVAL, the others of the batch still run.
    #[test]
    fn a_refused_iocb_fails_alone() {
        // ext4 or xfs under /var/tmp check O_DIRECT alignment (tmpfs may not)
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![3u8; 16384]).unwrap();
        let Ok(f) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&p)
        else {
            return; // no O_DIRECT here: nothing to check
        };
        let fd = f.as_raw_fd();
        let mut good = AlignedBuf::new(4096, 4096);
        let bad = AlignedBuf::new(8192, 4096);
        let mut e = LibaioEngine::new(4).unwrap();
        // SAFETY: both buffers outlive the engine's use of them (all three
        // ops are reaped below), the misaligned one starts inside `bad`.
        unsafe {
            assert_eq!(e.submit(&read(fd, 0, good.as_ptr(), 4096), 1), Submit::Queued);
            assert_eq!(e.submit(&read(fd, 0, bad.as_ptr().add(1), 4096), 2), Submit::Queued);
            assert_eq!(e.submit(&read(fd, 4096, bad.as_ptr(), 4096), 3), Submit::Queued);
        }
        e.commit().unwrap();
        let mut out = Vec::new();
        while out.len() < 3 {
            e.reap(3 - out.len(), &mut out).unwrap();
        }
        out.sort_by_key(|c| c.token);
        let misaligned = out[1].result;
        if misaligned == 4096 {
            return; // this filesystem accepts misaligned direct I/O
        }
        assert_eq!(misaligned, -(libc::EINVAL as i64));
        assert_eq!((out[0].result, out[2].result), (4096, 4096));
        assert!(good.as_mut_slice().iter().all(|&b| b == 3));
    }
}
