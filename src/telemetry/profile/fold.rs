//! Symbolised stacks to what the report shows: folded stacks ("a;b;c
//! count", root first, heaviest first) and the top symbols with their self
//! and inclusive shares. Pure functions of the samples.

use crate::model::system::{FoldedStack, SymbolShare};
use std::collections::HashMap;

/// Kernel frames end with this in folded stacks (the flame graph
/// convention of `stackcollapse-perf.pl --kernel`).
pub const KERNEL_SUFFIX: &str = "_[k]";

/// Stacks of one phase, their frames interned.
#[derive(Debug, Default)]
pub struct Stacks {
    /// (name, kernel?) of each frame id.
    frames: Vec<(String, bool)>,
    ids: HashMap<(String, bool), u32>,
    /// Root-first frame ids and the samples that had exactly that stack.
    stacks: HashMap<Vec<u32>, u64>,
    total: u64,
}

impl Stacks {
    /// The id of frame `name` (kernel or user space).
    pub fn frame(&mut self, name: &str, kernel: bool) -> u32 {
        // a ';' would split the frame in the folded format
        let name = name.replace(';', ":");
        if let Some(&id) = self.ids.get(&(name.clone(), kernel)) {
            return id;
        }
        let id = self.frames.len() as u32;
        self.frames.push((name.clone(), kernel));
        self.ids.insert((name, kernel), id);
        id
    }

