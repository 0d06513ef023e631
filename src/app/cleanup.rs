//! `fslab cleanup [PATH...]`: what a killed run left behind (work
//! directories, scratch mounts and loop devices), found and removed
//! (`target::cleanup`); one line per place, exit code 1 if one stayed.

use crate::plan;
use std::process::ExitCode;

/// Runs `fslab cleanup`.
pub fn run_cleanup(a: &crate::cli::CleanupArgs) -> ExitCode {
    use crate::target::cleanup;
    let places: Vec<std::path::PathBuf> = if a.paths.is_empty() {
        let mut v = vec![std::path::PathBuf::from(".")];
        let scratch = std::path::PathBuf::from(plan::lab::DEFAULT_SCRATCH_DIR);
        if scratch.is_dir() && scratch.canonicalize().ok() != std::path::Path::new(".").canonicalize().ok() {
            v.push(scratch);
        }
        v
    } else {
        a.paths.iter().map(Into::into).collect()
    };
    let found = match cleanup::scan(&places) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("fslab: error: cleanup: {e}");
            return ExitCode::from(2);
        }
    };
    for (d, why) in &found.live {
        println!("kept {} ({why})", crate::units::shown(&d.display().to_string()));
    }
    for s in &found.stale {
        println!(
            "{} {}",
            if a.dry_run { "would remove" } else { "removing" },
            crate::units::shown(&s.path.display().to_string())
        );
    }
    if a.dry_run {
        return ExitCode::SUCCESS;
    }
    let results = cleanup::remove(found);
    let mut removed = 0;
    for (_, r) in &results {
        match r {
            Ok(()) => removed += 1,
            Err(e) => eprintln!("fslab: error: {e}"),
        }
    }
    println!(
        "removed {removed} leftover work director{}",
        if removed == 1 { "y" } else { "ies" }
    );
    if removed == results.len() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
