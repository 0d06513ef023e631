//! The mkfs arguments and mount options a plan may give: an allow-list per
//! filesystem type of what fslab understands and knows names no device or
//! file. fslab runs mkfs and mount as root on the one device it checked
//! (its own loop device, or a plan's consented `device =`); an option that
//! names another one (a second btrfs device, XFS `logdev=`/`rtdev=`, ext4
//! `-J device=`, mount's `journal_path=`, `loop=`, a `-d file=`, a
//! protofile, an undo file) would reach a device nobody checked, so
//! anything not on these lists is refused when the plan is read, naming the
//! plan's line. A deny-list would have to know every option of every version
//! of every tool; this list only has to know the options fslab lets through.
//!
//! Arguments are read the way the tools' getopt reads them: `-b 4096` and
//! `-b4096`, clustered switches (`-qF`), `--name=value` and `--name value`.
//! Every argument that is not an option (a device or size after the options,
//! or anything after `--`) is refused: fslab names the device itself. Option
//! values may hold only letters, digits and `. _ + - :` (and `,` `=` between
//! suboptions), so no value can be a path.

mod lists;

use lists::*;

/// Longest option value fslab passes on.
const MAX_VALUE: usize = 128;

/// `s` for a one-line message: quoted, control characters escaped.
pub fn quoted(s: &str) -> String {
    let cut: String = s.chars().take(MAX_VALUE).collect();
    let more = if cut.len() < s.len() { "..." } else { "" };
    format!("{cut:?}{more}")
}

/// Why `v` cannot be an option value, if it cannot: only letters, digits and
/// `. _ + - :` (a size, a count, a label, a UUID, a profile), never a path.
fn value_problem(v: &str) -> Option<String> {
    if v.is_empty() {
        return Some("is empty".into());
    }
    if v.len() > MAX_VALUE {
        return Some(format!("is longer than {MAX_VALUE} bytes"));
    }
    if !v
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-' | ':'))
    {
        return Some(
            "may hold only letters, digits and . _ + - : (fslab passes no path or device to mkfs or mount but the one it checked)"
                .into(),
        );
    }
    None
}

/// A refused mkfs argument: the index of the offending word and why.
#[derive(Debug, PartialEq)]
pub struct Refused {
    pub word: usize,
    pub msg: String,
}

fn mkfs_spec(fs_type: &str) -> Option<Spec> {
    match fs_type {
        "ext2" | "ext3" | "ext4" => Some(MKE2FS),
        "xfs" => Some(MKFS_XFS),
        "btrfs" => Some(MKFS_BTRFS),
        _ => None,
    }
}

