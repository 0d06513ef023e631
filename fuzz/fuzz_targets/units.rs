//! Sizes, counts, durations and percentages: any text parses or errs, never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = fslab::units::parse_size(text);
        let _ = fslab::units::parse_count(text);
        let _ = fslab::units::parse_duration(text);
        let _ = fslab::units::parse_percent(text);
    }
});
