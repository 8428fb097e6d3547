//! What the hook reads from outside the journal at an event: the host's session files, planned
//! from the host table (`HostFacts::session_file`) and the session's state. A pure rule; the
//! engine executes the plan (`engine::hook`), owning the reads, their budget and the clock.

use crate::event::{Canonical, EventKind, HookEvent};
use crate::host::{DerivedPath, SessionFileFacts, SessionFileFormat};
use crate::session::SessionState;

/// One file to read, from where the session's reading stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Read {
    /// How to read it.
    pub format: SessionFileFormat,
    /// Where it is: relative to the first of `under`'s directories the engine finds in the
    /// hook's environment when `under` is given (`DerivedPath`), else as the payload named it.
    pub path: String,
    /// The directories a derived path is under, as (variable, suffix), first set one wins.
    pub under: Option<&'static [(&'static str, &'static str)]>,
    /// The subagent whose own transcript it is (`None`: the session's).
    pub agent: Option<String>,
    /// The model its usage is priced at when the file does not say (Codex CLI's rollout).
    pub model: Option<String>,
    /// Bytes to read at once, as a multiple of `hook.transcript_read_max`.
    pub scale: u64,
}

/// The reads of one invocation, and the time they share.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// In order.
    pub reads: Vec<Read>,
    /// Milliseconds every read together may take: SessionEnd hooks share 1.5 s in Claude Code.
    pub budget_ms: u64,
}

/// The reads at event `p` of `session` (as the journal holds it before this event).
pub fn plan(p: &HookEvent, session: Option<&SessionState>) -> Plan {
    let facts = p.host.facts().session_file;
    let kind = p.canonical.kind();
    let end = kind == EventKind::SessionEnd;
    let mut plan = Plan {
        reads: Vec::new(),
        budget_ms: if end { 500 } else { 300 },
    };
    let scale = if end { 4 } else { facts.read_scale };
    let read = |path: &str, agent: Option<&str>| Read {
        format: facts.format,
        path: path.to_string(),
        under: None,
        agent: agent.map(str::to_string),
        model: (facts.format == SessionFileFormat::CodexRollout)
            .then(|| session.and_then(|s| s.model.clone()).or(p.model.clone()))
            .flatten(),
        scale,
    };
    if reads_session_file(&facts, kind, p, session) {
        let path = p.transcript_path.as_deref().or(facts
            .path_from_session
            .then(|| session.and_then(|s| s.transcript_path.as_deref()))
            .flatten());
        if let Some(path) = path {
            // A subagent's own Stop still names the main transcript.
            plan.reads.push(read(path, None));
        } else if let Some((d, id)) = facts.derived_path.zip(p.session_id.as_deref()) {
            let file =
                (d.file.replace("{session_hex}", &id.replace('-', ""))).replace("{session}", id);
            let file = match (file.contains("{cwd_md5}"), p.cwd.as_deref()) {
                (false, _) => Some(file),
                (true, Some(cwd)) => Some(file.replace("{cwd_md5}", &md5_hex(cwd))),
                (true, None) => None,
            };
            if let Some(file) = file.filter(|_| safe_file_name(id)) {
                plan.reads.push(Read {
                    under: Some(d.dirs),
                    ..read(&file, None)
                });
                // Its latest subagents' own files, which may have been written after their
                // stop (measured: 11 ms after Cline's subagent `agent_end`); bounded, as every
                // read is paid on the hook path.
                let subagents = session.map_or(&[][..], |s| &s.subagents[..]);
                let latest = &subagents[subagents.len().saturating_sub(CATCH_UP_SUBAGENTS)..];
                for agent in latest {
                    if let Some(path) = subagent_path(&d, id, &agent.agent_id) {
                        plan.reads.push(Read {
                            under: Some(d.dirs),
                            ..read(&path, Some(&agent.agent_id))
                        });
                    }
                }
            }
        }
        // Subagent transcripts lag their SubagentStop: catch up on what they wrote since.
        if facts.subagent_files && facts.format == SessionFileFormat::ClaudeTranscript {
            for (path, agent) in session
                .map(|s| &s.subagent_transcripts)
                .into_iter()
                .flatten()
            {
                plan.reads.push(Read {
                    format: SessionFileFormat::ClaudeTranscript,
                    ..read(path, Some(agent))
                });
            }
        }
    } else if let Canonical::SubagentStop {
        agent_id,
        transcript: None,
        ..
    } = &p.canonical
    {
        // A subagent's own file beside the session's (Cline's), which no payload names.
        let derived = facts.derived_path.zip(p.session_id.as_deref());
        if let Some(path) = derived.and_then(|(d, id)| subagent_path(&d, id, agent_id)) {
            plan.reads.push(Read {
                under: facts.derived_path.map(|d| d.dirs),
                ..read(&path, Some(agent_id))
            });
        }
    } else if let Canonical::SubagentStop {
        agent_id,
        transcript: Some(path),
        ..
    } = &p.canonical
    {
        if facts.subagent_files {
            // A subagent's transcript is Claude Code's shape wherever one is named.
            plan.reads.push(Read {
                format: SessionFileFormat::ClaudeTranscript,
                model: None,
                scale: 1,
                ..read(path, Some(agent_id))
            });
        }
    }
    plan
}

