//! The meta workload: bonnie++'s file creation test, with extended attributes.
//!
//! Each step is one file operation of the current phase (a create is open +
//! write + setxattr... + close). File names are computed from indices into a
//! stack buffer, and random order is a bijection on the indices (a Feistel
//! network with cycle walking), so memory stays flat from 10k to 10M files.

use super::{AlignedBuf, NextOp, Step, Workload};
use crate::engine::{exec, Engine, Op};
use crate::plan::meta::XattrSpec;
use crate::plan::{MetaPlan, Order};
use crate::stats::OpKind;
use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;

/// One job's directories: open fds (for the *at calls) and absolute paths
/// (for getxattr where the kernel or engine has no getxattrat).
pub struct JobDirs {
    pub fds: Vec<OwnedFd>,
    pub paths: Vec<CString>,
}

/// splitmix64: a fast, well-mixed hash of an index.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A pseudo-random permutation of `0..n` in O(1) memory.
#[derive(Clone, Debug)]
pub struct Perm {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Perm {
    pub fn new(n: u64, seed: u64) -> Self {
        let bits = 64 - n.max(2).saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        Perm {
            n,
            half_bits,
            keys: std::array::from_fn(|i| mix(seed ^ ((i as u64 + 1) * 0xA24B_AED4_963E_E407))),
        }
    }

    #[inline]
    fn round(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for k in self.keys {
            let t = l ^ (mix(r ^ k) & mask);
            l = r;
            r = t;
        }
        (l << self.half_bits) | r
    }

    /// The i-th element of the permutation (cycle walking keeps it in `0..n`).
    #[inline]
    pub fn at(&self, i: u64) -> u64 {
        let mut x = self.round(i);
        while x >= self.n {
            x = self.round(x);
        }
        x
    }
}

const NAME_CHARS: &[u8; 62] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// "00" "01" ... "99": two decimal digits per table lookup.
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849\
5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/// Writes the name of file `idx` into `buf` and returns it: bonnie++'s scheme
/// of a 10-digit number and 0..12 random characters, the characters after
/// the number in the sequential phases and before it in the random ones
/// ("an order that will appear random to the file system", bonnie++'s
/// readme), with the job in front for shared directories and `~` after a
/// rename phase. On the hot path of every create, random stat and delete:
/// two digits per step, and the random characters drawn from one hash by
/// multiplication (each takes the next base-62 digit of the hash read as a
/// fraction) rather than one hash each.
#[inline]
pub fn file_name(
    buf: &mut [u8; 48],
    idx: u64,
    job: Option<u32>,
    random_first: bool,
    renamed: bool,
    seed: u64,
) -> &CStr {
    let mut n = 0;
    if let Some(j) = job {
        for d in [j / 100 % 10, j / 10 % 10, j % 10] {
            buf[n] = b'0' + d as u8;
            n += 1;
        }
        buf[n] = b'-';
        n += 1;
    }
    let h = mix(idx ^ seed);
    let extra = (h % 13) as usize;
    let (digits_at, chars_at) = if random_first { (n + extra, n) } else { (n, n + 10) };
    // the last 10 decimal digits of idx
    let mut v = idx % 10_000_000_000;
    for k in (0..5).rev() {
        let p = (v % 100) as usize * 2;
        v /= 100;
        buf[digits_at + 2 * k..digits_at + 2 * k + 2].copy_from_slice(&DIGIT_PAIRS[p..p + 2]);
    }
    let mut r = mix(h);
    for i in 0..extra {
        if i == 10 {
            // 10 draws use 59.5 of the 64 bits
            r = mix(r);
        }
        let p = r as u128 * NAME_CHARS.len() as u128;
        buf[chars_at + i] = NAME_CHARS[(p >> 64) as usize];
        r = p as u64;
    }
    n += 10 + extra;
    if renamed {
        buf[n] = b'~';
        n += 1;
    }
    buf[n] = 0;
    // SAFETY: the name is digits, letters, '-' and '~' with one NUL, at the end.
    unsafe { CStr::from_bytes_with_nul_unchecked(&buf[..=n]) }
}

/// The kind of work of one phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PhaseKind {
    Create,
    Stat,
    Delete,
    Getxattr,
    Rename,
    Readdir,
    OpenClose,
}

impl PhaseKind {
    pub fn dir(self) -> OpKind {
        match self {
            PhaseKind::Create => OpKind::Create,
            PhaseKind::Stat => OpKind::Stat,
            PhaseKind::Delete => OpKind::Delete,
            PhaseKind::Getxattr => OpKind::Getxattr,
            PhaseKind::Rename => OpKind::Rename,
            PhaseKind::Readdir => OpKind::Readdir,
            PhaseKind::OpenClose => OpKind::OpenClose,
        }
    }
}

/// A directory read with one 32 KiB getdents64 buffer, as glibc's readdir
/// (and so bonnie++) reads it. rustix's `OpKind` starts at 768 bytes and grows
/// by as much per call, which costs a large directory more calls.
struct DirWalk {
    fd: OwnedFd,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
}

