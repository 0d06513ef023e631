//! The page's first section: what each result ran on (command, host,
//! kernel, CPU, memory, fslab) and what each filesystem was.

use super::common::place;
use crate::model::Report;
use crate::report::compare::{self, Comparison};
use crate::report::render::svg::esc;
use crate::units::Bytes;
use std::fmt::Write;

/// How a scratch filesystem was made, or "existing".
fn made_with(scratch: Option<&crate::model::ScratchInfo>) -> String {
    match scratch {
        Some(sc) if sc.fs_type == "raw" => format!("raw loop device, {} image", Bytes(sc.size)),
        Some(sc) if sc.fs_type == "tmpfs" => format!("tmpfs, {}", Bytes(sc.size)),
        Some(sc) => format!(
            "mkfs.{} {} ({} image)",
            sc.fs_type,
            sc.mkfs_args.join(" "),
            Bytes(sc.size)
        ),
        None => "existing".into(),
    }
}

pub(super) fn environment(s: &mut String, sources: &[(String, &Report)], cmp: &Comparison) {
    s.push_str("<h2 id=\"environment\">Environment</h2>\n<table class=\"env\"><tr><th>result</th><th>command</th><th>started</th><th>host</th><th>kernel</th><th>CPU</th><th>memory</th><th>fslab</th><th>peak RSS</th></tr>\n");
    for (label, r) in sources {
        let cmd = match &r.lab {
            Some(l) => format!("run {}", l.file.as_deref().unwrap_or("(quick suite)")),
            None => r.command.clone(),
        };
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} {}</td><td>{} ({} cores)</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(if label.is_empty() { "-" } else { label }),
            esc(&cmd),
            esc(&r.started_at),
            esc(&r.host.hostname),
            esc(&r.host.kernel),
            esc(&r.host.arch),
            esc(&r.host.cpu_model),
            r.host.cores,
            Bytes(r.host.memory_bytes),
            esc(&r.fslab_version),
            Bytes(r.max_rss_kib * 1024),
        );
    }
    s.push_str("</table>\n<table class=\"env\"><tr><th>filesystem</th><th>type</th><th>made with</th><th>mount options</th><th>device</th><th>O_DIRECT</th></tr>\n");
    // a row per column; where the columns are not the filesystems (a
    // compared factor or kernel) or a filesystem has levels, a row per
    // filesystem as made ("ext4[scheduler=none]", `LabTag::environment`)
    let by_fs = sources
        .iter()
        .flat_map(|(_, r)| &r.cells)
        .filter_map(|c| c.lab.as_ref())
        .any(|t| t.environment() != t.column());
    let key = |l: &str, c: &crate::model::Cell| match c.lab.as_ref().filter(|_| by_fs) {
        Some(t) => t.environment(),
        None => place(l, c).0,
    };
    let rows: Vec<String> = if by_fs {
        cmp.environment.iter().map(|(e, _)| e.clone()).collect()
    } else {
        cmp.filesystems.clone()
    };
    for fs in &rows {
        let Some(c) = sources
            .iter()
            .flat_map(|(l, r)| r.cells.iter().map(move |c| (l, c)))
            .find(|(l, c)| key(l, c) == *fs && c.error.is_none())
            .map(|(_, c)| c)
        else {
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td colspan=\"5\" class=\"fail\">no cell ran</td></tr>",
                esc(fs)
            );
            continue;
        };
        let t = &c.target;
        let scratch = c.lab.as_ref().and_then(|l| l.scratch.as_ref());
        let made = made_with(scratch);
        let mut dev = t.device.clone().unwrap_or_default();
        if let Some(b) = &t.loop_backing_file {
            let _ = write!(dev, " (loop on {b})");
        }
        if let Some(d) = scratch.and_then(|x| x.loop_direct_io).or(t.loop_direct_io) {
            let _ = write!(dev, ", loop dio {}", if d { "on" } else { "off" });
        }
        if let Some(q) = &t.queue {
            let _ = write!(dev, ", scheduler {}", q.scheduler);
        }
        if let Some(k) = compare::kernel_note(c) {
            let _ = write!(dev, ", {k}");
        }
        let direct = sources
            .iter()
            .flat_map(|(l, r)| r.cells.iter().map(move |c| (l, c)))
            .filter(|(l, c)| key(l, c) == *fs)
            .find_map(|(_, c)| c.target.direct_honoured)
            .map(|h| if h { "honoured" } else { "ignored (page cache)" })
            .unwrap_or("not used");
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(fs),
            esc(&t.fs_type),
            esc(&made),
            esc(t.mount_options.as_deref().unwrap_or("")),
            esc(&dev),
            direct
        );
    }
    s.push_str("</table>\n");
}
