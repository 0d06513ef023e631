//! One client of an NBENCH load-file replay: each step executes one line with
//! real POSIX calls (dbench's fileio backend semantics) in the client's own
//! directory, and checks the outcome against the expected status.

use super::{Step, Workload};
use crate::engine::Engine;
use crate::plan::loadfile::{Expect, Kind, LoadFile, NO_PATH};
use crate::plan::ReplayPlan;
use crate::runner::Instant;
use crate::stats::Dir;
use std::collections::HashMap;
use std::ffi::CString;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The errno-like code of an operation that succeeded where the load file
/// expected a failure.
pub const UNEXPECTED_SUCCESS: i32 = 1000;

const DOS_ATTRIB: &std::ffi::CStr = c"user.DosAttrib";

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// Case-insensitive SMB wildcard match (`*`, `?`).
fn wild_match(pat: &[u8], name: &[u8]) -> bool {
    match (pat.first(), name.first()) {
        (None, None) => true,
        (Some(b'*'), _) => wild_match(&pat[1..], name) || (!name.is_empty() && wild_match(pat, &name[1..])),
        (Some(b'?'), Some(_)) => wild_match(&pat[1..], &name[1..]),
        (Some(p), Some(n)) if p.eq_ignore_ascii_case(n) => wild_match(&pat[1..], &name[1..]),
        _ => false,
    }
}

pub struct ReplayClient {
    lf: Arc<LoadFile>,
    /// Absolute path of every interned path, rewritten for this client.
    paths: Vec<CString>,
    root: CString,
    handles: HashMap<u32, RawFd>,
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
    /// Client `n` (0-based) working in `root`, which exists.
    pub fn new(plan: &ReplayPlan, n: u32, root: &Path) -> Self {
        let lf = Arc::clone(&plan.loadfile);
        let me = format!("client{}", n + 1);
        let paths = lf
            .paths
            .iter()
            .map(|p| {
                let rewritten: Vec<&str> = p
                    .split('/')
                    .map(|c| if c == "client1" { me.as_str() } else { c })
                    .collect();
                let full = root.join(rewritten.join("/"));
                CString::new(full.as_os_str().as_bytes()).expect("no NUL in load-file paths")
            })
            .collect();
        let xattr = plan.xattr.then(|| {
            let mut v = vec![0u8; plan.xattr_size];
            fastrand::Rng::with_seed(plan.seed ^ n as u64).fill(&mut v);
            v
        });
        ReplayClient {
            lf,
            paths,
            root: CString::new(root.as_os_str().as_bytes()).expect("no NUL in the work directory"),
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
        }
    }

    fn path(&self, i: u32) -> &CString {
        &self.paths[i as usize]
    }

    fn fd(&self, fnum: u32) -> Result<RawFd, i32> {
        self.handles.get(&fnum).copied().ok_or(libc::EBADF)
    }

