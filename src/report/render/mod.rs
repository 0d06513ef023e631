//! Rendering primitives every reporter builds on, and below all of them:
//! the `Reporter` trait, the text `Doc` with its layouts (boxed, plain,
//! markdown), the SVG charts of the HTML page, and the terminal-safety
//! filters. Nothing here knows a report format; nothing here imports a
//! reporter.

pub mod doc;
pub mod fit;
pub mod markdown;
pub(crate) mod parts;
pub mod plain;
pub mod svg;
pub mod terminal;

use crate::model::Report;

/// A reporter turns a Report into bytes.
pub trait Reporter {
    fn render(&self, r: &Report) -> Vec<u8>;
}
