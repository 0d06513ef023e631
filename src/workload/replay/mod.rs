//! One client of an NBENCH load-file replay: each step executes one line with
//! real POSIX calls (dbench's fileio backend semantics) in the client's own
//! directory, and checks the outcome against the expected status. Every path
//! is resolved beneath that directory ([`beneath`]), so a load file cannot
//! touch anything outside it, through `..` or through a planted symlink.

pub mod beneath;
pub mod wild;

use super::{Step, Workload};
use crate::engine::Engine;
use crate::plan::loadfile::{Expect, Kind, LoadFile, NO_PATH};
use crate::plan::ReplayPlan;
use crate::stats::Instant;
use crate::stats::OpKind;
use crate::sys;
use beneath::{DirCache, OPEN_RESOLVE};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
pub use wild::wild_match;

/// The errno-like code of an operation that succeeded where the load file
/// expected a failure.
pub use crate::errno::UNEXPECTED_SUCCESS;

const DOS_ATTRIB: &CStr = c"user.DosAttrib";

/// A rustix error as the errno the statistics count.
fn errno(e: Errno) -> i32 {
    e.raw_os_error()
}

/// Writes `dir` (a load-file directory path) into `out` for client `me`: a
/// `client1` component becomes the client's own name, as dbench does.
fn rewrite_into(out: &mut String, dir: &str, me: &str) {
    for (i, c) in dir.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(if c == "client1" { me } else { c });
    }
}

/// The last component of path `i` for the client named `me`.
fn leaf_of<'a>(lf: &'a LoadFile, me: &'a CStr, i: u32) -> &'a CStr {
    let l = &lf.leaf[i as usize];
    if l.to_bytes() == b"client1" {
        me
    } else {
        l
    }
}

pub struct ReplayClient {
    lf: Arc<LoadFile>,
    /// This client's name (`client2`), for `client1` in the load file.
    me: String,
    me_c: CString,
    /// The client's directory and the parent directories resolved beneath it.
    dirs: DirCache,
    handles: HashMap<u32, OwnedFd>,
    pc: usize,
    /// (index of the LOOP line, iterations left)
    loops: Vec<(usize, u32)>,
    /// Iterations left of a REPEATed line.
    repeat: u32,
    base: Option<Instant>,
    buf: Vec<u8>,
    xattr: Option<Vec<u8>>,
    sync: bool,
    fsync: bool,
    timestamps: bool,
    strict: bool,
    error: Option<String>,
}

impl ReplayClient {
    /// Client `n` (0-based) working in `root`, a directory fslab made.
    pub fn new(plan: &ReplayPlan, n: u32, root: &Path) -> std::io::Result<Self> {
        let lf = Arc::clone(&plan.loadfile);
        let me = format!("client{}", n + 1);
        let root = rustix::fs::open(
            root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let xattr = plan.xattr.then(|| {
            let mut v = vec![0u8; plan.xattr_size];
            fastrand::Rng::with_seed(plan.seed ^ n as u64).fill(&mut v);
            v
        });
        Ok(ReplayClient {
            lf,
            me_c: CString::new(me.as_str()).expect("a client name has no NUL"),
            me,
            dirs: DirCache::new(root),
            handles: HashMap::new(),
            pc: 0,
            loops: Vec::new(),
            repeat: 0,
            base: None,
            buf: vec![0u8; 1 << 16],
            xattr,
            sync: plan.sync,
            fsync: plan.fsync,
            timestamps: plan.timestamps,
            strict: plan.strict,
            error: None,
        })
    }

    /// The last component of path `i`, for this client.
    fn leaf(&self, i: u32) -> &CStr {
        leaf_of(&self.lf, &self.me_c, i)
    }

    /// Resolves the parent directory of path `i` (cached): its dir index.
    fn parent(&mut self, i: u32) -> Result<u32, i32> {
        let d = self.lf.parent[i as usize];
        let (lf, me) = (&self.lf, &self.me);
        self.dirs
            .ensure(d, |s| rewrite_into(s, &lf.dirs[d as usize], me))
            .map_err(errno)?;
        Ok(d)
    }

    /// The parent directory fd and last component of path `i`.
    fn at(&mut self, i: u32) -> Result<(rustix::fd::BorrowedFd<'_>, &CStr), i32> {
        let d = self.parent(i)?;
        let fd = self.dirs.get(d).ok_or(libc::EBADF)?;
        Ok((fd, self.leaf(i)))
    }

    fn fd(&self, fnum: u32) -> Result<rustix::fd::BorrowedFd<'_>, i32> {
        self.handles.get(&fnum).map(|f| f.as_fd()).ok_or(libc::EBADF)
    }

