//! The calibration card: what the cheapest form of each operation fslab
//! measures costs on this host (a null syscall, a clock read, tmpfs
//! create/stat/unlink, a pread of one cached page, page-cache copy
//! bandwidth) and how noisy the host is (the coefficient of variation of
//! ten identical short loops). Measured once per boot and fslab build
//! (`runner::calibrate`, cached by `app::calibration`), recorded in every
//! result (`Report::calibration`), and the floor each cell's figures are
//! set against (`Cell::efficiency`): "create 3.1× this host's tmpfs floor"
//! says more than 9.4 µs alone, and a difference smaller than the host's
//! noise is noise (`is_noise`).
//!
//! Every figure is an integer with its unit in its name; a figure that
//! could not be measured is absent, with the reason in `absent`, never a zero.

use super::{Cell, DirResult};
use crate::stats::OpKind;
use serde::{Deserialize, Serialize};

/// The card. docs/results.md describes each figure and how it is measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Calibration {
    /// The build that measured it (`Report::fslab_build`'s string): a card
    /// is kept for one build only.
    pub fslab_build: String,
    /// The kernel's boot id (/proc/sys/kernel/random/boot_id): a card is
    /// kept for one boot only.
    pub boot_id: String,
    /// When it was measured, RFC 3339, UTC.
    pub measured_at: String,
    /// How long measuring it took.
    pub measure_ns: u64,
    /// Read from the cache (measured earlier in this boot by this build),
    /// not measured by the run that records it.
    #[serde(default)]
    pub cached: bool,
    /// One getppid(2): the cost of entering and leaving the kernel.
    pub null_syscall_ns: u64,
    /// One read of fslab's clock (the TSC where it is invariant, else
    /// clock_gettime): what every timed operation pays twice.
    pub clock_read_ns: u64,
    /// The tmpfs directory the tmpfs and page-cache figures were measured in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmpfs_dir: Option<String>,
    /// open(O_CREAT|O_EXCL|O_WRONLY) + close of a new empty file in a tmpfs directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmpfs_create_ns: Option<u64>,
    /// fstatat of one of those files by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmpfs_stat_ns: Option<u64>,
    /// unlinkat of one of those files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmpfs_unlink_ns: Option<u64>,
    /// pread of one cached page (`page_bytes`) of a tmpfs file into a buffer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_pread_ns: Option<u64>,
    /// The page size `cached_pread_ns` read.
    pub page_bytes: u64,
    /// pread of a cached tmpfs file of up to 64 MiB into a 1 MiB buffer:
    /// the copy from the page cache to user memory, streaming through
    /// main memory, bytes per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_cache_copy_bytes_per_s: Option<u64>,
    /// The same copy with the file (4 reads' worth) and the buffer in the
    /// CPU's caches, the per-call cost taken out (from reads of 64 KiB or
    /// 1 MiB and of a page, the faster): the fastest a cached read can
    /// move bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_cache_copy_bytes_per_s: Option<u64>,
    /// A copy in user space between two buffers in the CPU's caches (64
    /// KiB or 1 MiB, the faster): what no read's copy beats (a filesystem
    /// whose page cache holds large folios copies faster than tmpfs's
    /// pages).
    pub memcpy_bytes_per_s: u64,
    /// The host's own noise: the coefficient of variation (standard
    /// deviation / mean, a fraction) of `noise_loops_ns`.
    pub noise_cv: f64,
    /// Ten identical short loops of integer work and getppid(2), each's time.
    pub noise_loops_ns: Vec<u64>,
    /// Figures that could not be measured, each with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub absent: Vec<AbsentFigure>,
}

/// A figure the card lacks, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AbsentFigure {
    /// The field's name ("tmpfs_create_ns").
    pub figure: String,
    pub reason: String,
}

/// The floor a figure of a cell is set against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Floor {
    /// `tmpfs_create_ns`: creates (create phases, NTCreateX).
    TmpfsCreate,
    /// `tmpfs_stat_ns`: stats (stat phases, QUERY_PATH/FILE_INFORMATION).
    TmpfsStat,
    /// `tmpfs_unlink_ns`: deletes (delete phases, Unlink).
    TmpfsUnlink,
    /// Reads and writes: a cached read of the operation's mean size,
    /// `cached_pread_ns` plus (or, below a page, minus, down to a null
    /// syscall) the difference from a page at the fastest of the copy
    /// bandwidths.
    CachedPread,
}

