//! A fault-injecting FUSE filesystem for tests: in memory, mounted by the
//! test process (as root) in a temporary directory and always unmounted.
//! A test chooses, per operation, an errno to return after N successful
//! calls (EIO, ENOSPC, EDQUOT ...) and a fixed latency to add.
//!
//! [`DelayedLoop`] puts an image file on it and a loop device over that
//! file: with the FUSE files opened FOPEN_DIRECT_IO (no page cache between
//! the loop driver and the daemon) every request of the loop device is one
//! read or write of the daemon, so a delay injected here is device latency
//! (device-mapper's delay target is not available on every kernel).

use fuser::{
    AccessFlags, Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner,
    MountOption, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry,
    ReplyOpen, ReplyStatfs, ReplyWrite, ReplyXattr, Request, TimeOrNow, WriteFlags,
};
use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// Operations faults can be attached to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Create,
    Mkdir,
    Write,
    Read,
    Fsync,
    Setxattr,
}

#[derive(Debug, Default)]
struct Faults {
    /// op -> (errno, successful calls allowed before failing)
    errors: HashMap<Op, (i32, u64)>,
    delays: HashMap<Op, Duration>,
    calls: HashMap<Op, u64>,
    /// Open files FOPEN_DIRECT_IO: every read and write reaches the daemon.
    direct_io: bool,
    /// op -> (request size in bytes -> requests), for Read and Write.
    sizes: HashMap<Op, BTreeMap<u32, u64>>,
    /// op -> (requests, total time from arrival to reply), for Read and Write.
    service: HashMap<Op, (u64, Duration)>,
}

/// The test's handle on the faults of a mounted filesystem.
#[derive(Clone, Default)]
pub struct FaultControl(Arc<Mutex<Faults>>);

impl FaultControl {
    /// `op` fails with `errno` once it has succeeded `after` times.
    pub fn fail(&self, op: Op, errno: i32, after: u64) {
        let mut f = self.0.lock().unwrap();
        f.errors.insert(op, (errno, after));
        f.calls.insert(op, 0);
    }

    pub fn delay(&self, op: Op, d: Duration) {
        self.0.lock().unwrap().delays.insert(op, d);
    }

    pub fn clear(&self) {
        let mut f = self.0.lock().unwrap();
        f.errors.clear();
        f.delays.clear();
    }

    #[allow(dead_code)] // used by tests/tests.rs (fio_output) and the telemetry test binary
    /// Files opened (or created) from now on bypass the kernel's page cache
    /// (FOPEN_DIRECT_IO): each read(2)/write(2) on them is one request here.
    pub fn direct_io(&self, on: bool) {
        self.0.lock().unwrap().direct_io = on;
    }

    #[allow(dead_code)] // used by the telemetry test binary, not by tests/tests.rs
    /// How many `op` requests (Read or Write) of each size arrived since the
    /// last [`FaultControl::reset_sizes`].
    pub fn sizes(&self, op: Op) -> BTreeMap<u32, u64> {
        self.0.lock().unwrap().sizes.get(&op).cloned().unwrap_or_default()
    }

    #[allow(dead_code)] // used by the telemetry test binary, not by tests/tests.rs
    pub fn reset_sizes(&self) {
        let mut f = self.0.lock().unwrap();
        f.sizes.clear();
        f.service.clear();
    }

    #[allow(dead_code)] // used by the telemetry test binary, not by tests/tests.rs
    /// The mean time `op` requests (Read or Write) spent in the daemon, from
    /// arrival to reply, since the last [`FaultControl::reset_sizes`].
    pub fn mean_service(&self, op: Op) -> Option<Duration> {
        let f = self.0.lock().unwrap();
        f.service.get(&op).filter(|(n, _)| *n > 0).map(|(n, t)| *t / *n as u32)
    }

    fn served(&self, op: Op, since: std::time::Instant) {
        let d = since.elapsed();
        let mut f = self.0.lock().unwrap();
        let e = f.service.entry(op).or_insert((0, Duration::ZERO));
        e.0 += 1;
        e.1 += d;
    }

