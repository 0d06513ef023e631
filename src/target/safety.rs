//! Refusals that keep fslab from destroying data it did not create: a block
//! device that is mounted, in use, used as swap, or whose first blocks carry a
//! filesystem, partition table or volume signature.

use super::info::MountEntry;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// Known signatures: (what, byte offset, magic).
const SIGNATURES: &[(&str, usize, &[u8])] = &[
    ("an XFS filesystem", 0, b"XFSB"),
    ("an ext2/3/4 filesystem", 1080, &[0x53, 0xEF]),
    ("a btrfs filesystem", 65600, b"_BHRfS_M"),
    ("swap space", 4086, b"SWAPSPACE2"),
    ("swap space", 4086, b"SWAP-SPACE"),
    ("a LUKS volume", 0, b"LUKS\xba\xbe"),
    ("an LVM physical volume", 512, b"LABELONE"),
    ("a GPT partition table", 512, b"EFI PART"),
    ("a DOS partition table or boot sector", 510, &[0x55, 0xAA]),
];

/// Bytes to read to see every signature.
pub const PROBE_LEN: usize = 65600 + 8;

/// The first signature found in the leading bytes of a device.
pub fn find_signature(head: &[u8]) -> Option<&'static str> {
    SIGNATURES
        .iter()
        .find(|(_, off, magic)| head.get(*off..*off + magic.len()) == Some(*magic))
        .map(|(what, _, _)| *what)
}

/// Why writing to `dev` would be unsafe, if it would: mounted (itself or a
/// partition), held by another device (dm, md), active swap, or a signature.
pub fn device_refusal(dev: &Path, mounts: &[MountEntry]) -> std::io::Result<Option<String>> {
    let meta = std::fs::metadata(dev)?;
    if !meta.file_type().is_block_device() {
        return Ok(None);
    }
    let rdev = meta.rdev();
    let pair = (rustix::fs::major(rdev), rustix::fs::minor(rdev));
    let mut devs = vec![pair];
    let sys = format!("/sys/dev/block/{}:{}", pair.0, pair.1);
    if let Ok(rd) = std::fs::read_dir(&sys) {
        for e in rd.flatten() {
            // partitions appear as subdirectories holding a `partition` file
            if e.path().join("partition").exists() {
                if let Ok(d) = std::fs::read_to_string(e.path().join("dev")) {
                    if let Some((a, b)) = d.trim().split_once(':') {
                        if let (Ok(a), Ok(b)) = (a.parse(), b.parse()) {
                            devs.push((a, b));
                        }
                    }
                }
            }
        }
    }
    if let Some(m) = mounts.iter().find(|m| devs.contains(&m.dev)) {
        return Ok(Some(format!(
            "it is mounted on {} ({})",
            m.mount_point.display(),
            m.fs_type
        )));
    }
    if std::fs::read_dir(format!("{sys}/holders"))
        .map(|mut d| d.next().is_some())
        .unwrap_or(false)
    {
        return Ok(Some("another device (device-mapper, md) holds it".into()));
    }
    if let Ok(swaps) = std::fs::read_to_string("/proc/swaps") {
        for line in swaps.lines().skip(1) {
            if let Some(p) = line.split_whitespace().next() {
                if std::fs::metadata(p).map(|m| m.rdev() == rdev).unwrap_or(false) {
                    return Ok(Some("it is in use as swap".into()));
                }
            }
        }
    }
    let mut head = vec![0u8; PROBE_LEN];
    let mut f = std::fs::File::open(dev)?;
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..])? {
            0 => break,
            n => got += n,
        }
    }
    head.truncate(got);
    Ok(find_signature(&head).map(|what| format!("its first blocks carry {what}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_signatures() {
        let mut b = vec![0u8; PROBE_LEN];
        assert_eq!(find_signature(&b), None);
        b[1080] = 0x53;
        b[1081] = 0xEF;
        assert_eq!(find_signature(&b), Some("an ext2/3/4 filesystem"));
        let mut b = vec![0u8; PROBE_LEN];
        b[..4].copy_from_slice(b"XFSB");
        assert_eq!(find_signature(&b), Some("an XFS filesystem"));
        let mut b = vec![0u8; PROBE_LEN];
        b[65600..65608].copy_from_slice(b"_BHRfS_M");
        assert_eq!(find_signature(&b), Some("a btrfs filesystem"));
        let mut b = vec![0u8; 8192];
        b[4086..4096].copy_from_slice(b"SWAPSPACE2");
        assert_eq!(find_signature(&b), Some("swap space"));
        assert_eq!(find_signature(&[]), None, "a short read is no signature");
    }
}
