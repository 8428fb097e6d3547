//! Masks secrets in text for `export --redact`: provider API keys, access tokens, JWTs, private key
//! blocks, passwords in URLs and `Authorization` headers. It runs over JSON text, so a replacement
//! only ever covers characters that cannot end a JSON string or split a backslash escape: masked
//! JSON still parses, and text without secrets comes back borrowed, untouched.

use regex::Regex;
use std::borrow::Cow;
use std::sync::OnceLock;

/// One kind of secret. The secret is the pattern's `(?P<s>…)` group; the rest of the match (a
/// header name, a URL's user) is context that stays.
struct Rule {
    kind: &'static str,
    pattern: &'static str,
    /// Token rules must start a word: `task-…` holds `sk-`, `xAKIA…` is no AWS key. A JSON escape
    /// such as `\n` before the token counts as a separator.
    word_start: bool,
    /// The prefix also occurs in ordinary identifiers (`sk-learn-…`): require a random-looking tail.
    random_tail: bool,
}

const fn rule(kind: &'static str, pattern: &'static str) -> Rule {
    Rule {
        kind,
        pattern,
        word_start: false,
        random_tail: false,
    }
}
const fn token(kind: &'static str, pattern: &'static str) -> Rule {
    Rule {
        kind,
        pattern,
        word_start: true,
        random_tail: false,
    }
}

/// Every alternative starts with a literal, so the regex engine's literal prefilter skips text
/// without a trigger at memchr-like speed; the character classes exclude `"` and `\`, except for
/// whole `\n`-style escapes inside a private key block. Earlier rules win at the same position.
const RULES: &[Rule] = &[
    rule(
        "private-key",
        r"(?P<s>-----BEGIN [A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----(?:(?:[A-Za-z0-9+/=:,. \t\r\n-]|\\[nrt/])*?-----END [A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----|(?:[A-Za-z0-9+/=:,. \t\r\n]|\\[nrt/])*))",
    ),
    rule(
        "authorization",
        r#"(?:[Aa]uthorization|AUTHORIZATION)\\?["']?[ \t]*[:=][ \t]*\\?["']?[ \t]*(?:[Bb]earer|[Bb]asic|[Tt]oken|BEARER|BASIC)[ \t]+(?P<s>[A-Za-z0-9._~+/=_-]{8,})"#,
    ),
    rule("password", r#"://[^\s:/@"'\\<>]*:(?P<s>[^\s/"'\\<>]+)@"#),
    rule(
        "aws-secret-key",
        r#"(?:aws_secret_access_key|AWS_SECRET_ACCESS_KEY|aws_secret_key|AWS_SECRET_KEY|SecretAccessKey|secretAccessKey)\\?["']?[ \t]*[:=][ \t]*\\?["']?[ \t]*(?P<s>[A-Za-z0-9/+=]{30,})"#,
    ),
    token("anthropic-key", r"(?P<s>sk-ant-[A-Za-z0-9_-]{20,})"),
    Rule {
        kind: "openai-key",
        pattern: r"(?P<s>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})",
        word_start: true,
        random_tail: true,
    },
    token("stripe-key", r"(?P<s>[sr]k_(?:live|test)_[A-Za-z0-9]{16,})"),
    token(
        "github-token",
        r"(?P<s>gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    token("gitlab-token", r"(?P<s>glpat-[A-Za-z0-9_-]{20,})"),
    token(
        "slack-token",
        r"(?P<s>xox[abposer]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,})",
    ),
    token(
        "aws-access-key",
        r"(?P<s>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})",
    ),
    token("google-api-key", r"(?P<s>AIza[A-Za-z0-9_-]{35})"),
    token(
        "jwt",
        r"(?P<s>eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*)",
    ),
];

fn combined() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        let alternatives: Vec<String> = RULES
            .iter()
            .enumerate()
            .map(|(i, r)| {
                format!(
                    "(?:{})",
                    r.pattern.replacen("(?P<s>", &format!("(?P<s{i}>"), 1)
                )
            })
            .collect();
        Regex::new(&alternatives.join("|")).expect("the redaction patterns compile")
    })
}

