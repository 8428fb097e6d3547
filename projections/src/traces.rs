//! Sessions as traces in the OpenTelemetry GenAI semantic conventions: a fold of the log into one
//! trace per turn (a prompt to its stop; the time before a session's first prompt belongs to its
//! first turn), each rooted at an `invoke_agent {agent}` span holding a `chat {model}` span per
//! model response the journal priced, an `execute_tool {tool}` span per tool call (its before and
//! after paired on the host's tool-call id, else in order by tool name), a subagent as a child
//! `invoke_agent` span holding its own calls, and compactions, reminders, task releases and
//! blocked stops as span events.
//!
//! Pure: events in, turns out. Every span has a `key` stable for the journal (the seqs and ids
//! it is made of), from which the shipper derives trace and span ids, so shipping the same turn
//! twice sends the same ids. A turn is handed out (`Traces::take_finished`) once it is over: its
//! stop, failure or session end was folded along with everything the same commit recorded for it
//! (the usage its transcript read found). A turn that is still open stays; one whose session has
//! been silent for `STALE_US` of journal time (a killed agent) is handed out marked unfinished.

use crate::derived::{self, ResponseEmitted};
use crate::event::{self, Canonical, HookEvent};
use crate::kind::{Kind, KindOf};
use crate::policy::Answer;
use crate::pricing::PricingTable;
use crate::transcript::Usage;
use journal::{Envelope, Seq};
use std::collections::BTreeMap;

/// A turn whose session has recorded nothing for this long (journal time) is handed out as
/// unfinished: its agent was killed, or left.
pub const STALE_US: i64 = 6 * 3600 * 1_000_000;

/// How far a transcript's clock may be from the journal's for a response's own time to be used.
const SLACK_US: i64 = 60 * 1_000_000;

/// The most characters of a prompt, answer or tool input or result kept with `content`.
const MAX_CONTENT: usize = 8_000;

/// An attribute's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Attr {
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
    /// A float.
    Double(f64),
    /// A flag.
    Bool(bool),
}

/// What a span stands for (its `gen_ai.operation.name`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SpanKind {
    /// `invoke_agent`: a turn's agent, or a subagent.
    Agent,
    /// `chat`: one model response.
    Chat,
    /// `execute_tool`: one tool call.
    Tool,
}

impl SpanKind {
    /// The convention's operation name.
    pub fn operation(&self) -> &'static str {
        match self {
            SpanKind::Agent => "invoke_agent",
            SpanKind::Chat => "chat",
            SpanKind::Tool => "execute_tool",
        }
    }
}

/// Something that happened at one moment of a span.
#[derive(Clone, Debug, PartialEq)]
pub struct SpanEvent {
    /// When (µs).
    pub at_us: i64,
    /// `hookjournal.compaction`, `hookjournal.reminder`, `hookjournal.task_released`,
    /// `hookjournal.stop_blocked`, `hookjournal.agent_stopped`.
    pub name: String,
    /// Its attributes.
    pub attrs: Vec<(String, Attr)>,
}

/// One span.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// What its id is derived from: unique in the journal.
    pub key: String,
    /// Its parent's key (`None` for a turn's root).
    pub parent: Option<String>,
    /// What it stands for.
    pub kind: SpanKind,
    /// `invoke_agent claude`, `chat claude-sonnet-4-5`, `execute_tool Bash`.
    pub name: String,
    /// Start (µs).
    pub start_us: i64,
    /// End (µs).
    pub end_us: i64,
    /// Its attributes, in the convention's names (and `hookjournal.*`).
    pub attrs: Vec<(String, Attr)>,
    /// What happened during it.
    pub events: Vec<SpanEvent>,
    /// Set when it failed, with why.
    pub error: Option<String>,
}

impl Span {
    fn new(key: String, parent: Option<String>, kind: SpanKind, name: String, at: i64) -> Span {
        Span {
            key,
            parent,
            kind,
            name,
            start_us: at,
            end_us: at,
            attrs: vec![(
                "gen_ai.operation.name".into(),
                Attr::Str(kind.operation().into()),
            )],
            events: Vec::new(),
            error: None,
        }
    }

