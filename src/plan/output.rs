//! `--output FORMAT[:PATH]`: which reporters run and where their bytes go.
//!
//! Nothing is created or truncated while validating: a path is only checked
//! (an existing regular file or a new name in an existing directory fslab
//! can write to), so a refused run leaves every file as it was, and an
//! unwritable path still fails in the first millisecond rather than after a
//! ten-minute run. Results are written to a temporary file beside the target
//! and renamed over it (`write_atomically`): a crash mid-write never leaves a
//! half file, and a run that wrote nothing leaves an existing file alone.

use super::{PlanError, Result};
pub use crate::cli::TableFormat;
use crate::cli::{CommonArgs, LayoutArgs};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    Text,
    Json,
    /// bonnie++ 1.98 CSV: metadata runs only.
    BonnieCsv,
    /// Every probe sample as CSV: probe runs only.
    TimelineCsv,
    /// fio's JSON shape: io runs and the quick suite.
    FioJson,
    /// One row per (cell, operation, metric).
    Csv,
    /// A self-contained page with charts.
    Html,
    /// fio's normal text output: `fslab fio` only (its --output-format).
    FioText,
    /// `fslab fio`'s --output-format as a set (terse, normal, json, json+).
    Fio(crate::plan::fio::FioFormats),
    /// The text report with its tables in another format (`fslab run
    /// --format`) or its warnings in the JSON only (`--quiet-warnings`).
    TextAs(TextStyle),
}

/// How the text report is laid out: `OutputFormat::Text` is the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TextStyle {
    pub tables: TableFormat,
    /// A cell's flags and warnings, and each table's summary of them, stay
    /// in the JSON; the text counts them.
    pub quiet_warnings: bool,
    /// The widest line (`--width`; the terminal's width on a terminal):
    /// wider tables are split into blocks of columns, longer lines wrapped.
    pub width: u16,
}

/// The width of text that goes to a file or a pipe (mail, a ticket, a log
/// read in a terminal of unknown width).
pub const DEFAULT_WIDTH: u16 = 80;

impl Default for TextStyle {
    fn default() -> Self {
        TextStyle {
            tables: TableFormat::default(),
            quiet_warnings: false,
            width: DEFAULT_WIDTH,
        }
    }
}

/// The `--output` formats `fslab COMMAND` writes (what `Outputs::parse`
/// takes), for shell completion; None for a command whose --output is a
/// plain path (report, fio) or that has none.
pub fn formats_of(command: &str) -> Option<Vec<&'static str>> {
    let mut f = vec!["text", "json", "csv", "html"];
    match command {
        "calibrate" => return Some(vec!["text", "json"]),
        "meta" => f.push("bonnie-csv"),
        "probe" => f.push("timeline-csv"),
        "io" | "run" => f.push("fio-json"),
        "replay" => {}
        _ => return None,
    }
    Some(f)
}

#[derive(Debug, Clone)]
pub struct OutputSpec {
    pub format: OutputFormat,
    /// None = stdout. Checked during validation (`check_path`): the file to
    /// replace, with symbolic links resolved.
    pub path: Option<PathBuf>,
}

/// Every requested output.
#[derive(Debug, Default, Clone)]
pub struct Outputs(pub Vec<OutputSpec>);

impl Outputs {
    /// Parses every `--output` of `command` and checks that each path can be written.
    pub fn from_args(c: &CommonArgs, command: &str) -> Result<Self> {
        let width = parse_width(c.layout.width.as_deref())?;
        Ok(Self::parse(&c.output, c.quiet, command)?
            .with_quiet_warnings(c.quiet_warnings)
            .with_tables(c.layout.format)
            .with_width(width))
    }