    fn close_all(&mut self) {
        self.handles.clear();
    }
    /// Moves `pc` to the next operation line, running control lines; wraps at the end.
    fn advance_to_op(&mut self) -> usize {
        loop {
            if self.pc >= self.lf.lines.len() {
                // the load file loops, as dbench's does, from a clean slate
                self.pc = 0;
                self.loops.clear();
                self.close_all();
                self.base = Some(Instant::now());
            }
            let l = self.lf.lines[self.pc];
            match l.kind {
                Kind::Op(_) => return self.pc,
                Kind::Loop => {
                    self.loops.push((self.pc, l.args[0]));
                    self.pc += 1;
                }
                Kind::EndLoop => {
                    match self.loops.last_mut() {
                        Some((start, left)) if *left > 1 => {
                            *left -= 1;
                            self.pc = *start + 1;
                            continue;
                        }
                        _ => {
                            self.loops.pop();
                        }
                    }
                    self.pc += 1;
                }
                Kind::Repeat => {
                    self.repeat = l.args[0];
                    self.pc += 1;
                }
            }
        }
    }

    fn grow(&mut self, n: usize) {
        if self.buf.len() < n {
            self.buf.resize(n, 0);
        }
    }

    /// Executes one operation: Ok(bytes) or Err(errno).
    fn exec(&mut self, dir: OpKind, path: u32, path2: u32, a: [u32; 4]) -> Result<u64, i32> {
        match dir {
            OpKind::NtCreateX => self.nt_create(path, a),
            OpKind::NbClose => self.close(a[0]),
            OpKind::ReadX | OpKind::WriteX => self.transfer(dir == OpKind::WriteX, a),
            OpKind::Flush => {
                rustix::fs::fsync(self.fd(a[0])?).map_err(errno)?;
                Ok(0)
            }
            OpKind::LockX | OpKind::UnlockX => self.lock(dir == OpKind::LockX, a),
            OpKind::NbUnlink => {
                let (d, name) = self.at(path)?;
                rustix::fs::unlinkat(d, name, AtFlags::empty()).map_err(errno)?;
                Ok(0)
            }
            OpKind::NbMkdir => self.mkdir(path),
            OpKind::NbRmdir => self.rmdir(path),
            OpKind::Deltree => self.deltree(path),
            OpKind::NbRename => self.rename(path, path2),
            OpKind::QueryPath => self.query_path(path),
            OpKind::QueryFile => self.query_file(a[0]),
            OpKind::SetFile => self.set_file(a[0]),
            OpKind::QueryFs => {
                rustix::fs::fstatvfs(self.dirs.root()).map_err(errno)?;
                Ok(0)
            }
            OpKind::FindFirst => self.find_first(path, a[1]),
            OpKind::Sleep => {
                std::thread::sleep(Duration::from_micros(a[0] as u64));
                Ok(0)
            }
            _ => Err(libc::ENOSYS),
        }
    }

    /// Close: the handle leaves the table, and close(2)'s own error counts.
    fn close(&mut self, fnum: u32) -> Result<u64, i32> {
        let fd = self.handles.remove(&fnum).ok_or(libc::EBADF)?;
        sys::close(fd).map_err(errno)?;
        Ok(0)
    }

    /// ReadX / WriteX of `a = [fnum, offset, size, expected]`: a short
    /// transfer where the load file expects the full size is EIO.
    fn transfer(&mut self, write: bool, a: [u32; 4]) -> Result<u64, i32> {
        let (off, size, want) = (a[1] as u64, a[2] as usize, a[3] as usize);
        self.grow(size);
        let fd = self.handles.get(&a[0]).ok_or(libc::EBADF)?;
        let n = if write {
            rustix::io::pwrite(fd, &self.buf[..size], off)
        } else {
            rustix::io::pread(fd, &mut self.buf[..size], off)
        }
        .map_err(errno)?;
        if write && self.fsync {
            rustix::fs::fsync(fd).map_err(errno)?;
        }
        if n != want {
            return Err(libc::EIO);
        }
        Ok(n as u64)
    }

    /// LockX / UnlockX of `a = [fnum, offset, length]`: a byte-range lock.
    fn lock(&mut self, lock: bool, a: [u32; 4]) -> Result<u64, i32> {
        let how = if lock { sys::Lock::Write } else { sys::Lock::Unlock };
        sys::set_lock(self.fd(a[0])?, how, a[1] as u64, a[2] as u64).map_err(errno)?;
        Ok(0)
    }

    /// As dbench: an existing directory is fine (the load file makes
    /// \clients once per pass and never removes it).
    fn mkdir(&mut self, path: u32) -> Result<u64, i32> {
        let (d, name) = self.at(path)?;
        match rustix::fs::mkdirat(d, name, Mode::RWXU) {
            Ok(()) | Err(Errno::EXIST) => Ok(0),
            Err(e) => Err(errno(e)),
        }
    }

