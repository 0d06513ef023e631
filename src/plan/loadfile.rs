//! The NBENCH load-file format (dbench's client.txt): parsed once, before any
//! client starts, into a compact form all clients share. Paths are interned
//! (client.txt's 458k lines use a few thousand distinct paths), so a line is
//! 32 bytes.
//!
//! A load file is untrusted input that fslab replays as root: every path is
//! checked here to name something inside the client's directory (no `..`,
//! no `.`, no NUL, not empty), and lines, transfer sizes and sleeps are
//! bounded, so a bad file is refused with file:line before anything runs.
//! The clients then resolve the paths beneath their directory at run time
//! too (`workload::replay::beneath`), against symlinks planted there.

use crate::stats::OpKind;
use std::collections::HashMap;
use std::ffi::CString;
use std::path::Path;

mod read;
use read::{open_regular, BoundedLines};

/// Why a load file was rejected: file:line and the token.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {msg}")]
pub struct LoadFileError {
    pub file: String,
    pub line: usize,
    pub msg: String,
}

/// Control lines besides operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Op(OpKind),
    /// `LOOP n`: the lines up to the matching ENDLOOP run n times.
    Loop,
    EndLoop,
    /// `REPEAT n`: the next line runs n times.
    Repeat,
}

/// What the load file expects of an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    Ok,
    /// Any failure status (NT_STATUS_OBJECT_NAME_NOT_FOUND, ...).
    Fail,
    /// `*` or unknown: either outcome.
    Any,
}

/// One line, compact. `args` hold the numbers in file order.
#[derive(Debug, Clone, Copy)]
pub struct Line {
    pub kind: Kind,
    pub expect: Expect,
    /// Interned path indices (u32::MAX when absent).
    pub path: u32,
    pub path2: u32,
    pub args: [u32; 4],
    /// Leading timestamp in µs since the client started, or `NO_TIME`.
    pub time_us: u32,
    /// 1-based line number in the file, for messages.
    pub line_no: u32,
}

/// A parsed load file.
#[derive(Debug)]
pub struct LoadFile {
    pub name: String,
    pub lines: Vec<Line>,
    /// Interned paths, normalised by [`normalize_path`]: relative, `/`
    /// separated, no empty, `.` or `..` component.
    pub paths: Vec<String>,
    /// Per interned path: the index in `dirs` of its parent directory.
    pub parent: Vec<u32>,
    /// Per interned path: its last component (a name in `dirs[parent]`).
    pub leaf: Vec<CString>,
    /// Interned parent directories, relative to the client's directory;
    /// `dirs[ROOT_DIR]` is `""`, the client's directory itself.
    pub dirs: Vec<String>,
    /// Some line carries a leading timestamp (clients can be paced by them).
    pub has_timestamps: bool,
}

impl Default for LoadFile {
    fn default() -> Self {
        LoadFile {
            name: String::new(),
            lines: Vec::new(),
            paths: Vec::new(),
            parent: Vec::new(),
            leaf: Vec::new(),
            dirs: vec![String::new()],
            has_timestamps: false,
        }
    }
}

pub const NO_PATH: u32 = u32::MAX;
/// `Line::time_us` of a line without a timestamp.
pub const NO_TIME: u32 = u32::MAX;
/// The index in [`LoadFile::dirs`] of the client's directory itself.
pub const ROOT_DIR: u32 = 0;

/// The longest line read (client.txt's longest is under 200 bytes): a file
/// without newlines must not be read into memory whole.
pub const MAX_LINE: usize = 64 * 1024;
/// The largest ReadX/WriteX: each client holds a buffer this large.
pub const MAX_TRANSFER: u32 = 16 << 20;
/// The longest SLEEP (µs): a worker sleeping does not see --time or a signal.
pub const MAX_SLEEP_US: u32 = 60_000_000;
/// The most lines kept (32 bytes each; client.txt has 458k).
pub const MAX_LINES: usize = 1 << 25;

