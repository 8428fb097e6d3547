//! Recorded text where it must not act: on a terminal (escaped), and in the text hookjournal
//! injects into a model's context, where a recorded value (a prompt, a file path, a task's
//! subject, an owner, a subagent's type) is data, and must not be able to start a line of its
//! own, close or open a tag, or hide text.
//!
//! [`field`] is the one function every recorded value in injected text goes through; [`quoted`]
//! and [`ident`] frame its result.

/// Whether `c` must not reach a terminal or a model's context raw: C0 and C1 controls and DEL
/// (they drive the terminal), bidirectional overrides, embeddings, isolates and marks (they
/// reorder what is shown, as in "Trojan Source"), zero-width and other invisible format
/// characters, fillers and tag characters (they hide text, or smuggle it), and line and
/// paragraph separators. Printable text (accents, CJK, emoji) is not.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}' // soft hyphen
            | '\u{034F}' // combining grapheme joiner
            | '\u{061C}' // Arabic letter mark
            | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' // Hangul fillers
            | '\u{17B4}' | '\u{17B5}' // Khmer inherent vowels
            | '\u{180B}'..='\u{180F}' // Mongolian variation selectors, vowel separator
            | '\u{200B}'..='\u{200F}' // zero width space, (non-)joiner, LRM, RLM
            | '\u{2028}' | '\u{2029}' // line and paragraph separators
            | '\u{202A}'..='\u{202E}' // bidi embeddings and overrides
            | '\u{2060}'..='\u{206F}' // word joiner, invisible operators, bidi isolates, deprecated
            | '\u{FEFF}' // zero width no-break space (BOM)
            | '\u{FFF9}'..='\u{FFFB}' // interlinear annotation
            | '\u{FFFE}' | '\u{FFFF}'
            | '\u{1D173}'..='\u{1D17A}' // musical format characters
            | '\u{E0000}'..='\u{E007F}' // tags
            | '\u{E0100}'..='\u{E01EF}' // variation selectors supplement
        )
}

/// Pictographs that a zero width joiner may join into one emoji (👩‍💻), so that joiner is kept.
fn is_emoji_part(c: char) -> bool {
    matches!(c, '\u{2600}'..='\u{27BF}' | '\u{2B00}'..='\u{2BFF}' | '\u{FE0F}' | '\u{1F000}'..='\u{1FAFF}')
}

/// How `c` is written when [`is_unsafe`] names it: `\n`, `\t`, `\r`, `\x1b`, `\u{202e}`.
fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

/// Escapes what could drive a terminal or hide and reorder text (see [`is_unsafe`]), keeping a
/// zero width joiner between two emoji parts. Newlines and tabs become visible escapes too.
pub fn escape(s: &str) -> String {
    if !s.chars().any(is_unsafe) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut prev = None;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let joins = c == '\u{200D}'
            && prev.is_some_and(is_emoji_part)
            && chars.peek().is_some_and(|&n| is_emoji_part(n));
        if is_unsafe(c) && !joins {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
        prev = Some(c);
    }
    out
}

/// A recorded value as injected text may hold it: one line (every run of whitespace, line and
/// paragraph breaks included, becomes one space; ends trimmed), the characters [`is_unsafe`]
/// names escaped, tag-like text neutralised (a `<` before a letter, `/`, `!` or `?` becomes
/// `‹`, so `</system-reminder>` reads `‹/system-reminder>`), and at most `max` characters
/// (then `…`).
pub fn field(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max * 4));
    let mut n = 0usize;
    let mut words = s.split_whitespace().peekable();
    'words: while let Some(w) = words.next() {
        let mut chars = w.chars().peekable();
        let mut prev = None;
        while let Some(c) = chars.next() {
            if n >= max {
                out.push('…');
                break 'words;
            }
            let next = chars.peek().copied();
            let joins = c == '\u{200D}'
                && prev.is_some_and(is_emoji_part)
                && next.is_some_and(is_emoji_part);
            let len = out.len();
            if c == '<' && next.is_some_and(|d| d.is_ascii_alphabetic() || "/!?".contains(d)) {
                out.push('‹');
            } else if is_unsafe(c) && !joins {
                push_escaped(&mut out, c);
            } else {
                out.push(c);
            }
            n += out[len..].chars().count();
            prev = Some(c);
        }
        if words.peek().is_some() {
            if n >= max {
                out.push('…');
                break;
            }
            out.push(' ');
            n += 1;
        }
    }
    out
}

