//! Human output: one-line errors, escaped control characters, aligned tables with colour only on a
//! terminal (`NO_COLOR` honoured), relative times, progress bars only on a terminal.

use std::io::IsTerminal;

/// A command called wrongly (a flag's value that cannot be right): one line, exit 2, as for
/// clap's own usage errors.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// A panic as one line: `internal error at FILE:LINE: MESSAGE`.
pub fn panic_text(info: &std::panic::PanicHookInfo) -> String {
    let msg = info
        .payload()
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| info.payload().downcast_ref::<String>().cloned())
        .unwrap_or_default();
    let loc = info
        .location()
        .map(|l| format!(" at {}:{}", l.file(), l.line()))
        .unwrap_or_default();
    one_line(&format!("internal error{loc}: {msg}"))
}

/// Whether a character must not reach a terminal raw, and text with those escaped
/// (`\x1b`, `\u{202e}`; newlines and tabs too: table cells are one line). Shared with the
/// projections, which use the same rules for text injected into a model's context.
pub use projections::text::{escape, json_safe, one_line, timestamp};

/// Like `escape` but keeps newlines (multi-line texts such as the restore text).
pub fn escape_text(s: &str) -> String {
    s.split('\n').map(escape).collect::<Vec<_>>().join("\n")
}

/// `hookjournal hook` typed at a terminal would wait silently: say what it waits for.
pub fn hook_waiting_notice() {
    if std::io::stdin().is_terminal() {
        eprintln!("hookjournal hook: waiting for a hook payload (JSON) on stdin, as Claude Code, Codex or Gemini send it when they run this command; end input with Ctrl-D, quit with Ctrl-C");
    }
}

/// Whether stdout takes colour: a terminal, and `NO_COLOR`, `CLICOLOR`, `CLICOLOR_FORCE` and
/// `TERM=dumb` as anstream reads them (decided once per process).
pub fn color_enabled() -> bool {
    static CHOICE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CHOICE.get_or_init(|| {
        anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
    })
}

fn styled(style: anstyle::Style, s: &str) -> String {
    if color_enabled() {
        format!("{style}{s}{style:#}")
    } else {
        s.to_string()
    }
}

/// Bold, when stdout takes colour.
pub fn bold(s: &str) -> String {
    styled(anstyle::Style::new().bold(), s)
}

/// Dim, when stdout takes colour.
pub fn dim(s: &str) -> String {
    styled(anstyle::Style::new().dimmed(), s)
}

/// Colours a status/tier word (green ok, yellow warning, red critical…).
pub fn tint(s: &str) -> String {
    let colour = match s {
        "ok" | "completed" | "active" | "valid" => anstyle::AnsiColor::Green,
        "warning" | "in_progress" | "idle" | "compacting" | "pending" => anstyle::AnsiColor::Yellow,
        "critical" | "emergency" | "failed" | "damaged" => anstyle::AnsiColor::Red,
        _ => return s.to_string(),
    };
    styled(anstyle::Style::new().fg_color(Some(colour.into())), s)
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// An aligned table. Cells are escaped; widths count characters.
pub struct Table {
    headers: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
    footer: Option<Vec<String>>,
}

impl Table {
    pub fn new(headers: &[(&str, Align)]) -> Table {
        Table {
            headers: headers.iter().map(|(h, a)| (h.to_string(), *a)).collect(),
            rows: Vec::new(),
            footer: None,
        }
    }
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows
            .push(cells.into_iter().map(|c| escape(&c)).collect());
    }
    pub fn footer(&mut self, cells: Vec<String>) {
        self.footer = Some(cells.into_iter().map(|c| escape(&c)).collect());
    }
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    #[allow(clippy::needless_range_loop)] // `i` indexes widths, headers and cells alike
    pub fn render(&self) -> String {
        let n = self.headers.len();
        let mut w: Vec<usize> = self
            .headers
            .iter()
            .map(|(h, _)| h.chars().count())
            .collect();
        for r in self.rows.iter().chain(self.footer.iter()) {
            for (i, c) in r.iter().enumerate().take(n) {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let fmt = |cells: &[String]| -> String {
            let mut line = String::new();
            for i in 0..n {
                let c = cells.get(i).map(String::as_str).unwrap_or("");
                let pad = w[i].saturating_sub(c.chars().count());
                let last = i + 1 == n;
                match self.headers[i].1 {
                    Align::Left => {
                        line.push_str(&tint(c));
                        if !last {
                            line.push_str(&" ".repeat(pad));
                        }
                    }
                    Align::Right => {
                        line.push_str(&" ".repeat(pad));
                        line.push_str(c);
                    }
                }
                if !last {
                    line.push_str("  ");
                }
            }
            line.trim_end().to_string()
        };
        let mut out = String::new();
        let header: Vec<String> = self.headers.iter().map(|(h, _)| h.clone()).collect();
        out.push_str(&bold(&fmt(&header)));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&fmt(r));
            out.push('\n');
        }
        if let Some(f) = &self.footer {
            let total: usize = w.iter().sum::<usize>() + 2 * n.saturating_sub(1);
            out.push_str(&dim(&"─".repeat(total)));
            out.push('\n');
            out.push_str(&bold(&fmt(f)));
            out.push('\n');
        }
        out
    }
}

