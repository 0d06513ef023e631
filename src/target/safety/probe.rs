//! What a block device carries, as libblkid sees it: `blkid -p` (its full
//! low-level probing of filesystem, RAID and partition-table superblocks)
//! and `wipefs --no-act` (every signature at every offset, bad checksums
//! included), then fslab's own 9 magics as a second line. A probe that cannot
//! run or fails is an answer too: the callers refuse on it.

use std::path::Path;
use std::process::{Command, Stdio};

/// One signature found on a device.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// For the message: "a minix filesystem".
    pub what: String,
    /// Who found it and how it calls it: "blkid: TYPE=minix".
    pub detail: String,
    /// libblkid's names for it (TYPE or PTTYPE); fslab's own magics may
    /// stand for several ("ext2", "ext3", "ext4").
    pub types: Vec<String>,
}

/// Partition-table types libblkid knows that are no filesystem's name too
/// (its "minix" partition table shares the minix filesystem's name, so a
/// wipefs "minix" is taken for the filesystem).
const PT_TYPES: &[&str] = &[
    "dos", "gpt", "PMBR", "sun", "sgi", "bsd", "mac", "atari", "unixware", "solaris", "aix", "ultrix",
];

fn article(name: &str) -> &'static str {
    match name.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

/// A reader's name for libblkid's TYPE `ty` of usage `usage` ("filesystem",
/// "raid", "crypto", "other"; empty when wipefs found it).
pub fn describe(ty: &str, usage: &str) -> String {
    let known = match ty {
        "ext2" | "ext3" | "ext4" | "ext4dev" => return format!("an {ty} filesystem"),
        "jbd" => "an ext3/4 external journal",
        "xfs" => "an XFS filesystem",
        "xfs_external_log" => "an XFS external log",
        "btrfs" => "a btrfs filesystem",
        "swap" | "swsuspend" => "swap space",
        "crypto_LUKS" => "a LUKS volume",
        "LVM1_member" | "LVM2_member" => "an LVM physical volume",
        "linux_raid_member" => "an md RAID member",
        "zfs_member" => "a ZFS pool member",
        "bcache" => "a bcache device",
        "iso9660" => "an ISO9660 filesystem",
        "vfat" => "a FAT filesystem",
        "ntfs" => "an NTFS filesystem",
        "f2fs" => "an F2FS filesystem",
        "gpt" => "a GPT partition table",
        "dos" => "a DOS partition table",
        "PMBR" => "a protective MBR",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_string();
    }
    let a = article(ty);
    match usage {
        "filesystem" => format!("{a} {ty} filesystem"),
        "raid" => format!("{a} {ty} RAID member"),
        "crypto" => format!("{a} {ty} encrypted volume"),
        "partition table" => format!("{a} {ty} partition table"),
        _ if PT_TYPES.contains(&ty) => format!("{a} {ty} partition table"),
        _ => format!("{a} {ty} signature"),
    }
}

/// Runs util-linux tool `tool` with `args`, then `dev`. Where PATH lacks the
/// sbin directories, the usual places are tried: a tool that cannot be found
/// must refuse, not pass.
fn run(tool: &str, args: &[&str], dev: &Path) -> Result<std::process::Output, String> {
    let mut last = None;
    for exe in [tool.to_string(), format!("/usr/sbin/{tool}"), format!("/sbin/{tool}")] {
        match Command::new(&exe)
            .args(args)
            .arg(dev)
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .output()
        {
            Ok(o) => return Ok(o),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => last = Some(e),
            Err(e) => return Err(format!("{tool} (util-linux) could not be run: {e}")),
        }
    }
    let e = last.map(|e| e.to_string()).unwrap_or_default();
    Err(format!("{tool} (util-linux) could not be run: {e}"))
}

