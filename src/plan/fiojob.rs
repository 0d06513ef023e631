//! fio job files: a small parser for fio's INI dialect and the command-line
//! form (`--name=job --rw=randread ...`). Written by hand because generic INI
//! crates merge repeated sections (fio makes each a new job) and choke on
//! bare flags (`time_based`). The result is a list of jobs, each with every
//! option that applies to it (its globals, then its own) and where each
//! option was written, so the mapping onto fslab's io workload can name
//! file:line for anything it rejects.

use super::{PlanError, Result};
use crate::units::excerpt;
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

impl Opt {
    /// As a fio command-line option: `--key=value`, or `--key` for a flag.
    fn shown(&self) -> String {
        match &self.value {
            Some(v) => format!("--{}={v}", self.key),
            None => format!("--{}", self.key),
        }
    }
}

/// One job section, with the globals that apply to it first.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The section's name: what `--section` selects.
    pub name: String,
    pub at: String,
    pub opts: Vec<Opt>,
    /// A `name=` written in the section itself: fio reports the job by it
    /// (kubestr's and fio-plot's jobs do this). A `name=` in `[global]`
    /// does not rename a section (fio 3.33 keeps the section's name).
    pub title: Option<String>,
}

impl Job {
    /// The name fio reports the job by: its own `name=`, else the section's.
    pub fn reported_name(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }

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
    /// Files included so far: a file including itself N times at each of
    /// 8 levels would otherwise read N^8 files.
    included: usize,
    /// The sections and options in file order, as fio's --showcmd prints
    /// them (`--name=JOB` for a job's header, nothing for [global]).
    cmd: Vec<String>,
}

/// The most `include`s a run of job files follows.
const MAX_INCLUDES: usize = 256;

