//! The result JSON (schema in docs/results.md).

use crate::model::Report;
use crate::report::render::Reporter;

pub struct Json;

impl Reporter for Json {
    fn render(&self, r: &Report) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(r).expect("a Report always serialises");
        v.push(b'\n');
        v
    }
}
