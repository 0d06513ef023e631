//! The profile hook: samples fslab's CPU with kernel stacks during each
//! timed phase (`telemetry::profile`) and puts `model::system::Profile`
//! into the cell, writing the cell's folded stacks into `--profile-dir`.

use crate::app::pipeline::CellHook;
use crate::model::system::{FoldedStack, PhaseProfile, Profile};
use crate::model::Cell;
use crate::plan::{PlanError, TelemetryPlan};
use crate::telemetry::profile::{self as prof, Profiler};
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;

pub struct ProfileHook {
    /// Where the folded stacks go (`super::profile_dir`).
    dir: PathBuf,
    profiler: Profiler,
    cell: Mutex<CellProfile>,
    /// Folded-stacks files written by this process (a repeated cell name gets "-2"...).
    written: Mutex<HashSet<String>>,
}

/// The profile of the cell being measured.
#[derive(Default)]
struct CellProfile {
    phase_name: String,
    phases: Vec<PhaseProfile>,
    /// Every stack of every phase, for the file.
    folded: Vec<(String, Vec<FoldedStack>)>,
    notes: Vec<String>,
    /// fslab's CPU time over the timed phases and the reader's share of it, ns.
    phase_cpu_ns: u64,
    reader_cpu_ns: u64,
    cpu_at_start: u64,
    /// The profiler's work between phases (stop, symbols, folding), ns.
    between_ns: u64,
    /// The cells of one run already got it (a fio segment's several cells).
    done: Option<Profile>,
}

impl ProfileHook {
    /// Probes the kernel once (exit 2 naming the flag when it refuses) and
    /// checks the profile directory.
    pub fn new(t: &TelemetryPlan, dir: PathBuf) -> Result<Self, PlanError> {
        match std::fs::metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(PlanError::new(
                    "--profile-dir",
                    format!("{} is not a directory", dir.display()),
                ))
            }
            Err(e) => return Err(PlanError::new("--profile-dir", format!("{}: {e}", dir.display()))),
        }
        let profiler = Profiler::new(t.profile_hz).map_err(|e| PlanError::new(e.flag, e.msg))?;
        // root passes permission bits, not a read-only mount, an immutable
        // directory or procfs: refused now, not after the run with the
        // stacks lost (the kernel's refusal, above, is the likelier news)
        crate::plan::refuse_pseudo_fs("--profile-dir", &dir)?;
        rustix::fs::access(&dir, rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK).map_err(|e| {
            PlanError::new(
                "--profile-dir",
                format!(
                    "'{}' is not a directory fslab can write its folded stacks into: {}",
                    dir.display(),
                    std::io::Error::from(e)
                ),
            )
        })?;
        Ok(ProfileHook {
            dir,
            profiler,
            cell: Mutex::new(CellProfile::default()),
            written: Mutex::new(HashSet::new()),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, CellProfile> {
        self.cell.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The file's name, unique among the files this process wrote.
    fn file_name(&self, cell: &str) -> String {
        let d = crate::dist::coordinator();
        let rank = (d.size() > 1).then(|| d.rank());
        let mut w = self.written.lock().unwrap_or_else(|e| e.into_inner());
        let mut name = prof::folded_file_name(cell, rank);
        let mut n = 1;
        while w.contains(&name) {
            n += 1;
            name = prof::folded_file_name(&format!("{cell}-{n}"), rank);
        }
        w.insert(name.clone());
        name
    }

    fn finish(&self, cell_name: &str, st: &mut CellProfile) -> Profile {
        let mut notes = self.profiler.notes.clone();
        notes.append(&mut st.notes);
        let mut text = String::new();
        for (phase, stacks) in &st.folded {
            for s in stacks {
                text.push_str(&format!("{phase};{} {}\n", s.stack, s.count));
            }
        }
        let mut folded_file = None;
        if !text.is_empty() {
            match prof::write_folded(&self.dir, &self.file_name(cell_name), &text) {
                Ok(p) => folded_file = Some(p.display().to_string()),
                Err(e) => notes.push(format!("folded stacks not written: {e}")),
            }
        }
        let threads_note = st
            .phases
            .iter()
            .filter(|p| p.lost > 0)
            .map(|p| format!("{}: {} samples lost (ring buffer full)", p.name, p.lost))
            .collect::<Vec<_>>();
        notes.extend(threads_note);
        if st.between_ns > 0 {
            notes.push(format!(
                "naming and folding the stacks took {:.2} s of CPU between the phases (not in their time)",
                st.between_ns as f64 / 1e9
            ));
        }
        Profile {
            event: "cpu-clock".into(),
            frequency_hz: self.profiler.hz() as u64,
            phases: std::mem::take(&mut st.phases),
            folded_file,
            overhead_pct: if st.phase_cpu_ns > 0 {
                (st.reader_cpu_ns as f64 * 1e4 / st.phase_cpu_ns as f64).round() / 100.0
            } else {
                0.0
            },
            notes,
        }
    }
}

impl CellHook for ProfileHook {
    fn before_timed(&self, _cell: &str) {
        *self.state() = CellProfile::default();
    }

    fn phase_started(&self, _phase: usize, name: &str) {
        let mut st = self.state();
        st.phase_name = name.to_string();
        if let Err(e) = self.profiler.start() {
            st.notes.push(format!("{name}: not profiled: {e}"));
        }
        st.cpu_at_start = prof::process_cpu_ns();
    }

    fn phase_ended(&self, _phase: usize) {
        let cpu = prof::process_cpu_ns();
        let mine = prof::own_cpu_ns();
        let raw = self.profiler.stop();
        let mut st = self.state();
        st.phase_cpu_ns += cpu.saturating_sub(st.cpu_at_start);
        st.reader_cpu_ns += raw.reader_cpu_ns;
        if raw.samples == 0 && raw.lost == 0 {
            return;
        }
        let name = std::mem::take(&mut st.phase_name);
        let (p, all) = self.profiler.phase(&name, &raw);
        st.phases.push(p);
        st.folded.push((name, all));
        st.between_ns += prof::own_cpu_ns().saturating_sub(mine);
    }

    fn after_timed(&self, cell: &mut Cell) {
        let mut st = self.state();
        if st.done.is_none() {
            if st.phases.is_empty() && st.notes.is_empty() {
                return;
            }
            let p = self.finish(&cell.name, &mut st);
            st.done = Some(p);
        }
        cell.profile = st.done.clone();
    }
}
