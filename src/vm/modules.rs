//! The kernel modules a guest cell needs, with their dependencies, in the
//! order they load. Read from the modules directory itself (no depmod: a
//! Debian package unpacked with `dpkg-deb -x` has no modules.dep): each
//! module's `.modinfo` section names what it depends on. Compressed modules
//! (.ko.xz, .ko.zst, .ko.gz) are decompressed on the host with xz, zstd or
//! gzip, so a kernel without in-kernel decompression loads them too.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Modules every guest needs: its disk, PCI transport and result port.
pub const BASE: &[&str] = &["virtio_pci", "virtio_blk", "virtio_console"];

/// Modules a filesystem type needs, besides itself. Loaded when the kernel
/// has them as modules; a kernel that builds them in has nothing to load.
/// XFS and btrfs ask the crypto API for crc32c at mount, which a module's
/// depends= does not name.
pub fn for_fs(fs_type: &str) -> Vec<&'static str> {
    match fs_type {
        "xfs" => vec!["xfs", "crc32c_generic", "crc32c_intel"],
        "btrfs" => vec![
            "btrfs",
            "crc32c_generic",
            "crc32c_intel",
            "xxhash_generic",
            "blake2b_generic",
            "sha256_generic",
        ],
        "ext4" => vec!["ext4", "crc32c_generic", "crc32c_intel"],
        _ => vec![],
    }
}

/// One module to load.
#[derive(Debug, Clone)]
pub struct Module {
    pub name: String,
    /// Its (decompressed) object file.
    pub data: Vec<u8>,
}

/// A module's name as the kernel spells it: dashes are underscores.
fn norm(s: &str) -> String {
    s.replace('-', "_")
}

fn module_name(file: &str) -> Option<(String, &'static str)> {
    for ext in [".ko", ".ko.xz", ".ko.zst", ".ko.gz"] {
        if let Some(stem) = file.strip_suffix(ext) {
            return Some((norm(stem), ext));
        }
    }
    None
}

/// The largest module fslab loads, decompressed (Debian's largest, amdgpu,
/// is about 20 MiB): a small .ko.xz can decompress to gigabytes.
pub const MAX_MODULE: u64 = 64 << 20;
/// The most modules one guest loads (a filesystem with its dependencies is
/// a few tens): `depends=` chains end here, however long.
pub const MAX_MODULES: usize = 256;
/// All of a guest's modules together (they sit in the initramfs, in the
/// guest's memory).
pub const MAX_TOTAL: u64 = 256 << 20;
/// The most entries the modules directory's walk visits (a kernel has a few thousand).
const MAX_FILES: usize = 100_000;

/// Every module file under `dir`, by name.
fn index(dir: &Path) -> Result<HashMap<String, PathBuf>, String> {
    let mut map = HashMap::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            seen += 1;
            if seen > MAX_FILES {
                return Err(format!(
                    "modules {} holds more than {MAX_FILES} files: give the kernel's lib/modules/VERSION",
                    dir.display()
                ));
            }
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                // build and source are links into a build tree
                if !ft.is_symlink() {
                    stack.push(p);
                }
            } else if let Some((name, _)) = p.file_name().and_then(|n| n.to_str()).and_then(module_name) {
                map.entry(name).or_insert(p);
            }
        }
    }
    Ok(map)
}

/// The modules the kernel has built in (`modules.builtin`, as
/// `make modules_install` and Debian's packages write it); None: no such file.
fn builtin(dir: &Path) -> Option<HashSet<String>> {
    use std::io::{BufRead, BufReader};
    let f = open_regular(&dir.join("modules.builtin")).ok()?;
    Some(
        BufReader::new(f.take(16 << 20))
            .lines()
            .map_while(Result::ok)
            .filter_map(|l| {
                let file = l.rsplit('/').next()?.to_string();
                module_name(&file).map(|m| m.0)
            })
            .collect(),
    )
}

/// Opens a regular file for reading (a FIFO does not block, a device is refused).
fn open_regular(p: &Path) -> Result<File, String> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(p)
        .map_err(|e| format!("{}: {e}", p.display()))?;
    match f.metadata() {
        Ok(m) if m.is_file() => Ok(f),
        Ok(_) => Err(format!("module {} is not a regular file", p.display())),
        Err(e) => Err(format!("{}: {e}", p.display())),
    }
}

