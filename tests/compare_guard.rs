//! Issue 32 item 3: `fslab compare` puts side by side only cells that ran
//! the same workload (the typed plan, minus where it ran), and an emulated
//! (TCG) column is never the baseline of a ratio unless named, its ratios
//! marked. The workload check runs on real `fslab io` results; the kernel
//! A/B table on a report built from the committed lab fixture with a TCG
//! column added (no VM is booted).

use crate::util::{expect_refusals, fslab, refusal};
use fslab::model::{parse_report, KernelTag, Report, VmInfo};
use fslab::report::compare;
use std::path::{Path, PathBuf};

/// A short `fslab io` run in `dir` (its own target directory `name`),
/// saved as `dir/NAME.json`.
fn io_result(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let target = dir.join(format!("t-{name}"));
    std::fs::create_dir(&target).unwrap();
    let out = dir.join(format!("{name}.json"));
    fslab()
        .args(["io", "--size", "4m", "--runtime", "200ms", "--quiet", "--target"])
        .arg(&target)
        .args(args)
        .arg("--output")
        .arg(format!("json:{}", out.display()))
        .assert()
        .success();
    out
}

/// The comparison's boxed text, wide enough for its lines and tables whole.
fn wide(c: &compare::Comparison) -> String {
    let style = fslab::plan::TextStyle {
        width: 400,
        ..Default::default()
    };
    compare::render_as(c, style)
}