    /// `--output` values `specs` of `command`: each format one `command`
    /// writes, each path checked and distinct, and the text on stdout unless
    /// another format goes there or `quiet`.
    pub fn parse(specs: &[String], quiet: bool, command: &str) -> Result<Self> {
        let mut v = Vec::new();
        for s in specs {
            let (fmt, path) = match s.split_once(':') {
                Some((f, p)) => (f, Some(p)),
                None => (s.as_str(), None),
            };
            // the calibration card is a table of figures, not a result
            if command == "calibrate" && !matches!(fmt, "text" | "json") {
                return Err(PlanError::new(
                    "--output",
                    format!("unknown format '{fmt}' for `fslab calibrate` (known: text, json)"),
                ));
            }
            let format = match fmt {
                "text" => OutputFormat::Text,
                "json" => OutputFormat::Json,
                "bonnie-csv" if command == "meta" => OutputFormat::BonnieCsv,
                "bonnie-csv" => {
                    return Err(PlanError::new(
                        "--output",
                        format!("bonnie-csv is for `fslab meta`, not `fslab {command}`"),
                    ))
                }
                "timeline-csv" if command == "probe" => OutputFormat::TimelineCsv,
                "fio-json" if command == "io" || command == "run" => OutputFormat::FioJson,
                "fio-json" => {
                    return Err(PlanError::new(
                        "--output",
                        format!("fio-json is for `fslab io` and `fslab run`, not `fslab {command}`"),
                    ))
                }
                "csv" => OutputFormat::Csv,
                "html" => OutputFormat::Html,
                "timeline-csv" => {
                    return Err(PlanError::new(
                        "--output",
                        format!("timeline-csv is for `fslab probe`, not `fslab {command}`"),
                    ))
                }
                _ => {
                    return Err(PlanError::new(
                        "--output",
                        format!(
                            "unknown format '{fmt}' (known: text, json, csv, html, fio-json, bonnie-csv, timeline-csv)"
                        ),
                    ))
                }
            };
            let path = match path {
                None | Some("-") => None,
                Some("") => return Err(PlanError::new("--output", format!("'{s}': empty path"))),
                Some(p) => Some(PathBuf::from(p)),
            };
            if path.is_none() && v.iter().any(|o: &OutputSpec| o.path.is_none()) {
                return Err(PlanError::new(
                    "--output",
                    "only one output can go to stdout; give the others a :PATH",
                ));
            }
            let path = match path {
                // in a distributed run rank 0 alone writes the results
                Some(p) if crate::dist::coordinator().rank() == 0 => Some(check_path("--output", &p)?),
                p => p,
            };
            if let Some(p) = &path {
                if let Some(o) = v
                    .iter()
                    .find(|o: &&OutputSpec| o.path.as_ref().is_some_and(|q| same_file(p, q)))
                {
                    return Err(PlanError::new(
                        "--output",
                        format!(
                            "'{s}': {} is already the path of the {} output; give each output its own file",
                            p.display(),
                            format!("{:?}", o.format).to_lowercase()
                        ),
                    ));
                }
            }
            v.push(OutputSpec { format, path });
        }
        // As hyperfine: the text report stays on the terminal whatever is
        // written to files; only another format on stdout, or --quiet, replaces it.
        if !quiet && v.iter().all(|o| o.path.is_some()) {
            v.push(OutputSpec {
                format: OutputFormat::Text,
                path: None,
            });
        }
        if crate::dist::coordinator().rank() != 0 {
            // rank 0 writes the merged results of every rank
            v.clear();
        }
        Ok(Outputs(v))
    }
}

impl Outputs {
    /// The text outputs (stdout and `text:PATH`) draw their tables as `f`
    /// (`fslab run --format`); `TableFormat::Text` keeps the boxed tables.
    pub fn with_tables(self, f: TableFormat) -> Self {
        self.restyled(|st| st.tables = f)
    }

    /// The text outputs keep a cell's flags and warnings in the JSON
    /// (`--quiet-warnings`, a plan's `quiet-warnings = true`); false
    /// leaves the outputs as they are.
    pub fn with_quiet_warnings(self, quiet: bool) -> Self {
        if quiet {
            self.restyled(|st| st.quiet_warnings = true)
        } else {
            self
        }
    }

    /// The text outputs fit `width` columns (`--width`); without it, the
    /// one on stdout fits the terminal ($COLUMNS, else the terminal's size)
    /// and the others `DEFAULT_WIDTH`.
    pub fn with_width(mut self, width: Option<u16>) -> Self {
        for o in &mut self.0 {
            let w = match (&o.path, width) {
                (_, Some(w)) => w,
                (None, None) => terminal_width().unwrap_or(DEFAULT_WIDTH),
                (Some(_), None) => DEFAULT_WIDTH,
            };
            restyle(o, |st| st.width = w);
        }
        self
    }

    fn restyled(mut self, change: impl Fn(&mut TextStyle)) -> Self {
        for o in &mut self.0 {
            restyle(o, &change);
        }
        self
    }
}

