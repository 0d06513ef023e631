//! fio's "normal" text output, for `fslab fio`, line for line as fio 3.33
//! writes it (stat.c, init.c, backend.c, filesetup.c, diskutil.c), with
//! fio's number formatting (num2str) and unit rules:
//!
//! - before the run: each job's line ("name: (g=0): rw=..., bs=(R) ...,
//!   ioengine=..., iodepth=N", "..." after it for clones), the version
//!   line (fslab's: "fslab-X.Y.Z", where fio writes "fio-3.33"),
//!   "Starting N processes", each clone's "Laying out IO file" line and
//!   fio's note on a sync engine's capped iodepth; `FioAll` writes these
//!   first and the rest after the terse line and the JSON, as fio does;
//! - per job (`job`): the job line with its time, each direction's
//!   IOPS/BW line, slat/clat/lat, percentiles, the bw and iops sample
//!   lines (500 ms samples), the `lat (usec)` distribution, the sync block,
//!   cpu, IO depths, submit and complete batch sizes, issued rwts, errors
//!   with continue_on_error, latency and steady state;
//! - "Run status group N" with the aggregate, the jobs' range and their
//!   runtimes; "Disk stats (read/write)" from fslab's device sampling.
//!
//! Every number printed was measured, or is fio's own constant for what
//! the job asked (the `latency` line without a latency target: target=0,
//! window=0, percentile=100.00%; "0 zone resets": fslab resets no zone;
//! "dropped" counts only a net job's lost datagrams, as fio's). Where fslab measures a little
//! differently: each worker takes its own 500 ms samples from its counters
//! at the boundaries (fio's helper thread takes them on its timer); the
//! latency distribution comes from the latency histogram (1% resolution
//! near a mark); "Disk stats" covers the devices under each job's target
//! over the runs (not the layout); a sync engine's submit and complete
//! lines are each operation's own; an error's text on the job line is
//! strerror's, without fio's source location. fslab's warnings and a job's errors, which fio's output has no line
//! for, go to stderr (`app::fio`), as fio's own notes and errors do.

mod job;
mod num;

use crate::model::{Cell, FioJobHead, Report};
use crate::report::render::Reporter;
use crate::stats::OpKind;
pub use num::{lat_unit, num2str, Unit};
use std::fmt::Write;

pub struct FioText;

/// A reporting group's figures that its jobs' blocks use.
pub(super) struct Group {
    pub kb_base: u64,
    /// fio's aggregate bandwidth of reads, writes and trims (bytes/s: the
    /// group's bytes over its longest runtime).
    agg: [u64; 3],
}

impl Group {
    fn agg(&self, d: OpKind) -> u64 {
        match d {
            OpKind::Read => self.agg[0],
            OpKind::Trim => self.agg[2],
            _ => self.agg[1],
        }
    }
}

