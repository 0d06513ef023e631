//! `--anatomy` and `--explain-slow` as a cell hook: one BPF session for the
//! command (loaded once), its tracer installed for the runner's
//! workers, each cell's figures taken after its timed phases.

use super::super::pipeline::CellHook;
use crate::model::anatomy::Anatomy;
use crate::model::Cell;
use crate::plan::TelemetryPlan;
use crate::telemetry::anatomy::{Options, Session};

pub struct AnatomyHook {
    /// The session, or the one line saying why nothing is observed.
    session: Result<Session, String>,
    layers: bool,
}

impl AnatomyHook {
    pub fn open(t: &TelemetryPlan) -> AnatomyHook {
        let session = Session::open(Options {
            explain_slow_ns: t.explain_slow_ns,
            layers: t.anatomy,
        });
        match &session {
            Ok(s) => crate::stats::anatomy::install(Some(s.tracer())),
            Err(e) => {
                let flag = if t.anatomy { "--anatomy" } else { "--explain-slow" };
                eprintln!("fslab: note: {flag}: not observed: {e}; the cells are measured without it");
            }
        }
        AnatomyHook {
            session,
            layers: t.anatomy,
        }
    }
}

impl CellHook for AnatomyHook {
    fn before_timed(&self, _cell: &str) {
        if let Ok(s) = &self.session {
            s.start_cell();
        }
    }

    fn after_timed(&self, cell: &mut Cell) {
        let mut a = match &self.session {
            Ok(s) => s.take_cell(),
            Err(e) => Anatomy {
                unobserved: vec![format!("nothing: {e}")],
                ..Default::default()
            },
        };
        let measured = cell.directions.iter().any(|d| d.ops > 0);
        if self.layers && self.session.is_ok() && a.kinds.is_empty() && measured {
            a.unobserved.push(
                "per-operation layers: the cell's operations were queued (io_uring, libaio) or not traced; device figures only"
                    .into(),
            );
        }
        if !self.layers {
            a.kinds.clear();
            a.layer_names.clear();
            a.devices.clear();
            a.lba.clear();
        }
        cell.anatomy = Some(a);
    }
}
