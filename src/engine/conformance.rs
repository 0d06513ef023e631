//! The same checks against every engine: round trip, short reads at EOF,
//! errno propagation, Busy handling, completions matched by token, the
//! metadata operations, and trims (a discard on a block device, ENOTTY on
//! a file; falloc's fallocate modes).
use super::*;
use std::ffi::CString;
use std::io::Write;
use std::os::fd::AsRawFd;

fn engines() -> Vec<Box<dyn Engine>> {
    let o = UringOpts {
        depth: 8,
        ..Default::default()
    };
    [
        EngineKind::Null,
        EngineKind::Sync,
        EngineKind::Uring,
        EngineKind::Libaio,
        EngineKind::Mmap,
        EngineKind::Posixaio,
    ]
    .iter()
    .map(|k| k.build(&o).expect("engine builds (io_uring enabled?)"))
    .collect()
}

/// Runs one operation to completion on any engine.
///
/// # Safety
/// As [`Engine::submit`] until this returns (it reaps the completion).
unsafe fn run(e: &mut dyn Engine, op: Op, token: u64) -> i64 {
    // SAFETY: the caller's contract, and the completion is reaped below.
    match unsafe { e.submit(&op, token) } {
        Submit::Done(r) => r,
        Submit::Queued => {
            let mut out = Vec::new();
            e.reap(1, &mut out).unwrap();
            assert_eq!(out.len(), 1, "{}", e.name());
            assert_eq!(out[0].token, token, "{}: completion carries its token", e.name());
            out[0].result
        }
        Submit::Busy => panic!("{}: busy with nothing in flight", e.name()),
    }
}

fn read(fd: RawFd, offset: u64, buf: &mut [u8]) -> Op {
    Op::Read {
        fd,
        offset,
        buf: buf.as_mut_ptr(),
        len: buf.len(),
        buf_index: NO_BUF_INDEX,
    }
}

#[test]
// one SAFETY comment for the many calls of one kind below
#[allow(clippy::undocumented_unsafe_blocks)]
fn round_trip_short_read_and_errno() {
    // SAFETY (each `run` below): the ops' buffers and paths are locals
    // that outlive the call, which reaps the op's completion before it
    // returns, and nothing else touches them meanwhile.
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(&[7u8; 8192]).unwrap();
    let fd = f.as_raw_fd();
    for mut e in engines() {
        let e = e.as_mut();
        let data = [9u8; 4096];
        let mut back = [0u8; 4096];
        let w = Op::Write {
            fd,
            offset: 4096,
            buf: data.as_ptr(),
            len: 4096,
            buf_index: NO_BUF_INDEX,
        };
        assert_eq!(unsafe { run(e, w, 1) }, 4096, "{}", e.name());
        assert_eq!(unsafe { run(e, read(fd, 4096, &mut back), 2) }, 4096, "{}", e.name());
        assert_eq!(unsafe { run(e, Op::Fsync { fd }, 3) }, 0, "{}", e.name());
        assert_eq!(unsafe { run(e, Op::Fdatasync { fd }, 4) }, 0, "{}", e.name());
        if e.caps().real_io {
            assert_eq!(back, data, "{}", e.name());
            assert_eq!(
                unsafe { run(e, read(fd, 6144, &mut back), 5) },
                2048,
                "{}: short read at EOF",
                e.name()
            );
            assert_eq!(
                unsafe { run(e, read(fd, 8192, &mut back), 6) },
                0,
                "{}: read at EOF",
                e.name()
            );
            let bad = read(999_999, 0, &mut back);
            assert_eq!(
                unsafe { run(e, bad, 7) },
                -(libc::EBADF as i64),
                "{}: errno propagates",
                e.name()
            );
        }
    }
}

