//! A host's settings file, edited in place. jsonc-parser's CST reads it (JSON with comments and
//! trailing commas, which the hosts accept) and finds what to change; every change is a splice of
//! the text, so each byte outside hookjournal's own entries stays as the user wrote it, and taking
//! an entry out removes exactly what putting it in added. (The CST's own `append` and `remove`
//! spread a one-line object over several lines and drop blank lines at a container's ends, so an
//! uninstall after them could not give the original back.)

use jsonc_parser::cst::{
    CstArray, CstContainerNode, CstInputValue, CstNewlineKind, CstNode, CstObject, CstObjectProp,
    CstRootNode,
};
use jsonc_parser::ParseOptions;
use std::ops::Range;

/// The settings text and its tree. Every edit re-parses: nodes taken before an edit are stale
/// after it and must be looked up again.
pub(super) struct Doc {
    text: String,
    root: CstRootNode,
    style: Style,
    json5: bool,
}

/// How the file writes what we add, read once from the text as the user left it.
struct Style {
    newline: &'static str,
    /// One level of indentation (two spaces when the file shows none).
    unit: String,
    /// Multi-line objects and arrays end with a comma.
    trailing_commas: bool,
}

/// JSON with comments and trailing commas: what the hosts read. Nothing looser (no missing commas,
/// single quotes or bare keys), so a file the hosts would refuse is refused here too. (The CST
/// collects comments as tokens and takes them whatever `allow_comments` says; it is set for the
/// reader.)
fn options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// JSON5 as OpenClaw reads its `openclaw.json`: bare keys, single quotes, hexadecimal and signed
/// numbers besides comments and trailing commas.
fn json5_options() -> ParseOptions {
    ParseOptions {
        allow_loose_object_property_names: true,
        allow_single_quoted_strings: true,
        allow_hexadecimal_numbers: true,
        allow_unary_plus_numbers: true,
        allow_bare_decimal_point_numbers: true,
        allow_non_finite_numbers: true,
        allow_extended_string_escapes: true,
        ..options()
    }
}

fn parse(text: &str) -> Result<CstRootNode, String> {
    parse_with(text, &options())
}

fn parse_with(text: &str, options: &ParseOptions) -> Result<CstRootNode, String> {
    let root = CstRootNode::parse(text, options).map_err(|e| e.to_string())?;
    // Every offset below is measured on the tree's own text: it must be the file, byte for byte.
    if root.to_string() != text {
        return Err("the parser did not read it back byte for byte".into());
    }
    Ok(root)
}

impl Doc {
    /// Parses `text`; the error is one line with the position (`Expected comma on line 3 column 5`).
    pub fn parse(text: &str) -> Result<Doc, String> {
        Doc::parse_dialect(text, false)
    }

    /// Parses a JSON5 file (OpenClaw's config); edits write plain JSON into it.
    pub fn parse_json5(text: &str) -> Result<Doc, String> {
        Doc::parse_dialect(text, true)
    }

