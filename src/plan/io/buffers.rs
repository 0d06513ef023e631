//! What timed writes carry (fio's scramble_buffers, refill_buffers,
//! zero_buffers, buffer_pattern, buffer_compress_percentage,
//! dedupe_percentage) and how written data is verified (verify=md5, crc64,
//! sha256, meta, pattern, do_verify, verify_backlog, verify_fatal).

use serde::{Deserialize, Serialize};

/// The largest pattern fio takes (lib/pattern.h MAX_PATTERN_SIZE).
pub const MAX_PATTERN: usize = 512;

/// The contents of write buffers. `Default` is `fslab io`'s behaviour:
/// random buffers, scrambled before every write (see `workload::fill`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct BufferPlan {
    /// Before each write, stamp every 512-byte chunk with the offset and a
    /// write counter and take the next of several random slices, so that no
    /// two written blocks are equal and the data does not compress (fio's
    /// scramble_buffers, which fio turns off with compression, verify and
    /// an explicit zero_buffers; the mapping does the same).
    pub scramble: bool,
    /// Fill the buffer anew before every write (fio's refill_buffers).
    pub refill: bool,
    /// Zeroed buffers (fio's zero_buffers).
    pub zero: bool,
    /// Buffers repeat this pattern (fio's buffer_pattern); empty = none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pattern: Vec<u8>,
    /// Percent of each chunk that compresses (zeros or the pattern); 1..=99.
    pub compress_pct: u32,
    /// The chunk `compress_pct` applies to; 0 = the block size.
    pub compress_chunk: u64,
    /// Percent of writes whose buffer repeats an earlier one (mode repeat).
    pub dedupe_pct: u32,
    /// fio's dedupe_mode=working_set: the repeated buffers are drawn from
    /// a working set of pages instead of the last one (None: repeat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_set: Option<WorkingSet>,
    /// fio's thread number of the job's first clone (0-based) and how many
    /// the run has: each clone's data are its own, as each fio thread's
    /// buf_state is, and dedupe_global spreads a working set over them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub td: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tds: u32,
    /// Verification beyond `IoPlan.verify`'s CRC32C header.
    pub verify: VerifyPlan,
    /// Options given explicitly while a fio job is mapped (fio's
    /// fio_option_is_set); cleared when the mapping is done.
    #[serde(skip)]
    pub given: Given,
}

impl Default for BufferPlan {
    fn default() -> Self {
        BufferPlan {
            scramble: true,
            refill: false,
            zero: false,
            pattern: Vec::new(),
            compress_pct: 0,
            compress_chunk: 0,
            dedupe_pct: 0,
            working_set: None,
            td: 0,
            tds: 0,
            verify: VerifyPlan::default(),
            given: Given::default(),
        }
    }
}

/// fio's dedupe working set (dedupe.c): `pct` percent of the job's size,
/// in pages of its smallest block, are the first pages the job's own data
/// would be (fio keeps their seeds); a repeated buffer is one of them,
/// drawn uniformly. With `global` (dedupe_global) the set is spread evenly
/// over the run's threads: its k-th share holds the first pages of the
/// k-th thread from the job's own, so the jobs repeat each other's pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorkingSet {
    pub pct: u32,
    pub global: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Which of fio's buffer options a job gave (they change others' defaults).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, schemars::JsonSchema)]
pub struct Given {
    pub refill: bool,
    pub zero: bool,
    /// buffer_compress_percentage or dedupe_percentage (fio's TD_F_COMPRESS).
    pub compress: bool,
    /// do_verify (fio's default: 1).
    pub do_verify: Option<bool>,
    /// dedupe_mode=working_set, dedupe_working_set_percentage (fio's
    /// default 5) and dedupe_global, settled once the job is read.
    pub working_set: bool,
    pub ws_pct: Option<u32>,
    pub dedupe_global: bool,
}

/// How a block's checksum is kept (fio's verify=).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VerifyKind {
    /// fslab's original header with a CRC32C of the block.
    #[default]
    Crc32c,
    Crc64,
    Md5,
    Sha256,
    /// The header alone (offset, job, generation), with a CRC32C of it.
    Meta,
    /// No header: the block is `VerifyPlan.pattern`, compared byte by byte.
    Pattern,
}

