//! The NBENCH load-file format (dbench's client.txt): parsed once, before any
//! client starts, into a compact form all clients share. Paths are interned
//! (client.txt's 458k lines use a few thousand distinct paths), so a line is
//! 32 bytes.

use crate::stats::Dir;
use std::collections::HashMap;
use std::path::Path;

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
    Op(Dir),
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
#[derive(Debug, Default)]
pub struct LoadFile {
    pub name: String,
    pub lines: Vec<Line>,
    /// Interned paths: `\` turned into `/`, leading `/` removed.
    pub paths: Vec<String>,
    /// Some line carries a leading timestamp (clients can be paced by them).
    pub has_timestamps: bool,
}

pub const NO_PATH: u32 = u32::MAX;
/// `Line::time_us` of a line without a timestamp.
pub const NO_TIME: u32 = u32::MAX;

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

fn op_of(name: &str) -> Option<(Dir, usize, usize)> {
    // (kind, paths, numbers) before the status
    Some(match name {
        "NTCreateX" => (Dir::NtCreateX, 1, 3),
        "Close" => (Dir::NbClose, 0, 1),
        "ReadX" => (Dir::ReadX, 0, 4),
        "WriteX" => (Dir::WriteX, 0, 4),
        "Flush" => (Dir::Flush, 0, 1),
        "LockX" => (Dir::LockX, 0, 3),
        "UnlockX" => (Dir::UnlockX, 0, 3),
        "Unlink" => (Dir::NbUnlink, 1, 1),
        "Mkdir" => (Dir::NbMkdir, 1, 0),
        "Rmdir" => (Dir::NbRmdir, 1, 0),
        "Deltree" => (Dir::Deltree, 1, 0),
        "Rename" => (Dir::NbRename, 2, 0),
        "QUERY_PATH_INFORMATION" => (Dir::QueryPath, 1, 1),
        "QUERY_FILE_INFORMATION" => (Dir::QueryFile, 0, 2),
        "SET_FILE_INFORMATION" => (Dir::SetFile, 0, 2),
        "QUERY_FS_INFORMATION" => (Dir::QueryFs, 0, 1),
        "FIND_FIRST" => (Dir::FindFirst, 1, 3),
        "SLEEP" => (Dir::Sleep, 0, 1),
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
        let mut loops: Vec<usize> = Vec::new();
        for (i, raw) in lines.enumerate() {
            let line_no = i + 1;
            let raw = raw.map_err(|e| LoadFileError {
                file: name.to_string(),
                line: line_no,
                msg: e.to_string(),
            })?;
            let err = |msg: String| LoadFileError {
                file: name.to_string(),
                line: line_no,
                msg,
            };
            let t = raw.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let mut toks = tokens(t);
            let mut time_us = NO_TIME;
            if let Some(first) = toks.first() {
                if first.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                    let secs: f64 = first
                        .parse()
                        .map_err(|_| err(format!("'{first}' is not a timestamp")))?;
                    if !(0.0..4000.0).contains(&secs) {
                        return Err(err(format!("'{first}' is not a timestamp (0 to 4000 s)")));
                    }
                    time_us = (secs * 1e6) as u32;
                    lf.has_timestamps = true;
                    toks.remove(0);
                }
            }
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
            let num = |t: &str, what: &str| -> Result<u32, LoadFileError> {
                parse_num(t)
                    .filter(|&v| v <= u32::MAX as u64)
                    .map(|v| v as u32)
                    .ok_or_else(|| err(format!("'{t}' is not a number ({what})")))
            };
            match toks[0] {
                "LOOP" | "REPEAT" => {
                    line.kind = if toks[0] == "LOOP" { Kind::Loop } else { Kind::Repeat };
                    line.args[0] = num(toks[1], "count")?;
                    if line.kind == Kind::Loop {
                        loops.push(lf.lines.len());
                    }
                }
                "ENDLOOP" => {
                    let start = loops.pop().ok_or_else(|| err("ENDLOOP without LOOP".into()))?;
                    line.args[0] = start as u32;
                }
                op => {
                    let (dir, np, nn) = op_of(op).ok_or_else(|| err(format!("unknown operation '{op}'")))?;
                    line.kind = Kind::Op(dir);
                    let want = 1 + np + nn + usize::from(dir != Dir::Sleep);
                    // some writers add trailing fields; the status is the last token
                    if toks.len() < want {
                        return Err(err(format!(
                            "{op} needs {} argument(s) and a status, got {}",
                            np + nn,
                            toks.len() - 1
                        )));
                    }
                    for (k, slot) in [&mut line.path, &mut line.path2].into_iter().enumerate().take(np) {
                        let mut p = toks[1 + k].replace('\\', "/");
                        while p.starts_with('/') {
                            p.remove(0);
                        }
                        let n = interned.len() as u32;
                        *slot = *interned.entry(p.clone()).or_insert_with(|| {
                            lf.paths.push(p);
                            n
                        });
                    }
                    for k in 0..nn {
                        line.args[k] = num(toks[1 + np + k], op)?;
                    }
                    if dir != Dir::Sleep {
                        let st = toks[toks.len() - 1];
                        if !is_status(st) {
                            return Err(err(format!(
                                "'{st}' is not a status (NT_STATUS_..., 0x..., SUCCESS, ERROR or *)"
                            )));
                        }
                        line.expect = match st {
                            "NT_STATUS_OK" | "SUCCESS" | "0x00000000" | "0x0" => Expect::Ok,
                            "*" => Expect::Any,
                            _ => Expect::Fail,
                        };
                    }
                }
            }
            lf.lines.push(line);
        }
        if let Some(&open) = loops.last() {
            return Err(LoadFileError {
                file: name.to_string(),
                line: lf.lines[open].line_no as usize,
                msg: "LOOP without ENDLOOP".into(),
            });
        }
        if !lf
            .lines
            .iter()
            .any(|l| matches!(l.kind, Kind::Op(d) if d != Dir::Sleep))
        {
            return Err(LoadFileError {
                file: name.to_string(),
                line: 1,
                msg: "no operations".into(),
            });
        }
        Ok(lf)
    }

    pub fn read(path: &Path) -> Result<Self, LoadFileError> {
        use std::io::BufRead;
        let f = std::fs::File::open(path).map_err(|e| LoadFileError {
            file: path.display().to_string(),
            line: 0,
            msg: e.to_string(),
        })?;
        let mut lf = Self::parse_lines(&path.display().to_string(), std::io::BufReader::new(f).lines())?;
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
        assert_eq!(lf.lines[1].kind, Kind::Op(Dir::NtCreateX));
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
            ("Frobnicate 1 NT_STATUS_OK", "t.txt:1: unknown operation 'Frobnicate'"),
            ("\nClose abc NT_STATUS_OK", "t.txt:2: 'abc' is not a number (Close)"),
            ("Close 1 MAYBE", "t.txt:1: 'MAYBE' is not a status"),
            (
                "ReadX 1 2 NT_STATUS_OK",
                "t.txt:1: ReadX needs 4 argument(s) and a status, got 3",
            ),
            ("ENDLOOP", "t.txt:1: ENDLOOP without LOOP"),
            ("LOOP 2\nClose 1 NT_STATUS_OK", "t.txt:1: LOOP without ENDLOOP"),
            ("# nothing", "t.txt:1: no operations"),
            ("x1 Close 1 NT_STATUS_OK", "t.txt:1: unknown operation 'x1'"),
        ] {
            let e = LoadFile::parse("t.txt", text).unwrap_err().to_string();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
    }
}
