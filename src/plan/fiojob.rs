//! fio job files: a small parser for fio's INI dialect and the command-line
//! form (`--name=job --rw=randread ...`). Written by hand because generic INI
//! crates merge repeated sections (fio makes each a new job) and choke on
//! bare flags (`time_based`). The result is a list of jobs, each with every
//! option that applies to it (its globals, then its own) and where each
//! option was written, so the mapping onto fslab's io workload can name
//! file:line for anything it rejects.

use super::{PlanError, Result};
use std::path::{Path, PathBuf};

/// One `key[=value]` and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Opt {
    pub key: String,
    /// None for a bare flag (`time_based`).
    pub value: Option<String>,
    /// "file:line" (or "command line").
    pub at: String,
}

/// One job section, with the globals that apply to it first.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub name: String,
    pub at: String,
    pub opts: Vec<Opt>,
}

impl Job {
    /// The last value given for `key` (later options override earlier ones).
    pub fn get(&self, key: &str) -> Option<&Opt> {
        self.opts.iter().rev().find(|o| o.key == key)
    }

    /// Whether a bare flag or boolean option is on (`direct=1`, `time_based`).
    pub fn flag(&self, key: &str) -> bool {
        self.get(key)
            .map(|o| o.value.as_deref().map(|v| v != "0" && v != "false").unwrap_or(true))
            .unwrap_or(false)
    }
}

/// Parser state across files and includes.
#[derive(Default)]
struct Parser {
    global: Vec<Opt>,
    jobs: Vec<Job>,
    /// Inside `[global]` (true) or a job (false); None before any section.
    in_global: Option<bool>,
    depth: usize,
}

