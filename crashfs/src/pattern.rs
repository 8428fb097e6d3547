//! Path patterns for injection points and counters: a glob over the whole path from the mount's
//! root, where `*` matches any run of characters (`/` included, so `*/wal/*.wal` matches at any
//! depth) and `?` any one character.

/// A compiled glob.
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

    /// Whether the whole of `path` matches.
    pub fn matches(&self, path: &str) -> bool {
        // The classic two-pointer match: on a mismatch, let the last `*` take one more character.
        let (p, s) = (self.0.as_bytes(), path.as_bytes());
        let (mut i, mut j) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while j < s.len() {
            if i < p.len() && (p[i] == b'?' || p[i] == s[j]) {
                i += 1;
                j += 1;
            } else if i < p.len() && p[i] == b'*' {
                star = Some((i, j));
                i += 1;
            } else if let Some((si, sj)) = star {
                i = si + 1;
                j = sj + 1;
                star = Some((si, sj + 1));
            } else {
                return false;
            }
        }
        p[i..].iter().all(|&c| c == b'*')
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
    fn a_star_spans_directories_and_a_question_mark_one_character() {
        let wal = Pattern::new("*/wal/*.wal");
        assert!(wal.matches("/j/.hookjournal/wal/00000000000000000001.wal"));
        assert!(!wal.matches("/j/.hookjournal/wal/00000000000000000001.mirror"));
        assert!(!wal.matches("/j/.hookjournal/wal/00000000000000000001.wal.tmp"));
        assert!(Pattern::new("*/active-*/*").matches("/j/.h/active-00000000000000000017/blobs/x"));
        assert!(Pattern::new("*/CURRENT").matches("/j/.h/CURRENT"));
        assert!(!Pattern::new("*/CURRENT").matches("/j/.h/.CURRENT.12.0.tmp"));
        assert!(Pattern::new("/a?c").matches("/abc"));
        assert!(!Pattern::new("/a?c").matches("/ac"));
        assert!(Pattern::new("*").matches("/"));
    }
}
