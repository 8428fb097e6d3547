//! Path patterns for injection points and counters, matched against the path from the mount's
//! root ("/p/.hookjournal/wal/00000000000000000001.wal"). `*` matches within one component, `**`
//! across components, `?` one character other than `/`. A pattern that starts with `/` matches
//! the whole path; any other matches its last components, as in `.gitignore`: `*/wal/*.wal`
//! matches a log in any `wal/` directory.

/// A glob over paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern(String);

impl Pattern {
    /// The glob `glob`.
    pub fn new(glob: &str) -> Pattern {
        Pattern(glob.to_string())
    }

    /// The glob as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `path` matches.
    pub fn matches(&self, path: &str) -> bool {
        let (p, s) = (self.0.as_bytes(), path.as_bytes());
        if p.first() == Some(&b'/') {
            return glob(p, s);
        }
        // Every run of last components (from the root too, whose name is empty).
        (0..s.len())
            .filter(|&i| i == 0 || s[i - 1] == b'/')
            .any(|i| glob(p, &s[i..]))
    }
}

/// Backtracking match; paths and patterns are short.
fn glob(p: &[u8], s: &[u8]) -> bool {
    match p {
        [] => s.is_empty(),
        [b'*', b'*', rest @ ..] => (0..=s.len()).any(|i| glob(rest, &s[i..])),
        [b'*', rest @ ..] => {
            let run = s.iter().position(|&c| c == b'/').unwrap_or(s.len());
            (0..=run).any(|i| glob(rest, &s[i..]))
        }
        [b'?', rest @ ..] => s.first().is_some_and(|&c| c != b'/') && glob(rest, &s[1..]),
        [c, rest @ ..] => s.first() == Some(c) && glob(rest, &s[1..]),
    }
}

impl From<&str> for Pattern {
    fn from(glob: &str) -> Pattern {
        Pattern::new(glob)
    }
}

#[cfg(test)]
mod tests {
    use super::Pattern;

    #[test]
    fn a_star_stays_in_its_component_and_a_relative_pattern_matches_the_last_components() {
        let wal = Pattern::new("*/wal/*.wal");
        assert!(wal.matches("/p/.hookjournal/wal/00000000000000000001.wal"));
        assert!(!wal.matches("/p/.hookjournal/wal/00000000000000000001.mirror"));
        assert!(!wal.matches("/p/.hookjournal/wal/old/1.wal"));
        let journal = Pattern::new("*/.hookjournal/*");
        assert!(journal.matches("/p/.hookjournal/ROTATING"));
        assert!(!journal.matches("/p/.hookjournal/spool/1.spool"));
        let store = Pattern::new("*/active-*/**");
        assert!(store.matches("/p/.hookjournal/active-00000000000000000017/blobs/x"));
        assert!(!store.matches("/p/.hookjournal/active-00000000000000000017"));
        assert!(Pattern::new("*/active-*").matches("/p/.hookjournal/active-00000000000000000017"));
        assert!(Pattern::new("*/CURRENT").matches("/p/.hookjournal/CURRENT"));
        assert!(!Pattern::new("*/CURRENT").matches("/p/.hookjournal/.CURRENT.12.0.tmp"));
        assert!(Pattern::new("/a?c").matches("/abc"));
        assert!(!Pattern::new("/a?c").matches("/x/abc"));
        assert!(Pattern::new("a?c").matches("/x/abc"));
        assert!(Pattern::new("/**").matches("/"));
    }
}
