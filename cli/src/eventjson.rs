//! The events report's line format: every envelope field, the payload as JSON when its bytes are
//! exactly a one-line JSON value (so they can be reproduced byte for byte), base64 otherwise.
//! `import --events` reads it back into identical envelopes: same hashes, same chain head.

use base64::Engine;
use engine::log::{hex, Envelope, Truncation};
use projections::{Kind, KindOf};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::io::Write;

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

/// `bytes` as a JSON value to embed as-is in a JSONL line, when it reads back identically.
fn embeddable(bytes: &[u8]) -> Option<&RawValue> {
    match (bytes.first(), bytes.last()) {
        (Some(b'{'), Some(b'}')) | (Some(b'['), Some(b']')) => {}
        _ => return None,
    }
    if bytes.contains(&b'\n') || bytes.contains(&b'\r') || !shallow(bytes) {
        return None;
    }
    serde_json::from_slice::<&RawValue>(bytes).ok()
}

/// `bytes` as whitespace, a JSON value to embed and whitespace (Claude Code's payloads end with
/// a newline), when the value reads back identically: the whitespace is kept beside it, so the
/// payload is readable and still restored byte for byte.
fn embeddable_padded(bytes: &[u8]) -> Option<(&str, &RawValue, &str)> {
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace())?;
    let end = bytes.iter().rposition(|b| !b.is_ascii_whitespace())? + 1;
    let raw = embeddable(&bytes[start..end])?;
    let before = std::str::from_utf8(&bytes[..start]).ok()?;
    let after = std::str::from_utf8(&bytes[end..]).ok()?;
    Some((before, raw, after))
}

/// Nesting within what common JSON readers accept (serde_json stops at 128), so every line of
/// the report parses everywhere; deeper payloads go as base64.
fn shallow(bytes: &[u8]) -> bool {
    let (mut depth, mut in_str, mut esc) = (0usize, false, false);
    for &b in bytes {
        if in_str {
            match (esc, b) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > 100 {
                    return false;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    true
}

/// One line of the events report, in its field order. Optional fields are left out when absent;
/// `session_id` and `agent_id` are always there (null when absent).
#[derive(Serialize)]
struct LineOut<'a> {
    seq: u64,
    recorded_at: String,
    recorded_at_us: i64,
    host: &'a str,
    kind: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cause: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rewind_session: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rewind_to: Option<u64>,
    session_id: Option<&'a str>,
    agent_id: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    spooled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated: Option<TruncOut>,
    /// The payload itself, byte for byte, when it is a one-line JSON value (once the whitespace
    /// around it, kept in `payload_before`/`payload_after`, is set aside).
    #[serde(skip_serializing_if = "Option::is_none")]
    payload: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "str::is_empty")]
    payload_before: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    payload_after: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload_b64: Option<String>,
    /// A masked payload that is no longer a one-line JSON value.
    #[serde(skip_serializing_if = "Option::is_none")]
    payload_text: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    redacted: bool,
    prev: String,
    hash: String,
}

#[derive(Serialize)]
struct TruncOut {
    original_len: u64,
    blake3: String,
}

