//! FIND_FIRST's SMB wildcard matcher: `*` matches any run of bytes (also an
//! empty one), `?` exactly one byte, anything else itself, ignoring ASCII
//! case. The mask comes from an untrusted load file, so the matcher is
//! iterative and its work is bounded (a recursive one took exponential time
//! on `*a*a*a...b` and overflowed the stack on 400k `*`).

/// Case-insensitive SMB wildcard match of `name` against `pat`.
///
/// Greedy matching with one backtrack point, the last `*` seen: when the
/// text after it fails, that star swallows one more byte and the match is
/// retried from just after it. An earlier star never needs revisiting (the
/// later one can absorb whatever the earlier would), so the work is
/// O(pat.len() + name.len()²) at worst, with no recursion and no allocation.
pub fn wild_match(pat: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    // (pattern index just after the last `*`, name index it resumes from)
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pat.get(p) {
            Some(b'*') => {
                p += 1;
                star = Some((p, n));
                continue;
            }
            Some(b'?') => {
                p += 1;
                n += 1;
                continue;
            }
            Some(c) if c.eq_ignore_ascii_case(&name[n]) => {
                p += 1;
                n += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, sn)) => {
                star = Some((sp, sn + 1));
                p = sp;
                n = sn + 1;
            }
            None => return false,
        }
    }
    pat[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::wild_match;

    /// The obvious dynamic-programming matcher, to check against.
    fn reference(pat: &[u8], name: &[u8]) -> bool {
        // m[j]: pat[..i] matches name[..j]
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

    #[test]
    fn wildcards_match_case_insensitively() {
        assert!(wild_match(b"FILLER.*", b"filler.000"));
        assert!(wild_match(b"*", b"x"));
        assert!(wild_match(b"*", b""));
        assert!(wild_match(b"a?c", b"ABC"));
        assert!(wild_match(b"*.PRN", b"labels.prn"));
        assert!(wild_match(b"<.JNK", b"<.jnk"));
        assert!(!wild_match(b"FILLER.*", b"other"));
        assert!(!wild_match(b"a?c", b"ac"));
        assert!(!wild_match(b"", b"x"));
        assert!(!wild_match(b"?", b""));
    }

    #[test]
    fn agrees_with_the_reference_on_small_inputs() {
        let mut rng = fastrand::Rng::with_seed(19);
        let alphabet = b"aAb*?";
        for _ in 0..50_000 {
            let pat: Vec<u8> = (0..rng.usize(0..9)).map(|_| alphabet[rng.usize(..5)]).collect();
            let name: Vec<u8> = (0..rng.usize(0..9)).map(|_| alphabet[rng.usize(..3)]).collect();
            assert_eq!(wild_match(&pat, &name), reference(&pat, &name), "{pat:?} {name:?}");
        }
    }

    #[test]
    fn the_inputs_that_hung_or_overflowed_finish() {
        // `*a` x14 + `b` against 255 a's: exponential for the recursive matcher
        let pat = [b"*a".repeat(14), b"b".to_vec()].concat();
        assert!(!wild_match(&pat, &[b'a'; 255]));
        // 400k stars: a stack overflow for the recursive matcher
        let stars = vec![b'*'; 400_000];
        assert!(wild_match(&stars, b"anything"));
        assert!(!wild_match(&[&stars[..], b"z"].concat(), b"anything"));
    }
}
