//! bonnie++ 1.98 CSV (the format bonnie++ 1.98 and 2.00 print last), one line
//! per metadata cell, read by the installed `bon_csv2txt` and `bon_csv2html`.
//!
//! Checked against bonnie++ 2.00a itself: `-n 3:512:128:5` prints
//! `3,512,128,,5` in fields 21..25 (field 24 stays empty, the directory count
//! is field 25). A phase under 0.5 s prints `+++++` / `+++`, as bonnie++ does;
//! latency is the worst single operation with a unit. bonnie++ has no xattr
//! option, so fslab marks its xattr runs in the name field, which both tools
//! print: `xa256-host` (one 256-byte xattr), `xa2x44-host` (two, largest 44 B).

use crate::model::{Cell, DirResult, Report};
use crate::report::render::Reporter;

pub struct BonnieCsv;

/// bonnie++'s latency text: the largest unit that keeps 4 digits or fewer.
fn latency(ns: u64) -> String {
    let us = ns / 1_000;
    if us < 10_000 {
        format!("{us}us")
    } else if us < 10_000_000 {
        format!("{}ms", us / 1_000)
    } else {
        format!("{}s", us / 1_000_000)
    }
}

fn name(r: &Report, c: &Cell) -> String {
    let host = r.host.hostname.replace(',', "_");
    let sizes: Vec<usize> = c
        .plan
        .meta()
        .map(|p| p.xattrs.iter().map(|x| x.size).collect())
        .unwrap_or_default();
    match sizes.len() {
        0 => host,
        1 => format!("xa{}-{host}", sizes[0]),
        n => format!("xa{n}x{}-{host}", sizes.iter().max().unwrap_or(&0)),
    }
}

fn line(r: &Report, c: &Cell) -> String {
    let p = c.plan.meta();
    let mut f: Vec<String> = vec![String::new(); 50];
    f[0] = "1.98".into();
    f[1] = format!("fslab-{}", r.fslab_version);
    f[2] = name(r, c);
    f[3] = p.map_or(1, |p| p.jobs).to_string();
    // bonnie++ prints a C int; keep the low 31 bits of fslab's 64-bit seed.
    f[4] = (c.plan.seed() & 0x7fff_ffff).to_string();
    let files = p.map_or(0, |p| p.files);
    // files in units of 1024, as bonnie++ counts them (rounded up)
    f[21] = p
        .and_then(|p| p.bonnie)
        .map_or(files.div_ceil(1024), |b| b.files_k)
        .to_string();
    let (min, max, dirs) = p.map_or((0, 0, 1), |p| (p.size_min, p.size_max, p.dirs));
    if max > 0 {
        f[22] = max.to_string();
        f[23] = min.to_string();
    }
    if dirs > 1 {
        f[25] = dirs.to_string();
    }
    let phases = [
        "seq-create",
        "seq-stat",
        "seq-delete",
        "random-create",
        "random-stat",
        "random-delete",
    ];
    for (i, ph) in phases.iter().enumerate() {
        let Some(d) = c.directions.iter().find(|d| d.phase.as_deref() == Some(ph)) else {
            continue;
        };
        let (rate, cpu) = rate_cpu(d);
        f[26 + 2 * i] = rate;
        f[27 + 2 * i] = cpu;
        f[44 + i] = latency(d.lat.max_ns);
    }
    f.join(",")
}

/// Rate and %CPU as bonnie++ prints them, `+++++`/`+++` for phases under 0.5 s.
fn rate_cpu(d: &DirResult) -> (String, String) {
    if d.elapsed_ns.unwrap_or(0) < 500_000_000 {
        ("+++++".into(), "+++".into())
    } else {
        (
            format!("{}", d.iops as u64),
            format!("{}", d.cpu_percent.unwrap_or(0.0).round() as u64),
        )
    }
}

impl Reporter for BonnieCsv {
    fn render(&self, r: &Report) -> Vec<u8> {
        let mut out = String::new();
        for c in r
            .cells
            .iter()
            .filter(|c| c.directions.iter().any(|d| d.phase.is_some()))
        {
            out.push_str(&line(r, c));
            out.push('\n');
        }
        out.into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_units() {
        assert_eq!(latency(211_000), "211us");
        assert_eq!(latency(1_856_000), "1856us");
        assert_eq!(latency(12_000_000), "12ms");
        assert_eq!(latency(25_000_000_000), "25s");
    }
}