/// One figure of a cell against this host's floor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Efficiency {
    /// The direction ("read") or metadata phase ("seq-create").
    pub op: String,
    pub floor: Floor,
    /// The floor for one such operation on this host.
    pub floor_ns: u64,
    /// The cell's mean latency of the operation.
    pub mean_ns: u64,
    /// mean_ns / floor_ns.
    pub ratio: f64,
}

impl Calibration {
    /// The host's noise as a coefficient of variation (a fraction), None
    /// when too few loops were timed to tell. A difference between two
    /// figures smaller than this share of them is noise (`is_noise`).
    pub fn noise_cv(&self) -> Option<f64> {
        (self.noise_loops_ns.len() >= 2 && self.noise_cv.is_finite() && self.noise_cv >= 0.0).then_some(self.noise_cv)
    }

    /// Whether `a` and `b` differ by less than the host's noise: their
    /// difference, relative to their mean, is below `noise_cv`. None when
    /// the card has no noise figure or both are zero.
    pub fn is_noise(&self, a: f64, b: f64) -> Option<bool> {
        let cv = self.noise_cv()?;
        let mean = (a + b) / 2.0;
        (mean > 0.0).then(|| (a - b).abs() / mean < cv)
    }

    /// The floor of one operation of `d`, and its ns; None for operations
    /// the card has no floor for (fsync, rename, readdir, ...) or a figure
    /// it lacks.
    pub fn floor_of(&self, d: &DirResult) -> Option<(Floor, u64)> {
        let floor = match d.dir {
            OpKind::Create | OpKind::NtCreateX => Floor::TmpfsCreate,
            OpKind::Stat | OpKind::QueryPath | OpKind::QueryFile => Floor::TmpfsStat,
            OpKind::Delete | OpKind::NbUnlink => Floor::TmpfsUnlink,
            OpKind::Read | OpKind::Write | OpKind::ReadX | OpKind::WriteX => Floor::CachedPread,
            _ => return None,
        };
        let ns = match floor {
            Floor::TmpfsCreate => self.tmpfs_create_ns?,
            Floor::TmpfsStat => self.tmpfs_stat_ns?,
            Floor::TmpfsUnlink => self.tmpfs_unlink_ns?,
            Floor::CachedPread => {
                let page = self.cached_pread_ns?;
                let size = d.bytes.checked_div(d.ops).unwrap_or(0);
                // the faster copy: a floor is what no read of this size beats
                let bw = self
                    .page_cache_copy_bytes_per_s
                    .max(self.cpu_cache_copy_bytes_per_s)
                    .max(Some(self.memcpy_bytes_per_s));
                match bw.filter(|&b| b > 0) {
                    Some(bps) if size != self.page_bytes => {
                        let diff = (size as f64 - self.page_bytes as f64) * 1e9 / bps as f64;
                        // below a page no less than entering the kernel
                        (page as f64 + diff).round().max(self.null_syscall_ns.max(1) as f64) as u64
                    }
                    _ => page,
                }
            }
        };
        (ns > 0).then_some((floor, ns))
    }

    /// Each figure of `c` the card has a floor for, against it: nothing
    /// for a cell that failed or an operation never done.
    pub fn efficiency(&self, c: &Cell) -> Vec<Efficiency> {
        if c.error.is_some() {
            return Vec::new();
        }
        c.directions
            .iter()
            .filter(|d| d.ops > 0 && d.lat.mean_ns > 0.0)
            .filter_map(|d| {
                let (floor, floor_ns) = self.floor_of(d)?;
                Some(Efficiency {
                    op: d.phase.clone().unwrap_or_else(|| d.dir.name().to_string()),
                    floor,
                    floor_ns,
                    mean_ns: d.lat.mean_ns.round() as u64,
                    ratio: d.lat.mean_ns / floor_ns as f64,
                })
            })
            .collect()
    }
}