    fn rmdir(&mut self, path: u32) -> Result<u64, i32> {
        let (d, name) = self.at(path)?;
        let r = rustix::fs::unlinkat(d, name, AtFlags::REMOVEDIR);
        if r.is_ok() {
            self.dirs.clear();
        }
        r.map_err(errno)?;
        Ok(0)
    }

    /// As rm -rf (and dbench): nothing there, not even a parent, is done.
    fn deltree(&mut self, path: u32) -> Result<u64, i32> {
        let (d, name) = match self.at(path) {
            Err(libc::ENOENT) => return Ok(0),
            r => r?,
        };
        let r = beneath::remove_tree(d, name);
        // also a partial removal may have taken cached directories
        self.dirs.clear();
        match r {
            Ok(()) | Err(Errno::NOENT) => Ok(0),
            Err(e) => Err(errno(e)),
        }
    }

    /// QueryPath: stat of the file itself (a planted symlink is not
    /// followed out), and its DOS attribute when xattrs are on.
    fn query_path(&mut self, path: u32) -> Result<u64, i32> {
        let dd = self.parent(path)?;
        let d = self.dirs.get(dd).ok_or(libc::EBADF)?;
        let name = leaf_of(&self.lf, &self.me_c, path);
        rustix::fs::statat(d, name, AtFlags::SYMLINK_NOFOLLOW).map_err(errno)?;
        if self.xattr.is_some() {
            match beneath::lgetxattr_at(d, name, DOS_ATTRIB, &mut self.buf[..256]) {
                Ok(_) | Err(Errno::NODATA) => {}
                Err(e) => return Err(errno(e)),
            }
        }
        Ok(0)
    }

    fn query_file(&mut self, fnum: u32) -> Result<u64, i32> {
        let fd = self.handles.get(&fnum).ok_or(libc::EBADF)?;
        rustix::fs::fstat(fd).map_err(errno)?;
        if self.xattr.is_some() {
            match rustix::fs::fgetxattr(fd, DOS_ATTRIB, &mut self.buf[..256]) {
                Ok(_) | Err(Errno::NODATA) => {}
                Err(e) => return Err(errno(e)),
            }
        }
        Ok(0)
    }

    /// SetFileInformation: times to now, and the DOS attribute.
    fn set_file(&mut self, fnum: u32) -> Result<u64, i32> {
        let fd = self.fd(fnum)?;
        let now = rustix::fs::Timespec {
            tv_sec: 0,
            tv_nsec: rustix::fs::UTIME_NOW,
        };
        let times = rustix::fs::Timestamps {
            last_access: now,
            last_modification: now,
        };
        rustix::fs::futimens(fd, &times).map_err(errno)?;
        if let Some(x) = &self.xattr {
            rustix::fs::fsetxattr(fd, DOS_ATTRIB, x, rustix::fs::XattrFlags::empty()).map_err(errno)?;
        }
        Ok(0)
    }

    /// FindFirst: at least `want` (min 1) names in the directory match the mask.
    fn find_first(&mut self, path: u32, want: u32) -> Result<u64, i32> {
        let (d, mask) = self.at(path)?;
        // a stream of its own: the cached fd is O_PATH
        let fd = rustix::fs::openat(
            d,
            c".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(errno)?;
        let mask = mask.to_bytes();
        let mut dir = rustix::fs::Dir::new(fd).map_err(errno)?;
        let mut found = 0u32;
        while let Some(e) = dir.read() {
            let e = e.map_err(errno)?;
            let n = e.file_name().to_bytes();
            if n != b"." && n != b".." && wild_match(mask, n) {
                found += 1;
                if found >= want.max(1) {
                    break;
                }
            }
        }
        if found == 0 {
            return Err(libc::ENOENT);
        }
        Ok(0)
    }

    /// NTCreateX: dbench fileio's open, with the create dispositions
    /// (0, 2-5 create; 0, 4, 5 also truncate) and directory option 0x1.
    fn nt_create(&mut self, path: u32, a: [u32; 4]) -> Result<u64, i32> {
        let (opts, disp, fnum) = (a[0], a[1], a[2]);
        let mut flags = OFlags::RDWR | OFlags::CLOEXEC;
        let creates = matches!(disp, 0 | 2 | 3 | 4 | 5);
        match disp {
            0 | 4 | 5 => flags |= OFlags::CREATE | OFlags::TRUNC,
            2 | 3 => flags |= OFlags::CREATE,
            _ => {}
        }
        if self.sync {
            flags |= OFlags::SYNC;
        }
        let is_dir = opts & 0x1 != 0;
        let (d, name) = self.at(path)?;
        if is_dir {
            if creates {
                match rustix::fs::mkdirat(d, name, Mode::RWXU) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(errno(e)),
                }
            }
            flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        }
        // openat2 refuses a mode without O_CREAT
        let mode = if flags.contains(OFlags::CREATE) {
            Mode::RUSR | Mode::WUSR
        } else {
            Mode::empty()
        };
        let fd = match rustix::fs::openat2(d, name, flags, mode, OPEN_RESOLVE) {
            Err(Errno::ISDIR) => rustix::fs::openat2(
                d,
                name,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
                OPEN_RESOLVE,
            ),
            r => r,
        }
        .map_err(errno)?;
        if let Some(x) = &self.xattr {
            if creates && !is_dir {
                rustix::fs::fsetxattr(&fd, DOS_ATTRIB, x, rustix::fs::XattrFlags::empty()).map_err(errno)?;
            }
        }
        // a reused handle number closes the file it named
        self.handles.insert(fnum, fd);
        Ok(0)
    }

