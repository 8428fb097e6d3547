//! Human output helpers: one-line errors, escaping of terminal control characters.

/// Collapses a message to one line.
pub fn one_line(s: &str) -> String {
    s.split('\n').map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(": ")
}