    fn set(&mut self, key: &str, v: Attr) {
        match self.attrs.iter_mut().find(|(k, _)| k == key) {
            Some((_, old)) => *old = v,
            None => self.attrs.push((key.to_string(), v)),
        }
    }

    fn text(&mut self, key: &str, v: impl Into<String>) {
        self.set(key, Attr::Str(v.into()));
    }

    /// The value of attribute `key`, if set.
    pub fn attr(&self, key: &str) -> Option<&Attr> {
        self.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// One turn: its trace's spans, the root first.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    /// The session (the trace's `gen_ai.conversation.id`).
    pub session: String,
    /// The host that ran it.
    pub host: String,
    /// What its trace id is derived from.
    pub key: String,
    /// The seq of its first event.
    pub first_seq: Seq,
    /// The seq of its last event.
    pub last_seq: Seq,
    /// Its spans, the root (`invoke_agent`) first.
    pub spans: Vec<Span>,
}

/// What is put in the spans besides the structure and the figures.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// The prompt, the final answer, and tool inputs and results (`--content`), as text.
    pub content: bool,
}

/// A tool call begun and not yet finished.
#[derive(Clone, Debug)]
struct OpenCall {
    id: Option<String>,
    tool: String,
    agent: Option<String>,
    span: Span,
}

/// A turn being folded.
#[derive(Clone, Debug)]
struct Open {
    root: Span,
    host: String,
    first_seq: Seq,
    last_seq: Seq,
    prompted: bool,
    /// The seq of the stop that ended it (more events of the same commit may follow).
    ending: Option<Seq>,
    calls: Vec<OpenCall>,
    done: Vec<Span>,
    /// Chat spans by the response's dedup key (a larger reading replaces the span's figures).
    chats: BTreeMap<String, usize>,
    /// Subagents by their id: the index in `done` of their span, and whether still running.
    agents: BTreeMap<String, (usize, bool)>,
    /// Whether anything worth a trace happened (a prompt, a call, a response, a subagent).
    worth: bool,
}

/// The fold: open turns by session, and the turns that are over.
#[derive(Clone, Debug, Default)]
pub struct Traces {
    open: BTreeMap<String, Open>,
    finished: Vec<Turn>,
    options: Options,
    /// The latest event's time (µs): what "silent for `STALE_US`" is measured against.
    now_us: i64,
}

fn clip(s: &str) -> String {
    if s.chars().count() <= MAX_CONTENT {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX_CONTENT).collect();
    out.push('…');
    out
}

/// The convention's provider name for a model (its family), else for the host.
pub fn provider(model: Option<&str>, host: &str) -> &'static str {
    let m = model.unwrap_or_default().to_ascii_lowercase();
    let by_model = [
        ("claude", "anthropic"),
        ("gpt", "openai"),
        ("o1", "openai"),
        ("o3", "openai"),
        ("o4", "openai"),
        ("codex", "openai"),
        ("gemini", "gcp.gemini"),
        ("mistral", "mistral_ai"),
        ("deepseek", "deepseek"),
        ("grok", "x_ai"),
    ];
    if let Some((_, p)) = by_model.iter().find(|(prefix, _)| m.starts_with(prefix)) {
        return p;
    }
    match host {
        "claude" => "anthropic",
        "codex" => "openai",
        "gemini" => "gcp.gemini",
        "copilot" => "github",
        _ => "unknown",
    }
}

/// Microseconds since the epoch of an RFC 3339 time (a transcript line's `timestamp`).
fn parse_time(s: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.timestamp_micros())
}

impl Traces {
    /// A fold that keeps content as `options` says.
    pub fn new(options: Options) -> Traces {
        Traces {
            options,
            ..Traces::default()
        }
    }

