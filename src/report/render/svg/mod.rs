//! Plain SVG charts for the HTML report: bars with confidence whiskers, lines
//! on linear, logarithmic or "nines" (percentile) axes, shaded bands and
//! markers. Hand-written rather than a plotting crate: the charts are few and
//! simple, the output must be self-contained and deterministic (snapshot
//! tests), and the browser renders the text, so no font files are needed.

//!
//! `axes` holds what the charts share; `xy`, `bars` and `timeline` are the
//! three kinds of chart. This file only names them.

mod axes;
mod bars;
mod layout;
mod timeline;
mod xy;

pub use axes::{esc, log_ticks, nth_color, Scale, Tick, PALETTE};
pub use bars::{grouped_bars, Bar, BarGroup};
pub use layout::text_w;
pub use timeline::{Panel, Timeline};
pub use xy::{Band, Series, XyChart};

#[cfg(test)]
mod tests {
    use super::axes::{extent, fwd, ticks};
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(ticks(Scale::Linear, 0.0, 10.0), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        // labelled between decades, as 1, 2 and 5 × 10^k
        assert_eq!(ticks(Scale::Log, 1e3, 1e5), [1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5]);
        assert_eq!(ticks(Scale::Nines, 50.0, 99.9), [50.0, 90.0, 99.0, 99.9]);
        assert!((fwd(Scale::Nines, 99.0) - 2.0).abs() < 1e-9);
    }

    #[test]
    fn log_ticks_thin_out_with_the_decades() {
        // a short range: 1, 2, 3, 5, 7 × 10^k
        assert_eq!(ticks(Scale::Log, 20.0, 100.0), [20.0, 30.0, 50.0, 70.0, 100.0]);
        // five decades on 210 px: 1 and 3 labelled, 2 and 5 as grid lines
        let t = log_ticks(1.0, 1e5, 210.0);
        let labelled: Vec<f64> = t.iter().filter(|t| t.labelled).map(|t| t.value).collect();
        assert_eq!(labelled, [1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1e3, 3e3, 1e4, 3e4, 1e5]);
        assert!(t.iter().any(|t| !t.labelled && t.value == 20.0));
        // nine decades on 210 px: decades labelled, 2 and 5 as grid lines
        let t = log_ticks(1.0, 1e9, 210.0);
        let labelled: Vec<f64> = t.iter().filter(|t| t.labelled).map(|t| t.value).collect();
        assert_eq!(labelled, (0..=9).map(|e| 10f64.powi(e)).collect::<Vec<_>>());
        assert!(t.iter().any(|t| !t.labelled && t.value == 2e3));
        // twenty decades: every other decade labelled
        let t = log_ticks(1.0, 1e20, 210.0);
        assert_eq!(t.iter().filter(|t| t.labelled).count(), 11);
        // the extent rounds to 1-2-5 steps around the data
        assert_eq!(extent(Scale::Log, [23.0, 81.0].into_iter()), (20.0, 100.0));
        assert_eq!(extent(Scale::Log, [1000.0].into_iter()), (1000.0, 2000.0));
    }

    #[test]
    fn escapes_text() {
        assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        let bar = |label: &str, value: f64| Bar {
            label: label.into(),
            value,
            ci: Some(1.0),
            note: String::new(),
            color: PALETTE[0].into(),
        };
        let svg = grouped_bars(
            "ops/s <x>",
            &[
                BarGroup {
                    label: "w1".into(),
                    bars: vec![bar("ext4", 10.0), bar("xfs", 5.0)],
                },
                BarGroup {
                    label: "w<2>".into(),
                    bars: vec![bar("ext4", 8.0), bar("xfs", 4.0)],
                },
            ],
            |v| format!("{v}"),
            &[("ext4".into(), PALETTE[0].into())],
        );
        assert!(svg.contains("ops/s &lt;x&gt;") && svg.contains("w&lt;2&gt;"));
        assert_eq!(svg.matches("class=\"whisker\"").count(), 4, "one per bar");
    }

    /// Bars of µs and ms on one chart: a log axis, on which the µs bar is
    /// still a visible fraction of the ms one; within a decade, linear.
    #[test]
    fn bars_spanning_decades_go_logarithmic() {
        let bar = |label: &str, value: f64| Bar {
            label: label.into(),
            value,
            ci: None,
            note: String::new(),
            color: PALETTE[0].into(),
        };
        let chart = |a: f64, b: f64| {
            grouped_bars(
                "p99",
                &[BarGroup {
                    label: "w".into(),
                    bars: vec![bar("fast", a), bar("slow", b)],
                }],
                |v| format!("{v}"),
                &[],
            )
        };
        let heights = |svg: &str| -> Vec<f64> {
            svg.split("<rect x=")
                .filter(|r| r.contains("</title></rect>"))
                .map(|r| {
                    r.split("height=\"")
                        .nth(1)
                        .unwrap()
                        .split('"')
                        .next()
                        .unwrap()
                        .parse()
                        .unwrap()
                })
                .collect()
        };
        let log = chart(20e3, 8e6);
        assert!(log.contains("p99 (log scale)"), "{log}");
        let h = heights(&log);
        assert!(h[0] >= 10.0 && h[1] > h[0], "the small bar is visible: {h:?}");
        let lin = chart(2e6, 8e6);
        assert!(!lin.contains("log scale"));
        let h = heights(&lin);
        assert!((h[0] / h[1] - 0.25).abs() < 0.01, "linear from 0: {h:?}");
    }

    #[test]
    fn timeline_panels_share_the_x_axis() {
        let line = |label: &str, pts: Vec<(f64, f64)>| Series {
            label: label.into(),
            color: PALETTE[0].into(),
            points: pts,
            dots: false,
            dashed: false,
            tip: String::new(),
        };
        let t = Timeline {
            title: "cell".into(),
            panels: vec![
                Panel {
                    title: "MB/s".into(),
                    y_scale: Scale::Linear,
                    y_fmt: |v| format!("{v}"),
                    series: vec![line("read", vec![(1.0, 10.0), (2.0, 20.0)])],
                    stacked: false,
                    y_max: None,
                },
                Panel {
                    title: "CPU".into(),
                    y_scale: Scale::Linear,
                    y_fmt: |v| format!("{v}%"),
                    series: vec![
                        line("usr", vec![(1.0, 10.0), (2.0, 20.0)]),
                        line("sys", vec![(1.0, 5.0), (2.0, 5.0)]),
                    ],
                    stacked: true,
                    y_max: Some(100.0),
                },
            ],
            bands: vec![Band {
                from: 0.0,
                to: 2.0,
                label: "run".into(),
                color: "#888".into(),
                opacity: 0.1,
                tip: String::new(),
            }],
            alert: Some("disturbed <x>".into()),
            x_fmt: |v| format!("{v}"),
        };
        let svg = t.render();
        // a point at x=2 is at the same place in both panels
        let x2 = "L670.0 "; // 70 + 2 / 2.1 * 630: x to 2.1 (5% headroom)
        assert_eq!(svg.matches("<svg").count(), 1);
        assert!(svg.matches(x2).count() >= 3, "{svg}");
        assert!(svg.contains("disturbed &lt;x&gt;") && svg.contains("Z\""));
    }
}