    fn close_all(&mut self) {
        for (_, fd) in self.handles.drain() {
            // SAFETY: fds this client opened.
            unsafe { libc::close(fd) };
        }
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
    fn exec(&mut self, dir: Dir, path: u32, path2: u32, a: [u32; 4]) -> Result<u64, i32> {
        // SAFETY (all calls below): NUL-terminated paths, fds owned by this
        // client, buffers at least as large as the lengths passed.
        unsafe {
            match dir {
                Dir::NtCreateX => {
                    let (opts, disp, fnum) = (a[0], a[1], a[2]);
                    let mut flags = libc::O_RDWR | libc::O_CLOEXEC;
                    let creates = matches!(disp, 0 | 2 | 3 | 4 | 5);
                    match disp {
                        0 | 4 | 5 => flags |= libc::O_CREAT | libc::O_TRUNC,
                        2 | 3 => flags |= libc::O_CREAT,
                        _ => {}
                    }
                    if self.sync {
                        flags |= libc::O_SYNC;
                    }
                    let p = self.path(path).as_ptr();
                    let is_dir = opts & 0x1 != 0;
                    if is_dir {
                        if creates && libc::mkdir(p, 0o700) != 0 && errno() != libc::EEXIST {
                            return Err(errno());
                        }
                        flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
                    }
                    let mut fd = libc::open(p, flags, 0o600);
                    if fd < 0 && errno() == libc::EISDIR {
                        fd = libc::open(p, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC);
                    }
                    if fd < 0 {
                        return Err(errno());
                    }
                    if let Some(x) = &self.xattr {
                        if creates
                            && !is_dir
                            && libc::fsetxattr(fd, DOS_ATTRIB.as_ptr(), x.as_ptr().cast(), x.len(), 0) != 0
                        {
                            let e = errno();
                            libc::close(fd);
                            return Err(e);
                        }
                    }
                    if let Some(old) = self.handles.insert(fnum, fd) {
                        libc::close(old);
                    }
                    Ok(0)
                }
                Dir::NbClose => {
                    let fd = self.handles.remove(&a[0]).ok_or(libc::EBADF)?;
                    if libc::close(fd) != 0 {
                        return Err(errno());
                    }
                    Ok(0)
                }
                Dir::ReadX | Dir::WriteX => {
                    let fd = self.fd(a[0])?;
                    let (off, size, want) = (a[1] as i64, a[2] as usize, a[3] as i64);
                    self.grow(size);
                    let n = if dir == Dir::ReadX {
                        libc::pread(fd, self.buf.as_mut_ptr().cast(), size, off)
                    } else {
                        libc::pwrite(fd, self.buf.as_ptr().cast(), size, off)
                    };
                    if n < 0 {
                        return Err(errno());
                    }
                    if dir == Dir::WriteX && self.fsync && libc::fsync(fd) != 0 {
                        return Err(errno());
                    }
                    if n as i64 != want {
                        // a short transfer where the load file expects the full size
                        return Err(libc::EIO);
                    }
                    Ok(n as u64)
                }
                Dir::Flush => {
                    if libc::fsync(self.fd(a[0])?) != 0 {
                        return Err(errno());
                    }
                    Ok(0)
                }
                Dir::LockX | Dir::UnlockX => {
                    let fd = self.fd(a[0])?;
                    let mut fl: libc::flock = std::mem::zeroed();
                    fl.l_type = if dir == Dir::LockX {
                        libc::F_WRLCK
                    } else {
                        libc::F_UNLCK
                    } as i16;
                    fl.l_whence = libc::SEEK_SET as i16;
                    fl.l_start = a[1] as i64;
                    fl.l_len = a[2] as i64;
                    if libc::fcntl(fd, libc::F_SETLK, &fl) != 0 {
                        return Err(errno());
                    }
                    Ok(0)
                }
                Dir::NbUnlink => ok(libc::unlink(self.path(path).as_ptr())),
                // as dbench: an existing directory is fine (the load file
                // makes \clients once per pass and never removes it)
                Dir::NbMkdir => match libc::mkdir(self.path(path).as_ptr(), 0o700) {
                    0 => Ok(0),
                    _ if errno() == libc::EEXIST => Ok(0),
                    _ => Err(errno()),
                },
                Dir::NbRmdir => ok(libc::rmdir(self.path(path).as_ptr())),
                Dir::Deltree => {
                    let p = Path::new(std::ffi::OsStr::from_bytes(self.path(path).as_bytes()));
                    match std::fs::remove_dir_all(p) {
                        Ok(()) => Ok(0),
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
                        Err(e) => Err(e.raw_os_error().unwrap_or(libc::EIO)),
                    }
                }
                Dir::NbRename => ok(libc::rename(self.path(path).as_ptr(), self.path(path2).as_ptr())),
                Dir::QueryPath => {
                    let mut st: libc::stat = std::mem::zeroed();
                    let p = self.path(path).as_ptr();
                    if libc::stat(p, &mut st) != 0 {
                        return Err(errno());
                    }
                    if self.xattr.is_some() {
                        let r = libc::getxattr(p, DOS_ATTRIB.as_ptr(), self.buf.as_mut_ptr().cast(), 256);
                        if r < 0 && errno() != libc::ENODATA {
                            return Err(errno());
                        }
                    }
                    Ok(0)
                }
                Dir::QueryFile => {
                    let fd = self.fd(a[0])?;
                    let mut st: libc::stat = std::mem::zeroed();
                    if libc::fstat(fd, &mut st) != 0 {
                        return Err(errno());
                    }
                    if self.xattr.is_some() {
                        let r = libc::fgetxattr(fd, DOS_ATTRIB.as_ptr(), self.buf.as_mut_ptr().cast(), 256);
                        if r < 0 && errno() != libc::ENODATA {
                            return Err(errno());
                        }
                    }
                    Ok(0)
                }
                Dir::SetFile => {
                    let fd = self.fd(a[0])?;
                    if libc::futimens(fd, std::ptr::null()) != 0 {
                        return Err(errno());
                    }
                    if let Some(x) = &self.xattr {
                        if libc::fsetxattr(fd, DOS_ATTRIB.as_ptr(), x.as_ptr().cast(), x.len(), 0) != 0 {
                            return Err(errno());
                        }
                    }
                    Ok(0)
                }
                Dir::QueryFs => {
                    let mut sv: libc::statvfs = std::mem::zeroed();
                    ok(libc::statvfs(self.root.as_ptr(), &mut sv))
                }
                Dir::FindFirst => {
                    let full = self.path(path).as_bytes();
                    let slash = full.iter().rposition(|&c| c == b'/').unwrap_or(0);
                    let (parent, mask) = (&full[..slash], &full[slash + 1..]);
                    let parent = std::ffi::OsStr::from_bytes(parent);
                    let d = rustix::fs::open(
                        parent,
                        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
                        rustix::fs::Mode::empty(),
                    )
                    .map_err(|e| e.raw_os_error())?;
                    let mut dir = rustix::fs::Dir::read_from(&d).map_err(|e| e.raw_os_error())?;
                    let mut found = 0u32;
                    while let Some(e) = dir.read() {
                        let e = e.map_err(|e| e.raw_os_error())?;
                        let n = e.file_name().to_bytes();
                        if n != b"." && n != b".." && wild_match(mask, n) {
                            found += 1;
                            if found >= a[1].max(1) {
                                break;
                            }
                        }
                    }
                    if found == 0 {
                        return Err(libc::ENOENT);
                    }
                    Ok(0)
                }
                Dir::Sleep => {
                    std::thread::sleep(Duration::from_micros(a[0] as u64));
                    Ok(0)
                }
                _ => Err(libc::ENOSYS),
            }
        }
    }
}

fn ok(r: libc::c_int) -> Result<u64, i32> {
    if r != 0 {
        Err(errno())
    } else {
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
                        crate::report::errno_name(e)
                    ),
                }
            ));
        }
        Some(Step { dir, result })
    }

    fn error(&self) -> Option<String> {
        self.error.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::wild_match;

    #[test]
    fn wildcards_match_case_insensitively() {
        assert!(wild_match(b"FILLER.*", b"filler.000"));
        assert!(wild_match(b"*", b"x"));
        assert!(wild_match(b"a?c", b"ABC"));
        assert!(!wild_match(b"FILLER.*", b"other"));
        assert!(!wild_match(b"a?c", b"ac"));
    }
}
