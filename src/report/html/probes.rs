//! Probe timelines: each probe's latencies over time with its phases
//! shaded and its stalls marked.

use super::common::{figure, fmt_ns, fmt_plain, place};
use crate::model::anatomy::Anatomy;
use crate::model::probe::ProbeData;
use crate::model::{Cell, Report};
use crate::report::render::svg::{Band, Scale, Series, XyChart, PALETTE};

/// Per probe cell, its latencies at their scheduled times on a log axis.
pub(super) fn probes(s: &mut String, n: &mut usize, sources: &[(String, &Report)]) {
    let cells: Vec<(&String, &Cell)> = sources
        .iter()
        .flat_map(|(l, r)| r.cells.iter().map(move |c| (l, c)))
        .filter(|(_, c)| c.probe.is_some())
        .collect();
    if cells.is_empty() {
        return;
    }
    s.push_str("<h2 id=\"probes\">Probe timelines</h2>\n<p class=\"note\">Every probe's latency at its scheduled time; phases shaded, stalls (probes over the threshold, with the slots they blocked) in red: hover a stall for its anatomy when the run had --explain-slow.</p>\n<div class=\"grid\">\n");
    for (label, c) in cells {
        let p = c.probe.as_ref().expect("filtered");
        let (fs, _) = place(label, c);
        let chart = XyChart {
            title: format!(
                "{}{}: {} latency over time",
                c.name,
                c.lab.as_ref().map(|l| format!(" #{}", l.repeat)).unwrap_or_default(),
                p.op
            ),
            x_label: "seconds".into(),
            y_label: "latency from scheduled slot".into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Log,
            series: series(p),
            bands: bands(p, c.anatomy.as_ref()),
            y_fmt: fmt_ns,
            x_fmt: fmt_plain,
        };
        let caption = format!(
            "{fs}: {} stall(s) over {}; load: {}",
            p.stalls.len(),
            fmt_ns(p.stall_ns as f64),
            p.load.as_deref().unwrap_or("none")
        );
        figure(s, n, "timeline", &chart.render(), &caption);
    }
    s.push_str("</div>\n");
}

fn sec(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// A probe's phases shaded (a load only while it ran), its stalls in red.
fn bands(p: &ProbeData, anatomy: Option<&Anatomy>) -> Vec<Band> {
    let mut bands: Vec<Band> = p
        .phases
        .iter()
        .enumerate()
        .flat_map(|(i, ph)| {
            let opacity = if i % 2 == 0 { 0.10 } else { 0.18 };
            let color = if ph.name == "load" { "#E69F00" } else { "#888" };
            // a load that wrote its size early: shaded only while it ran
            let loaded_to = ph.load_end_ns.unwrap_or(ph.end_ns);
            let mut b = vec![Band {
                from: sec(ph.start_ns),
                to: sec(loaded_to),
                label: ph.name.clone(),
                color: color.into(),
                opacity,
                tip: String::new(),
            }];
            if loaded_to < ph.end_ns {
                b.push(Band {
                    from: sec(loaded_to),
                    to: sec(ph.end_ns),
                    label: format!("{} (load done)", ph.name),
                    color: "#888".into(),
                    opacity,
                    tip: String::new(),
                });
            }
            b
        })
        .collect();
    bands.extend(p.stalls.iter().map(|st| Band {
        from: sec(st.start_ns),
        to: sec(st.end_ns),
        label: format!("stall {}", fmt_ns(st.max_ns as f64)),
        color: "#D00".into(),
        opacity: 0.35,
        tip: stall_tip(st.start_ns, st.end_ns, st.max_ns, anatomy),
    }));
    bands
}

/// Within this of a stall, an explained slow operation is taken for one of
/// its probes: the anatomy's clock starts when the cell's timed part does,
/// the probe's when its workers are released, a few ms apart.
const NEAR_NS: u64 = 100_000_000;

/// A stall's hover text: the explanations (`--explain-slow`) of the slow
/// operations that ran during it.
fn stall_tip(start: u64, end: u64, max: u64, anatomy: Option<&Anatomy>) -> String {
    let mut tip = format!("stall {}", fmt_ns(max as f64));
    let Some(a) = anatomy else {
        return tip;
    };
    for o in &a.slow {
        let (from, to) = (o.at_ns, o.at_ns + o.latency_ns);
        if from <= end + NEAR_NS && to + NEAR_NS >= start {
            tip.push_str("\n\n");
            tip.push_str(&crate::report::anatomy::paragraph(o));
        }
    }
    tip
}

/// The probe's latencies, and in red those of probes that failed.
fn series(p: &ProbeData) -> Vec<Series> {
    let ok: Vec<(f64, f64)> = p
        .samples
        .iter()
        .filter(|x| x.errno == 0)
        .map(|x| (sec(x.t_ns), x.sched_lat_ns as f64))
        .collect();
    let failed: Vec<(f64, f64)> = p
        .samples
        .iter()
        .filter(|x| x.errno != 0)
        .map(|x| (sec(x.t_ns), x.sched_lat_ns as f64))
        .collect();
    let mut series = vec![Series {
        label: format!("{} probe", p.op),
        color: PALETTE[0].into(),
        points: ok,
        dots: true,
        dashed: false,
        tip: String::new(),
    }];
    if !failed.is_empty() {
        series.push(Series {
            label: "failed".into(),
            color: "#D00".into(),
            points: failed,
            dots: true,
            dashed: false,
            tip: String::new(),
        });
    }
    series
}
