//! The NBENCH load-file parser must reject any input with an error, never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = fslab::plan::loadfile::LoadFile::parse("fuzz.load", text);
    }
});
