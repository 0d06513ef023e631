//! Reading a load file: only a regular file (a FIFO or a device would block
//! or never end), a line at most [`MAX_LINE`] bytes at a time.

use super::MAX_LINE;
use std::io::BufRead;
use std::path::Path;

/// What a non-regular file is, for the message refusing it.
fn file_kind(t: rustix::fs::FileType) -> &'static str {
    use rustix::fs::FileType as T;
    match t {
        T::Fifo => "a FIFO",
        T::Directory => "a directory",
        T::Socket => "a socket",
        T::CharacterDevice => "a character device",
        T::BlockDevice => "a block device",
        T::Symlink => "a symlink",
        _ => "not a plain file",
    }
}

/// Opens `path` for reading if it is a regular file. The type is checked on
/// the path (a socket cannot even be opened) and again on the open file, which
/// is opened with O_NONBLOCK so that a FIFO swapped in between cannot block.
pub(super) fn open_regular(path: &Path) -> Result<std::fs::File, String> {
    use rustix::fs::{FileType, Mode, OFlags};
    let not_regular = |t: FileType| format!("not a regular file ({})", file_kind(t));
    let st = rustix::fs::stat(path).map_err(|e| std::io::Error::from(e).to_string())?;
    let t = FileType::from_raw_mode(st.st_mode);
    if t != FileType::RegularFile {
        return Err(not_regular(t));
    }
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| std::io::Error::from(e).to_string())?;
    let st = rustix::fs::fstat(&fd).map_err(|e| std::io::Error::from(e).to_string())?;
    let t = FileType::from_raw_mode(st.st_mode);
    if t != FileType::RegularFile {
        return Err(not_regular(t));
    }
    crate::plan::note_input(path)?;
    Ok(std::fs::File::from(fd))
}

/// Lines of at most [`MAX_LINE`] bytes (without the `\n` or `\r\n`); a longer
/// one, or one that is not UTF-8, is an error and ends the reading.
pub(super) struct BoundedLines<R> {
    r: R,
    buf: Vec<u8>,
    done: bool,
}

impl<R: BufRead> BoundedLines<R> {
    pub(super) fn new(r: R) -> Self {
        BoundedLines {
            r,
            buf: Vec::new(),
            done: false,
        }
    }

    fn next_line(&mut self) -> std::io::Result<Option<String>> {
        use std::io::{Error, ErrorKind};
        let too_long = || {
            Error::new(
                ErrorKind::InvalidData,
                format!("line longer than {} KiB", MAX_LINE >> 10),
            )
        };
        self.buf.clear();
        let mut any = false;
        loop {
            let avail = match self.r.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if avail.is_empty() {
                if !any {
                    return Ok(None);
                }
                break;
            }
            any = true;
            let (take, newline) = match avail.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (avail.len(), false),
            };
            // (+1: a \r before the \n is not part of the line)
            if self.buf.len() + take > MAX_LINE + 1 {
                return Err(too_long());
            }
            self.buf.extend_from_slice(&avail[..take]);
            self.r.consume(take + usize::from(newline));
            if newline {
                break;
            }
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        if self.buf.len() > MAX_LINE {
            return Err(too_long());
        }
        match std::str::from_utf8(&self.buf) {
            Ok(s) => Ok(Some(s.to_string())),
            Err(_) => Err(Error::new(ErrorKind::InvalidData, "not UTF-8 text")),
        }
    }
}

impl<R: BufRead> Iterator for BoundedLines<R> {
    type Item = std::io::Result<String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.next_line().transpose();
        // after an error the parser stops; nothing more is read
        self.done = !matches!(r, Some(Ok(_)));
        r
    }
}

#[cfg(test)]
mod tests {
    use super::super::{LoadFile, MAX_LINE};
    use std::path::Path;

    fn read_err(p: &Path) -> String {
        LoadFile::read(p).unwrap_err().to_string()
    }

    #[test]
    fn reading_is_bounded_and_refuses_what_is_not_a_regular_file() {
        let t = tempfile::tempdir().unwrap();
        let long = t.path().join("long.txt");
        std::fs::write(&long, [&b"Close 1 *\n"[..], &vec![b' '; MAX_LINE + 1]].concat()).unwrap();
        assert!(
            read_err(&long).ends_with("long.txt:2: line longer than 64 KiB"),
            "{}",
            read_err(&long)
        );
        // exactly at the limit, with \r\n: read
        let edge = t.path().join("edge.txt");
        let line = format!("Close 1 *{}", " ".repeat(MAX_LINE - 9));
        std::fs::write(&edge, format!("{line}\r\n{line}")).unwrap();
        assert_eq!(LoadFile::read(&edge).unwrap().lines.len(), 2);
        let bin = t.path().join("bin.txt");
        std::fs::write(&bin, b"Close 1 *\n\xff\xfe\n").unwrap();
        assert!(
            read_err(&bin).ends_with("bin.txt:2: not UTF-8 text"),
            "{}",
            read_err(&bin)
        );
        let fifo = t.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        // (a blocking open of a FIFO without a writer would hang here)
        assert!(read_err(&fifo).ends_with("fifo:0: not a regular file (a FIFO)"));
        assert!(read_err(t.path()).ends_with(":0: not a regular file (a directory)"));
        assert_eq!(
            read_err(Path::new("/dev/zero")),
            "/dev/zero:0: not a regular file (a character device)"
        );
    }
}