    fn record(&self, op: Op, size: u32) {
        *self
            .0
            .lock()
            .unwrap()
            .sizes
            .entry(op)
            .or_default()
            .entry(size)
            .or_insert(0) += 1;
    }

    fn open_flags(&self) -> FopenFlags {
        if self.0.lock().unwrap().direct_io {
            FopenFlags::FOPEN_DIRECT_IO
        } else {
            FopenFlags::empty()
        }
    }

    /// Applies `op`'s delay and says whether it fails (and how).
    fn check(&self, op: Op) -> Option<Errno> {
        let (delay, fail) = {
            let mut f = self.0.lock().unwrap();
            let delay = f.delays.get(&op).copied();
            let n = f.calls.entry(op).or_insert(0);
            *n += 1;
            let n = *n;
            let fail = f.errors.get(&op).filter(|(_, after)| n > *after).map(|(e, _)| *e);
            (delay, fail)
        };
        if let Some(d) = delay {
            realtime();
            std::thread::sleep(d);
        }
        fail.map(Errno::from_i32)
    }
}

/// Puts the calling daemon thread in SCHED_FIFO (once): an injected delay
/// then lasts as long as asked even on a machine busy with other work (in
/// SCHED_OTHER the timer's wakeup waits for a CPU, 0.5-1 ms more per request
/// under a load of 2 per core), as a real device's latency does not depend on
/// the host's CPU load. The thread sleeps nearly all the time; best effort.
fn realtime() {
    thread_local!(static DONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    DONE.with(|done| {
        if !done.replace(true) {
            let p = libc::sched_param { sched_priority: 1 };
            // SAFETY: sched_setscheduler(2) on the calling thread (pid 0) with a valid param.
            unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) };
        }
    });
}

struct Node {
    attr: FileAttr,
    data: Vec<u8>,
    children: BTreeMap<OsString, u64>,
    xattrs: BTreeMap<OsString, Vec<u8>>,
}

struct State {
    nodes: HashMap<u64, Node>,
    next: u64,
}

struct FaultFs {
    state: Mutex<State>,
    faults: FaultControl,
}

const TTL: Duration = Duration::ZERO;

fn attr(ino: u64, kind: FileType, perm: u16) -> FileAttr {
    let now = SystemTime::now();
    FileAttr {
        ino: INodeNo(ino),
        size: 0,
        blocks: 0,
        atime: now,
        mtime: now,
        ctime: now,
        crtime: now,
        kind,
        perm,
        nlink: if kind == FileType::Directory { 2 } else { 1 },
        uid: 0,
        gid: 0,
        rdev: 0,
        flags: 0,
        blksize: 4096,
    }
}

impl FaultFs {
    fn new(faults: FaultControl) -> Self {
        let mut nodes = HashMap::new();
        nodes.insert(
            1,
            Node {
                attr: attr(1, FileType::Directory, 0o755),
                data: vec![],
                children: BTreeMap::new(),
                xattrs: BTreeMap::new(),
            },
        );
        FaultFs {
            state: Mutex::new(State { nodes, next: 2 }),
            faults,
        }
    }

    fn make(&self, parent: INodeNo, name: &OsStr, kind: FileType, mode: u32) -> Result<FileAttr, Errno> {
        let mut s = self.state.lock().unwrap();
        let p = s.nodes.get(&parent.0).ok_or(Errno::ENOENT)?;
        if p.children.contains_key(name) {
            return Err(Errno::EEXIST);
        }
        let ino = s.next;
        s.next += 1;
        let a = attr(ino, kind, (mode & 0o7777) as u16);
        s.nodes.insert(
            ino,
            Node {
                attr: a,
                data: vec![],
                children: BTreeMap::new(),
                xattrs: BTreeMap::new(),
            },
        );
        s.nodes
            .get_mut(&parent.0)
            .expect("parent")
            .children
            .insert(name.to_owned(), ino);
        Ok(a)
    }

