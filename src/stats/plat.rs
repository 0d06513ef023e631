//! fio's latency bins (fio's stat.h: FIO_IO_U_PLAT_BITS 6, 29 groups):
//! the keys of json+'s `bins` and the columns of a histogram log.

/// fio's latency bins (stat.h): 64 per power of two above 128 ns.
pub const PLAT_BITS: u32 = 6;
pub const PLAT_VAL: u64 = 1 << PLAT_BITS;
pub const PLAT_GROUP_NR: usize = 29;
pub const PLAT_NR: usize = PLAT_GROUP_NR * PLAT_VAL as usize;

/// fio's plat_val_to_idx: the bin of a latency in ns.
pub fn plat_val_to_idx(val: u64) -> usize {
    let msb = if val == 0 { 0 } else { 63 - val.leading_zeros() };
    if msb <= PLAT_BITS {
        return val as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) as u64) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (val >> error_bits);
    ((base + offset) as usize).min(PLAT_NR - 1)
}

/// fio's plat_idx_to_val: the value fio reports for a bin (its middle).
pub fn plat_idx_to_val(idx: usize) -> u64 {
    let idx = idx.min(PLAT_NR - 1) as u64;
    if idx < (PLAT_VAL << 1) {
        return idx;
    }
    let error_bits = (idx >> PLAT_BITS) - 1;
    let base = 1u64 << (error_bits + PLAT_BITS as u64);
    let k = idx % PLAT_VAL;
    base + ((k as f64 + 0.5) * (1u64 << error_bits) as f64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_bins_round_trip_as_fio_computes_them() {
        // values below 128 ns are their own bin
        for v in 0..128 {
            assert_eq!(plat_val_to_idx(v), v as usize);
            assert_eq!(plat_idx_to_val(v as usize), v);
        }
        // the bins fio printed in its json+ (fio 3.33 run): 34048, 36608, 38144
        for v in [34048u64, 36608, 38144, 100864, 107008] {
            assert_eq!(plat_idx_to_val(plat_val_to_idx(v)), v, "{v}");
        }
        assert_eq!(plat_val_to_idx(u64::MAX), PLAT_NR - 1);
        // a bin's value lies in the bin
        for i in 0..PLAT_NR {
            assert_eq!(plat_val_to_idx(plat_idx_to_val(i)), i);
        }
    }
}
