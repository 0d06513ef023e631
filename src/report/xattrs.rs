//! Where a metadata cell's xattrs live (`cell.xattrs`): one line of the
//! text report per meta cell, and per lab cell (repeats merged) under the
//! lab's comparison.

use crate::model::system::XattrPlacement;
use crate::model::{Cell, Report};

/// "xattrs: 64 of 64 sampled files keep them in an external block (FIEMAP)",
/// or the mix, or why FIEMAP could not tell; empty without a placement.
pub fn text(c: &Cell) -> String {
    match &c.xattrs {
        Some(p) => format!("xattrs: {}\n", describe(p)),
        None => String::new(),
    }
}

/// A lab run: one line per cell name with a placement ("xattrs, ext4/meta:
/// ..."), the repeats' samples added up (the first error kept).
pub fn lab_text(r: &Report) -> String {
    lines(
        r.cells
            .iter()
            .filter_map(|c| Some((c.name.as_str(), c.xattrs.as_ref()?))),
    )
}

fn lines<'a>(cells: impl Iterator<Item = (&'a str, &'a XattrPlacement)>) -> String {
    let mut merged: Vec<(&str, XattrPlacement)> = Vec::new();
    for (name, p) in cells {
        let i = match merged.iter().position(|(n, _)| *n == name) {
            Some(i) => i,
            None => {
                merged.push((name, XattrPlacement::default()));
                merged.len() - 1
            }
        };
        let m = &mut merged[i].1;
        m.sampled += p.sampled;
        m.in_inode += p.in_inode;
        m.external += p.external;
        m.none += p.none;
        if m.error.is_none() {
            m.error.clone_from(&p.error);
        }
    }
    merged
        .iter()
        .map(|(name, p)| format!("xattrs, {name}: {}\n", describe(p)))
        .collect()
}

fn describe(p: &XattrPlacement) -> String {
    let places = [
        (p.in_inode, "in the inode"),
        (p.external, "in an external block"),
        (p.none, "with no xattr extent"),
    ];
    let found: Vec<_> = places.iter().filter(|(n, _)| *n > 0).collect();
    let mut s = match found.as_slice() {
        [] if p.error.is_some() => "where they live is unknown".to_string(),
        [] => "no file sampled".to_string(),
        [(n, place)] => format!("{n} of {} sampled files keep them {place} (FIEMAP)", p.sampled),
        _ => {
            let parts: Vec<String> = found.iter().map(|(n, place)| format!("{n} {place}")).collect();
            format!("of {} sampled files, {} (FIEMAP)", p.sampled, parts.join(", "))
        }
    };
    if let Some(e) = &p.error {
        s.push_str(&format!(": {e}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placement(in_inode: u64, external: u64, none: u64, error: Option<&str>) -> XattrPlacement {
        XattrPlacement {
            sampled: in_inode + external + none,
            in_inode,
            external,
            none,
            error: error.map(str::to_string),
        }
    }

    #[test]
    fn lab_lines_merge_repeats() {
        let (ext, inode) = (placement(0, 64, 0, None), placement(64, 0, 0, None));
        let cells = [("ext4/x", &ext), ("xfs/x", &inode), ("ext4/x", &ext)];
        assert_eq!(
            lines(cells.into_iter()),
            "xattrs, ext4/x: 128 of 128 sampled files keep them in an external block (FIEMAP)\n\
             xattrs, xfs/x: 64 of 64 sampled files keep them in the inode (FIEMAP)\n"
        );
    }

    #[test]
    fn one_line_for_each_case() {
        assert_eq!(
            describe(&placement(0, 64, 0, None)),
            "64 of 64 sampled files keep them in an external block (FIEMAP)"
        );
        assert_eq!(
            describe(&placement(64, 0, 0, None)),
            "64 of 64 sampled files keep them in the inode (FIEMAP)"
        );
        assert_eq!(
            describe(&placement(40, 24, 0, None)),
            "of 64 sampled files, 40 in the inode, 24 in an external block (FIEMAP)"
        );
        assert_eq!(
            describe(&placement(
                0,
                0,
                0,
                Some("FIEMAP (FIEMAP_FLAG_XATTR) of x on tmpfs: no")
            )),
            "where they live is unknown: FIEMAP (FIEMAP_FLAG_XATTR) of x on tmpfs: no"
        );
    }
}
