//! `--output timeline-csv:PATH`: every probe sample as one CSV row, for
//! spreadsheets and plotting: `t_s,phase,lat_ms,sched_lat_ms,missed_after,errno`.

use super::csv::field;
use crate::model::Report;
use crate::report::render::Reporter;
use std::fmt::Write;

pub struct TimelineCsv;

impl Reporter for TimelineCsv {
    fn render(&self, r: &Report) -> Vec<u8> {
        let mut s = String::from("cell,t_s,phase,lat_ms,sched_lat_ms,missed_after,errno\n");
        for c in &r.cells {
            let Some(p) = &c.probe else { continue };
            for x in &p.samples {
                let _ = writeln!(
                    s,
                    "{},{:.6},{},{:.6},{:.6},{},{}",
                    field(&c.name),
                    x.t_ns as f64 / 1e9,
                    field(&x.phase),
                    x.lat_ns as f64 / 1e6,
                    x.sched_lat_ns as f64 / 1e6,
                    x.missed_after,
                    x.errno
                );
            }
        }
        s.into_bytes()
    }
}
