//! The mmap engine, as fio's (`engines/mmap.c`): each file is mapped whole
//! (MAP_SHARED) on first use, a read is a memcpy out of the mapping and a
//! write a memcpy into it, fsync and fdatasync are an msync(MS_SYNC) of the
//! whole mapping. The page faults are the I/O: what it measures is the
//! page cache and the fault path, not read(2)/write(2).
//!
//! Like fio's: the mapping is advised RANDOM or SEQUENTIAL as the job's
//! pattern (fio's fadvise_hint), then DONTNEED (the process starts without
//! the file's pages mapped); with O_DIRECT each read or write is followed
//! by an msync and a DONTNEED of its range ("not really direct, but should
//! drop the pages from the cache", fio's comment). A write past the end of
//! the file is refused (EINVAL): a mapping cannot extend a file, and fslab
//! lays its files out first. As with fio, a file truncated by someone else
//! while mapped ends the process with SIGBUS.

use super::{Caps, Engine, Op, Submit, SyncEngine};
use std::os::fd::RawFd;

/// One file's mapping.
struct Map {
    ptr: *mut u8,
    len: usize,
    direct: bool,
}

pub struct MmapEngine {
    /// Indexed by fd.
    maps: Vec<Option<Map>>,
    /// posix_madvise advice for new mappings (POSIX_MADV_RANDOM or
    /// _SEQUENTIAL), or None.
    advice: Option<i32>,
}

impl Default for MmapEngine {
    fn default() -> Self {
        Self::new()
    }
}

impl MmapEngine {
    pub fn new() -> Self {
        MmapEngine {
            maps: Vec::new(),
            advice: None,
        }
    }

    /// The mapping of `fd`, made (or made again, if the file grew past it)
    /// to hold `end` bytes if the file has them; an errno otherwise.
    fn map(&mut self, fd: RawFd, end: u64) -> Result<&Map, i64> {
        let i = usize::try_from(fd).map_err(|_| -(libc::EBADF as i64))?;
        if self.maps.len() <= i {
            self.maps.resize_with(i + 1, || None);
        }
        if self.maps[i].as_ref().is_some_and(|m| m.len as u64 >= end) {
            return Ok(self.maps[i].as_ref().unwrap());
        }
        // SAFETY: fstat and fcntl on any fd are sound (a bad one is EBADF).
        let (size, fl) = unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut st) < 0 {
                return Err(errno());
            }
            (st.st_size as u64, libc::fcntl(fd, libc::F_GETFL))
        };
        if self.maps[i].as_ref().is_some_and(|m| m.len as u64 == size) {
            // past the end of a file that did not grow: a short read
            return Ok(self.maps[i].as_ref().unwrap());
        }
        if let Some(old) = self.maps[i].take() {
            // SAFETY: a mapping this engine made, no longer referenced.
            unsafe { libc::munmap(old.ptr.cast(), old.len) };
        }
        if size == 0 {
            return Err(-(libc::EINVAL as i64));
        }
        let prot = match fl & libc::O_ACCMODE {
            libc::O_RDONLY => libc::PROT_READ,
            _ => libc::PROT_READ | libc::PROT_WRITE,
        };
        let len = size as usize;
        // SAFETY: a new shared mapping of the file; nothing else refers to it.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
        if ptr == libc::MAP_FAILED {
            return Err(errno());
        }
        // SAFETY: advice on the mapping just made, as fio gives it.
        unsafe {
            if let Some(a) = self.advice {
                libc::posix_madvise(ptr, len, a);
            }
            libc::posix_madvise(ptr, len, libc::POSIX_MADV_DONTNEED);
        }
        self.maps[i] = Some(Map {
            ptr: ptr.cast(),
            len,
            direct: fl & libc::O_DIRECT != 0,
        });
        Ok(self.maps[i].as_ref().unwrap())
    }
}

fn errno() -> i64 {
    -(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) as i64)
}

/// fio's "not really direct": the range written back and dropped.
///
/// # Safety
/// `p..p+len` lies within a mapping.
unsafe fn drop_range(p: *mut u8, len: usize) -> i64 {
    let page = rustix::param::page_size();
    let start = (p as usize) & !(page - 1);
    let len = len + (p as usize - start);
    // SAFETY: page-aligned start within the same mapping (mappings are page-aligned).
    unsafe {
        if libc::msync(start as *mut libc::c_void, len, libc::MS_SYNC) < 0 {
            return errno();
        }
        libc::posix_madvise(start as *mut libc::c_void, len, libc::POSIX_MADV_DONTNEED);
    }
    0
}

