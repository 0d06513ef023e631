//! Flame graphs of `--profile`'s folded stacks, drawn as plain SVG (one
//! rectangle per frame, root at the bottom, width by samples, children in
//! name order as flamegraph.pl does; kernel frames orange, user frames
//! blue; each frame's name, samples and share in its tooltip), and the
//! HTML report's "CPU profile" section: a flame graph per profiled cell and
//! phase with its top symbols.

use crate::model::system::{FoldedStack, PhaseProfile, Profile};
use crate::model::{Cell, Report};
use crate::report::render::svg::{esc, text_w};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Kernel frames end with this in folded stacks.
const KERNEL_SUFFIX: &str = "_[k]";

const W: f64 = 1200.0;
const FRAME_H: f64 = 16.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 8.0;
const PAD: f64 = 10.0;
/// Frames narrower than this are not drawn (nor their children).
const MIN_W: f64 = 0.4;
/// Size of a frame's label (the report's `svg text`).
const LABEL_PX: f64 = 11.0;

#[derive(Default)]
struct Node {
    name: String,
    value: u64,
    children: BTreeMap<String, usize>,
}

/// The stacks as a tree; node 0 is the root ("all").
fn tree(stacks: &[FoldedStack]) -> Vec<Node> {
    let mut nodes = vec![Node {
        name: "all".into(),
        ..Default::default()
    }];
    for s in stacks {
        nodes[0].value += s.count;
        let mut at = 0;
        for f in s.stack.split(';').filter(|f| !f.is_empty()) {
            let next = match nodes[at].children.get(f) {
                Some(&i) => i,
                None => {
                    let i = nodes.len();
                    nodes.push(Node {
                        name: f.to_string(),
                        ..Default::default()
                    });
                    nodes[at].children.insert(f.to_string(), i);
                    i
                }
            };
            nodes[next].value += s.count;
            at = next;
        }
    }
    nodes
}

fn fnv(s: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// A frame's colour: orange shades for the kernel, blue for user space,
/// grey for the root; the shade from the name, so a frame keeps its colour
/// across graphs.
fn color(name: &str, root: bool) -> String {
    if root {
        return "#c8c8c8".into();
    }
    let h = fnv(name);
    let v = (h % 1000) as f64 / 1000.0;
    if name.ends_with(KERNEL_SUFFIX) {
        format!(
            "hsl({:.0},{:.0}%,{:.0}%)",
            18.0 + v * 26.0,
            78.0 + v * 12.0,
            58.0 + (h >> 10) as f64 % 10.0
        )
    } else {
        format!(
            "hsl({:.0},{:.0}%,{:.0}%)",
            195.0 + v * 30.0,
            55.0 + v * 20.0,
            62.0 + (h >> 10) as f64 % 10.0
        )
    }
}

/// `s` cut to `n` characters, ".." marking the cut.
fn fit(s: &str, n: usize) -> Option<String> {
    if n < 3 {
        return None;
    }
    if s.chars().count() <= n {
        return Some(s.to_string());
    }
    Some(format!("{}..", s.chars().take(n - 2).collect::<String>()))
}

/// `s` cut (as `fit` does) to what fits `px` pixels drawn, or None.
fn fit_px(s: &str, px: f64) -> Option<String> {
    let n = s.chars().count();
    (3..=n)
        .rev()
        .filter_map(|k| fit(s, k))
        .find(|l| text_w(l, LABEL_PX, false) <= px)
}

/// A flame graph of `stacks` ("a;b;c" root first, with counts) titled `title`.
pub fn svg(title: &str, stacks: &[FoldedStack]) -> String {
    let nodes = tree(stacks);
    let total = nodes[0].value.max(1) as f64;
    let scale = (W - 2.0 * PAD) / total;
    // the frames wide enough to draw: (node, depth, x, first sample)
    let mut drawn: Vec<(usize, usize, f64, u64)> = Vec::new();
    let mut todo = vec![(0usize, 0usize, PAD, 0u64)];
    while let Some((i, depth, x, start)) = todo.pop() {
        drawn.push((i, depth, x, start));
        let (mut cx, mut cs) = (x, start);
        for &c in nodes[i].children.values() {
            let w = nodes[c].value as f64 * scale;
            if w >= MIN_W {
                todo.push((c, depth + 1, cx, cs));
            }
            cx += w;
            cs += nodes[c].value;
        }
    }
    drawn.sort_by(|a, b| a.1.cmp(&b.1).then(a.2.total_cmp(&b.2)));
    let depth = drawn.iter().map(|d| d.1).max().unwrap_or(0) + 1;
    let h = TOP + depth as f64 * FRAME_H + BOTTOM;
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" width="{W}" height="{h}" role="img" aria-label="{t}" class="flame" data-total="{total}" data-pad="{PAD}"><title>{t}</title><rect width="{W}" height="{h}" fill="#fff"/><text x="{x}" y="20" text-anchor="middle" class="t">{t}</text>"##,
        t = esc(title),
        x = W / 2.0,
        total = nodes[0].value,
    );
    for (i, d, x, start) in drawn {
        let n = &nodes[i];
        let w = n.value as f64 * scale;
        let y = h - BOTTOM - (d + 1) as f64 * FRAME_H;
        let shown = n.name.strip_suffix(KERNEL_SUFFIX).unwrap_or(&n.name);
        let space = if i == 0 {
            ""
        } else if n.name.ends_with(KERNEL_SUFFIX) {
            " [kernel]"
        } else {
            " [user]"
        };
        let _ = write!(
            s,
            r#"<g data-s="{start}" data-v="{}" data-d="{d}" data-n="{}"><title>{} ({} samples, {:.2}%){space}</title><rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{fh}" fill="{}" rx="2"/>"#,
            n.value,
            esc(shown),
            esc(shown),
            n.value,
            n.value as f64 * 100.0 / total,
            color(&n.name, i == 0),
            fh = FRAME_H - 1.0,
        );
        if let Some(label) = fit_px(shown, w - 6.0) {
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
                x + 3.0,
                y + 11.5,
                esc(&label)
            );
        }
        s.push_str("</g>");
    }
    s.push_str("</svg>");
    s
}