/// "3m ago", "2h ago", "5d ago" (or the date for older times).
pub fn relative(at_us: i64, now_us: i64) -> String {
    let secs = (now_us - at_us) / 1_000_000;
    match secs {
        s if s < 0 => timestamp(at_us),
        s if s < 60 => format!("{s}s ago"),
        s if s < 3600 => format!("{}m ago", s / 60),
        s if s < 86_400 => format!("{}h ago", s / 3600),
        s if s < 30 * 86_400 => format!("{}d ago", s / 86_400),
        _ => timestamp(at_us)[..10].to_string(),
    }
}

/// "1 session", "2 sessions", "0 sessions": a count with its noun (regular plurals only).
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

pub fn usd(x: f64) -> String {
    if x.abs() < 10.0 {
        format!("${x:.4}")
    } else {
        format!("${x:.2}")
    }
}

pub fn tokens(n: u64) -> String {
    projections::views::group(n)
}

/// A progress bar on a terminal (stderr), nothing otherwise.
pub fn progress(len: u64, what: &str) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{msg:>10} [{bar:30}] {pos}/{len} ({per_sec}, {eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

/// How many of the newest rows the list commands (`sessions`, `tasks`, `notifications`) show
/// unless told otherwise.
pub const TABLE_LAST: usize = 100;

/// The newest rows a list command shows: `--last N`; else `TABLE_LAST` in the table; every one
/// (`None`) with `--all`, and with `--json` unless `--last` is given.
pub fn shown_last(last: Option<usize>, all: bool, json: bool) -> Option<usize> {
    match (last, all, json) {
        (Some(n), _, _) => Some(n),
        (None, false, false) => Some(TABLE_LAST),
        _ => None,
    }
}

pub fn print_json<T: serde::Serialize + ?Sized>(v: &T) {
    println!(
        "{}",
        json_safe(serde_json::to_string_pretty(v).unwrap_or_default())
    );
}

/// For the commands that parse their own flags leniently (`hook`, `statusline`): prints the
/// command's help when `--help`/`-h` is among its arguments, through the whole parser so the
/// usage line reads `hookjournal CMD`. Returns whether it did.
pub fn printed_help(argv: &[std::ffi::OsString], cmd: &str) -> bool {
    if !argv.iter().skip(2).any(|a| a == "--help" || a == "-h") {
        return false;
    }
    if let Err(e) = <crate::Cli as clap::Parser>::try_parse_from(["hookjournal", cmd, "--help"]) {
        let _ = e.print();
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_terminal_control_sequences() {
        assert_eq!(escape("a\x1b[31mred\x07"), "a\\x1b[31mred\\x07");
        assert_eq!(escape("plain ünïcode"), "plain ünïcode");
        assert_eq!(escape("x\u{9b}2J"), "x\\x9b2J");
    }

    #[test]
    fn counts_take_the_plural_except_for_one() {
        assert_eq!(count(0, "session"), "0 sessions");
        assert_eq!(count(1, "session"), "1 session");
        assert_eq!(count(2, "compaction"), "2 compactions");
    }

    #[test]
    fn escapes_bidi_and_invisible_characters_but_not_printable_text() {
        assert_eq!(
            escape("a\u{202e}b\u{2066}c\u{2069}d\u{200b}e\u{feff}f\u{2028}g\u{e0041}h\u{7f}"),
            "a\\u{202e}b\\u{2066}c\\u{2069}d\\u{200b}e\\u{feff}f\\u{2028}g\\u{e0041}h\\x7f"
        );
        for kept in [
            "日本語のテキスト",
            "emoji 🎉 👩‍💻 ❤️ 👍🏽",
            "ünïcödé, Ελληνικά, עברית, العربية",
        ] {
            assert_eq!(escape(kept), kept);
        }
        // A joiner between letters is no emoji's.
        assert_eq!(escape("a\u{200d}b"), "a\\u{200d}b");
    }

    #[test]
    fn json_for_terminals_escapes_the_same_and_parses_back() {
        let v =
            serde_json::json!({"m": "x\u{202e}y\u{9b}\u{7f}\u{e0041} 日本 🎉 \u{1b}[31m", "n": 1});
        let text = json_safe(serde_json::to_string_pretty(&v).unwrap());
        assert!(
            !text
                .chars()
                .any(|c| projections::text::is_unsafe(c) && c != '\n'),
            "{text}"
        );
        assert!(
            text.contains("\\u202e") && text.contains("\\udb40\\udc41") && text.contains("日本 🎉")
        );
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), v);
    }
}
