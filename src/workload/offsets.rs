//! Where a random I/O goes: fio's random distributions (zipf, pareto,
//! normal, zoned, zoned_abs) over a file's blocks, and fio's random map (a
//! bit per block: each pass touches every block once).
//!
//! The draws follow fio's lib/zipf.c and lib/gauss.c: zipf inverts the
//! Zipf CDF with a precomputed zeta (capped at 10M terms, as fio), pareto
//! raises a uniform draw to log(h)/log(1-h), normal averages 12 uniform
//! draws; each then scatters the rank over the file with the same
//! golden-ratio hash and adds an offset (random, or `center` × blocks).
//! fslab draws its uniforms from its own generator, so the sequence
//! differs from fio's; the distribution of offsets is the same.

use crate::plan::io::region::Distribution;

/// fio's GOLDEN_RATIO_64 (lib/hash.h): the hash that scatters ranks.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
/// fio sums at most this many terms of zeta (lib/zipf.c ZIPF_MAX_GEN).
const ZIPF_MAX_GEN: u64 = 10_000_000;
/// fio's normal distribution: the average of this many uniform draws.
const GAUSS_ITERS: u64 = 12;

/// Draws block numbers in `0..blocks` with one of fio's distributions.
#[derive(Debug, Clone)]
pub enum BlockDist {
    Uniform {
        blocks: u64,
    },
    Zipf {
        blocks: u64,
        theta: f64,
        zetan: f64,
        zeta2: f64,
        off: u64,
        hash: bool,
    },
    Pareto {
        blocks: u64,
        pow: f64,
        off: u64,
        hash: bool,
    },
    Gauss {
        blocks: u64,
        stddev: u64,
        off: i64,
        hash: bool,
    },
    /// (cumulative percent of accesses, first block, end block).
    Zoned {
        zones: Vec<(u32, u64, u64)>,
    },
}

impl BlockDist {
    /// `dist` over `blocks` blocks of `bs` bytes (`rng` picks the random
    /// offset fio adds when no center is given). `hash` = false leaves rank
    /// 0 at block `off` (fio's file_service_type draws, which disable it).
    pub fn new(dist: &Distribution, blocks: u64, bs: u64, hash: bool, rng: &mut fastrand::Rng) -> Self {
        let blocks = blocks.max(1);
        let off = |center: Option<f64>, rng: &mut fastrand::Rng| match center {
            Some(c) => (blocks as f64 * c) as u64,
            None => rng.u32(..) as u64,
        };
        match dist {
            Distribution::Uniform => BlockDist::Uniform { blocks },
            Distribution::Zipf { theta, center } => {
                let off = if hash { off(*center, rng) } else { 0 };
                let zetan = (0..blocks.min(ZIPF_MAX_GEN))
                    .map(|i| (1.0 / (i + 1) as f64).powf(*theta))
                    .sum();
                BlockDist::Zipf {
                    blocks,
                    theta: *theta,
                    zetan,
                    zeta2: 1.0 + 0.5f64.powf(*theta),
                    off,
                    hash,
                }
            }
            Distribution::Pareto { h, center } => BlockDist::Pareto {
                blocks,
                pow: h.ln() / (1.0 - h).ln(),
                off: if hash { off(*center, rng) } else { 0 },
                hash,
            },
            Distribution::Normal { dev, center } => {
                let mut stddev = 0;
                if *dev != 0.0 {
                    stddev = ((blocks as f64 * dev) / 100.0).ceil() as u64;
                    stddev = stddev.min(blocks / 2);
                }
                BlockDist::Gauss {
                    blocks,
                    stddev,
                    off: match center {
                        Some(c) if hash => (blocks as f64 * (c - 0.5)) as i64,
                        _ => 0,
                    },
                    hash,
                }
            }
            Distribution::Zoned(z) => {
                let mut acc = (0u32, 0f64);
                let zones = z
                    .iter()
                    .map(|&(pct, size)| {
                        let start = (acc.1 * blocks as f64 / 100.0) as u64;
                        acc = (acc.0 + pct, acc.1 + size);
                        let end = ((acc.1 * blocks as f64 / 100.0) as u64).min(blocks);
                        (acc.0, start, end.max(start + 1).min(blocks.max(start + 1)))
                    })
                    .collect();
                BlockDist::Zoned { zones }
            }
            Distribution::ZonedAbs(z) => {
                let mut acc = (0u32, 0u64);
                let bs = bs.max(1);
                let zones = z
                    .iter()
                    .map(|&(pct, size)| {
                        let start = (acc.1 / bs).min(blocks - 1);
                        acc = (acc.0 + pct, acc.1.saturating_add(size));
                        let end = (acc.1 / bs).min(blocks).max(start + 1);
                        (acc.0, start, end)
                    })
                    .collect();
                BlockDist::Zoned { zones }
            }
        }
    }