fn phase_caption(c: &Cell, p: &Profile, ph: &PhaseProfile) -> String {
    let shown: u64 = ph.stacks.iter().map(|s| s.count).sum();
    let mut cap = format!(
        "{}: {}: {} samples at {} Hz ({} event)",
        c.name, ph.name, ph.samples, p.frequency_hz, p.event
    );
    if ph.lost > 0 {
        let _ = write!(cap, ", {} lost", ph.lost);
    }
    if shown < ph.samples {
        let _ = write!(
            cap,
            "; the {} heaviest stacks shown ({:.1}% of the samples)",
            ph.stacks.len(),
            shown as f64 * 100.0 / ph.samples.max(1) as f64
        );
    }
    cap
}

/// The HTML report's "CPU profile" section: per profiled cell, a flame
/// graph per phase (each in a `figure class="chart"`) and its top symbols.
/// Returns the number of figures written.
pub fn section(s: &mut String, sources: &[(String, &Report)]) -> usize {
    let cells: Vec<(&Cell, &Profile)> = sources
        .iter()
        .flat_map(|(_, r)| r.cells.iter())
        .filter_map(|c| c.profile.as_ref().map(|p| (c, p)))
        .filter(|(_, p)| !p.phases.is_empty())
        .collect();
    if cells.is_empty() {
        return 0;
    }
    let mut n = 0;
    s.push_str("<h2 id=\"profile\">CPU profile</h2>\n<p class=\"note\">Where fslab's CPU time went in each timed phase (--profile: perf_event_open, cpu-clock, every thread of fslab). Flame graphs: one box per function, the root at the bottom, callers below their callees, width by samples; kernel frames orange, user frames blue; hover a box for its samples (with scripts on: click a box to zoom into it, search names to highlight them and see their share). Top symbols: inclusive share (anywhere on the stack) and self share (on top of it).</p>\n");
    for (c, p) in cells {
        let _ = writeln!(s, "<h3>{}</h3>", esc(&c.name));
        let mut info = format!("profiling cost ~{:.1}% of fslab's CPU", p.overhead_pct);
        if let Some(f) = &p.folded_file {
            let _ = write!(info, "; all folded stacks in {f}");
        }
        for note in &p.notes {
            let _ = write!(info, "; {note}");
        }
        let _ = writeln!(s, "<p class=\"note\">{}</p>\n<div class=\"grid\">", esc(&info));
        for ph in &p.phases {
            n += 1;
            let title = format!("{}: {}", c.name, ph.name);
            let _ = writeln!(
                s,
                "<figure class=\"chart\" data-kind=\"flame\">{}<figcaption>{}</figcaption></figure>",
                svg(&title, &ph.stacks),
                esc(&phase_caption(c, p, ph))
            );
        }
        s.push_str("</div>\n");
        for ph in &p.phases {
            let _ = write!(
                s,
                "<details><summary>top symbols ({}: {} samples)</summary>\n<table><tr><th>symbol</th><th>space</th><th>inclusive</th><th>self</th></tr>\n",
                esc(&ph.name),
                ph.samples
            );
            for t in &ph.top {
                let _ = writeln!(
                    s,
                    "<tr><td>{}</td><td>{}</td><td>{:.1}%</td><td>{:.1}%</td></tr>",
                    esc(&t.symbol),
                    esc(&t.space),
                    t.total_pct,
                    t.self_pct
                );
            }
            s.push_str("</table></details>\n");
        }
    }
    // zoom, search and the hovered frame's line: inline, no network; the
    // graphs read without it
    let _ = writeln!(s, "<style>{FLAME_CSS}</style><script>{FLAME_JS}</script>");
    n
}