    /// Folds one event of the log, in order; `pricing` prices a response.
    pub fn apply(&mut self, env: &Envelope, pricing: &PricingTable) {
        self.now_us = self.now_us.max(env.recorded_at_us);
        let Some(sid) = env.session_id.clone() else {
            return;
        };
        match env.kind() {
            Kind::Hook { .. } => {
                if let Some(ev) = event::from_envelope(env) {
                    self.hook(env, &sid, &ev);
                }
            }
            Kind::UsageObserved { .. } => {
                if let Some(u) = derived::usage(&env.payload) {
                    let r = &u.record;
                    let read = env.recorded_at_us;
                    let turn_start = self.open.get(&sid).map_or(read, |t| t.root.start_us);
                    // The response's own time, when it is one the turn could hold: it was written
                    // after the turn began and before this read of it (a minute's slack for
                    // clocks); else the time it was read (a transcript replayed, a clock off).
                    let at = parse_time(&r.timestamp)
                        .filter(|&t| t >= turn_start - SLACK_US && t <= read + SLACK_US)
                        .unwrap_or(read);
                    let key = format!("{}:{}", r.message_id, r.request_id);
                    let cost = pricing.cost(&r.model, &r.usage);
                    let response = (!r.message_id.starts_with("uuid:")).then_some(&r.message_id);
                    let turn = self.turn(env, &sid);
                    turn.chat(
                        &sid,
                        &key,
                        u.agent_id.as_deref(),
                        &r.model,
                        &r.usage,
                        cost,
                        response.map(|s| s.as_str()),
                        at,
                    );
                }
            }
            Kind::ReminderIssued { cause } => {
                let r = derived::parse::<derived::ReminderIssued>(&env.payload);
                let mut attrs = vec![("hookjournal.cause".into(), Attr::Int(cause as i64))];
                if let Some(r) = r {
                    attrs.push((
                        "hookjournal.steps_since_task_use".into(),
                        Attr::Int(r.since_task_use as i64),
                    ));
                }
                self.mark(env, &sid, "hookjournal.reminder", attrs);
            }
            Kind::TaskReleased { cause } => {
                let mut attrs = vec![("hookjournal.cause".into(), Attr::Int(cause as i64))];
                if let Some(r) = derived::parse::<derived::TaskReleased>(&env.payload) {
                    attrs.push(("hookjournal.task.id".into(), Attr::Str(r.task.display())));
                    attrs.push(("hookjournal.task.reason".into(), Attr::Str(r.reason)));
                    if let Some(a) = r.agent {
                        attrs.push(("gen_ai.agent.id".into(), Attr::Str(a)));
                    }
                }
                self.mark(env, &sid, "hookjournal.task_released", attrs);
            }
            Kind::ResponseEmitted { cause } => self.answer(env, &sid, cause),
            _ => {
                if let Some(t) = self.open.get_mut(&sid) {
                    t.touch(env);
                }
            }
        }
    }

    /// The turns that are over (and those silent for `STALE_US`), in the order they ended.
    pub fn take_finished(&mut self) -> Vec<Turn> {
        let ending: Vec<String> = self
            .open
            .iter()
            .filter(|(_, t)| t.ending.is_some() || self.now_us - t.root.end_us >= STALE_US)
            .map(|(s, _)| s.clone())
            .collect();
        for sid in ending {
            let t = self.open.remove(&sid).expect("listed");
            let unfinished = t.ending.is_none();
            self.finish(sid, t, unfinished);
        }
        std::mem::take(&mut self.finished)
    }

    /// Every turn, the open ones too (marked unfinished): the end of a log that will not grow.
    pub fn take_all(&mut self) -> Vec<Turn> {
        let open = std::mem::take(&mut self.open);
        for (sid, t) in open {
            let unfinished = t.ending.is_none();
            self.finish(sid, t, unfinished);
        }
        std::mem::take(&mut self.finished)
    }

