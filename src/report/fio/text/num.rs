//! fio's number formatting (lib/num2str.c) and its latency units
//! (stat.h nsec_to_usec/nsec_to_msec): what makes "1321KiB/s", "13.6k"
//! and "max=8597.6k" in fio's normal output.

/// fio's units of num2str.
#[derive(Clone, Copy)]
pub enum Unit {
    None,
    Byte,
    BytePerSec,
}

/// fio's num2str: `num` (in units of `base`) in at most `maxlen` digits
/// (the '.' counted), divided by 1000 or 1024 (`pow2`) as often as it
/// takes, with one decimal place or more where there is room, rounded as
/// fio rounds (the carry of the last division; the decimals' own rounding).
pub fn num2str(mut num: u64, maxlen: usize, base: u64, pow2: bool, unit: Unit) -> String {
    const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let prefixes = if pow2 { &IEC } else { &SI };
    let unit = match unit {
        Unit::None => "",
        Unit::Byte => "B",
        Unit::BytePerSec => "B/s",
    };
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let mut post = 0;
    let mut b = base;
    while b > 1 {
        b /= thousand;
        post += 1;
    }
    let mut modulo: Option<u64> = None;
    let mut carry = false;
    while post < SI.len() {
        if num.to_string().len() <= maxlen {
            break;
        }
        let m = num % thousand;
        num /= thousand;
        carry = m >= thousand / 2;
        modulo = Some(m);
        post += 1;
    }
    if post >= SI.len() {
        post = 0;
    }
    let Some(m) = modulo else {
        return format!("{num}{}{unit}", prefixes[post]);
    };
    let digits = num.to_string().len();
    if maxlen.saturating_sub(digits) <= 1 {
        if carry {
            num += 1;
        }
        return format!("{num}{}{unit}", prefixes[post]);
    }
    let places = maxlen - digits - 1;
    let frac = format!("{:.*}", places, m as f64 / thousand as f64);
    if frac.starts_with('1') {
        num += 1;
    }
    // "0.xyz": the digits after the point
    format!("{num}.{}{}{unit}", &frac[2..], prefixes[post])
}

/// fio's unit of a latency line (stat.c display_lat, stat.h): msec when
/// the minimum is over 2 ms, the maximum over 100 ms and the deviation
/// over 1 ms; usec at a thousandth of each; else nsec. The divisor.
pub fn lat_unit(min: u64, max: u64, dev: f64) -> (&'static str, u64) {
    if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        ("msec", 1_000_000)
    } else if min > 2_000 && max > 99_999 && dev > 1_000.0 {
        ("usec", 1_000)
    } else {
        ("nsec", 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_fio_writes_them() {
        // figures of fio 3.33's own output
        assert_eq!(num2str(1321 * 1024, 4, 1, true, Unit::BytePerSec), "1321KiB/s");
        assert_eq!(num2str(111_100_000, 4, 1, true, Unit::BytePerSec), "106MiB/s");
        assert_eq!(num2str(111_100_000, 4, 1, false, Unit::BytePerSec), "111MB/s");
        assert_eq!(num2str(13_600, 4, 1, false, Unit::None), "13.6k");
        assert_eq!(num2str(6095, 4, 1, false, Unit::None), "6095");
        assert_eq!(num2str(8192, 4, 1, true, Unit::Byte), "8192B");
        assert_eq!(num2str(131072, 4, 1, true, Unit::Byte), "128KiB");
        assert_eq!(num2str(8_388_608, 4, 1, true, Unit::Byte), "8192KiB");
        assert_eq!(num2str(8_388_608, 4, 1, false, Unit::Byte), "8389kB");
        assert_eq!(num2str(8_597_600, 6, 1, false, Unit::None), "8597.6k");
        assert_eq!(num2str(5049, 6, 1, false, Unit::None), "5049");
        assert_eq!(num2str(1000 * 1048576, 4, 1, true, Unit::BytePerSec), "1000MiB/s");
    }

    #[test]
    fn latency_units_as_display_lat() {
        assert_eq!(lat_unit(3195, 31117, 1792.45).0, "nsec");
        assert_eq!(lat_unit(38_000, 5_049_000, 216_410.0).0, "usec");
        assert_eq!(lat_unit(80, 8_597_600, 514_178.0).0, "nsec");
        assert_eq!(lat_unit(3_000_000, 200_000_000, 2e6).0, "msec");
    }
}