impl VerifyKind {
    /// fio's names (and `fslab io --verify`'s).
    pub fn parse(s: &str) -> Option<VerifyKind> {
        Some(match s {
            "crc32c" | "crc32c-intel" => VerifyKind::Crc32c,
            "crc64" => VerifyKind::Crc64,
            "md5" => VerifyKind::Md5,
            "sha256" => VerifyKind::Sha256,
            "meta" => VerifyKind::Meta,
            "pattern" => VerifyKind::Pattern,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            VerifyKind::Crc32c => "crc32c",
            VerifyKind::Crc64 => "crc64",
            VerifyKind::Md5 => "md5",
            VerifyKind::Sha256 => "sha256",
            VerifyKind::Meta => "meta",
            VerifyKind::Pattern => "pattern",
        }
    }

    /// Bytes at the start of each block this kind needs (`workload::verify`).
    pub fn header_len(self) -> usize {
        match self {
            VerifyKind::Crc32c => super::VERIFY_HEADER,
            VerifyKind::Pattern => 0,
            VerifyKind::Crc64 => 40 + 8,
            VerifyKind::Md5 => 40 + 16,
            VerifyKind::Sha256 => 40 + 32,
            VerifyKind::Meta => 40 + 4,
        }
    }
}

/// Verification of written blocks (used when `IoPlan.verify` is set).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct VerifyPlan {
    pub kind: VerifyKind,
    /// fio's verify_pattern: the payload of each block (with kind Pattern,
    /// the whole block); empty = random data.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pattern: Vec<u8>,
    /// Positions in `pattern` where the block's offset goes (fio's `%o`, 8 bytes).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pattern_offsets: Vec<usize>,
    /// A job that writes reads its blocks back and checks them once its
    /// writes are done (fio's do_verify; the fio mapping's default).
    /// `fslab io --verify` checks the blocks it reads and never reads a
    /// write-only job back.
    pub after_write: bool,
    /// Check the last N blocks written after every N writes (fio's verify_backlog; 0 = off).
    pub backlog: u64,
    /// Blocks checked each time the backlog is due (fio's verify_backlog_batch; 0 = backlog).
    pub batch: u64,
    /// The job stops at its first mismatch (fio's verify_fatal).
    pub fatal: bool,
}

/// `fslab io`'s --buffer-pattern and --buffer-compress-percentage, with
/// fio's meaning (options.c str_buffer_pattern_cb, fixup_options): a
/// pattern ends the scramble; compression refills every write (so its
/// random part differs), and 100% is zeroed buffers. `reads`: the run also
/// reads, into the same buffers, so a pattern is written anew each time.
pub(in crate::plan) fn from_args(a: &crate::cli::IoArgs, reads: bool) -> crate::plan::Result<BufferPlan> {
    use crate::plan::PlanError;
    let mut b = BufferPlan::default();
    let verifying = a.verify.is_some() || a.verify_only;
    let conflict = |flag: &str| {
        PlanError::new(
            flag,
            "conflicts with --verify: verified blocks carry their own header and checksum",
        )
    };
    if let Some(p) = &a.buffer_pattern {
        if verifying {
            return Err(conflict("--buffer-pattern"));
        }
        let (pattern, _) = parse_pattern(p, false).map_err(|e| PlanError::new("--buffer-pattern", e))?;
        b.pattern = pattern;
        b.scramble = false;
        b.refill = reads;
    }
    if let Some(p) = &a.buffer_compress_percentage {
        if verifying {
            return Err(conflict("--buffer-compress-percentage"));
        }
        let pct = crate::units::parse_percent(p).map_err(|e| PlanError::new("--buffer-compress-percentage", e))?;
        match pct {
            0 => {}
            // fully compressible: zeroed once (or the pattern, which wins)
            100 => {
                b.zero = true;
                b.scramble = false;
            }
            _ => {
                b.compress_pct = pct;
                b.refill = true;
                b.scramble = false;
            }
        }
    }
    Ok(b)
}

impl BufferPlan {
    /// True when nothing differs from `fslab io`'s default.
    pub fn is_default(&self) -> bool {
        *self == BufferPlan::default()
    }
}

/// A pattern in fio's syntax (lib/pattern.c): `0x` hex bytes of any length,
/// decimal numbers (-2^31..2^31, little-endian, as few bytes as they need),
/// `"strings"`, and, with `formats`, `%o` (the block's offset, 8 bytes),
/// in any combination (`"abc"0x0a`, `0xdead%o`). Returns the bytes and the
/// positions of the `%o`s.
pub fn parse_pattern(input: &str, formats: bool) -> Result<(Vec<u8>, Vec<usize>), String> {
    let s = input.trim();
    if s.is_empty() {
        return Err("an empty pattern".into());
    }
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut fmts = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let end = s[i + 1..]
                    .find('"')
                    .ok_or_else(|| format!("'{s}': a string without its closing quote"))?;
                out.extend_from_slice(&b[i + 1..i + 1 + end]);
                i += end + 2;
            }
            b'%' => {
                if !formats || !s[i..].starts_with("%o") {
                    return Err(format!(
                        "'{s}': '{}' is not a pattern format{}",
                        &s[i..(i + 2).min(s.len())],
                        if formats {
                            " (only %o, the offset)"
                        } else {
                            " (buffer_pattern takes none)"
                        }
                    ));
                }
                fmts.push(out.len());
                out.extend_from_slice(&[0; 8]);
                i += 2;
            }
            b'\'' => return Err(format!("'{s}': patterns from a file ('name') are not supported")),
            b'0' if b.get(i + 1).is_some_and(|c| *c == b'x' || *c == b'X')
                && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit) =>
            {
                i = hex_bytes(s, i, &mut out)?;
            }
            c if c == b'-' || c == b'+' || c.is_ascii_digit() => {
                i = decimal_bytes(s, i, &mut out)?;
            }
            c if c.is_ascii_whitespace() => i += 1,
            _ => return Err(format!("'{s}': '{}' starts no number, \"string\" or format", &s[i..])),
        }
        if out.len() > MAX_PATTERN {
            return Err(format!("'{s}': longer than fio's {MAX_PATTERN} bytes"));
        }
    }
    if out.is_empty() {
        return Err(format!("'{s}': an empty pattern"));
    }
    Ok((out, fmts))
}

