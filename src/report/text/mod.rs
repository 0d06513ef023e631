//! The human report: what was measured, then one table row per direction.
//!
//! One `cell` after another (a `probe` cell has its own tables), then the
//! `summary` of them; a plan of several filesystems prints the comparison
//! instead. This file puts the report together.

mod cell;
mod probe;
mod summary;
mod trailer;

use crate::model::Report;
use crate::plan::{TableFormat, TextStyle};
use crate::report::render::doc::Doc;
use crate::report::render::Reporter;
use crate::units::Bytes;
use std::fmt::Write;

/// The report with boxed tables.
pub struct Text;

impl Reporter for Text {
    fn render(&self, r: &Report) -> Vec<u8> {
        render_as(r, TextStyle::default()).into_bytes()
    }
}

/// The report with its tables in another format (`fslab run --format`),
/// or its warnings kept in the JSON (`--quiet-warnings`). CSV is not a
/// layout of the report: it gives the comparison's rows (`compare_csv`)
/// for a plan of several filesystems, else `--output csv`'s.
pub struct TextAs(pub TextStyle);

impl Reporter for TextAs {
    fn render(&self, r: &Report) -> Vec<u8> {
        if self.0.tables != TableFormat::Csv {
            return render_as(r, self.0).into_bytes();
        }
        if r.lab.as_ref().is_some_and(|l| l.columns().len() > 1) {
            let c = crate::report::compare::build(&[(String::new(), r)], None);
            crate::report::compare::csv::render(&c).into_bytes()
        } else {
            crate::report::csv::Csv.render(r)
        }
    }
}

/// The report laid out as `f` (not CSV).
fn render_as(r: &Report, style: TextStyle) -> String {
    let f = style.tables;
    let mut s = Doc::with_quiet_warnings(style.quiet_warnings);
    let s = &mut s;
    if let Some(l) = r.lab.as_ref().filter(|l| l.columns().len() > 1) {
        // A lab run: the comparison; every cell's detail is in the JSON.
        let kernels = if l.kernels.is_empty() {
            String::new()
        } else {
            format!(" x {} kernel(s)", l.kernels.len())
        };
        let factors: String = l
            .factors
            .iter()
            .map(|f| format!(" x {} ({} levels)", f.name, f.levels.len()))
            .collect();
        let _ = writeln!(
            s,
            "fslab run {}: {} filesystem(s) x {} workload(s){kernels}{factors} x {} repeat(s)",
            l.file.as_deref().unwrap_or("(quick suite)"),
            l.filesystems.len(),
            l.workloads.len(),
            l.repeat
        );
        if let (Some(c), Some(b)) = (&l.compare, &l.baseline) {
            let _ = writeln!(s, "compared: {c}, baseline {b}");
        }
        crate::report::compare::write(s, &crate::report::compare::build(&[(String::new(), r)], None));
        s.push_str(&crate::report::xattrs::lab_text(r));
        s.push('\n');
        crate::report::system::lab_text(s, &r.cells);
        crate::report::anatomy::lab_text(s, &r.cells);
    } else {
        for c in &r.cells {
            cell::cell(s, c);
            s.push('\n');
        }
        if r.cells.len() > 1 {
            summary::summary(s, r);
        }
    }
    let _ = writeln!(
        s,
        "host: {} {} ({} cores, {}), fslab {} peak RSS {}",
        r.host.kernel,
        r.host.cpu_model,
        r.host.cores,
        Bytes(r.host.memory_bytes),
        r.fslab_version,
        Bytes(r.max_rss_kib * 1024)
    );
    if r.interrupted {
        s.push_str("INTERRUPTED: results cover the time before the stop\n");
    }
    std::mem::take(s).render(f, style.width.into())
}