    /// The number of blocks drawn from.
    pub fn blocks(&self) -> u64 {
        match self {
            BlockDist::Uniform { blocks }
            | BlockDist::Zipf { blocks, .. }
            | BlockDist::Pareto { blocks, .. }
            | BlockDist::Gauss { blocks, .. } => *blocks,
            BlockDist::Zoned { zones } => zones.iter().map(|z| z.2).max().unwrap_or(1),
        }
    }

    /// The next block, in `0..blocks`.
    pub fn next(&self, rng: &mut fastrand::Rng) -> u64 {
        match self {
            BlockDist::Uniform { blocks } => rng.u64(0..*blocks),
            BlockDist::Zipf {
                blocks,
                theta,
                zetan,
                zeta2,
                off,
                hash,
            } => {
                let n = *blocks as f64;
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / n).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                let u = rng.f64();
                let z = u * zetan;
                let val = if z < 1.0 {
                    1
                } else if z < 1.0 + 0.5f64.powf(*theta) {
                    2
                } else {
                    1 + (n * (eta * u - eta + 1.0).powf(alpha)) as u64
                };
                scatter(val - 1, *off, *blocks, *hash)
            }
            BlockDist::Pareto { blocks, pow, off, hash } => {
                let v = ((blocks - 1) as f64 * rng.f64().powf(*pow)) as u64;
                scatter(v, *off, *blocks, *hash)
            }
            BlockDist::Gauss {
                blocks,
                stddev,
                off,
                hash,
            } => {
                let n = *blocks;
                let mut sum: u64 = (0..GAUSS_ITERS).map(|_| rng.u64(0..=n)).sum();
                sum = sum.div_ceil(GAUSS_ITERS);
                if *stddev > 0 {
                    let mut dev = (*stddev as f64 * rng.f64()) as i64 - (*stddev / 2) as i64;
                    while (sum as i64 + dev) >= n as i64 || (sum as i64 + dev) < 0 {
                        dev /= 2;
                        if dev == 0 {
                            break;
                        }
                    }
                    sum = (sum as i64 + dev) as u64;
                }
                let v = if *hash { sum.wrapping_mul(GOLDEN_RATIO_64) } else { sum };
                (v.wrapping_add(*off as u64)) % n
            }
            BlockDist::Zoned { zones } => {
                let v = rng.u32(1..=100);
                let &(_, start, end) = zones
                    .iter()
                    .find(|z| v <= z.0)
                    .or(zones.last())
                    .expect("a zoned distribution has zones");
                start + rng.u64(0..(end - start).max(1))
            }
        }
    }
}

fn scatter(v: u64, off: u64, blocks: u64, hash: bool) -> u64 {
    let v = if hash { v.wrapping_mul(GOLDEN_RATIO_64) } else { v };
    v.wrapping_add(off) % blocks
}

/// fio's random map: a bit per block, set when a pass has touched it.
#[derive(Debug, Clone)]
pub struct BlockMap {
    bits: Vec<u64>,
    blocks: u64,
    used: u64,
}

impl BlockMap {
    pub fn new(blocks: u64) -> Self {
        BlockMap {
            bits: vec![0; blocks.div_ceil(64) as usize],
            blocks,
            used: 0,
        }
    }

    pub fn full(&self) -> bool {
        self.used >= self.blocks
    }

