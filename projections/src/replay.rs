//! The replay engine: the log folded group by group (a hook event and the events it caused), with
//! every recorded answer recomputed from the replayed state and compared (`replay --verify`).
//!
//! The fold is faithful to time: a rewind affects the state only from the moment it was recorded,
//! exactly as the hook saw it, so recomputed answers are comparable with what was printed. Pure:
//! the log is read through `Log`, which the caller implements over its storage.

use crate::config::PolicyConfig;
use crate::derived::{self, ResponseEmitted};
use crate::event;
use crate::fold::{self, Full, Rewinds};
use crate::kind::{Kind, KindOf};
use crate::policy;
use journal::{Envelope, Seq};

/// The log a replay reads, in seq order.
pub trait Log {
    /// What reading the log can fail with.
    type Error;
    /// Calls `f` with every event, in order.
    fn each(&self, f: &mut dyn FnMut(Envelope)) -> Result<(), Self::Error>;
    /// Calls `f` with every event whose seq is in `from..=to`, in order.
    fn each_in(&self, from: Seq, to: Seq, f: &mut dyn FnMut(Envelope)) -> Result<(), Self::Error>;
}

/// A log held in memory (tests, and journals small enough to hold).
impl Log for [Envelope] {
    type Error = std::convert::Infallible;

    fn each(&self, f: &mut dyn FnMut(Envelope)) -> Result<(), Self::Error> {
        self.iter().cloned().for_each(f);
        Ok(())
    }

    fn each_in(&self, from: Seq, to: Seq, f: &mut dyn FnMut(Envelope)) -> Result<(), Self::Error> {
        self.iter()
            .filter(|e| e.seq >= from && e.seq <= to)
            .cloned()
            .for_each(f);
        Ok(())
    }
}

/// Pass one of a full replay: the log's rewinds, so pass two can skip what they hide.
pub fn collect_rewinds<L: Log + ?Sized>(log: &L) -> Result<Rewinds, L::Error> {
    let mut r = Rewinds::default();
    log.each(&mut |env| fold::collect_rewind(&mut r, &env))?;
    Ok(r)
}

/// Pass two: every event folded, skipping what `rewinds` hide. `progress` hears the count every
/// 65,536 events and at the end.
pub fn full_replay<L: Log + ?Sized>(
    log: &L,
    rewinds: Rewinds,
    mut progress: impl FnMut(u64),
) -> Result<Full, L::Error> {
    let mut full = Full::with_rewinds(rewinds);
    let mut n = 0u64;
    log.each(&mut |env| {
        full.apply(&env);
        n += 1;
        if n.is_multiple_of(65_536) {
            progress(n);
        }
    })?;
    progress(n);
    Ok(full)
}

/// Whether an event records a decision (the policy's events and the answer itself).
pub fn is_decision(k: &Kind) -> bool {
    matches!(
        k,
        Kind::ReminderIssued { .. }
            | Kind::TaskReleased { .. }
            | Kind::Checkpoint { .. }
            | Kind::ResponseEmitted { .. }
    )
}

/// A recorded answer that the replayed state does not reproduce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The hook event whose answer differs.
    pub seq: Seq,
    /// What differs, in one line.
    pub what: String,
}

/// A hook event and the events it caused (they are contiguous: one atomic batch).
struct Group {
    events: Vec<Envelope>,
}

/// Folds a log group by group. `on_event` sees each event with the state before and after it;
/// with `verify`, answers are recomputed and differences collected.
pub struct Replayer<'a, L: Log + ?Sized> {
    log: &'a L,
    /// The state folded so far.
    pub full: Full,
    seen_rewinds: Vec<(String, Seq, Seq)>,
    verify: Option<&'a PolicyConfig>,
    /// The policy settings of the latest recorded answer: the best evidence of the settings in
    /// force for events that were answered with nothing (which record none).
    last_policy: Option<PolicyConfig>,
    /// The differences found (with `verify`).
    pub differences: Vec<Difference>,
    /// How many answers were recomputed.
    pub verified: u64,
}