impl DirWalk {
    fn open(dir: &OwnedFd) -> std::io::Result<Self> {
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

/// One job's pass over its files in one phase.
pub struct MetaWorkload {
    kind: PhaseKind,
    order: Order,
    dirs: Arc<JobDirs>,
    /// Files of the job's name space (they map onto the directories).
    files: u64,
    /// How many this phase visits: all, or those a stonewalled create made.
    count: u64,
    /// Names with the random characters first (the random phases).
    random_first: bool,
    job_prefix: Option<u32>,
    renamed: bool,
    seed: u64,
    perm: Perm,
    size_min: u64,
    size_max: u64,
    xattrs: Vec<XattrSpec>,
    xvalue: Vec<u8>,
    xread: Vec<u8>,
    data: AlignedBuf,
    fsync: bool,
    next: u64,
    failed: bool,
    /// Read an xattr by absolute path (no getxattrat): said in a note.
    xattr_by_path: bool,
    /// Sequential stat walks the directories with readdir.
    walk: Option<(usize, DirWalk)>,
    path: Vec<u8>,
    /// The stat buffer, kept across files (not re-zeroed for each).
    st: Box<libc::statx>,
}

impl MetaWorkload {
    /// Job `job`'s pass of phase `kind`. `created`: how many files this job's
    /// create phase made when a stonewall cut it short (None: all of them).
    pub fn new(
        plan: &MetaPlan,
        job: u32,
        dirs: Arc<JobDirs>,
        kind: PhaseKind,
        order: Order,
        renamed: bool,
        created: Option<u64>,
    ) -> Self {
        let seed = plan.seed ^ mix(job as u64);
        let count = match kind {
            PhaseKind::Create => plan.files,
            _ => created.unwrap_or(plan.files).min(plan.files),
        };
        let xmax = plan.xattrs.iter().map(|x| x.size).max().unwrap_or(0);
        let mut xvalue = vec![0u8; xmax];
        fastrand::Rng::with_seed(seed).fill(&mut xvalue);
        let mut data = AlignedBuf::new(plan.size_max.max(1) as usize, 4096);
        fastrand::Rng::with_seed(seed ^ 1).fill(data.as_mut_slice());
        MetaWorkload {
            kind,
            order,
            dirs,
            files: plan.files,
            count,
            random_first: order == Order::Random,
            job_prefix: plan.shared_dirs.then_some(job),
            renamed,
            seed: plan.seed,
            // files 0..count exist (creates go in numeric order, also the
            // random one, so a stonewalled create made the first `count`)
            perm: Perm::new(count, seed ^ kind as u64),
            size_min: plan.size_min,
            size_max: plan.size_max,
            xattrs: plan.xattrs.clone(),
            xread: vec![0u8; xmax.max(1)],
            xvalue,
            data,
            fsync: plan.fsync,
            next: 0,
            failed: false,
            xattr_by_path: false,
            walk: None,
            path: Vec::with_capacity(512),
            // SAFETY: statx is plain integers; all-zero is a valid value.
            st: Box::new(unsafe { std::mem::zeroed() }),
        }
    }

    /// Size of file `idx`: fixed, or drawn per file from [min, max].
    #[inline]
    fn size_of(&self, idx: u64) -> u64 {
        if self.size_max == self.size_min {
            self.size_max
        } else {
            self.size_min + mix(idx ^ self.seed ^ 0x51ce) % (self.size_max - self.size_min + 1)
        }
    }

    #[inline]
    fn dir_of(&self, idx: u64) -> usize {
        let dirs = self.dirs.fds.len() as u64;
        match idx.checked_mul(dirs) {
            Some(p) => (p / self.files) as usize,
            // 128-bit division is a library call: only when it is needed
            None => (idx as u128 * dirs as u128 / self.files as u128) as usize,
        }
    }

    fn dirfd(&self, d: usize) -> RawFd {
        self.dirs.fds[d].as_raw_fd()
    }

    /// Absolute path of `name` in directory `d`, NUL-terminated, in `self.path`.
    fn full_path(&mut self, d: usize, name: &CStr) -> *const libc::c_char {
        self.path.clear();
        self.path.extend_from_slice(self.dirs.paths[d].as_bytes());
        self.path.push(b'/');
        self.path.extend_from_slice(name.to_bytes_with_nul());
        self.path.as_ptr() as *const libc::c_char
    }

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
    fn seq_stat(&mut self, e: &mut dyn Engine) -> Option<i64> {
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

    /// The file of step `i`: bonnie++ creates in numeric order in both
    /// passes (the random create differs by its names) and visits files in
    /// a random order in the random stat, delete and extra phases.
    fn index(&self, i: u64) -> u64 {
        match (self.order, self.kind) {
            (Order::Seq, _) | (Order::Random, PhaseKind::Create) => i,
            (Order::Random, _) => self.perm.at(i),
        }
    }

    fn name<'b>(&self, buf: &'b mut [u8; 48], idx: u64, renamed: bool) -> &'b CStr {
        file_name(buf, idx, self.job_prefix, self.random_first, renamed, self.seed)
    }
}

impl Workload for MetaWorkload {
    fn items_done(&self) -> u64 {
        self.next
    }