/// Replaces `${NAME}` with the environment variable.
fn substitute(s: &str, at: &str) -> Result<String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(end) = after.find('}') else {
            return Err(PlanError::new(at, format!("unclosed '${{' in '{}'", excerpt(s))));
        };
        let name = &after[..end];
        match std::env::var(name) {
            Ok(v) => out.push_str(&v),
            Err(_) => {
                return Err(PlanError::new(
                    at,
                    format!("environment variable '{}' is not set", excerpt(name)),
                ))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A job file line without its comment: fio (parse.c `strip_blank_end`)
/// cuts every line at its first `;` and then at its first `#`, wherever
/// they are (`bs=4k ; why` is `bs=4k`; fio has no quoting, so a value
/// cannot hold either).
fn strip_comment(line: &str) -> &str {
    let line = line.split(';').next().unwrap_or("");
    line.split('#').next().unwrap_or("").trim()
}

/// fio's keywords (options.c `fio_keywords`), replaced in job file values:
/// the page size, the memory in MiB, the CPUs online.
fn keyword(word: &str) -> Option<u64> {
    match word {
        "$pagesize" => Some(rustix::param::page_size() as u64),
        "$mb_memory" => crate::plan::host_memory().map(|b| b >> 20),
        "$ncpus" => {
            // sysconf(_SC_NPROCESSORS_ONLN), as fio's cpus_online()
            let s = std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
            let mut n = 0u64;
            for r in s.trim().split(',') {
                let (a, b) = r.split_once('-').unwrap_or((r, r));
                let (a, b): (u64, u64) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                n += b.checked_sub(a)? + 1;
            }
            Some(n)
        }
        _ => None,
    }
}

const KEYWORDS: &[&str] = &["$pagesize", "$mb_memory", "$ncpus"];

/// A value with fio's keywords replaced and, when one was and the value
/// has `+ - * /`, computed as fio does (it hands the value to `bc`:
/// integer arithmetic). Without a keyword, a value starting with `(` is
/// fio's arithmetic (parse.c `str_to_decimal`, with k/m/g/t/p suffixes);
/// one that is not an expression is left for the option to judge.
fn keywords_and_math(v: &str, at: &str, file: bool) -> Result<String> {
    let mut out = v.to_string();
    let mut replaced = false;
    if file {
        for w in KEYWORDS {
            if out.contains(w) {
                let Some(n) = keyword(w) else {
                    return Err(PlanError::new(at, format!("{w}: this system does not say")));
                };
                out = out.replace(w, &n.to_string());
                replaced = true;
            }
        }
    }
    let math = out.contains(['+', '-', '*', '/']) && !out.contains('\'');
    if replaced && math {
        return match arith::eval(&out, false) {
            Some(n) => Ok(n.to_string()),
            None => Err(PlanError::new(
                at,
                format!(
                    "'{}': not an expression fio can compute ({})",
                    excerpt(v),
                    excerpt(&out)
                ),
            )),
        };
    }
    if out.starts_with('(') {
        if let Some(n) = arith::eval(&out, true) {
            return Ok(n.to_string());
        }
    }
    Ok(out)
}

/// fio's value arithmetic: integers, `+ - * / % ^`, parentheses, unary
/// minus; with `suffixes`, numbers may carry fio's size suffixes (k, m, g,
/// t, p; 1024-based, an `i`/`b` after them ignored). None for anything
/// else, an overflow, a division by zero or nesting deeper than 32.
pub mod arith {
    struct P<'a> {
        s: &'a [u8],
        i: usize,
        suffixes: bool,
        depth: usize,
    }

    pub fn eval(s: &str, suffixes: bool) -> Option<i64> {
        let mut p = P {
            s: s.as_bytes(),
            i: 0,
            suffixes,
            depth: 0,
        };
        let v = p.sum()?;
        p.ws();
        (p.i == p.s.len()).then_some(v)
    }

    impl P<'_> {
        fn ws(&mut self) {
            while self.s.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
                self.i += 1;
            }
        }
        fn peek(&mut self) -> Option<u8> {
            self.ws();
            self.s.get(self.i).copied()
        }
        fn sum(&mut self) -> Option<i64> {
            let mut v = self.product()?;
            while let Some(c @ (b'+' | b'-')) = self.peek() {
                self.i += 1;
                let r = self.product()?;
                v = if c == b'+' {
                    v.checked_add(r)?
                } else {
                    v.checked_sub(r)?
                };
            }
            Some(v)
        }
        fn product(&mut self) -> Option<i64> {
            let mut v = self.power()?;
            while let Some(c @ (b'*' | b'/' | b'%')) = self.peek() {
                self.i += 1;
                let r = self.power()?;
                v = match c {
                    b'*' => v.checked_mul(r)?,
                    b'/' => v.checked_div(r)?,
                    _ => v.checked_rem(r)?,
                };
            }
            Some(v)
        }
        fn power(&mut self) -> Option<i64> {
            let b = self.unary()?;
            if self.peek() == Some(b'^') {
                self.i += 1;
                let e = self.power()?;
                return b.checked_pow(u32::try_from(e).ok()?);
            }
            Some(b)
        }
        fn unary(&mut self) -> Option<i64> {
            match self.peek()? {
                b'-' => {
                    self.i += 1;
                    self.deeper(|p| p.unary())?.checked_neg()
                }
                b'+' => {
                    self.i += 1;
                    self.deeper(|p| p.unary())
                }
                b'(' => {
                    self.i += 1;
                    let v = self.deeper(|p| p.sum())?;
                    (self.peek() == Some(b')')).then(|| self.i += 1)?;
                    Some(v)
                }
                c if c.is_ascii_digit() => self.number(),
                _ => None,
            }
        }
        fn deeper(&mut self, f: impl FnOnce(&mut Self) -> Option<i64>) -> Option<i64> {
            if self.depth >= 32 {
                return None;
            }
            self.depth += 1;
            let v = f(self);
            self.depth -= 1;
            v
        }
        fn number(&mut self) -> Option<i64> {
            let start = self.i;
            while self.s.get(self.i).is_some_and(|c| c.is_ascii_digit()) {
                self.i += 1;
            }
            let n: i64 = std::str::from_utf8(&self.s[start..self.i]).ok()?.parse().ok()?;
            if !self.suffixes {
                return Some(n);
            }
            let shift = match self.s.get(self.i).map(|c| c.to_ascii_lowercase()) {
                Some(b'k') => 10,
                Some(b'm') => 20,
                Some(b'g') => 30,
                Some(b't') => 40,
                Some(b'p') => 50,
                _ => return Some(n),
            };
            self.i += 1;
            if self.s.get(self.i).is_some_and(|c| c.eq_ignore_ascii_case(&b'i')) {
                self.i += 1;
            }
            if self.s.get(self.i).is_some_and(|c| c.eq_ignore_ascii_case(&b'b')) {
                self.i += 1;
            }
            n.checked_mul(1i64 << shift)
        }
    }
}

/// The longest option name fslab takes as one (fio's longest is about 30).
const MAX_KEY: usize = 48;

