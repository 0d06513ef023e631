//! The commands that read result files: `fslab compare` (a comparison
//! table, refused with exit code 2 when the files ran different workloads
//! unless --force) and `fslab report` (the HTML page, written only once it
//! is whole).

use super::results::print_bytes;
use super::usage;
use crate::plan;
use std::process::ExitCode;

/// Runs `fslab compare`.
pub fn run_compare(a: &crate::cli::CompareArgs) -> ExitCode {
    use crate::model::{read_results, Report};
    use crate::report::compare;
    let style = match plan::stdout_style(&a.layout) {
        Ok(s) => s,
        Err(e) => return usage(e),
    };
    let reports = match read_results(&a.files) {
        Ok(r) => r,
        Err(e) => return usage(e),
    };
    let sources: Vec<(String, &Report)> = reports.iter().map(|(l, r)| (l.clone(), r)).collect();
    let c = compare::build(&sources, a.baseline.as_deref());
    if let Some(b) = &a.baseline {
        if !c.filesystems.contains(b) {
            return usage(plan::PlanError::new(
                "--baseline",
                format!("'{b}' is none of the compared: {}", c.filesystems.join(", ")),
            ));
        }
    }
    if !a.force {
        if let Some(w) = c.workloads.iter().find(|w| !w.differs.is_empty()) {
            eprintln!(
                "fslab: error: {}",
                crate::units::shown(&compare::refusal(w, &a.files, c.workloads.len() > 1))
            );
            return ExitCode::from(2);
        }
    }
    print_bytes(&crate::report::terminal_bytes(
        compare::render_as(&c, style).into_bytes(),
    ))
}

/// Runs `fslab report`.
pub fn run_report(a: &crate::cli::ReportArgs) -> ExitCode {
    use crate::model::{read_results, Report};
    use crate::report::html;
    // checked before anything is read; written only once the page is whole
    let out = match plan::check_path("--output", std::path::Path::new(&a.output)) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let reports = match read_results(&a.files) {
        Ok(r) => r,
        Err(e) => return usage(e),
    };
    let sources: Vec<(String, &Report)> = reports.iter().map(|(l, r)| (l.clone(), r)).collect();
    let page = html::render(&sources);
    if let Err(e) = plan::write_atomically(&out, page.as_bytes()) {
        eprintln!("fslab: error: --output: cannot write '{}': {e}", a.output);
        return ExitCode::from(1);
    }
    println!("wrote {}", a.output);
    ExitCode::SUCCESS
}