impl Drop for MmapEngine {
    fn drop(&mut self) {
        for m in self.maps.iter().flatten() {
            // SAFETY: mappings this engine made; nothing refers to them after it.
            unsafe { libc::munmap(m.ptr.cast(), m.len) };
        }
    }
}

impl Engine for MmapEngine {
    fn name(&self) -> &'static str {
        "mmap"
    }

    fn caps(&self) -> Caps {
        Caps {
            inline: true,
            real_io: true,
            max_depth: 1,
            xattr_at: SyncEngine.caps().xattr_at,
        }
    }

    /// # Safety
    /// As [`Engine::submit`]; the op is done when this returns.
    unsafe fn submit(&mut self, op: &Op, token: u64) -> Submit {
        let (fd, offset, len, write) = match *op {
            Op::Read { fd, offset, len, .. } => (fd, offset, len, false),
            Op::Write { fd, offset, len, .. } => (fd, offset, len, true),
            Op::Fsync { fd } | Op::Fdatasync { fd } => {
                return Submit::Done(match self.map(fd, 0) {
                    // SAFETY: the whole of a mapping this engine made.
                    Ok(m) if unsafe { libc::msync(m.ptr.cast(), m.len, libc::MS_SYNC) } < 0 => errno(),
                    Ok(_) => 0,
                    Err(e) => e,
                });
            }
            // SAFETY: the caller's contract, passed on.
            _ => return unsafe { SyncEngine.submit(op, token) },
        };
        let m = match self.map(fd, offset.saturating_add(len as u64)) {
            Ok(m) => m,
            Err(e) => return Submit::Done(e),
        };
        let n = if offset >= m.len as u64 {
            0
        } else {
            len.min(m.len - offset as usize)
        };
        if write && n < len {
            return Submit::Done(-(libc::EINVAL as i64));
        }
        // SAFETY: `offset..offset+n` lies within the mapping; the caller's
        // buffer holds `len` ≥ n bytes (Engine::submit's contract).
        unsafe {
            let at = m.ptr.add(offset as usize);
            match *op {
                Op::Read { buf, .. } => std::ptr::copy_nonoverlapping(at, buf, n),
                Op::Write { buf, .. } => std::ptr::copy_nonoverlapping(buf, at, n),
                _ => unreachable!(),
            }
            if m.direct && n > 0 {
                let r = drop_range(at, n);
                if r < 0 {
                    return Submit::Done(r);
                }
            }
        }
        Submit::Done(n as i64)
    }

    fn advise(&mut self, random: Option<bool>) {
        self.advice = random.map(|r| {
            if r {
                libc::POSIX_MADV_RANDOM
            } else {
                libc::POSIX_MADV_SEQUENTIAL
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::NO_BUF_INDEX;
    use std::os::fd::AsRawFd;

    /// A write through the mapping is in the file once msync'ed (fsync),
    /// and a write past the end is refused, not a SIGBUS.
    #[test]
    fn writes_reach_the_file_and_never_extend_it() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![0u8; 8192]).unwrap();
        let f = std::fs::OpenOptions::new().read(true).write(true).open(&p).unwrap();
        let fd = f.as_raw_fd();
        let mut e = MmapEngine::new();
        e.advise(Some(true));
        let data = [7u8; 4096];
        let w = |offset| Op::Write {
            fd,
            offset,
            buf: data.as_ptr(),
            len: 4096,
            buf_index: NO_BUF_INDEX,
        };
        // SAFETY: `data` outlives each call, which completes the op inline.
        unsafe {
            assert_eq!(e.submit(&w(4096), 1), Submit::Done(4096));
            assert_eq!(e.submit(&Op::Fsync { fd }, 2), Submit::Done(0));
            assert_eq!(e.submit(&w(6144), 3), Submit::Done(-(libc::EINVAL as i64)));
        }
        drop(e);
        let back = std::fs::read(&p).unwrap();
        assert_eq!(back.len(), 8192, "the file keeps its size");
        assert!(back[..4096].iter().all(|&b| b == 0));
        assert!(back[4096..].iter().all(|&b| b == 7));
    }
}
