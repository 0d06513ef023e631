//! Data verification (`fslab io --verify crc32c`): every block written
//! carries a header (magic, its own offset, the job, a generation and the
//! run's seed) and a CRC32C of the whole block, so a read can tell a flipped
//! bit, a torn or misdirected write, or a block that never held fslab data.
//! The checks need nothing but the block itself: a later `--verify-only` run
//! reads a file back without knowing what was written where.
//!
//! fio's other checksums (verify=crc64, md5, sha256, meta) use a second
//! header, "FSLABVF2": the same fields, then the kind (1 byte, 3 reserved)
//! and the digest, of the header before it and the payload after it (meta:
//! of the header alone). This is fslab's own layout, not fio's
//! verify_header: a file fio wrote is not checked by fslab, nor the reverse.
//! fio's crc64 is CRC-64/REDIS (reflected polynomial 0x95AC9329AC4BC9B5,
//! init 0, crc/crc64.c), the one computed here.

/// "FSLABVF1"
pub const MAGIC: [u8; 8] = *b"FSLABVF1";
/// Header bytes: magic 8, offset 8, job 4, generation 4, seed 8, crc 4.
pub const HEADER: usize = crate::plan::io::VERIFY_HEADER;
const CRC_AT: usize = 32;

/// The header fields of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub offset: u64,
    pub job: u32,
    pub generation: u32,
    pub seed: u64,
}

/// "FSLABVF2": the header with a checksum kind.
pub const MAGIC2: [u8; 8] = *b"FSLABVF2";
const KIND_AT: usize = 32;
const DIGEST_AT: usize = 40;

pub use crate::plan::io::buffers::VerifyKind as Kind;

fn kind_code(k: Kind) -> u8 {
    match k {
        Kind::Crc32c => 1,
        Kind::Crc64 => 2,
        Kind::Md5 => 3,
        Kind::Sha256 => 4,
        Kind::Meta => 5,
        Kind::Pattern => 6,
    }
}

fn kind_of(code: u8) -> Option<Kind> {
    [Kind::Crc64, Kind::Md5, Kind::Sha256, Kind::Meta]
        .into_iter()
        .find(|k| kind_code(*k) == code)
}

/// fio's crc64 (crc/crc64.c).
pub const CRC64: crc::Crc<u64> = crc::Crc::<u64>::new(&crc::CRC_64_REDIS);

/// The digest of a V2 block of kind `k`: of the header and payload around it.
fn digest(k: Kind, block: &[u8], dlen: usize) -> Vec<u8> {
    let (head, payload) = (&block[..DIGEST_AT], &block[DIGEST_AT + dlen..]);
    match k {
        Kind::Crc64 => {
            let mut d = CRC64.digest();
            d.update(head);
            d.update(payload);
            d.finalize().to_le_bytes().to_vec()
        }
        Kind::Md5 => {
            use md5::Digest;
            let mut d = md5::Md5::new();
            d.update(head);
            d.update(payload);
            d.finalize().to_vec()
        }
        Kind::Sha256 => {
            use sha2::Digest;
            let mut d = sha2::Sha256::new();
            d.update(head);
            d.update(payload);
            d.finalize().to_vec()
        }
        // the header alone
        _ => crc32c::crc32c(head).to_le_bytes().to_vec(),
    }
}

/// Writes the header of kind `k` and its digest into `block` (its payload
/// stays as it is). `Crc32c` is `stamp`; `Pattern` has no header.
pub fn stamp_kind(block: &mut [u8], h: Header, k: Kind) {
    match k {
        Kind::Crc32c => stamp(block, h),
        Kind::Pattern => {}
        _ => {
            let dlen = k.header_len() - DIGEST_AT;
            block[..8].copy_from_slice(&MAGIC2);
            put_fields(block, h);
            block[KIND_AT..DIGEST_AT].copy_from_slice(&[kind_code(k), 0, 0, 0, 0, 0, 0, 0]);
            let d = digest(k, block, dlen);
            block[DIGEST_AT..DIGEST_AT + dlen].copy_from_slice(&d);
        }
    }
}

