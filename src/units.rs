//! Units people type and read: binary sizes (`4k` = 4096), durations (`30s`,
//! `500ms`), percentages, and the display helpers the reporters share.
//!
//! Parsing lives here so that every flag and plan key agrees on what `4k`
//! means; fio and bonnie++ users expect binary multiples, so `k` is 1024.

use std::fmt;
use std::time::Duration;

/// The longest duration any flag or plan key accepts: 30 days.
///
/// Every duration ends up added to an `Instant` (start + ramp + runtime, a
/// deadline, the next paced operation, the end of a probe phase), and
/// `Instant + Duration` panics on overflow: near `u64::MAX` seconds it does
/// at once. 30 days is far beyond any benchmark run yet leaves sums of a few
/// of them (ramp + runtime, a probe's phases) orders of magnitude below any
/// overflow, so the runner's arithmetic needs no care beyond this bound.
pub const MAX_DURATION: Duration = Duration::from_secs(MAX_DURATION_DAYS * 86_400);
/// [`MAX_DURATION`] in days, for messages.
pub const MAX_DURATION_DAYS: u64 = 30;

/// The largest size any flag or plan key accepts: 8 EiB - 1, the largest file
/// offset Linux has (`loff_t` is signed 64-bit), so no file, device or
/// amount of I/O can be larger; sizes above it are typing mistakes.
pub const MAX_SIZE: u64 = i64::MAX as u64;

/// Why a unit string was rejected; the caller adds the flag name.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UnitError {
    #[error("'{}' is not a size (examples: 4096, 4k, 16KiB, 1g)", excerpt(.0))]
    Size(String),
    #[error("'{}' is larger than 8 EiB, the largest file size Linux has", excerpt(.0))]
    SizeTooLarge(String),
    #[error("'{}' is not a duration (examples: 500ms, 30s, 2m, 1h)", excerpt(.0))]
    Duration(String),
    #[error("'{}' is longer than the {MAX_DURATION_DAYS}-day maximum", excerpt(.0))]
    DurationTooLong(String),
    #[error("'{}' is not a percentage between 0 and 100", excerpt(.0))]
    Percent(String),
    #[error("'{}' is not a whole number", excerpt(.0))]
    Count(String),
}

/// Parses a size with binary multiples: `4k` and `4KiB` are 4096, `1g` is 2^30.
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    let t = s.trim();
    if t.is_empty() || t.starts_with('-') {
        return Err(UnitError::Size(s.to_string()));
    }
    match parse_size::Config::new().with_binary().parse_size(t) {
        Ok(v) if v <= MAX_SIZE => Ok(v),
        Ok(_) | Err(parse_size::Error::PosOverflow) => Err(UnitError::SizeTooLarge(s.to_string())),
        Err(_) => Err(UnitError::Size(s.to_string())),
    }
}

/// Parses a count that may carry a decimal multiple, as in `--files 100k`
/// (100000) or `--rate-iops 2k`; counts of things are decimal, sizes binary.
pub fn parse_count(s: &str) -> Result<u64, UnitError> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1_000),
        Some((i, 'm' | 'M')) => (&t[..i], 1_000_000),
        Some((i, 'g' | 'G')) => (&t[..i], 1_000_000_000),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| UnitError::Count(s.to_string()))
}

/// Parses a duration: `500ms`, `30s`, `2m`, `1h`, `1m30s`; a bare number is
/// seconds, as in fio. At most [`MAX_DURATION`].
pub fn parse_duration(s: &str) -> Result<Duration, UnitError> {
    let t = s.trim();
    let ns = if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        // a bare number of seconds; too many digits for u128 is too long too
        t.parse::<u128>().ok().and_then(|secs| secs.checked_mul(1_000_000_000))
    } else {
        parse_duration_parts(t).map_err(|()| UnitError::Duration(s.to_string()))?
    };
    match ns {
        Some(ns) if ns <= MAX_DURATION.as_nanos() => {
            // below the bound, so the seconds fit a u64
            Ok(Duration::new((ns / 1_000_000_000) as u64, (ns % 1_000_000_000) as u32))
        }
        _ => Err(UnitError::DurationTooLong(s.to_string())),
    }
}

