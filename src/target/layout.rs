//! Laying out the files an io run reads: incompressible data, fsynced, so
//! reads never hit holes; and whether O_DIRECT really bypasses the cache.

use super::{info, io_err, refused, TargetError};
use crate::model::TargetInfo;
use crate::plan::IoShape;
use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Writes `size` bytes of incompressible data, then fdatasync: reads never hit
/// holes and a later O_DIRECT run finds the blocks allocated.
pub fn lay_out_file(
    path: &Path,
    size: u64,
    seed: u64,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64),
) -> Result<(), TargetError> {
    lay_out_blocks(path, size, seed, 0, stop, progress)
}

/// `lay_out_file`, with every `verify_bs` block stamped for `--verify`
/// (0: plain random data).
pub(super) fn lay_out_blocks(
    path: &Path,
    size: u64,
    seed: u64,
    verify_bs: u64,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64),
) -> Result<(), TargetError> {
    use std::os::unix::fs::FileExt;
    let f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io_err(format!("creating {}", path.display())))?;
    // whole blocks per chunk, so every stamped block lies within one write
    let chunk = match verify_bs {
        0 => 1 << 20,
        b => ((1u64 << 20) / b).max(1) * b,
    } as usize;
    let mut buf = vec![0u8; chunk];
    let mut rng = fastrand::Rng::with_seed(seed);
    rng.fill(&mut buf);
    let _polling = crate::interrupt::polling();
    let mut off = 0u64;
    while off < size {
        if stop.load(Ordering::Relaxed) {
            return Err(TargetError::Interrupted);
        }
        let n = (size - off).min(chunk as u64) as usize;
        // Vary each 4 KiB block so no two blocks are equal (no dedup shortcuts).
        for b in buf[..n].chunks_mut(4096) {
            let tag = (off ^ rng.u64(..)).to_le_bytes();
            let k = b.len().min(8);
            b[..k].copy_from_slice(&tag[..k]);
        }
        if verify_bs > 0 {
            for (i, b) in buf[..n].chunks_mut(verify_bs as usize).enumerate() {
                if b.len() == verify_bs as usize {
                    let offset = off + i as u64 * verify_bs;
                    crate::workload::verify::stamp(
                        b,
                        crate::workload::verify::Header {
                            offset,
                            job: 0,
                            generation: 0,
                            seed,
                        },
                    );
                }
            }
        }
        f.write_all_at(&buf[..n], off)
            .map_err(io_err(format!("laying out {}", path.display())))?;
        off += n as u64;
        progress(n as u64);
    }
    f.sync_data().map_err(io_err(format!("syncing {}", path.display())))?;
    Ok(())
}

/// Opens with O_DIRECT, reads statx DIOALIGN and checks whether the target
/// really honours O_DIRECT: a misaligned direct read must fail with EINVAL.
/// `shape`'s block size must be a multiple of the offset alignment.
pub(super) fn check_direct(
    path: &Path,
    shape: &IoShape,
    size: u64,
    info: &mut TargetInfo,
    warnings: &mut Vec<String>,
) -> Result<(), TargetError> {
    let f = match OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(path) {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            return Err(refused(
                "--direct",
                format!(
                    "{} ({}) refuses O_DIRECT; run without --direct",
                    path.display(),
                    info.fs_type
                ),
            ))
        }
        Err(e) => return Err(io_err(format!("opening {} with O_DIRECT", path.display()))(e)),
    };
    (info.dio_mem_align, info.dio_offset_align) = info::dio_align(&f);
    let mut buf = crate::workload::AlignedBuf::new(8192, 4096);
    // The kernel's word first (statx DIOALIGN, Linux 6.1+: 0 when this
    // file's I/O cannot be direct). The probe is for older kernels: it is
    // wrong on a file fallocated and not yet written (a write-only fio
    // job's), whose unwritten extents ext4 reads back as zeroes without
    // the alignment check, so misaligned reads succeed there.
    let honoured = if info.dio_offset_align != 0 {
        true
    } else if size >= 8192 {
        // offset 1: misaligned for every filesystem that does direct I/O
        let r = rustix::io::pread(&f, &mut buf.as_mut_slice()[..4096], 1);
        r.is_err()
    } else {
        false
    };
    info.direct_honoured = Some(honoured);
    if !honoured {
        warnings.push(format!(
            "O_DIRECT is not honoured by {} ({}): it accepts misaligned direct I/O, so data goes through the page cache",
            path.display(),
            info.fs_type
        ));
    } else {
        let align = if info.dio_offset_align > 0 {
            info.dio_offset_align as u64
        } else {
            4096
        };
        if !shape.bs.is_multiple_of(align) {
            return Err(refused(
                "--bs",
                format!(
                    "{} is not a multiple of the O_DIRECT offset alignment {align} of {}",
                    shape.bs,
                    path.display()
                ),
            ));
        }
    }
    Ok(())
}