    fn remove(&self, parent: INodeNo, name: &OsStr, dir: bool) -> Result<(), Errno> {
        let mut s = self.state.lock().unwrap();
        let ino = *s
            .nodes
            .get(&parent.0)
            .and_then(|p| p.children.get(name))
            .ok_or(Errno::ENOENT)?;
        let n = s.nodes.get(&ino).ok_or(Errno::ENOENT)?;
        match (dir, n.attr.kind == FileType::Directory) {
            (true, false) => return Err(Errno::ENOTDIR),
            (false, true) => return Err(Errno::EISDIR),
            (true, true) if !n.children.is_empty() => return Err(Errno::ENOTEMPTY),
            _ => {}
        }
        s.nodes.get_mut(&parent.0).expect("parent").children.remove(name);
        s.nodes.remove(&ino);
        Ok(())
    }
}

impl Filesystem for FaultFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let s = self.state.lock().unwrap();
        match s
            .nodes
            .get(&parent.0)
            .and_then(|p| p.children.get(name))
            .and_then(|i| s.nodes.get(i))
        {
            Some(n) => reply.entry(&TTL, &n.attr, Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.state.lock().unwrap().nodes.get(&ino.0) {
            Some(n) => reply.attr(&TTL, &n.attr),
            None => reply.error(Errno::ENOENT),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let mut s = self.state.lock().unwrap();
        let Some(n) = s.nodes.get_mut(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        if let Some(sz) = size {
            n.data.resize(sz as usize, 0);
            n.attr.size = sz;
            n.attr.blocks = sz.div_ceil(512);
        }
        if let Some(m) = mode {
            n.attr.perm = (m & 0o7777) as u16;
        }
        reply.attr(&TTL, &n.attr);
    }

    fn mkdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, mode: u32, _umask: u32, reply: ReplyEntry) {
        if let Some(e) = self.faults.check(Op::Mkdir) {
            return reply.error(e);
        }
        match self.make(parent, name, FileType::Directory, mode) {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        match self.remove(parent, name, false) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        match self.remove(parent, name, true) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        _flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let mut s = self.state.lock().unwrap();
        let Some(ino) = s.nodes.get_mut(&parent.0).and_then(|p| p.children.remove(name)) else {
            return reply.error(Errno::ENOENT);
        };
        let old = s
            .nodes
            .get_mut(&newparent.0)
            .and_then(|p| p.children.insert(newname.to_owned(), ino));
        if let Some(o) = old {
            s.nodes.remove(&o);
        }
        reply.ok();
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if self.state.lock().unwrap().nodes.contains_key(&ino.0) {
            reply.opened(FileHandle(0), self.faults.open_flags());
        } else {
            reply.error(Errno::ENOENT);
        }
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        if let Some(e) = self.faults.check(Op::Create) {
            return reply.error(e);
        }
        match self.make(parent, name, FileType::RegularFile, mode) {
            Ok(a) => reply.created(&TTL, &a, Generation(0), FileHandle(0), self.faults.open_flags()),
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let arrived = std::time::Instant::now();
        self.faults.record(Op::Read, size);
        if let Some(e) = self.faults.check(Op::Read) {
            return reply.error(e);
        }
        let s = self.state.lock().unwrap();
        match s.nodes.get(&ino.0) {
            Some(n) => {
                let start = (offset as usize).min(n.data.len());
                let end = (start + size as usize).min(n.data.len());
                reply.data(&n.data[start..end]);
            }
            None => reply.error(Errno::ENOENT),
        }
        self.faults.served(Op::Read, arrived);
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let arrived = std::time::Instant::now();
        self.faults.record(Op::Write, data.len() as u32);
        if let Some(e) = self.faults.check(Op::Write) {
            return reply.error(e);
        }
        let mut s = self.state.lock().unwrap();
        let Some(n) = s.nodes.get_mut(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let end = offset as usize + data.len();
        if n.data.len() < end {
            n.data.resize(end, 0);
        }
        n.data[offset as usize..end].copy_from_slice(data);
        n.attr.size = n.data.len() as u64;
        n.attr.blocks = n.attr.size.div_ceil(512);
        reply.written(data.len() as u32);
        drop(s);
        self.faults.served(Op::Write, arrived);
    }

    fn flush(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _lock_owner: LockOwner, reply: ReplyEmpty) {
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn fsync(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        match self.faults.check(Op::Fsync) {
            Some(e) => reply.error(e),
            None => reply.ok(),
        }
    }

    fn opendir(&self, _req: &Request, _ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        reply.opened(FileHandle(0), FopenFlags::empty());
    }

    fn readdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, offset: u64, mut reply: ReplyDirectory) {
        let s = self.state.lock().unwrap();
        let Some(n) = s.nodes.get(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let mut entries: Vec<(u64, FileType, OsString)> = vec![
            (ino.0, FileType::Directory, ".".into()),
            (1, FileType::Directory, "..".into()),
        ];
        for (name, i) in &n.children {
            let kind = s.nodes.get(i).map(|c| c.attr.kind).unwrap_or(FileType::RegularFile);
            entries.push((*i, kind, name.clone()));
        }
        for (k, (i, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(i), (k + 1) as u64, kind, &name) {
                break;
            }
        }
        reply.ok();
    }

    fn releasedir(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _flags: OpenFlags, reply: ReplyEmpty) {
        reply.ok();
    }

    fn fsyncdir(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        // 64 GiB free in 4 KiB blocks, a million inodes
        reply.statfs(1 << 24, 1 << 24, 1 << 24, 1 << 20, 1 << 20, 4096, 255, 4096);
    }

    fn setxattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        name: &OsStr,
        value: &[u8],
        _flags: i32,
        _position: u32,
        reply: ReplyEmpty,
    ) {
        if let Some(e) = self.faults.check(Op::Setxattr) {
            return reply.error(e);
        }
        match self.state.lock().unwrap().nodes.get_mut(&ino.0) {
            Some(n) => {
                n.xattrs.insert(name.to_owned(), value.to_vec());
                reply.ok()
            }
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getxattr(&self, _req: &Request, ino: INodeNo, name: &OsStr, size: u32, reply: ReplyXattr) {
        let s = self.state.lock().unwrap();
        match s.nodes.get(&ino.0).and_then(|n| n.xattrs.get(name)) {
            Some(v) if size == 0 => reply.size(v.len() as u32),
            Some(v) if v.len() <= size as usize => reply.data(v),
            Some(_) => reply.error(Errno::ERANGE),
            None => reply.error(Errno::ENODATA),
        }
    }

    fn listxattr(&self, _req: &Request, ino: INodeNo, size: u32, reply: ReplyXattr) {
        let s = self.state.lock().unwrap();
        let mut list = Vec::new();
        if let Some(n) = s.nodes.get(&ino.0) {
            for k in n.xattrs.keys() {
                list.extend_from_slice(k.as_encoded_bytes());
                list.push(0);
            }
        }
        if size == 0 {
            reply.size(list.len() as u32)
        } else if list.len() <= size as usize {
            reply.data(&list)
        } else {
            reply.error(Errno::ERANGE)
        }
    }

    fn removexattr(&self, _req: &Request, ino: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        match self
            .state
            .lock()
            .unwrap()
            .nodes
            .get_mut(&ino.0)
            .map(|n| n.xattrs.remove(name))
        {
            Some(Some(_)) => reply.ok(),
            _ => reply.error(Errno::ENODATA),
        }
    }

    fn access(&self, _req: &Request, _ino: INodeNo, _mask: AccessFlags, reply: ReplyEmpty) {
        reply.ok();
    }
}

/// A mounted fault filesystem; unmounted (lazily if busy) when dropped.
pub struct FaultMount {
    pub dir: tempfile::TempDir,
    pub faults: FaultControl,
    session: Option<fuser::BackgroundSession>,
}

impl FaultMount {
    pub fn new() -> FaultMount {
        let dir = tempfile::tempdir().unwrap();
        let faults = FaultControl::default();
        let mut cfg = Config::default();
        cfg.mount_options = vec![MountOption::FSName("fslab-faultfs".into())];
        cfg.n_threads = Some(4);
        let session = fuser::spawn_mount(FaultFs::new(faults.clone()), dir.path(), &cfg).expect("mount the fault fs");
        FaultMount {
            dir,
            faults,
            session: Some(session),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for FaultMount {
    fn drop(&mut self) {
        let p = self.dir.path().to_path_buf();
        if let Some(s) = self.session.take() {
            if s.umount_and_join().is_err() {
                let _ = std::process::Command::new("umount").arg("-l").arg(&p).status();
            }
        }
    }
}

#[allow(dead_code)] // used by the telemetry test binary, not by tests/tests.rs
/// A loop device over an image file on a fresh fault filesystem opened
/// FOPEN_DIRECT_IO: a block device whose every request is one FUSE read or
/// write, so `faults.delay(Op::Read, d)` makes each read request take `d`.
/// The loop device does direct I/O on the image (`--direct-io=on`): its
/// requests complete in the daemon's reply (no kworker wakeup, which on a
/// busy machine adds scheduling delay to every request).
/// Dropped (also on panic): the loop device is detached, and once the kernel
/// has let go of the image, the filesystem is unmounted.
pub struct DelayedLoop {
    /// "/dev/loopN", as the kernel chose it.
    pub dev: String,
    /// Declared after `dev`, dropped after the detach in `drop`.
    pub mount: FaultMount,
    image: std::path::PathBuf,
}

#[allow(dead_code)] // used by the telemetry test binary, not by tests/tests.rs
impl DelayedLoop {
    pub fn new(size_mib: u64) -> DelayedLoop {
        let mount = FaultMount::new();
        mount.faults.direct_io(true);
        let image = mount.path().join("disk.img");
        std::fs::File::create(&image)
            .and_then(|f| f.set_len(size_mib << 20))
            .expect("the image on the fault fs");
        // The kernel picks a free device: never a hard-coded /dev/loopN.
        let out = std::process::Command::new("losetup")
            .args(["--find", "--show", "--direct-io=on"])
            .arg(&image)
            .output()
            .expect("spawn losetup");
        assert!(
            out.status.success(),
            "losetup on {}: {}",
            image.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        mount.faults.reset_sizes();
        DelayedLoop { dev, mount, image }
    }

    pub fn faults(&self) -> &FaultControl {
        &self.mount.faults
    }

    /// "loopN".
    pub fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }

    /// Whether the loop driver does direct (async) I/O on the image: then a
    /// request completes in the daemon's reply, without waking a kworker.
    pub fn loop_dio(&self) -> bool {
        std::fs::read_to_string(format!("/sys/block/{}/loop/dio", self.name())).is_ok_and(|s| s.trim() == "1")
    }

    /// Whether the kernel still has our loop device over our image.
    fn attached(&self) -> bool {
        std::fs::read_to_string(format!("/sys/block/{}/loop/backing_file", self.name()))
            .map(|b| Path::new(b.trim().trim_end_matches(" (deleted)")) == self.image)
            .unwrap_or(false)
    }
}

impl Drop for DelayedLoop {
    fn drop(&mut self) {
        // no delays nor failures while the kernel lets go of the device
        self.mount.faults.clear();
        let _ = std::process::Command::new("losetup").args(["-d", &self.dev]).status();
        // The detach completes once the last opener closed the device; until
        // then the image is open and the unmount would find the fs busy.
        let t = std::time::Instant::now();
        while self.attached() && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        // then `mount` drops: unmounted
    }
}