/// `1h30m`, `1.5s`, `250 ms`: numbers with units, summed with checked
/// arithmetic (humantime's parser panics on an overflowing sum, which
/// fuzzing found; a benchmark must answer bad input with an error).
/// Err for a malformed string, Ok(None) for a well-formed one whose
/// nanoseconds overflow (too long whatever the bound), else the nanoseconds.
fn parse_duration_parts(t: &str) -> Result<Option<u128>, ()> {
    let mut total: Option<u128> = Some(0);
    let mut rest = t.trim();
    if rest.is_empty() {
        return Err(());
    }
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, after) = rest.split_at(num_end);
        let after = after.trim_start();
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.' || c.is_whitespace())
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_end);
        let per_unit: u128 = match unit {
            "ns" | "nsec" => 1,
            "us" | "µs" | "usec" => 1_000,
            "ms" | "msec" => 1_000_000,
            "s" | "sec" | "secs" | "second" | "seconds" => 1_000_000_000,
            "m" | "min" | "mins" | "minute" | "minutes" => 60_000_000_000,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000_000_000,
            "d" | "day" | "days" => 86_400_000_000_000,
            _ => return Err(()),
        };
        let (int, frac) = match num.split_once('.') {
            Some((i, f)) => (i, f),
            None => (num, ""),
        };
        if int.is_empty() && frac.is_empty() || frac.contains('.') || frac.len() > 9 {
            return Err(());
        }
        // digits only from here: a failed parse is a number past u128, too long
        let int: Option<u128> = if int.is_empty() { Some(0) } else { int.parse().ok() };
        let mut part = int.and_then(|i| i.checked_mul(per_unit));
        if !frac.is_empty() {
            let f: u128 = frac.parse().map_err(|_| ())?;
            // f < 10^9 and per_unit < 10^14: no overflow
            part = part.and_then(|p| p.checked_add(f * per_unit / 10u128.pow(frac.len() as u32)));
        }
        total = total.zip(part).and_then(|(t, p)| t.checked_add(p));
        rest = next.trim_start();
    }
    Ok(total)
}

/// Parses a percentage `0..=100`, with or without a trailing `%`.
pub fn parse_percent(s: &str) -> Result<u32, UnitError> {
    let t = s.trim().trim_end_matches('%');
    match t.parse::<u32>() {
        Ok(p) if p <= 100 => Ok(p),
        _ => Err(UnitError::Percent(s.to_string())),
    }
}

/// A byte count shown with a binary unit (`16.0 KiB`, `1.50 GiB`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
        let mut v = self.0 as f64;
        let mut i = 0;
        while v >= 1024.0 && i < UNITS.len() - 1 {
            v /= 1024.0;
            i += 1;
        }
        if i == 0 {
            write!(f, "{} B", self.0)
        } else {
            write!(f, "{:.*} {}", if v < 10.0 { 2 } else { 1 }, v, UNITS[i])
        }
    }
}

/// A latency in integer nanoseconds shown with a unit that keeps 3 significant digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nanos(pub u64);

impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0 as f64;
        let (v, unit) = if n < 1e3 {
            return write!(f, "{} ns", self.0);
        } else if n < 1e6 {
            (n / 1e3, "µs")
        } else if n < 1e9 {
            (n / 1e6, "ms")
        } else {
            (n / 1e9, "s")
        };
        let prec = if v < 10.0 {
            2
        } else if v < 100.0 {
            1
        } else {
            0
        };
        write!(f, "{v:.prec$} {unit}")
    }
}

/// Whether `c` must not reach a terminal as it is: C0 and C1 control
/// characters and DEL (escape sequences, carriage returns, bells) and the
/// bidirectional overrides and isolates, which reorder what a terminal or
/// editor shows ("Trojan Source").
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `c` escaped as `\x1b` (or `\u{202e}` above U+00FF).
fn push_escaped(out: &mut String, c: char) {
    use std::fmt::Write;
    if (c as u32) < 0x100 {
        let _ = write!(out, "\\x{:02x}", c as u32);
    } else {
        let _ = write!(out, "\\u{{{:x}}}", c as u32);
    }
}

/// `s` made safe for a terminal and for a one-line message: every character
/// [`is_unsafe_char`] says is unsafe (newlines and tabs too) is escaped as
/// `\x1b`, `\x0a`, `\u{202e}`. Names from plans, job files and result files
/// pass through this before fslab prints them, so that a name cannot move
/// the cursor, recolour the screen, start a forged line or hide text.
pub fn shown(s: &str) -> std::borrow::Cow<'_, str> {
    shown_keeping(s, &[])
}