/// Normalises a load-file path (`\clients\client1\f`) to the relative path
/// the client resolves in its own directory (`clients/client1/f`), or says
/// why it cannot name something inside that directory. Leading separators
/// are dropped (load-file paths are relative to the client's share), `\` and
/// `/` both separate, repeated separators collapse; a `..` or `.` component,
/// a NUL byte or a path that names no file is refused. What comes out has
/// only non-empty components other than `.` and `..`, without NUL, so it
/// never leaves the directory lexically.
pub fn normalize_path(raw: &str) -> Result<String, &'static str> {
    if raw.contains('\0') {
        return Err("contains a NUL byte");
    }
    let mut out = String::with_capacity(raw.len());
    for c in raw.split(['\\', '/']).filter(|c| !c.is_empty()) {
        match c {
            ".." => return Err("has a '..' component: load-file paths stay inside the client's directory"),
            "." => return Err("has a '.' component"),
            _ => {}
        }
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(c);
    }
    if out.is_empty() {
        return Err("names no file (it is empty)");
    }
    Ok(out)
}

/// `s` for a one-line message: control characters escaped, at most
/// `units::EXCERPT_CHARS` characters. Only the arguments of a line whose
/// operation fslab knows are quoted: a line that is no load-file line (a
/// file that is not a load file) is never echoed.
fn shown(s: &str) -> String {
    crate::units::excerpt(s)
}

/// Splits a line into tokens; a "quoted string" is one token (quotes removed).
fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('"') {
            match r.find('"') {
                Some(e) => {
                    out.push(&r[..e]);
                    rest = r[e + 1..].trim_start();
                }
                None => {
                    out.push(r);
                    rest = "";
                }
            }
        } else {
            let e = rest.find(char::is_whitespace).unwrap_or(rest.len());
            out.push(&rest[..e]);
            rest = rest[e..].trim_start();
        }
    }
    out
}

fn op_of(name: &str) -> Option<(OpKind, usize, usize)> {
    // (kind, paths, numbers) before the status
    Some(match name {
        "NTCreateX" => (OpKind::NtCreateX, 1, 3),
        "Close" => (OpKind::NbClose, 0, 1),
        "ReadX" => (OpKind::ReadX, 0, 4),
        "WriteX" => (OpKind::WriteX, 0, 4),
        "Flush" => (OpKind::Flush, 0, 1),
        "LockX" => (OpKind::LockX, 0, 3),
        "UnlockX" => (OpKind::UnlockX, 0, 3),
        "Unlink" => (OpKind::NbUnlink, 1, 1),
        "Mkdir" => (OpKind::NbMkdir, 1, 0),
        "Rmdir" => (OpKind::NbRmdir, 1, 0),
        "Deltree" => (OpKind::Deltree, 1, 0),
        "Rename" => (OpKind::NbRename, 2, 0),
        "QUERY_PATH_INFORMATION" => (OpKind::QueryPath, 1, 1),
        "QUERY_FILE_INFORMATION" => (OpKind::QueryFile, 0, 2),
        "SET_FILE_INFORMATION" => (OpKind::SetFile, 0, 2),
        "QUERY_FS_INFORMATION" => (OpKind::QueryFs, 0, 1),
        "FIND_FIRST" => (OpKind::FindFirst, 1, 3),
        "SLEEP" => (OpKind::Sleep, 0, 1),
        _ => return None,
    })
}

fn parse_num(t: &str) -> Option<u64> {
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => t.parse().ok(),
    }
}

fn is_status(t: &str) -> bool {
    t.starts_with("NT_STATUS_") || t.starts_with("0x") || t == "SUCCESS" || t == "ERROR" || t == "*"
}

/// A leading timestamp (seconds, 0 to 4000) taken off `toks`, in µs.
fn leading_time(toks: &mut Vec<&str>, err: &dyn Fn(String) -> LoadFileError) -> Result<Option<u32>, LoadFileError> {
    let Some(first) = toks.first() else {
        return Ok(None);
    };
    if !first.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return Ok(None);
    }
    // not quoted: the line may be no load-file line at all
    let secs: f64 = first
        .parse()
        .map_err(|_| err("the line starts with a digit but not with a timestamp (0 to 4000 s)".into()))?;
    if !(0.0..4000.0).contains(&secs) {
        return Err(err("the line's timestamp is not in 0 to 4000 s".into()));
    }
    toks.remove(0);
    Ok(Some((secs * 1e6) as u32))
}

/// A number argument that fits a `Line`'s u32 (`what` names it in messages).
fn num(t: &str, what: &str, err: &dyn Fn(String) -> LoadFileError) -> Result<u32, LoadFileError> {
    match parse_num(t) {
        None => Err(err(format!("'{}' is not a number ({what})", shown(t)))),
        Some(v) => {
            u32::try_from(v).map_err(|_| err(format!("'{}' is too large ({what}: at most {})", shown(t), u32::MAX)))
        }
    }
}

