//! Measures the calibration card (`model::calibration`): the cheapest form
//! of each operation fslab times, on this host, in under a second.
//! `app::calibration` chooses the directory, caches the card and makes
//! sure no cell runs meanwhile.
//!
//! A floor is the fastest of ten batches of one operation: an interrupt or
//! another task can make a batch slower, never faster, so the fastest
//! batch is the closest to what the operation itself costs. The noise
//! figure is the other side: how much ten identical loops differ.

use crate::model::calibration::{coefficient_of_variation, AbsentFigure, Calibration};
use rustix::fs::{openat, statat, statvfs, unlinkat, AtFlags, Mode, OFlags};
use std::ffi::CString;
use std::hint::black_box;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::{Duration, Instant};

/// Batches per floor; the fastest counts.
const BATCHES: u32 = 10;
/// What the batches of one floor take together.
const FLOOR_TIME: Duration = Duration::from_millis(50);
/// Files per round of the tmpfs floors, and rounds (the fastest counts).
const FILES: usize = 1000;
const ROUNDS: usize = 3;
/// The page-cache copy: a file of at most this much, read this many times.
const COPY_FILE: u64 = 64 << 20;
const COPY_CHUNK: usize = 1 << 20;
const COPY_PASSES: usize = 3;
/// The copy within the CPU's caches: reads of these sizes, each from a
/// file of four of them.
const HOT_CHUNKS: [usize; 2] = [64 << 10, 1 << 20];
/// The noise loops: how many, and how long each.
const NOISE_LOOPS: usize = 10;
const NOISE_LOOP: Duration = Duration::from_millis(10);

/// The card's figures, measured in `dir` (a work directory of fslab's,
/// or why there is none): the tmpfs floors unless `not_tmpfs` says why
/// not, the cached-page figures in any case (a file just written is in the
/// page cache). A figure that cannot be measured is absent with the
/// reason. The identity fields (build, boot, time, `tmpfs_dir`) are left
/// for the caller.
pub fn measure(dir: Result<&Path, &str>, not_tmpfs: Option<&str>) -> Calibration {
    let started = Instant::now();
    let mut absent = Vec::new();
    // figures that need a file: measured in `at`, or the reason they are absent
    let mut in_dir = |at: Result<&Path, &str>, figures: &[&str], f: &mut dyn FnMut(&Path) -> std::io::Result<()>| {
        let why = match at {
            Ok(d) => match f(d) {
                Ok(()) => return,
                Err(e) => format!("in {}: {e}", d.display()),
            },
            Err(why) => why.to_string(),
        };
        for figure in figures {
            absent.push(AbsentFigure {
                figure: figure.to_string(),
                reason: why.clone(),
            });
        }
    };
    let null_syscall_ns = ns(floor_ns(|| {
        black_box(rustix::process::getppid());
    }));
    let clock_read_ns = ns(floor_ns(|| {
        black_box(crate::stats::Instant::now());
    }));
    let tmpfs_figures = ["tmpfs_create_ns", "tmpfs_stat_ns", "tmpfs_unlink_ns"];
    let mut tmpfs = None;
    let on_tmpfs = match not_tmpfs {
        None => dir,
        Some(why) => Err(why),
    };
    in_dir(on_tmpfs, &tmpfs_figures, &mut |d| {
        tmpfs = Some(tmpfs_floors(d)?);
        Ok(())
    });
    let page_bytes = rustix::param::page_size() as u64;
    let mut cached_pread_ns = None;
    in_dir(dir, &["cached_pread_ns"], &mut |d| {
        cached_pread_ns = Some(ns(pread_floor(d, page_bytes as usize)?));
        Ok(())
    });
    let mut page_cache_copy_bytes_per_s = None;
    in_dir(dir, &["page_cache_copy_bytes_per_s"], &mut |d| {
        page_cache_copy_bytes_per_s = Some(copy_bandwidth(d)?);
        Ok(())
    });
    let memcpy_bytes_per_s = memcpy_bandwidth();
    let mut cpu_cache_copy_bytes_per_s = None;
    in_dir(dir, &["cpu_cache_copy_bytes_per_s"], &mut |d| {
        cpu_cache_copy_bytes_per_s = Some(hot_copy_bandwidth(d, page_bytes as usize)?);
        Ok(())
    });
    let noise_loops_ns = noise_loops();
    Calibration {
        fslab_build: String::new(),
        boot_id: String::new(),
        measured_at: String::new(),
        measure_ns: started.elapsed().as_nanos() as u64,
        cached: false,
        null_syscall_ns,
        clock_read_ns,
        tmpfs_dir: None,
        tmpfs_create_ns: tmpfs.map(|t| ns(t.0)),
        tmpfs_stat_ns: tmpfs.map(|t| ns(t.1)),
        tmpfs_unlink_ns: tmpfs.map(|t| ns(t.2)),
        cached_pread_ns,
        page_bytes,
        page_cache_copy_bytes_per_s,
        cpu_cache_copy_bytes_per_s,
        memcpy_bytes_per_s,
        noise_cv: coefficient_of_variation(&noise_loops_ns),
        noise_loops_ns,
        absent,
    }
}