    fn next_op(&mut self, _slot: usize) -> Option<NextOp> {
        None
    }

    fn notes(&mut self) -> Vec<String> {
        if self.xattr_by_path {
            vec![format!(
                "{}: getxattr by absolute path (no getxattrat(2) in this kernel or engine): \
                 the rate includes resolving each path from /",
                self.kind.dir().name()
            )]
        } else {
            Vec::new()
        }
    }

    fn queues(&self) -> bool {
        false
    }

    fn step(&mut self, e: &mut dyn Engine) -> Option<Step> {
        if self.failed {
            return None;
        }
        let dir = self.kind.dir();
        let result = match (self.kind, self.order) {
            (PhaseKind::Stat, Order::Seq) => self.seq_stat(e)?,
            (PhaseKind::Readdir, _) => {
                let d = self.next as usize;
                if d >= self.dirs.fds.len() {
                    return None;
                }
                self.next += 1;
                match rustix::fs::Dir::read_from(&self.dirs.fds[d]) {
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
                }
            }
            _ => {
                if self.next >= self.count {
                    return None;
                }
                let idx = self.index(self.next);
                self.next += 1;
                let d = self.dir_of(idx);
                let mut nb = [0u8; 48];
                let mut nb2 = [0u8; 48];
                let renamed = self.renamed;
                match self.kind {
                    PhaseKind::Create => self.create(e, idx),
                    PhaseKind::Stat => {
                        let name = self.name(&mut nb, idx, renamed);
                        self.stat(e, d, name)
                    }
                    PhaseKind::Delete => {
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
                    PhaseKind::Getxattr => {
                        let name = self.name(&mut nb, idx, renamed);
                        self.getxattrs(e, d, name)
                    }
                    PhaseKind::Rename => {
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
                    PhaseKind::OpenClose => {
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
                    PhaseKind::Readdir => unreachable!("handled above"),
                }
            }
        };
        if result < 0 {
            // One failure ends this job's phase: later files depend on it
            // (a file that was not created can't be stat'ed).
            self.failed = true;
        }
        Some(Step { dir, result })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 3, 10, 1000, 4097, 102_400] {
            let p = Perm::new(n, 42);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let x = p.at(i);
                assert!(x < n);
                assert!(!seen[x as usize], "n={n}: {x} twice");
                seen[x as usize] = true;
            }
            if n >= 1000 {
                let fixed = (0..n).filter(|&i| p.at(i) == i).count();
                assert!(fixed < 10, "n={n}: {fixed} fixed points, not shuffled");
            }
        }
    }

    #[test]
    fn names_are_unique_valid_and_stable() {
        let mut seen = std::collections::HashSet::new();
        let mut buf = [0u8; 48];
        let (mut lens, mut chars) = ([0u32; 13], [0u32; 128]);
        for i in (0..20_000u64).chain([9_999_999_999, 12_345_678_901_234]) {
            let n = file_name(&mut buf, i, None, false, false, 7).to_owned();
            let b = n.to_bytes();
            assert!(b.len() >= 10 && b.len() <= 22);
            assert_eq!(&b[..10], format!("{:010}", i % 10_000_000_000).as_bytes());
            assert!(b.iter().all(|c| c.is_ascii_alphanumeric()));
            lens[b.len() - 10] += 1;
            for &c in &b[10..] {
                chars[c as usize] += 1;
            }
            // the random phases' name: the same characters, before the number
            let r = file_name(&mut [0u8; 48], i, None, true, false, 7).to_owned();
            let rb = r.to_bytes();
            assert_eq!(rb.len(), b.len());
            assert_eq!(&rb[..b.len() - 10], &b[10..]);
            assert_eq!(&rb[b.len() - 10..], &b[..10]);
            assert!(seen.insert(n), "{i}");
        }
        // 0..12 random characters, each length and each of the 62 characters
        // about equally often (the draws are uniform, not skewed by the scheme)
        assert!(lens.iter().all(|&l| (1200..=1900).contains(&l)), "{lens:?}");
        let drawn: Vec<u32> = NAME_CHARS.iter().map(|&c| chars[c as usize]).collect();
        let mean = drawn.iter().sum::<u32>() / 62;
        assert!(
            drawn.iter().all(|&k| k > mean * 8 / 10 && k < mean * 12 / 10),
            "{drawn:?}"
        );
        let a = file_name(&mut buf, 5, Some(3), false, true, 7).to_owned();
        assert!(a.to_bytes().starts_with(b"003-0000000005"));
        assert!(a.to_bytes().ends_with(b"~"));
        assert_eq!(file_name(&mut [0u8; 48], 5, Some(3), false, true, 7), a.as_c_str());
        let r = file_name(&mut buf, 5, Some(3), true, true, 7).to_owned();
        assert!(r.to_bytes().starts_with(b"003-"));
        assert!(r.to_bytes().ends_with(b"0000000005~"));
    }
}
