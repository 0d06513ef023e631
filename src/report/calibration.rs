//! The calibration card as text (`fslab calibrate`), and a cell's figures
//! against it in one line under the cell (`cell_text`): "floor: seq-create
//! 3.1×, seq-stat 1.2× this host's tmpfs floor; read 12× a cached pread of
//! the same size".

use crate::model::calibration::{Calibration, Efficiency, Floor};
use crate::model::Cell;
use crate::units::Nanos;
use std::fmt::Write;

/// A ratio as the text shows it: "3.1×", "12×".
fn times(r: f64) -> String {
    if r < 9.95 {
        format!("{r:.1}×")
    } else {
        format!("{r:.0}×")
    }
}

/// The one line of a cell's figures against the host's floors, if it has any.
pub fn cell_text(s: &mut String, c: &Cell) {
    if let Some(l) = cell_line(&c.efficiency) {
        let _ = writeln!(s, "{l}");
    }
}

/// "floor: create 3.1×, stat 1.2× this host's tmpfs floor; read 12× a
/// cached pread of the same size", None without figures.
pub fn cell_line(e: &[Efficiency]) -> Option<String> {
    let list = |pick: &dyn Fn(&Efficiency) -> bool| -> String {
        e.iter()
            .filter(|x| pick(x))
            .map(|x| format!("{} {}", x.op, times(x.ratio)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let meta = list(&|x| x.floor != Floor::CachedPread);
    let data = list(&|x| x.floor == Floor::CachedPread);
    let mut parts = Vec::new();
    if !meta.is_empty() {
        parts.push(format!("{meta} this host's tmpfs floor"));
    }
    if !data.is_empty() {
        parts.push(format!("{data} a cached pread of the same size"));
    }
    (!parts.is_empty()).then(|| format!("floor: {}", parts.join("; ")))
}

/// A rate in bytes per second as GB/s (10^9 bytes).
fn gb_s(b: u64) -> String {
    format!("{:.2} GB/s", b as f64 / 1e9)
}

/// The card as `fslab calibrate` prints it: one figure a line, then where
/// it came from (`source`: measured now, or read from the cache).
pub fn card_text(k: &Calibration, source: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "calibration card of this host (fslab {})", k.fslab_build);
    let row = |s: &mut String, what: &str, v: String| {
        let _ = writeln!(s, "  {what:<46} {v}");
    };
    let absent = |figure: &str| {
        k.absent
            .iter()
            .find(|a| a.figure == figure)
            .map(|a| format!("absent: {}", a.reason))
            .unwrap_or_else(|| "absent".into())
    };
    let fig = |v: Option<u64>, figure: &str| v.map(|n| Nanos(n).to_string()).unwrap_or_else(|| absent(figure));
    row(&mut s, "null syscall (getppid)", Nanos(k.null_syscall_ns).to_string());
    row(&mut s, "clock read", Nanos(k.clock_read_ns).to_string());
    row(
        &mut s,
        "tmpfs create (open O_CREAT + close)",
        fig(k.tmpfs_create_ns, "tmpfs_create_ns"),
    );
    row(&mut s, "tmpfs stat", fig(k.tmpfs_stat_ns, "tmpfs_stat_ns"));
    row(&mut s, "tmpfs unlink", fig(k.tmpfs_unlink_ns, "tmpfs_unlink_ns"));
    let page = if k.page_bytes.is_multiple_of(1024) {
        format!("{} KiB", k.page_bytes / 1024)
    } else {
        format!("{} B", k.page_bytes)
    };
    row(
        &mut s,
        &format!("pread of one cached {page} page"),
        fig(k.cached_pread_ns, "cached_pread_ns"),
    );
    row(
        &mut s,
        "page-cache copy bandwidth (pread, large file)",
        k.page_cache_copy_bytes_per_s
            .map(gb_s)
            .unwrap_or_else(|| absent("page_cache_copy_bytes_per_s")),
    );
    row(
        &mut s,
        "... within the CPU's caches (per-call cost out)",
        k.cpu_cache_copy_bytes_per_s
            .map(gb_s)
            .unwrap_or_else(|| absent("cpu_cache_copy_bytes_per_s")),
    );
    row(&mut s, "memcpy within the CPU's caches", gb_s(k.memcpy_bytes_per_s));
    row(
        &mut s,
        &format!("host noise (CV of {} identical loops)", k.noise_loops_ns.len()),
        match k.noise_cv() {
            Some(cv) => format!("{:.2}%", cv * 100.0),
            None => "absent: too few loops".into(),
        },
    );
    let on = k
        .tmpfs_dir
        .as_deref()
        .map(|d| format!(", the tmpfs figures in {d}"))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "measured {} in {:.2} s on boot {}{on}",
        k.measured_at,
        k.measure_ns as f64 / 1e9,
        k.boot_id
    );
    let _ = writeln!(s, "{source}");
    s.push_str(
        "a difference smaller than the host's noise is noise; each cell states its figures against these floors\n",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::calibration::tests::card;

    fn eff(op: &str, floor: Floor, ratio: f64) -> Efficiency {
        Efficiency {
            op: op.into(),
            floor,
            floor_ns: 100,
            mean_ns: (ratio * 100.0) as u64,
            ratio,
        }
    }

    #[test]
    fn a_cell_gets_one_line() {
        assert_eq!(cell_line(&[]), None);
        let e = [
            eff("seq-create", Floor::TmpfsCreate, 3.12),
            eff("seq-stat", Floor::TmpfsStat, 1.2),
            eff("read", Floor::CachedPread, 12.4),
        ];
        assert_eq!(
            cell_line(&e).unwrap(),
            "floor: seq-create 3.1×, seq-stat 1.2× this host's tmpfs floor; read 12× a cached pread of the same size"
        );
        assert_eq!(
            cell_line(&e[2..]).unwrap(),
            "floor: read 12× a cached pread of the same size"
        );
    }

    #[test]
    fn the_card_shows_every_figure_or_why_not() {
        let mut k = card();
        let t = card_text(&k, "measured now");
        for want in [
            "null syscall (getppid)",
            "50 ns",
            "clock read",
            "20 ns",
            "tmpfs create (open O_CREAT + close)",
            "the tmpfs figures in /dev/shm",
            "2.00 µs",
            "500 ns",
            "1.00 µs",
            "pread of one cached 4 KiB page",
            "200 ns",
            "2.05 GB/s",
            "4.10 GB/s",
            "3.00 GB/s",
            "2.00%",
            "measured now",
        ] {
            assert!(t.contains(want), "{want}: {t}");
        }
        k.tmpfs_create_ns = None;
        k.absent.push(crate::model::calibration::AbsentFigure {
            figure: "tmpfs_create_ns".into(),
            reason: "no tmpfs".into(),
        });
        assert!(card_text(&k, "").contains("absent: no tmpfs"));
    }
}