/// The object file's bytes, decompressed (the tool reads the open file on
/// its stdin and fslab reads at most MAX_MODULE bytes of its output), and
/// checked to be a kernel module: an ELF relocatable object.
fn read_module(p: &Path) -> Result<Vec<u8>, String> {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let f = open_regular(p)?;
    let too_big = || {
        format!(
            "module {} is larger than {} MiB decompressed: not a kernel module fslab loads",
            p.display(),
            MAX_MODULE >> 20
        )
    };
    let tool = match module_name(name).map(|m| m.1) {
        Some(".ko.xz") => "xz",
        Some(".ko.zst") => "zstd",
        Some(".ko.gz") => "gzip",
        _ => {
            let mut data = Vec::new();
            f.take(MAX_MODULE + 1)
                .read_to_end(&mut data)
                .map_err(|e| format!("{}: {e}", p.display()))?;
            if data.len() as u64 > MAX_MODULE {
                return Err(too_big());
            }
            return check_object(p, data);
        }
    };
    let mut child = Command::new(tool)
        .args(["-d", "-c"])
        .stdin(f)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("decompressing {} needs {tool}: {e}", p.display()))?;
    let mut err = child.stderr.take().expect("piped");
    let errs = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = (&mut err).take(4096).read_to_end(&mut s);
        // the rest is dropped, so the tool never blocks on a full pipe
        let _ = std::io::copy(&mut err, &mut std::io::sink());
        String::from_utf8_lossy(&s).into_owned()
    });
    let mut data = Vec::new();
    let read = child
        .stdout
        .take()
        .expect("piped")
        .take(MAX_MODULE + 1)
        .read_to_end(&mut data);
    if read.is_err() || data.len() as u64 > MAX_MODULE {
        let _ = child.kill();
    }
    let status = child.wait();
    let errs = errs.join().unwrap_or_default();
    if data.len() as u64 > MAX_MODULE {
        return Err(too_big());
    }
    read.map_err(|e| format!("decompressing {}: {e}", p.display()))?;
    match status {
        Ok(st) if st.success() => check_object(p, data),
        Ok(st) => Err(format!(
            "{tool} -d {} failed ({st}): {}",
            p.display(),
            errs.lines().next().unwrap_or("").trim()
        )),
        Err(e) => Err(format!("{tool} -d {}: {e}", p.display())),
    }
}

/// `data` if it is a kernel module (an x86-64 ELF relocatable object).
fn check_object(p: &Path, data: Vec<u8>) -> Result<Vec<u8>, String> {
    let ok = data.len() >= 64
        && data.starts_with(b"\x7fELF")
        && data[4] == 2 // 64-bit
        && u16::from_le_bytes([data[16], data[17]]) == 1 // ET_REL
        && u16::from_le_bytes([data[18], data[19]]) == 62; // x86-64
    if ok {
        Ok(data)
    } else {
        Err(format!(
            "module {} is not a kernel module (an x86-64 ELF relocatable object)",
            p.display()
        ))
    }
}

/// The `depends=` of a module's .modinfo (NUL-separated key=value strings).
fn depends(obj: &[u8]) -> Vec<String> {
    let key = b"\0depends=";
    let Some(at) = obj.windows(key.len()).position(|w| w == key) else {
        return Vec::new();
    };
    let rest = &obj[at + key.len()..];
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    String::from_utf8_lossy(&rest[..end])
        .split(',')
        .filter(|s| !s.is_empty())
        .map(norm)
        .collect()
}

/// A module being resolved: its dependencies are taken one by one.
struct Pending {
    name: String,
    data: Vec<u8>,
    deps: Vec<String>,
    next: usize,
}

/// The modules among `wanted` that `dir` holds, each after its
/// dependencies. A wanted name that is not a module is taken as built in
/// (the guest checks /proc/filesystems for the filesystem itself). The
/// walk is iterative and ends at MAX_MODULES modules or MAX_TOTAL bytes.
pub fn resolve(dir: &Path, wanted: &[&str]) -> Result<Vec<Module>, String> {
    let idx = index(dir)?;
    let mut out: Vec<Module> = Vec::new();
    // every module read so far (loaded, or waiting for its dependencies)
    let mut seen: HashSet<String> = HashSet::new();
    let mut total = 0u64;
    let mut take = |name: &str, seen: &mut HashSet<String>| -> Result<Option<Pending>, String> {
        if seen.contains(name) {
            return Ok(None);
        }
        let Some(p) = idx.get(name) else { return Ok(None) };
        if seen.len() >= MAX_MODULES {
            return Err(format!(
                "modules {}: the guest would load more than {MAX_MODULES} modules (a depends= chain reaches {})",
                dir.display(),
                p.display()
            ));
        }
        seen.insert(name.to_string());
        let data = read_module(p)?;
        total += data.len() as u64;
        if total > MAX_TOTAL {
            return Err(format!(
                "modules {}: the guest's modules come to more than {} MiB decompressed (at {})",
                dir.display(),
                MAX_TOTAL >> 20,
                p.display()
            ));
        }
        Ok(Some(Pending {
            name: name.to_string(),
            deps: depends(&data),
            data,
            next: 0,
        }))
    };
    for w in wanted {
        let mut stack: Vec<Pending> = take(&norm(w), &mut seen)?.into_iter().collect();
        while let Some(top) = stack.last_mut() {
            if let Some(d) = top.deps.get(top.next).cloned() {
                top.next += 1;
                // a cycle ends at a module already taken, as a loaded one does
                if let Some(m) = take(&d, &mut seen)? {
                    stack.push(m);
                }
            } else {
                let m = stack.pop().expect("the top");
                out.push(Module {
                    name: m.name,
                    data: m.data,
                });
            }
        }
    }
    Ok(out)
}