    /// Rename: both parents resolved beneath the root; a directory moved
    /// clears the cache of parent fds (a cached fd would follow it).
    fn rename(&mut self, path: u32, path2: u32) -> Result<u64, i32> {
        let (d1, d2) = (self.lf.parent[path as usize], self.lf.parent[path2 as usize]);
        self.parent(path)?;
        let uncached = if self.dirs.collides(d1, d2) {
            let (lf, me) = (&self.lf, &self.me);
            Some(
                self.dirs
                    .open_uncached(|s| rewrite_into(s, &lf.dirs[d2 as usize], me))
                    .map_err(errno)?,
            )
        } else {
            self.parent(path2)?;
            None
        };
        let from = self.dirs.get(d1).ok_or(libc::EBADF)?;
        let to = match &uncached {
            Some(fd) => fd.as_fd(),
            None => self.dirs.get(d2).ok_or(libc::EBADF)?,
        };
        let (n1, n2) = (self.leaf(path), self.leaf(path2));
        rustix::fs::renameat(from, n1, to, n2).map_err(errno)?;
        let moved_dir = rustix::fs::statat(to, n2, AtFlags::SYMLINK_NOFOLLOW)
            .map(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)
            .unwrap_or(true);
        if moved_dir {
            self.dirs.clear();
        }
        Ok(0)
    }
}

impl Drop for ReplayClient {
    fn drop(&mut self) {
        self.close_all();
    }
}

impl Workload for ReplayClient {
    fn next_op(&mut self, _slot: usize) -> Option<crate::workload::NextOp> {
        None
    }

    fn queues(&self) -> bool {
        false
    }

    fn next_due(&mut self) -> Option<Instant> {
        if !self.timestamps || self.error.is_some() {
            return None;
        }
        let i = self.advance_to_op();
        let t = self.lf.lines[i].time_us;
        if t == crate::plan::loadfile::NO_TIME {
            return None;
        }
        let base = *self.base.get_or_insert_with(Instant::now);
        Some(base + Duration::from_micros(t as u64))
    }

    fn step(&mut self, _engine: &mut dyn Engine) -> Option<Step> {
        if self.error.is_some() {
            return None;
        }
        let i = self.advance_to_op();
        let l = self.lf.lines[i];
        if self.repeat > 1 {
            self.repeat -= 1;
        } else {
            self.repeat = 0;
            self.pc += 1;
        }
        let Kind::Op(dir) = l.kind else {
            unreachable!("advance_to_op stops at operations")
        };
        let r = self.exec(dir, l.path, l.path2, l.args);
        let result = match (r, l.expect) {
            (Ok(bytes), Expect::Ok | Expect::Any) => bytes as i64,
            (Err(_), Expect::Fail | Expect::Any) => 0,
            (Ok(_), Expect::Fail) => -(UNEXPECTED_SUCCESS as i64),
            (Err(e), Expect::Ok) => -(e as i64),
        };
        if result < 0 && self.strict {
            let what = if l.path != NO_PATH {
                format!(" \"{}\"", self.lf.paths[l.path as usize])
            } else {
                String::new()
            };
            self.error = Some(format!(
                "{}:{}: {}{what}: {} (--strict)",
                self.lf.name,
                l.line_no,
                dir.name(),
                match r {
                    Ok(_) => "succeeded where the load file expects a failure".to_string(),
                    Err(e) => format!(
                        "failed with {} where the load file expects success",
                        crate::errno::errno_name(e)
                    ),
                }
            ));
        }
        Some(Step::new(dir, result))
    }

    fn error(&self) -> Option<String> {
        self.error.clone()
    }
}