/// A floor in whole ns: at least 1 (a figure is never a zero).
fn ns(f: f64) -> u64 {
    (f.round() as u64).max(1)
}

/// The fastest of `BATCHES` batches of `op`, in ns per call; each batch
/// long enough (together `FLOOR_TIME`) for the clock's cost not to count.
fn floor_ns(mut op: impl FnMut()) -> f64 {
    // a first call outside the timing: a lazy initialisation (the clock's
    // calibration) or a cold cache is not the operation's cost
    op();
    let t = Instant::now();
    let mut n = 0u64;
    while n < 16 || t.elapsed() < Duration::from_millis(2) {
        op();
        n += 1;
    }
    let each = t.elapsed().as_nanos() as f64 / n as f64;
    let batch = ((FLOOR_TIME.as_nanos() as f64 / BATCHES as f64) / each.max(1.0)).max(1.0) as u64;
    let mut best = f64::MAX;
    for _ in 0..BATCHES {
        let t = Instant::now();
        for _ in 0..batch {
            op();
        }
        best = best.min(t.elapsed().as_nanos() as f64 / batch as f64);
    }
    best
}

fn open_dir(dir: &Path) -> std::io::Result<OwnedFd> {
    Ok(openat(
        rustix::fs::CWD,
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// create (open O_CREAT|O_EXCL|O_WRONLY + close), stat and unlink of
/// `FILES` empty files in `dir`, per operation: the fastest of `ROUNDS`
/// rounds of each.
fn tmpfs_floors(dir: &Path) -> std::io::Result<(f64, f64, f64)> {
    let d = open_dir(dir)?;
    let names: Vec<CString> = (0..FILES)
        .map(|i| CString::new(format!("c{i}")).expect("no NUL"))
        .collect();
    let per = |t: Instant| t.elapsed().as_nanos() as f64 / FILES as f64;
    let (mut c, mut s, mut u) = (f64::MAX, f64::MAX, f64::MAX);
    let mut rounds = || -> std::io::Result<()> {
        for _ in 0..ROUNDS {
            let t = Instant::now();
            for n in &names {
                let f = openat(
                    &d,
                    n.as_c_str(),
                    OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC,
                    Mode::from_raw_mode(0o600),
                );
                drop(f?);
            }
            c = c.min(per(t));
            let t = Instant::now();
            for n in &names {
                black_box(statat(&d, n.as_c_str(), AtFlags::SYMLINK_NOFOLLOW)?);
            }
            s = s.min(per(t));
            let t = Instant::now();
            for n in &names {
                unlinkat(&d, n.as_c_str(), AtFlags::empty())?;
            }
            u = u.min(per(t));
        }
        Ok(())
    };
    if let Err(e) = rounds() {
        // a round that failed half-way leaves its files: gone before the error
        for n in &names {
            let _ = unlinkat(&d, n.as_c_str(), AtFlags::empty());
        }
        return Err(e);
    }
    Ok((c, s, u))
}

/// A file of `dir` no one else can see: O_TMPFILE, or a name unlinked at once.
fn unnamed_file(dir: &Path) -> std::io::Result<OwnedFd> {
    let d = open_dir(dir)?;
    let mode = Mode::from_raw_mode(0o600);
    match openat(&d, ".", OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC, mode) {
        Ok(f) => Ok(f),
        Err(_) => {
            let f = openat(
                &d,
                "unnamed",
                OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::CLOEXEC,
                mode,
            )?;
            unlinkat(&d, "unnamed", AtFlags::empty())?;
            Ok(f)
        }
    }
}

fn write_all(fd: &OwnedFd, mut buf: &[u8], mut at: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        let n = rustix::io::pwrite(fd, buf, at)?;
        if n == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::WriteZero, "wrote nothing"));
        }
        buf = &buf[n..];
        at += n as u64;
    }
    Ok(())
}

