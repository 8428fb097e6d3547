//! A given/when/then harness over the pure core, in the shape of cqrs-es's `TestFramework`:
//!
//! ```
//! use projections::scenario::Scenario;
//! Scenario::default()
//!     .given_hook(r#"{"hook_event_name":"SessionStart","session_id":"s1","source":"startup"}"#)
//!     .when_hook(r#"{"hook_event_name":"UserPromptSubmit","session_id":"s1","prompt":"go"}"#)
//!     .then_no_answer();
//! ```
//!
//! Each hook event goes through what the hook does under the journal's lock, minus the I/O: the
//! event is folded, the policy decides, and the decision's events (and the answer, as
//! `ResponseEmitted`) are folded in the same batch. Outside-world readings (transcripts, git) are
//! given as the derived events the hook would have recorded.

use crate::config::PolicyConfig;
use crate::derived::{self, ContextObserved, ResponseEmitted, TaskCommand, TaskOp};
use crate::event::{self, HookEvent};
use crate::fold::State;
use crate::host::Host;
use crate::kind::{Kind, KindOf};
use crate::policy::{self, Answer, Decision, DecisionEvent};
use crate::tasks::TaskRef;
use journal::{Envelope, Seq, ZERO_HASH};

/// A journal in memory: the state, the log, a clock and the settings in force.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The state after every event so far.
    pub state: State,
    /// Every event so far.
    pub log: Vec<Envelope>,
    /// The policy settings in force.
    pub cfg: PolicyConfig,
    /// The time of the next event (µs); each event advances it by `step_us`.
    pub now_us: i64,
    /// How far each event moves the clock (µs).
    pub step_us: i64,
    /// The looping agent's id (the agent-id environment variable) for the next hook events.
    pub agent: Option<String>,
    /// The host of the next hook events.
    pub host: Host,
    /// What the next hook event's read of the session file shows (recorded as caused by it,
    /// before the policy decides, as the hook does).
    pub next_reading: Option<ContextObserved>,
    /// The event name the hook's command line gives the next payload (`--event`: Copilot CLI's
    /// camelCase hooks name none in the payload), as the fold reads it from the stored kind.
    pub next_name: Option<String>,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario::with(PolicyConfig::default())
    }
}

/// What one `when` produced: the decision, the events it recorded, and the state after them.
#[derive(Debug)]
pub struct Then {
    /// The decision.
    pub decision: Decision,
    /// The events the decision recorded (decision events and `ResponseEmitted`).
    pub events: Vec<Envelope>,
    /// The scenario after them, to go on with.
    pub scenario: Scenario,
}

impl Scenario {
    /// An empty journal under `cfg`, at a fixed time, on Claude Code.
    pub fn with(cfg: PolicyConfig) -> Self {
        Scenario {
            state: State::default(),
            log: Vec::new(),
            cfg,
            now_us: 1_780_000_000_000_000,
            step_us: 1_000_000,
            agent: None,
            host: Host::Claude,
            next_reading: None,
            next_name: None,
        }
    }

    fn next_seq(&self) -> Seq {
        self.log.len() as Seq + 1
    }

    fn envelope(&mut self, kind: Kind, session: Option<String>, payload: Vec<u8>) -> Envelope {
        let env = Envelope {
            seq: self.next_seq(),
            recorded_at_us: self.now_us,
            host: self.host.to_string(),
            kind: kind.into(),
            session_id: session,
            agent_id: self.agent.clone(),
            payload,
            truncated: None,
            spooled: false,
            prev: ZERO_HASH,
            hash: ZERO_HASH,
        };
        self.now_us += self.step_us;
        env
    }

    fn record(&mut self, env: Envelope) -> Envelope {
        self.state.apply(&env);
        self.log.push(env.clone());
        env
    }

    /// Sets the looping agent (as `RALPH_AGENT_ID` would) for the following hook events.
    pub fn agent(mut self, agent: Option<&str>) -> Self {
        self.agent = agent.map(str::to_string);
        self
    }

    /// The host of the following hook events.
    pub fn host(mut self, host: Host) -> Self {
        self.host = host;
        self
    }

    /// The next hook event's session-file read shows `compressions` (acknowledgement ids, see
    /// `gemini_chat`) and then a context of `tokens`.
    pub fn reading(mut self, session: &str, compressions: &[&str], tokens: Option<u64>) -> Self {
        self.next_reading = Some(ContextObserved {
            path: format!("/chats/{session}.jsonl"),
            offset: self.log.len() as u64 + 1,
            tokens,
            model: None,
            compressions: compressions.iter().map(|c| c.to_string()).collect(),
            window: None,
        });
        self
    }

