//! The progress bar: elapsed, remaining and current IOPS on a TTY, nothing
//! otherwise. It reads the workers' relaxed counters a few times a second, so
//! it costs the hot path nothing.

use super::Counter;
use super::Instant;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::Ordering;
use std::thread::ScopedJoinHandle;
use std::time::Duration;

/// Progress display for one run (or one layout phase).
pub struct Progress {
    enabled: bool,
    /// Not a terminal, but asked for a line per second (dbench prints one).
    lines: bool,
    label: String,
    /// For size-based runs: total bytes all workers will move.
    total_bytes: Option<u64>,
}

impl Progress {
    /// Shown only when `want` and stderr is a terminal.
    pub fn new(want: bool, label: impl Into<String>, total_bytes: Option<u64>) -> Self {
        Progress {
            // in a distributed run, rank 0 alone shows progress
            enabled: want && std::io::stderr().is_terminal() && crate::dist::coordinator().rank() == 0,
            lines: false,
            // a cell's name: control characters escaped for the terminal
            label: crate::units::shown(&label.into()).into_owned(),
            total_bytes,
        }
    }

    /// Like `new`, and when stderr is not a terminal, a plain line per second.
    pub fn with_lines(want: bool, label: impl Into<String>) -> Self {
        let mut p = Self::new(want, label, None);
        p.lines = want && !p.enabled && crate::dist::coordinator().rank() == 0;
        p
    }

    /// True when it shows anything (a bar, or lines).
    pub fn is_enabled(&self) -> bool {
        self.enabled || self.lines
    }

    fn bar(&self, len: u64, template: &str) -> ProgressBar {
        let pb = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr_with_hz(5));
        pb.set_style(
            ProgressStyle::with_template(template)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        pb.set_prefix(self.label.clone());
        pb
    }

    /// A bar over bytes for untimed work such as laying out files.
    pub fn bytes_bar(&self, total: u64) -> Option<ProgressBar> {
        self.enabled.then(|| {
            self.bar(
                total,
                "{prefix} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
        })
    }

    /// Updates the bar (or prints a line per second) until every worker has
    /// finished. `tick`, when given, is called at the interval given with it
    /// on this (the main) thread: it is how a distributed run hears from the
    /// other ranks (every millisecond), and how a run of groups watches them.
    pub fn watch<T>(
        &self,
        counters: &[&[Counter]],
        measure_start: Instant,
        runtime: Option<Duration>,
        handles: &[ScopedJoinHandle<'_, T>],
        mut tick: Option<(&mut dyn FnMut(), Duration)>,
    ) {
        if !self.enabled && !self.lines && tick.is_none() {
            return;
        }
        let step = if let Some((_, every)) = &tick {
            *every
        } else if self.lines {
            Duration::from_millis(20)
        } else {
            Duration::from_millis(200)
        };
        let pb = self.enabled.then(|| match (runtime, self.total_bytes) {
            (Some(rt), _) => self.bar(
                rt.as_millis().max(1) as u64,
                "{prefix} [{bar:30}] {elapsed_precise}  {msg}",
            ),
            (None, Some(total)) => self.bar(total, "{prefix} [{bar:30}] {bytes}/{total_bytes} eta {eta}  {msg}"),
            (None, None) => self.bar(0, "{prefix} {elapsed_precise} {msg}"),
        });
        let start = Instant::now();
        let (mut last_ops, mut last_bytes, mut last_t, mut s) = (0u64, 0u64, start, 1u64);
        let mut next_draw = start + Duration::from_millis(200);
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(step);
            if let Some((t, _)) = tick.as_mut() {
                t();
            }
            let now = Instant::now();
            let sum = |f: fn(&Counter) -> &std::sync::atomic::AtomicU64| -> u64 {
                counters
                    .iter()
                    .flat_map(|g| g.iter())
                    .map(|c| f(c).load(Ordering::Relaxed))
                    .sum()
            };
            if self.lines && now >= start + Duration::from_secs(s) {
                let (ops, bytes) = (sum(|c| &c.ops), sum(|c| &c.bytes));
                let phase = if now < measure_start { "warmup" } else { "execute" };
                eprintln!(
                    "{} {:>4} s {:>10} ops/s {:>9.2} MB/sec  {phase}",
                    self.label,
                    s,
                    ops - last_ops.min(ops),
                    (bytes - last_bytes.min(bytes)) as f64 / 1e6
                );
                (last_ops, last_bytes) = (ops, bytes);
                s += 1;
            }
            let Some(pb) = &pb else { continue };
            if now < next_draw {
                continue;
            }
            next_draw = now + Duration::from_millis(200);
            let (ops, bytes) = (sum(|c| &c.ops), sum(|c| &c.bytes));
            let iops = (ops - last_ops.min(ops)) as f64 / now.duration_since(last_t).as_secs_f64();
            (last_ops, last_t) = (ops, now);
            let rate = crate::units::fmt_rate(iops);
            match runtime {
                _ if now < measure_start => pb.set_message(format!("ramping up, {rate} IOPS")),
                Some(rt) => {
                    let done = now.saturating_duration_since(measure_start).min(rt);
                    pb.set_position(done.as_millis() as u64);
                    pb.set_message(format!("{:.0} s left, {rate} IOPS", (rt - done).as_secs_f64().ceil()));
                }
                None => {
                    pb.set_position(bytes);
                    pb.set_message(format!("{rate} IOPS"));
                }
            }
        }
        if let Some(pb) = pb {
            pb.finish_and_clear();
        }
    }
}