/// pread of the one page of a file just written (so cached), per call.
fn pread_floor(dir: &Path, page: usize) -> std::io::Result<f64> {
    let f = unnamed_file(dir)?;
    write_all(&f, &vec![0x5a; page], 0)?;
    let mut buf = vec![0u8; page];
    let mut short = false;
    let floor = floor_ns(|| match rustix::io::pread(&f, &mut buf[..], 0) {
        Ok(n) if n == page => {}
        _ => short = true,
    });
    if short {
        return Err(std::io::Error::other(
            "a read of the cached page came back short or failed",
        ));
    }
    Ok(floor)
}

/// Bytes per second of pread from a cached file of up to `COPY_FILE`
/// (a quarter of the directory's free space at most) into a `COPY_CHUNK`
/// buffer: the fastest of `COPY_PASSES` passes over the whole file.
fn copy_bandwidth(dir: &Path) -> std::io::Result<u64> {
    let st = statvfs(dir)?;
    let free = st.f_bavail.saturating_mul(st.f_frsize);
    let chunk = COPY_CHUNK as u64;
    let size = (COPY_FILE.min(free / 4) / chunk) * chunk;
    if size < 4 * chunk {
        return Err(std::io::Error::other(format!(
            "{} MiB free: too little for a {} MiB file",
            free >> 20,
            (4 * chunk) >> 20
        )));
    }
    let f = unnamed_file(dir)?;
    let mut buf = vec![0x5au8; COPY_CHUNK];
    for at in (0..size).step_by(COPY_CHUNK) {
        write_all(&f, &buf, at)?;
    }
    let mut best = f64::MAX;
    for _ in 0..COPY_PASSES {
        let t = Instant::now();
        let mut at = 0;
        while at < size {
            match rustix::io::pread(&f, &mut buf[..], at)? {
                0 => return Err(std::io::Error::other("the file ended early")),
                n => at += n as u64,
            }
        }
        best = best.min(t.elapsed().as_nanos() as f64);
    }
    Ok((size as f64 * 1e9 / best.max(1.0)) as u64)
}

/// Bytes per second of the copy alone (the per-call cost taken out) of
/// pread from a cached file into one buffer, both in the CPU's caches: for
/// each of `HOT_CHUNKS`, from the fastest batches of reads of the chunk and
/// of one page of a file of four chunks, (chunk - page) / (t(chunk) -
/// t(page)); the fastest of them (a larger copy may run faster).
fn hot_copy_bandwidth(dir: &Path, page: usize) -> std::io::Result<u64> {
    let mut best = 0f64;
    for chunk in HOT_CHUNKS {
        let file = 4 * chunk;
        let f = unnamed_file(dir)?;
        let mut buf = vec![0x5au8; chunk];
        for at in (0..file).step_by(chunk) {
            write_all(&f, &buf, at as u64)?;
        }
        let mut short = false;
        let mut per_read = |len: usize| {
            let mut at = 0;
            floor_ns(|| {
                match rustix::io::pread(&f, &mut buf[..len], at as u64) {
                    Ok(n) if n == len => {}
                    _ => short = true,
                }
                at = (at + chunk) % file;
            })
        };
        let (t_chunk, t_page) = (per_read(chunk), per_read(page));
        if short {
            return Err(std::io::Error::other(
                "a read of the cached file came back short or failed",
            ));
        }
        // a page's read no faster than a chunk's: noise; the chunk's rate then
        let bytes_per_ns = if t_chunk > t_page && chunk > page {
            (chunk - page) as f64 / (t_chunk - t_page)
        } else {
            chunk as f64 / t_chunk.max(1.0)
        };
        best = best.max(bytes_per_ns);
    }
    Ok((best * 1e9) as u64)
}

