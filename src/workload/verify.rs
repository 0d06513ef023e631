//! Data verification (`fslab io --verify crc32c`): every block written
//! carries a header (magic, its own offset, the job, a generation and the
//! run's seed) and a CRC32C of the whole block, so a read can tell a flipped
//! bit, a torn or misdirected write, or a block that never held fslab data.
//! The checks need nothing but the block itself: a later `--verify-only` run
//! reads a file back without knowing what was written where.

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

fn crc(block: &[u8]) -> u32 {
    let c = crc32c::crc32c(&block[..CRC_AT]);
    crc32c::crc32c_append(c, &block[HEADER..])
}

/// Writes the header and CRC into `block` (its payload stays as it is).
pub fn stamp(block: &mut [u8], h: Header) {
    block[..8].copy_from_slice(&MAGIC);
    block[8..16].copy_from_slice(&h.offset.to_le_bytes());
    block[16..20].copy_from_slice(&h.job.to_le_bytes());
    block[20..24].copy_from_slice(&h.generation.to_le_bytes());
    block[24..32].copy_from_slice(&h.seed.to_le_bytes());
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
}
