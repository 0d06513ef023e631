//! fio's size suffixes, read as fio reads them. With `kb_base=1024` (fio's
//! default) `k`, `kb`, `m`, `mb` ... are powers of 1024 and `KiB`, `MiB`
//! ... powers of 1000: fio's "compatibility" inversion (HOWTO, kb_base;
//! `__get_mult_bytes` in parse.c). With `kb_base=1000` it is the other way
//! round, and a bare `k` is 1000. fslab's own parser reads every suffix as
//! binary, so `bs=4KiB` gave 4096-byte blocks where fio's are 4000 bytes:
//! a value whose fio meaning differs is rewritten here to plain bytes
//! before the mapping reads it (values that mean the same are left as
//! written, so messages still quote them as the user wrote them).

use crate::plan::fiojob::{Job, Opt};

/// The options whose values fio parses as byte sizes (kilo parsing with
/// `kb_base`). Times (`runtime=1m` is a minute), counts and names are not.
const SIZE_KEYS: &[&str] = &[
    "bs",
    "blocksize",
    "bsrange",
    "blocksize_range",
    "bssplit",
    "ba",
    "blockalign",
    "size",
    "filesize",
    "io_size",
    "io_limit",
    "offset",
    "offset_increment",
    "number_ios",
    "rate",
    "rate_min",
    "buffer_compress_chunk",
    "zonesize",
    "zonerange",
    "zoneskip",
    "verify_interval",
    "verify_offset",
];

/// The job's kb_base (fio parses it before the job's other options,
/// wherever it is written: its priority is 1). Err: (file:line, why).
fn kb_base(job: &Job) -> Result<u64, (String, String)> {
    match job.get("kb_base") {
        None => Ok(1024),
        Some(o) => match o.value.as_deref().map(str::trim) {
            Some("1024") => Ok(1024),
            Some("1000") => Ok(1000),
            _ => Err((
                o.at.clone(),
                format!(
                    "kb_base: '{}' is not 1024 or 1000",
                    crate::units::excerpt(o.value.as_deref().unwrap_or(""))
                ),
            )),
        },
    }
}

/// The job's options with their sizes as fio reads them under the job's
/// kb_base (a bad kb_base goes to `m.bad`); the normal output prints
/// kb_base=1000's SI units first, as fio's.
pub(super) fn as_fio_reads_all(job: &Job, m: &mut super::Mapped) -> Vec<Opt> {
    let kb = kb_base(job).unwrap_or_else(|bad| {
        m.bad.push(bad);
        1024
    });
    job.opts.iter().map(|o| as_fio_reads(o, kb)).collect()
}

/// `o` with its value in bytes where fio's reading of a suffix differs
/// from fslab's (binary) one; `o` itself otherwise.
fn as_fio_reads(o: &Opt, kb: u64) -> Opt {
    let key = o.key.replace('-', "_");
    match o.value.as_deref() {
        Some(v) if SIZE_KEYS.contains(&key.as_str()) => Opt {
            value: Some(rewrite(v, kb)),
            ..o.clone()
        },
        _ => o.clone(),
    }
}

/// Each `DIGITS SUFFIX` token of `v` (sizes inside ranges, splits and
/// lists too) whose fio value differs from 1024^power, as plain bytes.
fn rewrite(v: &str, kb: u64) -> String {
    let b = v.as_bytes();
    let mut out = String::with_capacity(v.len());
    let mut i = 0;
    while i < b.len() {
        let starts_number =
            b[i].is_ascii_digit() && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'.'));
        if !starts_number {
            out.push(v[i..].chars().next().expect("in bounds"));
            i += v[i..].chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let d_end = i + b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        let s_end = d_end + b[d_end..].iter().take_while(|c| c.is_ascii_alphabetic()).count();
        let suffix = &v[d_end..s_end];
        match (multiplier(suffix, kb), v[i..d_end].parse::<u64>()) {
            (Some(m), Ok(n)) if m != binary(suffix) && n.checked_mul(m).is_some() => out.push_str(&(n * m).to_string()),
            _ => out.push_str(&v[i..s_end]),
        }
        i = s_end;
    }
    out
}

fn is_iec(suffix: &str) -> bool {
    let s = suffix.to_ascii_lowercase();
    ["kib", "mib", "gib", "tib", "pib"].iter().any(|p| s.starts_with(p))
}

/// The power of a suffix: k 1, m 2, g 3, t 4, p 5; None for no suffix or one
/// fio does not scale.
fn power(suffix: &str) -> Option<u32> {
    match suffix.to_ascii_lowercase().chars().next()? {
        'k' => Some(1),
        'm' => Some(2),
        'g' => Some(3),
        't' => Some(4),
        'p' => Some(5),
        _ => None,
    }
}

/// What fio multiplies a number with `suffix` by under `kb`.
fn multiplier(suffix: &str, kb: u64) -> Option<u64> {
    let pow = power(suffix)?;
    let base = match (is_iec(suffix), kb) {
        (true, 1024) => 1000,
        (true, _) => 1024,
        (false, kb) => kb,
    };
    base.checked_pow(pow)
}

/// What fslab's parser multiplies a number with `suffix` by: 1024^power.
fn binary(suffix: &str) -> u64 {
    power(suffix).map_or(1, |p| 1024u64.pow(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_as_fio_reads_them() {
        // measured with fio 3.33: bs=4KiB gave 4000-byte blocks, size=1m
        // with kb_base=1000 1,000,000 bytes
        assert_eq!(rewrite("4k", 1024), "4k");
        assert_eq!(rewrite("4kb", 1024), "4kb");
        assert_eq!(rewrite("4KiB", 1024), "4000");
        assert_eq!(rewrite("8MiB", 1024), "8000000");
        assert_eq!(rewrite("4KiB", 1000), "4KiB");
        assert_eq!(rewrite("4k", 1000), "4000");
        assert_eq!(rewrite("1m", 1000), "1000000");
        assert_eq!(rewrite("4KiB-64KiB", 1024), "4000-64000");
        assert_eq!(rewrite("4KiB/50:64k/50", 1024), "4000/50:64k/50");
        assert_eq!(rewrite("1.5MiB", 1024), "1.5MiB", "a fraction is left as written");
        assert_eq!(rewrite("50%", 1000), "50%");
        assert_eq!(rewrite("4096", 1000), "4096");
        assert_eq!(rewrite("99999999999999999999k", 1000), "99999999999999999999k");
    }
}