/// `o`'s text style changed by `change`, if `o` is a text output.
fn restyle(o: &mut OutputSpec, change: impl Fn(&mut TextStyle)) {
    let mut st = match o.format {
        OutputFormat::Text => TextStyle::default(),
        OutputFormat::TextAs(st) => st,
        _ => return,
    };
    change(&mut st);
    o.format = if st == TextStyle::default() {
        OutputFormat::Text
    } else {
        OutputFormat::TextAs(st)
    };
}

/// The layout of a text report that goes to stdout (`fslab compare`):
/// `--format`, and `--width` or the terminal's.
pub fn stdout_style(l: &LayoutArgs) -> Result<TextStyle> {
    let width = parse_width(l.width.as_deref())?
        .or_else(terminal_width)
        .unwrap_or(DEFAULT_WIDTH);
    Ok(TextStyle {
        tables: l.format,
        width,
        ..TextStyle::default()
    })
}

/// The narrowest `--width`: a table's first column and one figure beside it.
pub const MIN_WIDTH: u16 = 40;

/// `--width COLS`, checked: MIN_WIDTH to 1000 columns.
pub fn parse_width(s: Option<&str>) -> Result<Option<u16>> {
    let Some(s) = s else { return Ok(None) };
    match s.trim().parse::<u16>() {
        Ok(w) if (MIN_WIDTH..=1000).contains(&w) => Ok(Some(w)),
        _ => Err(PlanError::new(
            "--width",
            format!("'{s}': a number of columns from {MIN_WIDTH} to 1000"),
        )),
    }
}

/// The width of the terminal stdout shows on: $COLUMNS when it holds a
/// width (as ls and clap read it: a script may set it for a pipe), else the
/// terminal's own size when stdout is one; None for a file or a pipe.
fn terminal_width() -> Option<u16> {
    if let Some(w) = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<u16>().ok()) {
        return Some(w.clamp(MIN_WIDTH, 1000));
    }
    let ws = rustix::termios::tcgetwinsize(std::io::stdout()).ok()?;
    (ws.ws_col > 0).then_some(ws.ws_col.clamp(MIN_WIDTH, 1000))
}

/// What this process reads and writes, as checked: the inputs it read (a
/// plan, job files and their includes, load files, results) and the files
/// its outputs will replace (`--output`, `--results`, fio's logs), by flag.
/// Each command reads its inputs and checks its outputs in its own order,
/// so each side is checked against the other when it comes: an output that
/// is one of the inputs (`fslab report x.json -o x.json` replaced its
/// input), or two flags' outputs that are one file, are refused before
/// anything is written.
struct Seen {
    inputs: Vec<PathBuf>,
    outputs: Vec<(String, PathBuf)>,
}

static SEEN: std::sync::Mutex<Seen> = std::sync::Mutex::new(Seen {
    inputs: Vec::new(),
    outputs: Vec::new(),
});

fn seen() -> std::sync::MutexGuard<'static, Seen> {
    SEEN.lock().unwrap_or_else(|e| e.into_inner())
}

/// `path` is read as an input: refused (the reason, for the caller's
/// message) when an output checked earlier is the same file.
pub fn note_input(path: &Path) -> std::result::Result<(), String> {
    let p = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mut s = seen();
    if let Some((flag, _)) = s.outputs.iter().find(|(_, o)| same_file(&p, o)) {
        return Err(format!(
            "is also the {flag} file: fslab would replace its own input; write to another path"
        ));
    }
    s.inputs.push(p);
    Ok(())
}

/// The input read so far that `path` names (by name or inode), if any: for
/// writers whose file names are fslab's own (profiles in `--profile-dir`).
pub fn input_at(path: &Path) -> Option<PathBuf> {
    let p = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    seen().inputs.iter().find(|i| same_file(&p, i)).cloned()
}

/// `target` (checked, absolute) will be replaced by `flag`'s output:
/// refused when it is one of the inputs read so far, or another flag's
/// output. (One flag may name a file twice: the clones of a fio job share
/// a log with per_job_logs=0; two `--output`s are refused by
/// `Outputs::from_args`, naming their formats.)
fn note_output(flag: &str, target: &Path) -> std::result::Result<(), String> {
    let mut s = seen();
    if let Some(i) = s.inputs.iter().find(|i| same_file(target, i)) {
        return Err(format!(
            "is the input {}: the results would replace it; write to another path",
            i.display()
        ));
    }
    if let Some((other, _)) = s.outputs.iter().find(|(f, o)| f != flag && same_file(target, o)) {
        return Err(format!(
            "is already the path of the {other} output; give each output its own file"
        ));
    }
    s.outputs.push((flag.to_string(), target.to_path_buf()));
    Ok(())
}