#[test]
fn busy_when_full_and_completions_matched_by_token() {
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(&(0..32768u32).map(|i| (i / 512) as u8).collect::<Vec<_>>())
        .unwrap();
    let fd = f.as_raw_fd();
    for mut e in engines() {
        let e = e.as_mut();
        let mut bufs = vec![[0u8; 512]; 64];
        let mut results = std::collections::HashMap::new();
        let mut queued = 0;
        let mut saw_busy = false;
        for (i, b) in bufs.iter_mut().enumerate() {
            // token i reads block i: its first byte tells the block
            let op = read(fd, i as u64 * 512, b);
            loop {
                // SAFETY: `bufs` outlives every op, each op its own
                // buffer, and all are reaped before `bufs` is read.
                match unsafe { e.submit(&op, 1000 + i as u64) } {
                    Submit::Done(r) => {
                        results.insert(1000 + i as u64, r);
                        break;
                    }
                    Submit::Queued => {
                        queued += 1;
                        break;
                    }
                    Submit::Busy => {
                        saw_busy = true;
                        assert!(queued >= 8, "{}: busy only when full", e.name());
                        let mut out = Vec::new();
                        e.reap(queued, &mut out).unwrap();
                        queued -= out.len();
                        results.extend(out.iter().map(|c| (c.token, c.result)));
                    }
                }
            }
        }
        let mut out = Vec::new();
        if queued > 0 {
            e.reap(queued, &mut out).unwrap();
        }
        results.extend(out.iter().map(|c| (c.token, c.result)));
        assert_eq!(results.len(), 64, "{}: every token completes once", e.name());
        assert!(results.values().all(|&r| r == 512), "{}", e.name());
        assert_eq!(saw_busy, !e.caps().inline, "{}: a full ring says Busy", e.name());
        if e.caps().real_io {
            for (i, b) in bufs.iter().enumerate() {
                assert_eq!(b[0] as usize, i, "{}: token {} got its own data", e.name(), 1000 + i);
            }
        }
    }
}

#[test]
// one SAFETY comment for the many calls of one kind below
#[allow(clippy::undocumented_unsafe_blocks)]
fn metadata_operations() {
    // SAFETY (each `run` below): the ops' buffers and paths are locals
    // that outlive the call, which reaps the op's completion before it
    // returns, and nothing else touches them meanwhile.
    let dir = tempfile::tempdir().unwrap();
    let d = std::fs::File::open(dir.path()).unwrap();
    let dfd = d.as_raw_fd();
    let name = CString::new("f").unwrap();
    for mut e in engines() {
        let e = e.as_mut();
        if !e.caps().real_io {
            continue;
        }
        let open = Op::OpenAt {
            dirfd: dfd,
            path: name.as_ptr(),
            flags: libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY,
            mode: 0o644,
        };
        let fd = unsafe { run(e, open, 1) };
        assert!(fd >= 0, "{}: openat {fd}", e.name());
        assert_eq!(
            unsafe { run(e, open, 2) },
            -(libc::EEXIST as i64),
            "{}: O_EXCL",
            e.name()
        );
        let mut st: libc::statx = unsafe { std::mem::zeroed() };
        let stat = Op::Statx {
            dirfd: dfd,
            path: name.as_ptr(),
            buf: &mut st,
        };
        assert_eq!(unsafe { run(e, stat, 3) }, 0, "{}", e.name());
        assert_eq!(st.stx_mode as u32 & libc::S_IFMT, libc::S_IFREG, "{}", e.name());
        assert_eq!(unsafe { run(e, Op::Close { fd: fd as RawFd }, 4) }, 0, "{}", e.name());
        let unlink = Op::UnlinkAt {
            dirfd: dfd,
            path: name.as_ptr(),
            flags: 0,
        };
        assert_eq!(unsafe { run(e, unlink, 5) }, 0, "{}", e.name());
        assert_eq!(unsafe { run(e, unlink, 6) }, -(libc::ENOENT as i64), "{}", e.name());
        assert_eq!(unsafe { run(e, stat, 7) }, -(libc::ENOENT as i64), "{}", e.name());
        let mkdir = Op::MkdirAt {
            dirfd: dfd,
            path: name.as_ptr(),
            mode: 0o755,
        };
        assert_eq!(unsafe { run(e, mkdir, 8) }, 0, "{}", e.name());
        assert_eq!(unsafe { run(e, mkdir, 9) }, -(libc::EEXIST as i64), "{}", e.name());
        let rmdir = Op::UnlinkAt {
            dirfd: dfd,
            path: name.as_ptr(),
            flags: libc::AT_REMOVEDIR,
        };
        assert_eq!(unsafe { run(e, rmdir, 10) }, 0, "{}", e.name());
    }
}