/// The allowed spellings of `spec`, for a message.
fn spellings(spec: Spec) -> String {
    spec.iter()
        .flat_map(|(names, _)| names.iter().copied())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Checks the words of a plan's `mkfs` for a `fs_type` filesystem against
/// the allow-list.
pub fn check_mkfs(fs_type: &str, args: &[String]) -> Result<(), Refused> {
    let tool = format!("mkfs.{fs_type}");
    let Some(spec) = mkfs_spec(fs_type) else {
        return match args.is_empty() {
            true => Ok(()),
            false => Err(Refused {
                word: 0,
                msg: format!("mkfs arguments given for a filesystem of type {fs_type}"),
            }),
        };
    };
    let find = |name: &str| spec.iter().find(|(names, _)| names.contains(&name)).map(|(_, t)| *t);
    let unknown = |i: usize, name: &str| Refused {
        word: i,
        msg: format!(
            "mkfs option {} is not one fslab passes to {tool} (allowed: {}; none that names another device or file)",
            quoted(name),
            spellings(spec)
        ),
    };
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        if w == "--" || w == "-" || !w.starts_with('-') {
            return Err(Refused {
                word: i,
                msg: format!(
                    "mkfs argument {} is not an option: fslab gives {tool} the one device it checked, and refuses any other device, file or size argument",
                    quoted(w)
                ),
            });
        }
        // (option, its value and the word that holds it)
        let (name, takes, value): (String, Takes, Option<(String, usize)>) = if let Some(long) = w.strip_prefix("--") {
            let (n, inline) = match long.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v.to_string())),
                None => (w.clone(), None),
            };
            let takes = find(&n).ok_or_else(|| unknown(i, &n))?;
            match (takes, inline) {
                (Takes::Nothing, Some(_)) => {
                    return Err(Refused {
                        word: i,
                        msg: format!("mkfs option {} of {tool} takes no value", quoted(&n)),
                    })
                }
                (Takes::Nothing, None) => (n, takes, None),
                (_, Some(v)) => (n, takes, Some((v, i))),
                (_, None) => {
                    i += 1;
                    (n, takes, args.get(i).map(|v| (v.clone(), i)))
                }
            }
        } else {
            // a cluster of short options; the first that takes a value takes
            // the rest of the word, or the next word
            let mut found = None;
            for (j, c) in w.char_indices().skip(1) {
                let n = format!("-{c}");
                let takes = find(&n).ok_or_else(|| unknown(i, &n))?;
                if !matches!(takes, Takes::Nothing) {
                    let rest = &w[j + c.len_utf8()..];
                    found = Some(if rest.is_empty() {
                        i += 1;
                        (n, takes, args.get(i).map(|v| (v.clone(), i)))
                    } else {
                        (n, takes, Some((rest.to_string(), i)))
                    });
                    break;
                }
            }
            match found {
                Some(f) => f,
                None => {
                    i += 1;
                    continue;
                }
            }
        };
        if !matches!(takes, Takes::Nothing) {
            let Some((v, at)) = value else {
                return Err(Refused {
                    word: i.min(args.len().saturating_sub(1)),
                    msg: format!("mkfs option {} of {tool} needs a value", quoted(&name)),
                });
            };
            check_value(&tool, &name, takes, &v).map_err(|msg| Refused { word: at, msg })?;
        }
        i += 1;
    }
    Ok(())
}

/// Checks the value `v` of mkfs option `name`.
fn check_value(tool: &str, name: &str, takes: Takes, v: &str) -> Result<(), String> {
    let bad = |what: &str, why: String| format!("mkfs option {} {}: {what} {why}", quoted(name), quoted(v));
    match takes {
        Takes::Nothing => Ok(()),
        Takes::Value => match value_problem(v) {
            Some(why) => Err(bad("its value", why)),
            None => Ok(()),
        },
        Takes::Words => {
            for w in v.split(',') {
                if w.is_empty()
                    || !w
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '^' | '-' | '.'))
                {
                    return Err(bad(
                        "each item",
                        "must be a name (letters, digits, _ - . and a leading ^)".into(),
                    ));
                }
            }
            Ok(())
        }
        Takes::Subopts(known) => {
            for item in v.split(',') {
                let (sub, val) = match item.split_once('=') {
                    Some((s, v)) => (s, Some(v)),
                    None => (item, None),
                };
                if !known.contains(&sub) {
                    return Err(format!(
                        "mkfs option {} {}: {} is not a suboption fslab passes to {tool} {name} (allowed: {}; none that names another device or file)",
                        quoted(name),
                        quoted(v),
                        quoted(sub),
                        known.join(", ")
                    ));
                }
                if let Some(why) = val.and_then(value_problem) {
                    return Err(bad(&format!("{sub}="), why));
                }
            }
            Ok(())
        }
    }
}

