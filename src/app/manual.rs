//! fslab about itself: shell completions and man pages, generated from
//! the command line's definition (`cli`), so they never drift from it.

use super::results::print_bytes;
use crate::cli::Cli;
use std::process::ExitCode;

/// `fslab completions SHELL`: the script on stdout.
pub fn run_completions(a: &crate::cli::CompletionsArgs) -> ExitCode {
    let mut script = Vec::new();
    let cli = <Cli as clap::CommandFactory>::command();
    let mut cmd = for_completion(&cli).propagate_version(true);
    clap_complete::generate(a.shell, &mut cmd, "fslab", &mut script);
    print_bytes(&script)
}

/// The command line as a shell should complete it: without hidden
/// subcommands and flags (clap_complete's bash script offered `schema`
/// and a guest's `--guest-workload`), and `--output` offering its
/// formats (`json`, `json:`...) instead of file names.
fn for_completion(c: &clap::Command) -> clap::Command {
    let name = c.get_name().to_string();
    let formats = crate::plan::formats_of(&name);
    let args = c.get_arguments().filter(|a| !a.is_hide_set()).map(|a| {
        let Some(formats) = formats.as_ref().filter(|_| a.get_long() == Some("output")) else {
            return a.clone();
        };
        let values: Vec<String> = formats.iter().flat_map(|f| [f.to_string(), format!("{f}:")]).collect();
        a.clone().value_parser(clap::builder::PossibleValuesParser::new(values))
    });
    let mut v = clap::Command::new(name.clone())
        .args(args)
        .subcommands(c.get_subcommands().filter(|s| !s.is_hide_set()).map(for_completion));
    if let Some(about) = c.get_about() {
        v = v.about(about.clone());
    }
    if let Some(ver) = c.get_version() {
        v = v.version(ver.to_string());
    }
    v
}

/// `fslab man [SUBCOMMAND]`: fslab(1), or fslab-SUBCOMMAND(1), as roff on stdout.
pub fn run_man(a: &crate::cli::ManArgs) -> ExitCode {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    // names the subcommands fslab-io etc. and gives them the version
    cmd.build();
    let page = match &a.subcommand {
        None => cmd,
        Some(name) => match cmd.find_subcommand(name) {
            Some(sub) => sub.clone(),
            None => {
                eprintln!("fslab: error: man: no subcommand '{name}'; see 'fslab man --help'");
                return ExitCode::from(2);
            }
        },
    };
    let after = page.get_after_help().map(|h| h.to_string()).unwrap_or_default();
    let has_args = page.get_arguments().any(|a| !a.is_hide_set());
    let has_subs = page.get_subcommands().any(|s| !s.is_hide_set());
    let has_version = page.get_version().is_some();
    // the footer names fslab's build, whichever page it is
    let man = clap_mangen::Man::new(page).source(format!("fslab {}", crate::cli::LONG_VERSION));
    let mut roff = Vec::new();
    let rendered = (|| -> std::io::Result<()> {
        man.render_title(&mut roff)?;
        man.render_name_section(&mut roff)?;
        man.render_synopsis_section(&mut roff)?;
        man.render_description_section(&mut roff)?;
        if has_args {
            man.render_options_section(&mut roff)?;
        }
        if has_subs {
            man.render_subcommands_section(&mut roff)?;
        }
        roff.extend(after_help_sections(&after).into_bytes());
        let status = if a.subcommand.as_deref() == Some("check") {
            CHECK_EXIT_STATUS
        } else {
            EXIT_STATUS
        };
        roff.extend(status.as_bytes());
        if has_version {
            man.render_version_section(&mut roff)?;
        }
        Ok(())
    })();
    if let Err(e) = rendered {
        eprintln!("fslab: error: man: {e}");
        return ExitCode::from(1);
    }
    print_bytes(ascii_roff(&String::from_utf8_lossy(&roff)).as_bytes())
}