/// The coefficient of variation of `xs` (sample standard deviation / mean),
/// 0 for fewer than two values or a zero mean.
pub fn coefficient_of_variation(xs: &[u64]) -> f64 {
    let n = xs.len();
    if n < 2 {
        return 0.0;
    }
    let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
    if mean <= 0.0 {
        return 0.0;
    }
    let var = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    var.sqrt() / mean
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::{CellPlan, LatSummary, TargetInfo};

    /// A card with round figures.
    pub(crate) fn card() -> Calibration {
        Calibration {
            fslab_build: "0.1.0 (commit unknown, debug)".into(),
            boot_id: "b".into(),
            measured_at: "2026-01-01T00:00:00Z".into(),
            measure_ns: 1,
            cached: false,
            null_syscall_ns: 50,
            clock_read_ns: 20,
            tmpfs_dir: Some("/dev/shm".into()),
            tmpfs_create_ns: Some(2000),
            tmpfs_stat_ns: Some(500),
            tmpfs_unlink_ns: Some(1000),
            cached_pread_ns: Some(200),
            page_bytes: 4096,
            page_cache_copy_bytes_per_s: Some(2_048_000_000),
            cpu_cache_copy_bytes_per_s: Some(4_096_000_000),
            memcpy_bytes_per_s: 3_000_000_000,
            noise_cv: 0.02,
            noise_loops_ns: vec![100; 10],
            absent: vec![],
        }
    }

    fn dir(d: OpKind, phase: Option<&str>, ops: u64, bytes: u64, mean_ns: f64) -> DirResult {
        let mut r = DirResult::of(d, &crate::stats::OpStats::default(), 1);
        r.phase = phase.map(String::from);
        r.ops = ops;
        r.bytes = bytes;
        r.lat = LatSummary {
            mean_ns,
            ..LatSummary::default()
        };
        r
    }

    #[test]
    fn each_operation_is_set_against_its_floor() {
        let k = card();
        let mut a = crate::cli::IoArgs {
            engine: "null".into(),
            ..Default::default()
        };
        a.common.target = ".".into();
        let plan = CellPlan::Io(crate::plan::IoPlan::from_args(&a).unwrap());
        let mut c = Cell::new("c", plan, TargetInfo::default());
        c.directions = vec![
            dir(OpKind::Create, Some("seq-create"), 10, 0, 6200.0),
            dir(OpKind::Stat, Some("seq-stat"), 10, 0, 500.0),
            dir(OpKind::Delete, Some("seq-delete"), 10, 0, 3000.0),
            // 4 KiB: one page; 1 MiB: a page plus 1020 KiB at the faster
            // 4.096 GB/s (255 µs); 2 KiB: a page less 2 KiB (0.5 µs), no
            // less than a null syscall
            dir(OpKind::Read, None, 10, 40960, 2400.0),
            dir(OpKind::Write, None, 10, 10 << 20, 512_400.0),
            dir(OpKind::ReadX, None, 10, 20480, 150.0),
            dir(OpKind::Fsync, None, 10, 0, 1e6),
            dir(OpKind::Rename, None, 0, 0, 0.0),
        ];
        let e = k.efficiency(&c);
        let got: Vec<(&str, Floor, u64, f64)> = e
            .iter()
            .map(|x| (x.op.as_str(), x.floor, x.floor_ns, x.ratio))
            .collect();
        assert_eq!(
            got,
            vec![
                ("seq-create", Floor::TmpfsCreate, 2000, 3.1),
                ("seq-stat", Floor::TmpfsStat, 500, 1.0),
                ("seq-delete", Floor::TmpfsUnlink, 1000, 3.0),
                ("read", Floor::CachedPread, 200, 12.0),
                ("write", Floor::CachedPread, 200 + 255_000, 512_400.0 / 255_200.0),
                ("ReadX", Floor::CachedPread, 50, 3.0),
            ]
        );
        // a figure the card lacks gives no ratio, never one against zero
        let mut k2 = card();
        k2.tmpfs_create_ns = None;
        assert!(k2.efficiency(&c).iter().all(|x| x.floor != Floor::TmpfsCreate));
        c.error = Some("failed".into());
        assert!(k.efficiency(&c).is_empty());
    }

    #[test]
    fn a_difference_below_the_noise_is_noise() {
        let k = card();
        assert_eq!(k.noise_cv(), Some(0.02));
        assert_eq!(k.is_noise(100.0, 101.0), Some(true));
        assert_eq!(k.is_noise(100.0, 105.0), Some(false));
        assert_eq!(k.is_noise(0.0, 0.0), None);
        let mut k = k;
        k.noise_loops_ns.clear();
        assert_eq!(k.noise_cv(), None);
        assert_eq!(coefficient_of_variation(&[10, 10, 10]), 0.0);
        let cv = coefficient_of_variation(&[9, 11]);
        assert!((cv - 2f64.sqrt() / 10.0).abs() < 1e-12, "{cv}");
    }

    #[test]
    fn a_card_reads_back_as_written() {
        let k = card();
        let t = serde_json::to_string(&k).unwrap();
        assert_eq!(serde_json::from_str::<Calibration>(&t).unwrap(), k);
        assert!(!t.contains("absent"), "an empty list is left out: {t}");
    }
}