/// Whether `key` can be a fio option's name: letters, digits, `_` and `-`,
/// starting with a letter. Anything else on a line is not an option, and
/// the line is refused without being quoted: a file that is not a job file
/// (`include /etc/shadow`) must not be read out through the message.
fn is_option_name(key: &str) -> bool {
    key.len() <= MAX_KEY
        && key.starts_with(|c: char| c.is_ascii_alphabetic())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
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
                "an option before any [section] (a job file starts with [global] or [JOBNAME])",
            )),
            Some(true) => {
                self.global.push(opt);
                Ok(())
            }
            Some(false) => {
                let job = self.jobs.last_mut().expect("a job is open");
                if opt.key == "name" {
                    job.title = opt.value.clone().filter(|v| !v.trim().is_empty());
                }
                job.opts.push(opt);
                Ok(())
            }
        }
    }

    /// Reads one job file, named `what` in a refusal; `includer` is the
    /// owner of the file including it when that is not root (None for a
    /// file named on the command line): the file must be one they could read.
    fn file(&mut self, path: &Path, what: &str, includer: Option<u32>) -> Result<()> {
        let name = path.display().to_string();
        let (text, owner) = super::read_regular_file_with(path, what, super::MAX_PLAN_BYTES, |m| match includer {
            Some(uid) => super::readable_by(m, uid),
            None => Ok(()),
        })?;
        self.text(&name, &text, path.parent().unwrap_or(Path::new(".")), Some(owner))
    }

    /// Parses job file text; `owner` is its file's owner (None: not a file).
    fn text(&mut self, name: &str, text: &str, dir: &Path, owner: Option<u32>) -> Result<()> {
        for (i, raw) in text.lines().enumerate() {
            let at = format!("{name}:{}", i + 1);
            let line = strip_comment(raw);
            if line.is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix("include ") {
                if self.depth >= 8 {
                    return Err(PlanError::new(at.as_str(), "includes nested more than 8 deep"));
                }
                self.included += 1;
                if self.included > MAX_INCLUDES {
                    return Err(PlanError::new(
                        at.as_str(),
                        format!("more than {MAX_INCLUDES} includes in all"),
                    ));
                }
                let inc = substitute(rest.trim(), &at)?;
                let p: PathBuf = dir.join(&inc);
                if !p.is_file() {
                    return Err(PlanError::new(
                        at.as_str(),
                        format!("include '{}': no such file", excerpt(&inc)),
                    ));
                }
                self.depth += 1;
                // a file written by root may include anything root reads;
                // one written by someone else only what they could read
                let includer = owner.filter(|&uid| uid != 0);
                self.file(&p, &at, includer)?;
                self.depth -= 1;
                continue;
            }
            if let Some(h) = line.strip_prefix('[') {
                let Some(s) = h.strip_suffix(']') else {
                    return Err(PlanError::new(
                        at.as_str(),
                        format!("line {} starts a [section] header but does not end with ']'", i + 1),
                    ));
                };
                let s = s.trim();
                if s.is_empty() {
                    return Err(PlanError::new(at.as_str(), "empty section name"));
                }
                if s == "global" {
                    // fio's --showcmd prints a later [global] with the
                    // global options so far first (fio 3.33)
                    let so_far: Vec<String> = self.global.iter().map(Opt::shown).collect();
                    self.cmd.extend(so_far);
                    self.in_global = Some(true);
                } else {
                    self.cmd.push(format!("--name={s}"));
                    self.in_global = Some(false);
                    // A repeated name is a new job (fio), never a merge.
                    self.jobs.push(Job {
                        name: s.to_string(),
                        at: at.clone(),
                        opts: self.global.clone(),
                        title: None,
                    });
                }
                continue;
            }
            let (key, value) = split_opt(line);
            if !is_option_name(&key) {
                return Err(PlanError::new(
                    at.as_str(),
                    format!("line {} is not a fio option (key=value or a bare flag)", i + 1),
                ));
            }
            let value = value
                .map(|v| substitute(&v, &at).and_then(|v| keywords_and_math(&v, &at, true)))
                .transpose()?;
            let opt = Opt { key, value, at };
            self.cmd.push(opt.shown());
            self.add(opt)?;
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
        p.file(f, "JOBFILE", None)?;
    }
    finish(p.jobs, section)
}

/// fio's --showcmd of these job files: `fio`, then each section's options
/// in file order, a job's after its `--name=`, as fio 3.33 prints them
/// (with its trailing space).
pub fn showcmd(files: &[PathBuf]) -> Result<String> {
    let mut p = Parser::default();
    for f in files {
        p.in_global = None;
        p.file(f, "JOBFILE", None)?;
    }
    let mut line = String::from("fio ");
    for c in &p.cmd {
        line.push_str(c);
        line.push(' ');
    }
    Ok(line)
}