/// The MD5 of `text`, in lower-case hex (how Kimi CLI names a work directory's session folder).
fn md5_hex(text: &str) -> String {
    use md5::Digest;
    md5::Md5::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// How many of a session's latest subagents have their own files read again at its end.
const CATCH_UP_SUBAGENTS: usize = 8;

/// Whether an id from a payload can name a file: one that could leave its directory names none.
fn safe_file_name(id: &str) -> bool {
    id != "." && id != ".." && !id.is_empty() && !id.contains(['/', '\\', '\0'])
}

/// A subagent's own file under the session's directories (`DerivedPath::subagent_file`).
fn subagent_path(d: &DerivedPath, session: &str, agent: &str) -> Option<String> {
    let file = d.subagent_file?;
    (safe_file_name(session) && safe_file_name(agent))
        .then(|| file.replace("{session}", session).replace("{agent}", agent))
}

/// Whether the session's own file is read at this event.
fn reads_session_file(
    facts: &SessionFileFacts,
    kind: EventKind,
    p: &HookEvent,
    session: Option<&SessionState>,
) -> bool {
    if facts.main_agent_only && p.agent_id.is_some() {
        return false;
    }
    facts.read_at.contains(&kind)
        || (facts.read_while_compacting.contains(&kind)
            && session.is_some_and(|s| s.awaits_compaction()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Host;

    fn event(host: Host, json: &str) -> HookEvent {
        crate::event::parse(&host, json.as_bytes()).expect("a hook event")
    }

    fn paths(plan: &Plan) -> Vec<(SessionFileFormat, &str, Option<&str>, u64)> {
        plan.reads
            .iter()
            .map(|r| (r.format, r.path.as_str(), r.agent.as_deref(), r.scale))
            .collect()
    }

    /// Given a Claude Code session with a subagent's transcript seen, when it stops, then the
    /// main transcript and the subagent's are read, at the normal size; at SessionEnd, four
    /// times as much within 500 ms.
    #[test]
    fn claude_reads_its_transcript_and_catches_up_on_subagents() {
        let mut s = SessionState::default();
        s.subagent_transcripts
            .insert("/t/sub.jsonl".into(), "a1".into());
        let stop = event(
            Host::Claude,
            r#"{"hook_event_name":"Stop","session_id":"s","transcript_path":"/t/main.jsonl"}"#,
        );
        let plan = plan(&stop, Some(&s));
        use SessionFileFormat::ClaudeTranscript as C;
        assert_eq!(
            paths(&plan),
            [
                (C, "/t/main.jsonl", None, 1),
                (C, "/t/sub.jsonl", Some("a1"), 1)
            ]
        );
        assert_eq!(plan.budget_ms, 300);
        let end = event(
            Host::Claude,
            r#"{"hook_event_name":"SessionEnd","session_id":"s","transcript_path":"/t/main.jsonl"}"#,
        );
        let plan = super::plan(&end, Some(&s));
        assert_eq!(
            paths(&plan),
            [
                (C, "/t/main.jsonl", None, 4),
                (C, "/t/sub.jsonl", Some("a1"), 4)
            ]
        );
        assert_eq!(plan.budget_ms, 500);
    }

    /// Given a Claude Code prompt, then nothing is read (usage is read when a turn ends).
    #[test]
    fn a_prompt_reads_nothing() {
        let p = event(
            Host::Claude,
            r#"{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"hi","transcript_path":"/t/main.jsonl"}"#,
        );
        assert_eq!(plan(&p, None).reads, []);
    }

    /// Given Codex CLI's Stop, then its rollout is read with the session's model; a subagent's
    /// own Stop reads nothing (its rollout's usage is not the session's context).
    #[test]
    fn codex_reads_the_rollout_of_the_main_agent_only() {
        let s = SessionState {
            model: Some("gpt-5".into()),
            ..SessionState::default()
        };
        let stop = event(
            Host::Codex,
            r#"{"hook_event_name":"Stop","session_id":"s","transcript_path":"/r.jsonl","turn_id":"t"}"#,
        );
        let plan = plan(&stop, Some(&s));
        assert_eq!(
            paths(&plan),
            [(SessionFileFormat::CodexRollout, "/r.jsonl", None, 4)]
        );
        assert_eq!(plan.reads[0].model.as_deref(), Some("gpt-5"));
        let mut sub = stop.clone();
        sub.agent_id = Some("a1".into());
        assert_eq!(super::plan(&sub, Some(&s)).reads, []);
    }

    /// Given Gemini CLI's AfterTool, then its chat file is read (a compression is written
    /// before the request that follows it).
    #[test]
    fn gemini_reads_its_chat_file_after_a_tool() {
        let after = event(
            Host::Gemini,
            r#"{"hook_event_name":"AfterTool","session_id":"s","transcript_path":"/c.json","tool_name":"read_file","tool_input":{},"tool_response":{},"timestamp":"2026-01-01T00:00:00Z","cwd":"/p"}"#,
        );
        assert_eq!(
            paths(&plan(&after, None)),
            [(SessionFileFormat::GeminiChat, "/c.json", None, 4)]
        );
    }

    /// Given Copilot CLI's tool result, then its session file is read only while a compaction
    /// it announced is not in the file yet — from the session's path, which its payloads may
    /// not name.
    #[test]
    fn copilot_reads_its_session_file_while_a_compaction_is_awaited() {
        let mut s = SessionState {
            transcript_path: Some("/e.jsonl".into()),
            ..SessionState::default()
        };
        let post = event(
            Host::Copilot,
            r#"{"hookEventName":"postToolUse","sessionId":"s","toolName":"bash","toolArgs":{},"toolResult":{}}"#,
        );
        assert_eq!(plan(&post, Some(&s)).reads, []);
        s.compaction_announced_at = 5;
        assert_eq!(
            paths(&plan(&post, Some(&s))),
            [(SessionFileFormat::CopilotEvents, "/e.jsonl", None, 4)]
        );
    }

    /// Given Cline CLI's run end, whose payload names no file, then its messages file is read
    /// under the directory the hook's environment gives, named by the session id; a session id
    /// that could leave that directory, or a subagent's event, reads nothing.
    #[test]
    fn cline_reads_its_messages_file_under_a_directory_from_the_environment() {
        let end = |sid: &str| {
            event(
                Host::Cline,
                &format!(
                    r#"{{"hookName":"agent_end","sessionContext":{{"rootSessionId":"{sid}"}},"agent_id":"a","parent_agent_id":null}}"#
                ),
            )
        };
        let plan = plan(&end("17_x"), None);
        assert_eq!(
            paths(&plan),
            [(
                SessionFileFormat::ClineMessages,
                "17_x/17_x.messages.json",
                None,
                4
            )]
        );
        let under = plan.reads[0].under.expect("a derived path");
        assert_eq!(under.first(), Some(&("CLINE_SESSION_DATA_DIR", "")));
        assert_eq!(under.last(), Some(&("HOME", ".cline/data/sessions")));
        for bad in ["..", "a/b", "."] {
            assert_eq!(super::plan(&end(bad), None).reads, [], "{bad}");
        }
        let mut sub = end("17_x");
        sub.agent_id = Some("a2".into());
        assert_eq!(super::plan(&sub, None).reads, []);
    }

    /// Given a Cline subagent (`spawn_agent`), whose usage Cline keeps in a file of its own beside
    /// the session's: when it ends, that file is read as the subagent's; when the session's run
    /// ends, the session's file and its latest eight subagents' files are read (a subagent's file
    /// can be written after its end); an agent id that could leave the directory names no file.
    #[test]
    fn a_cline_subagents_own_file_is_read_at_its_end_and_at_the_sessions() {
        let sub_end = |agent: &str| {
            event(
                Host::Cline,
                &format!(
                    r#"{{"hookName":"agent_end","sessionContext":{{"rootSessionId":"17_x"}},"agent_id":"{agent}","parent_agent_id":"lead"}}"#
                ),
            )
        };
        use SessionFileFormat::ClineMessages as M;
        let plan = plan(&sub_end("agent_2"), None);
        assert_eq!(
            paths(&plan),
            [(M, "17_x/agent_2.messages.json", Some("agent_2"), 4)]
        );
        assert_eq!(
            plan.reads[0].under.and_then(|u| u.last()),
            Some(&("HOME", ".cline/data/sessions"))
        );
        for bad in ["..", "a/b", "."] {
            assert_eq!(super::plan(&sub_end(bad), None).reads, [], "{bad}");
        }
        let mut s = SessionState::default();
        s.subagents.push(crate::session::Subagent {
            agent_id: "agent_2".into(),
            agent_type: None,
            running: false,
            last_message: None,
        });
        let end = event(
            Host::Cline,
            r#"{"hookName":"agent_end","sessionContext":{"rootSessionId":"17_x"},"agent_id":"lead","parent_agent_id":null}"#,
        );
        assert_eq!(
            paths(&super::plan(&end, Some(&s))),
            [
                (M, "17_x/17_x.messages.json", None, 4),
                (M, "17_x/agent_2.messages.json", Some("agent_2"), 4)
            ]
        );
        // Of ten subagents, the latest eight are read again, in their order.
        for i in 3..=11 {
            let mut a = s.subagents[0].clone();
            a.agent_id = format!("agent_{i}");
            s.subagents.push(a);
        }
        let plan = super::plan(&end, Some(&s));
        let agents: Vec<_> = plan
            .reads
            .iter()
            .filter_map(|r| r.agent.as_deref())
            .collect();
        assert_eq!(
            agents,
            [
                "agent_4", "agent_5", "agent_6", "agent_7", "agent_8", "agent_9", "agent_10",
                "agent_11"
            ]
        );
    }
}
