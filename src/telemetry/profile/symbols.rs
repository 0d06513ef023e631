//! Addresses to names: kernel symbols from `/proc/kallsyms` (sorted, binary
//! search), user symbols from the ELF symbol tables of the files mapped
//! executable in `/proc/self/maps` (fslab's binary, libc), each at its load
//! bias; Rust names demangled.

use std::collections::HashMap;
use std::os::unix::fs::FileExt;

/// Functions sorted by start address.
#[derive(Debug, Default)]
struct Table {
    /// (start, size or 0 when unknown, name)
    syms: Vec<(u64, u64, String)>,
}

impl Table {
    fn finish(mut self) -> Self {
        self.syms.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.2.cmp(&b.2)));
        self.syms.dedup_by_key(|s| s.0);
        self
    }

    /// The function containing `a`: the last one starting at or before it,
    /// within its size when known, else within `max_gap`.
    fn lookup(&self, a: u64, max_gap: u64) -> Option<&str> {
        let i = self.syms.partition_point(|s| s.0 <= a).checked_sub(1)?;
        let (start, size, name) = &self.syms[i];
        let within = if *size > 0 {
            a - start < *size
        } else {
            a - start < max_gap
        };
        within.then_some(name.as_str())
    }
}

/// `/proc/kallsyms`: the kernel's and its modules' text symbols.
#[derive(Debug, Default)]
pub struct KernelSymbols {
    table: Table,
}

/// Beyond this distance from the last symbol an address is not named (the
/// kallsyms entries carry no size).
const KERNEL_MAX_GAP: u64 = 1 << 20;

impl KernelSymbols {
    /// Parses kallsyms text ("ffffffff81000000 T _stext", "... t xfs_attr_set\t[xfs]"):
    /// text symbols only; hidden addresses (all zero) give an empty table.
    pub fn parse(text: &str) -> Self {
        let mut t = Table::default();
        for line in text.lines() {
            let mut it = line.split_ascii_whitespace();
            let (Some(addr), Some(kind), Some(name)) = (it.next(), it.next(), it.next()) else {
                continue;
            };
            if !matches!(kind, "t" | "T" | "w" | "W") {
                continue;
            }
            let Ok(addr) = u64::from_str_radix(addr, 16) else {
                continue;
            };
            if addr == 0 {
                continue;
            }
            t.syms.push((addr, 0, name.to_string()));
        }
        KernelSymbols { table: t.finish() }
    }

    pub fn load() -> Self {
        Self::parse(&std::fs::read_to_string("/proc/kallsyms").unwrap_or_default())
    }

    pub fn is_empty(&self) -> bool {
        self.table.syms.is_empty()
    }

    pub fn lookup(&self, a: u64) -> Option<&str> {
        self.table.lookup(a, KERNEL_MAX_GAP)
    }
}

/// One executable mapping of `/proc/self/maps`.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub offset: u64,
    pub path: String,
}

/// The executable mappings of a maps file ("start-end perms offset dev inode path").
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.splitn(6, ' ');
            let range = it.next()?;
            let perms = it.next()?;
            let offset = u64::from_str_radix(it.next()?, 16).ok()?;
            let _dev = it.next()?;
            let _inode = it.next()?;
            let path = it.next().unwrap_or("").trim_start().to_string();
            if !perms.contains('x') {
                return None;
            }
            let (a, b) = range.split_once('-')?;
            Some(Mapping {
                start: u64::from_str_radix(a, 16).ok()?,
                end: u64::from_str_radix(b, 16).ok()?,
                offset,
                path,
            })
        })
        .collect()
}

/// An ELF file's loadable segments and functions.
#[derive(Debug, Default)]
struct Elf {
    /// PT_LOAD: (p_offset, p_vaddr, p_filesz).
    loads: Vec<(u64, u64, u64)>,
    table: Table,
}

fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

fn read_at(f: &std::fs::File, off: u64, len: u64) -> Option<Vec<u8>> {
    if len > 1 << 30 {
        return None;
    }
    let mut v = vec![0u8; len as usize];
    f.read_exact_at(&mut v, off).ok()?;
    Some(v)
}

