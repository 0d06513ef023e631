//! Where results go: every requested output rendered by its reporter
//! (`report`) and written, files replaced atomically as each cell
//! finishes, stdout once at the end; and the bytes a command prints.

use super::outputs::{write_files, write_stdout};
use crate::model::Report;
use crate::plan::Outputs;
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