    /// The first seq of the oldest turn still open: where a fold must start again to rebuild
    /// what is open now (`None`: nothing is).
    pub fn resume_from(&self) -> Option<Seq> {
        self.open.values().map(|t| t.first_seq).min()
    }

    /// The session's open turn, begun at `env` when there is none.
    fn turn(&mut self, env: &Envelope, sid: &str) -> &mut Open {
        let host = env.host.clone();
        let t = self
            .open
            .entry(sid.to_string())
            .or_insert_with(|| Open::begin(sid, &host, env));
        t.touch(env);
        t
    }

    /// A prompt: the session's turn before it is over (unless only the time before the first
    /// prompt was in it), and this one begins.
    fn prompt(&mut self, env: &Envelope, sid: &str, text: &str) {
        let content = self.options.content;
        if self
            .open
            .get(sid)
            .is_some_and(|t| t.prompted || t.ending.is_some())
        {
            let t = self.open.remove(sid).expect("checked");
            self.finish(sid.to_string(), t, false);
        }
        let t = self.turn(env, sid);
        t.prompted = true;
        t.worth = true;
        if content {
            t.root.text("input.value", clip(text));
            t.root.text(
                "gen_ai.input.messages",
                serde_json::json!([{"role": "user", "parts": [{"type": "text", "content": clip(text)}]}])
                    .to_string(),
            );
        }
    }

    fn hook(&mut self, env: &Envelope, sid: &str, ev: &HookEvent) {
        let content = self.options.content;
        if let Canonical::Prompt { text } = &ev.canonical {
            return self.prompt(env, sid, text);
        }
        // A Gemini CLI PreCompress fires before every model request: no compaction.
        let compaction_facts = ev.host.facts().compaction;
        let t = self.turn(env, sid);
        if let Some(m) = &ev.model {
            t.root.text("gen_ai.request.model", m.clone());
        }
        let at = env.recorded_at_us;
        match &ev.canonical {
            Canonical::ToolPre { tool, input } => {
                t.begin_call(sid, env, ev, tool, input.as_ref(), content)
            }
            Canonical::ToolPost {
                tool,
                input,
                response,
            } => {
                let result = response.as_ref().map(|r| match r {
                    serde_json::Value::String(s) => s.clone(),
                    v => v.to_string(),
                });
                t.end_call(sid, env, ev, tool, input.as_ref(), result, None, content);
            }
            Canonical::ToolFailure { tool, input, error } => {
                let error = Some(error.clone());
                t.end_call(sid, env, ev, tool, input.as_ref(), None, error, content);
            }
            Canonical::SubagentStart {
                agent_id,
                agent_type,
            } => t.subagent_start(sid, env, agent_id, agent_type.as_deref()),
            Canonical::SubagentStop {
                agent_id,
                agent_type,
                last_message,
                ..
            } => {
                let i = t.subagent_start_of(sid, env, agent_id, agent_type.as_deref());
                let span = &mut t.done[i];
                span.end_us = at;
                if let (true, Some(m)) = (content, last_message) {
                    span.text("output.value", clip(m));
                }
            }
            Canonical::Stop { last_message, .. } => {
                t.ending = Some(env.seq);
                if let (true, Some(m)) = (content, last_message) {
                    t.answer(m);
                }
            }
            Canonical::StopFailure { error } => {
                t.ending = Some(env.seq);
                t.root.error = Some(error.clone());
            }
            Canonical::SessionEnd { reason } => {
                t.ending = Some(env.seq);
                t.root
                    .text("hookjournal.session.end_reason", reason.clone());
            }
            Canonical::PreCompact { trigger, .. }
                if !compaction_facts.before_fires_without_compaction =>
            {
                t.root.events.push(SpanEvent {
                    at_us: at,
                    name: "hookjournal.compaction".into(),
                    attrs: vec![("hookjournal.trigger".into(), Attr::Str(trigger.clone()))],
                });
            }
            _ => {}
        }
        if let Some(u) = &ev.usage {
            t.host_usage(sid, env, ev, u);
        }
    }