/// Two paths that name one file: the same resolved name, or (hard links,
/// another name) the same existing inode.
fn same_file(a: &Path, b: &Path) -> bool {
    if a == b {
        return true;
    }
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// What a file that is not a regular one is, for messages.
pub(crate) fn kind_of(ft: std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// Checks, without creating or changing anything that stays, that results
/// can be written to `p`: it is an existing regular file or a new name in an
/// existing directory, and a file can be made in that directory. Returns the
/// path to replace, made absolute.
///
/// A symbolic link is refused: the results would replace the link, not what
/// it points to, and links like /dev/stdout lead through /proc to whatever
/// file the shell opened (renaming over it would replace that file).
pub fn check_path(flag: &str, p: &Path) -> Result<PathBuf> {
    let bad = |msg: String| PlanError::new(flag, format!("'{}': {msg}", p.display()));
    if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(bad(
            "is a symbolic link: give the file itself (results replace the file at this path)".into(),
        ));
    }
    let target = match std::fs::metadata(p) {
        Ok(m) if m.is_file() => p.canonicalize().map_err(|e| bad(e.to_string()))?,
        Ok(m) => {
            return Err(bad(format!(
                "is {}, not a regular file: results go to a regular file fslab can replace",
                kind_of(m.file_type())
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let name = p.file_name().ok_or_else(|| bad("names no file".into()))?;
            let parent = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            let cannot = |why: String| PlanError::new(flag, format!("cannot create '{}': {why}", p.display()));
            match std::fs::metadata(parent) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => return Err(cannot(format!("'{}' is not a directory", parent.display()))),
                Err(e) => return Err(cannot(format!("the directory '{}': {e}", parent.display()))),
            }
            parent.canonicalize().map_err(|e| bad(e.to_string()))?.join(name)
        }
        Err(e) => return Err(bad(e.to_string())),
    };
    let dir = target.parent().unwrap_or(Path::new("/"));
    probe_writable(dir, &target).map_err(|e| bad(format!("cannot write in '{}': {e}", dir.display())))?;
    note_output(flag, &target).map_err(bad)?;
    Ok(target)
}

/// Makes a file in `dir` and removes it: an unnamed one (O_TMPFILE) where
/// the filesystem can, else a temporary name of fslab's own.
fn probe_writable(dir: &Path, target: &Path) -> std::io::Result<()> {
    match std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .mode(0o600)
        .open(dir)
    {
        Ok(_) => return Ok(()),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP) | Some(libc::EISDIR) | Some(libc::EINVAL)
            ) => {}
        Err(e) => return Err(e),
    }
    // an abort must not come between making the name and removing it
    let _serial = crate::interrupt::serial();
    let (_, tmp) = create_temp(target)?;
    std::fs::remove_file(&tmp)
}

/// Creates `.NAME.fslab-tmp-PID-N` beside `target`, a name nothing but
/// fslab uses (O_EXCL: never an existing file, so never another user's
/// planted mode or owner), mode 0644 less the umask. An existing file's
/// mode is not copied: a file someone planted with mode 4777 would become
/// a root-owned, setuid, world-writable result.
fn create_temp(target: &Path) -> std::io::Result<(File, PathBuf)> {
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let pid = std::process::id();
    for n in 0..1000 {
        let tmp = dir.join(format!(".{name}.fslab-tmp-{pid}-{n}"));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
            .mode(0o644)
            .open(&tmp)
        {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(format!(
        "no free temporary name beside {}",
        target.display()
    )))
}

/// A read-write file in `dir` that has no name (O_TMPFILE; where the
/// filesystem cannot, an exclusive temporary name removed at once): data
/// that must not stay in memory and must not outlive fslab (the spools of
/// fio's per-I/O logs).
pub fn unnamed_file_in(dir: &Path) -> std::io::Result<File> {
    match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
        .mode(0o600)
        .open(dir)
    {
        Ok(f) => return Ok(f),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP) | Some(libc::EISDIR) | Some(libc::EINVAL)
            ) => {}
        Err(e) => return Err(e),
    }
    // an abort must not come between making the name and removing it
    let _serial = crate::interrupt::serial();
    for n in 0..1000 {
        let tmp = dir.join(format!(".fslab-spool-{}-{n}", std::process::id()));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
            .mode(0o600)
            .open(&tmp)
        {
            Ok(f) => {
                std::fs::remove_file(&tmp)?;
                return Ok(f);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(format!(
        "no free temporary name in {}",
        dir.display()
    )))
}

/// Replaces `target` with `bytes` atomically: written to a temporary file
/// in the same directory, synced, renamed over it. Readers see the old file
/// or the new one, never a part; on any error the old file is untouched.
/// The new file is fslab's own, mode 0644 less the umask, whatever the old
/// one's mode or owner.
pub fn write_atomically(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomically_with(target, &mut |f: &mut File| f.write_all(bytes))
}

/// `write_atomically`, the bytes written by `fill` (a log copied from its
/// spool, never whole in memory).
pub fn write_atomically_with(
    target: &Path,
    fill: &mut dyn FnMut(&mut File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let _serial = crate::interrupt::serial();
    // every error names the file ("writing results: No such file or
    // directory" did not say which, when its directory had gone)
    let named = |e: std::io::Error| std::io::Error::new(e.kind(), format!("{}: {e}", target.display()));
    let (mut f, tmp) = create_temp(target).map_err(named)?;
    let written = (|| {
        fill(&mut f)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, target)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(named(e));
    }
    // the rename itself is durable once the directory is synced
    if let Ok(d) = File::open(target.parent().unwrap_or(Path::new("."))) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_failed_write_names_its_file() {
        let d = tempfile::tempdir().unwrap();
        // the directory checked at validation is gone by the end of the run
        let p = d.path().join("gone/r.json");
        let e = write_atomically(&p, b"x").unwrap_err().to_string();
        assert!(
            e.contains(&p.display().to_string()) && e.contains("No such file"),
            "{e}"
        );
    }

    #[test]
    fn an_output_that_is_an_input_is_refused_whichever_comes_first() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a.json"), d.path().join("b.json"));
        std::fs::write(&a, "{}").unwrap();
        std::fs::write(&b, "{}").unwrap();
        // input first, then the output
        note_input(&a).unwrap();
        // a profile named like it in --profile-dir is not written either
        assert_eq!(input_at(&a), Some(a.canonicalize().unwrap()));
        assert_eq!(input_at(&b), None);
        let e = check_path("--output", &a).unwrap_err();
        assert!(e.msg.contains("is the input"), "{e}");
        // output first, then the input through a hard link
        check_path("--results", &b).unwrap();
        let link = d.path().join("link.json");
        std::fs::hard_link(&b, &link).unwrap();
        assert!(note_input(&link).unwrap_err().contains("--results"));
        // another flag's output is refused, the same flag's again is not
        assert!(check_path("--output", &b).unwrap_err().msg.contains("--results output"));
        check_path("--results", &b).unwrap();
    }

    #[test]
    fn a_new_name_is_checked_without_creating_it() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        let t = check_path("--output", &p).unwrap();
        assert_eq!(t, d.path().canonicalize().unwrap().join("r.json"));
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn non_regular_files_and_missing_directories_are_refused() {
        let d = tempfile::tempdir().unwrap();
        for (p, want) in [
            (PathBuf::from("/dev/full"), "character device"),
            (d.path().to_path_buf(), "a directory"),
            (d.path().join("no/r.json"), "No such file"),
        ] {
            let e = check_path("--output", &p).unwrap_err();
            assert_eq!(e.flag, "--output");
            assert!(e.msg.contains(want), "{p:?}: {e}");
        }
    }

    #[test]
    fn symlinks_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real.json");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, d.path().join("link.json")).unwrap();
        for p in [d.path().join("link.json"), PathBuf::from("/dev/stdout")] {
            let e = check_path("--output", &p).unwrap_err();
            assert!(e.msg.contains("symbolic link"), "{e}");
        }
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "old");
    }

    #[test]
    fn atomic_writes_never_take_the_old_mode_and_leave_no_temporary_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o4777)).unwrap();
        write_atomically(&p, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        let umask = std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .map(|v| u32::from_str_radix(v.trim(), 8).unwrap())
            .unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o7777, 0o644 & !umask);
        let names: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("r.json")]);
    }
}