/// [`shown`], but the characters in `keep` (a rendered report's `\n`) pass.
pub fn shown_keeping<'a>(s: &'a str, keep: &[char]) -> std::borrow::Cow<'a, str> {
    if !s.chars().any(|c| is_unsafe_char(c) && !keep.contains(&c)) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_unsafe_char(c) && !keep.contains(&c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Text bound for a terminal (stdout) made safe whatever format it is in:
/// C0 control characters other than newline and tab become `\x1b`; DEL,
/// C1 controls and the bidirectional overrides become `\u009b`, which is
/// also a valid escape inside a JSON string (where serde_json leaves them
/// raw: it escapes only C0, which therefore never appear raw in JSON).
pub fn terminal_safe(s: &str) -> std::borrow::Cow<'_, str> {
    use std::fmt::Write;
    if !s.chars().any(|c| is_unsafe_char(c) && c != '\n' && c != '\t') {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_unsafe_char(c) => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The most characters of a name a text table shows: a name is data of
/// the result file, not layout, and laying out a megabyte-long cell costs
/// the table more than linear time.
pub const MAX_CELL_CHARS: usize = 256;

/// The most characters of input a message quotes.
pub const EXCERPT_CHARS: usize = 60;

/// A short, terminal-safe excerpt of input for a message: [`shown`], cut
/// to [`EXCERPT_CHARS`] characters of the input (then `...`). A message
/// quotes input only through this, and only input that fslab was asked to
/// read in that format: a file that is not one is never echoed (the
/// message says which line is wrong instead), so a root-only file named as
/// a plan, job, load or result file cannot be read out through fslab's
/// refusal.
pub fn excerpt(s: &str) -> String {
    let mut cut = s.char_indices().nth(EXCERPT_CHARS).map(|(i, _)| i);
    let head = &s[..cut.unwrap_or(s.len())];
    let mut out = shown(head).into_owned();
    if cut.take().is_some() {
        out.push_str("...");
    }
    out
}

/// `msg` with the text between each pair of `'` cut to
/// [`EXCERPT_CHARS`] characters (then `...`): for messages that quote
/// values of a file read in its own format (a plan's keys and values), so
/// that a long value is quoted short whichever check quotes it.
pub fn bound_quoted(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len().min(1024));
    for (i, part) in msg.split('\'').enumerate() {
        if i > 0 {
            out.push('\'');
        }
        match part.char_indices().nth(EXCERPT_CHARS) {
            Some((cut, _)) if i % 2 == 1 => {
                out.push_str(&part[..cut]);
                out.push_str("...");
            }
            _ => out.push_str(part),
        }
    }
    out
}

/// Formats a rate (operations per second) compactly: `812`, `12.3k`, `1.52M`.
pub fn fmt_rate(r: f64) -> String {
    if r < 1e4 {
        format!("{r:.0}")
    } else if r < 1e6 {
        format!("{:.1}k", r / 1e3)
    } else {
        format!("{:.2}M", r / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("16KiB"), Ok(16384));
        assert_eq!(parse_size("1m"), Ok(1 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert_eq!(parse_size("2T"), Ok(2 << 40));
        assert!(parse_size("").is_err());
        assert!(parse_size("-4k").is_err());
        assert!(parse_size("4q").is_err());
        assert!(parse_size("k").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("-1s").is_err());
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("1h 30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("100us"), Ok(Duration::from_micros(100)));
        assert_eq!(parse_duration("2 min"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("1.2.3s").is_err());
        assert!(parse_duration("s").is_err());
        assert!(parse_duration("5").is_ok() && parse_duration("5x").is_err());
        // found by fuzzing: humantime panicked on an overflowing sum
        assert!(parse_duration("18446744073709551615s1.5s").is_err());
        assert!(parse_duration(&"9".repeat(60)).is_err());
    }

    #[test]
    fn durations_are_bounded() {
        let long = |s: &str| UnitError::DurationTooLong(s.to_string());
        assert_eq!(parse_duration("30d"), Ok(MAX_DURATION));
        assert_eq!(parse_duration("720h"), Ok(MAX_DURATION));
        assert_eq!(parse_duration("2592000"), Ok(MAX_DURATION));
        for s in [
            "30d1ns",
            "31d",
            "2592001",
            "18446744073709551615",
            "18446744073709551615s",
            "18446744073709551611.5s1.5s",
            "18446744073709551615us",
            "340282366920938463463374607431768211455s",
            "9999999999999999999999999999999999999999999ms",
        ] {
            assert_eq!(parse_duration(s), Err(long(s)), "{s}");
        }
        let s = "9".repeat(60);
        assert_eq!(parse_duration(&s), Err(long(&s)));
        assert_eq!(long("31d").to_string(), "'31d' is longer than the 30-day maximum");
        assert!(matches!(
            parse_duration("99999999999999999999999x"),
            Err(UnitError::Duration(_))
        ));
    }

    #[test]
    fn sizes_are_bounded() {
        assert_eq!(parse_size("8e"), Err(UnitError::SizeTooLarge("8e".into())));
        assert_eq!(parse_size("16e"), Err(UnitError::SizeTooLarge("16e".into())));
        assert_eq!(
            parse_size("18446744073709551615k"),
            Err(UnitError::SizeTooLarge("18446744073709551615k".into()))
        );
        assert_eq!(parse_size("9223372036854775807"), Ok(MAX_SIZE));
        assert_eq!(parse_size("7e"), Ok(7 << 60));
    }

    #[test]
    fn percents_and_counts() {
        assert_eq!(parse_percent("90"), Ok(90));
        assert_eq!(parse_percent("90%"), Ok(90));
        assert!(parse_percent("101").is_err());
        assert!(parse_percent("x").is_err());
        assert_eq!(parse_count("100k"), Ok(100_000));
        assert_eq!(parse_count("7"), Ok(7));
        assert!(parse_count("1.5k").is_err());
    }

    #[test]
    fn display() {
        assert_eq!(Bytes(512).to_string(), "512 B");
        assert_eq!(Bytes(16384).to_string(), "16.0 KiB");
        assert_eq!(Bytes(3 << 29).to_string(), "1.50 GiB");
        assert_eq!(Nanos(999).to_string(), "999 ns");
        assert_eq!(Nanos(1500).to_string(), "1.50 µs");
        assert_eq!(Nanos(2_000_000).to_string(), "2.00 ms");
        assert_eq!(Nanos(123_400_000).to_string(), "123 ms");
        assert_eq!(fmt_rate(123456.0), "123.5k");
    }
}