fn first_line(b: &[u8]) -> String {
    String::from_utf8_lossy(b)
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

/// `blkid -p -o export`: exit 0 found something, 2 found nothing (but blkid
/// also says 2, silently or with a warning, when it cannot open the device:
/// only a silent 2 is "nothing"; the caller hands it a path that stays open),
/// 8 an ambivalent result (several signatures: wipefs names them), anything
/// else a failed probe.
pub fn blkid(dev: &Path) -> Result<Vec<Found>, String> {
    let out = run("blkid", &["-p", "-o", "export"], dev)?;
    match out.status.code() {
        // `-o export` always names the device: silence is no answer
        Some(0) if out.stdout.iter().all(u8::is_ascii_whitespace) => {
            Err("blkid -p exited 0 but printed nothing".into())
        }
        Some(0) => Ok(parse_blkid(&String::from_utf8_lossy(&out.stdout))),
        Some(2) if first_line(&out.stderr).is_empty() => Ok(Vec::new()),
        Some(8) => Ok(vec![Found {
            what: "more than one signature".into(),
            detail: "blkid: ambivalent result".into(),
            types: Vec::new(),
        }]),
        _ => Err(format!("blkid -p failed ({}): {}", out.status, first_line(&out.stderr))),
    }
}

/// The signatures in blkid's `KEY=value` lines: TYPE (with its USAGE) and
/// PTTYPE. DEVNAME and PART_ENTRY_* describe the device itself (a partition
/// in its parent's table), not what it carries; any other key with neither
/// TYPE nor PTTYPE is taken as a signature all the same.
pub fn parse_blkid(text: &str) -> Vec<Found> {
    let kv: Vec<(&str, &str)> = text.lines().filter_map(|l| l.trim().split_once('=')).collect();
    let get = |k: &str| kv.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
    let mut found = Vec::new();
    if let Some(ty) = get("TYPE") {
        found.push(Found {
            what: describe(ty, get("USAGE").unwrap_or("")),
            detail: format!("blkid: TYPE={ty}"),
            types: vec![ty.to_string()],
        });
    }
    if let Some(pt) = get("PTTYPE") {
        found.push(Found {
            what: describe(pt, "partition table"),
            detail: format!("blkid: PTTYPE={pt}"),
            types: vec![pt.to_string()],
        });
    }
    if found.is_empty() {
        let other: Vec<String> = kv
            .iter()
            .filter(|(k, _)| *k != "DEVNAME" && !k.starts_with("PART_ENTRY_"))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if !other.is_empty() {
            found.push(Found {
                what: "a signature".into(),
                detail: format!("blkid: {}", other.join(" ")),
                types: Vec::new(),
            });
        }
    }
    found
}

/// `wipefs --no-act --json`: every signature libblkid finds, at any offset
/// and with bad checksums too (which `blkid -p` passes over).
pub fn wipefs(dev: &Path) -> Result<Vec<Found>, String> {
    let out = run("wipefs", &["--no-act", "--json"], dev)?;
    if !out.status.success() {
        return Err(format!("wipefs failed ({}): {}", out.status, first_line(&out.stderr)));
    }
    parse_wipefs(&String::from_utf8_lossy(&out.stdout))
}

pub fn parse_wipefs(text: &str) -> Result<Vec<Found>, String> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("wipefs printed what fslab cannot read: {e}"))?;
    let sigs = v["signatures"].as_array().ok_or("wipefs printed no signature list")?;
    Ok(sigs
        .iter()
        .map(|s| {
            let ty = s["type"].as_str().unwrap_or("unknown");
            let off = s["offset"].as_str().unwrap_or("?");
            Found {
                what: describe(ty, ""),
                detail: format!("wipefs: {ty} at offset {off}"),
                types: vec![ty.to_string()],
            }
        })
        .collect())
}

/// Known signatures: (what, byte offset, magic, libblkid's names for it).
const SIGNATURES: &[(&str, usize, &[u8], &[&str])] = &[
    ("an XFS filesystem", 0, b"XFSB", &["xfs"]),
    (
        "an ext2/3/4 filesystem",
        1080,
        &[0x53, 0xEF],
        &["ext2", "ext3", "ext4", "ext4dev", "jbd"],
    ),
    ("a btrfs filesystem", 65600, b"_BHRfS_M", &["btrfs"]),
    ("swap space", 4086, b"SWAPSPACE2", &["swap"]),
    ("swap space", 4086, b"SWAP-SPACE", &["swap"]),
    ("a LUKS volume", 0, b"LUKS\xba\xbe", &["crypto_LUKS"]),
    ("an LVM physical volume", 512, b"LABELONE", &["LVM2_member"]),
    ("a GPT partition table", 512, b"EFI PART", &["gpt", "PMBR"]),
    (
        "a DOS partition table or boot sector",
        510,
        &[0x55, 0xAA],
        &["dos", "PMBR", "gpt", "vfat", "ntfs", "exfat"],
    ),
];

/// Bytes to read to see every built-in signature.
pub const PROBE_LEN: usize = 65600 + 8;

/// The first built-in signature found in the leading bytes of a device.
pub fn find_signature(head: &[u8]) -> Option<Found> {
    SIGNATURES
        .iter()
        .find(|(_, off, magic, _)| head.get(*off..*off + magic.len()) == Some(*magic))
        .map(|(what, off, _, types)| Found {
            what: what.to_string(),
            detail: format!("fslab's own check: magic at byte {off}"),
            types: types.iter().map(|t| t.to_string()).collect(),
        })
}

