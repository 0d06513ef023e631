//! Plans as a design matrix (issue 35, item 1): `[factors]` and `compare`.
//! Bad factor plans are refused on one line naming file:line; a factor plan
//! runs every combination and compares the levels of the compared factor
//! per (workload, filesystem) table; the seed plans rewritten as factor
//! plans expand to the cells their question needs.

use crate::util::*;
use std::path::Path;

/// A plan file `name` in `dir` holding `text`; its path as a string.
fn plan_file(dir: &Path, name: &str, text: &str) -> String {
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
        // a workload without a type says so, not that the factor fits no workload
        (
            7,
            "[[workload]] needs a type",
            format!("[factors]\nbs = [\"4k\", \"16k\"]\n{FS}[[workload]]\nfiles = 3\n"),
        ),
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
        (
            2,
            "baseline '6.1' is not a kernel of the plan (host)",
            format!("compare = \"kernel\"\nbaseline = \"6.1\"\nkernels = [\"host\"]\n{FS}{IO}"),
        ),
    ];
    let rows: Vec<Refusal> = cases
        .iter()
        .enumerate()
        .map(|(i, (line, want, text))| {
            let p = plan_file(d, &format!("p{i}.toml"), text);
            refusal(&["run", &p, "--output", &out_arg], format!("{p}:{line}: {want}"))
        })
        .collect();
    expect_refusals(&rows, &[&out]);
}

/// The comparison's tables in `text`: the lines of their boxes.
fn tables(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with(['│', '┌', '╞', '└'])).collect()
}