/// Checks a plan's `mount` options for a `fs_type` filesystem (an mkfs type
/// or tmpfs) against the allow-list.
pub fn check_mount(fs_type: &str, opts: &str) -> Result<(), String> {
    let own: &[&str] = match fs_type {
        "ext2" | "ext3" | "ext4" => MOUNT_EXT,
        "xfs" => MOUNT_XFS,
        "btrfs" => MOUNT_BTRFS,
        "tmpfs" => MOUNT_TMPFS,
        t => {
            return Err(format!(
                "mount options given for a filesystem of type {t}, which fslab does not mount"
            ))
        }
    };
    for item in opts.split(',') {
        let (name, val) = match item.split_once('=') {
            Some((n, v)) => (format!("{n}="), Some(v)),
            None => (item.to_string(), None),
        };
        if item.is_empty() || !(MOUNT_GENERIC.contains(&name.as_str()) || own.contains(&name.as_str())) {
            return Err(format!(
                "mount option {} is not one fslab passes to mount -t {fs_type}: fslab passes only the options it knows name no device or file (docs/plans.md)",
                quoted(item)
            ));
        }
        if let Some(why) = val.and_then(value_problem) {
            return Err(format!("mount option {}: its value {why}", quoted(item)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn mkfs(fs: &str, s: &str) -> Result<(), Refused> {
        check_mkfs(fs, &words(s))
    }

    #[test]
    fn what_plans_use_passes() {
        for (fs, args) in [
            ("ext4", "-I 512"),
            (
                "ext4",
                "-I512 -qF -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 -O ^has_journal,metadata_csum",
            ),
            ("ext4", "-J size=64 -T small -L lab_1 -m 0 -N 100000"),
            ("ext3", "-j"),
            ("xfs", "-i size=512"),
            ("xfs", "-m crc=0 -i size=256"),
            (
                "xfs",
                "-f -l size=64m,version=2 -d agcount=4,su=64k,sw=2 -n ftype=1 -L x",
            ),
            ("btrfs", "-d single -m dup"),
            (
                "btrfs",
                "--data=single --metadata dup -O no-holes,^free-space-tree --csum xxhash -n 16k",
            ),
            ("btrfs", "-M -K --nodiscard"),
            ("ext4", ""),
        ] {
            assert_eq!(mkfs(fs, args), Ok(()), "{fs} {args}");
        }
        for (fs, o) in [
            ("ext4", "noatime,nobarrier"),
            ("ext4", "noatime"),
            ("ext4", "data=writeback,commit=30,errors=remount-ro,dax=never"),
            ("xfs", "noatime,logbufs=8,logbsize=256k,inode64"),
            ("btrfs", "compress=zstd:3,space_cache=v2,ssd,discard=async"),
            ("tmpfs", "mode=1777,huge=within_size,nr_inodes=0"),
        ] {
            assert_eq!(check_mount(fs, o), Ok(()), "{fs} {o}");
        }
    }

    #[test]
    fn the_example_plans_still_parse() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
        let mut n = 0;
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "toml") {
                let text = std::fs::read_to_string(&p).unwrap();
                let file = p.display().to_string();
                if let Err(e) = crate::plan::LabPlan::parse(&file, &text) {
                    panic!("{e}");
                }
                n += 1;
            }
        }
        assert!(n >= 5, "{n} plans in {dir}");
    }

    #[test]
    fn every_form_that_names_a_device_or_file_is_refused() {
        let cases: &[(&str, &str, usize, &str)] = &[
            // (fs, mkfs, offending word, said)
            ("btrfs", "/dev/loop9", 0, "\"/dev/loop9\" is not an option"),
            (
                "btrfs",
                "-d raid1 -m raid1 /dev/loop9",
                4,
                "\"/dev/loop9\" is not an option",
            ),
            ("btrfs", "-f -- /dev/loop9", 1, "\"--\" is not an option"),
            ("btrfs", "--rootdir /etc", 0, "\"--rootdir\" is not one"),
            ("btrfs", "--rootd=/etc", 0, "\"--rootd\" is not one"),
            ("btrfs", "-r /etc", 0, "\"-r\" is not one"),
            ("btrfs", "-L /dev/loop9", 1, "its value may hold only"),
            ("btrfs", "--label=/x", 0, "its value may hold only"),
            ("btrfs", "--force=1", 0, "takes no value"),
            ("xfs", "-l logdev=/dev/loop9", 1, "\"logdev\" is not a suboption"),
            (
                "xfs",
                "-llogdev=/dev/loop9,size=10m",
                0,
                "\"logdev\" is not a suboption",
            ),
            (
                "xfs",
                "-l size=10m,logdev=/dev/loop9",
                1,
                "\"logdev\" is not a suboption",
            ),
            ("xfs", "-r rtdev=/dev/loop9", 1, "\"rtdev\" is not a suboption"),
            ("xfs", "-d file=1,name=/x", 1, "\"file\" is not a suboption"),
            ("xfs", "-d name=/dev/loop9", 1, "\"name\" is not a suboption"),
            ("xfs", "-l name=/x", 1, "\"name\" is not a suboption"),
            ("xfs", "-p /etc/proto", 0, "\"-p\" is not one"),
            ("xfs", "-c options=/x", 0, "\"-c\" is not one"),
            ("xfs", "-d size=/dev/x", 1, "size= may hold only"),
            ("xfs", "-fq /dev/loop9", 1, "is not an option"),
            ("ext4", "-J device=/dev/loop9", 1, "\"device\" is not a suboption"),
            ("ext4", "-Jdevice=UUID=abc", 0, "\"device\" is not a suboption"),
            (
                "ext4",
                "-E offset=0,android_sparse",
                1,
                "\"android_sparse\" is not a suboption",
            ),
            ("ext4", "-O journal_dev,/x", 1, "each item must be a name"),
            ("ext4", "-d /etc", 0, "\"-d\" is not one"),
            ("ext4", "-l /etc/badblocks", 0, "\"-l\" is not one"),
            ("ext4", "-z /tmp/undo", 0, "\"-z\" is not one"),
            ("ext4", "-qz/tmp/undo", 0, "\"-z\" is not one"),
            ("ext4", "-M /mnt", 0, "\"-M\" is not one"),
            ("ext4", "-b", 0, "needs a value"),
            ("ext4", "-S", 0, "\"-S\" is not one"),
            ("ext4", "-I 512 8192", 2, "\"8192\" is not an option"),
            (
                "ext4",
                "--no-such-mkfs-option",
                0,
                "is not one fslab passes to mkfs.ext4",
            ),
            ("ext4", "-L lab\nel", 1, "\"lab\\nel\""),
            ("ext4", "-é", 0, "\"-é\" is not one"),
            ("ext4", "-qé", 0, "\"-é\" is not one"),
            ("ext4", "-L é", 1, "its value may hold only"),
            ("btrfs", "--é=1", 0, "\"--é\" is not one"),
            ("xfs", "-lé=1", 0, "\"é\" is not a suboption"),
        ];
        for (fs, args, word, want) in cases {
            let w: Vec<String> = if args.contains('\n') {
                vec!["-L".into(), "lab\nel".into()]
            } else {
                words(args)
            };
            let e = check_mkfs(fs, &w).expect_err(args);
            assert_eq!(e.word, *word, "{fs} {args}: {}", e.msg);
            assert!(e.msg.contains(want), "{fs} {args}: wanted {want} in {}", e.msg);
            assert!(!e.msg.contains('\n'), "one line: {}", e.msg);
        }
    }

    #[test]
    fn every_mount_option_that_names_a_device_or_file_is_refused() {
        for (fs, o, want) in [
            ("xfs", "logdev=/dev/loop9", "\"logdev=/dev/loop9\" is not one"),
            ("xfs", "noatime,rtdev=/dev/loop9", "\"rtdev=/dev/loop9\""),
            ("ext4", "journal_path=/dev/loop9", "\"journal_path=/dev/loop9\""),
            ("ext4", "journal_dev=1793", "\"journal_dev=1793\""),
            ("ext4", "usrjquota=/q", "\"usrjquota=/q\""),
            ("btrfs", "device=/dev/loop9", "\"device=/dev/loop9\""),
            ("btrfs", "subvol=/x", "\"subvol=/x\""),
            ("ext4", "loop", "\"loop\""),
            ("ext4", "loop=/dev/loop9", "\"loop=/dev/loop9\""),
            ("ext4", "offset=0", "\"offset=0\""),
            ("ext4", "bind", "\"bind\""),
            ("ext4", "X-mount.mkdir", "\"X-mount.mkdir\""),
            ("ext4", "helper=x", "\"helper=x\""),
            ("tmpfs", "mpol=bind:/x", "its value may hold only"),
            ("ext4", "errors=a\nb", "\"errors=a\\nb\""),
            ("ext4", "noatime,,", "\"\""),
            ("xfs", "journal_checksum", "mount -t xfs"),
        ] {
            let e = check_mount(fs, o).expect_err(o);
            assert!(e.contains(want), "{fs} {o}: wanted {want} in {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }
}