/// kb_base of the job file (1000 or 1024; fio's default 1024).
fn kb_base(c: &Cell) -> u64 {
    c.plan
        .fio()
        .and_then(|f| f.options.get("kb_base"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(1024)
}

/// The cells of group `g` (fio cells; any other cell is its own).
fn members(r: &Report, g: Option<usize>) -> Vec<&Cell> {
    r.cells
        .iter()
        .filter(|c| c.error.is_none() && c.plan.fio().map(|f| f.groupid) == g)
        .collect()
}

/// fio's runtime of a job, ms: its microseconds rounded up (backend.c
/// update_runtime), so a 300 ms job is often 301.
pub(super) fn runtime_ms(c: &Cell) -> u64 {
    (c.elapsed_ns / 1000).div_ceil(1000)
}

/// Per direction: (runtime ms, bytes) of each member that ran it.
fn runs(cells: &[&Cell], d: OpKind) -> Vec<(u64, u64)> {
    cells
        .iter()
        .filter_map(|c| Some((runtime_ms(c), c.dir(d)?.bytes)))
        .filter(|(t, b)| *t > 0 && *b > 0)
        .collect()
}

fn group_of(cells: &[&Cell]) -> Group {
    let agg = |d| {
        let v = runs(cells, d);
        let max = v.iter().map(|x| x.0).max().unwrap_or(0);
        (v.iter().map(|x| x.1).sum::<u64>() * 1000)
            .checked_div(max)
            .unwrap_or(0)
    };
    Group {
        kb_base: cells.first().map_or(1024, |c| kb_base(c)),
        agg: [agg(OpKind::Read), agg(OpKind::Write), agg(OpKind::Trim)],
    }
}

/// fio's show_group_stats: the aggregate, the slowest and fastest job,
/// the bytes and the shortest and longest runtime, in fio's two bases.
fn run_status(s: &mut String, g: usize, cells: &[&Cell]) {
    let _ = writeln!(s, "\nRun status group {g} (all jobs):");
    let i2p = group_of(cells).kb_base != 1000;
    for (label, d) in [
        ("   READ", OpKind::Read),
        ("  WRITE", OpKind::Write),
        ("   TRIM", OpKind::Trim),
    ] {
        let v = runs(cells, d);
        if v.is_empty() {
            continue;
        }
        let (min_run, max_run) = (
            v.iter().map(|x| x.0).min().unwrap_or(0),
            v.iter().map(|x| x.0).max().unwrap_or(0),
        );
        let bws: Vec<u64> = v.iter().map(|(t, b)| b * 1000 / t).collect();
        let io: u64 = v.iter().map(|x| x.1).sum();
        let agg = io * 1000 / max_run;
        let (lo, hi) = (
            bws.iter().copied().min().unwrap_or(0),
            bws.iter().copied().max().unwrap_or(0),
        );
        let rate = |v: u64, p: bool| num2str(v, 4, 1, p, Unit::BytePerSec);
        let _ = writeln!(
            s,
            "{label}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={min_run}-{max_run}msec",
            rate(agg, i2p),
            rate(agg, !i2p),
            rate(lo, i2p),
            rate(hi, i2p),
            rate(lo, !i2p),
            rate(hi, !i2p),
            num2str(io, 4, 1, i2p, Unit::Byte),
            num2str(io, 4, 1, !i2p, Unit::Byte),
        );
    }
}

/// fio's lines before the run (init.c add_job, backend.c run_threads,
/// filesetup.c setup_files).
fn header(s: &mut String, r: &Report) {
    let heads = &r.fio_jobs;
    if heads.is_empty() {
        return;
    }
    for h in heads {
        if matches!(h.ioengine.as_str(), "cpuio" | "exec") {
            // fio's engines without I/O (FIO_NOIO) print no such line,
            // only the "..." of their clones
            if h.clones > 1 {
                s.push_str("...\n");
            }
            continue;
        }
        let i2p = h.kb_base != 1000;
        let b = |v: u64| num2str(v, 4, 1, i2p, Unit::Byte);
        let _ = writeln!(
            s,
            "{}: (g={}): rw={}, bs=(R) {}-{}, (W) {}-{}, (T) {}-{}, ioengine={}, iodepth={}",
            h.name,
            h.groupid,
            h.rw,
            b(h.bs[0][0]),
            b(h.bs[0][1]),
            b(h.bs[1][0]),
            b(h.bs[1][1]),
            b(h.bs[2][0]),
            b(h.bs[2][1]),
            h.ioengine,
            h.iodepth
        );
        if h.clones > 1 {
            s.push_str("...\n");
        }
    }
    let _ = writeln!(s, "fslab-{}", r.fslab_version);
    let count = |thread: bool| {
        heads
            .iter()
            .filter(|h| h.thread == thread)
            .map(|h| h.clones)
            .sum::<u32>()
    };
    let plural = |n: u32, one: &str, many: &str| format!("{n} {}", if n > 1 { many } else { one });
    let (threads, procs) = (count(true), count(false));
    let started = match (threads, procs) {
        (0, p) => plural(p, "process", "processes"),
        (t, 0) => plural(t, "thread", "threads"),
        (t, p) => format!(
            "{} and {}",
            plural(t, "thread", "threads"),
            plural(p, "process", "processes")
        ),
    };
    let _ = writeln!(s, "Starting {started}");
    for h in heads {
        for _ in 0..h.clones {
            h.engine_says.iter().for_each(|l| {
                let _ = writeln!(s, "{l}");
            });
        }
        laid_out(s, h);
    }
}

/// Each clone's layout line and, for a sync engine given an iodepth,
/// fio's note (backend.c thread_main), in the order fio's thread says them.
fn laid_out(s: &mut String, h: &FioJobHead) {
    for c in 0..h.clones as usize {
        if let Some(l) = h.laid_out.get(c) {
            layout_line(s, h, l);
        }
        if h.depth_capped {
            s.push_str(
                "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n",
            );
        }
    }
}

fn layout_line(s: &mut String, h: &FioJobHead, l: &crate::model::LaidOut) {
    let many = l.files > 1;
    let _ = writeln!(
        s,
        "{}: Laying out IO file{} ({} file{} / {}{}MiB)",
        h.name,
        if many { "s" } else { "" },
        l.files,
        if many { "s" } else { "" },
        if many { "total " } else { "" },
        l.bytes >> 20
    );
}

/// `t` (RFC 3339) as ctime writes it in local time ("Sat Dec  5 08:06:53 2026").
fn ctime(t: &str) -> String {
    humantime::parse_rfc3339(t)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| crate::sys::ctime(d.as_secs() as i64))
        .unwrap_or_default()
}

impl Reporter for FioText {
    fn render(&self, r: &Report) -> Vec<u8> {
        let mut s = head(r);
        s.push_str(&body(r));
        s.into_bytes()
    }
}

/// The lines fio writes before the run (`fslab fio`'s jobs; none for
/// another command's result).
pub fn head(r: &Report) -> String {
    let mut s = String::new();
    header(&mut s, r);
    s
}

/// The lines fio writes after the run: its results, from the blank line
/// that opens them to the disk stats.
pub fn body(r: &Report) -> String {
    let mut s = String::new();
    s.push('\n');
    // fio's time of the report: the run's end (its start for a result
    // that did not keep the end)
    let when = ctime(r.finished_at.as_deref().unwrap_or(&r.started_at));
    for c in r.cells.iter().filter(|c| c.error.is_none()) {
        let g = group_of(&members(r, c.plan.fio().map(|f| f.groupid)));
        job::job(&mut s, c, &g, &when);
    }
    // every group of the job file, as fio numbers them
    let mut groups: Vec<usize> = r.fio_jobs.iter().map(|h| h.groupid).collect();
    groups.extend(r.cells.iter().filter_map(|c| c.plan.fio().map(|f| f.groupid)));
    groups.sort_unstable();
    groups.dedup();
    for g in groups {
        run_status(&mut s, g, &members(r, Some(g)));
    }
    super::disks::text(&mut s, r);
    if r.interrupted {
        s.push_str("fio: terminating on signal (fslab: results cover the time before the stop)\n");
    }
    s
}