/// A real run of a factor plan on tmpfs: two filesystems, one metadata
/// workload at two levels of a workload factor, two repeats. Every cell's
/// tag carries its level; the comparison has one table per (workload,
/// filesystem) with the levels as columns and each ratio against the
/// baseline level; `fslab compare` on the result file prints the same
/// tables, and its CSV the same rows.
#[test]
fn a_factor_plan_compares_the_levels_per_workload_and_filesystem() {
    if !require_root_with(&[]) {
        return;
    }
    let scratch = scratch_dir();
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "repeat = 2\ncompare = \"shared-dirs\"\nbaseline = \"false\"\ndrop-caches = false\nscratch-dir = \"{}\"\n\n\
         [factors]\nshared-dirs = [false, true]\n\n\
         [[filesystem]]\nname = \"a\"\ntype = \"tmpfs\"\nsize = \"128m\"\n\n\
         [[filesystem]]\nname = \"b\"\ntype = \"tmpfs\"\nsize = \"128m\"\n\n\
         [[workload]]\nname = \"m\"\ntype = \"meta\"\nfiles = \"500\"\n",
        scratch.path().display()
    );
    let p = plan_file(dir.path(), "f.toml", &text);
    let result = dir.path().join("r.json");
    let out = fslab()
        .args([
            "run",
            &p,
            "--output",
            &format!("json:{}", result.display()),
            "--output",
            "text",
        ])
        .output()
        .unwrap();
    let run_text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(leftovers(scratch.path()).is_empty(), "{:?}", leftovers(scratch.path()));

    // every cell's tag: the tables' names and its level
    let j = read_json(&result);
    crate::schema::assert_valid("a factor plan's result", &j);
    assert_eq!(j["lab"]["compare"], "shared-dirs");
    assert_eq!(j["lab"]["baseline"], "false");
    assert_eq!(
        j["lab"]["factors"],
        serde_json::json!([{"name": "shared-dirs", "of": "workload", "levels": ["false", "true"]}])
    );
    assert_eq!(j["lab"]["filesystems"], serde_json::json!(["a", "b"]));
    assert_eq!(j["lab"]["workloads"], serde_json::json!(["m"]));
    let mut seen = Vec::new();
    for c in cells(&j) {
        let t = &c["lab"];
        assert!(c["error"].is_null(), "{c}");
        assert_eq!(t["workload"], "m");
        assert_eq!(t["compare"], "shared-dirs");
        let levels = t["levels"].as_array().unwrap();
        assert_eq!(levels.len(), 1, "{t}");
        assert_eq!(
            (&levels[0]["factor"], &levels[0]["of"]),
            (&"shared-dirs".into(), &"workload".into())
        );
        let level = levels[0]["level"].as_str().unwrap();
        // the level is what ran: --shared-dirs on the "true" cells only
        assert_eq!(
            c["plan"]["shared_dirs"].as_bool().unwrap_or(false),
            level == "true",
            "{c}"
        );
        assert_eq!(
            c["name"],
            format!("{}/m[shared-dirs={level}]", t["filesystem"].as_str().unwrap())
        );
        seen.push(format!("{}/{level}/{}", t["filesystem"].as_str().unwrap(), t["repeat"]));
    }
    seen.sort();
    let want: Vec<String> = ["a", "b"]
        .iter()
        .flat_map(|f| {
            ["false", "true"]
                .iter()
                .flat_map(move |l| (1..=2).map(move |r| format!("{f}/{l}/{r}")))
        })
        .collect();
    assert_eq!(seen, want);

    // the text: a table per (workload, filesystem), the levels as columns
    let run_tables = tables(&run_text);
    let heads: Vec<&str> = run_tables.iter().copied().filter(|l| l.contains(" · ")).collect();
    assert_eq!(heads.len(), 2, "{run_text}");
    for (h, fs) in heads.iter().zip(["a", "b"]) {
        // (a column's `!` says some of its cells were disturbed: this machine is shared)
        let cols: Vec<&str> = h
            .trim_matches(['│', ' '])
            .split("  ")
            .map(|s| s.trim().trim_end_matches(" !"))
            .filter(|s| !s.is_empty())
            .collect();
        assert_eq!(cols, [format!("m · {fs}").as_str(), "false (baseline)", "true"], "{h}");
    }
    assert!(run_text.contains("compared: shared-dirs, baseline false"), "{run_text}");
    // fslab compare on the saved file: the same tables
    let cmp = fslab().arg("compare").arg(&result).output().unwrap();
    assert!(cmp.status.success(), "{}", String::from_utf8_lossy(&cmp.stderr));
    let cmp_text = String::from_utf8_lossy(&cmp.stdout).into_owned();
    assert_eq!(tables(&cmp_text), run_tables, "run:\n{run_text}\ncompare:\n{cmp_text}");

    // ... in ASCII for a mail, the table's parts apart from the `*` of significance
    let plain = fslab()
        .arg("compare")
        .arg(&result)
        .args(["--format", "plain"])
        .output()
        .unwrap();
    let plain = String::from_utf8(plain.stdout).unwrap();
    assert!(
        plain.is_ascii() && plain.contains("m / a") && plain.contains("m / b"),
        "{plain}"
    );
    // ... and fslab report's page the same tables
    let html = dir.path().join("r.html");
    let rep = fslab()
        .arg("report")
        .arg(&result)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    assert!(rep.status.success(), "{}", String::from_utf8_lossy(&rep.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    for h in [">m · a</h3>", ">m · b</h3>", "false (baseline)"] {
        assert!(page.contains(h), "no {h} in the report");
    }
    // its environment: a row per filesystem, not per level
    for fs in ["a", "b"] {
        assert!(
            page.contains(&format!("<tr><td>{fs}</td><td>tmpfs</td>")),
            "no row of {fs}"
        );
    }
    assert!(!page.contains("<tr><td>false</td><td>tmpfs</td>"));

    // the CSV: rows per (table, level), ratios against the baseline level
    let csv = fslab()
        .arg("compare")
        .arg(&result)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    assert!(csv.status.success());
    let csv = String::from_utf8(csv.stdout).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let mut tables_seen: Vec<&str> = rows.iter().map(|r| r[col("workload")]).collect();
    tables_seen.dedup();
    assert_eq!(tables_seen, ["m · a", "m · b"]);
    for table in ["m · a", "m · b"] {
        let of = |level: &str, metric: &str| {
            rows.iter()
                .find(|r| r[col("workload")] == table && r[col("filesystem")] == level && r[col("metric")] == metric)
                .unwrap_or_else(|| panic!("no {table} {level} {metric} in\n{csv}"))
                .clone()
        };
        let (base, other) = (of("false", "seq-create ops/s"), of("true", "seq-create ops/s"));
        assert_eq!((base[col("baseline")], base[col("ratio")]), ("true", ""));
        assert_eq!((base[col("n")], other[col("n")]), ("2", "2"));
        let mean = |r: &Vec<&str>| r[col("mean")].parse::<f64>().unwrap();
        let ratio: f64 = other[col("ratio")].parse().unwrap();
        assert!(
            (ratio - mean(&other) / mean(&base)).abs() < 1e-9,
            "{ratio} {other:?} {base:?}"
        );
        assert!(rows
            .iter()
            .all(|r| r[col("filesystem")] == "false" || r[col("filesystem")] == "true"));
    }
}

/// (factor, level) of an expanded entry.
type Levels = Vec<(String, String)>;

/// An example plan, parsed as `fslab run` reads it.
fn example(name: &str) -> fslab::plan::LabPlan {
    let p = format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&p).unwrap();
    fslab::plan::LabPlan::parse(&p, &text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Done-when 4: the seed-samba and scheduler plans are factor plans whose
/// compared factor is the seed's question, and they expand to its cells:
/// each filesystem with the xattr off and on (the same replay otherwise),
/// each target under each scheduler (the same io otherwise).
#[test]
fn the_seed_plans_expand_to_the_cells_of_their_question() {
    use fslab::plan::lab::Compare;
    let samba = example("seed-samba-xattr.toml");
    assert_eq!(samba.compare, Compare::Factor("xattr".into()));
    assert_eq!(samba.baseline.as_deref(), Some("false"));
    let fs: Vec<&str> = samba.filesystems.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(fs, ["xfs", "xfs-i2048", "ext4"]);
    let wl: Vec<(&str, &str, Levels)> = samba
        .workloads
        .iter()
        .map(|w| (w.name.as_str(), w.base.as_str(), w.levels.clone()))
        .collect();
    let lv = |l: &str| vec![("xattr".to_string(), l.to_string())];
    assert_eq!(
        wl,
        [
            ("nbench[xattr=false]", "nbench", lv("false")),
            ("nbench[xattr=true]", "nbench", lv("true"))
        ]
    );
    let (off, on) = (&samba.workloads[0].args, &samba.workloads[1].args);
    assert!(!off.contains(&"--xattr".to_string()) && on.contains(&"--xattr".to_string()));
    let on_without: Vec<&String> = on.iter().filter(|a| *a != "--xattr").collect();
    assert_eq!(on_without, off.iter().collect::<Vec<_>>(), "only the xattr differs");

    let sched = example("seed-raw-vs-fs-scheduler.toml");
    assert_eq!(sched.compare, Compare::Factor("scheduler".into()));
    assert_eq!(sched.baseline.as_deref(), Some("none"));
    let fs: Vec<(&str, &str, Option<&str>)> = sched
        .filesystems
        .iter()
        .map(|f| (f.name.as_str(), f.base.as_str(), f.queue.scheduler.as_deref()))
        .collect();
    let mut want = Vec::new();
    for (base, name) in [
        ("raw", ["raw[scheduler=none]", "raw[scheduler=mq-deadline]"]),
        ("ext4", ["ext4[scheduler=none]", "ext4[scheduler=mq-deadline]"]),
        ("xfs", ["xfs[scheduler=none]", "xfs[scheduler=mq-deadline]"]),
    ] {
        want.push((name[0], base, Some("none")));
        want.push((name[1], base, Some("mq-deadline")));
    }
    assert_eq!(fs, want);
    assert_eq!(sched.workloads.len(), 1);
    assert!(sched.workloads[0].levels.is_empty());
}

/// Done-when 4, run: the seed-samba plan as shipped, shortened (2 s per
/// cell, 512 MiB images, 2 repeats), prints a table per filesystem with
/// xattr off (the baseline) and on as columns and the ratio of on to off,
/// the figure the seed computed by hand.
#[test]
fn the_seed_samba_plan_prints_the_xattr_ratio_per_filesystem() {
    if !require_root_with(&["mkfs.xfs", "mkfs.ext4", "mount"]) {
        return;
    }
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/seed-samba-xattr.toml")).unwrap();
    let mut plan: toml::Table = text.parse().unwrap();
    plan.insert("repeat".into(), 2.into());
    plan.insert("drop-caches".into(), false.into());
    for f in plan["filesystem"].as_array_mut().unwrap() {
        f.as_table_mut().unwrap().insert("size".into(), "512m".into());
    }
    for w in plan["workload"].as_array_mut().unwrap() {
        w.as_table_mut().unwrap().insert("time".into(), "2s".into());
    }
    let dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let p = plan_file(dir.path(), "samba.toml", &toml::to_string(&plan).unwrap());
    let out = fslab()
        .args(["run", &p, "--quiet", "--output", "text", "--scratch-dir"])
        .arg(scratch.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(leftovers(scratch.path()).is_empty(), "{:?}", leftovers(scratch.path()));
    let t = tables(&text);
    for fs in ["xfs", "xfs-i2048", "ext4"] {
        let at = t
            .iter()
            .position(|l| l.contains(&format!("nbench · {fs} ")))
            .unwrap_or_else(|| panic!("no table of {fs}:\n{text}"));
        assert!(
            t[at].contains("false (baseline)") && t[at].contains(" true"),
            "{}",
            t[at]
        );
        // every metric row: the baseline's figure, then xattr on with its ratio
        let row = t[at + 2..]
            .iter()
            .find(|l| l.contains("MB/s"))
            .unwrap_or_else(|| panic!("no MB/s row under {fs}:\n{text}"));
        assert!(row.contains('×'), "no ratio in {row}");
    }
}

/// A plan's text parsed, or its error.
fn parse(text: &str) -> Result<fslab::plan::LabPlan, String> {
    fslab::plan::LabPlan::parse("p.toml", text).map_err(|e| e.to_string())
}

/// Levels of any TOML shape, qualified keys and several factors: the
/// product of the levels, each entry what its table would be with the
/// level written in it.
#[test]
fn factors_expand_to_every_combination_as_if_written_out() {
    let p = parse(
        "[factors]\nxattr = [[], [\"user.a:44\", \"user.b:256\"]]\nshared_dirs = [false, true]\n\
         filesystem.size = [\"256m\", \"1g\"]\n\
         [[filesystem]]\nname = \"t\"\ntype = \"tmpfs\"\n\
         [[workload]]\nname = \"m\"\ntype = \"meta\"\nfiles = \"1k\"\n",
    )
    .unwrap();
    let fs: Vec<(&str, u64)> = p.filesystems.iter().map(|f| (f.name.as_str(), f.size)).collect();
    assert_eq!(
        fs,
        [
            ("t[filesystem.size=256m]", 256 << 20),
            ("t[filesystem.size=1g]", 1 << 30)
        ]
    );
    let wl: Vec<(&str, &Vec<String>)> = p.workloads.iter().map(|w| (w.name.as_str(), &w.args)).collect();
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // [factors] is read in key order (shared_dirs, then xattr)
    assert_eq!(
        wl,
        [
            ("m[shared_dirs=false,xattr=[]]", &args(&["--files", "1k"])),
            (
                "m[shared_dirs=false,xattr=[\"user.a:44\", \"user.b:256\"]]",
                &args(&["--files", "1k", "--xattr", "user.a:44", "--xattr", "user.b:256"])
            ),
            (
                "m[shared_dirs=true,xattr=[]]",
                &args(&["--files", "1k", "--shared-dirs"])
            ),
            (
                "m[shared_dirs=true,xattr=[\"user.a:44\", \"user.b:256\"]]",
                &args(&[
                    "--files",
                    "1k",
                    "--shared-dirs",
                    "--xattr",
                    "user.a:44",
                    "--xattr",
                    "user.b:256"
                ])
            ),
        ]
    );
    assert!(p.workloads.iter().all(|w| w.base == "m" && w.levels.len() == 2));
    // the compared axis stays the filesystem, its baseline the first table
    assert_eq!(p.compare, fslab::plan::lab::Compare::Filesystem);
    assert_eq!(p.baseline_level().as_deref(), Some("t"));
    assert_eq!(p.filesystem_tables(), ["t"]);
}

/// Where a cell goes: its column and table for each compared axis. Without
/// factors and compare, what it always was.
#[test]
fn a_cells_column_and_table_follow_the_compared_axis() {
    use fslab::model::{FactorOf, KernelTag, LabTag, Level};
    let level = |f: &str, l: &str, of| Level {
        factor: f.into(),
        level: l.into(),
        of,
    };
    let mut t = LabTag {
        filesystem: "ext4".into(),
        workload: "randrw".into(),
        ..Default::default()
    };
    assert_eq!(
        (t.column(), t.table(), t.environment()),
        ("ext4".into(), "randrw".into(), "ext4".into())
    );
    t.levels = vec![
        level("bs", "4k", FactorOf::Workload),
        level("scheduler", "none", FactorOf::Filesystem),
    ];
    // the filesystem compared: the levels name the table
    assert_eq!(t.column(), "ext4");
    assert_eq!(t.table(), "randrw · bs=4k · scheduler=none");
    assert_eq!(t.environment(), "ext4[scheduler=none]");
    // a filesystem factor compared
    t.compare = Some("scheduler".into());
    assert_eq!((t.column(), t.table()), ("none".into(), "randrw · ext4 · bs=4k".into()));
    assert!(!t.compares_workload_key());
    // a workload factor compared, under a kernel: the kernel names the table too
    t.compare = Some("bs".into());
    t.kernel = Some(KernelTag {
        name: "6.1".into(),
        ..Default::default()
    });
    assert_eq!(
        (t.column(), t.table()),
        ("4k".into(), "randrw · ext4 · scheduler=none · 6.1".into())
    );
    assert!(t.compares_workload_key());
    // the kernels compared
    t.compare = Some("kernel".into());
    assert_eq!(
        (t.column(), t.table()),
        ("6.1".into(), "randrw · ext4 · bs=4k · scheduler=none".into())
    );
}

/// Kernels compared, a workload factor beside them: a guest finds its
/// expanded filesystem and workload by name (`--guest-filesystem`,
/// `--guest-workload` carry the levels), every cell's tag its level, and
/// the comparison has a column per kernel in a table per level.
#[test]
fn kernels_compared_per_level_of_a_factor_run_in_their_guests() {
    let Some(k) = debian_kernel("6.12") else { return };
    let dir = tempfile::tempdir().unwrap();
    let scratch = scratch_dir();
    let text = format!(
        "repeat = 1\ncompare = \"kernel\"\nbaseline = \"host\"\n\
         kernels = [{{ name = \"6.12\", image = \"{}\", modules = \"{}\" }}, \"host\"]\n\
         [vm]\ncpus = 1\nmemory = \"1g\"\n\
         [factors]\nbs = [\"4k\", \"16k\"]\n\
         [[filesystem]]\nname = \"ext4\"\ntype = \"ext4\"\nsize = \"256m\"\n\
         [[workload]]\nname = \"rr\"\ntype = \"io\"\nrw = \"randread\"\nsize = \"8m\"\ndirect = true\nruntime = \"1s\"\n",
        k.join("vmlinuz").display(),
        k.join("modules").display()
    );
    let p = plan_file(dir.path(), "k.toml", &text);
    let json = dir.path().join("r.json");
    let out = fslab()
        .args(["run", &p, "--quiet", "--scratch-dir"])
        .arg(scratch.path())
        .args(["--output", &format!("json:{}", json.display()), "--output", "text"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = read_json(&json);
    let mut seen: Vec<(String, String, String)> = cells(&j)
        .iter()
        .map(|c| {
            assert!(c["error"].is_null(), "{}: {}", c["name"], c["error"]);
            let t = &c["lab"];
            assert_eq!(
                (&t["compare"], &t["levels"][0]["factor"]),
                (&"kernel".into(), &"bs".into())
            );
            let level = t["levels"][0]["level"].as_str().unwrap().to_string();
            // what ran is the level
            let bs = if level == "4k" { 4096 } else { 16384 };
            assert_eq!(c["plan"]["bs"], bs, "{}", c["name"]);
            (
                t["kernel"]["name"].as_str().unwrap().to_string(),
                level,
                c["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    seen.sort();
    let want = [
        ("6.12", "16k", "6.12/rr[bs=16k]"),
        ("6.12", "4k", "6.12/rr[bs=4k]"),
        ("host", "16k", "host/rr[bs=16k]"),
        ("host", "4k", "host/rr[bs=4k]"),
    ]
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()));
    assert_eq!(seen, want);
    for level in ["4k", "16k"] {
        let head = tables(&stdout)
            .into_iter()
            .find(|l| l.contains(&format!("rr · ext4 · bs={level} ")))
            .unwrap_or_else(|| panic!("no table of bs={level}:\n{stdout}"));
        assert!(head.contains("host (baseline)") && head.contains("6.12"), "{head}");
    }
    assert!(
        scratch_leftovers(scratch.path()).is_empty(),
        "{:?}",
        scratch_leftovers(scratch.path())
    );
}

/// Filesystem keys as factors, written with dashes as the brief's plans
/// write them: each entry carries its levels in its queue settings.
#[test]
fn filesystem_keys_with_dashes_are_factors_too() {
    let p = parse(
        "compare = \"read-ahead-kb\"\nbaseline = \"128\"\n[factors]\nread-ahead-kb = [128, 256]\n\
         loop-direct-io = [true, false]\n[[filesystem]]\ntype = \"ext4\"\n[[workload]]\ntype = \"meta\"\n",
    )
    .unwrap();
    let fs: Vec<(&str, Option<u64>, Option<bool>)> = p
        .filesystems
        .iter()
        .map(|f| (f.name.as_str(), f.queue.read_ahead_kb, f.loop_direct_io))
        .collect();
    assert_eq!(
        fs,
        [
            ("ext4[loop-direct-io=true,read-ahead-kb=128]", Some(128), Some(true)),
            ("ext4[loop-direct-io=true,read-ahead-kb=256]", Some(256), Some(true)),
            ("ext4[loop-direct-io=false,read-ahead-kb=128]", Some(128), Some(false)),
            ("ext4[loop-direct-io=false,read-ahead-kb=256]", Some(256), Some(false)),
        ]
    );
    assert_eq!(p.compare, fslab::plan::lab::Compare::Factor("read-ahead-kb".into()));
}