/// Replaces `${NAME}` with the environment variable.
fn substitute(s: &str, at: &str) -> Result<String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(end) = after.find('}') else {
            return Err(PlanError::new(at, format!("unclosed '${{' in '{s}'")));
        };
        let name = &after[..end];
        match std::env::var(name) {
            Ok(v) => out.push_str(&v),
            Err(_) => {
                return Err(PlanError::new(
                    at,
                    format!("environment variable '{name}' is not set (used as ${{{name}}})"),
                ))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Splits `key=value` (spaces around `=` allowed) or a bare `key`.
fn split_opt(line: &str) -> (String, Option<String>) {
    match line.split_once('=') {
        Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
        None => (line.trim().to_string(), None),
    }
}

impl Parser {
    fn add(&mut self, opt: Opt) -> Result<()> {
        match self.in_global {
            None => Err(PlanError::new(
                opt.at.as_str(),
                format!("option '{}' before any [section]", opt.key),
            )),
            Some(true) => {
                self.global.push(opt);
                Ok(())
            }
            Some(false) => {
                self.jobs.last_mut().expect("a job is open").opts.push(opt);
                Ok(())
            }
        }
    }

    fn file(&mut self, path: &Path) -> Result<()> {
        let name = path.display().to_string();
        let text = super::read_regular_file(path, "JOBFILE", super::MAX_PLAN_BYTES)?;
        self.text(&name, &text, path.parent().unwrap_or(Path::new(".")))
    }

    fn text(&mut self, name: &str, text: &str, dir: &Path) -> Result<()> {
        for (i, raw) in text.lines().enumerate() {
            let at = format!("{name}:{}", i + 1);
            let line = raw.trim();
            if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
                continue;
            }
            if let Some(rest) = line.strip_prefix("include ") {
                if self.depth >= 8 {
                    return Err(PlanError::new(at.as_str(), "includes nested more than 8 deep"));
                }
                let inc = substitute(rest.trim(), &at)?;
                let p: PathBuf = dir.join(&inc);
                if !p.is_file() {
                    return Err(PlanError::new(at.as_str(), format!("include '{inc}': no such file")));
                }
                self.depth += 1;
                self.file(&p)?;
                self.depth -= 1;
                continue;
            }
            if let Some(h) = line.strip_prefix('[') {
                let Some(s) = h.strip_suffix(']') else {
                    return Err(PlanError::new(
                        at.as_str(),
                        format!("'{line}': a section header ends with ']'"),
                    ));
                };
                let s = s.trim();
                if s.is_empty() {
                    return Err(PlanError::new(at.as_str(), "empty section name"));
                }
                if s == "global" {
                    self.in_global = Some(true);
                } else {
                    self.in_global = Some(false);
                    // A repeated name is a new job (fio), never a merge.
                    self.jobs.push(Job {
                        name: s.to_string(),
                        at: at.clone(),
                        opts: self.global.clone(),
                    });
                }
                continue;
            }
            let (key, value) = split_opt(line);
            let value = value.map(|v| substitute(&v, &at)).transpose()?;
            if key.is_empty() || key.contains(char::is_whitespace) {
                return Err(PlanError::new(
                    at.as_str(),
                    format!("'{line}' is not an option (key=value or a bare flag)"),
                ));
            }
            self.add(Opt { key, value, at })?;
        }
        Ok(())
    }
}

/// Reads job files in order (globals carry across files as in fio), keeping
/// only `section` when given.
pub fn parse_files(files: &[PathBuf], section: Option<&str>) -> Result<Vec<Job>> {
    let mut p = Parser::default();
    for f in files {
        p.in_global = None;
        p.file(f)?;
    }
    finish(p.jobs, section)
}

/// Parses job file text (tests, fuzzing).
pub fn parse_text(name: &str, text: &str) -> Result<Vec<Job>> {
    let mut p = Parser::default();
    p.text(name, text, Path::new("."))?;
    finish(p.jobs, None)
}

fn finish(jobs: Vec<Job>, section: Option<&str>) -> Result<Vec<Job>> {
    if jobs.is_empty() {
        return Err(PlanError::new("JOBFILE", "no jobs defined (only [global] or nothing)"));
    }
    let Some(s) = section else { return Ok(jobs) };
    let mut names: Vec<&str> = Vec::new();
    for j in &jobs {
        if !names.contains(&j.name.as_str()) {
            names.push(&j.name);
        }
    }
    let names = names.join(", ");
    let jobs: Vec<Job> = jobs.into_iter().filter(|j| j.name == s).collect();
    if jobs.is_empty() {
        return Err(PlanError::new(
            "--section",
            format!("no job section named '{s}' (the job files have: {names})"),
        ));
    }
    Ok(jobs)
}

/// fio's command-line job form: options before the first `--name` are
/// global, each `--name=NAME` starts a job, and `--key=value` / `--flag`
/// options belong to the job they follow.
pub fn parse_cli_jobs(args: &[String]) -> Result<Vec<Job>> {
    let mut global = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    for a in args {
        let Some(body) = a.strip_prefix("--") else {
            return Err(PlanError::new(
                "command line",
                format!("'{a}': expected --option=value"),
            ));
        };
        let (key, value) = split_opt(body);
        let at = "command line".to_string();
        if key == "name" {
            let name = value.unwrap_or_default();
            if name.is_empty() {
                return Err(PlanError::new("--name", "needs a job name: --name=NAME"));
            }
            jobs.push(Job {
                name,
                at: at.clone(),
                opts: global.clone(),
            });
            continue;
        }
        let opt = Opt { key, value, at };
        match jobs.last_mut() {
            Some(j) => j.opts.push(opt),
            None => global.push(opt),
        }
    }
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(j: &Job) -> Vec<(String, Option<String>)> {
        j.opts.iter().map(|o| (o.key.clone(), o.value.clone())).collect()
    }

    #[test]
    fn globals_sections_flags_comments() {
        let text = "; a comment\n# another\n[global]\nbs=4k\ntime_based\nruntime = 10s\n\n[a]\nrw=randread\n[b]\nrw=write\nbs=1m\n[a]\nrw=read\n";
        let jobs = parse_text("j.fio", text).unwrap();
        assert_eq!(jobs.len(), 3, "a repeated name is a new job");
        assert_eq!(jobs[0].name, "a");
        assert_eq!(
            keys(&jobs[0]),
            [
                ("bs".into(), Some("4k".into())),
                ("time_based".into(), None),
                ("runtime".into(), Some("10s".into())),
                ("rw".into(), Some("randread".into()))
            ]
        );
        assert_eq!(
            jobs[1].get("bs").unwrap().value.as_deref(),
            Some("1m"),
            "own options override globals"
        );
        assert_eq!(jobs[1].get("bs").unwrap().at, "j.fio:12");
        assert!(jobs[2].flag("time_based"));
        assert_eq!(jobs[2].get("rw").unwrap().value.as_deref(), Some("read"));
    }

    #[test]
    fn later_globals_apply_to_later_jobs_only() {
        let jobs = parse_text("j", "[global]\nbs=4k\n[a]\n[global]\nbs=8k\n[b]\n").unwrap();
        assert_eq!(jobs[0].get("bs").unwrap().value.as_deref(), Some("4k"));
        assert_eq!(jobs[1].get("bs").unwrap().value.as_deref(), Some("8k"));
    }

    #[test]
    fn env_substitution() {
        std::env::set_var("FSLAB_TEST_BS", "16k");
        let jobs = parse_text("j", "[a]\nbs=${FSLAB_TEST_BS}\n").unwrap();
        assert_eq!(jobs[0].get("bs").unwrap().value.as_deref(), Some("16k"));
        let e = parse_text("j", "[a]\nbs=${FSLAB_NOT_SET_EVER}\n").unwrap_err();
        assert_eq!(e.flag, "j:2");
        assert!(e.msg.contains("FSLAB_NOT_SET_EVER"));
    }

    #[test]
    fn errors_name_the_line() {
        for (text, at, want) in [
            ("bs=4k\n[a]\n", "j:1", "before any [section]"),
            ("[a\nbs=4k\n", "j:1", "ends with ']'"),
            ("[a]\nbs 4k\n", "j:2", "is not an option"),
            ("[a]\ninclude nope.fio\n", "j:2", "include 'nope.fio'"),
            ("[global]\nbs=4k\n", "JOBFILE", "no jobs defined"),
        ] {
            let e = parse_text("j", text).unwrap_err();
            assert_eq!(e.flag, at, "{text}");
            assert!(e.msg.contains(want), "{text}: {}", e.msg);
        }
    }

    #[test]
    fn command_line_jobs() {
        let args: Vec<String> = [
            "--bs=4k",
            "--name=a",
            "--rw=randread",
            "--direct=1",
            "--name=b",
            "--time_based",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let jobs = parse_cli_jobs(&args).unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].get("bs").unwrap().value.as_deref(), Some("4k"));
        assert!(jobs[0].flag("direct"));
        assert!(jobs[1].flag("time_based") && jobs[1].get("rw").is_none());
    }
}
