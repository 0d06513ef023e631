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

/// The trim patterns over 64 blocks, size-based: trim trims every block
/// once, randtrim 64 blocks (without fio's random map, as `fslab io`'s
/// random patterns), and neither writes; trimwrite and randtrimwrite follow
/// each trim with a write of exactly its range (fio's td_trimwrite), and a
/// fsync=N cadence counts those writes only (a trim-only job never syncs),
/// as fio 3.38 does (`plan::fio::map::engines::trim_checks`).
#[test]
fn trims_cover_the_file_and_trimwrites_write_each_trimmed_range() {
    for rw in ["trim", "randtrim", "trimwrite", "randtrimwrite"] {
        let p = plan(rw, |a| a.fsync = Some("1".into()));
        let mut w = IoWorkload::new(&p, 0, vec![], 64 * 4096, false, 1);
        let (mut trims, mut writes, mut syncs) = (vec![], 0, 0);
        let mut last = None;
        while let Some(op) = w.next_op(0) {
            match op.op {
                Op::Trim { offset, len, .. } => {
                    assert_eq!(last.take(), None, "{rw}: a trim's write comes before the next trim");
                    trims.push(offset);
                    last = rw.ends_with("write").then_some((offset, len));
                }
                Op::Write { offset, len, .. } => {
                    assert_eq!(last.take(), Some((offset, len)), "{rw}: a write of the trimmed range");
                    writes += 1;
                }
                Op::Fsync { .. } => syncs += 1,
                other => panic!("{rw}: {other:?}"),
            }
            w.on_complete(&op, op.len as i64);
        }
        if rw.starts_with("rand") {
            assert!(
                trims.len() == 64 && trims.iter().all(|o| o % 4096 == 0 && *o < 64 * 4096),
                "{rw}"
            );
        } else {
            assert_eq!(trims, (0..64).map(|b| b * 4096).collect::<Vec<_>>(), "{rw}");
        }
        // a sync is issued as the next I/O is picked: none after the last write
        let pairs = if rw.ends_with("write") { 64 } else { 0 };
        assert_eq!((writes, syncs), (pairs, pairs.max(1) - 1), "{rw}");
    }
}
