//! The per-phase file operations of [`MetaWorkload`]: one fn per phase kind,
//! each one file (or one directory) of the phase.

use super::{MetaWorkload, PhaseKind};
use crate::engine::{exec, Engine, Op};
use std::ffi::CStr;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// A directory read with one 32 KiB getdents64 buffer, as glibc's readdir
/// (and so bonnie++) reads it. rustix's `OpKind` starts at 768 bytes and grows
/// by as much per call, which costs a large directory more calls.
pub(super) struct DirWalk {
    fd: OwnedFd,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
}

impl DirWalk {
    pub(super) fn open(dir: &OwnedFd) -> std::io::Result<Self> {
        use rustix::fs::{Mode, OFlags};
        let fd = rustix::fs::openat(
            dir,
            c".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(DirWalk {
            fd,
            buf: vec![0u8; 32 * 1024].into_boxed_slice(),
            pos: 0,
            len: 0,
        })
    }

    /// The next entry's name, None at the end (or on an error: the walk ends).
    fn next(&mut self) -> Option<&CStr> {
        if self.pos >= self.len {
            let n = match crate::sys::getdents(rustix::fd::AsFd::as_fd(&self.fd), &mut self.buf) {
                Ok(n) if n > 0 => n,
                _ => return None,
            };
            (self.pos, self.len) = (0, n);
        }
        // struct linux_dirent64: u64 ino, i64 off, u16 reclen, u8 type, name
        let rec = &self.buf[self.pos..self.len];
        let reclen = u16::from_ne_bytes([rec[16], rec[17]]) as usize;
        self.pos += reclen.max(1);
        CStr::from_bytes_until_nul(&rec[19..reclen.min(rec.len())]).ok()
    }
}

impl MetaWorkload {
    fn create(&mut self, e: &mut dyn Engine, idx: u64) -> i64 {
        let d = self.dir_of(idx);
        let dirfd = self.dirfd(d);
        let size = self.size_of(idx);
        let mut nb = [0u8; 48];
        let name = self.name(&mut nb, idx, false);
        let open = Op::OpenAt {
            dirfd,
            path: name.as_ptr(),
            flags: libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY,
            mode: 0o644,
        };
        // SAFETY: `name` lives in `nb`, a local that outlives the op, which exec completes.
        let fd = unsafe { exec(e, &open) };
        if fd < 0 {
            return fd;
        }
        let fd = fd as RawFd;
        let mut r = 0;
        if size > 0 {
            let w = Op::Write {
                fd,
                offset: 0,
                buf: self.data.as_ptr(),
                len: size as usize,
                buf_index: crate::engine::NO_BUF_INDEX,
            };
            // SAFETY: `self.data` holds at least `size` bytes (size_max) and is untouched until
            // exec returns, the op done.
            r = unsafe { exec(e, &w) };
        }
        for x in &self.xattrs {
            if r < 0 {
                break;
            }
            let set = Op::FSetXattr {
                fd,
                name: x.name.as_ptr(),
                value: self.xvalue.as_ptr(),
                len: x.size,
            };
            // SAFETY: `x.name` (a CString of the plan) and `self.xvalue` (sized for the largest
            // xattr) outlive the op, which exec completes.
            let s = unsafe { exec(e, &set) };
            if s < 0 {
                r = s;
            }
        }
        if r >= 0 && self.fsync {
            // SAFETY: fsyncs carry no pointers.
            r = unsafe { exec(e, &Op::Fsync { fd }) }
                .min(0)
                .min(unsafe { exec(e, &Op::Fsync { fd: dirfd }) });
            if r == 0 {
                r = size as i64;
            }
        }
        // SAFETY: no pointers; `fd` is the file this call opened.
        let c = unsafe { exec(e, &Op::Close { fd }) };
        if r < 0 {
            r
        } else if c < 0 {
            c
        } else {
            size as i64
        }
    }