    /// A span event on the session's open turn (a turn is begun for it when none is open).
    fn mark(&mut self, env: &Envelope, sid: &str, name: &str, attrs: Vec<(String, Attr)>) {
        let t = self.turn(env, sid);
        t.root.events.push(SpanEvent {
            at_us: env.recorded_at_us,
            name: name.to_string(),
            attrs,
        });
    }

    /// What the hook answered: a blocked stop (the agent goes on: the turn is not over) or a
    /// stopped agent are span events.
    fn answer(&mut self, env: &Envelope, sid: &str, cause: Seq) {
        let Some(r) = derived::parse::<ResponseEmitted>(&env.payload) else {
            return;
        };
        let (name, goes_on) = match Answer::from_recorded(&r.output) {
            Some(Answer::BlockStop { .. }) => ("hookjournal.stop_blocked", true),
            Some(Answer::StopAgent) => ("hookjournal.agent_stopped", false),
            _ => {
                if let Some(t) = self.open.get_mut(sid) {
                    t.touch(env);
                }
                return;
            }
        };
        let t = self.turn(env, sid);
        if goes_on && t.ending == Some(cause) {
            t.ending = None;
        }
        t.root.events.push(SpanEvent {
            at_us: env.recorded_at_us,
            name: name.into(),
            attrs: vec![("hookjournal.cause".into(), Attr::Int(cause as i64))],
        });
    }

    /// Closes a turn: calls with no after end where it ends, marked so; the root's figures.
    fn finish(&mut self, sid: String, mut t: Open, unfinished: bool) {
        if !t.worth {
            return;
        }
        let end = t.root.end_us;
        for mut c in std::mem::take(&mut t.calls) {
            c.span.end_us = end;
            c.span.set("hookjournal.tool.unfinished", Attr::Bool(true));
            t.done.push(c.span);
        }
        for (i, running) in t.agents.values() {
            if *running {
                let span = &mut t.done[*i];
                span.end_us = end;
                span.set("hookjournal.agent.unfinished", Attr::Bool(true));
            }
        }
        if unfinished {
            t.root.set("hookjournal.turn.unfinished", Attr::Bool(true));
        }
        // The root holds its children (a response's time is the transcript's, a hook's the
        // journal's: clocks a little apart).
        for c in &t.done {
            t.root.start_us = t.root.start_us.min(c.start_us);
            t.root.end_us = t.root.end_us.max(c.end_us);
        }
        t.root
            .set("hookjournal.first_seq", Attr::Int(t.first_seq as i64));
        t.root
            .set("hookjournal.last_seq", Attr::Int(t.last_seq as i64));
        let mut spans = vec![t.root.clone()];
        spans.extend(t.done);
        self.finished.push(Turn {
            session: sid,
            host: t.host,
            key: t.root.key,
            first_seq: t.first_seq,
            last_seq: t.last_seq,
            spans,
        });
    }
}

impl Open {
    fn begin(sid: &str, host: &str, env: &Envelope) -> Open {
        let mut root = Span::new(
            format!("turn:{sid}:{}", env.seq),
            None,
            SpanKind::Agent,
            format!("invoke_agent {host}"),
            env.recorded_at_us,
        );
        root.text("gen_ai.agent.name", host);
        root.text("gen_ai.conversation.id", sid);
        root.text("gen_ai.provider.name", provider(None, host));
        Open {
            root,
            host: host.to_string(),
            first_seq: env.seq,
            last_seq: env.seq,
            prompted: false,
            ending: None,
            calls: Vec::new(),
            done: Vec::new(),
            chats: BTreeMap::new(),
            agents: BTreeMap::new(),
            worth: false,
        }
    }

    fn touch(&mut self, env: &Envelope) {
        self.last_seq = env.seq;
        self.root.end_us = self.root.end_us.max(env.recorded_at_us);
    }