#[test]
// one SAFETY comment for the many calls of one kind below
#[allow(clippy::undocumented_unsafe_blocks)]
fn ftruncate_truncates_on_write_and_refuses_the_rest() {
    // SAFETY (each `run` below): the ops' buffers are locals that
    // outlive the call, which completes inline.
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(&[7u8; 8192]).unwrap();
    let fd = f.as_raw_fd();
    let mut e = EngineKind::Ftruncate.build(&UringOpts::default()).unwrap();
    let e = e.as_mut();
    let data = [9u8; 4096];
    let w = |offset| Op::Write {
        fd,
        offset,
        buf: data.as_ptr(),
        len: 4096,
        buf_index: NO_BUF_INDEX,
    };
    // counted as the write's bytes; the file's size is the offset
    assert_eq!(unsafe { run(e, w(12288), 1) }, 4096);
    assert_eq!(f.metadata().unwrap().len(), 12288);
    assert_eq!(unsafe { run(e, w(0), 2) }, 4096);
    assert_eq!(f.metadata().unwrap().len(), 0);
    let mut back = [0u8; 16];
    let einval = -(libc::EINVAL as i64);
    assert_eq!(
        unsafe { run(e, read(fd, 0, &mut back), 3) },
        einval,
        "fio: reads are EINVAL"
    );
    assert_eq!(unsafe { run(e, Op::Fsync { fd }, 4) }, einval, "fio: no sync either");
    let bad = Op::Write {
        fd: 999_999,
        offset: 0,
        buf: data.as_ptr(),
        len: 4096,
        buf_index: NO_BUF_INDEX,
    };
    assert_eq!(unsafe { run(e, bad, 5) }, -(libc::EBADF as i64));
}

#[test]
fn uring_registered_files_and_buffers() {
    // SAFETY (each `run` below): the ops' buffers and paths are locals
    // that outlive the call, which reaps the op's completion before it
    // returns, and nothing else touches them meanwhile.
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(&[5u8; 8192]).unwrap();
    let fd = f.as_raw_fd();
    let o = UringOpts {
        depth: 4,
        fixed_files: true,
        fixed_bufs: true,
        ..Default::default()
    };
    let mut e = EngineKind::Uring.build(&o).unwrap();
    let mut buf = crate::workload::AlignedBuf::new(4096, 4096);
    // SAFETY: `buf` stays valid until `e` is dropped (explicitly, below)
    // and is read only after the op's completion.
    unsafe { e.register(&[fd], &[(buf.as_ptr(), 4096)]) }.unwrap();
    let op = Op::Read {
        fd,
        offset: 0,
        buf: buf.as_ptr(),
        len: 4096,
        buf_index: 0,
    };
    // SAFETY: `buf` is registered and outlives the op, reaped before `run` returns
    assert_eq!(unsafe { run(e.as_mut(), op, 9) }, 4096);
    assert!(buf.as_mut_slice().iter().all(|&b| b == 5));
    drop(e);
    drop(buf);
}