/// Writes one event as a JSONL line. `redact` masks secrets in the payload (then the line can no
/// longer be imported to the same hash; the report says so by `"redacted": true`).
pub fn write_line(
    w: &mut impl Write,
    e: &Envelope,
    redact: Option<&mut usize>,
) -> std::io::Result<()> {
    let kind = e.kind();
    let (name, reason, cause, rewind) = match &kind {
        Kind::Hook { name } => (Some(name.as_str()), None, None, None),
        Kind::Malformed { reason } => (None, Some(reason.as_str()), None, None),
        Kind::Rewound { session, to_seq } => (None, None, None, Some((session.as_str(), *to_seq))),
        k => (None, None, k.cause(), None),
    };
    // The payload: embedded when it is a one-line JSON value, else base64, or (masked) as text.
    let mut masked = None;
    let mut redacted = false;
    if let Some(count) = redact {
        let text = String::from_utf8_lossy(&e.payload);
        let (text, n) = projections::redact::redact(&text);
        *count += n;
        redacted = n > 0;
        masked = Some(text.into_owned());
    }
    let (mut before, mut after) = ("", "");
    let (payload, payload_b64, payload_text) = match &masked {
        Some(text) => match embeddable(text.as_bytes()) {
            Some(raw) => (Some(raw), None, None),
            None => (None, None, Some(text.as_str())),
        },
        None => match embeddable_padded(&e.payload) {
            Some((b, raw, a)) => {
                (before, after) = (b, a);
                (Some(raw), None, None)
            }
            None => (None, Some(b64().encode(&e.payload)), None),
        },
    };
    let line = LineOut {
        seq: e.seq,
        recorded_at: crate::output::timestamp(e.recorded_at_us),
        recorded_at_us: e.recorded_at_us,
        host: &e.host,
        kind: kind.name(),
        name,
        reason,
        cause,
        rewind_session: rewind.map(|(s, _)| s),
        rewind_to: rewind.map(|(_, to)| to),
        session_id: e.session_id.as_deref(),
        agent_id: e.agent_id.as_deref(),
        spooled: e.spooled,
        truncated: e.truncated.as_ref().map(|t| TruncOut {
            original_len: t.original_len,
            blake3: hex(&t.blake3),
        }),
        payload,
        payload_before: before,
        payload_after: after,
        payload_b64,
        payload_text,
        redacted,
        prev: hex(&e.prev),
        hash: hex(&e.hash),
    };
    serde_json::to_writer(&mut *w, &line)?;
    w.write_all(b"\n")
}

#[derive(Deserialize)]
struct Line<'a> {
    seq: u64,
    recorded_at_us: i64,
    host: String,
    kind: String,
    name: Option<String>,
    reason: Option<String>,
    cause: Option<u64>,
    rewind_session: Option<String>,
    rewind_to: Option<u64>,
    session_id: Option<String>,
    agent_id: Option<String>,
    #[serde(default)]
    spooled: bool,
    truncated: Option<TruncLine>,
    #[serde(borrow)]
    payload: Option<&'a RawValue>,
    #[serde(default)]
    payload_before: String,
    #[serde(default)]
    payload_after: String,
    payload_b64: Option<String>,
    payload_text: Option<String>,
    #[serde(default)]
    redacted: bool,
    prev: String,
    hash: String,
}

#[derive(Deserialize)]
struct TruncLine {
    original_len: u64,
    blake3: String,
}

fn unhex(s: &str) -> Result<[u8; 32], String> {
    engine::log::unhex(s).ok_or_else(|| format!("hash {s:?} is not 64 hex digits"))
}