/// Everything found on the device `dev` names (a path that stays open while
/// this runs), `head` being its first `PROBE_LEN` bytes: what libblkid finds
/// through blkid and wipefs, or, when both find nothing, fslab's own magics.
pub fn signatures(dev: &Path, head: &[u8]) -> Result<Vec<Found>, String> {
    let mut found = blkid(dev)?;
    for f in wipefs(dev)? {
        if !found.iter().any(|g| g.types == f.types) {
            found.push(f);
        }
    }
    if found.is_empty() {
        found.extend(find_signature(head));
    }
    Ok(found)
}

/// "a minix filesystem (blkid: TYPE=minix)", and up to two more.
pub fn list(found: &[Found]) -> String {
    let mut parts: Vec<String> = found
        .iter()
        .take(3)
        .map(|f| format!("{} ({})", f.what, f.detail))
        .collect();
    if found.len() > 3 {
        parts.push(format!("{} more", found.len() - 3));
    }
    match parts.len() {
        0 => String::new(),
        1 => parts.remove(0),
        n => {
            let last = parts.remove(n - 1);
            format!("{} and {last}", parts.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_builtin_signatures() {
        let what = |b: &[u8]| find_signature(b).map(|f| f.what);
        let mut b = vec![0u8; PROBE_LEN];
        assert_eq!(what(&b), None);
        b[1080] = 0x53;
        b[1081] = 0xEF;
        assert_eq!(what(&b).as_deref(), Some("an ext2/3/4 filesystem"));
        let mut b = vec![0u8; PROBE_LEN];
        b[..4].copy_from_slice(b"XFSB");
        assert_eq!(what(&b).as_deref(), Some("an XFS filesystem"));
        let mut b = vec![0u8; PROBE_LEN];
        b[65600..65608].copy_from_slice(b"_BHRfS_M");
        assert_eq!(what(&b).as_deref(), Some("a btrfs filesystem"));
        let mut b = vec![0u8; 8192];
        b[4086..4096].copy_from_slice(b"SWAPSPACE2");
        assert_eq!(what(&b).as_deref(), Some("swap space"));
        assert_eq!(what(&[]), None, "a short read is no signature");
    }

    #[test]
    fn reads_blkid_export() {
        let f = parse_blkid("DEVNAME=/dev/loop3\nVERSION=1\nBLOCK_SIZE=1024\nTYPE=minix\nUSAGE=filesystem\n");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].what, "a minix filesystem");
        assert_eq!(f[0].detail, "blkid: TYPE=minix");
        let f = parse_blkid("DEVNAME=/dev/loop3\nPTUUID=1234\nPTTYPE=gpt\n");
        assert_eq!(f[0].what, "a GPT partition table");
        let f = parse_blkid("TYPE=linux_raid_member\nUSAGE=raid\nPTTYPE=dos\n");
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].what, "an md RAID member");
        let f = parse_blkid("TYPE=weird\nUSAGE=raid\n");
        assert_eq!(f[0].what, "a weird RAID member");
        // a blank partition: its place in the parent's table is no signature
        assert!(parse_blkid("DEVNAME=/dev/sda1\nPART_ENTRY_SCHEME=dos\nPART_ENTRY_TYPE=0x83\n").is_empty());
        // an unknown key alone still refuses
        assert_eq!(parse_blkid("SBMAGIC=xyz\n")[0].what, "a signature");
    }

    #[test]
    fn reads_wipefs_json() {
        let f = parse_wipefs(
            r#"{"signatures": [{"device": "3", "offset": "0xff6", "type": "swap", "uuid": null, "label": null},
                               {"device": "3", "offset": "0x0", "type": "bfs", "uuid": null, "label": null}]}"#,
        )
        .unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].what, "swap space");
        assert_eq!(f[1].what, "a bfs signature");
        assert_eq!(f[1].detail, "wipefs: bfs at offset 0x0");
        assert!(parse_wipefs("{\"signatures\": []}").unwrap().is_empty());
        assert!(parse_wipefs("").unwrap().is_empty());
        assert!(parse_wipefs("not json").is_err());
    }

    #[test]
    fn a_missing_tool_is_an_error_not_a_pass() {
        let e = run("fslab-no-such-probe-tool", &[], Path::new("/dev/null")).unwrap_err();
        assert!(e.contains("could not be run"), "{e}");
    }

    #[test]
    fn lists_what_was_found() {
        let f = |w: &str| Found {
            what: w.into(),
            detail: "d".into(),
            types: vec![w.into()],
        };
        assert_eq!(list(&[f("a")]), "a (d)");
        assert_eq!(list(&[f("a"), f("b")]), "a (d) and b (d)");
        assert_eq!(
            list(&[f("a"), f("b"), f("c"), f("e")]),
            "a (d), b (d), c (d) and 1 more"
        );
    }
}