/// Parses job file text (tests, fuzzing).
pub fn parse_text(name: &str, text: &str) -> Result<Vec<Job>> {
    let mut p = Parser::default();
    p.text(name, text, Path::new("."), None)?;
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
    let names = names.iter().map(|n| excerpt(n)).collect::<Vec<_>>().join(", ");
    let jobs: Vec<Job> = jobs.into_iter().filter(|j| j.name == s).collect();
    if jobs.is_empty() {
        return Err(PlanError::new(
            "--section",
            format!("no job section named '{}' (the job files have: {names})", excerpt(s)),
        ));
    }
    Ok(jobs)
}

/// fio's command-line job form: options before the first `--name`, and
/// after `--name=global`, are global (fio's defaults: they apply to the
/// job files' jobs too, whose own options override them); each other
/// `--name=NAME` starts a job, and `--key=value` / `--flag` options belong
/// to the job they follow. Returns the globals and the jobs.
pub fn parse_cli(args: &[String]) -> Result<(Vec<Opt>, Vec<Job>)> {
    let mut global = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    let mut in_global = true;
    for a in args {
        let Some(body) = a.strip_prefix("--") else {
            return Err(PlanError::new(
                "command line",
                format!("'{a}': expected --option=value"),
            ));
        };
        let (key, value) = split_opt(body);
        let at = "command line".to_string();
        let value = value.map(|v| keywords_and_math(&v, &at, false)).transpose()?;
        if key == "name" {
            let name = value.unwrap_or_default();
            if name.is_empty() {
                return Err(PlanError::new("--name", "needs a job name: --name=NAME"));
            }
            // fio: a --name starting with "global" is the global section
            in_global = name.starts_with("global");
            if !in_global {
                jobs.push(Job {
                    name,
                    at: at.clone(),
                    opts: global.clone(),
                    title: None,
                });
            }
            continue;
        }
        let opt = Opt { key, value, at };
        match jobs.last_mut() {
            Some(j) if !in_global => j.opts.push(opt),
            _ => global.push(opt),
        }
    }
    Ok((global, jobs))
}

/// The jobs of `parse_cli` (its globals dropped).
pub fn parse_cli_jobs(args: &[String]) -> Result<Vec<Job>> {
    parse_cli(args).map(|(_, jobs)| jobs)
}

