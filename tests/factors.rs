//! Plans as a design matrix (issue 35, item 1): `[factors]` and `compare`.
//! Bad factor plans are refused on one line naming file:line; a factor plan
//! runs every combination and compares the levels of the compared factor
//! per (workload, filesystem) table; the seed plans rewritten as factor
//! plans expand to the cells their question needs.

use crate::util::*;
use std::path::Path;

/// A plan file `name` in `dir` holding `text`; its path as a string.
fn plan(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

const FS: &str = "[[filesystem]]\nname = \"a\"\ntype = \"tmpfs\"\nsize = \"256m\"\n";
const IO: &str = "[[workload]]\nname = \"rr\"\ntype = \"io\"\nsize = \"4m\"\nruntime = \"1s\"\n";

#[test]
fn bad_factor_plans_are_refused_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out.json");
    let out_arg = format!("json:{}", out.display());
    // (line, the start of the message after "file:line: ", plan text)
    let cases: &[(usize, &str, String)] = &[
        // a key valid for neither table
        (
            2,
            "factor 'colour' is neither a key of the plan's workloads nor a [[filesystem]] key",
            format!("[factors]\ncolour = [1, 2]\n{FS}{IO}"),
        ),
        (
            2,
            "factor 'bs' needs at least 2 levels, not 1",
            format!("[factors]\nbs = [\"4k\"]\n{FS}{IO}"),
        ),
        (
            2,
            "factor 'bs' must be a list of its levels",
            format!("[factors]\nbs = \"4k\"\n{FS}{IO}"),
        ),
        (
            2,
            "factor 'bs': level '4k' is given twice",
            format!("[factors]\nbs = [\"4k\", \"4k\"]\n{FS}{IO}"),
        ),
        // a level is checked by the workload's own flag parser, at its line
        (
            3,
            "bs: '16q' is not a size",
            format!("[factors]\nbs = [\"4k\",\n  \"16q\"]\n{FS}{IO}"),
        ),
        // ... and by the filesystem reader
        (
            2,
            "scheduler: unknown 'fast'",
            format!("[factors]\nscheduler = [\"none\", \"fast\"]\n[[filesystem]]\ntype = \"ext4\"\n{IO}"),
        ),
        // mkfs levels pass the same allow-list
        (
            2,
            "mkfs option \"-J\" \"device=/dev/sda\": \"device\" is not a suboption",
            format!("[factors]\nmkfs = [\"-b 4096\", \"-J device=/dev/sda\"]\n[[filesystem]]\ntype = \"ext4\"\n{IO}"),
        ),
        // a filesystem factor applies to every filesystem
        (
            2,
            "block-queue settings need a block device",
            format!("[factors]\nscheduler = [\"none\", \"mq-deadline\"]\n{FS}{IO}"),
        ),
        // a key both a factor and written in the table it would expand: the table's line
        (
            12,
            "bs is also a factor ([factors], line 2)",
            format!("[factors]\nbs = [\"4k\", \"16k\"]\n{FS}{IO}bs = \"8k\"\n"),
        ),
        (
            7,
            "mount is also a factor ([factors], line 2)",
            format!("[factors]\nmount = [\"noatime\", \"relatime\"]\n{FS}mount = \"noatime\"\n{IO}"),
        ),
        // a workload factor applies to every workload
        (
            2,
            "factor 'bs': the meta workload 'm' has no key 'bs'",
            format!("[factors]\nbs = [\"4k\", \"16k\"]\n{FS}{IO}[[workload]]\nname = \"m\"\ntype = \"meta\"\n"),
        ),
        // a key of both tables needs its qualifier
        (
            2,
            "factor 'size' is a key of both [[filesystem]] and the workloads: write filesystem.size or workload.size",
            format!("[factors]\nsize = [\"1m\", \"2m\"]\n{FS}{IO}"),
        ),
        (
            3,
            "factor 'filesystem.bs': 'bs' is not a [[filesystem]] key",
            format!("[factors]\n[factors.filesystem]\nbs = [\"4k\", \"16k\"]\n{FS}{IO}"),
        ),
        (
            3,
            "two factors set 'bs'",
            format!("[factors]\nbs = [\"4k\", \"16k\"]\nworkload.bs = [\"4k\", \"8k\"]\n{FS}{IO}"),
        ),
        (1, "factors must be a table", format!("factors = 3\n{FS}{IO}")),
        // compare and baseline
        (
            1,
            "compare 'colour' names no factor of the plan (filesystem, kernel, bs)",
            format!("compare = \"colour\"\n[factors]\nbs = [\"4k\", \"16k\"]\n{FS}{IO}"),
        ),
        (
            1,
            "compare = \"kernel\" needs the plan's kernels",
            format!("compare = \"kernel\"\n{FS}{IO}"),
        ),
        (
            2,
            "baseline '8k' is not a level of factor 'bs' (4k, 16k)",
            format!("compare = \"bs\"\nbaseline = \"8k\"\n[factors]\nbs = [\"4k\", \"16k\"]\n{FS}{IO}"),
        ),
        (
            1,
            "baseline 'b' is not a filesystem of the plan (a)",
            format!("baseline = \"b\"\n[factors]\nbs = [\"4k\", \"16k\"]\n{FS}{IO}"),
        ),
    ];
    let rows: Vec<Refusal> = cases
        .iter()
        .enumerate()
        .map(|(i, (line, want, text))| {
            let p = plan(d, &format!("p{i}.toml"), text);
            refusal(&["run", &p, "--output", &out_arg], format!("{p}:{line}: {want}"))
        })
        .collect();
    expect_refusals(&rows, &[&out]);
}
