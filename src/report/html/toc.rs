//! The page's table of contents: every section (`<h2 id>`) with its
//! subsections (`<h3>`, given ids here) as links, and a link back to it
//! that stays in the corner while the page scrolls.

use std::fmt::Write;

/// A section: its id, title and subsections (id, title).
type Section = (String, String, Vec<(String, String)>);

/// Gives every `<h3>` of `body` an id (its section's id and a number) and
/// returns the body and the contents for it: `<nav id="contents">`.
pub(super) fn contents(body: &str) -> (String, String) {
    let mut out = String::with_capacity(body.len() + 1024);
    let mut sections: Vec<Section> = Vec::new();
    let mut rest = body;
    while let Some(at) = rest.find("<h") {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if let Some(r) = rest.strip_prefix("<h2 id=\"") {
            let id = r.split('"').next().unwrap_or_default().to_string();
            let title = inner(rest, "</h2>");
            sections.push((id, title, Vec::new()));
        } else if rest.starts_with("<h3>") {
            if let Some(sec) = sections.last_mut() {
                let id = format!("{}-{}", sec.0, sec.2.len() + 1);
                sec.2.push((id.clone(), inner(rest, "</h3>")));
                let _ = write!(out, "<h3 id=\"{id}\">");
                rest = &rest["<h3>".len()..];
                continue;
            }
        }
        out.push_str("<h");
        rest = &rest[2..];
    }
    out.push_str(rest);
    let mut nav = String::from("<nav id=\"contents\" class=\"toc\"><b>Contents</b><ol>");
    for (id, title, subs) in &sections {
        let _ = write!(nav, "<li><a href=\"#{id}\">{title}</a>");
        if !subs.is_empty() {
            nav.push_str("<span class=\"subs\">: ");
            let links: Vec<String> = subs.iter().map(|(i, t)| format!("<a href=\"#{i}\">{t}</a>")).collect();
            nav.push_str(&links.join(" · "));
            nav.push_str("</span>");
        }
        nav.push_str("</li>");
    }
    nav.push_str("</ol></nav>\n<a class=\"totop\" href=\"#contents\">↑ contents</a>\n");
    if sections.is_empty() {
        nav.clear();
    }
    (out, nav)
}

/// The HTML inside a heading that starts `s` (already escaped), up to `end`.
fn inner(s: &str, end: &str) -> String {
    let open = s.find('>').map(|i| i + 1).unwrap_or(0);
    let close = s.find(end).unwrap_or(s.len());
    s[open..close.max(open)].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_and_subsections_are_linked() {
        let body = "<h2 id=\"a\">First</h2><h3>one &amp; two</h3><p>x</p><h3>three</h3><h2 id=\"b\">Second</h2>";
        let (out, nav) = contents(body);
        assert!(out.contains("<h3 id=\"a-1\">one &amp; two</h3>") && out.contains("<h3 id=\"a-2\">three</h3>"));
        assert!(out.contains("<h2 id=\"b\">Second</h2><p>") || out.ends_with("<h2 id=\"b\">Second</h2>"));
        assert!(nav.contains("<a href=\"#a\">First</a>") && nav.contains("<a href=\"#a-2\">three</a>"));
        assert!(nav.contains("<a href=\"#b\">Second</a>"));
        assert_eq!(contents("<p>none</p>").1, "");
    }
}