impl Elf {
    /// A little-endian ELF64 file's PT_LOAD segments and its function
    /// symbols (`.symtab`, else `.dynsym`). None: not such a file.
    fn read(f: &std::fs::File) -> Option<Elf> {
        let eh = read_at(f, 0, 64)?;
        if &eh[0..4] != b"\x7fELF" || eh[4] != 2 || eh[5] != 1 {
            return None;
        }
        let (phoff, phentsize, phnum) = (u64_at(&eh, 0x20)?, u16_at(&eh, 0x36)? as u64, u16_at(&eh, 0x38)? as u64);
        let (shoff, shentsize, shnum) = (u64_at(&eh, 0x28)?, u16_at(&eh, 0x3A)? as u64, u16_at(&eh, 0x3C)? as u64);
        let mut elf = Elf::default();
        let ph = read_at(f, phoff, phentsize * phnum)?;
        for i in 0..phnum as usize {
            let p = &ph[i * phentsize as usize..];
            if u32_at(p, 0)? == 1 {
                elf.loads.push((u64_at(p, 8)?, u64_at(p, 16)?, u64_at(p, 32)?));
            }
        }
        let sh = read_at(f, shoff, shentsize * shnum)?;
        let section = |i: usize| -> Option<(u32, u64, u64, u32)> {
            let s = sh.get(i * shentsize as usize..(i + 1) * shentsize as usize)?;
            Some((u32_at(s, 4)?, u64_at(s, 0x18)?, u64_at(s, 0x20)?, u32_at(s, 0x28)?))
        };
        let find = |ty: u32| (0..shnum as usize).find(|&i| section(i).is_some_and(|s| s.0 == ty));
        // SHT_SYMTAB, else SHT_DYNSYM
        let Some(si) = find(2).or_else(|| find(11)) else {
            return Some(elf);
        };
        let (_, off, size, link) = section(si)?;
        let (_, str_off, str_size, _) = section(link as usize)?;
        let syms = read_at(f, off, size)?;
        let strs = read_at(f, str_off, str_size)?;
        for s in syms.chunks_exact(24) {
            let info = s[4];
            let shndx = u16_at(s, 6)?;
            let value = u64_at(s, 8)?;
            let size = u64_at(s, 16)?;
            // STT_FUNC or STT_GNU_IFUNC, defined
            if !matches!(info & 0xf, 2 | 10) || shndx == 0 || value == 0 {
                continue;
            }
            let name_off = u32_at(s, 0)? as usize;
            let Some(raw) = strs.get(name_off..) else {
                continue;
            };
            let raw = &raw[..raw.iter().position(|&c| c == 0).unwrap_or(raw.len())];
            let name = String::from_utf8_lossy(raw);
            if name.is_empty() {
                continue;
            }
            elf.table.syms.push((value, size, name.into_owned()));
        }
        elf.table = std::mem::take(&mut elf.table).finish();
        Some(elf)
    }

    /// The file's virtual address of file offset `fo`.
    fn vaddr(&self, fo: u64) -> Option<u64> {
        self.loads
            .iter()
            .find(|(off, _, sz)| fo >= *off && fo < off + sz)
            .map(|(off, va, _)| fo - off + va)
    }
}

/// The user space of this process, as mapped when it was read.
#[derive(Debug, Default)]
pub struct UserSymbols {
    maps: Vec<Mapping>,
    /// Per path: the file's symbols (None: not readable as ELF).
    files: HashMap<String, Option<Elf>>,
    exe: String,
}

impl UserSymbols {
    /// Reads `/proc/self/maps` again (libraries may have been loaded since),
    /// keeping the files already parsed.
    pub fn refresh(&mut self) {
        self.maps = parse_maps(&std::fs::read_to_string("/proc/self/maps").unwrap_or_default());
        self.exe = std::fs::read_link("/proc/self/exe")
            .map(|p| p.display().to_string())
            .unwrap_or_default();
    }

    /// The function at `a`, demangled; or the file's name in brackets
    /// ("[libc.so.6]") when it has no symbol there. None: `a` is in no
    /// executable mapping (a frame-pointer walk gone astray, say).
    pub fn lookup(&mut self, a: u64) -> Option<String> {
        let m = self.maps.iter().find(|m| a >= m.start && a < m.end)?.clone();
        if m.path.is_empty() || m.path.starts_with('[') {
            return Some(if m.path.is_empty() {
                "[anon]".into()
            } else {
                m.path.clone()
            });
        }
        let exe = self.exe.clone();
        let elf = self.files.entry(m.path.clone()).or_insert_with(|| {
            // the running binary, even when its file was replaced since
            let open = if m.path == exe {
                "/proc/self/exe"
            } else {
                m.path.as_str()
            };
            std::fs::File::open(open).ok().and_then(|f| Elf::read(&f))
        });
        let base = m
            .path
            .rsplit('/')
            .next()
            .unwrap_or(&m.path)
            .trim_end_matches(" (deleted)");
        let name = elf.as_ref().and_then(|e| {
            let va = e.vaddr(a - m.start + m.offset)?;
            e.table.lookup(va, 0)
        });
        Some(match name {
            Some(n) => demangle(n),
            None => format!("[{base}]"),
        })
    }
}