/// Every character outside ASCII as groff's `\[uXXXX]`: groff reads its
/// input as Latin-1 unless man runs preconv first, and turned the help's
/// "×" and "±" into warnings ("invalid input character code 151").
fn ascii_roff(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.push_str(&format!("\\[u{:04X}]", c as u32));
        }
    }
    out
}

/// Every command's exit codes (`app::command`), as man-pages(7) lists them.
/// `fslab check`'s, for CI and `git bisect run`.
const CHECK_EXIT_STATUS: &str = ".SH \"EXIT STATUS\"
.TP
0
No headline metric is worse than the baseline by the threshold or more: each interval's worse end lies within it.
.TP
1
Regressed: a headline metric's interval excludes no change and its estimate is worse by the threshold or more.
.TP
2
Bad usage: a flag, a plan or a baseline that fslab refuses, named in one line on stderr; nothing is run.
.TP
125
Undecided: the repeats ran out before every metric was decided, or a cell failed (git bisect run skips the commit).
.TP
130, 143
Interrupted by SIGINT or SIGTERM (128 + the signal).
";

const EXIT_STATUS: &str = ".SH \"EXIT STATUS\"
.TP
0
The command did what it was asked.
.TP
1
The run failed (an I/O error, a filesystem that could not be made); the results so far are still written.
.TP
2
Bad usage: a flag, a plan or a job file that fslab refuses, named in one line on stderr; nothing is run or written.
.TP
130, 143
Interrupted by SIGINT or SIGTERM (128 + the signal); the results so far are written, marked interrupted, and fslab's files removed.
";

/// A command's --help epilogue as man sections: its "Examples:" lines
/// unfilled (roff would reflow and justify the commands, breaking a
/// command line mid-way, and turn `-` into hyphens that a shell does not
/// take), the text before and after them as NOTES, also as laid out for
/// --help (some of it is a table); the exit codes, which
/// the epilogue may also state, have their own section.
fn after_help_sections(after: &str) -> String {
    let lines: Vec<&str> = after.lines().collect();
    let start = lines.iter().position(|l| l.trim_end() == "Examples:");
    let (before, examples, rest) = match start {
        Some(i) => {
            let n = lines[i + 1..]
                .iter()
                .take_while(|l| l.is_empty() || l.starts_with(' '))
                .count();
            (&lines[..i], &lines[i + 1..i + 1 + n], &lines[i + 1 + n..])
        }
        None => (&lines[..], &lines[..0], &lines[..0]),
    };
    let mut out = String::new();
    let examples: Vec<&str> = {
        let mut e = examples.to_vec();
        while e.last().is_some_and(|l| l.trim().is_empty()) {
            e.pop();
        }
        e
    };
    if !examples.is_empty() {
        out.push_str(".SH EXAMPLES\n.nf\n");
        for l in examples {
            out.push_str(&roff_literal(l.strip_prefix("  ").unwrap_or(l)));
            out.push('\n');
        }
        out.push_str(".fi\n");
    }
    // paragraphs, each up to an "Exit codes:" sentence
    let notes: Vec<String> = before
        .split(|l| l.trim().is_empty())
        .chain(rest.split(|l| l.trim().is_empty()))
        .map(|p| {
            p.iter()
                .copied()
                .take_while(|l| !l.starts_with("Exit codes:"))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .filter(|p| !p.is_empty())
        .collect();
    if !notes.is_empty() {
        // as --help lays them out (some are tables), unfilled too
        out.push_str(".SH NOTES\n.nf\n");
        out.push_str(&roff_literal(&notes.join("\n\n")));
        out.push_str("\n.fi\n");
    }
    out
}

/// `s` as roff text that prints as written: backslashes and minus signs
/// escaped, a line that would start a request protected.
fn roff_literal(s: &str) -> String {
    s.lines()
        .map(|l| {
            let l = l.replace('\\', "\\e").replace('-', "\\-");
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