/// Bytes per second of a copy in user space between two buffers in the
/// CPU's caches, of `HOT_CHUNKS` bytes (the faster): what no copy of a
/// read beats.
fn memcpy_bandwidth() -> u64 {
    let mut best = 0f64;
    for chunk in HOT_CHUNKS {
        let src = vec![0x5au8; chunk];
        let mut dst = vec![0u8; chunk];
        let t = floor_ns(|| {
            dst.copy_from_slice(black_box(&src));
            black_box(&mut dst);
        });
        best = best.max(chunk as f64 / t.max(1.0));
    }
    ((best * 1e9) as u64).max(1)
}

/// One noise loop: `n` rounds of integer mixing, a getppid every 16th.
fn noise_work(n: u64) {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..n {
        x ^= x >> 31;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        if i % 16 == 0 {
            black_box(rustix::process::getppid());
        }
    }
    black_box(x);
}

/// The time of each of `NOISE_LOOPS` identical loops of `NOISE_LOOP`.
fn noise_loops() -> Vec<u64> {
    let probe = 4096;
    noise_work(probe);
    let t = Instant::now();
    noise_work(probe);
    let each = t.elapsed().as_nanos().max(1) as f64 / probe as f64;
    let n = ((NOISE_LOOP.as_nanos() as f64 / each) as u64).max(probe);
    (0..NOISE_LOOPS)
        .map(|_| {
            let t = Instant::now();
            noise_work(n);
            t.elapsed().as_nanos() as u64
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_card_measured_in_a_directory_has_every_figure() {
        let d = tempfile::tempdir().unwrap();
        let tmpfs = crate::host_facts::is_tmpfs(d.path());
        let k = measure(Ok(d.path()), (!tmpfs).then_some("not a tmpfs"));
        assert!(k.null_syscall_ns > 0 && k.clock_read_ns > 0);
        assert!(k.cached_pread_ns.is_some_and(|n| n > 0), "{k:?}");
        assert!(k.page_cache_copy_bytes_per_s.is_some_and(|b| b > 0), "{k:?}");
        assert!(k.cpu_cache_copy_bytes_per_s.is_some_and(|b| b > 0), "{k:?}");
        assert!(k.memcpy_bytes_per_s > 0);
        assert_eq!(k.noise_loops_ns.len(), NOISE_LOOPS);
        assert!(k.noise_cv().is_some());
        if tmpfs {
            assert!(k.tmpfs_create_ns.is_some() && k.tmpfs_stat_ns.is_some() && k.tmpfs_unlink_ns.is_some());
        } else {
            // absent with the reason, never a zero
            assert!(k.tmpfs_create_ns.is_none());
            assert!(k
                .absent
                .iter()
                .any(|a| a.figure == "tmpfs_create_ns" && a.reason == "not a tmpfs"));
        }
        // nothing is left in the directory
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
        // no directory: every figure that needs one absent, with the reason
        let k = measure(Err("no room"), Some("no room"));
        assert!(k.cached_pread_ns.is_none() && k.page_cache_copy_bytes_per_s.is_none());
        assert_eq!(k.absent.len(), 6);
        assert!(k.absent.iter().all(|a| a.reason == "no room"));
        assert!(k.null_syscall_ns > 0);
    }
}