impl LoadFile {
    /// Parses `text` (named `name` in messages).
    pub fn parse(name: &str, text: &str) -> Result<Self, LoadFileError> {
        Self::parse_lines(name, text.lines().map(|l| Ok(l.to_string())))
    }

    /// Parses line by line, so a 458k-line file is never held whole in memory.
    fn parse_lines(name: &str, lines: impl Iterator<Item = std::io::Result<String>>) -> Result<Self, LoadFileError> {
        let mut lf = LoadFile {
            name: name.to_string(),
            ..Default::default()
        };
        let mut interned: HashMap<String, u32> = HashMap::new();
        let mut dirs: HashMap<String, u32> = HashMap::from([(String::new(), ROOT_DIR)]);
        let mut loops: Vec<usize> = Vec::new();
        for (i, raw) in lines.enumerate() {
            let line_no = i + 1;
            let err = |msg: String| LoadFileError {
                file: name.to_string(),
                line: line_no,
                msg,
            };
            let raw = raw.map_err(|e| err(e.to_string()))?;
            if lf.lines.len() >= MAX_LINES || line_no > u32::MAX as usize {
                return Err(err(format!("more than {MAX_LINES} lines")));
            }
            let t = raw.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let mut toks = tokens(t);
            let time_us = match leading_time(&mut toks, &err)? {
                Some(us) => {
                    lf.has_timestamps = true;
                    us
                }
                None => NO_TIME,
            };
            if toks.len() < 2 && !matches!(toks.first(), Some(&"ENDLOOP")) {
                // as dbench: lines with fewer than 2 tokens are skipped
                continue;
            }
            let mut line = Line {
                kind: Kind::EndLoop,
                expect: Expect::Any,
                path: NO_PATH,
                path2: NO_PATH,
                args: [0; 4],
                time_us,
                line_no: line_no as u32,
            };
            match toks[0] {
                "LOOP" | "REPEAT" => {
                    line.kind = if toks[0] == "LOOP" { Kind::Loop } else { Kind::Repeat };
                    line.args[0] = num(toks[1], "count", &err)?;
                    if line.kind == Kind::Loop {
                        loops.push(lf.lines.len());
                    }
                }
                "ENDLOOP" => {
                    let start = loops.pop().ok_or_else(|| err("ENDLOOP without LOOP".into()))?;
                    // an empty loop would spin its count (up to 2^32, nested:
                    // 2^64) without one operation, so without seeing --time
                    if !lf.lines[start..].iter().any(|l| matches!(l.kind, Kind::Op(_))) {
                        return Err(err("a LOOP without an operation before its ENDLOOP".into()));
                    }
                    line.args[0] = start as u32;
                }
                op => lf.op_line(&mut line, op, &toks, &mut dirs, &mut interned, &err)?,
            }
            lf.lines.push(line);
        }
        lf.check_complete(&loops)?;
        Ok(lf)
    }

    /// Fills `line` from the operation `op` and its arguments `toks[1..]`:
    /// paths normalised and interned, numbers bounded, the status last.
    fn op_line(
        &mut self,
        line: &mut Line,
        op: &str,
        toks: &[&str],
        dirs: &mut HashMap<String, u32>,
        interned: &mut HashMap<String, u32>,
        err: &dyn Fn(String) -> LoadFileError,
    ) -> Result<(), LoadFileError> {
        // not quoted: a line of a file that is no load file lands here
        let (dir, np, nn) = op_of(op).ok_or_else(|| {
            err("not a load-file operation (NTCreateX, Close, ReadX, WriteX, ... as dbench's client.txt)".into())
        })?;
        line.kind = Kind::Op(dir);
        let want = 1 + np + nn + usize::from(dir != OpKind::Sleep);
        // some writers add trailing fields; the status is the last token
        if toks.len() < want {
            return Err(err(format!(
                "{op} needs {} argument(s) and a status, got {}",
                np + nn,
                toks.len() - 1
            )));
        }
        for (k, slot) in [&mut line.path, &mut line.path2].into_iter().enumerate().take(np) {
            let raw = toks[1 + k];
            let p = normalize_path(raw).map_err(|why| err(format!("path \"{}\" {why}", shown(raw))))?;
            *slot = match interned.get(&p) {
                Some(&n) => n,
                None => self.intern(dirs, interned, p),
            };
        }
        for k in 0..nn {
            let t = toks[1 + np + k];
            // (argument, bound, message) of the numbers that size memory or time
            let bound = match (dir, k) {
                (OpKind::ReadX | OpKind::WriteX, 2) => Some((MAX_TRANSFER, "bytes: at most 16 MiB per operation")),
                (OpKind::Sleep, 0) => Some((MAX_SLEEP_US, "µs: at most 60 s")),
                _ => None,
            };
            if let (Some((max, why)), Some(v)) = (bound, parse_num(t)) {
                if v > max as u64 {
                    return Err(err(format!("{op} of {v} {why}")));
                }
            }
            line.args[k] = num(t, op, err)?;
        }
        if dir != OpKind::Sleep {
            let st = toks[toks.len() - 1];
            if !is_status(st) {
                return Err(err(format!(
                    "'{}' is not a status (NT_STATUS_..., 0x..., SUCCESS, ERROR or *)",
                    shown(st)
                )));
            }
            line.expect = match st {
                "NT_STATUS_OK" | "SUCCESS" | "0x00000000" | "0x0" => Expect::Ok,
                "*" => Expect::Any,
                _ => Expect::Fail,
            };
        }
        Ok(())
    }