    /// Lets `secs` pass before the next event.
    pub fn after_secs(mut self, secs: i64) -> Self {
        self.now_us += secs * 1_000_000;
        self
    }

    fn parse(&mut self, payload: &str) -> (Kind, HookEvent) {
        let name = self.next_name.take();
        let ev = event::parse_named(&self.host, payload.as_bytes(), name.as_deref())
            .unwrap_or_else(|| panic!("not a hook payload: {payload}"));
        (
            Kind::Hook {
                name: ev.name.clone(),
            },
            ev,
        )
    }

    /// One hook invocation answered as the hook answers it; returns what was decided.
    fn hook(&mut self, payload: &str, spooled: bool) -> (Decision, Vec<Envelope>) {
        let (kind, ev) = self.parse(payload);
        // As ingestion does: an event that names only its session key joins that key's session.
        let session = ev.session_id.clone().or_else(|| {
            crate::hosts::openclaw::wire::resolve_session(
                &self.state.global.session_keys,
                self.host.as_str(),
                payload.as_bytes(),
            )
        });
        let mut env = self.envelope(kind, session, payload.as_bytes().to_vec());
        env.spooled = spooled;
        let env = self.record(env);
        if let Some(reading) = self.next_reading.take() {
            let x = self.envelope(
                Kind::ContextObserved { cause: env.seq },
                env.session_id.clone(),
                derived::body(&reading),
            );
            self.record(x);
        }
        let decide = |st: &State| {
            if spooled {
                policy::decide_spooled(st, &env, &ev, &self.cfg)
            } else {
                policy::decide(st, &env, &ev, &self.cfg)
            }
        };
        let d = decide(&self.state);
        // A hook loads the journal-wide tasks only when `reads_tasks` says the answer can read
        // them: without them, every other answer must be the same.
        if !policy::reads_tasks(&self.state, &env, &ev, &self.cfg) {
            let mut without = self.state.clone();
            without.tasks = Default::default();
            assert_eq!(
                decide(&without),
                d,
                "`policy::reads_tasks` said {} reads no journal-wide task, but its answer does",
                ev.name
            );
        }
        let mut recorded = Vec::new();
        for e in &d.events {
            let (kind, body) = e.kind_and_body(env.seq);
            let x = self.envelope(kind, env.session_id.clone(), body);
            recorded.push(self.record(x));
        }
        if d.answer.is_some() || d.stderr.is_some() {
            let body = derived::body(&ResponseEmitted {
                output: d.output_text(),
                stderr: d.stderr.clone(),
                policy: self.cfg.clone(),
            });
            let x = self.envelope(
                Kind::ResponseEmitted { cause: env.seq },
                env.session_id.clone(),
                body,
            );
            recorded.push(self.record(x));
        }
        (d, recorded)
    }

    /// Names the next hook payload's event as its command line does (`--event NAME`).
    pub fn named(mut self, name: &str) -> Self {
        self.next_name = Some(name.to_string());
        self
    }

    /// A hook event that happened before (answered as the hook would have answered it).
    pub fn given_hook(mut self, payload: &str) -> Self {
        self.hook(payload, false);
        self
    }

    /// Several hook events, in order.
    pub fn given_hooks(mut self, payloads: &[&str]) -> Self {
        for p in payloads {
            self.hook(p, false);
        }
        self
    }

    /// A context reading of `session` (what a transcript read at the last hook event showed).
    pub fn given_context(mut self, session: &str, tokens: u64) -> Self {
        let cause = self
            .log
            .iter()
            .rev()
            .find(|e| matches!(e.kind(), Kind::Hook { .. }))
            .map(|e| e.seq)
            .unwrap_or(0);
        let body = derived::body(&ContextObserved {
            path: format!("/transcripts/{session}.jsonl"),
            offset: tokens,
            tokens: Some(tokens),
            model: None,
            compressions: Vec::new(),
            window: None,
        });
        let env = self.envelope(
            Kind::ContextObserved { cause },
            Some(session.to_string()),
            body,
        );
        self.record(env);
        self
    }

    /// One response's usage read from `session`'s transcript (message `msg`, on `day`).
    pub fn given_usage(mut self, session: &str, msg: &str, day: &str, input_tokens: u64) -> Self {
        let body = derived::body(&derived::UsageObserved {
            path: format!("/transcripts/{session}.jsonl"),
            offset: self.log.len() as u64,
            agent_id: None,
            record: crate::transcript::UsageRecord {
                message_id: msg.to_string(),
                request_id: format!("req-{msg}"),
                model: "claude-sonnet-4-5".into(),
                timestamp: format!("{day}T10:00:00Z"),
                usage: crate::transcript::Usage {
                    input_tokens,
                    output_tokens: 10,
                    ..Default::default()
                },
                sidechain: false,
            },
        });
        let cause = self.log.len() as Seq;
        let env = self.envelope(
            Kind::UsageObserved { cause },
            Some(session.to_string()),
            body,
        );
        self.record(env);
        self
    }