    /// The span a call or response of `agent` belongs under: its subagent's, else the root.
    fn parent_for(&self, agent: Option<&str>) -> String {
        agent
            .and_then(|a| self.agents.get(a))
            .map(|&(i, _)| self.done[i].key.clone())
            .unwrap_or_else(|| self.root.key.clone())
    }

    /// The agent's final answer, as the root's output.
    fn answer(&mut self, m: &str) {
        self.root.text("output.value", clip(m));
        self.root.text(
            "gen_ai.output.messages",
            serde_json::json!([{"role": "assistant", "parts": [{"type": "text", "content": clip(m)}], "finish_reason": "stop"}])
                .to_string(),
        );
    }

    /// The span of the call `env` begins (or ends, when the journal lacks its start), under its
    /// subagent's span or the root.
    fn tool_span(
        &self,
        sid: &str,
        env: &Envelope,
        ev: &HookEvent,
        tool: &str,
        input: Option<&serde_json::Value>,
        content: bool,
    ) -> Span {
        let mut span = Span::new(
            format!("tool:{sid}:{}", env.seq),
            Some(self.parent_for(ev.agent_id.as_deref())),
            SpanKind::Tool,
            format!("execute_tool {tool}"),
            env.recorded_at_us,
        );
        span.text("gen_ai.tool.name", tool);
        if let Some(id) = &ev.tool_call_id {
            span.text("gen_ai.tool.call.id", id.clone());
        }
        if let (true, Some(i)) = (content, input) {
            span.text("gen_ai.tool.call.arguments", clip(&i.to_string()));
        }
        span
    }

    /// A tool call begins: a span, open until its after.
    fn begin_call(
        &mut self,
        sid: &str,
        env: &Envelope,
        ev: &HookEvent,
        tool: &str,
        input: Option<&serde_json::Value>,
        content: bool,
    ) {
        let agent = ev.agent_id.clone();
        let span = self.tool_span(sid, env, ev, tool, input, content);
        self.calls.push(OpenCall {
            id: ev.tool_call_id.clone(),
            tool: tool.to_string(),
            agent,
            span,
        });
        self.worth = true;
    }

    /// A subagent starts: a child agent span of the root.
    fn subagent_start(&mut self, sid: &str, env: &Envelope, id: &str, agent_type: Option<&str>) {
        let name = agent_type.unwrap_or("subagent");
        let mut span = Span::new(
            format!("agent:{sid}:{}", env.seq),
            Some(self.root.key.clone()),
            SpanKind::Agent,
            format!("invoke_agent {name}"),
            env.recorded_at_us,
        );
        span.text("gen_ai.agent.name", name);
        span.text("gen_ai.agent.id", id);
        span.text("gen_ai.conversation.id", sid);
        self.done.push(span);
        self.agents
            .insert(id.to_string(), (self.done.len() - 1, true));
        self.worth = true;
    }

    /// The index of the span of the subagent a stop ends (one begun now when the journal holds
    /// no start), no longer running.
    fn subagent_start_of(
        &mut self,
        sid: &str,
        env: &Envelope,
        id: &str,
        agent_type: Option<&str>,
    ) -> usize {
        if !self.agents.contains_key(id) {
            self.subagent_start(sid, env, id, agent_type);
        }
        let entry = self.agents.get_mut(id).expect("just begun");
        entry.1 = false;
        entry.0
    }

    /// A model call the host reported in the hook (OpenClaw, pi, OpenCode): a chat span.
    fn host_usage(
        &mut self,
        sid: &str,
        env: &Envelope,
        ev: &HookEvent,
        u: &crate::hook_event::HostUsage,
    ) {
        let usage = Usage {
            input_tokens: u.input,
            output_tokens: u.output,
            cache_read: u.cache_read,
            cache_write_5m: u.cache_write,
            cache_write_1h: 0,
        };
        let key = match (&u.run_id, u.once_per_run) {
            (Some(run), true) => format!("run:{run}"),
            _ => format!("seq:{}", env.seq),
        };
        let model = ev.model.clone().unwrap_or_default();
        let at = env.recorded_at_us;
        let agent = ev.agent_id.as_deref();
        self.chat(sid, &key, agent, &model, &usage, None, None, at);
    }