/// Checks a kernel's modules before any cell: that `dir` has each of
/// `required` as a module file or names it in modules.builtin, and that the
/// modules `wanted` resolve (each a kernel object, within the bounds).
pub fn check(dir: &Path, wanted: &[&str], required: &[&str]) -> Result<(), String> {
    let idx = index(dir)?;
    let built = builtin(dir);
    for r in required {
        let r = norm(r);
        if !idx.contains_key(&r) && !built.as_ref().is_some_and(|b| b.contains(&r)) {
            return Err(format!(
                "modules {} has no {r} module{}: the guest could not {}",
                dir.display(),
                if built.is_some() {
                    " and its modules.builtin does not name it"
                } else {
                    " (and no modules.builtin saying it is built in)"
                },
                match r.as_str() {
                    "virtio_blk" => "see its disk",
                    "virtio_pci" => "see its virtio devices",
                    "virtio_console" => "send its result back",
                    _ => "mount the filesystem",
                }
            ));
        }
    }
    resolve(dir, wanted).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depends_is_read_from_modinfo() {
        let obj = b"\x7fELF....\0license=GPL\0depends=libcrc32c,crc-t10dif\0intree=Y\0";
        assert_eq!(depends(obj), vec!["libcrc32c", "crc_t10dif"]);
        assert!(depends(b"\0depends=\0").is_empty());
        assert!(depends(b"nothing").is_empty());
    }

    #[test]
    fn names_drop_the_extension_and_use_underscores() {
        assert_eq!(
            module_name("crc32c-intel.ko.xz"),
            Some(("crc32c_intel".to_string(), ".ko.xz"))
        );
        assert_eq!(module_name("xfs.ko"), Some(("xfs".to_string(), ".ko")));
        assert_eq!(module_name("modules.dep"), None);
    }

    /// A module object: an x86-64 ELF relocatable header, then its modinfo.
    pub(crate) fn object(deps: &str) -> Vec<u8> {
        let mut v = vec![0u8; 64];
        v[..4].copy_from_slice(b"\x7fELF");
        v[4] = 2;
        v[16] = 1;
        v[18] = 62;
        v.extend_from_slice(format!("\0depends={deps}\0").as_bytes());
        v
    }

    #[test]
    fn dependencies_load_first() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("kernel/fs")).unwrap();
        std::fs::write(d.path().join("kernel/fs/a.ko"), object("b,c")).unwrap();
        std::fs::write(d.path().join("kernel/fs/b.ko"), object("c")).unwrap();
        std::fs::write(d.path().join("kernel/fs/c.ko"), object("")).unwrap();
        let order: Vec<String> = resolve(d.path(), &["a", "missing"])
            .unwrap()
            .into_iter()
            .map(|m| m.name)
            .collect();
        assert_eq!(order, vec!["c", "b", "a"]);
    }

    #[test]
    fn a_long_chain_a_cycle_and_a_bomb_end_with_a_message() {
        let d = tempfile::tempdir().unwrap();
        let n = 5000;
        for i in 0..n {
            std::fs::write(d.path().join(format!("m{i}.ko")), object(&format!("m{}", i + 1))).unwrap();
        }
        let e = resolve(d.path(), &["m0"]).unwrap_err();
        assert!(e.contains("more than 256 modules"), "{e}");
        std::fs::write(d.path().join("x.ko"), object("y")).unwrap();
        std::fs::write(d.path().join("y.ko"), object("x")).unwrap();
        let names: Vec<_> = resolve(d.path(), &["x"]).unwrap().into_iter().map(|m| m.name).collect();
        assert_eq!(names, ["y", "x"]);
        std::fs::write(d.path().join("t.ko"), b"#!/bin/sh\n\0depends=\0").unwrap();
        let e = resolve(d.path(), &["t"]).unwrap_err();
        assert!(e.contains("t.ko is not a kernel module"), "{e}");
        if crate::vm::initramfs::find_program("gzip").is_some() {
            // 128 MiB of zeros, gzipped (about 128 KiB)
            let z = d.path().join("z.ko.gz");
            let f = std::fs::File::create(&z).unwrap();
            let mut gz = Command::new("gzip")
                .arg("-c")
                .stdin(Stdio::piped())
                .stdout(f)
                .spawn()
                .unwrap();
            let mut w = gz.stdin.take().unwrap();
            let zeros = vec![0u8; 1 << 20];
            for _ in 0..128 {
                std::io::Write::write_all(&mut w, &zeros).unwrap();
            }
            drop(w);
            assert!(gz.wait().unwrap().success());
            let e = resolve(d.path(), &["z"]).unwrap_err();
            assert!(e.contains("larger than 64 MiB"), "{e}");
        }
    }
}