/// Returns `text` with every secret replaced by `[REDACTED:<kind>]`, and how many were replaced.
/// Borrowed when nothing was.
pub fn redact(text: &str) -> (Cow<'_, str>, usize) {
    let re = combined();
    let mut locs = re.capture_locations();
    let mut out = String::new();
    let mut copied = 0; // text[..copied] is already in `out`
    let mut count = 0;
    let mut at = 0;
    while let Some(m) = re.captures_read_at(&mut locs, text, at) {
        let Some((rule, start, end)) = RULES
            .iter()
            .enumerate()
            .find_map(|(i, r)| locs.get(i + 1).map(|(s, e)| (r, s, e)))
        else {
            at = m.end();
            continue;
        };
        let secret = &text[start..end];
        let accepted = (!rule.word_start || starts_a_word(text, start))
            && (!rule.random_tail || looks_random(&secret[3..]))
            && !secret.starts_with("[REDACTED:");
        if !accepted {
            // Look again one character later: a real key may start inside this match.
            at = m.start() + text[m.start()..].chars().next().map_or(1, char::len_utf8);
            continue;
        }
        out.push_str(&text[copied..start]);
        out.push_str("[REDACTED:");
        out.push_str(rule.kind);
        out.push(']');
        copied = end;
        count += 1;
        at = m.end();
    }
    if count == 0 {
        return (Cow::Borrowed(text), 0);
    }
    out.push_str(&text[copied..]);
    (Cow::Owned(out), count)
}

/// No letter, digit or `_` just before `start`, or a JSON escape (`\n`, `\r`, `\t`) that ends there.
fn starts_a_word(text: &str, start: usize) -> bool {
    let b = text.as_bytes();
    let Some(&prev) = start.checked_sub(1).and_then(|i| b.get(i)) else {
        return true;
    };
    if !(prev.is_ascii_alphanumeric() || prev == b'_') {
        return true;
    }
    if matches!(prev, b'n' | b'r' | b't') {
        let backslashes = b[..start - 1]
            .iter()
            .rev()
            .take_while(|&&c| c == b'\\')
            .count();
        return backslashes % 2 == 1;
    }
    false
}

/// Keys are random: digits and letters mixed, in long unbroken runs. Identifiers made of words
/// (`sk-learn-compatible-estimators`) have short runs between their dashes.
fn looks_random(tail: &str) -> bool {
    let digits = tail.bytes().filter(u8::is_ascii_digit).count();
    let letters = tail.bytes().filter(u8::is_ascii_alphabetic).count();
    let longest_run = tail.split(['-', '_']).map(str::len).max().unwrap_or(0);
    digits >= 2 && letters >= 2 && longest_run >= 16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_names_its_secret_once() {
        for r in RULES {
            assert_eq!(r.pattern.matches("(?P<s>").count(), 1, "{}", r.kind);
        }
        combined();
    }

    #[test]
    fn word_start_sees_json_escapes() {
        assert!(starts_a_word("sk-", 0));
        assert!(starts_a_word("=sk-", 1));
        assert!(!starts_a_word("task-", 2));
        assert!(starts_a_word(r"a\nsk-", 3));
        assert!(
            !starts_a_word(r"a\\nsk-", 4),
            "an escaped backslash, then a plain n"
        );
    }

    #[test]
    fn random_tails() {
        assert!(looks_random("proj-Ab3dEf6hIj9kLmN0pQrStUvWxYz12"));
        assert!(looks_random("0123456789abcdef0123456789abcdef"));
        assert!(!looks_random("learn-compatible-estimators-v2"));
        assert!(!looks_random("abcdefghijklmnopqrstuvwxyz"));
    }
}