const FLAME_JS: &str = include_str!("flame.js");

const FLAME_CSS: &str = ".flamebar{display:flex;gap:.6em;align-items:center;padding:.3em .5em;font-size:.85em}.flamebar input{width:18em;max-width:50%}.flameinfo{font-size:.85em;color:#333;padding:.2em .5em;min-height:1.2em;overflow-wrap:anywhere}";

#[cfg(test)]
mod tests {
    use super::*;

    fn st(stack: &str, count: u64) -> FoldedStack {
        FoldedStack {
            stack: stack.into(),
            count,
        }
    }

    #[test]
    fn the_tree_sums_children_into_parents() {
        let t = tree(&[st("a;b;c_[k]", 3), st("a;b", 1), st("a;d", 2), st("e", 4)]);
        assert_eq!(t[0].value, 10);
        let a = &t[t[0].children["a"]];
        assert_eq!(a.value, 6);
        assert_eq!(t[a.children["b"]].value, 4);
        assert_eq!(t[t[a.children["b"]].children["c_[k]"]].value, 3);
    }

    #[test]
    fn widths_follow_the_samples_and_narrow_frames_are_dropped() {
        let mut stacks = vec![st("main;work;xfs_attr_set_[k]", 60000), st("main;spin", 40000)];
        // one sample in 100001: a hundredth of a pixel
        stacks.push(st("main;rare;deeper", 1));
        let s = svg("t: create", &stacks);
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert!(
            s.contains("<title>xfs_attr_set (60000 samples, 60.00%) [kernel]</title>"),
            "{s}"
        );
        assert!(s.contains("<title>spin (40000 samples, 40.00%) [user]</title>"));
        assert!(!s.contains("deeper"), "frames under {MIN_W} px are not drawn");
        // root, main, work, spin, xfs_attr_set (rare is under a pixel too)
        assert_eq!(s.matches("<g ").count(), 5);
        let width = |name: &str| -> f64 {
            let g = s
                .split("<g ")
                .find(|g| g.contains(&format!("<title>{name} (")))
                .unwrap();
            g.split("width=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        let full = W - 2.0 * PAD;
        assert!((width("all") - full).abs() < 0.1);
        assert!((width("work") / width("spin") - 1.5).abs() < 0.01);
        // the same input, the same bytes
        assert_eq!(s, svg("t: create", &stacks));
    }

    #[test]
    fn labels_fit_their_frames_and_text_is_escaped() {
        assert_eq!(fit("xfs_attr_set", 20).unwrap(), "xfs_attr_set");
        assert_eq!(fit("xfs_attr_set", 6).unwrap(), "xfs_..");
        assert_eq!(fit("xfs_attr_set", 2), None);
        let s = svg("<a> & b", &[st("<T as Tr>::f", 1)]);
        assert!(s.contains("&lt;T as Tr&gt;::f"));
        assert!(s.contains("&lt;a&gt; &amp; b"));
        assert!(!s.contains("<T as"));
    }

    #[test]
    fn no_stacks_draw_just_the_root() {
        let s = svg("empty", &[]);
        assert_eq!(s.matches("<rect").count(), 2);
    }
}