    pub fn clear(&mut self) {
        self.bits.iter_mut().for_each(|w| *w = 0);
        self.used = 0;
    }

    fn is_set(&self, b: u64) -> bool {
        self.bits[(b / 64) as usize] & (1 << (b % 64)) != 0
    }

    /// Marks `n` blocks from `b` used.
    pub fn mark(&mut self, b: u64, n: u64) {
        for x in b..(b + n).min(self.blocks) {
            if !self.is_set(x) {
                self.bits[(x / 64) as usize] |= 1 << (x % 64);
                self.used += 1;
            }
        }
    }

    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Marks up to `n` free blocks from `b`, stopping at the first used one
    /// or the map's end, and returns how many (fio's `axmap_set_nr`: an
    /// I/O is trimmed to the free run it lands in).
    pub fn mark_free_run(&mut self, b: u64, n: u64) -> u64 {
        let mut x = b;
        while x < (b + n).min(self.blocks) && !self.is_set(x) {
            self.bits[(x / 64) as usize] |= 1 << (x % 64);
            self.used += 1;
            x += 1;
        }
        x - b
    }

    /// `b` if free, else the next free block after it (wrapping), as fio's
    /// axmap_next_free; None when every block is used.
    pub fn next_free(&self, b: u64) -> Option<u64> {
        if self.full() {
            return None;
        }
        let b = b % self.blocks;
        let words = self.bits.len();
        let mut w = (b / 64) as usize;
        // the first word, from bit b
        let mut word = !self.bits[w] & (!0u64 << (b % 64));
        for _ in 0..=words {
            if word != 0 {
                let x = w as u64 * 64 + word.trailing_zeros() as u64;
                if x < self.blocks {
                    return Some(x);
                }
            }
            w = (w + 1) % words;
            word = !self.bits[w];
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shares of the draws that land on the hottest 1%, 5%, 10%, 25%, 50% of
    /// the blocks hit (fio-genzipf's table: its rows divide the blocks that
    /// were hit at least once, its "Sum %" is cumulative).
    fn hot_shares(d: &BlockDist, draws: usize, seed: u64) -> Vec<f64> {
        let mut rng = fastrand::Rng::with_seed(seed);
        let n = d.blocks() as usize;
        let mut hits = vec![0u64; n];
        for _ in 0..draws {
            hits[d.next(&mut rng) as usize] += 1;
        }
        hits.retain(|&h| h > 0);
        hits.sort_unstable_by(|a, b| b.cmp(a));
        let n = hits.len();
        [1usize, 5, 10, 25, 50]
            .iter()
            .map(|p| hits[..n * p / 100].iter().sum::<u64>() as f64 / draws as f64)
            .collect()
    }

    /// The same table from fio's own generator: `fio-genzipf -t KIND -i VALUE
    /// -b 4096 -g 1 -o 100` (fio 3.33: 1 GiB of 4 KiB blocks = 262144
    /// blocks, as many draws), its "Sum %" column at the 1/5/10/25/50% rows.
    fn fio_genzipf_shares(kind: &str, v: f64) -> Option<Vec<f64>> {
        let out = std::process::Command::new("fio-genzipf")
            .args(["-t", kind, "-i", &v.to_string(), "-b", "4096", "-g", "1", "-o", "100"])
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let mut rows = Vec::new();
        for l in text.lines() {
            let Some(rest) = l.strip_prefix("Top").or_else(|| l.strip_prefix("|->")) else {
                continue;
            };
            let nums: Vec<f64> = rest
                .split(|c: char| c == '%' || c.is_whitespace())
                .filter_map(|s| s.parse().ok())
                .collect();
            if nums.len() >= 3 {
                rows.push((nums[0], nums[2] / 100.0));
            }
        }
        [1.0, 5.0, 10.0, 25.0, 50.0]
            .iter()
            .map(|w: &f64| rows.iter().find(|r| (r.0 - w).abs() < 1e-6).map(|r| r.1))
            .collect()
    }

    fn dist(kind: &str, v: f64) -> Distribution {
        match kind {
            "zipf" => Distribution::Zipf { theta: v, center: None },
            _ => Distribution::Pareto { h: v, center: None },
        }
    }

    /// Known figures of fio 3.33's fio-genzipf (as above), for machines without it.
    const FIO_SHARES: &[(&str, f64, [f64; 5])] = &[];
    const HASH: bool = true;

    #[test]
    fn zipf_and_pareto_hot_sets_match_fio() {
        for (kind, v) in [("zipf", 1.2), ("zipf", 0.9), ("pareto", 0.2), ("pareto", 0.1)] {
            let d = BlockDist::new(&dist(kind, v), 262_144, 4096, HASH, &mut fastrand::Rng::with_seed(1));
            let ours = hot_shares(&d, 262_144, 7);
            let fio = fio_genzipf_shares(kind, v).or_else(|| {
                FIO_SHARES
                    .iter()
                    .find(|s| s.0 == kind && s.1 == v)
                    .map(|s| s.2.to_vec())
            });
            let Some(fio) = fio else {
                eprintln!("fio-genzipf not installed: {kind}:{v} checked for shape only");
                assert!(ours[0] > 0.05 && ours.windows(2).all(|w| w[0] <= w[1]));
                continue;
            };
            eprintln!("{kind}:{v} hottest 1/5/10/25/50% of hit blocks: fslab {ours:.4?} fio-genzipf {fio:.4?}");
            for (i, (a, b)) in ours.iter().zip(&fio).enumerate() {
                assert!(
                    (a - b).abs() < 0.02,
                    "{kind}:{v} hottest share {i}: fslab {a:.4}, fio {b:.4}"
                );
            }
        }
    }

    #[test]
    fn zoned_shares_follow_the_zones() {
        let d = BlockDist::new(
            &Distribution::Zoned(vec![(60, 10.0), (30, 20.0), (8, 30.0), (2, 40.0)]),
            1000,
            4096,
            true,
            &mut fastrand::Rng::with_seed(1),
        );
        let mut rng = fastrand::Rng::with_seed(3);
        let mut z = [0u64; 4];
        let n = 200_000;
        for _ in 0..n {
            let b = d.next(&mut rng);
            z[match b {
                0..=99 => 0,
                100..=299 => 1,
                300..=599 => 2,
                _ => 3,
            }] += 1;
        }
        for (got, want) in z.iter().zip([0.60, 0.30, 0.08, 0.02]) {
            assert!((*got as f64 / n as f64 - want).abs() < 0.01, "{z:?}");
        }
    }

    #[test]
    fn zoned_abs_and_normal_stay_in_range() {
        let mut rng = fastrand::Rng::with_seed(5);
        let za = BlockDist::new(
            &Distribution::ZonedAbs(vec![(90, 4096 * 10), (10, 1 << 40)]),
            100,
            4096,
            true,
            &mut rng,
        );
        let hot = (0..10_000).filter(|_| za.next(&mut rng) < 10).count();
        assert!((8700..9300).contains(&hot), "{hot}");
        for dev in [0.0, 5.0, 50.0, 100.0] {
            let g = BlockDist::new(&Distribution::Normal { dev, center: None }, 777, 4096, false, &mut rng);
            let draws: Vec<u64> = (0..20_000).map(|_| g.next(&mut rng)).collect();
            assert!(draws.iter().all(|&b| b < 777));
            // unhashed: centred on the middle
            let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
            assert!((mean - 388.0).abs() < 15.0, "dev {dev}: mean {mean}");
        }
    }

    #[test]
    fn the_map_hands_out_every_block_once() {
        let mut m = BlockMap::new(130);
        let mut rng = fastrand::Rng::with_seed(9);
        let mut seen = [false; 130];
        while let Some(b) = m.next_free(rng.u64(0..130)) {
            assert!(!seen[b as usize]);
            seen[b as usize] = true;
            m.mark(b, 1);
        }
        assert!(m.full() && seen.iter().all(|&s| s));
        m.clear();
        assert_eq!(m.next_free(129), Some(129));
    }
}
