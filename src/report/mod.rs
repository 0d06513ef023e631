//! Reporters: one per output format, each a pure function of the result
//! model (`crate::model::Report`) to bytes; writing them is the app's
//! (`app::results`).
//!
//! `render/` holds the primitives every reporter builds on (the `Reporter`
//! trait, the text `Doc` and its layouts, the SVG charts, the terminal
//! filters) and imports no reporter; `fio/` holds fio's own formats; the
//! rest are fslab's (`compare/`, `html/`, `text/`, `system/` and one file
//! each for the small ones). No file imports this one: it only names the
//! parts and dispatches a format to its reporter.

pub mod anatomy;
pub mod bonnie_csv;
pub mod calibration;
pub mod compare;
pub mod csv;
pub mod fio;
pub mod html;
pub mod json;
pub mod profile;
pub mod ranks;
pub mod render;
pub mod system;
pub mod text;
pub mod timeline_csv;
pub mod verdict;
pub mod xattrs;

// The paths reporters had before they moved into `fio` and `render`
// (tests, `main` and `app` name them).
pub use fio::{json as fio_json, terse as fio_terse, text as fio_text};
pub use render::terminal::terminal_bytes;
pub use render::Reporter;

use crate::plan::OutputFormat;

/// The reporter of format `f`.
pub fn reporter(f: OutputFormat) -> Box<dyn Reporter> {
    match f {
        OutputFormat::Text => Box::new(text::Text),
        OutputFormat::Json => Box::new(json::Json),
        OutputFormat::BonnieCsv => Box::new(bonnie_csv::BonnieCsv),
        OutputFormat::TimelineCsv => Box::new(timeline_csv::TimelineCsv),
        OutputFormat::FioJson => Box::new(fio::json::FioJson),
        OutputFormat::Csv => Box::new(csv::Csv),
        OutputFormat::Html => Box::new(html::Html),
        OutputFormat::FioText => Box::new(fio::text::FioText),
        OutputFormat::Fio(f) => Box::new(fio::FioAll(f)),
        OutputFormat::TextAs(f) => Box::new(text::TextAs(f)),
    }
}
