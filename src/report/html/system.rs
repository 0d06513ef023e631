//! The system beside each cell, over time: device throughput, await and
//! queue depth, CPU split, pressure, dirty memory and the other processes,
//! one timeline panel each (`cell.system`).

use super::common::{fmt_ns, fmt_pct, fmt_plain, place, steps};
use crate::model::system::SystemData;
use crate::model::{Cell, Report};
use crate::report::render::svg::{self, esc, Band, Scale, Series};
use crate::report::system as sy;
use std::fmt::Write;

/// Per cell with telemetry: one timeline of stacked panels on a shared time
/// axis (throughput, p99 latency, device %util and await, the CPU split,
/// dirty memory), its phases shaded, disturbed cells framed in red; then a
/// table of where the time goes.
pub(super) fn system_timelines(s: &mut String, n: &mut usize, sources: &[(String, &Report)]) {
    let cells: Vec<(&String, &Cell)> = sources
        .iter()
        .flat_map(|(l, r)| r.cells.iter().map(move |c| (l, c)))
        .filter(|(_, c)| c.error.is_none() && c.system.is_some())
        .collect();
    if cells.is_empty() {
        return;
    }
    s.push_str("<style>figure.chart[data-disturbed]{border:2px solid #D00}.dist{color:#D00;font-weight:700}.badge{border:1px solid #888;border-radius:3px;padding:0 3px;font-size:90%}table.sys td:nth-child(2),table.sys td:last-child{text-align:left}table.sys td:nth-child(11),table.sys td:nth-child(12){white-space:nowrap}</style>\n<h2 id=\"system\">System timelines</h2>\n<p class=\"note\">Per cell, on one time axis (seconds since the first timed phase; each value is held over its interval): fslab's throughput and p99 latency, each device's %util and await, the machine's CPU split (stacked, % of all CPUs; fslab's own dashed), Dirty and Writeback memory. Timed phases shaded; cells that other processes disturbed are framed in red.</p>\n<div class=\"grid\">\n");
    for (label, c) in &cells {
        timeline_figure(s, n, label, c);
    }
    time_table(s, &cells);
}

/// A line of a panel.
fn line(label: String, color: &str, points: Vec<(f64, f64)>, dashed: bool) -> Series {
    Series {
        label,
        color: color.into(),
        points,
        dots: false,
        dashed,
        tip: String::new(),
    }
}

fn sec(t_ms: u64) -> f64 {
    t_ms as f64 / 1e3
}

/// An interval ending at t_ms, len_ms long.
fn span(t_ms: u64, len_ms: u64) -> (f64, f64) {
    (sec(t_ms.saturating_sub(len_ms)), sec(t_ms))
}

/// fslab's own panels: throughput and p99 latency per direction.
fn op_panels(c: &Cell) -> Vec<svg::Panel> {
    let mut panels = Vec::new();
    if !c.series.is_empty() {
        let mut kinds: Vec<crate::stats::OpKind> = Vec::new();
        for p in &c.series {
            for k in p.kinds.keys() {
                if !kinds.contains(k) {
                    kinds.push(*k);
                }
            }
        }
        let bytes = c.series.iter().any(|p| p.kinds.values().any(|k| k.bytes > 0));
        panels.push(svg::Panel {
            title: if bytes { "MB/s".into() } else { "operations/s".into() },
            y_scale: Scale::Linear,
            y_fmt: fmt_plain,
            series: kinds
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    let pts = steps(c.series.iter().map(|p| {
                        let d = p.dir(*k);
                        let v = if bytes { d.bytes as f64 / 1e6 } else { d.ops as f64 };
                        (p.t_s as f64, (p.t_s + 1) as f64, v)
                    }));
                    line(k.name().into(), &svg::nth_color(i), pts, false)
                })
                .collect(),
            stacked: false,
            y_max: None,
        });
        panels.push(svg::Panel {
            title: "p99 latency".into(),
            y_scale: Scale::Log,
            y_fmt: fmt_ns,
            series: kinds
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    let pts = steps(
                        c.series
                            .iter()
                            .map(|p| (p.t_s as f64, (p.t_s + 1) as f64, p.dir(*k).p99_ns as f64)),
                    );
                    line(k.name().into(), &svg::nth_color(i), pts, false)
                })
                .collect(),
            stacked: false,
            y_max: None,
        });
    }
    panels
}

