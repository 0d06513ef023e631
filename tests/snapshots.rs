//! Every reporter is a pure function of the Report: rendering the committed
//! result files (tests/fixtures, schema 1, made by tests/fixtures/make.sh
//! from real runs) must give the committed snapshots byte for byte. A change
//! to a format shows up here as a diff to review (`cargo insta review`).
//! The fixtures stay at schema 1 on purpose: they are what `fslab compare`
//! and `fslab report` must keep reading.

use fslab::model::{parse_report, CellKind, Report};
use fslab::report::{bonnie_csv, csv, fio_json, html, json, text, timeline_csv, Reporter};
use std::path::Path;

fn fixture_text(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.json"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn fixture(name: &str) -> Report {
    parse_report(&fixture_text(name)).unwrap_or_else(|e| panic!("{name}.json: {e}"))
}

fn render(r: &Report, f: &dyn Reporter) -> String {
    String::from_utf8(f.render(r)).expect("reporters write UTF-8")
}

/// Snapshots of `fixture` in every format that applies to it. The JSON
/// reporter's output must read back as the same report (schema 2 loses
/// nothing), and hold every field of the schema-1 fixture unchanged but the
/// version, each cell's new `kind` and the plan fields schema 1 lacked.
fn snap(name: &str, extra: &[(&str, &dyn Reporter)]) {
    let r = fixture(name);
    let written = render(&r, &json::Json);
    let again = parse_report(&written).unwrap_or_else(|e| panic!("{name}: schema 2 does not read back: {e}"));
    assert_eq!(
        render(&again, &json::Json),
        written,
        "{name}: a schema-2 round trip changes it"
    );
    let mut v2: serde_json::Value = serde_json::from_str(&written).unwrap();
    let mut v1: serde_json::Value = serde_json::from_str(&fixture_text(name)).unwrap();
    assert_eq!(v2["schema_version"], 2);
    v1["schema_version"] = 2.into();
    for (c2, c1) in v2["cells"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .zip(v1["cells"].as_array_mut().unwrap())
    {
        assert!(c2["kind"].is_string(), "{name}: a cell without its kind");
        c2.as_object_mut().unwrap().remove("kind");
        // every field the fixture's plan has is kept as it was
        let (p2, p1) = (c2["plan"].as_object().unwrap(), c1["plan"].as_object().unwrap());
        for (k, v) in p1 {
            assert_eq!(p2.get(k), Some(v), "{name}: plan field {k}");
        }
        c2["plan"] = c1["plan"].clone();
    }
    assert_eq!(v2, v1, "{name}.json does not survive a read and write");
    let common: [(&str, &dyn Reporter); 3] = [("text", &text::Text), ("csv", &csv::Csv), ("html", &html::Html)];
    for (fmt, rep) in common.iter().chain(extra) {
        insta::assert_snapshot!(format!("{name}.{fmt}"), render(&r, *rep));
    }
}

#[test]
fn snapshot_io() {
    snap("io", &[("fio-json", &fio_json::FioJson)]);
}

#[test]
fn snapshot_meta() {
    snap("meta", &[("bonnie-csv", &bonnie_csv::BonnieCsv)]);
}

#[test]
fn snapshot_probe() {
    snap("probe", &[("timeline-csv", &timeline_csv::TimelineCsv)]);
}

#[test]
fn snapshot_replay() {
    snap("replay", &[]);
}

#[test]
fn snapshot_lab() {
    snap("lab", &[("fio-json", &fio_json::FioJson)]);
}

#[test]
fn snapshot_compare_table() {
    let r = fixture("lab");
    let c = fslab::report::compare::build(&[(String::new(), &r)], None);
    insta::assert_snapshot!("lab.compare", fslab::report::compare::render(&c));
}

/// Schema-1 cells get the kind their contents say, and their figures.
#[test]
fn schema_1_fixtures_are_read_with_their_kind() {
    for (name, kind) in [
        ("io", CellKind::Io),
        ("meta", CellKind::Meta),
        ("probe", CellKind::Probe),
        ("replay", CellKind::Replay),
    ] {
        let r = fixture(name);
        assert_eq!(r.schema_version, 2, "{name}: upgraded on reading");
        assert_eq!(r.cells[0].kind(), kind, "{name}");
    }
    let io = fixture("io");
    let p = io.cells[0].plan.io().expect("an io plan");
    assert_eq!((p.shape.rw.name(), p.shape.bs, p.shape.rwmixread), ("randrw", 4096, 75));
    assert_eq!(io.cells[0].directions[0].ops, 1883072);
    let lab = fixture("lab");
    let kinds: Vec<CellKind> = lab.cells.iter().map(|c| c.kind()).collect();
    assert!(
        kinds.contains(&CellKind::Meta) && kinds.contains(&CellKind::Io),
        "{kinds:?}"
    );
    let replay = fixture("replay");
    assert!(replay.cells[0].dbench_mb_s() > 0.0);
    assert!(replay.cells[0]
        .plan
        .replay()
        .unwrap()
        .loadfile
        .name
        .ends_with("load.txt"));
}

/// A schema-1 cell that failed in a lab run recorded the lab's plan enum
/// (`{"io": {...}}`): it is read as an io cell with that plan.
#[test]
fn schema_1_failed_lab_cells_are_unwrapped() {
    let mut v: serde_json::Value = serde_json::from_str(&fixture_text("lab")).unwrap();
    let c = &mut v["cells"][1];
    let plan = c["plan"].take();
    c["plan"] = serde_json::json!({ "io": plan });
    c["error"] = "making the filesystem: mkfs refused".into();
    let r = parse_report(&v.to_string()).unwrap();
    assert_eq!(r.cells[1].kind(), CellKind::Io);
    assert_eq!(r.cells[1].plan.io().unwrap().shape.bs, 4096);
}

/// Versions other than 1 and 2 are refused, naming the version.
#[test]
fn unknown_schema_versions_are_refused() {
    let mut v: serde_json::Value = serde_json::from_str(&fixture_text("io")).unwrap();
    v["schema_version"] = 3.into();
    let e = parse_report(&v.to_string()).unwrap_err();
    assert!(e.msg.contains("schema_version 3"), "{e}");
}

/// A fio job's cell: the io plan with fio's job info under `fio`, typed,
/// written and read back unchanged; fio-json takes its group and options.
#[test]
fn fio_cells_round_trip_and_report_their_job() {
    let mut v: serde_json::Value = serde_json::from_str(&fixture_text("io")).unwrap();
    v["cells"][0]["plan"]["fio"] = serde_json::json!({
        "groupid": 3, "jobs": 2, "options": {"bs": "4k", "rw": "randrw"}
    });
    let r = parse_report(&v.to_string()).unwrap();
    let c = &r.cells[0];
    assert_eq!(c.kind(), CellKind::Fio);
    let fio = c.plan.fio().unwrap();
    assert_eq!((fio.groupid, fio.jobs, fio.options["bs"].as_str()), (3, 2, "4k"));
    let written = render(&r, &json::Json);
    let w: serde_json::Value = serde_json::from_str(&written).unwrap();
    assert_eq!(w["cells"][0]["kind"], "fio");
    assert_eq!(w["cells"][0]["plan"]["fio"], v["cells"][0]["plan"]["fio"]);
    let again = parse_report(&written).unwrap();
    assert_eq!(render(&again, &json::Json), written);
    let job: serde_json::Value = serde_json::from_str(&render(&r, &fio_json::FioJson)).unwrap();
    assert_eq!(job["jobs"][0]["groupid"], 3);
    assert_eq!(
        job["jobs"][0]["job options"],
        serde_json::json!({"bs": "4k", "rw": "randrw"})
    );
}

/// A hand-built `cell.system` of an O_DIRECT randrw cell on a loop device
/// over a file on the virtual disk vda: three 1 s samples, phase "run";
/// `disturbed` adds a CPU burner's interference.
pub(crate) fn hand_built_system(disturbed: bool) -> fslab::model::system::SystemData {
    use fslab::model::system::*;
    use fslab::stats::OpKind;
    let io = |t_ms: u64, r_s: f64, w_s: f64, r_await: f64, w_await: f64, util: f64| IostatPoint {
        t_ms,
        len_ms: 1000,
        r_s,
        w_s,
        rmb_s: r_s * 16384.0 / 1e6,
        wmb_s: w_s * 16384.0 / 1e6,
        r_await_ms: r_await,
        w_await_ms: w_await,
        rareq_kib: 16.0,
        wareq_kib: 16.0,
        aqu_sz: (r_s * r_await + w_s * w_await) / 1000.0,
        util_pct: util,
        read_ios: r_s as u64,
        write_ios: w_s as u64,
        read_bytes: r_s as u64 * 16384,
        write_bytes: w_s as u64 * 16384,
        read_ticks_ms: (r_s * r_await) as u64,
        write_ticks_ms: (w_s * w_await) as u64,
        ..IostatPoint::default()
    };
    let dev = |name: &str, role, above: Option<&str>, backing: Option<&str>, sched: Option<&str>, k: f64| DeviceData {
        name: name.into(),
        role,
        above: above.map(String::from),
        backing: backing.map(String::from),
        scheduler: sched.map(String::from),
        samples: vec![
            io(1000, 2310.0, 255.0, 0.398 * k, 1.21 * k, 97.5),
            io(2000, 2290.0, 262.0, 0.401 * k, 1.19 * k, 98.1),
            io(3000, 2301.0, 258.0, 0.395 * k, 1.20 * k, 97.9),
        ],
        total: io(3000, 2300.3, 258.3, 0.398 * k, 1.2 * k, 97.8),
        direct_io: (role == DeviceRole::Loop).then_some(true),
        ..DeviceData::default()
    };
    let point = |t_ms: u64, others: f64| SystemPoint {
        t_ms,
        len_ms: 1000,
        cpu: CpuSplit {
            user: 4.1 + others,
            nice: 0.0,
            system: 21.3,
            iowait: 48.7,
            irq: 0.4,
            softirq: 1.2,
            steal: 0.1,
            idle: 24.2 - others,
        },
        fslab_pct: 22.6,
        ctxt_s: 41200.0,
        dirty_kib: 136 + t_ms / 100,
        writeback_kib: 8,
        dirty_threshold_kib: 2_457_600,
        dirty_bg_threshold_kib: 1_228_800,
        pgpgin_kib_s: 0.0,
        pgpgout_kib_s: 0.0,
        psi: Some(Pressure {
            cpu_some: 2.0,
            io_some: 61.3,
            io_full: 44.0,
            memory_some: 0.0,
            memory_full: 0.0,
        }),
    };
    let others = if disturbed { 20.0 } else { 0.0 };
    let share = |device: &str, dir, ops, mean, ios, aw: f64| LatencyShare {
        device: device.into(),
        dir,
        ops,
        mean_lat_us: mean,
        device_ios: ios,
        await_us: aw,
        share_pct: Some(ios as f64 * aw * 100.0 / (ops as f64 * mean)),
        unattributed: None,
    };
    let mut interference = Interference {
        other_cpu_pct: 1.2 + others,
        steal_pct: 0.1,
        kernel_threads_pct: 3.4,
        cpu_threshold_pct: 10.0,
        ..Interference::default()
    };
    if disturbed {
        interference.disturbed = true;
        interference.reasons = vec!["other processes used 21.2% of the CPUs (stress 4242: 20.0%)".into()];
        interference.top_others = vec![OtherProcess {
            pid: 4242,
            comm: "stress".into(),
            cpu_pct: 20.0,
        }];
    }
    SystemData {
        interval_ms: 1000,
        ncpus: 2,
        phases: vec![PhaseSpan {
            name: "run".into(),
            start_ms: 0,
            end_ms: 3000,
        }],
        devices: vec![
            dev(
                "loop3",
                DeviceRole::Loop,
                None,
                Some("/var/tmp/fslab-x.img"),
                Some("none"),
                1.0,
            ),
            dev("vda", DeviceRole::Disk, Some("loop3"), None, Some("mq-deadline"), 0.955),
        ],
        samples: vec![point(1000, others), point(2000, others), point(3000, others)],
        total: point(3000, others),
        interference,
        latency_share: vec![
            share("loop3", OpKind::Read, 6900, 412.0, 6901, 398.0),
            share("vda", OpKind::Read, 6900, 412.0, 6901, 380.0),
            share("loop3", OpKind::Write, 775, 1304.0, 775, 1200.0),
            share("vda", OpKind::Write, 775, 1304.0, 775, 1146.0),
        ],
        attempts: 1,
        ..SystemData::default()
    }
}

/// The io fixture with a hand-built `system`: its text block (devices,
/// where the time goes, CPU, pressure, memory, quiet), CSV rows and HTML
/// timeline, as snapshots; the JSON holds it and reads back the same.
#[test]
fn snapshot_io_with_system() {
    let mut r = fixture("io");
    r.cells[0].system = Some(hand_built_system(false));
    r.cells[0].xattrs = Some(fslab::model::system::XattrPlacement {
        sampled: 64,
        in_inode: 0,
        external: 64,
        none: 0,
        error: None,
    });
    let text = render(&r, &text::Text);
    assert!(
        text.contains("read:  fslab 412 µs, loop3 await 398 µs (97%), vda await 380 µs (92%)"),
        "{text}"
    );
    let block = text.split("\nsystem (").nth(1).expect("a system block");
    assert!(block.lines().all(|l| l.chars().count() <= 100), "{block}");
    insta::assert_snapshot!("io.system.text", text);
    let csv = render(&r, &csv::Csv);
    assert!(csv.contains("io,,,,device:vda,,read_share_pct,"), "{csv}");
    assert!(csv.contains("io,,,,system,,disturbed,0\n"), "{csv}");
    assert!(csv.contains("io,,,,xattrs,,external,64\n"), "{csv}");
    let sys_rows: String = csv
        .lines()
        .filter(|l| {
            ["system", "device:", "xattrs"]
                .iter()
                .any(|k| l.contains(&format!(",{k}")))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    insta::assert_snapshot!("io.system.csv", sys_rows);
    let html = render(&r, &html::Html);
    assert!(html.contains("data-kind=\"system\"") && !html.contains("data-disturbed=\"true\""));
    insta::assert_snapshot!("io.system.html", html);
    let written = render(&r, &json::Json);
    let again = parse_report(&written).unwrap();
    // serde_json (without float_roundtrip) reads some floats an ulp off,
    // so compare what the result renders to
    let sys = again.cells[0].system.as_ref().expect("system reads back");
    assert_eq!((sys.devices.len(), sys.samples.len()), (2, 3));
    assert_eq!(render(&again, &text::Text), text);
    assert_eq!(render(&again, &csv::Csv).lines().count(), csv.lines().count());
}

/// A lab run with telemetry: a compact system block per cell after the
/// comparison, and the disturbed filesystem marked "!" in the comparison.
#[test]
fn snapshot_lab_with_system() {
    let mut r = fixture("lab");
    for (i, c) in r.cells.iter_mut().enumerate() {
        let mut sys = hand_built_system(i == 3);
        if c.name.ends_with("meta") {
            sys.latency_share.clear();
        }
        c.system = Some(sys);
    }
    // the disturbed cell was rerun once before
    let sys = r.cells[3].system.as_mut().unwrap();
    sys.attempts = 2;
    sys.rerun_reasons = vec!["attempt 1: other processes used 35.0% of the CPUs (stress 4242: 34.1%)".into()];
    let text = render(&r, &text::Text);
    assert!(
        text.contains("  attempt 2 (--retry-disturbed reran the cell 1 time(s)):\n    attempt 1: other"),
        "{text}"
    );
    assert!(
        text.contains("ext4 #1 randread: disturbed: other processes used 21.2%"),
        "{text}"
    );
    assert!(text.contains("ext4 !"), "{text}");
    // one line per table, whatever the number of disturbed columns
    assert!(text.contains("! disturbed cells: ext4 1 of 2 ("), "{text}");
    let block = text.split("\nsystem per cell").nth(1).expect("a system section");
    assert!(block.lines().all(|l| l.chars().count() <= 100), "{block}");
    insta::assert_snapshot!("lab.system.text", text);
    let html = render(&r, &html::Html);
    assert_eq!(html.matches("data-disturbed=\"true\"").count(), 1);
    assert!(html.contains("! ext4: 1 of 2 cell(s) disturbed"));
}

/// Results written before telemetry (no `system`, `xattrs`, `profile`)
/// render as before: no system block, no rows, no timeline.
#[test]
fn results_without_system_render_without_it() {
    for name in ["io", "meta", "probe", "replay", "lab"] {
        let r = fixture(name);
        assert!(r.cells.iter().all(|c| c.system.is_none()), "{name}");
        assert!(!render(&r, &text::Text).contains("system ("), "{name}");
        assert!(!render(&r, &csv::Csv).contains(",system,"), "{name}");
        assert!(!render(&r, &html::Html).contains("data-kind=\"system\""), "{name}");
    }
}