fn compare_out(dir: &Path, args: &[&str]) -> (i32, String, String) {
    // wide: a note of what differs is one line
    let out = fslab()
        .current_dir(dir)
        .args(["compare", "--width", "400"])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// 4k randread beside 64k randread, and randread beside randwrite, are
/// refused on one line naming the key and both values (exit 2, nothing on
/// stdout); the same workload on another target directory and with another
/// seed is compared; `--force` compares different ones and says what differs.
#[test]
fn compare_refuses_different_workloads_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rr = ["--rw", "randread"];
    io_result(d, "r4k", &[&rr[..], &["--bs", "4k"]].concat());
    io_result(d, "r4k-again", &[&rr[..], &["--bs", "4k", "--seed", "7"]].concat());
    io_result(d, "r64k", &[&rr[..], &["--bs", "64k"]].concat());
    io_result(d, "w4k", &["--rw", "randwrite", "--bs", "4k"]);
    let p = |n: &str| d.join(format!("{n}.json")).display().to_string();
    expect_refusals(
        &[
            refusal(
                &["compare", &p("r4k"), &p("r64k")],
                format!(
                    "{} and {} ran different workloads (bs: 4 KiB vs 64 KiB); --force compares them anyway",
                    p("r4k"),
                    p("r64k")
                ),
            ),
            refusal(
                &["compare", &p("r4k"), &p("w4k")],
                "ran different workloads (rw: randread vs randwrite)",
            ),
            // a third file that differs is named, whatever comes first
            refusal(
                &["compare", &p("r4k"), &p("r4k-again"), &p("r64k")],
                format!("{} and {} ran different workloads (bs:", p("r4k"), p("r64k")),
            ),
            refusal(
                &["compare", &p("r64k"), &p("w4k"), "--format", "csv"],
                "(bs: 64 KiB vs 4 KiB, rw: randread vs randwrite)",
            ),
        ],
        &[],
    );

    // the same workload, on another directory with another seed: compared
    let (code, out, err) = compare_out(d, &["r4k.json", "r4k-again.json"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("r4k (baseline)") && out.contains("×"), "{out}");
    assert!(!out.contains("not the same workload"), "{out}");

    // forced: the table, and a line saying what differs
    let (code, out, err) = compare_out(d, &["r4k.json", "r64k.json", "w4k.json", "--force"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("read IOPS") && out.contains("×"), "{out}");
    let note = out
        .lines()
        .find(|l| l.contains("≠ not the same workload"))
        .unwrap_or_else(|| panic!("no note of what differs:\n{out}"));
    assert!(
        note.contains("bs 4 KiB (r4k) vs 64 KiB (r64k)") && note.contains("rw randread (r4k) vs randwrite (w4k)"),
        "{note}"
    );
    assert!(!note.contains("bs_max"), "bs_max follows bs: {note}");
    // plain keeps it, in ASCII
    let (code, out, _) = compare_out(d, &["r4k.json", "r64k.json", "--force", "--format", "plain"]);
    assert_eq!(code, 0);
    assert!(out.contains("!= not the same workload") && out.is_ascii(), "{out}");
    // the HTML report has no --force: its table says it
    fslab()
        .current_dir(d)
        .args(["report", "r4k.json", "r64k.json", "-o", "r.html"])
        .assert()
        .success();
    let page = std::fs::read_to_string(d.join("r.html")).unwrap();
    assert!(
        page.contains("≠ not the same workload, the figures measure different work: bs 4 KiB (r4k) vs 64 KiB (r64k)"),
        "the page says what differs"
    );
}

fn fixture() -> Report {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lab.json");
    parse_report(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// The committed lab fixture (tmpfs and ext4, two repeats, real runs) as a
/// kernel A/B result: every cell under kernel "6.1" in a TCG VM (first, as
/// in examples/seed-kernel-ab.toml) and under the host's kernel.
fn kernel_ab() -> Report {
    let mut r = fixture();
    let lab = r.lab.as_mut().unwrap();
    lab.kernels = vec!["6.1".into(), "host".into()];
    lab.baseline = Some("tmpfs".into());
    let mut cells = Vec::new();
    for c in &r.cells {
        for k in ["6.1", "host"] {
            let mut c = c.clone();
            let tag = c.lab.as_mut().unwrap();
            tag.kernel = Some(KernelTag {
                name: k.into(),
                release: if k == "host" {
                    "6.8.0".into()
                } else {
                    "6.1.0-9-amd64".into()
                },
                version: "#1 SMP".into(),
                vm: (k == "6.1").then(|| VmInfo {
                    image: "/var/cache/fslab/kernels/6.1/vmlinuz".into(),
                    accel: "tcg".into(),
                    accel_reason: "the plan asks for tcg".into(),
                    emulated: true,
                    cpus: 2,
                    memory_bytes: 2 << 30,
                    ..VmInfo::default()
                }),
            });
            if k == "6.1" {
                // emulated: ten times slower, as TCG is
                for d in &mut c.directions {
                    d.iops /= 10.0;
                    d.mb_s /= 10.0;
                }
            }
            cells.push(c);
        }
    }
    r.cells = cells;
    r
}

/// The kernel A/B table: the plan's baseline (tmpfs under the first
/// kernel) is the TCG column, so the host kernel's tmpfs column is the
/// baseline instead; no ratio has a TCG column as its denominator, and
/// every ratio of a TCG column is marked (and never called significant).
#[test]
fn kernel_ab_table_never_takes_the_tcg_column_as_baseline() {
    let r = kernel_ab();
    let c = compare::build(&[(String::new(), &r)], None);
    assert_eq!(
        c.filesystems,
        ["tmpfs@6.1", "tmpfs@host", "ext4@6.1", "ext4@host"],
        "columns"
    );
    assert_eq!(c.baseline, "tmpfs@host");
    assert_eq!(c.baseline_moved_from.as_deref(), Some("tmpfs@6.1"));
    let tcg = |i: usize| c.filesystems[i].ends_with("@6.1");
    let mut marked = 0;
    for w in &c.workloads {
        assert!(w.differs.is_empty(), "{}: {:?}", w.name, w.differs);
        for row in &w.rows {
            for (i, col) in row.cols.iter().enumerate() {
                let col = col.as_ref().unwrap();
                if c.filesystems[i] == c.baseline {
                    assert!(col.ratio.is_none());
                    continue;
                }
                assert!(col.ratio.is_some(), "{} {}", row.metric, c.filesystems[i]);
                assert_eq!(col.marked, tcg(i), "{} {}", row.metric, c.filesystems[i]);
                if tcg(i) {
                    assert!(!col.significant());
                    marked += 1;
                }
            }
        }
    }
    assert!(marked >= 20, "{marked}");
    let text = wide(&c);
    assert!(text.contains("tmpfs@host (baseline)"), "{text}");
    assert!(text.contains("tmpfs@6.1 †") && text.contains("ext4@6.1 †"), "{text}");
    assert!(text.contains("×: ratio to tmpfs@host"), "{text}");
    assert!(
        text.contains("† tmpfs@6.1, ext4@6.1: timings emulated (TCG), not comparable"),
        "{text}"
    );
    assert!(text.contains("baseline tmpfs@host instead of tmpfs@6.1"), "{text}");
    // each TCG figure's ratio carries the mark, no other does
    for l in text.lines().filter(|l| l.contains('×') && l.starts_with('│')) {
        let cells: Vec<&str> = l.split("  ").filter(|s| s.contains('×')).collect();
        assert_eq!(cells.len(), 3, "three ratios per row: {l}");
    }
    assert_eq!(
        text.matches("×†").count(),
        marked,
        "every marked ratio, and only those, shows †:\n{text}"
    );
}

/// The same result through `fslab compare`: the TCG column is the baseline
/// only when named (then every ratio is marked), and the HTML report marks
/// the same way. A result with only TCG columns has no ratio at all.
#[test]
fn compare_takes_a_tcg_baseline_only_when_named() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("ab.json");
    std::fs::write(&f, serde_json::to_string(&kernel_ab()).unwrap()).unwrap();
    let (code, out, err) = compare_out(dir.path(), &["ab.json"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("tmpfs@host (baseline)") && !out.contains("ratio to tmpfs@6.1"),
        "{out}"
    );

    let (code, out, err) = compare_out(dir.path(), &["ab.json", "--baseline", "tmpfs@6.1"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("tmpfs@6.1 (baseline) †"), "{out}");
    let ratios = out.matches('×').count();
    // every ratio now involves the TCG baseline: each is marked
    assert_eq!(
        out.matches("×†").count() + out.matches("×: ratio").count(),
        ratios,
        "{out}"
    );
    assert!(!out.contains("×*"), "{out}");

    // CSV: the flagged column says which ratios are marked
    let (code, out, err) = compare_out(dir.path(), &["ab.json", "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    let mut rows = 0;
    for l in out.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f.len(), 17, "{l}");
        let want = match f[4] {
            "tmpfs@host" => "",
            c if c.ends_with("@6.1") => "true",
            _ => "false",
        };
        assert_eq!(f[12], want, "{l}");
        if want == "true" {
            assert_eq!(f[11], "false", "never significant: {l}");
        }
        rows += 1;
    }
    assert!(rows >= 40, "{out}");

    let html = dir.path().join("ab.html");
    fslab()
        .args(["report", "ab.json", "-o", "ab.html"])
        .current_dir(dir.path())
        .assert()
        .success();
    let page = std::fs::read_to_string(html).unwrap();
    assert!(page.contains("Baseline <b>tmpfs@host</b>"), "the page's baseline");
    assert!(page.contains("×†</td>"), "marked ratios in the page");
    assert!(
        page.matches("×†").count() > page.matches("×†</td>").count(),
        "and under the charts' bars"
    );

    // only TCG columns: no baseline, no ratio, and a line saying why
    let mut only = kernel_ab();
    only.cells
        .retain(|c| c.lab.as_ref().unwrap().kernel.as_ref().unwrap().name == "6.1");
    only.lab.as_mut().unwrap().kernels = vec!["6.1".into()];
    let c = compare::build(&[(String::new(), &only)], None);
    assert_eq!(c.baseline, "");
    assert!(c
        .workloads
        .iter()
        .flat_map(|w| &w.rows)
        .flat_map(|r| r.cols.iter().flatten())
        .all(|col| col.ratio.is_none()));
    let text = wide(&c);
    assert!(text.contains("no ratios: every column is flagged"), "{text}");
    assert!(!text.contains('×'), "{text}");
}

/// A lab's raw-device column ran the workload as fslab adapts it for the
/// device (one shared span as large as the filesystems' files together,
/// written first): that is no different workload. A filesystem column
/// whose size differs is.
#[test]
fn a_raw_device_column_is_the_same_workload_a_bigger_file_is_not() {
    let mut r = fixture();
    let raw: Vec<_> = r
        .cells
        .iter()
        .filter(|c| c.lab.as_ref().unwrap().filesystem == "ext4" && c.lab.as_ref().unwrap().workload == "randread")
        .cloned()
        .map(|mut c| {
            let t = c.lab.as_mut().unwrap();
            t.filesystem = "raw".into();
            t.fs_type = "raw".into();
            let fslab::model::CellPlan::Io(p) = &mut c.plan else {
                panic!("randread is io")
            };
            p.shape.size = p.shape.size.map(|s| s * 4);
            p.jobs = 4;
            p.shape.file_mode = fslab::plan::FileMode::SharedFile;
            p.consent.precondition = true;
            p.consent.allow_device = true;
            p.consent.force_overwrite = true;
            c
        })
        .collect();
    assert_eq!(raw.len(), 2);
    let mut bigger = raw.clone();
    r.cells.extend(raw);
    let c = compare::build(&[(String::new(), &r)], None);
    let w = c.workloads.iter().find(|w| w.name == "randread").unwrap();
    // jobs is no adaptation: it differs
    assert_eq!(
        w.differs.iter().map(|d| d.key.as_str()).collect::<Vec<_>>(),
        ["jobs"],
        "{:?}",
        w.differs
    );
    for c in r.cells.iter_mut().filter(|c| c.lab.as_ref().unwrap().fs_type == "raw") {
        if let fslab::model::CellPlan::Io(p) = &mut c.plan {
            p.jobs = 1;
        }
    }
    let c = compare::build(&[(String::new(), &r)], None);
    assert!(c.workloads.iter().all(|w| w.differs.is_empty()), "{:?}", c.workloads);

    // the same adaptation on a filesystem column is a different workload
    for c in &mut bigger {
        let t = c.lab.as_mut().unwrap();
        t.filesystem = "xfs".into();
        t.fs_type = "xfs".into();
    }
    r.cells.extend(bigger);
    let c = compare::build(&[(String::new(), &r)], None);
    let w = c.workloads.iter().find(|w| w.name == "randread").unwrap();
    let keys: Vec<_> = w.differs.iter().map(|d| d.key.as_str()).collect();
    assert_eq!(keys, ["file_mode", "jobs", "precondition", "size"], "{:?}", w.differs);
    let size = w.differs.iter().find(|d| d.key == "size").unwrap();
    assert_eq!((size.a.value.as_str(), size.b.value.as_str()), ("8 MiB", "32 MiB"));
    assert_eq!((size.a.column.as_str(), size.b.column.as_str()), ("tmpfs", "xfs"));

    // so with the raw cells first: they match any size, the next cell is
    // what the others must match
    let mut raw_first = r.clone();
    raw_first
        .cells
        .sort_by_key(|c| c.lab.as_ref().unwrap().fs_type != "raw");
    assert_eq!(raw_first.cells[0].lab.as_ref().unwrap().fs_type, "raw");
    let c = compare::build(&[(String::new(), &raw_first)], None);
    let w = c.workloads.iter().find(|w| w.name == "randread").unwrap();
    let size = w.differs.iter().find(|d| d.key == "size").expect("xfs's size differs");
    assert_eq!((size.a.value.as_str(), size.b.value.as_str()), ("8 MiB", "32 MiB"));
    assert_eq!(size.b.column, "xfs");

    // compare names the columns of the one file, and the workload
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("lab.json");
    std::fs::write(&f, serde_json::to_string(&r).unwrap()).unwrap();
    let f = f.display().to_string();
    expect_refusals(
        &[refusal(
            &["compare", &f],
            format!(
                "tmpfs and xfs in {f} ran different workloads in 'randread' (file_mode: file-per-job vs shared-file, \
                 jobs: 1 vs 4, precondition: false vs true, size: 8 MiB vs 32 MiB); --force compares them anyway"
            ),
        )],
        &[],
    );
}

/// A real lab run of a raw loop device beside ext4 (io, two jobs of a file
/// each on ext4; one shared span on the device, written first): its saved
/// result compares without refusal and its tables say nothing differs.
#[test]
fn a_real_raw_and_ext4_lab_compares_as_one_workload() {
    if !crate::util::require_root_with(&["mkfs.ext4", "mount", "losetup"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scratch = crate::util::scratch_dir();
    let plan = dir.path().join("p.toml");
    std::fs::write(
        &plan,
        "repeat = 1\n\
         [[filesystem]]\nname = \"raw\"\ntype = \"raw\"\nsize = \"64m\"\n\
         [[filesystem]]\nname = \"ext4\"\ntype = \"ext4\"\nsize = \"64m\"\n\
         [[workload]]\nname = \"randread\"\ntype = \"io\"\nrw = \"randread\"\nbs = \"4k\"\n\
         jobs = 2\nsize = \"4m\"\ndirect = true\nruntime = \"300ms\"\n",
    )
    .unwrap();
    let json = dir.path().join("r.json");
    let out = fslab()
        .args([
            "run",
            plan.to_str().unwrap(),
            "--scratch-dir",
            scratch.path().to_str().unwrap(),
        ])
        .args(["--output", &format!("json:{}", json.display())])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        text.contains("raw (baseline)") && !text.contains("not the same workload"),
        "{text}"
    );
    let (code, out, err) = compare_out(dir.path(), &["r.json"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("read IOPS") && !out.contains("not the same workload"),
        "{out}"
    );
    assert!(crate::util::scratch_leftovers(scratch.path()).is_empty());
}