/// Parses a line of the events report back into its envelope (hash as recorded, not recomputed).
pub fn read_line(line: &str) -> Result<Envelope, String> {
    let l: Line = serde_json::from_str(line).map_err(|e| e.to_string())?;
    if l.payload_text.is_some() || l.redacted {
        return Err("this line comes from a redacted export and cannot be imported".into());
    }
    let cause = || {
        l.cause
            .ok_or_else(|| format!("kind {} needs a cause", l.kind))
    };
    let kind = match l.kind.as_str() {
        "Hook" => Kind::Hook {
            name: l.name.clone().ok_or("Hook without name")?,
        },
        "Malformed" => Kind::Malformed {
            reason: l.reason.clone().unwrap_or_default(),
        },
        "UsageObserved" => Kind::UsageObserved { cause: cause()? },
        "ContextObserved" => Kind::ContextObserved { cause: cause()? },
        "SessionMetrics" => Kind::SessionMetrics { cause: cause()? },
        "ResponseEmitted" => Kind::ResponseEmitted { cause: cause()? },
        "ReminderIssued" => Kind::ReminderIssued { cause: cause()? },
        "TaskReleased" => Kind::TaskReleased { cause: cause()? },
        "GitObserved" => Kind::GitObserved { cause: cause()? },
        "Checkpoint" => Kind::Checkpoint { cause: cause()? },
        "TaskCommand" => Kind::TaskCommand,
        "HostReported" => Kind::HostReported,
        "ExternalRelease" => Kind::ExternalRelease,
        "Rewound" => Kind::Rewound {
            session: l
                .rewind_session
                .clone()
                .ok_or("Rewound without rewind_session")?,
            to_seq: l.rewind_to.ok_or("Rewound without rewind_to")?,
        },
        other => return Err(format!("unknown kind {other:?}")),
    };
    let padding = [&l.payload_before, &l.payload_after];
    if padding
        .iter()
        .any(|p| !p.bytes().all(|b| b.is_ascii_whitespace()))
    {
        return Err("payload_before/payload_after hold more than whitespace".into());
    }
    let payload = match (l.payload, &l.payload_b64) {
        (Some(raw), _) => [
            l.payload_before.as_bytes(),
            raw.get().as_bytes(),
            l.payload_after.as_bytes(),
        ]
        .concat(),
        (None, Some(b)) => b64().decode(b).map_err(|e| format!("payload_b64: {e}"))?,
        (None, None) => return Err("no payload".into()),
    };
    let truncated = match l.truncated {
        Some(t) => Some(Truncation {
            original_len: t.original_len,
            blake3: unhex(&t.blake3)?,
        }),
        None => None,
    };
    Ok(Envelope {
        seq: l.seq,
        recorded_at_us: l.recorded_at_us,
        host: l.host,
        kind: kind.into(),
        session_id: l.session_id,
        agent_id: l.agent_id,
        payload,
        truncated,
        spooled: l.spooled,
        prev: unhex(&l.prev)?,
        hash: unhex(&l.hash)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::log::{NewEvent, ZERO_HASH};

    fn env(payload: &[u8], kind: Kind) -> Envelope {
        Envelope::seal(
            NewEvent {
                recorded_at_us: 1_700_000_000_123_456,
                host: "claude".into(),
                kind: kind.into(),
                session_id: Some("s".into()),
                agent_id: None,
                payload: payload.to_vec(),
                truncated: None,
                spooled: false,
            },
            1,
            ZERO_HASH,
        )
    }

    #[test]
    fn lines_round_trip_byte_for_byte() {
        for p in [
            &b"{\"a\": 1}"[..],
            b"{\n \"pretty\": true\n}",
            b"\xff\x00 not utf8",
            b"",
            b" {\"ws\":1}",
            b"[1,2]",
            b"{\"hook_event_name\":\"Stop\"}\n",
            b"\r\n\t{\"a\":1} \n\n",
        ] {
            for k in [
                Kind::Hook {
                    name: "Stop".into(),
                },
                Kind::Malformed { reason: "x".into() },
                Kind::UsageObserved { cause: 9 },
                Kind::Rewound {
                    session: "s".into(),
                    to_seq: 3,
                },
            ] {
                let e = env(p, k);
                let mut out = Vec::new();
                write_line(&mut out, &e, None).unwrap();
                let line = String::from_utf8(out).unwrap();
                assert_eq!(line.matches('\n').count(), 1, "{line}");
                assert_eq!(read_line(line.trim_end()).unwrap(), e);
            }
        }
    }

    /// A kind added to the vocabulary must be exported and imported too (this mapping of kinds
    /// to the line's fields is the export format's).
    #[test]
    fn every_kind_of_the_vocabulary_round_trips() {
        for k in Kind::examples() {
            let e = env(b"{}", k.clone());
            let mut out = Vec::new();
            write_line(&mut out, &e, None).unwrap();
            let line = String::from_utf8(out).unwrap();
            assert_eq!(read_line(line.trim_end()), Ok(e), "{}", k.name());
        }
    }

    /// Claude Code 2.1.330's payloads end with a newline: they stay readable JSON in the report
    /// (not base64), and come back byte for byte.
    #[test]
    fn a_payload_ending_with_a_newline_stays_readable() {
        let p = b"{\"hook_event_name\":\"Stop\",\"session_id\":\"s\"}\n";
        let e = env(
            p,
            Kind::Hook {
                name: "Stop".into(),
            },
        );
        let mut out = Vec::new();
        write_line(&mut out, &e, None).unwrap();
        let line = String::from_utf8(out).unwrap();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["payload"]["hook_event_name"], "Stop", "{line}");
        assert_eq!(v["payload_after"], "\n");
        assert!(v.get("payload_b64").is_none() && v.get("payload_before").is_none());
        assert_eq!(read_line(line.trim_end()).unwrap().payload, p);
        // Only whitespace may sit around it.
        let forged = line.replace("\"payload_after\":\"\\n\"", "\"payload_after\":\"x\"");
        assert!(read_line(forged.trim_end()).is_err(), "{forged}");
    }
}