/// Each device's %util and await.
fn device_panels(sys: &SystemData) -> Vec<svg::Panel> {
    let mut panels = Vec::new();
    if !sys.devices.is_empty() {
        panels.push(svg::Panel {
            title: "device %util".into(),
            y_scale: Scale::Linear,
            y_fmt: fmt_pct,
            series: sys
                .devices
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let pts = steps(d.samples.iter().map(|p| {
                        let (a, b) = span(p.t_ms, p.len_ms);
                        (a, b, p.util_pct)
                    }));
                    line(d.name.clone(), &svg::nth_color(i), pts, false)
                })
                .collect(),
            stacked: false,
            y_max: Some(100.0),
        });
        let mut awaits = Vec::new();
        for (i, d) in sys.devices.iter().enumerate() {
            let col = &svg::nth_color(i);
            if d.total.read_ios > 0 || d.samples.iter().any(|p| p.read_ios > 0) {
                let pts = steps(d.samples.iter().map(|p| {
                    let (a, b) = span(p.t_ms, p.len_ms);
                    (a, b, p.r_await_ms * 1e6)
                }));
                awaits.push(line(format!("{} r_await", d.name), col, pts, false));
            }
            if d.total.write_ios > 0 || d.samples.iter().any(|p| p.write_ios > 0) {
                let pts = steps(d.samples.iter().map(|p| {
                    let (a, b) = span(p.t_ms, p.len_ms);
                    (a, b, p.w_await_ms * 1e6)
                }));
                awaits.push(line(format!("{} w_await", d.name), col, pts, true));
            }
        }
        if !awaits.is_empty() {
            panels.push(svg::Panel {
                title: "device await".into(),
                y_scale: Scale::Linear,
                y_fmt: fmt_ns,
                series: awaits,
                stacked: false,
                y_max: None,
            });
        }
    }
    panels
}

/// The machine's CPU split (stacked) and its dirty memory.
fn machine_panels(sys: &SystemData) -> Vec<svg::Panel> {
    let mut panels = Vec::new();
    if !sys.samples.is_empty() {
        let at = |f: &dyn Fn(&crate::model::system::SystemPoint) -> f64| -> Vec<(f64, f64)> {
            steps(sys.samples.iter().map(|p| {
                let (a, b) = span(p.t_ms, p.len_ms);
                (a, b, f(p))
            }))
        };
        let cpu = |f: fn(&crate::model::system::CpuSplit) -> f64| at(&|p| f(&p.cpu));
        panels.push(svg::Panel {
            title: "CPU (% of all CPUs)".into(),
            y_scale: Scale::Linear,
            y_fmt: fmt_pct,
            series: vec![
                line("usr".into(), "#0072B2", cpu(|c| c.user + c.nice), false),
                line("sys".into(), "#D55E00", cpu(|c| c.system), false),
                line("iowait".into(), "#E69F00", cpu(|c| c.iowait), false),
                line("irq+soft".into(), "#CC79A7", cpu(|c| c.irq + c.softirq), false),
                line("steal".into(), "#000000", cpu(|c| c.steal), false),
                line("fslab".into(), "#009E73", at(&|p| p.fslab_pct), true),
            ],
            stacked: true,
            y_max: Some(100.0),
        });
        let mem = |f: fn(&crate::model::system::SystemPoint) -> u64| at(&|p| f(p) as f64 / 1024.0);
        panels.push(svg::Panel {
            title: "dirty memory".into(),
            y_scale: Scale::Linear,
            y_fmt: |v| format!("{} MiB", fmt_plain(v)),
            series: vec![
                line("Dirty".into(), "#0072B2", mem(|p| p.dirty_kib), false),
                line("Writeback".into(), "#D55E00", mem(|p| p.writeback_kib), false),
            ],
            stacked: false,
            y_max: None,
        });
    }
    panels
}

/// One cell's timeline figure, its caption the system's text lines.
fn timeline_figure(s: &mut String, n: &mut usize, label: &str, c: &Cell) {
    let sys = c.system.as_ref().expect("filtered");
    let mut panels = op_panels(c);
    panels.extend(device_panels(sys));
    panels.extend(machine_panels(sys));
    let bands = sys
        .phases
        .iter()
        .enumerate()
        .map(|(i, ph)| Band {
            from: sec(ph.start_ms),
            to: sec(ph.end_ms),
            label: ph.name.clone(),
            color: "#888".into(),
            opacity: if i % 2 == 0 { 0.08 } else { 0.16 },
            tip: String::new(),
        })
        .collect();
    let title = match &c.lab {
        Some(l) => format!("{} #{}: system", c.name, l.repeat),
        None if label.is_empty() => format!("{}: system", c.name),
        None => format!("{label} {}: system", c.name),
    };
    let disturbed = sys.interference.disturbed;
    let i = &sys.interference;
    let tl = svg::Timeline {
        title,
        panels,
        bands,
        alert: disturbed.then(|| {
            format!(
                "DISTURBED: others {:.1}% of the CPUs, steal {:.1}% (threshold {:.1}%)",
                i.other_cpu_pct, i.steal_pct, i.cpu_threshold_pct
            )
        }),
        x_fmt: fmt_plain,
    };
    let mut caption = vec![sy::stack_line(sys)];
    caption.extend(sy::share_lines(sys));
    caption.push(format!("cpu: {}", sy::cpu_line(&sys.total)));
    caption.push(sy::interference_line(sys));
    caption.extend(sy::rerun_lines(sys));
    caption.extend(sy::xattrs_line(c));
    caption.extend(sy::profile_line(c));
    *n += 1;
    let _ = writeln!(
        s,
        "<figure class=\"chart\" data-kind=\"system\"{}>{}<figcaption>{}</figcaption></figure>",
        if disturbed { " data-disturbed=\"true\"" } else { "" },
        tl.render(),
        caption
            .iter()
            .filter(|l| !l.is_empty())
            .map(|l| esc(l))
            .collect::<Vec<_>>()
            .join("<br>")
    );
}

