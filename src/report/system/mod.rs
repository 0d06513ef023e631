//! The system beside a cell (`cell.system`, model::system) as text: the
//! device stack with its `iostat -x` figures, where fslab's latency goes
//! (each device's await beside fslab's mean latency, and its share), the
//! CPU split, pressure, dirty memory and interference ("disturbed: ..." or
//! "quiet: ..."). Plain text, laid out at the report's width. Used by
//! `text` (one block per cell, a compact one per lab cell), and its
//! helpers by `csv` and `html`.
//!
//! `lines` holds the one-line summaries (shared with `csv` and `html`),
//! `block` the text blocks built from them. This file only names them.

mod block;
mod lines;

pub use block::{lab_text, text_block, text_compact};
pub use lines::{
    cpu_line, device_label, dirty_peaks, disturbed, interference_line, profile_line, rerun_lines, role_name,
    share_lines, stack_line, xattrs_line,
};

#[cfg(test)]
mod tests {
    use super::block::{phase_table, wrapped};
    use super::*;
    use crate::model::system::{DeviceData, DeviceRole, LatencyShare, SystemData, SystemPoint};
    use crate::model::system::{Interference, XattrPlacement};
    use crate::report::render::doc::Doc;
    use crate::stats::OpKind;

    fn share(device: &str, dir: OpKind, ops: u64, ios: u64, share_pct: Option<f64>) -> LatencyShare {
        LatencyShare {
            device: device.into(),
            dir,
            ops,
            mean_lat_us: 412.0,
            device_ios: ios,
            await_us: 398.0,
            share_pct,
            unattributed: None,
        }
    }

    #[test]
    fn shares_read_first_and_say_what_is_missing() {
        let sys = SystemData {
            latency_share: vec![
                share("loop0", OpKind::Write, 0, 0, None),
                share("loop0", OpKind::Read, 10, 10, Some(96.6)),
                share("vda", OpKind::Read, 10, 0, None),
            ],
            ..SystemData::default()
        };
        assert_eq!(
            share_lines(&sys),
            [
                "read:  fslab 412 µs, loop0 await 398 µs (97%), vda await - (no I/O)",
                "write: fslab -, loop0 await - (no I/O)"
            ]
        );
    }

    #[test]
    fn labels_and_stack() {
        let dev = |name: &str, role, above: Option<&str>| DeviceData {
            name: name.into(),
            role,
            above: above.map(String::from),
            backing: (role == DeviceRole::Loop).then(|| "/var/tmp/x.img".to_string()),
            scheduler: Some(
                if role == DeviceRole::Loop {
                    "none"
                } else {
                    "mq-deadline"
                }
                .into(),
            ),
            ..DeviceData::default()
        };
        let sys = SystemData {
            devices: vec![
                dev("md0", DeviceRole::Md, None),
                dev("vdb", DeviceRole::Disk, Some("md0")),
                dev("vdc", DeviceRole::Disk, Some("md0")),
            ],
            ..SystemData::default()
        };
        assert_eq!(
            stack_line(&sys),
            "md0 (md, mq-deadline) -> vdb (disk, mq-deadline) + vdc (disk, mq-deadline)"
        );
        assert_eq!(
            device_label(&dev("loop3", DeviceRole::Loop, None)),
            "loop3 (loop over /var/tmp/x.img)"
        );
        let dio = DeviceData {
            direct_io: Some(false),
            ..dev("loop3", DeviceRole::Loop, None)
        };
        assert_eq!(device_label(&dio), "loop3 (loop over /var/tmp/x.img, dio off)");
    }