    /// Once every line is read: every LOOP closed, and some operation that
    /// is not a SLEEP.
    fn check_complete(&self, loops: &[usize]) -> Result<(), LoadFileError> {
        if let Some(&open) = loops.last() {
            return Err(LoadFileError {
                file: self.name.clone(),
                line: self.lines[open].line_no as usize,
                msg: "LOOP without ENDLOOP".into(),
            });
        }
        if !self
            .lines
            .iter()
            .any(|l| matches!(l.kind, Kind::Op(d) if d != OpKind::Sleep))
        {
            return Err(LoadFileError {
                file: self.name.clone(),
                line: 1,
                msg: "no operations".into(),
            });
        }
        Ok(())
    }

    /// Interns a new normalised path `p` and its parent directory.
    fn intern(&mut self, dirs: &mut HashMap<String, u32>, interned: &mut HashMap<String, u32>, p: String) -> u32 {
        let (parent, leaf) = p.rsplit_once('/').unwrap_or(("", &p));
        let d = match dirs.get(parent) {
            Some(&d) => d,
            None => {
                let d = self.dirs.len() as u32;
                self.dirs.push(parent.to_string());
                dirs.insert(parent.to_string(), d);
                d
            }
        };
        self.parent.push(d);
        self.leaf
            .push(CString::new(leaf).expect("normalize_path refuses NUL bytes"));
        let n = self.paths.len() as u32;
        interned.insert(p.clone(), n);
        self.paths.push(p);
        n
    }

