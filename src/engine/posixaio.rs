//! The posixaio engine: POSIX AIO as glibc implements it (aio_read,
//! aio_write, aio_error, aio_return, aio_suspend), as fio's `posixaio`
//! uses it. glibc runs each request as a pread or pwrite on a thread of
//! its own pool, so what this measures is that hand-off: slower than
//! libaio or io_uring, which is why people compare it with them.
//!
//! Reads and writes are queued in one of `depth` control blocks (each at
//! a fixed address while in flight, as POSIX requires); completions are
//! found by polling aio_error over the blocks in flight and, when none is
//! done, waiting in aio_suspend, as fio does. fsync, fdatasync and the
//! metadata operations wait for the queue to drain and then run inline.

use super::{Caps, Completion, Engine, Op, Submit, SyncEngine};
use std::io;

pub struct PosixAioEngine {
    /// The control blocks: boxed, so their addresses never move.
    cbs: Box<[libc::aiocb]>,
    /// Each block's token while it is in flight.
    tokens: Box<[Option<u64>]>,
    free: Vec<usize>,
    inflight: usize,
    /// aio_suspend's list, kept to not allocate per wait.
    list: Vec<*const libc::aiocb>,
}

impl PosixAioEngine {
    pub fn new(depth: u32) -> Self {
        let depth = depth.max(1) as usize;
        // SAFETY: aiocb is plain data (integers and pointers); all-zero is
        // its initial state.
        let cbs = (0..depth).map(|_| unsafe { std::mem::zeroed() }).collect();
        PosixAioEngine {
            cbs,
            tokens: vec![None; depth].into(),
            free: (0..depth).rev().collect(),
            inflight: 0,
            list: Vec::with_capacity(depth),
        }
    }

    /// Collects what has completed into `out`; how many.
    fn collect(&mut self, out: &mut Vec<Completion>) -> usize {
        let mut n = 0;
        for i in 0..self.cbs.len() {
            let Some(token) = self.tokens[i] else { continue };
            let cb = &mut self.cbs[i];
            // SAFETY: a block this engine queued and has not yet returned.
            let err = unsafe { libc::aio_error(cb) };
            if err == libc::EINPROGRESS {
                continue;
            }
            // SAFETY: as above; called once per completed request.
            let r = unsafe { libc::aio_return(cb) };
            let result = if r < 0 { -(err.max(1) as i64) } else { r as i64 };
            out.push(Completion { token, result });
            self.tokens[i] = None;
            self.free.push(i);
            self.inflight -= 1;
            n += 1;
        }
        n
    }

    /// Waits until at least one request in flight has completed.
    fn wait(&mut self) -> io::Result<()> {
        self.list.clear();
        for (cb, t) in self.cbs.iter().zip(self.tokens.iter()) {
            if t.is_some() {
                self.list.push(cb as *const libc::aiocb);
            }
        }
        // SAFETY: the list points at this engine's blocks in flight; a null
        // timeout waits without limit.
        let r = unsafe { libc::aio_suspend(self.list.as_ptr(), self.list.len() as i32, std::ptr::null()) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if !matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EAGAIN)) {
                return Err(e);
            }
        }
        Ok(())
    }
}

impl Drop for PosixAioEngine {
    fn drop(&mut self) {
        // glibc's threads may still write into the caller's buffers: wait
        // for every request before the engine (and then the buffers) goes.
        let mut out = Vec::new();
        while self.inflight > 0 {
            if self.collect(&mut out) == 0 && self.wait().is_err() {
                break;
            }
        }
    }
}

impl Engine for PosixAioEngine {
    fn name(&self) -> &'static str {
        "posixaio"
    }

    fn caps(&self) -> Caps {
        Caps {
            inline: false,
            real_io: true,
            max_depth: self.cbs.len(),
            xattr_at: SyncEngine.caps().xattr_at,
        }
    }

    /// # Safety
    /// As [`Engine::submit`].
    unsafe fn submit(&mut self, op: &Op, token: u64) -> Submit {
        let (fd, offset, buf, len, write) = match *op {
            Op::Read {
                fd, offset, buf, len, ..
            } => (fd, offset, buf, len, false),
            Op::Write {
                fd, offset, buf, len, ..
            } => (fd, offset, buf as *mut u8, len, true),
            _ if self.inflight > 0 => return Submit::Busy,
            // SAFETY: the caller's contract, passed on.
            _ => return unsafe { SyncEngine.submit(op, token) },
        };
        let Some(i) = self.free.pop() else {
            return Submit::Busy;
        };
        let cb = &mut self.cbs[i];
        // SAFETY: as in `new`; the block is not in flight.
        *cb = unsafe { std::mem::zeroed() };
        cb.aio_fildes = fd;
        cb.aio_buf = buf.cast();
        cb.aio_nbytes = len;
        cb.aio_offset = offset as libc::off_t;
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        // SAFETY: the block stays put and untouched until aio_return; the
        // buffer is the caller's, valid until the completion is reaped.
        let r = unsafe {
            if write {
                libc::aio_write(cb)
            } else {
                libc::aio_read(cb)
            }
        };
        if r < 0 {
            self.free.push(i);
            let e = io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO);
            return Submit::Done(-(e as i64));
        }
        self.tokens[i] = Some(token);
        self.inflight += 1;
        Submit::Queued
    }

    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        let want = min.min(self.inflight);
        let mut got = self.collect(out);
        while got < want {
            self.wait()?;
            got += self.collect(out);
        }
        Ok(())
    }
}