    /// getxattr of each of the file's xattrs, by name relative to its
    /// directory where the engine can (getxattrat), else by absolute path.
    fn getxattrs(&mut self, e: &mut dyn Engine, d: usize, name: &CStr) -> i64 {
        if self.xattrs.is_empty() {
            return 0;
        }
        let (dirfd, path) = if e.caps().xattr_at {
            (self.dirfd(d), name.as_ptr())
        } else {
            self.xattr_by_path = true;
            (libc::AT_FDCWD, self.full_path(d, name))
        };
        for x in &self.xattrs {
            let g = Op::GetXattr {
                dirfd,
                path,
                name: x.name.as_ptr(),
                buf: self.xread.as_mut_ptr(),
                len: self.xread.len(),
            };
            // SAFETY: `path` (the caller's `name`, or `self.path`), `x.name` and `self.xread`
            // outlive the op, which exec completes.
            let r = unsafe { exec(e, &g) };
            if r < 0 {
                return r;
            }
        }
        0
    }

    /// stat (+ open, read the data, close when there is some) (+ getxattr).
    /// bonnie++ 1.98 reads the data in both stat passes, random as well as
    /// sequential (its `stat_file`; strace shows one open + read per file in
    /// each), so a `--bonnie` run does the same work as bonnie++.
    fn stat(&mut self, e: &mut dyn Engine, d: usize, name: &CStr) -> i64 {
        let dirfd = self.dirfd(d);
        let name_ptr = name.as_ptr();
        let buf: *mut libc::statx = &mut *self.st;
        // SAFETY: `name` is the caller's and `self.st` a box of this workload; both outlive the
        // op, which exec completes.
        let r = unsafe {
            exec(
                e,
                &Op::Statx {
                    dirfd,
                    path: name_ptr,
                    buf,
                },
            )
        };
        if r < 0 {
            return r;
        }
        let size = self.st.stx_size;
        let mut moved = 0;
        if size > 0 {
            // SAFETY: `name` is the caller's and outlives the op, which exec completes.
            let fd = unsafe {
                exec(
                    e,
                    &Op::OpenAt {
                        dirfd,
                        path: name_ptr,
                        flags: libc::O_RDONLY,
                        mode: 0,
                    },
                )
            };
            if fd < 0 {
                return fd;
            }
            let len = (size as usize).min(self.data.len());
            // SAFETY: `self.data` holds `len` bytes (at most its length) and is untouched until
            // exec returns, the op done.
            let rd = unsafe {
                exec(
                    e,
                    &Op::Read {
                        fd: fd as RawFd,
                        offset: 0,
                        buf: self.data.as_ptr(),
                        len,
                        buf_index: crate::engine::NO_BUF_INDEX,
                    },
                )
            };
            // SAFETY: no pointers; `fd` is the file this call opened.
            let c = unsafe { exec(e, &Op::Close { fd: fd as RawFd }) };
            if rd < 0 {
                return rd;
            }
            if c < 0 {
                return c;
            }
            moved = rd;
        }
        let g = self.getxattrs(e, d, name);
        if g < 0 {
            g
        } else {
            moved
        }
    }

    /// The sequential stat of the walk's next entry; None when every
    /// directory has been read. The walk is taken out of `self` for the call
    /// so that the name is lent straight from the getdents buffer (no copy
    /// and no zeroed buffer per file: the hot path of a stat-bound phase).
    pub(super) fn seq_stat(&mut self, e: &mut dyn Engine) -> Option<i64> {
        loop {
            let (d, mut dir) = match self.walk.take() {
                Some(w) => w,
                None => {
                    let d = self.next as usize;
                    if d >= self.dirs.fds.len() {
                        return None;
                    }
                    self.next += 1;
                    (d, DirWalk::open(&self.dirs.fds[d]).ok()?)
                }
            };
            let r = loop {
                match dir.next() {
                    Some(n) if matches!(n.to_bytes(), b"." | b"..") => continue,
                    Some(name) => break Some(self.stat(e, d, name)),
                    None => break None,
                }
            };
            if r.is_some() {
                self.walk = Some((d, dir));
                return r;
            }
        }
    }

