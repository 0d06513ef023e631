//! Reporters: one file per output format, each a pure function of the
//! result model (`crate::model::Report`) to bytes; writing them is the
//! app's (`app::results`).

pub mod bonnie_csv;
pub mod calibration;
pub mod compare;
pub mod compare_csv;
pub mod csv;
pub mod doc;
pub mod fio_json;
pub mod fio_steady;
pub mod fio_terse;
pub mod fio_text;
pub mod flame;
pub mod html;
pub mod json;
pub mod markdown;
pub mod plain;
pub mod profile;
pub mod ranks;
pub mod svg;
pub mod system;
pub mod text;
pub mod timeline_csv;
pub mod verdict;
pub mod xattrs;

use crate::model::Report;
use crate::plan::OutputFormat;

/// A reporter turns a Report into bytes.
pub trait Reporter {
    fn render(&self, r: &Report) -> Vec<u8>;
}

/// The reporter of format `f`.
pub fn reporter(f: OutputFormat) -> Box<dyn Reporter> {
    match f {
        OutputFormat::Text => Box::new(text::Text),
        OutputFormat::Json => Box::new(json::Json),
        OutputFormat::BonnieCsv => Box::new(bonnie_csv::BonnieCsv),
        OutputFormat::TimelineCsv => Box::new(timeline_csv::TimelineCsv),
        OutputFormat::FioJson => Box::new(fio_json::FioJson),
        OutputFormat::Csv => Box::new(csv::Csv),
        OutputFormat::Html => Box::new(html::Html),
        OutputFormat::FioText => Box::new(fio_text::FioText),
        OutputFormat::Fio(f) => Box::new(fio_terse::FioAll(f)),
        OutputFormat::TextAs(f) => Box::new(text::TextAs(f)),
    }
}

/// Bytes bound for a terminal with `units::terminal_safe` applied: the
/// one filter every format fslab prints goes through (the text tables are
/// already escaped by `Doc`; CSV, fio's formats and JSON get it here). A
/// newline or tab stays; JSON stays valid.
pub fn terminal_bytes(b: Vec<u8>) -> Vec<u8> {
    match String::from_utf8(b) {
        Ok(s) => match crate::units::terminal_safe(&s) {
            std::borrow::Cow::Borrowed(_) => s.into_bytes(),
            std::borrow::Cow::Owned(o) => o.into_bytes(),
        },
        Err(e) => {
            let s = String::from_utf8_lossy(e.as_bytes());
            crate::units::terminal_safe(&s).into_owned().into_bytes()
        }
    }
}