/// What `on_event` is given: the event, the state before it and the state after it.
pub type OnEvent<'f> = dyn FnMut(&Envelope, &Full, &Full) + 'f;

impl<'a, L: Log + ?Sized> Replayer<'a, L> {
    /// A replay of `log`; with `verify`, the settings answers are recomputed under when no
    /// recorded answer says otherwise.
    pub fn new(log: &'a L, verify: Option<&'a PolicyConfig>) -> Self {
        Replayer {
            log,
            full: Full::default(),
            seen_rewinds: Vec::new(),
            verify,
            last_policy: None,
            differences: Vec::new(),
            verified: 0,
        }
    }

    /// Folds one event. A rewind refolds the log up to it with the rewinds known so far.
    fn apply(&mut self, env: &Envelope, on_event: &mut OnEvent) -> Result<(), L::Error> {
        let before = self.full.clone();
        if let Kind::Rewound { session, to_seq } = &env.kind() {
            self.seen_rewinds.push((session.clone(), *to_seq, env.seq));
            let mut rebuilt = Full::with_rewinds(Rewinds::from_list(&self.seen_rewinds));
            self.log.each_in(1, env.seq, &mut |e| rebuilt.apply(&e))?;
            self.full = rebuilt;
        } else {
            self.full.apply(env);
        }
        on_event(env, &before, &self.full);
        Ok(())
    }

    /// Folds a group: the hook event and what it read first, then (with `verify`, after
    /// recomputing the answer from that state) its decision events.
    fn group(&mut self, g: Group, on_event: &mut OnEvent) -> Result<(), L::Error> {
        let hook = &g.events[0];
        let parsed = match &hook.kind() {
            Kind::Hook { .. } if !self.full.rewinds.hides(hook) => event::from_envelope(hook),
            _ => None,
        };
        let split = g
            .events
            .iter()
            .position(|e| is_decision(&e.kind()))
            .unwrap_or(g.events.len());
        for e in &g.events[..split] {
            self.apply(e, on_event)?;
        }
        if let (Some(cfg), Some(ev)) = (self.verify, parsed.filter(|p| p.session_id.is_some())) {
            self.verify_answer(hook, &ev, &g.events[split..], cfg);
        }
        for e in &g.events[split..] {
            self.apply(e, on_event)?;
        }
        Ok(())
    }