/// A loop device over a sparse file in a temporary directory, detached on
/// drop (the kernel picks a free one: never a hard-coded /dev/loopN); None
/// without root or losetup, which fails the test under FSLAB_REQUIRE_ALL=1.
struct Loop(String, #[allow(dead_code)] tempfile::TempDir);

impl Loop {
    fn new(bytes: u64) -> Option<Loop> {
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("img");
        std::fs::File::create(&img).unwrap().set_len(bytes).unwrap();
        let out = rustix::process::geteuid()
            .is_root()
            .then(|| {
                std::process::Command::new("losetup")
                    .args(["--find", "--show"])
                    .arg(&img)
                    .output()
                    .ok()
            })
            .flatten()
            .filter(|o| o.status.success());
        if !crate::testing::ready_or_skip(out.is_some(), "root and losetup") {
            return None;
        }
        let out = out?;
        Some(Loop(String::from_utf8_lossy(&out.stdout).trim().to_string(), dir))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup").args(["-d", &self.0]).status();
    }
}

#[test]
// one SAFETY comment for the many calls of one kind below
#[allow(clippy::undocumented_unsafe_blocks)]
fn trim_discards_a_device_range_and_is_enotty_on_a_file() {
    // SAFETY (each `run` below): the ops' buffers are locals that outlive
    // the call, which reaps the op's completion before it returns.
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(&[7u8; 8192]).unwrap();
    let fd = f.as_raw_fd();
    let trim = |fd, offset| Op::Trim { fd, offset, len: 4096 };
    for mut e in engines() {
        let e = e.as_mut();
        let want = if e.caps().real_io { -(libc::ENOTTY as i64) } else { 4096 };
        assert_eq!(
            unsafe { run(e, trim(fd, 0), 1) },
            want,
            "{}: fio's os_trim on a file",
            e.name()
        );
    }
    let mut back = vec![0u8; 8192];
    std::os::unix::fs::FileExt::read_exact_at(&f, &mut back, 0).unwrap();
    assert!(back.iter().all(|&b| b == 7), "a file's bytes are untouched");
    let Some(lo) = Loop::new(1 << 20) else {
        return;
    };
    let dev = std::fs::OpenOptions::new().read(true).write(true).open(&lo.0).unwrap();
    let dfd = dev.as_raw_fd();
    for (i, mut e) in engines().into_iter().enumerate() {
        let e = e.as_mut();
        if !e.caps().real_io {
            continue;
        }
        let at = i as u64 * 65536;
        std::os::unix::fs::FileExt::write_all_at(&dev, &[9u8; 65536], at).unwrap();
        dev.sync_all().unwrap();
        assert_eq!(unsafe { run(e, trim(dfd, at + 4096), 2) }, 4096, "{}", e.name());
        let mut got = vec![0u8; 12288];
        std::os::unix::fs::FileExt::read_exact_at(&dev, &mut got, at).unwrap();
        let (before, rest) = got.split_at(4096);
        let (hole, after) = rest.split_at(4096);
        assert!(
            before.iter().chain(after).all(|&b| b == 9),
            "{}: only the range",
            e.name()
        );
        // a loop device discards by punching its file: the range reads zeros
        assert!(
            hole.iter().all(|&b| b == 0),
            "{}: the range reads back as zeros",
            e.name()
        );
        let ro = std::fs::File::open(&lo.0).unwrap();
        let r = unsafe { run(e, trim(ro.as_raw_fd(), at), 3) };
        assert_eq!(
            r,
            -(libc::EBADF as i64),
            "{}: a read-only fd discards nothing",
            e.name()
        );
    }
}

#[test]
// one SAFETY comment for the many calls of one kind below
#[allow(clippy::undocumented_unsafe_blocks)]
fn falloc_allocates_keeps_size_and_punches() {
    // SAFETY (each `run` below): no op carries a pointer that is touched.
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let f = std::fs::File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(dir.path().join("f"))
        .unwrap();
    let fd = f.as_raw_fd();
    let mut e = EngineKind::Falloc.build(&UringOpts::default()).unwrap();
    let e = e.as_mut();
    let data = [0u8; 1];
    let w = Op::Write {
        fd,
        offset: 0,
        buf: data.as_ptr(),
        len: 65536,
        buf_index: NO_BUF_INDEX,
    };
    let blocks = || f.metadata().unwrap().blocks() * 512;
    assert_eq!(unsafe { run(e, w, 1) }, 65536);
    assert_eq!(f.metadata().unwrap().len(), 65536, "a write grows the file");
    assert!(blocks() >= 65536, "and allocates it");
    let mut back = [0u8; 1];
    let mut r = read(fd, 65536, &mut back);
    if let Op::Read { len, .. } = &mut r {
        *len = 65536;
    }
    assert_eq!(unsafe { run(e, r, 2) }, 65536);
    assert_eq!(f.metadata().unwrap().len(), 65536, "a read keeps the size");
    assert!(blocks() >= 131072, "and allocates past it");
    let t = Op::Trim {
        fd,
        offset: 0,
        len: 65536,
    };
    let before = blocks();
    assert_eq!(unsafe { run(e, t, 3) }, 65536);
    assert_eq!(f.metadata().unwrap().len(), 65536, "a trim keeps the size");
    assert_eq!(blocks(), before - 65536, "and punches the range");
    let einval = -(libc::EINVAL as i64);
    assert_eq!(unsafe { run(e, Op::Fsync { fd }, 4) }, einval, "fio: a sync is EINVAL");
}
