//! The plan-file parser (TOML, then every workload's flags through the CLI
//! validation) must reject any input with an error, never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = fslab::plan::LabPlan::parse("fuzz.toml", text);
    }
});