/// A Rust (legacy or v0) name without its hash; other names as they are.
pub fn demangle(name: &str) -> String {
    format!("{:#}", rustc_demangle::demangle(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KALLSYMS: &str = "ffffffff81000000 T _stext
ffffffff81000100 t do_one
ffffffff81000200 T do_two
ffffffff81000180 d some_data
0000000000000000 A fixed_percpu_data
ffffffffc0a00000 t xfs_attr_set\t[xfs]
ffffffffc0a00400 t xfs_attr_get\t[xfs]
";

    #[test]
    fn kallsyms_lookup_finds_the_function_containing_an_address() {
        let k = KernelSymbols::parse(KALLSYMS);
        assert_eq!(k.lookup(0xffffffff81000000), Some("_stext"));
        assert_eq!(k.lookup(0xffffffff810000ff), Some("_stext"));
        assert_eq!(k.lookup(0xffffffff81000100), Some("do_one"));
        // data symbols do not split functions
        assert_eq!(k.lookup(0xffffffff810001a0), Some("do_one"));
        assert_eq!(k.lookup(0xffffffff81000234), Some("do_two"));
        assert_eq!(k.lookup(0xffffffffc0a00010), Some("xfs_attr_set"));
        assert_eq!(k.lookup(0xffffffffc0a00400), Some("xfs_attr_get"));
        // below the first symbol, and far beyond the last
        assert_eq!(k.lookup(0xffffffff80ffffff), None);
        assert_eq!(k.lookup(0xffffffffc0a00400 + (2 << 20)), None);
    }

    #[test]
    fn hidden_kallsyms_give_no_table() {
        let k = KernelSymbols::parse("0000000000000000 T _stext\n0000000000000000 t do_one\n");
        assert!(k.is_empty());
        assert_eq!(k.lookup(0x10), None);
    }

    #[test]
    fn the_running_kernel_has_its_entry_point() {
        let k = KernelSymbols::load();
        if k.is_empty() {
            return; // kptr_restrict hides the addresses from this user
        }
        let text = std::fs::read_to_string("/proc/kallsyms").unwrap();
        let line = text.lines().find(|l| l.ends_with(" T do_syscall_64")).unwrap();
        let a = u64::from_str_radix(line.split(' ').next().unwrap(), 16).unwrap();
        assert_eq!(k.lookup(a + 1), Some("do_syscall_64"));
    }

    #[test]
    fn maps_keep_executable_mappings() {
        let m = parse_maps(
            "5581a0000000-5581a0010000 r--p 00000000 08:01 123   /usr/bin/x\n\
             5581a0010000-5581a0050000 r-xp 00010000 08:01 123   /usr/bin/x\n\
             7ffd1000-7ffd3000 r-xp 00000000 00:00 0   [vdso]\n",
        );
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].start, 0x5581a0010000);
        assert_eq!(m[0].offset, 0x10000);
        assert_eq!(m[0].path, "/usr/bin/x");
        assert_eq!(m[1].path, "[vdso]");
    }

    #[inline(never)]
    fn a_function_of_this_binary() -> u64 {
        std::hint::black_box(7)
    }

    #[test]
    fn this_binary_names_its_own_functions() {
        let mut u = UserSymbols::default();
        u.refresh();
        let a = a_function_of_this_binary as *const () as u64;
        let name = u.lookup(a + 1).expect("in an executable mapping");
        assert!(name.ends_with("a_function_of_this_binary"), "{name}");
        assert!(!name.contains("::h"), "demangled without its hash: {name}");
        // libc's write, from its dynamic symbols at least
        let w = libc::write as *const () as u64;
        let name = u.lookup(w).unwrap();
        assert!(name.contains("write"), "{name}");
        assert_eq!(u.lookup(8), None);
    }
}
