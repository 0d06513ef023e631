//! fio's steady-state report (stat.c, fio 3.33): the JSON "steadystate"
//! object of a job and its `steadystate  :` text line, from the cell's
//! `model::steady::SteadyState`.

use crate::model::steady::SteadyState;
use crate::model::Cell;
use serde_json::{json, Value};

/// C's `%f` (or `%.3f`) of fio's figure, which it casts to float first;
/// fio's nan (a zero-by-zero division on x86) prints as "-nan".
fn c_float(x: Option<f64>, decimals: usize) -> String {
    match x {
        Some(v) => format!("{:.*}", decimals, v as f32),
        None => "-nan".into(),
    }
}

fn pct(s: &SteadyState) -> &'static str {
    if s.pct {
        "%"
    } else {
        ""
    }
}

/// The job's "steadystate" object, when it had one (ss_dur).
pub fn json(c: &Cell) -> Option<Value> {
    let s = c.steadystate.as_ref()?;
    Some(json!({
        "ss": format!("{}:{}{}", s.criterion, c_float(Some(s.limit), 6), pct(s)),
        "duration": s.duration,
        "attained": u8::from(s.attained),
        "criterion": format!("{}{}", c_float(s.value, 6), pct(s)),
        "max_deviation": s.max_deviation,
        "slope": s.slope,
        "data": {
            "bw_mean": s.bw_mean(),
            "iops_mean": s.iops_mean(),
            "iops": s.iops,
            "bw": s.bw,
        },
    }))
}

/// fio's num2str: `num` in at most `maxlen` digits with a unit prefix
/// (`base`: what one of `num` is worth), as fio's text output prints.
fn num2str(num: u64, maxlen: usize, base: u64, pow2: bool, unit: &str) -> String {
    const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let prefix = |p: usize| if pow2 { IEC[p] } else { SI[p] };
    let (mut num, mut post, mut b) = (num, 0usize, base);
    while b > 1 {
        b /= thousand;
        post += 1;
    }
    let (mut modulo, mut carry) = (None, false);
    while post < SI.len() {
        if num.to_string().len() <= maxlen {
            break;
        }
        let m = num % thousand;
        modulo = Some(m);
        num /= thousand;
        carry = m >= thousand / 2;
        post += 1;
    }
    if post >= SI.len() {
        post = 0;
    }
    let Some(m) = modulo else {
        return format!("{num}{}{unit}", prefix(post));
    };
    let len = num.to_string().len();
    if maxlen as i64 - len as i64 <= 1 {
        if carry {
            num += 1;
        }
        return format!("{num}{}{unit}", prefix(post));
    }
    let frac = format!("{:.*}", maxlen - len - 1, m as f64 / thousand as f64);
    if frac.starts_with('1') {
        num += 1;
    }
    format!("{num}.{}{}{unit}", &frac[2..], prefix(post))
}

/// fio's `  steadystate  : attained=..., bw=..., iops=..., ...` line.
pub fn text_line(c: &Cell) -> Option<String> {
    let s = c.steadystate.as_ref()?;
    // fio's kb_base (1024): the second figure is the same KiB count with SI
    // prefixes, as fio prints it
    let kib = s.bw_mean() / 1024;
    let (metric, how) = match s.criterion.as_str() {
        "iops" => ("iops", " mean dev"),
        "iops_slope" => ("iops", " slope"),
        "bw_slope" => ("bw", " slope"),
        _ => ("bw", " mean dev"),
    };
    Some(format!(
        "  steadystate  : attained={}, bw={} ({}), iops={}, {metric}{how}={}{}\n",
        if s.attained { "yes" } else { "no" },
        num2str(kib, 4, 1024, true, "B/s"),
        num2str(kib, 4, 1024, false, "B/s"),
        num2str(s.iops_mean(), 4, 1, false, ""),
        c_float(s.value, 3),
        pct(s)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn num2str_prints_as_fio() {
        // figures from fio 3.33's own output
        assert_eq!(num2str(1999, 4, 1024, true, "B/s"), "1999KiB/s");
        assert_eq!(num2str(1999, 4, 1024, false, "B/s"), "1999kB/s");
        assert_eq!(num2str(499, 4, 1, false, ""), "499");
        assert_eq!(num2str(12345, 4, 1, false, ""), "12.3k");
        assert_eq!(num2str(2_400_000 / 1024, 4, 1024, true, "B/s"), "2343KiB/s");
        assert_eq!(num2str(200_000, 4, 1024, true, "B/s"), "195MiB/s");
    }
}