    fn parse_dialect(text: &str, json5: bool) -> Result<Doc, String> {
        let root = if json5 {
            parse_with(text, &json5_options())?
        } else {
            parse(text)?
        };
        let style = Style {
            newline: match root.newline_kind() {
                CstNewlineKind::LineFeed => "\n",
                CstNewlineKind::CarriageReturnLineFeed => "\r\n",
                CstNewlineKind::CarriageReturn => "\r",
            },
            unit: root
                .single_indent_text()
                .or_else(|| first_indent(text))
                .filter(|u| !u.is_empty())
                .unwrap_or_else(|| "  ".into()),
            trailing_commas: root.uses_trailing_commas(),
        };
        Ok(Doc {
            text: text.to_string(),
            root,
            style,
            json5,
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The top-level object; `None` when the file holds no value at all (empty, or only comments).
    pub fn root_object(&self) -> Result<Option<CstObject>, String> {
        match self.root.value() {
            None => Ok(None),
            Some(v) => v
                .as_object()
                .map(Some)
                .ok_or_else(|| "the top level is not a JSON object".into()),
        }
    }

    /// Adds `"key": value` at the end of the top-level object, creating that object in a file
    /// that holds no value.
    pub fn append_to_root(&mut self, key: &str, value: &CstInputValue) -> Result<(), String> {
        if let Some(root) = self.root_object()? {
            return self.append_prop(&root, key, value);
        }
        let object = CstInputValue::Object(vec![(key.to_string(), value.clone())]);
        let rendered = self.render(&object, Some(""));
        let nl = self.style.newline;
        let text = if self.text.trim().is_empty() {
            format!("{rendered}{nl}")
        } else if self.text.ends_with(['\n', '\r']) {
            format!("{}{rendered}{nl}", self.text)
        } else {
            format!("{}{nl}{rendered}{nl}", self.text)
        };
        self.replace_text(text)
    }

    /// Adds `"key": value` after the object's last property.
    pub fn append_prop(
        &mut self,
        object: &CstObject,
        key: &str,
        value: &CstInputValue,
    ) -> Result<(), String> {
        let container = CstNode::from(object.clone());
        self.append_item(&container, Some(key), value)
    }

    /// Adds `value` after the array's last element.
    pub fn append_element(
        &mut self,
        array: &CstArray,
        value: &CstInputValue,
    ) -> Result<(), String> {
        let container = CstNode::from(array.clone());
        self.append_item(&container, None, value)
    }

    /// Replaces a value (not a property: its key stays) with `value`, written on one line.
    pub fn replace(&mut self, node: &CstNode, value: &CstInputValue) -> Result<(), String> {
        let at = span(node);
        let rendered = self.render(value, None);
        self.splice(vec![(at, rendered)])
    }

    /// Appends an item to an object (`key` given) or an array, written the way the container is:
    /// on its own line at the indentation of the items before it, or inline in a one-line
    /// container. `remove` takes out exactly what this adds.
    fn append_item(
        &mut self,
        container: &CstNode,
        key: Option<&str>,
        value: &CstInputValue,
    ) -> Result<(), String> {
        let children = container.children();
        let Some(close) = children.last() else {
            return Err("an empty container node".into());
        };
        let nl = self.style.newline;
        let multiline = children.iter().any(CstNode::is_newline);
        let indent = self.line_indent(start(container));
        let item = |doc: &Doc, base: Option<&str>| {
            let value = doc.render(value, base);
            match key {
                Some(k) => format!("{}: {value}", json_string(k)),
                None => value,
            }
        };
        let edits = match items(container).last() {
            // `{}` → `{\n  item\n}`; `{\n  // note\n}` → `{\n  // note\n  item\n}`.
            None => {
                let child = format!("{indent}{}", self.style.unit);
                let item = item(self, Some(&child));
                match children.iter().rev().find(|c| c.is_newline()) {
                    Some(last_newline) => {
                        let at = start(last_newline);
                        vec![(at..at, format!("{nl}{child}{item}"))]
                    }
                    None => {
                        let at = start(close);
                        vec![(at..at, format!("{nl}{child}{item}{nl}{indent}"))]
                    }
                }
            }
            Some(prev) => {
                let prev_end = span(prev).end;
                let comma = prev.trailing_comma().map(CstNode::from);
                if multiline {
                    let child = if self.starts_line(start(prev)) {
                        self.line_indent(start(prev))
                    } else {
                        format!("{indent}{}", self.style.unit)
                    };
                    let item = item(self, Some(&child));
                    // After the comma (or the item) and any comment on its line.
                    let anchor = end_of_line_comments(comma.as_ref().unwrap_or(prev));
                    let own_comma = if comma.is_some() { "," } else { "" };
                    let mut edits = vec![(anchor..anchor, format!("{nl}{child}{item}{own_comma}"))];
                    if comma.is_none() {
                        // Applied after the insertion above when both are at one offset: the
                        // comma goes first.
                        edits.push((prev_end..prev_end, ",".into()));
                    }
                    edits
                } else {
                    let item = item(self, None);
                    match comma {
                        Some(c) => {
                            let at = span(&c).end;
                            vec![(at..at, format!(" {item},"))]
                        }
                        None => vec![(prev_end..prev_end, format!(", {item}"))],
                    }
                }
            }
        };
        self.splice(edits)
    }

    /// Removes a property or an array element with its separator: the inverse of `append_item`
    /// for what that added, and a tidy removal for an entry written by hand.
    pub fn remove(&mut self, item: &CstNode) -> Result<(), String> {
        let container: CstNode = item
            .parent()
            .ok_or("the entry to remove has no container")?
            .into();
        let siblings = items(&container);
        let i = siblings
            .iter()
            .position(|s| s.child_index() == item.child_index())
            .ok_or("the entry to remove is not in its container")?;
        let prev = i.checked_sub(1).map(|j| &siblings[j]);
        let next = siblings.get(i + 1);
        let at = span(item);
        let comma = item.trailing_comma().map(CstNode::from);
        let prev_comma = || {
            prev.and_then(CstNode::trailing_comma)
                .map(|c| (span(&CstNode::from(c)), String::new()))
        };

        let mut edits = Vec::new();
        if let Some(line_start) = self.newline_before(at.start) {
            // The item has its line: the line goes, with a comment at its end.
            let end = end_of_line_comments(comma.as_ref().unwrap_or(item));
            if prev.is_none() && next.is_none() {
                // The container's last item: `{\n  item\n}` gives back `{}`.
                let children = container.children();
                let (Some(open), Some(close)) = (children.first(), children.last()) else {
                    return Err("an empty container node".into());
                };
                let inner = span(open).end..start(close);
                let rest = format!(
                    "{}{}",
                    &self.text[inner.start..line_start],
                    &self.text[end..inner.end]
                );
                let tail = format!(
                    "{}{}",
                    self.style.newline,
                    self.line_indent(start(&container))
                );
                let rest = match rest.strip_suffix(&tail) {
                    Some(head) if !head.contains(['\n', '\r']) => head.to_string(),
                    _ => rest,
                };
                edits.push((inner, rest));
            } else {
                edits.push((line_start..end, String::new()));
                if next.is_none() && comma.is_none() {
                    edits.extend(prev_comma());
                }
            }
        } else {
            let end = comma.as_ref().map_or(at.end, |c| span(c).end);
            let before = whitespace_before(item);
            match (next, &comma) {
                (Some(_), Some(c)) if before == at.start => {
                    edits.push((at.start..whitespace_after(c), String::new()))
                }
                (Some(_), _) | (None, Some(_)) => edits.push((before..end, String::new())),
                (None, None) => {
                    edits.push((before..at.end, String::new()));
                    edits.extend(prev_comma());
                }
            }
        }
        self.splice(edits)
    }

    /// Applies edits (each replaces a range of the text), the one furthest on first; edits at one
    /// offset apply in the order given, so the later-listed ends up in front.
    fn splice(&mut self, mut edits: Vec<(Range<usize>, String)>) -> Result<(), String> {
        edits.sort_by_key(|e| std::cmp::Reverse(e.0.start));
        let mut text = self.text.clone();
        for (range, with) in edits {
            text.replace_range(range, &with);
        }
        self.replace_text(text)
    }

    fn replace_text(&mut self, text: String) -> Result<(), String> {
        let options = if self.json5 {
            json5_options()
        } else {
            options()
        };
        self.root = parse_with(&text, &options)
            .map_err(|e| format!("the edited file would not parse ({e})"))?;
        self.text = text;
        Ok(())
    }

    /// `value` as JSON text: on several lines starting at indentation `base` (the first line is
    /// not indented: it follows a key or the indentation already written), or on one line.
    fn render(&self, value: &CstInputValue, base: Option<&str>) -> String {
        let mut out = String::new();
        self.render_into(&mut out, value, base);
        out
    }

    fn render_into(&self, out: &mut String, value: &CstInputValue, base: Option<&str>) {
        let (open, close, items): (char, char, Vec<(Option<&str>, &CstInputValue)>) = match value {
            CstInputValue::Null => return out.push_str("null"),
            CstInputValue::Bool(b) => return out.push_str(if *b { "true" } else { "false" }),
            CstInputValue::Number(n) => return out.push_str(n),
            CstInputValue::String(s) => return out.push_str(&json_string(s)),
            CstInputValue::Array(a) => ('[', ']', a.iter().map(|v| (None, v)).collect()),
            CstInputValue::Object(o) => (
                '{',
                '}',
                o.iter().map(|(k, v)| (Some(k.as_str()), v)).collect(),
            ),
        };
        out.push(open);
        let count = items.len();
        for (i, (key, v)) in items.into_iter().enumerate() {
            let inner = base.map(|b| format!("{b}{}", self.style.unit));
            match &inner {
                Some(inner) => {
                    out.push_str(self.style.newline);
                    out.push_str(inner);
                }
                None if i > 0 => out.push(' '),
                None => {}
            }
            if let Some(k) = key {
                out.push_str(&json_string(k));
                out.push_str(": ");
            }
            self.render_into(out, v, inner.as_deref());
            if i + 1 < count || (base.is_some() && self.style.trailing_commas) {
                out.push(',');
            }
        }
        if let (Some(base), true) = (base, count > 0) {
            out.push_str(self.style.newline);
            out.push_str(base);
        }
        out.push(close);
    }

    /// Where the line holding `offset` starts.
    fn line_start(&self, offset: usize) -> usize {
        self.text[..offset].rfind(['\n', '\r']).map_or(0, |i| i + 1)
    }

    /// The spaces and tabs that start the line holding `offset`.
    fn line_indent(&self, offset: usize) -> String {
        let line = &self.text[self.line_start(offset)..];
        let n = line.len() - line.trim_start_matches([' ', '\t']).len();
        line[..n].to_string()
    }

    fn starts_line(&self, offset: usize) -> bool {
        let from = self.line_start(offset);
        from > 0
            && self.text[from..offset]
                .chars()
                .all(|c| c == ' ' || c == '\t')
    }

    /// Where the line break before `offset` starts, when only indentation lies between them.
    fn newline_before(&self, offset: usize) -> Option<usize> {
        if !self.starts_line(offset) {
            return None;
        }
        let from = self.line_start(offset);
        Some(if self.text[..from].ends_with("\r\n") {
            from - 2
        } else {
            from - 1
        })
    }
}

/// The properties of an object or the elements of an array, as nodes.
fn items(container: &CstNode) -> Vec<CstNode> {
    match container {
        CstNode::Container(CstContainerNode::Object(o)) => {
            o.properties().into_iter().map(CstNode::from).collect()
        }
        CstNode::Container(CstContainerNode::Array(a)) => a.elements(),
        _ => Vec::new(),
    }
}

/// Where `node` starts in the text: the lengths of everything before it, level by level.
fn start(node: &CstNode) -> usize {
    let mut at = 0;
    let mut current = node.clone();
    while let Some(parent) = current.parent() {
        at += current
            .previous_siblings()
            .map(|s| s.to_string().len())
            .sum::<usize>();
        current = parent.into();
    }
    at
}

fn span(node: &CstNode) -> Range<usize> {
    let from = start(node);
    from..from + node.to_string().len()
}

/// The end of the comments after `node` on its line (the end of `node` when there are none).
fn end_of_line_comments(node: &CstNode) -> usize {
    let mut end = span(node).end;
    for sibling in node.next_siblings() {
        if sibling.is_comment() {
            end = span(&sibling).end;
        } else if !sibling.is_whitespace() {
            break;
        }
    }
    end
}

/// Where the spaces directly before `node` start.
fn whitespace_before(node: &CstNode) -> usize {
    let mut from = start(node);
    for sibling in node.previous_siblings() {
        if !sibling.is_whitespace() {
            break;
        }
        from -= sibling.to_string().len();
    }
    from
}

/// Where the spaces directly after `node` end.
fn whitespace_after(node: &CstNode) -> usize {
    let mut end = span(node).end;
    for sibling in node.next_siblings() {
        if !sibling.is_whitespace() {
            break;
        }
        end += sibling.to_string().len();
    }
    end
}

/// The indentation of the first indented line, for files whose first property shares the line
/// of the opening brace.
fn first_indent(text: &str) -> Option<String> {
    text.lines().skip(1).find_map(|line| {
        let rest = line.trim_start_matches([' ', '\t']);
        (rest.len() < line.len() && rest.starts_with(['"', '{', '[', '}', ']']))
            .then(|| line[..line.len() - rest.len()].to_string())
    })
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string always serializes")
}

/// The property `name` of `object`; the last one when the name repeats, as JSON readers take.
pub(super) fn prop(object: &CstObject, name: &str) -> Option<CstObjectProp> {
    object
        .properties()
        .into_iter()
        .rev()
        .find(|p| p.decoded_name().as_deref() == Some(name))
}

/// The text of a string value.
pub(super) fn string_value(node: &CstNode) -> Option<String> {
    match node {
        CstNode::Leaf(jsonc_parser::cst::CstLeafNode::StringLit(s)) => s.decoded_value().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(pairs: &[(&str, CstInputValue)]) -> CstInputValue {
        CstInputValue::Object(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    fn entry() -> CstInputValue {
        obj(&[
            ("type", "command".into()),
            ("command", "x \"y\"".into()),
            ("timeout", 10u64.into()),
        ])
    }

    /// Appends `entry()` to the container at `path` (keys from the root), then removes it.
    fn round_trip(text: &str, path: &[&str]) -> String {
        let mut doc = Doc::parse(text).unwrap();
        let node = path.iter().fold(
            CstNode::from(doc.root_object().unwrap().unwrap()),
            |n, k| prop(&n.as_object().unwrap(), k).unwrap().value().unwrap(),
        );
        match node {
            CstNode::Container(CstContainerNode::Object(o)) => {
                doc.append_prop(&o, "new", &entry()).unwrap()
            }
            CstNode::Container(CstContainerNode::Array(a)) => {
                doc.append_element(&a, &entry()).unwrap()
            }
            _ => panic!("{path:?} is not a container"),
        }
        let added = doc.text().to_string();
        let node = path.iter().fold(
            CstNode::from(doc.root_object().unwrap().unwrap()),
            |n, k| prop(&n.as_object().unwrap(), k).unwrap().value().unwrap(),
        );
        let last = items(&node).last().unwrap().clone();
        doc.remove(&last).unwrap();
        assert_eq!(doc.text(), text, "added:\n{added}");
        added
    }

    #[test]
    fn appending_then_removing_gives_back_every_shape() {
        let shapes: &[(&str, &[&str])] = &[
            ("{}", &[]),
            ("{}\n", &[]),
            ("{ }", &[]),
            ("{ /* c */ }", &[]),
            ("{\n  // only a comment\n}\n", &[]),
            ("{\"a\": 1}", &[]),
            ("{\"a\": 1,}", &[]),
            ("{\"a\": 1 /* c */}", &[]),
            ("{\n  \"a\": 1\n}\n", &[]),
            ("{\n  \"a\": 1,\n}\n", &[]),
            ("{\n\n  \"a\": 1\n\n}\n", &[]),
            ("{\n  \"a\": 1 // about a\n}\n", &[]),
            ("{\n  \"a\": 1, // about a\n  // the end\n}\n", &[]),
            ("{\r\n\t\"a\": 1\r\n}\r\n", &[]),
            ("{\n    \"a\": {\"b\": []}\n}", &["a"]),
            ("{\n    \"a\": {\"b\": []}\n}", &["a", "b"]),
            ("{\"a\": [1, 2]}", &["a"]),
            ("{\"a\": [1, 2, ]}", &["a"]),
            ("{\n  \"a\": [\n    1,\n    2 /* two */\n  ]\n}", &["a"]),
            ("{\n  \"a\": [\n    1,\n    2,\n  ],\n}", &["a"]),
            ("{\n  \"a\": [1,\n        2]\n}", &["a"]),
            ("{\n  \"a\": [\n    // none yet\n  ]\n}", &["a"]),
            ("// head\n{\"a\": 1} // tail", &[]),
        ];
        for (text, path) in shapes {
            round_trip(text, path);
        }
    }

    #[test]
    fn appended_items_follow_the_file() {
        // Indentation, newlines and trailing commas of the file; one line in a one-line container.
        assert_eq!(
            round_trip("{\r\n\t\"a\": 1,\r\n}\r\n", &[]),
            "{\r\n\t\"a\": 1,\r\n\t\"new\": {\r\n\t\t\"type\": \"command\",\r\n\t\t\"command\": \"x \\\"y\\\"\",\r\n\t\t\"timeout\": 10,\r\n\t},\r\n}\r\n"
        );
        assert_eq!(
            round_trip("{\"a\": [1]}", &["a"]),
            "{\"a\": [1, {\"type\": \"command\", \"command\": \"x \\\"y\\\"\", \"timeout\": 10}]}"
        );
        assert_eq!(
            round_trip("{\n    \"a\": []\n}", &["a"]),
            "{\n    \"a\": [\n        {\n            \"type\": \"command\",\n            \"command\": \"x \\\"y\\\"\",\n            \"timeout\": 10\n        }\n    ]\n}"
        );
        assert_eq!(
            round_trip("{\n  \"a\": 1, // about a\n  // the end\n}\n", &[]),
            "{\n  \"a\": 1, // about a\n  \"new\": {\n    \"type\": \"command\",\n    \"command\": \"x \\\"y\\\"\",\n    \"timeout\": 10,\n  },\n  // the end\n}\n"
        );
    }

    #[test]
    fn removes_hand_written_entries_tidily() {
        for (text, index, expected) in [
            ("[1, 2, 3]", 1, "[1, 3]"),
            ("[1, 2, 3]", 0, "[2, 3]"),
            ("[1, 2, 3]", 2, "[1, 2]"),
            ("[\n  1,\n  2, // two\n  3\n]", 1, "[\n  1,\n  3\n]"),
            ("[\n  1,\n  2\n]", 0, "[\n  2\n]"),
            ("[\n  1, 2\n]", 1, "[\n  1\n]"),
        ] {
            let mut doc = Doc::parse(text).unwrap();
            let a = doc.root.value().unwrap();
            doc.remove(&items(&a)[index]).unwrap();
            assert_eq!(doc.text(), expected, "{text:?} without item {index}");
        }
    }

    #[test]
    fn a_file_without_a_value_gets_one() {
        for (text, expected) in [
            ("", "{\n  \"k\": 1\n}\n"),
            ("  \n", "{\n  \"k\": 1\n}\n"),
            ("// settings", "// settings\n{\n  \"k\": 1\n}\n"),
        ] {
            let mut doc = Doc::parse(text).unwrap();
            doc.append_to_root("k", &1u64.into()).unwrap();
            assert_eq!(doc.text(), expected);
        }
    }

    #[test]
    fn parse_errors_are_one_line_with_the_position() {
        for (text, expected) in [
            (
                "{\"a\": 1\n  \"b\": 2}",
                "Expected comma on line 1 column 8",
            ),
            ("{'a': 1}", "line 1 column 2"),
            ("{\"a\": 1,\n", "Unterminated object on line 1 column 1"),
            ("[1, 2]] ", "line 1 column 7"),
        ] {
            let e = Doc::parse(text).err().unwrap();
            assert!(e.contains(expected), "{text:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        assert_eq!(
            Doc::parse("[1]").unwrap().root_object().err().unwrap(),
            "the top level is not a JSON object"
        );
    }

    #[test]
    fn repeated_keys_resolve_to_the_last_like_json_readers() {
        let doc = Doc::parse(r#"{"a": 1, "a": "two"}"#).unwrap();
        let a = prop(&doc.root_object().unwrap().unwrap(), "a").unwrap();
        assert_eq!(string_value(&a.value().unwrap()).as_deref(), Some("two"));
    }
}