/// `parse_pattern`'s `0x` hex bytes starting at `i` (at the `0`): appends
/// them to `out` and returns where the number ends.
fn hex_bytes(s: &str, i: usize, out: &mut Vec<u8>) -> Result<usize, String> {
    let b = s.as_bytes();
    let start = i + 2;
    let mut end = start;
    while end < b.len() && b[end].is_ascii_hexdigit() {
        end += 1;
    }
    // "0xff0x14": the 0 before the next x belongs to the next number
    if end < b.len() && (b[end] == b'x' || b[end] == b'X') && b[end - 1] == b'0' {
        end -= 1;
    }
    let hex = &s[start..end];
    if hex.is_empty() {
        return Err(format!("'{s}': 0x without hex digits"));
    }
    // an odd number of digits: the first stands alone ("0xabc" = 0a bc)
    let (first, rest) = hex.split_at(hex.len() % 2);
    if !first.is_empty() {
        out.push(u8::from_str_radix(first, 16).map_err(|e| e.to_string())?);
    }
    for k in (0..rest.len()).step_by(2) {
        out.push(u8::from_str_radix(&rest[k..k + 2], 16).map_err(|e| e.to_string())?);
    }
    Ok(end)
}

/// `parse_pattern`'s decimal number starting at `i`: appends its
/// little-endian bytes (as few as it needs) to `out` and returns where it ends.
fn decimal_bytes(s: &str, i: usize, out: &mut Vec<u8>) -> Result<usize, String> {
    let b = s.as_bytes();
    let mut end = i + 1;
    while end < b.len() && b[end].is_ascii_digit() {
        // a following "0x" starts the next number
        if b[end] == b'0' && b.get(end + 1).is_some_and(|c| *c == b'x' || *c == b'X') {
            break;
        }
        end += 1;
    }
    let v: i64 = s[i..end]
        .parse()
        .map_err(|_| format!("'{s}': '{}' is not a number", &s[i..end]))?;
    if v > i32::MAX as i64 || v < i32::MIN as i64 {
        return Err(format!(
            "'{s}': {v} is outside a 32-bit integer (write bigger values in hex, 0x...)"
        ));
    }
    if v == 0 {
        out.push(0);
    } else {
        let mut u = v as i32 as u32;
        while u != 0 {
            out.push(u as u8);
            u >>= 8;
        }
    }
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Vec<u8> {
        parse_pattern(s, true).unwrap().0
    }

    #[test]
    fn fio_pattern_examples() {
        // the examples of fio's lib/pattern.c
        assert_eq!(p("\"abcd\""), b"abcd");
        assert_eq!(p("-1024"), [0x00, 0xfc, 0xff, 0xff]);
        assert_eq!(p("66"), [0x42]);
        assert_eq!(p("0xFF0X1"), [0xff, 0x01]);
        assert_eq!(p("\"123\"0xFFeeCC"), [0x31, 0x32, 0x33, 0xff, 0xee, 0xcc]);
        let (v, f) = parse_pattern("-100xab\"1\"%o\"2\"", true).unwrap();
        assert_eq!(&v[..6], &[0xf6, 0xff, 0xff, 0xff, 0xab, 0x31]);
        assert_eq!(f, vec![6]);
        assert_eq!(v.len(), 15);
        let (v, f) = parse_pattern("%o0xdeadbeef%o", true).unwrap();
        assert_eq!(v.len(), 20);
        assert_eq!(f, vec![0, 12]);
        assert_eq!(p("0xfefefefefefefefefefefefefefefefefefefefefe"), vec![0xfe; 21]);
        assert_eq!(p("0"), [0]);
        assert_eq!(p("0xabc"), [0x0a, 0xbc]);
        assert!(parse_pattern("'/etc/passwd'", false).unwrap_err().contains("file"));
    }

    #[test]
    fn bad_patterns_say_why() {
        assert!(parse_pattern("%o", false).unwrap_err().contains("takes none"));
        assert!(parse_pattern("\"abc", false).unwrap_err().contains("closing quote"));
        assert!(parse_pattern("99999999999", false).unwrap_err().contains("32-bit"));
        assert!(parse_pattern("zz", false).is_err());
        assert!(parse_pattern("", false).is_err());
        assert!(parse_pattern(&format!("0x{}", "ab".repeat(600)), false).is_err());
    }
}