    /// Reads and parses the load file at `path`, which must be a regular
    /// file: a FIFO, socket or device is refused before anything blocks on
    /// it, and lines are read at most [`MAX_LINE`] bytes at a time.
    pub fn read(path: &Path) -> Result<Self, LoadFileError> {
        let name = path.display().to_string();
        let fail = |msg: String| LoadFileError {
            file: name.clone(),
            line: 0,
            msg,
        };
        let f = open_regular(path).map_err(fail)?;
        let mut lf = Self::parse_lines(&name, BoundedLines::new(std::io::BufReader::new(f)))?;
        lf.lines.shrink_to_fit();
        Ok(lf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ops_paths_statuses_and_control_lines() {
        let lf = LoadFile::parse(
            "t.txt",
            "# comment\n\
             Deltree \"\\clients\\client1\" NT_STATUS_OK\n\
             NTCreateX \"\\clients\\client1\\f\" 0x40 0x2 9938 NT_STATUS_OK\n\
             1.5 WriteX 9938 0 65536 65536 NT_STATUS_OK\n\
             LOOP 3\n\
             ReadX 9938 0 10 10 *\n\
             ENDLOOP\n\
             Unlink \"\\clients\\client1\\x\" 0x6 NT_STATUS_OBJECT_NAME_NOT_FOUND\n\
             lonely\n",
        )
        .unwrap();
        assert_eq!(lf.lines.len(), 7);
        assert_eq!(lf.paths, ["clients/client1", "clients/client1/f", "clients/client1/x"]);
        assert_eq!(lf.lines[1].kind, Kind::Op(OpKind::NtCreateX));
        assert_eq!(lf.lines[1].args[..3], [0x40, 2, 9938]);
        assert_eq!(lf.lines[2].time_us, 1_500_000);
        assert_eq!(lf.lines[1].time_us, NO_TIME);
        assert!(lf.has_timestamps);
        assert_eq!(lf.lines[4].expect, Expect::Any);
        assert_eq!(lf.lines[5].args[0], 3, "ENDLOOP points at its LOOP");
        assert_eq!(lf.lines[6].expect, Expect::Fail);
        assert_eq!(lf.lines[6].line_no, 8);
    }

    #[test]
    fn a_line_is_compact() {
        // 458k lines of client.txt in ~15 MiB, shared by every client
        assert!(std::mem::size_of::<Line>() <= 36, "{}", std::mem::size_of::<Line>());
    }

    #[test]
    fn errors_name_file_line_and_token() {
        for (text, want) in [
            ("Frobnicate 1 NT_STATUS_OK", "t.txt:1: not a load-file operation"),
            ("\nClose abc NT_STATUS_OK", "t.txt:2: 'abc' is not a number (Close)"),
            ("Close 1 MAYBE", "t.txt:1: 'MAYBE' is not a status"),
            (
                "ReadX 1 2 NT_STATUS_OK",
                "t.txt:1: ReadX needs 4 argument(s) and a status, got 3",
            ),
            ("ENDLOOP", "t.txt:1: ENDLOOP without LOOP"),
            ("LOOP 2\nClose 1 NT_STATUS_OK", "t.txt:1: LOOP without ENDLOOP"),
            ("# nothing", "t.txt:1: no operations"),
            ("x1 Close 1 NT_STATUS_OK", "t.txt:1: not a load-file operation"),
            (
                "Close 1 *\nUnlink \"..\\x\" 0 *",
                "t.txt:2: path \"..\\x\" has a '..' component",
            ),
            (
                "Rename \"\\a\" \"\\b\\..\\..\\c\" *",
                "t.txt:1: path \"\\b\\..\\..\\c\" has a '..'",
            ),
            (
                "Unlink \"\\a\0b\" 0 *",
                "t.txt:1: path \"\\a\\x00b\" contains a NUL byte",
            ),
            ("Mkdir \"\\\" *", "t.txt:1: path \"\\\" names no file"),
            ("Mkdir \"a\\.\\b\" *", "t.txt:1: path \"a\\.\\b\" has a '.' component"),
            (
                "WriteX 1 0 16777217 1 *",
                "t.txt:1: WriteX of 16777217 bytes: at most 16 MiB",
            ),
            (
                "ReadX 1 0 99999999999 1 *",
                "t.txt:1: ReadX of 99999999999 bytes: at most 16 MiB",
            ),
            (
                "Close 99999999999 *",
                "t.txt:1: '99999999999' is too large (Close: at most 4294967295)",
            ),
            ("SLEEP 60000001", "t.txt:1: SLEEP of 60000001 µs: at most 60 s"),
            (
                "Close 1 *\nLOOP 9\nREPEAT 3\nENDLOOP",
                "t.txt:4: a LOOP without an operation before its ENDLOOP",
            ),
        ] {
            let e = LoadFile::parse("t.txt", text).unwrap_err().to_string();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn paths_normalise_to_relative_paths_inside() {
        for (raw, want) in [
            ("\\clients\\client1\\f", "clients/client1/f"),
            ("//a//b/", "a/b"),
            ("a\\...\\b", "a/.../b"),
            ("\\~dmtmp\\<.JNK", "~dmtmp/<.JNK"),
        ] {
            assert_eq!(normalize_path(raw).as_deref(), Ok(want), "{raw}");
        }
        for raw in ["..", "a/../b", "\\..\\x", "a\\..", ".", "a/./b", "", "\\", "//", "a\0"] {
            assert!(normalize_path(raw).is_err(), "{raw:?}");
        }
    }

    #[test]
    fn the_parser_interns_parents_and_last_components() {
        let lf = LoadFile::parse(
            "t.txt",
            "Mkdir \"\\clients\" *\nUnlink \"\\clients\\client1\\f\" 0 *\nUnlink \"\\clients\\client1\\g\" 0 *\n",
        )
        .unwrap();
        assert_eq!(lf.dirs, ["", "clients/client1"]);
        assert_eq!(lf.parent, [ROOT_DIR, 1, 1]);
        assert_eq!(lf.leaf, [c"clients", c"f", c"g"]);
    }
}
