//! fio's own output formats, for a run that stands in for fio: its JSON
//! (and json+), its terse line and its normal text, and `FioAll`, the
//! formats of a comma list (`--output-format=json,normal`) in fio's order.
//! The formats share what they read from a cell through `common`, and the
//! devices through `disks`; none imports another.

pub(crate) mod common;
pub(crate) mod disks;
pub mod json;
pub mod steady;
pub mod terse;
pub mod text;

use crate::model::Report;
use crate::plan::fio::FioFormats;
use crate::report::render::Reporter;
use terse::FioTerse;

/// Every format of `--output-format`, in fio's order: the normal
/// output's lines before the run (fio writes them as it starts), then
/// the terse line, the JSON document and the normal output's results
/// (stat.c writes its buffers in that order).
pub struct FioAll(pub FioFormats);

impl Reporter for FioAll {
    fn render(&self, r: &Report) -> Vec<u8> {
        let mut out = Vec::new();
        if self.0.normal {
            out.extend(text::head(r).into_bytes());
        }
        if self.0.terse {
            out.extend(FioTerse.render(r));
        }
        if self.0.json {
            out.extend(json::render(r, self.0.json_plus));
        }
        if self.0.normal {
            out.extend(text::body(r).into_bytes());
        }
        out
    }
}
