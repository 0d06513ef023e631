//! File naming and ordering: names computed from indices into a stack
//! buffer, and random order as a bijection on the indices (a Feistel network
//! with cycle walking), so memory stays flat from 10k to 10M files.

use std::ffi::CStr;

/// splitmix64: a fast, well-mixed hash of an index.
#[inline]
pub(super) fn mix(mut z: u64) -> u64 {
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
            keys: std::array::from_fn(|i| mix(seed ^ (i as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407))),
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