/// "Where the time goes": per cell and device, its iostat figures, each
/// direction's share of fslab's latency, and whether the cell was disturbed.
fn time_table(s: &mut String, cells: &[(&String, &Cell)]) {
    s.push_str("</div>\n<h3>Where the time goes</h3>\n<p class=\"note\">Each device's figures over the cell (iostat -x); per direction its await beside fslab's mean latency, and its share: the device's request time over fslab's operation time.</p>\n<table class=\"sys\"><tr><th>cell</th><th>device</th><th>r/s</th><th>w/s</th><th>rMB/s</th><th>wMB/s</th><th>r_await</th><th>w_await</th><th>aqu-sz</th><th>%util</th><th>read share</th><th>write share</th><th>others' CPU</th><th>state</th></tr>\n");
    for (label, c) in cells {
        time_rows(s, label, c);
    }
    s.push_str("</table>\n");
}

/// The verdict and interference cell of a row: disturbed or quiet, with
/// the verdict's bound as a badge.
fn state_cell(c: &Cell, sys: &SystemData) -> String {
    let mut state = if sys.interference.disturbed {
        format!("<td class=\"dist\">{}", esc(&sy::interference_line(sys)))
    } else {
        "<td>quiet".to_string()
    };
    // the cell's verdict as a badge: its bound, the whole line on hover
    if let Some(v) = &c.verdict {
        let _ = write!(
            state,
            " <span class=\"badge\" title=\"{}\">{}{}</span>",
            esc(&v.line()),
            v.bound.name(),
            if v.flags.is_empty() { "" } else { " ⚑" }
        );
    }
    state.push_str("</td>");
    state
}

/// A device's await beside fslab's mean latency in direction `dir`, and its share.
fn share(sys: &SystemData, dev: &str, dir: crate::stats::OpKind) -> String {
    sys.latency_share
        .iter()
        .find(|l| l.device == dev && l.dir == dir)
        .map(|l| match l.share_pct {
            Some(p) => format!(
                "{} of {} ({p:.0}%)",
                fmt_ns(l.await_us * 1e3),
                fmt_ns(l.mean_lat_us * 1e3)
            ),
            None => match &l.unattributed {
                Some(why) => format!("{} <span title=\"{}\">(—)</span>", fmt_ns(l.await_us * 1e3), esc(why)),
                None => fmt_ns(l.await_us * 1e3),
            },
        })
        .unwrap_or_default()
}

/// A cell's rows of the table, one per device.
fn time_rows(s: &mut String, label: &str, c: &Cell) {
    let sys = c.system.as_ref().expect("filtered");
    let (fs, _) = place(label, c);
    let rep = c.lab.as_ref().map(|l| format!(" #{}", l.repeat)).unwrap_or_default();
    let state = state_cell(c, sys);
    for (i, d) in sys.devices.iter().enumerate() {
        let t = &d.total;
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.2}</td><td>{:.2}</td><td>{:.2} ms</td><td>{:.2} ms</td><td>{:.2}</td><td>{:.1}%</td><td>{}</td><td>{}</td><td>{}</td>{}</tr>",
            if i == 0 { esc(format!("{fs}{rep} {}", c.name).trim()) } else { String::new() },
            esc(&sy::device_label(d)),
            t.r_s,
            t.w_s,
            t.rmb_s,
            t.wmb_s,
            t.r_await_ms,
            t.w_await_ms,
            t.aqu_sz,
            t.util_pct,
            esc(&share(sys, &d.name, crate::stats::OpKind::Read)),
            esc(&share(sys, &d.name, crate::stats::OpKind::Write)),
            if i == 0 { format!("{:.1}%", sys.interference.other_cpu_pct) } else { String::new() },
            if i == 0 { state.clone() } else { "<td></td>".into() },
        );
    }
    if sys.devices.is_empty() {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>(no block device)</td><td colspan=\"10\"></td><td>{:.1}%</td>{state}</tr>",
            esc(format!("{fs}{rep} {}", c.name).trim()),
            sys.interference.other_cpu_pct
        );
    }
}