    /// `hookjournal rewind SESSION --to SEQ`, folded as the partitions that fold rewinds
    /// themselves (the cost summary, the notification log, the global record) see it.
    pub fn given_rewind(mut self, session: &str, to_seq: Seq) -> Self {
        let env = self.envelope(
            Kind::Rewound {
                session: session.to_string(),
                to_seq,
            },
            Some(session.to_string()),
            b"{}".to_vec(),
        );
        self.record(env);
        self
    }

    /// A task command from the CLI (`hookjournal tasks …`), by `agent` when given.
    pub fn given_task_command(
        mut self,
        op: TaskOp,
        id: &str,
        subject: Option<&str>,
        agent: Option<&str>,
    ) -> Self {
        let c = TaskCommand {
            op,
            task: TaskRef::global(id),
            subject: subject.map(str::to_string),
            description: None,
            agent: agent.map(str::to_string),
            reason: None,
        };
        let saved = self.agent.take();
        self.agent = agent.map(str::to_string);
        let env = self.envelope(Kind::TaskCommand, None, derived::body(&c));
        self.agent = saved;
        self.record(env);
        self
    }

    /// The hook event under test.
    pub fn when_hook(mut self, payload: &str) -> Then {
        let (decision, events) = self.hook(payload, false);
        Then {
            decision,
            events,
            scenario: self,
        }
    }

    /// A hook event that could not take the journal's lock: `decision.answer` is what its hook
    /// answered without the state, `events` what its ingestion from the spool recorded.
    pub fn when_spooled(mut self, payload: &str) -> Then {
        let (_, ev) = self.parse(payload);
        let answered = policy::loop_answer(self.agent.as_deref(), &ev, &self.cfg);
        let (mut decision, events) = self.hook(payload, true);
        decision.answer = answered;
        Then {
            decision,
            events,
            scenario: self,
        }
    }
}

impl Then {
    /// The answer printed, as JSON.
    pub fn then_answer(self, expected: serde_json::Value) -> Self {
        assert_eq!(self.decision.output(), Some(expected), "the answer");
        self
    }

    /// The `additionalContext` of the answer.
    pub fn context(&self) -> String {
        match &self.decision.answer {
            Some(Answer::Context { text, .. }) => text.clone(),
            other => panic!("no additionalContext in {other:?}"),
        }
    }

    /// The answer's `additionalContext` is exactly `expected`.
    pub fn then_context(self, expected: &str) -> Self {
        assert_eq!(self.context(), expected, "the injected context");
        self
    }

    /// Nothing was answered.
    pub fn then_no_answer(self) -> Self {
        assert_eq!(self.decision.answer, None, "no answer");
        self
    }

    /// The stderr line is exactly `expected`.
    pub fn then_stderr(self, expected: Option<&str>) -> Self {
        assert_eq!(self.decision.stderr.as_deref(), expected, "the stderr line");
        self
    }

    /// The decision events, as (kind name, JSON body) pairs; `ResponseEmitted` left out.
    pub fn then_events(self, expected: &[(&str, serde_json::Value)]) -> Self {
        let got: Vec<(String, serde_json::Value)> = self
            .decision
            .events
            .iter()
            .map(|e| {
                let (kind, body) = e.kind_and_body(0);
                (
                    kind.name().to_string(),
                    serde_json::from_slice(&body).expect("decision bodies are JSON"),
                )
            })
            .collect();
        let expected: Vec<(String, serde_json::Value)> = expected
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        assert_eq!(got, expected, "the decision events");
        self
    }

    /// The kinds of the decision events alone.
    pub fn then_event_kinds(self, expected: &[&str]) -> Self {
        let got: Vec<&str> = self
            .decision
            .events
            .iter()
            .map(|e| match e {
                DecisionEvent::ReminderIssued(_) => "ReminderIssued",
                DecisionEvent::TaskReleased(_) => "TaskReleased",
                DecisionEvent::Checkpoint(_) => "Checkpoint",
            })
            .collect();
        assert_eq!(got, expected, "the decision events");
        self
    }

    /// Checks the state after the decision's events were folded.
    pub fn then_state(self, check: impl FnOnce(&State)) -> Self {
        check(&self.scenario.state);
        self
    }

    /// Goes on with the same journal.
    pub fn and(self) -> Scenario {
        self.scenario
    }
}