/// Job file jobs under command-line globals: these come first, as fio
/// parses its command line into the defaults every job starts from.
pub fn under_globals(jobs: Vec<Job>, global: &[Opt]) -> Vec<Job> {
    if global.is_empty() {
        return jobs;
    }
    jobs.into_iter()
        .map(|mut j| {
            let mut opts = global.to_vec();
            opts.append(&mut j.opts);
            j.opts = opts;
            j
        })
        .collect()
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
            ("[a\nbs=4k\n", "j:1", "end with ']'"),
            ("[a]\nbs 4k\n", "j:2", "line 2 is not a fio option"),
            ("[a]\ninclude nope.fio\n", "j:2", "include 'nope.fio'"),
            ("[global]\nbs=4k\n", "JOBFILE", "no jobs defined"),
        ] {
            let e = parse_text("j", text).unwrap_err();
            assert_eq!(e.flag, at, "{text}");
            assert!(e.msg.contains(want), "{text}: {}", e.msg);
        }
    }

    #[test]
    fn includes_are_bounded_in_all() {
        // 5 levels of 20 includes each would be 20^4 files read
        let d = tempfile::tempdir().unwrap();
        for i in 1..5 {
            std::fs::write(
                d.path().join(format!("l{i}.fio")),
                format!("include l{}.fio\n", i + 1).repeat(20),
            )
            .unwrap();
        }
        std::fs::write(d.path().join("l5.fio"), "bs=4k\n").unwrap();
        let top = d.path().join("top.fio");
        std::fs::write(&top, "[a]\ninclude l1.fio\n").unwrap();
        let e = parse_files(&[top], None).unwrap_err();
        assert!(e.msg.contains("more than 256 includes"), "{e}");
    }

    #[test]
    fn a_line_that_is_no_option_is_not_quoted() {
        // a file that is not a job file (/etc/shadow) is never read out
        for (text, at) in [
            ("SECRET-4711:$6$x:19000:0:99999:7:::\n", "j:1"),
            ("[a]\nSECRET-4711:$6$x:19000\n", "j:2"),
            ("[a]\nSECRET 4711\n", "j:2"),
            ("[a]\nSECRET-4711:x=1\n", "j:2"),
            ("[SECRET-4711\n", "j:1"),
            ("SECRET-4711\n[a]\n", "j:1"),
            (&format!("[a]\n{}=1\n", "SECRET".repeat(20)), "j:2"),
        ] {
            let e = parse_text("j", text).unwrap_err();
            assert_eq!(e.flag, at, "{text}");
            assert!(!e.to_string().contains("SECRET"), "{text}: {e}");
        }
        // a value is quoted short and without control characters
        let long = format!("\x1b[31m{}", "v".repeat(500));
        let e = parse_text("j", &format!("[a]\nbs=${{{long}}}\n")).unwrap_err();
        let shown = e.to_string();
        assert!(shown.len() < 200 && !shown.contains('\x1b'), "{shown}");
        assert!(shown.contains("\\x1b[31m"), "{shown}");
    }

    #[test]
    fn inline_comments_as_fio_strips_them() {
        let text = "[a] ; the job\nbs=4k ; why\nsize=1m# hash\ndescription=x#y;z\nrw=read;\n";
        let jobs = parse_text("j", text).unwrap();
        assert_eq!(jobs[0].name, "a");
        assert_eq!(
            keys(&jobs[0]),
            [
                ("bs".into(), Some("4k".into())),
                ("size".into(), Some("1m".into())),
                ("description".into(), Some("x".into())),
                ("rw".into(), Some("read".into())),
            ]
        );
    }

    #[test]
    fn keywords_and_arithmetic() {
        let page = rustix::param::page_size().to_string();
        let jobs = parse_text(
            "j",
            "[a]\nbs=$pagesize\nsize=$pagesize*2+4096\nnumjobs=$ncpus\niodepth=(2+2)*4\nnumber_ios=(4k*2)\nmem=$mb_memory\n",
        )
        .unwrap();
        let v = |k: &str| jobs[0].get(k).unwrap().value.clone().unwrap();
        assert_eq!(v("bs"), page);
        let p: u64 = page.parse().unwrap();
        assert_eq!(v("size"), (p * 2 + 4096).to_string());
        assert!(v("numjobs").parse::<u64>().unwrap() >= 1);
        assert!(v("mem").parse::<u64>().unwrap() >= 1);
        assert_eq!(v("iodepth"), "16");
        assert_eq!(v("number_ios"), "8192");
        // bc's integer division
        let jobs = parse_text("j", "[a]\nsize=$pagesize/3\n").unwrap();
        assert_eq!(jobs[0].get("size").unwrap().value, Some((p / 3).to_string()));
        // not an expression: left for the option to judge
        let jobs = parse_text("j", "[a]\nfilename=(x)\nbs=(1/0)\n").unwrap();
        assert_eq!(jobs[0].get("filename").unwrap().value.as_deref(), Some("(x)"));
        assert_eq!(jobs[0].get("bs").unwrap().value.as_deref(), Some("(1/0)"));
        let e = parse_text("j", "[a]\nsize=$pagesize*x\n").unwrap_err();
        assert_eq!(e.flag, "j:2");
        for (s, v) in [
            ("1+2*3", Some(7)),
            ("(1+2)*3", Some(9)),
            ("2^10", Some(1024)),
            ("-3+1", Some(-2)),
            ("7%4", Some(3)),
            ("9223372036854775807+1", None),
            ("((((", None),
            ("1 2", None),
            ("", None),
        ] {
            assert_eq!(arith::eval(s, false), v, "{s}");
        }
        assert_eq!(arith::eval("(1m/2)", true), Some(512 << 10));
        assert_eq!(arith::eval("(2KiB)", true), Some(2048));
        let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert_eq!(arith::eval(&deep, false), None, "nesting is bounded");
    }

    #[test]
    fn command_line_global_section() {
        let args: Vec<String> = [
            "--bs=4k",
            "--name=a",
            "--name=global",
            "--size=1m",
            "--name=b",
            "--rw=write",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (global, jobs) = parse_cli(&args).unwrap();
        assert_eq!(jobs.len(), 2, "--name=global is not a job");
        assert_eq!(global.len(), 2);
        assert!(
            jobs[0].get("size").is_none(),
            "a later global does not reach an earlier job"
        );
        assert_eq!(jobs[1].get("size").unwrap().value.as_deref(), Some("1m"));
        assert_eq!(jobs[1].get("bs").unwrap().value.as_deref(), Some("4k"));
        // the job files' jobs start from the command line's globals, and override them
        let file = parse_text("j", "[f]\nbs=8k\n").unwrap();
        let f = under_globals(file, &global);
        assert_eq!(f[0].get("bs").unwrap().value.as_deref(), Some("8k"));
        assert_eq!(f[0].get("size").unwrap().value.as_deref(), Some("1m"));
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