    /// Adds `count` samples of the root-first stack `ids` (ids from [`Stacks::frame`]).
    pub fn add(&mut self, ids: Vec<u32>, count: u64) {
        if ids.is_empty() || count == 0 {
            return;
        }
        *self.stacks.entry(ids).or_default() += count;
        self.total += count;
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    fn folded_name(&self, id: u32) -> String {
        let (n, k) = &self.frames[id as usize];
        if *k {
            format!("{n}{KERNEL_SUFFIX}")
        } else {
            n.clone()
        }
    }

    /// Every stack, root first, the heaviest first (ties by text, so the
    /// order is the same every time).
    pub fn folded(&self) -> Vec<FoldedStack> {
        let mut v: Vec<FoldedStack> = self
            .stacks
            .iter()
            .map(|(ids, &count)| FoldedStack {
                stack: ids.iter().map(|&i| self.folded_name(i)).collect::<Vec<_>>().join(";"),
                count,
            })
            .collect();
        v.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.stack.cmp(&b.stack)));
        v
    }

    /// The `n` symbols with the largest inclusive share (on the stack at
    /// all; a recursive symbol counts once per sample) and the `hot` ones
    /// with the largest self share (on top of the stack) not among them,
    /// by inclusive share; shares in % of the phase's samples.
    pub fn top(&self, n: usize, hot: usize) -> Vec<SymbolShare> {
        if self.total == 0 {
            return Vec::new();
        }
        let mut own = vec![0u64; self.frames.len()];
        let mut incl = vec![0u64; self.frames.len()];
        let mut seen = vec![u64::MAX; self.frames.len()];
        for (k, (ids, &count)) in self.stacks.iter().enumerate() {
            if let Some(&leaf) = ids.last() {
                own[leaf as usize] += count;
            }
            for &i in ids {
                if seen[i as usize] != k as u64 {
                    seen[i as usize] = k as u64;
                    incl[i as usize] += count;
                }
            }
        }
        let mut order: Vec<usize> = (0..self.frames.len()).filter(|&i| incl[i] > 0).collect();
        order.sort_by(|&a, &b| {
            incl[b]
                .cmp(&incl[a])
                .then_with(|| own[b].cmp(&own[a]))
                .then_with(|| self.frames[a].cmp(&self.frames[b]))
        });
        let pct = |x: u64| (x as f64 * 1000.0 / self.total as f64).round() / 10.0;
        let mut by_self: Vec<usize> = order.iter().copied().filter(|&i| own[i] > 0).collect();
        by_self.sort_by(|&a, &b| own[b].cmp(&own[a]).then_with(|| incl[b].cmp(&incl[a])));
        let mut keep: Vec<usize> = order.iter().copied().take(n).collect();
        for i in by_self.into_iter().take(hot) {
            if !keep.contains(&i) {
                keep.push(i);
            }
        }
        // back in inclusive order
        keep.sort_by_key(|i| order.iter().position(|o| o == i));
        keep.into_iter()
            .map(|i| SymbolShare {
                symbol: self.frames[i].0.clone(),
                space: if self.frames[i].1 { "kernel" } else { "user" }.into(),
                self_pct: pct(own[i]),
                total_pct: pct(incl[i]),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stacks() -> Stacks {
        let mut s = Stacks::default();
        let main = s.frame("main", false);
        let write = s.frame("write", false);
        let entry = s.frame("entry_SYSCALL_64", true);
        let attr = s.frame("xfs_attr_set", true);
        let memcpy = s.frame("memcpy", true);
        let spin = s.frame("spin", false);
        // 6 samples in the xattr path (4 of them in memcpy), 3 spinning in
        // user space, 1 recursive stack
        s.add(vec![main, write, entry, attr, memcpy], 4);
        s.add(vec![main, write, entry, attr], 2);
        s.add(vec![main, spin], 3);
        s.add(vec![main, spin, spin], 1);
        // the same stack again merges
        s.add(vec![main, spin], 0);
        s
    }

    #[test]
    fn top_symbols_have_self_and_inclusive_shares() {
        let s = stacks();
        assert_eq!(s.total(), 10);
        let top = s.top(10, 0);
        let get = |n: &str| top.iter().find(|t| t.symbol == n).unwrap();
        assert_eq!(top[0].symbol, "main");
        assert_eq!((top[0].self_pct, top[0].total_pct), (0.0, 100.0));
        assert_eq!(
            (get("xfs_attr_set").self_pct, get("xfs_attr_set").total_pct),
            (20.0, 60.0)
        );
        assert_eq!(get("xfs_attr_set").space, "kernel");
        assert_eq!((get("memcpy").self_pct, get("memcpy").total_pct), (40.0, 40.0));
        // recursion counts once per sample for the inclusive share
        assert_eq!((get("spin").self_pct, get("spin").total_pct), (40.0, 40.0));
        assert_eq!(get("spin").space, "user");
        // every sample has exactly one leaf
        let self_sum: f64 = top.iter().map(|t| t.self_pct).sum();
        assert!((self_sum - 100.0).abs() < 1e-9, "{self_sum}");
        // sorted by inclusive share, then self
        assert!(top.windows(2).all(|w| w[0].total_pct >= w[1].total_pct));
        assert_eq!(s.top(2, 0).len(), 2);
        // the two most inclusive (main; xfs_attr_set beats its callers on
        // self share), and the hottest by self not
        // among them (memcpy and spin at 40%)
        let names: Vec<String> = s.top(2, 2).into_iter().map(|t| t.symbol).collect();
        assert_eq!(names, ["main", "xfs_attr_set", "memcpy", "spin"]);
    }

    #[test]
    fn folded_stacks_are_root_first_heaviest_first() {
        let s = stacks();
        let f = s.folded();
        let lines: Vec<String> = f.iter().map(|x| format!("{} {}", x.stack, x.count)).collect();
        assert_eq!(
            lines,
            [
                "main;write;entry_SYSCALL_64_[k];xfs_attr_set_[k];memcpy_[k] 4",
                "main;spin 3",
                "main;write;entry_SYSCALL_64_[k];xfs_attr_set_[k] 2",
                "main;spin;spin 1",
            ]
        );
        assert_eq!(f.iter().map(|x| x.count).sum::<u64>(), s.total());
    }

    #[test]
    fn a_semicolon_in_a_name_does_not_split_the_frame() {
        let mut s = Stacks::default();
        let a = s.frame("<[u8; 4] as Debug>::fmt", false);
        s.add(vec![a], 1);
        assert_eq!(s.folded()[0].stack, "<[u8: 4] as Debug>::fmt");
        assert!(!s.top(5, 5).is_empty());
        assert_eq!(Stacks::default().top(5, 5), vec![]);
    }
}