fn put_fields(block: &mut [u8], h: Header) {
    block[8..16].copy_from_slice(&h.offset.to_le_bytes());
    block[16..20].copy_from_slice(&h.job.to_le_bytes());
    block[20..24].copy_from_slice(&h.generation.to_le_bytes());
    block[24..32].copy_from_slice(&h.seed.to_le_bytes());
}

fn crc(block: &[u8]) -> u32 {
    let c = crc32c::crc32c(&block[..CRC_AT]);
    crc32c::crc32c_append(c, &block[HEADER..])
}

/// Writes the header and CRC into `block` (its payload stays as it is).
pub fn stamp(block: &mut [u8], h: Header) {
    block[..8].copy_from_slice(&MAGIC);
    put_fields(block, h);
    let c = crc(block);
    block[CRC_AT..HEADER].copy_from_slice(&c.to_le_bytes());
}

fn header(block: &[u8]) -> Header {
    let u64_at = |i: usize| u64::from_le_bytes(block[i..i + 8].try_into().expect("8 bytes"));
    let u32_at = |i: usize| u32::from_le_bytes(block[i..i + 4].try_into().expect("4 bytes"));
    Header {
        offset: u64_at(8),
        job: u32_at(16),
        generation: u32_at(20),
        seed: u64_at(24),
    }
}

/// Checks a block read at `offset`; the error says what was expected and found.
pub fn check(block: &[u8], offset: u64) -> Result<(), String> {
    if block.len() < HEADER {
        return Err(format!("offset {offset}: short block of {} bytes", block.len()));
    }
    if block[..8] == MAGIC2 {
        return check_v2(block, offset);
    }
    if block[..8] != MAGIC {
        return Err(format!(
            "offset {offset}: no fslab header (magic {:02x?}, expected \"FSLABVF1\")",
            &block[..8]
        ));
    }
    let h = header(block);
    let want = u32::from_le_bytes(block[CRC_AT..HEADER].try_into().expect("4 bytes"));
    let got = crc(block);
    if h.offset != offset {
        return Err(format!(
            "offset {offset}: the block says it belongs at offset {} (job {}, generation {}, seed {})",
            h.offset, h.job, h.generation, h.seed
        ));
    }
    if want != got {
        return Err(format!(
            "offset {offset}: CRC32C {got:08x}, header says {want:08x} (job {}, generation {}, seed {})",
            h.job, h.generation, h.seed
        ));
    }
    Ok(())
}

