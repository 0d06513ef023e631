//! Every requested output rendered by its reporter and written: files
//! replaced atomically, stdout through the terminal filter. Knows nothing
//! of aborts, so that both the everyday writer (`results`) and the abort
//! (`abort`) use it.

use crate::model::Report;
use crate::plan::Outputs;
use crate::report;
use std::io::Write;

/// The outputs that go to files, each replaced atomically. The caller holds
/// the serial lock (or is an abort that gave up waiting for it).
pub(crate) fn write_files(r: &Report, outputs: &Outputs) -> std::io::Result<()> {
    for o in &outputs.0 {
        if let Some(p) = &o.path {
            crate::plan::write_atomically(p, &report::reporter(o.format).render(r))?;
        }
    }
    Ok(())
}

/// The output that goes to stdout, if one does, without control
/// characters from names (`terminal_bytes`).
pub(crate) fn write_stdout(r: &Report, outputs: &Outputs) -> std::io::Result<()> {
    for o in outputs.0.iter().filter(|o| o.path.is_none()) {
        let mut out = std::io::stdout().lock();
        let named = |e: std::io::Error| std::io::Error::new(e.kind(), format!("stdout: {e}"));
        out.write_all(&report::terminal_bytes(report::reporter(o.format).render(r)))
            .map_err(named)?;
        out.flush().map_err(named)?;
    }
    Ok(())
}