    #[test]
    fn phases_get_their_samples() {
        use crate::model::system::{IostatPoint, PhaseSpan};
        let pt = |t_ms: u64, user: f64| SystemPoint {
            t_ms,
            len_ms: 1000,
            cpu: crate::model::system::CpuSplit {
                user,
                idle: 100.0 - user,
                ..Default::default()
            },
            ..SystemPoint::default()
        };
        let io = |t_ms: u64, w: u64, ticks: u64| IostatPoint {
            t_ms,
            len_ms: 1000,
            util_pct: 50.0,
            write_ios: w,
            write_ticks_ms: ticks,
            ..IostatPoint::default()
        };
        let sys = SystemData {
            phases: vec![
                PhaseSpan {
                    name: "seq-create".into(),
                    start_ms: 0,
                    end_ms: 2000,
                },
                PhaseSpan {
                    name: "seq-stat".into(),
                    start_ms: 2000,
                    end_ms: 2300,
                },
                PhaseSpan {
                    name: "seq-delete".into(),
                    start_ms: 2300,
                    end_ms: 3400,
                },
            ],
            samples: vec![pt(1000, 10.0), pt(2000, 30.0), pt(3000, 80.0)],
            devices: vec![DeviceData {
                name: "vda".into(),
                samples: vec![io(1000, 100, 100), io(2000, 300, 900), io(3000, 0, 0)],
                ..DeviceData::default()
            }],
            ..SystemData::default()
        };
        let mut s = Doc::new();
        phase_table(&mut s, &sys);
        assert_eq!(
            s.render(crate::plan::TableFormat::Text, 100),
            "  per phase (awaits in ms):
    phase       secs  usr%  sys%  iowait%  idle%  fslab%  vda %util  r_await  w_await
    seq-create   2.0  20.0   0.0      0.0   80.0     0.0       50.0     0.00     2.50
    seq-delete   1.1  80.0   0.0      0.0   20.0     0.0       50.0     0.00     0.00
"
        );
        // at 60 columns: two blocks, each naming its phases
        let mut s = Doc::new();
        phase_table(&mut s, &sys);
        let out = s.render(crate::plan::TableFormat::Text, 60);
        assert!(out.lines().all(|l| l.chars().count() <= 60), "{out}");
        assert_eq!(out.matches("seq-delete").count(), 2, "{out}");
    }

    #[test]
    fn long_lines_wrap_at_the_width() {
        let reason = "other processes used 76.5% of the CPUs (rustc 26752: 26.3%, rustc 28296: 22.4%, rustc 28509: 19.0%), steal 9.0%: above 10%";
        for width in [80, 100] {
            let mut d = Doc::new();
            wrapped(&mut d, "  ", &format!("disturbed: {reason}"));
            let s = d.render(crate::plan::TableFormat::Text, width);
            assert!(s.lines().all(|l| l.chars().count() <= width), "{s}");
            assert_eq!(s.lines().count(), 2);
            assert!(s.lines().nth(1).unwrap().starts_with("    "), "{s}");
            assert_eq!(
                s.split_whitespace().collect::<Vec<_>>().join(" "),
                format!("disturbed: {reason}")
            );
        }
    }

    #[test]
    fn interference_says_disturbed_or_quiet() {
        let mut sys = SystemData {
            interference: Interference {
                other_cpu_pct: 1.24,
                cpu_threshold_pct: 10.0,
                ..Interference::default()
            },
            ..SystemData::default()
        };
        assert_eq!(interference_line(&sys), "quiet: others 1.2% CPU (threshold 10.0%)");
        sys.interference.disturbed = true;
        sys.interference.other_cpu_pct = 48.0;
        assert_eq!(
            interference_line(&sys),
            "disturbed: others 48.0% CPU, steal 0.0% (threshold 10.0%)"
        );
        sys.interference.reasons = vec!["a".into(), "b".into()];
        assert_eq!(interference_line(&sys), "disturbed: a; b");
    }

    #[test]
    fn a_cell_without_devices_or_psi_has_a_short_block() {
        let r = crate::model::parse_report(include_str!("../../../tests/fixtures/meta.json")).unwrap();
        let mut c = r.cells[0].clone();
        let mut s = Doc::new();
        text_block(&mut s, &c);
        assert!(s.is_empty(), "no system, no block");
        c.system = Some(SystemData {
            ncpus: 2,
            interval_ms: 1000,
            ..SystemData::default()
        });
        c.xattrs = Some(XattrPlacement {
            error: Some("EOPNOTSUPP".into()),
            ..XattrPlacement::default()
        });
        text_block(&mut s, &c);
        assert_eq!(
            *s,
            "system (2 CPU(s), 1000 ms samples, quiet):\n  cpu: usr 0.0% sys 0.0% iowait 0.0% irq 0.0% soft 0.0% steal 0.0% idle 0.0%, fslab 0.0%\n  memory: Dirty peak 0 B, Writeback peak 0 B\n  quiet: others 0.0% CPU\n"
        );
        assert_eq!(xattrs_line(&c).unwrap(), "xattrs: placement not sampled: EOPNOTSUPP");
    }
}