    /// Ends the call a tool event finishes: the open one with its id, else the oldest open one
    /// of the same tool and agent; one whose start the journal lacks is a span of its own.
    #[allow(clippy::too_many_arguments)]
    fn end_call(
        &mut self,
        sid: &str,
        env: &Envelope,
        ev: &HookEvent,
        tool: &str,
        input: Option<&serde_json::Value>,
        result: Option<String>,
        error: Option<String>,
        content: bool,
    ) {
        let at = env.recorded_at_us;
        let agent = ev.agent_id.as_deref();
        let found = match &ev.tool_call_id {
            Some(id) => self.calls.iter().position(|c| c.id.as_ref() == Some(id)),
            None => None,
        }
        .or_else(|| {
            self.calls
                .iter()
                .position(|c| c.tool == tool && c.agent.as_deref() == agent)
        });
        let mut span = match found {
            Some(i) => self.calls.remove(i).span,
            None => self.tool_span(sid, env, ev, tool, input, content),
        };
        span.end_us = at.max(span.start_us);
        if let (true, Some(r)) = (content, result) {
            span.text("gen_ai.tool.call.result", clip(&r));
        }
        if let Some(e) = error {
            span.text("error.type", "tool_error");
            span.error = Some(if content {
                clip(&e)
            } else {
                "the tool call failed".into()
            });
        }
        self.done.push(span);
        self.worth = true;
    }

    /// A model response: a span of its own, or the same response read larger (its figures
    /// replaced, as the cost summary replaces them).
    #[allow(clippy::too_many_arguments)]
    fn chat(
        &mut self,
        sid: &str,
        key: &str,
        agent: Option<&str>,
        model: &str,
        usage: &Usage,
        cost: Option<f64>,
        response: Option<&str>,
        at: i64,
    ) {
        let i = match self.chats.get(key) {
            Some(&i) => i,
            None => {
                // It began after whatever ended last before it in this turn.
                let start = self
                    .done
                    .iter()
                    .map(|s| s.end_us)
                    .filter(|&e| e <= at)
                    .max()
                    .unwrap_or(self.root.start_us)
                    .min(at);
                let name = if model.is_empty() {
                    "chat".to_string()
                } else {
                    format!("chat {model}")
                };
                let mut span = Span::new(
                    format!("chat:{sid}:{key}"),
                    Some(self.parent_for(agent)),
                    SpanKind::Chat,
                    name,
                    start,
                );
                span.end_us = at.max(start);
                self.done.push(span);
                self.chats.insert(key.to_string(), self.done.len() - 1);
                self.done.len() - 1
            }
        };
        let span = &mut self.done[i];
        if !model.is_empty() {
            span.text("gen_ai.request.model", model);
            span.text("gen_ai.response.model", model);
        }
        span.text("gen_ai.provider.name", provider(Some(model), &self.host));
        if let Some(r) = response {
            span.text("gen_ai.response.id", r);
        }
        let n = |v: u64| Attr::Int(v as i64);
        // The convention's input tokens include cache reads and writes.
        span.set(
            "gen_ai.usage.input_tokens",
            n(usage.input_tokens + usage.cache_read + usage.cache_write()),
        );
        span.set("gen_ai.usage.output_tokens", n(usage.output_tokens));
        span.set("gen_ai.usage.cache_read.input_tokens", n(usage.cache_read));
        span.set(
            "gen_ai.usage.cache_creation.input_tokens",
            n(usage.cache_write()),
        );
        if let Some(usd) = cost {
            span.set("hookjournal.cost_usd", Attr::Double(usd));
        }
        if !model.is_empty() && self.root.attr("gen_ai.request.model").is_none() {
            self.root.text("gen_ai.request.model", model);
        }
        self.worth = true;
    }
}