    /// Recomputes the answer to `hook` and compares it (and its decision events) with what was
    /// recorded.
    fn verify_answer(
        &mut self,
        hook: &Envelope,
        ev: &event::HookEvent,
        decisions: &[Envelope],
        cfg: &'a PolicyConfig,
    ) {
        let recorded_resp = decisions
            .iter()
            .find(|e| matches!(e.kind(), Kind::ResponseEmitted { .. }))
            .and_then(|e| derived::parse::<ResponseEmitted>(&e.payload));
        if let Some(r) = &recorded_resp {
            self.last_policy = Some(r.policy.clone());
        }
        let cfg = self.last_policy.as_ref().unwrap_or(cfg);
        // A spooled event was answered without the state; its loop release came at ingestion.
        let d = if hook.spooled {
            policy::decide_spooled(&self.full.state, hook, ev, cfg)
        } else {
            policy::decide(&self.full.state, hook, ev, cfg)
        };
        self.verified += 1;
        let recorded_out = recorded_resp
            .as_ref()
            .map(|r| r.output.clone())
            .unwrap_or_default();
        if recorded_out != d.output_text() {
            self.differences.push(Difference {
                seq: hook.seq,
                what: format!(
                    "answer differs: recorded {:?}, recomputed {:?}",
                    clip(&recorded_out),
                    clip(&d.output_text())
                ),
            });
        }
        let recorded: Vec<(Kind, Vec<u8>)> = decisions
            .iter()
            .filter(|e| !matches!(e.kind(), Kind::ResponseEmitted { .. }))
            .map(|e| (e.kind().clone(), e.payload.clone()))
            .collect();
        let recomputed: Vec<(Kind, Vec<u8>)> =
            d.events.iter().map(|x| x.kind_and_body(hook.seq)).collect();
        if recorded != recomputed {
            let names = |v: &[(Kind, Vec<u8>)]| {
                v.iter()
                    .map(|(k, _)| k.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            self.differences.push(Difference {
                seq: hook.seq,
                what: format!(
                    "decision events differ: recorded [{}], recomputed [{}]",
                    names(&recorded),
                    names(&recomputed)
                ),
            });
        }
    }

    /// Runs the whole log. An error folding a group (a rewind's refold) does not stop the
    /// replay; the last one is returned at the end.
    pub fn run(
        &mut self,
        mut on_event: impl FnMut(&Envelope, &Full, &Full),
    ) -> Result<(), L::Error> {
        let mut current: Option<Group> = None;
        let log = self.log;
        let mut err = None;
        log.each(&mut |e| {
            let belongs = current
                .as_ref()
                .is_some_and(|g| e.kind().cause() == Some(g.events[0].seq));
            if belongs {
                current.as_mut().expect("checked").events.push(e);
                return;
            }
            if let Some(g) = current.take() {
                if let Err(x) = self.group(g, &mut on_event) {
                    err = Some(x);
                }
            }
            current = Some(Group { events: vec![e] });
        })?;
        if let Some(g) = current.take() {
            self.group(g, &mut on_event)?;
        }
        if let Some(e) = err {
            return Err(e);
        }
        Ok(())
    }
}

fn clip(s: &str) -> String {
    if s.chars().count() > 160 {
        format!("{}…", s.chars().take(160).collect::<String>())
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    const S: &str = "s1";

    fn hook(event: &str, fields: &str) -> String {
        format!(r#"{{"hook_event_name":"{event}","session_id":"{S}","cwd":"/p",{fields}}}"#)
    }

    /// A session that was answered: a restore, a reminder, a blocked Stop.
    fn answered() -> Scenario {
        let cfg = PolicyConfig {
            reminder_threshold: 2,
            ..PolicyConfig::default()
        };
        Scenario::with(cfg)
            .given_task_command(derived::TaskOp::Add, "T1", Some("Ship"), None)
            .given_hooks(&[
                &hook("SessionStart", r#""source":"startup""#),
                &hook("UserPromptSubmit", r#""prompt":"go""#),
                &hook("UserPromptSubmit", r#""prompt":"on""#),
                // The reading is caused by an event that recorded no decision (in the hook, the
                // readings come before the decision events).
                &hook("PreToolUse", r#""tool_name":"Read""#),
            ])
            .given_context(S, 192_000)
            .given_hook(&hook("Stop", r#""stop_hook_active":false"#))
    }

    #[test]
    fn recorded_answers_replay_without_a_difference() {
        let s = answered();
        let mut r = Replayer::new(s.log.as_slice(), Some(&s.cfg));
        let mut seen = 0;
        r.run(|_, _, _| seen += 1).unwrap();
        assert_eq!(seen, s.log.len());
        assert_eq!(r.differences, Vec::new());
        assert_eq!(r.verified, 5);
        assert_eq!(r.full.state, s.state);
    }

    #[test]
    fn an_answer_the_state_does_not_give_is_a_difference() {
        let mut s = answered();
        let blocked = s
            .log
            .iter_mut()
            .rev()
            .find(|e| matches!(e.kind(), Kind::ResponseEmitted { .. }))
            .unwrap();
        let mut r: ResponseEmitted = derived::parse(&blocked.payload).unwrap();
        r.output = r#"{"decision":"block","reason":"something else"}"#.into();
        blocked.payload = derived::body(&r);
        let cause = blocked.kind().cause().unwrap();
        let mut rep = Replayer::new(s.log.as_slice(), Some(&s.cfg));
        rep.run(|_, _, _| {}).unwrap();
        assert_eq!(rep.differences.len(), 1, "{:?}", rep.differences);
        assert_eq!(rep.differences[0].seq, cause);
        assert!(rep.differences[0].what.starts_with("answer differs"));
    }
}