/// A V2 block: its kind, its digest, then its fields.
fn check_v2(block: &[u8], offset: u64) -> Result<(), String> {
    let h = header(block);
    let k = kind_of(block[KIND_AT]).ok_or_else(|| {
        format!(
            "offset {offset}: unknown checksum kind {} in the header",
            block[KIND_AT]
        )
    })?;
    if block.len() < k.header_len() {
        return Err(format!("offset {offset}: short block of {} bytes", block.len()));
    }
    let dlen = k.header_len() - DIGEST_AT;
    let want = &block[DIGEST_AT..DIGEST_AT + dlen];
    let got = digest(k, block, dlen);
    if h.offset != offset {
        return Err(format!(
            "offset {offset}: the block says it belongs at offset {} (job {}, generation {}, seed {})",
            h.offset, h.job, h.generation, h.seed
        ));
    }
    if want != got.as_slice() {
        return Err(format!(
            "offset {offset}: {} {}, header says {} (job {}, generation {}, seed {})",
            k.name().to_uppercase(),
            hex(&got),
            hex(want),
            h.job,
            h.generation,
            h.seed
        ));
    }
    Ok(())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Fills `block` with `pattern`, repeated, the block's offset pasted at
/// `fmts` in each repetition (fio's verify_pattern with `%o`).
pub fn fill_pattern(block: &mut [u8], pattern: &[u8], fmts: &[usize], offset: u64) {
    if pattern.is_empty() {
        return;
    }
    let mut p = pattern.to_vec();
    for &f in fmts {
        if f + 8 <= p.len() {
            p[f..f + 8].copy_from_slice(&offset.to_le_bytes());
        }
    }
    for c in block.chunks_mut(p.len()) {
        c.copy_from_slice(&p[..c.len()]);
    }
}

/// Checks a block of verify=pattern: the first byte that differs.
pub fn check_pattern(block: &[u8], pattern: &[u8], fmts: &[usize], offset: u64) -> Result<(), String> {
    let mut want = vec![0u8; block.len()];
    fill_pattern(&mut want, pattern, fmts, offset);
    match block.iter().zip(&want).position(|(a, b)| a != b) {
        None => Ok(()),
        Some(i) => Err(format!(
            "offset {offset}: byte {i} of the block is {:02x}, the pattern has {:02x}",
            block[i], want[i]
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_single_bit_flip_is_caught() {
        let mut b = vec![7u8; 4096];
        let h = Header {
            offset: 8192,
            job: 3,
            generation: 9,
            seed: 42,
        };
        stamp(&mut b, h);
        assert_eq!(check(&b, 8192), Ok(()));
        assert!(check(&b, 4096).unwrap_err().contains("belongs at offset 8192"));
        for bit in 0..4096 * 8 {
            let mut c = b.clone();
            c[bit / 8] ^= 1 << (bit % 8);
            assert!(check(&c, 8192).is_err(), "bit {bit} flip not caught");
        }
        assert!(check(&[0u8; 4096], 0).unwrap_err().contains("no fslab header"));
    }

    #[test]
    fn every_kind_catches_a_flipped_byte() {
        for k in [Kind::Crc32c, Kind::Crc64, Kind::Md5, Kind::Sha256] {
            let mut b = vec![0u8; 4096];
            fastrand::Rng::with_seed(3).fill(&mut b);
            let h = Header {
                offset: 4096,
                job: 1,
                generation: 2,
                seed: 3,
            };
            stamp_kind(&mut b, h, k);
            assert_eq!(check(&b, 4096), Ok(()), "{k:?}");
            for i in [0, 9, 33, 45, 100, 4095] {
                let mut c = b.clone();
                c[i] ^= 0x10;
                assert!(check(&c, 4096).is_err(), "{k:?}: byte {i}");
            }
            assert!(check(&b, 0).unwrap_err().contains("belongs at offset 4096"));
        }
        // meta checks the header, not the payload (as fio's verify=meta)
        let mut b = vec![5u8; 512];
        stamp_kind(
            &mut b,
            Header {
                offset: 0,
                job: 0,
                generation: 1,
                seed: 0,
            },
            Kind::Meta,
        );
        assert_eq!(check(&b, 0), Ok(()));
        b[20] ^= 1;
        assert!(check(&b, 0).is_err());
    }

    #[test]
    fn crc64_is_fios() {
        // fio's crc/crc64.c table: entry 1 and entry 128 (the reflected polynomial)
        let entry = |i: u64| {
            let mut c = i;
            for _ in 0..8 {
                c = if c & 1 == 1 {
                    (c >> 1) ^ 0x95AC_9329_AC4B_C9B5
                } else {
                    c >> 1
                };
            }
            c
        };
        assert_eq!(entry(1), 0x7ad8_70c8_3035_8979);
        assert_eq!(entry(128), 0x95ac_9329_ac4b_c9b5);
        // fio_crc64: init 0, no final xor, table-driven as above
        let fio = |data: &[u8]| data.iter().fold(0u64, |c, &b| entry((c ^ b as u64) & 0xff) ^ (c >> 8));
        let data = b"123456789 fslab and fio";
        assert_eq!(CRC64.checksum(data), fio(data));
    }

    #[test]
    fn patterns_with_the_offset() {
        let mut b = vec![0u8; 40];
        fill_pattern(&mut b, &[0xaa, 0, 0, 0, 0, 0, 0, 0, 0], &[1], 0x0102);
        assert_eq!(&b[..10], &[0xaa, 2, 1, 0, 0, 0, 0, 0, 0, 0xaa]);
        assert_eq!(check_pattern(&b, &[0xaa, 0, 0, 0, 0, 0, 0, 0, 0], &[1], 0x0102), Ok(()));
        b[30] = 7;
        assert!(check_pattern(&b, &[0xaa, 0, 0, 0, 0, 0, 0, 0, 0], &[1], 0x0102)
            .unwrap_err()
            .contains("byte 30"));
    }
}

/// A written block still to be read back: (fd, offset, length).
type Piece = (std::os::fd::RawFd, u64, usize);

/// The blocks a job wrote that it reads back and checks: after every
/// `backlog` writes (fio's verify_backlog) and, with `after_write`, all of
/// them once the writes are done (fio's do_verify). A block joins when its
/// write completed, so no read of it overtakes the write; one that is being
/// written again waits for that write.
#[derive(Debug, Default)]
pub struct Readback {
    after_write: bool,
    backlog: u64,
    batch: u64,
    /// Written, not yet read back, oldest first.
    pieces: std::collections::VecDeque<Piece>,
    /// Blocks whose writes are in flight (at most the queue depth).
    inflight: Vec<(std::os::fd::RawFd, u64)>,
    /// Writes completed since the backlog was last due.
    since: u64,
    /// Reads left in the current backlog batch.
    batch_left: u64,
}

impl Readback {
    pub fn new(after_write: bool, backlog: u64, batch: u64) -> Self {
        Readback {
            after_write,
            backlog,
            batch: if batch == 0 { backlog } else { batch },
            ..Default::default()
        }
    }

    /// Whether any block is ever read back.
    pub fn active(&self) -> bool {
        self.after_write || self.backlog > 0
    }

    /// A write of `len` bytes at `offset` of `fd` was submitted.
    pub fn submitted(&mut self, fd: std::os::fd::RawFd, offset: u64) {
        if self.active() {
            self.inflight.push((fd, offset));
        }
    }

    /// That write completed with `result`.
    pub fn completed(&mut self, fd: std::os::fd::RawFd, offset: u64, len: usize, result: i64) {
        if !self.active() {
            return;
        }
        if let Some(i) = self.inflight.iter().position(|p| *p == (fd, offset)) {
            self.inflight.swap_remove(i);
        }
        if result == len as i64 {
            self.pieces.push_back((fd, offset, len));
            self.since += 1;
            if self.backlog > 0 && self.since >= self.backlog {
                self.since = 0;
                self.batch_left = self.batch;
            }
        }
    }

    /// The next block to read back: one of the backlog batch, or, when
    /// `writes_done`, any left.
    pub fn next(&mut self, writes_done: bool) -> Option<Piece> {
        let due = (writes_done && self.after_write) || self.batch_left > 0;
        if !due || self.pieces.is_empty() {
            return None;
        }
        // the oldest block not being written again
        let i = self
            .pieces
            .iter()
            .position(|(fd, off, _)| !self.inflight.contains(&(*fd, *off)))?;
        let p = self.pieces.remove(i)?;
        self.batch_left = self.batch_left.saturating_sub(1);
        Some(p)
    }

    /// True while blocks wait for writes still in flight before they can be
    /// read back: the job is not done yet, though it has nothing to submit.
    pub fn waits(&self, writes_done: bool) -> bool {
        writes_done && self.after_write && !self.inflight.is_empty()
    }
}

#[cfg(test)]
mod readback_tests {
    use super::*;

    #[test]
    fn backlog_then_the_rest_after_the_writes() {
        let mut r = Readback::new(true, 4, 0);
        for i in 0..6u64 {
            r.submitted(3, i * 4096);
            r.completed(3, i * 4096, 4096, 4096);
            if i == 3 {
                let got: Vec<_> = std::iter::from_fn(|| r.next(false)).collect();
                assert_eq!(got.len(), 4);
                assert_eq!(got[0], (3, 0, 4096));
            }
        }
        assert_eq!(r.next(false), None);
        assert_eq!(r.next(true), Some((3, 4 * 4096, 4096)));
        assert_eq!(r.next(true), Some((3, 5 * 4096, 4096)));
        assert_eq!(r.next(true), None);
    }

    #[test]
    fn a_block_being_written_again_waits() {
        let mut r = Readback::new(true, 0, 0);
        r.submitted(3, 0);
        r.completed(3, 0, 4096, 4096);
        r.submitted(3, 0);
        assert_eq!(r.next(true), None);
        assert!(r.waits(true));
        r.completed(3, 0, 4096, 4096);
        assert!(!r.waits(true));
        assert_eq!(r.next(true), Some((3, 0, 4096)));
        assert_eq!(r.next(true), Some((3, 0, 4096)));
        // a failed write is not read back
        r.submitted(3, 8192);
        r.completed(3, 8192, 4096, -5);
        assert_eq!(r.next(true), None);
    }
}