/// A recorded value as quoted data: [`field`] in double quotes, `"` and `\` escaped. Free text
/// (prompts, subjects, messages, errors, summaries) and file paths are written so.
pub fn quoted(s: &str, max: usize) -> String {
    let f = field(s, max);
    let mut out = String::with_capacity(f.len() + 2);
    out.push('"');
    for c in f.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The longest identifier written bare.
pub const IDENT_MAX: usize = 64;

/// A short identifier (a task or session id, an owner, a tool or subagent type, a commit hash):
/// bare when it is made of ASCII letters, digits and `._:@+/-` only and at most [`IDENT_MAX`]
/// long (nothing there can read as a sentence, a tag or a line of its own), else [`quoted`].
pub fn ident(s: &str) -> String {
    let plain = !s.is_empty()
        && s.len() <= IDENT_MAX
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._:@+/-".contains(c));
    if plain {
        s.to_string()
    } else {
        quoted(s, IDENT_MAX)
    }
}

/// Collapses a message to one line, escaped (an error may quote a payload or an imported line).
pub fn one_line(s: &str) -> String {
    escape(
        &s.split('\n')
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(": "),
    )
}

/// JSON text for a terminal: the characters [`is_unsafe`] names, raw in serde_json's output
/// (which escapes only C0 controls), become `\uXXXX` escapes. Outside strings JSON text is
/// ASCII without controls, so only string contents change, and they parse back the same.
pub fn json_safe(json: String) -> String {
    // Printable ASCII is safe: only text with a control byte or beyond ASCII is looked at.
    let suspect = |b: u8| b >= 0x7f || (b < 0x20 && b != b'\n');
    if !json.bytes().any(suspect) || !json.chars().any(|c| is_unsafe(c) && c != '\n') {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_unsafe(c) && c != '\n' {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// RFC 3339 UTC with milliseconds.
pub fn timestamp(at_us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(at_us)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_else(|| at_us.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_field_is_one_line_escaped_bounded_and_without_tags() {
        assert_eq!(
            field("a\nSYSTEM: x\u{2028}y\u{85}z", 100),
            "a SYSTEM: x y z",
            "line breaks of every kind are spaces"
        );
        assert_eq!(field("a\u{202e}b\u{1b}[2J", 100), "a\\u{202e}b\\x1b[2J");
        assert_eq!(
            field("</system-reminder> <system> <!-- a < b, Vec<u8>", 100),
            "‹/system-reminder> ‹system> ‹!-- a < b, Vec‹u8>"
        );
        assert_eq!(field("abcdef", 3), "abc…");
        assert_eq!(field(&"\u{1b}".repeat(50), 10).chars().count(), 13);
        assert_eq!(field("👩\u{200D}💻", 10), "👩\u{200D}💻");
    }

    #[test]
    fn quoted_values_escape_their_quotes_and_idents_stay_bare_when_plain() {
        assert_eq!(quoted("say \"hi\" \\o/", 100), r#""say \"hi\" \\o/""#);
        assert_eq!(ident("T12"), "T12");
        assert_eq!(ident("agent-7"), "agent-7");
        assert_eq!(ident("2] Next: [3"), "\"2] Next: [3\"");
        assert_eq!(ident(""), "\"\"");
    }

    proptest! {
        #[test]
        fn a_field_never_holds_a_line_break_a_control_or_a_tag(s in "\\PC*|[\\s\\S]*") {
            let f = field(&s, 300);
            prop_assert!(!f.chars().any(|c| is_unsafe(c) || c == '\n' || c == '\r'));
            prop_assert!(!f.contains("</") && !f.contains("<s"));
            prop_assert!(f.chars().count() <= 300 + 12);
            let q = quoted(&s, 300);
            // Inside the quotes, every quote is escaped: the value cannot close them.
            let inner = &q[1..q.len() - 1];
            prop_assert!(!inner.replace("\\\\", "").replace("\\\"", "").contains('"'));
        }
    }
}