    /// One directory of the readdir phase, read to its end; None when every
    /// directory has been read.
    pub(super) fn readdir(&mut self) -> Option<i64> {
        let d = self.next as usize;
        if d >= self.dirs.fds.len() {
            return None;
        }
        self.next += 1;
        Some(match rustix::fs::Dir::read_from(&self.dirs.fds[d]) {
            Ok(mut dir) => {
                let mut r = 0;
                while let Some(ent) = dir.read() {
                    if let Err(e) = ent {
                        r = -(e.raw_os_error() as i64);
                        break;
                    }
                }
                r
            }
            Err(err) => -(err.raw_os_error() as i64),
        })
    }

    /// The operation of the phase on its next file (every phase kind but
    /// the readdir and the sequential stat, which go by directory); None
    /// when the phase has visited all its files.
    pub(super) fn file_op(&mut self, e: &mut dyn Engine) -> Option<i64> {
        if self.next >= self.count {
            return None;
        }
        let idx = self.index(self.next);
        self.next += 1;
        let d = self.dir_of(idx);
        let renamed = self.renamed;
        Some(match self.kind {
            PhaseKind::Create => self.create(e, idx),
            PhaseKind::Stat => {
                let mut nb = [0u8; 48];
                let name = self.name(&mut nb, idx, renamed);
                self.stat(e, d, name)
            }
            PhaseKind::Delete => self.delete(e, d, idx, renamed),
            PhaseKind::Getxattr => {
                let mut nb = [0u8; 48];
                let name = self.name(&mut nb, idx, renamed);
                self.getxattrs(e, d, name)
            }
            PhaseKind::Rename => self.rename(e, d, idx, renamed),
            PhaseKind::OpenClose => self.open_close(e, d, idx, renamed),
            PhaseKind::Readdir => unreachable!("handled by readdir"),
        })
    }

    fn delete(&self, e: &mut dyn Engine, d: usize, idx: u64, renamed: bool) -> i64 {
        let mut nb = [0u8; 48];
        let name = self.name(&mut nb, idx, renamed);
        // SAFETY: `name` lives in `nb`, a local that outlives the op, which exec
        // completes.
        unsafe {
            exec(
                e,
                &Op::UnlinkAt {
                    dirfd: self.dirs.fds[d].as_raw_fd(),
                    path: name.as_ptr(),
                    flags: 0,
                },
            )
        }
    }

    fn rename(&self, e: &mut dyn Engine, d: usize, idx: u64, renamed: bool) -> i64 {
        let mut nb = [0u8; 48];
        let mut nb2 = [0u8; 48];
        let dirfd = self.dirs.fds[d].as_raw_fd();
        let old = self.name(&mut nb, idx, renamed).as_ptr();
        let new = self.name(&mut nb2, idx, !renamed).as_ptr();
        // SAFETY: both names live in locals (`nb`, `nb2`) that outlive the op,
        // which exec completes.
        unsafe {
            exec(
                e,
                &Op::RenameAt {
                    olddirfd: dirfd,
                    oldpath: old,
                    newdirfd: dirfd,
                    newpath: new,
                },
            )
        }
    }

    fn open_close(&self, e: &mut dyn Engine, d: usize, idx: u64, renamed: bool) -> i64 {
        let mut nb = [0u8; 48];
        let name = self.name(&mut nb, idx, renamed);
        // SAFETY: `name` lives in `nb`, a local that outlives the op, which exec
        // completes.
        let fd = unsafe {
            exec(
                e,
                &Op::OpenAt {
                    dirfd: self.dirs.fds[d].as_raw_fd(),
                    path: name.as_ptr(),
                    flags: libc::O_RDONLY,
                    mode: 0,
                },
            )
        };
        if fd < 0 {
            fd
        } else {
            // SAFETY: no pointers; `fd` is the file just opened.
            unsafe { exec(e, &Op::Close { fd: fd as RawFd }) }
        }
    }
}
