//! Where results go: every requested output rendered by its reporter
//! (`report`) and written, files replaced atomically as each cell
//! finishes, stdout once at the end; and the bytes a command prints.

use crate::model::Report;
use crate::plan::Outputs;
use crate::report;
use std::io::Write;
use std::process::ExitCode;

/// Writes every requested output: each file is replaced atomically (see
/// `plan::write_atomically`), so calling this again after each cell of a
/// long run keeps a complete file on disk at every moment. stdout gets its
/// output only with `final_`. The report becomes what an abort writes.
pub fn write_outputs(r: &Report, outputs: &mut Outputs, final_: bool) -> std::io::Result<()> {
    {
        let _serial = crate::interrupt::serial();
        super::abort::publish_report(r);
        write_files(r, outputs)?;
        if final_ {
            super::abort::results_written();
        }
    }
    // outside the lock: a stalled stdout pipe must not hold up an abort
    if final_ {
        write_stdout(r, outputs)?;
    }
    Ok(())
}

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

/// Writes generated text to stdout; a reader that went away (`| head`) is
/// no error of ours.
pub(crate) fn print_bytes(b: &[u8]) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(b).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fslab: error: stdout: {e}");
            ExitCode::from(1)
        }
    }
}
