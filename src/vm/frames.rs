//! The guest's results on its virtio-serial port: one frame per cell, in
//! the order the guest ran them, each a header line (the cell's index,
//! the guest fslab's status, the guest kernel's boot ID, how long the cell
//! ran in the guest, whether the body is an error message, its length),
//! the body and an end line, so the host tells a whole result from a cut
//! one and reads each cell as soon as it is whole, while the guest goes on.

/// One cell's frame as the host reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// The cell's index in the guest's spec; None: the guest's init failed
    /// outside any cell (the body says why; no cell after it runs).
    pub cell: Option<usize>,
    /// The guest fslab's exit status (1: its cell failed; the report says why).
    pub status: i32,
    /// The guest kernel's boot ID.
    pub boot: String,
    /// How long the cell's `fslab run` ran in the guest.
    pub ran_ns: u64,
    /// The result's JSON, or the guest's error message.
    pub body: Result<Vec<u8>, String>,
}

/// What the guest writes for one cell (`cell`: None, the init's own error).
pub fn frame(f: &Frame) -> Vec<u8> {
    let (kind, body) = match &f.body {
        Ok(b) => ("json", b.as_slice()),
        Err(e) => ("error", e.as_bytes()),
    };
    let cell = f.cell.map_or_else(|| "-".to_string(), |c| c.to_string());
    // the boot ID is the kernel's UUID; anything else is cut to a word
    let boot: String = f
        .boot
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(64)
        .collect();
    let mut v = format!(
        "FSLAB-RESULT 2 cell={cell} status={} boot={} ran_ns={} kind={kind} len={}\n",
        f.status,
        if boot.is_empty() { "-" } else { &boot },
        f.ran_ns,
        body.len()
    )
    .into_bytes();
    v.extend_from_slice(body);
    v.extend_from_slice(b"\nFSLAB-END\n");
    v
}

const HEAD: &[u8] = b"FSLAB-RESULT ";

/// The whole frames in `b` from its start, and how many bytes they took
/// (the next read starts there). A cut frame at the end is left for the
/// next read; bytes before a frame's header (none, from fslab's guest) are
/// skipped.
pub fn parse_frames(b: &[u8]) -> (Vec<Frame>, usize) {
    let mut out = Vec::new();
    let mut used = 0;
    while let Some((f, n)) = parse_one(&b[used..]) {
        out.push(f);
        used += n;
    }
    (out, used)
}

/// The first whole frame in `b` and the bytes up to its end.
fn parse_one(b: &[u8]) -> Option<(Frame, usize)> {
    let start = b.windows(HEAD.len()).position(|w| w == HEAD)?;
    let f = &b[start..];
    let nl = f.iter().position(|&c| c == b'\n')?;
    let head = std::str::from_utf8(&f[..nl]).ok()?;
    let field = |k: &str| head.split_whitespace().find_map(|w| w.strip_prefix(k));
    let status: i32 = field("status=")?.parse().ok()?;
    let len: usize = field("len=")?.parse().ok()?;
    let cell = match field("cell=")? {
        "-" => None,
        c => Some(c.parse().ok()?),
    };
    let body = f.get(nl + 1..nl.checked_add(1)?.checked_add(len)?)?;
    const END: &[u8] = b"\nFSLAB-END\n";
    if !f[nl + 1 + len..].starts_with(END) {
        return None;
    }
    let body = if field("kind=") == Some("error") {
        Err(String::from_utf8_lossy(body).into_owned())
    } else {
        Ok(body.to_vec())
    };
    let frame = Frame {
        cell,
        status,
        boot: field("boot=").filter(|b| *b != "-").unwrap_or_default().to_string(),
        ran_ns: field("ran_ns=").and_then(|n| n.parse().ok()).unwrap_or(0),
        body,
    };
    Some((frame, start + nl + 1 + len + END.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(cell: Option<usize>, body: Result<Vec<u8>, String>) -> Frame {
        Frame {
            cell,
            status: 1,
            boot: "0b5e-11".into(),
            ran_ns: 42,
            body,
        }
    }

    #[test]
    fn frames_read_back_in_order_and_a_cut_one_waits() {
        let a = f(Some(0), Ok(b"{\"a\":1}\nFSLAB-END\n".to_vec()));
        let b = f(Some(1), Err("no disk".into()));
        let c = f(None, Err("the spec".into()));
        let mut bytes = b"garbage before".to_vec();
        bytes.extend(frame(&a));
        bytes.extend(frame(&b));
        let whole = bytes.len();
        let third = frame(&c);
        bytes.extend_from_slice(&third[..third.len() - 3]);
        let (got, used) = parse_frames(&bytes);
        assert_eq!(got, vec![a, b]);
        assert_eq!(used, whole);
        // the rest arrives: the next read starts where the last one ended
        bytes.extend_from_slice(&third[third.len() - 3..]);
        let (got, used2) = parse_frames(&bytes[used..]);
        assert_eq!(got, vec![c]);
        assert_eq!(used + used2, bytes.len());
    }

    #[test]
    fn a_header_with_a_bad_length_is_no_frame() {
        let b = b"FSLAB-RESULT 2 cell=0 status=0 boot=x ran_ns=1 kind=json len=18446744073709551615\n{}";
        assert!(parse_frames(b).0.is_empty());
    }
}
