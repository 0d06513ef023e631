//! The replay's untrusted-input paths: FIND_FIRST's wildcard matcher and
//! load-file path checking.
//!
//! - `wild_match` returns quickly on anything (no recursion, bounded work)
//!   and agrees with a plain dynamic-programming matcher on short inputs.
//! - A path that `normalize_path` accepts is lexically inside the client's
//!   directory, and resolving it (and its parent) beneath a client directory
//!   that holds planted symlinks (`..`, absolute, out of the tree, loops)
//!   either fails or yields a directory inside it.
#![no_main]
use fslab::plan::loadfile::normalize_path;
use fslab::workload::replay::beneath::open_dir_beneath;
use fslab::workload::replay::wild::wild_match;
use libfuzzer_sys::fuzz_target;
use rustix::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The obvious O(pat × name) matcher.
fn reference(pat: &[u8], name: &[u8]) -> bool {
    let mut m = vec![false; name.len() + 1];
    m[0] = true;
    for &c in pat {
        let mut next = vec![false; name.len() + 1];
        for j in 0..=name.len() {
            next[j] = match c {
                b'*' => m[j] || (j > 0 && next[j - 1]),
                b'?' => j > 0 && m[j - 1],
                _ => j > 0 && m[j - 1] && c.eq_ignore_ascii_case(&name[j - 1]),
            };
        }
        m = next;
    }
    m[name.len()]
}

/// A client directory with symlinks planted in it, beside a directory
/// that must never be reached. One fixed place (made idempotently), so
/// repeated and parallel fuzz runs share it instead of leaving one each.
struct Fixture {
    root: OwnedFd,
    /// The client directory's canonical path.
    inside: PathBuf,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let base = std::env::temp_dir().join("fslab-fuzz-replay-paths");
        let c = base.join("client");
        std::fs::create_dir_all(base.join("outside/deeper")).unwrap();
        std::fs::create_dir_all(c.join("clients/client1/sub")).unwrap();
        for (target, link) in [
            ("..", "clients/up"),
            ("../..", "clients/client1/up2"),
            ("/", "clients/abs"),
            ("/tmp", "abs2"),
            ("../outside", "out"),
            ("../../outside/deeper", "clients/out2"),
            ("client1", "clients/in"),
            ("loop", "loop"),
            ("/proc/self/cwd", "magic"),
        ] {
            match std::os::unix::fs::symlink(target, c.join(link)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => panic!("planting {link}: {e}"),
            }
        }
        let inside = c.canonicalize().unwrap();
        let root = rustix::fs::open(
            &inside,
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        Fixture { root, inside }
    })
}

/// Where an fd points, by its /proc link.
fn where_is(fd: &OwnedFd) -> PathBuf {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap()
}

fuzz_target!(|data: &[u8]| {
    // the matcher: the first byte splits pattern from name
    if let Some((&cut, rest)) = data.split_first() {
        let cut = (cut as usize).min(rest.len());
        let (pat, name) = rest.split_at(cut);
        let got = wild_match(pat, name);
        if pat.len() <= 48 && name.len() <= 48 {
            assert_eq!(got, reference(pat, name), "pat {pat:?} name {name:?}");
        }
    }
    // the path: all of the input, as load-file text
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(p) = normalize_path(text) else { return };
    assert!(
        !p.is_empty() && !p.starts_with('/') && !p.contains(['\\', '\0']),
        "{p:?}"
    );
    assert!(p.split('/').all(|c| !c.is_empty() && c != "." && c != ".."), "{p:?}");
    let f = fixture();
    let parent = p.rsplit_once('/').map_or("", |(d, _)| d);
    for rel in [parent, p.as_str()] {
        if let Ok(fd) = open_dir_beneath(f.root.as_fd(), rel) {
            let at = where_is(&fd);
            assert!(
                at.starts_with(&f.inside),
                "{text:?} -> {rel:?} resolved to {}",
                at.display()
            );
        }
    }
});
