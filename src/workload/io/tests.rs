//! The io workload's own unit tests.
use super::*;
use crate::cli::IoArgs;

fn plan(rw: &str, extra: impl FnOnce(&mut IoArgs)) -> IoPlan {
    let mut a = IoArgs {
        rw: rw.into(),
        rwmixread: "90".into(),
        bs: "4k".into(),
        jobs: "1".into(),
        engine: "null".into(),
        ..Default::default()
    };
    a.common.target = ".".into();
    a.common.quiet = true;
    extra(&mut a);
    IoPlan::from_args(&a).unwrap()
}

#[test]
fn size_based_sequential_covers_the_file_once() {
    let p = plan("write", |_| {});
    let mut w = IoWorkload::new(&p, 0, vec![], 64 * 4096, false, 1);
    let mut offs = vec![];
    while let Some(op) = w.next_op(0) {
        if let Op::Write { offset, .. } = op.op {
            offs.push(offset);
        }
    }
    assert_eq!(offs, (0..64).map(|b| b * 4096).collect::<Vec<_>>());
}

#[test]
fn mix_and_fsync_cadence() {
    let p = plan("randrw", |a| {
        a.runtime = Some("1s".into());
        a.fsync = Some("4".into());
    });
    let mut w = IoWorkload::new(&p, 0, vec![], 1 << 20, false, 1);
    let (mut r, mut wr, mut fs) = (0, 0, 0);
    let mut since = 0;
    for _ in 0..100_000 {
        let op = w.next_op(0).unwrap();
        match op.dir {
            OpKind::Read => r += 1,
            OpKind::Write => {
                wr += 1;
                since += 1;
                assert!(since <= 4);
            }
            OpKind::Fsync => {
                assert_eq!(since, 4);
                since = 0;
                fs += 1;
            }
            other => panic!("io workload produced {other:?}"),
        }
        if let Op::Read { offset, .. } | Op::Write { offset, .. } = op.op {
            assert!(offset % 4096 == 0 && offset < 1 << 20);
        }
    }
    let share = r as f64 / (r + wr) as f64;
    assert!((share - 0.9).abs() < 0.01, "read share {share}");
    assert_eq!(fs, wr / 4);
}
