//! The kernel modules a guest cell needs, with their dependencies, in the
//! order they load. Read from the modules directory itself (no depmod: a
//! Debian package unpacked with `dpkg-deb -x` has no modules.dep): each
//! module's `.modinfo` section names what it depends on. Compressed modules
//! (.ko.xz, .ko.zst, .ko.gz) are decompressed on the host with xz, zstd or
//! gzip, so a kernel without in-kernel decompression loads them too.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

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

/// Every module file under `dir`, by name.
fn index(dir: &Path) -> HashMap<String, PathBuf> {
    let mut map = HashMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
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
    map
}

/// The object file's bytes, decompressed.
fn read_module(p: &Path) -> Result<Vec<u8>, String> {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let tool = match module_name(name).map(|m| m.1) {
        Some(".ko.xz") => "xz",
        Some(".ko.zst") => "zstd",
        Some(".ko.gz") => "gzip",
        _ => return std::fs::read(p).map_err(|e| format!("{}: {e}", p.display())),
    };
    let out = Command::new(tool)
        .args(["-d", "-c"])
        .arg(p)
        .output()
        .map_err(|e| format!("decompressing {} needs {tool}: {e}", p.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{tool} -d {}: {}",
            p.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out.stdout)
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

/// The modules among `wanted` that `dir` holds, each after its
/// dependencies. A wanted name that is not a module is taken as built in
/// (the guest checks /proc/filesystems for the filesystem itself).
pub fn resolve(dir: &Path, wanted: &[&str]) -> Result<Vec<Module>, String> {
    let idx = index(dir);
    let mut out: Vec<Module> = Vec::new();
    let mut visiting: Vec<String> = Vec::new();
    fn visit(
        name: &str,
        idx: &HashMap<String, PathBuf>,
        out: &mut Vec<Module>,
        visiting: &mut Vec<String>,
    ) -> Result<(), String> {
        if out.iter().any(|m| m.name == name) || visiting.iter().any(|v| v == name) {
            return Ok(());
        }
        let Some(p) = idx.get(name) else { return Ok(()) };
        visiting.push(name.to_string());
        let data = read_module(p)?;
        for d in depends(&data) {
            visit(&d, idx, out, visiting)?;
        }
        visiting.pop();
        out.push(Module {
            name: name.to_string(),
            data,
        });
        Ok(())
    }
    for w in wanted {
        visit(&norm(w), &idx, &mut out, &mut visiting)?;
    }
    Ok(out)
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

    #[test]
    fn dependencies_load_first() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("kernel/fs")).unwrap();
        std::fs::write(d.path().join("kernel/fs/a.ko"), b"\0depends=b,c\0").unwrap();
        std::fs::write(d.path().join("kernel/fs/b.ko"), b"\0depends=c\0").unwrap();
        std::fs::write(d.path().join("kernel/fs/c.ko"), b"\0depends=\0").unwrap();
        let order: Vec<String> = resolve(d.path(), &["a", "missing"])
            .unwrap()
            .into_iter()
            .map(|m| m.name)
            .collect();
        assert_eq!(order, vec!["c", "b", "a"]);
    }
}
