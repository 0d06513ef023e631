//! The fio job-file parser and its mapping onto fslab's plans must reject
//! any input with an error, never panic. The input is a job file, then
//! (after a line `--`) command-line arguments, one per whitespace-separated
//! word: inline comments, `$ncpus`-style keywords and arithmetic, `--name=global`,
//! command-line globals and every ioengine (the metadata engines, the refused ones).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (file, cli) = text.split_once("\n--\n").unwrap_or((text, ""));
    let cli: Vec<String> = cli.split_whitespace().map(String::from).collect();
    let _ = fslab::plan::fiojob::parse_text("fuzz.fio", file);
    let _ = fslab::plan::fiojob::parse_cli(&cli);
    for v in file.lines().chain(cli.iter().map(|s| s.as_str())) {
        let _ = fslab::plan::fiojob::arith::eval(v, true);
        let _ = fslab::plan::fiojob::arith::eval(v, false);
    }
    let _ = fslab::plan::fio::plan_text(file, &cli);
});
