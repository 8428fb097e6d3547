//! Sessions as GenAI traces, given/when/then: a log folded by `projections::traces` gives one
//! trace per turn, a response per chat span with the convention's token counts, a tool span per
//! call paired on its id, a subagent's calls under its own span, and the same keys whenever the
//! same log is folded, from its start or from where an open turn began.

use projections::pricing::PricingTable;
use projections::scenario::Scenario;
use projections::traces::{Attr, Options, SpanKind, Traces, Turn};

const START: &str = r#"{"hook_event_name":"SessionStart","session_id":"s1","source":"startup"}"#;
const STOP: &str = r#"{"hook_event_name":"Stop","session_id":"s1","stop_hook_active":false,"last_assistant_message":"Done: the limiter is in."}"#;

fn prompt(text: &str) -> String {
    format!(r#"{{"hook_event_name":"UserPromptSubmit","session_id":"s1","prompt":"{text}"}}"#)
}

fn tool(event: &str, tool: &str, id: &str, agent: Option<&str>) -> String {
    let agent = agent
        .map(|a| format!(r#","agent_id":"{a}","agent_type":"Explore""#))
        .unwrap_or_default();
    format!(
        r#"{{"hook_event_name":"{event}","session_id":"s1","tool_name":"{tool}","tool_use_id":"{id}","tool_input":{{"command":"ls"}}{agent}}}"#
    )
}

/// Every turn the log gives, the open ones too.
fn turns(s: &Scenario, options: Options) -> Vec<Turn> {
    let mut t = Traces::new(options);
    let pricing = PricingTable::default();
    for env in &s.log {
        t.apply(env, &pricing);
    }
    let mut out = t.take_finished();
    out.extend(t.take_all());
    out
}

fn of_kind(t: &Turn, kind: SpanKind) -> Vec<&projections::traces::Span> {
    t.spans.iter().filter(|s| s.kind == kind).collect()
}

fn int(s: &projections::traces::Span, key: &str) -> i64 {
    match s.attr(key) {
        Some(Attr::Int(i)) => *i,
        other => panic!("{key}: {other:?} in {s:?}"),
    }
}

fn text<'a>(s: &'a projections::traces::Span, key: &str) -> Option<&'a str> {
    match s.attr(key) {
        Some(Attr::Str(v)) => Some(v),
        _ => None,
    }
}

/// A session's start, its prompt, a tool call, a response and its stop.
fn one_turn() -> Scenario {
    Scenario::default()
        .given_hook(START)
        .given_hook(&prompt("add a rate limiter"))
        .given_hook(&tool("PreToolUse", "Bash", "toolu_1", None))
        .given_hook(&tool("PostToolUse", "Bash", "toolu_1", None))
        .given_usage("s1", "msg_1", "2026-11-03", 1200)
        .given_hook(STOP)
}

/// Given one turn, when it is folded, then it is one trace rooted at `invoke_agent claude` with
/// the session as its conversation, the time before the prompt in it, one tool span with the
/// host's call id and one chat span whose input tokens are the response's.
#[test]
fn a_turn_is_one_trace_with_its_tool_call_and_its_response() {
    let all = turns(&one_turn(), Options::default());
    assert_eq!(all.len(), 1);
    let t = &all[0];
    assert_eq!((t.first_seq, t.key.as_str()), (1, "turn:s1:1"));
    let root = &t.spans[0];
    assert_eq!(root.name, "invoke_agent claude");
    assert_eq!(text(root, "gen_ai.operation.name"), Some("invoke_agent"));
    assert_eq!(text(root, "gen_ai.conversation.id"), Some("s1"));
    assert_eq!(text(root, "gen_ai.provider.name"), Some("anthropic"));
    let tools = of_kind(t, SpanKind::Tool);
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "execute_tool Bash");
    assert_eq!(text(tools[0], "gen_ai.tool.call.id"), Some("toolu_1"));
    assert_eq!(tools[0].parent.as_deref(), Some("turn:s1:1"));
    let chats = of_kind(t, SpanKind::Chat);
    assert_eq!(chats.len(), 1);
    assert_eq!(chats[0].name, "chat claude-sonnet-4-5");
    assert_eq!(int(chats[0], "gen_ai.usage.input_tokens"), 1200);
    assert_eq!(int(chats[0], "gen_ai.usage.output_tokens"), 10);
    assert_eq!(
        text(chats[0], "gen_ai.request.model"),
        Some("claude-sonnet-4-5")
    );
    // No content unless asked.
    assert_eq!(text(root, "input.value"), None);
}

/// Given content asked for, when the turn is folded, then its prompt and final answer are the
/// root's input and output, and the tool's input is its arguments.
#[test]
fn content_is_the_prompt_the_answer_and_the_tool_input_only_when_asked() {
    let all = turns(&one_turn(), Options { content: true });
    let root = &all[0].spans[0];
    assert_eq!(text(root, "input.value"), Some("add a rate limiter"));
    assert_eq!(text(root, "output.value"), Some("Done: the limiter is in."));
    let tools = of_kind(&all[0], SpanKind::Tool);
    assert_eq!(
        text(tools[0], "gen_ai.tool.call.arguments"),
        Some(r#"{"command":"ls"}"#)
    );
}

/// Given a second prompt before any stop, when the log is folded, then the first turn ends at
/// the second prompt and is handed out; the second stays open until it ends, and is handed out
/// marked unfinished only at the end of a log that will not grow.
#[test]
fn a_new_prompt_ends_the_turn_before_it_and_an_open_turn_waits() {
    let s = Scenario::default()
        .given_hook(&prompt("one"))
        .given_hook(&tool("PreToolUse", "Read", "toolu_1", None))
        .given_hook(&prompt("two"))
        .given_hook(&tool("PreToolUse", "Read", "toolu_2", None));
    let mut t = Traces::new(Options::default());
    let pricing = PricingTable::default();
    for env in &s.log {
        t.apply(env, &pricing);
    }
    let finished = t.take_finished();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].key, "turn:s1:1");
    // The call with no after ends where its turn ends, marked so.
    let call = of_kind(&finished[0], SpanKind::Tool)[0];
    assert_eq!(
        call.attr("hookjournal.tool.unfinished"),
        Some(&Attr::Bool(true))
    );
    assert_eq!(t.resume_from(), Some(3));
    let rest = t.take_all();
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].key, "turn:s1:3");
    assert_eq!(
        rest[0].spans[0].attr("hookjournal.turn.unfinished"),
        Some(&Attr::Bool(true))
    );
}

/// Given a subagent whose calls carry its id, when the turn is folded, then its calls are under
/// its own `invoke_agent` span, itself under the turn's root.
#[test]
fn a_subagents_calls_are_under_its_own_agent_span() {
    let s = Scenario::default()
        .given_hook(&prompt("explore"))
        .given_hook(r#"{"hook_event_name":"SubagentStart","session_id":"s1","agent_id":"a1","agent_type":"Explore"}"#)
        .given_hook(&tool("PreToolUse", "Grep", "toolu_9", Some("a1")))
        .given_hook(&tool("PostToolUse", "Grep", "toolu_9", Some("a1")))
        .given_hook(r#"{"hook_event_name":"SubagentStop","session_id":"s1","agent_id":"a1","agent_type":"Explore"}"#)
        .given_hook(STOP);
    let all = turns(&s, Options::default());
    let agents = of_kind(&all[0], SpanKind::Agent);
    assert_eq!(agents.len(), 2);
    let sub = agents[1];
    assert_eq!(sub.name, "invoke_agent Explore");
    assert_eq!(sub.parent.as_deref(), Some("turn:s1:1"));
    let call = of_kind(&all[0], SpanKind::Tool)[0];
    assert_eq!(call.parent.as_deref(), Some(sub.key.as_str()));
}

/// Given a response read twice (its usage grown), when the turn is folded, then it is one chat
/// span with the larger figures, as the cost summary counts it once.
#[test]
fn a_response_read_again_larger_is_one_span() {
    let s = Scenario::default()
        .given_hook(&prompt("go"))
        .given_usage("s1", "msg_1", "2026-11-03", 100)
        .given_usage("s1", "msg_1", "2026-11-03", 900)
        .given_hook(STOP);
    let all = turns(&s, Options::default());
    let chats = of_kind(&all[0], SpanKind::Chat);
    assert_eq!(chats.len(), 1);
    assert_eq!(int(chats[0], "gen_ai.usage.input_tokens"), 900);
}

/// Given a log with a turn still open, when it is folded from its start and again from where
/// the open turn began, then both give the same turn with the same keys: a shipper that lost its
/// fold rebuilds the ids it would have sent.
#[test]
fn a_fold_from_where_the_open_turn_began_gives_the_same_keys() {
    let s = one_turn()
        .given_hook(&prompt("next"))
        .given_hook(&tool("PreToolUse", "Edit", "toolu_5", None))
        .given_hook(&tool("PostToolUse", "Edit", "toolu_5", None));
    let pricing = PricingTable::default();
    let mut whole = Traces::new(Options::default());
    for env in &s.log {
        whole.apply(env, &pricing);
    }
    drop(whole.take_finished());
    let from = whole.resume_from().expect("a turn is open");
    let mut again = Traces::new(Options::default());
    for env in s.log.iter().filter(|e| e.seq >= from) {
        again.apply(env, &pricing);
    }
    drop(again.take_finished());
    let keys = |t: &mut Traces| -> Vec<Vec<String>> {
        t.take_all()
            .iter()
            .map(|turn| turn.spans.iter().map(|s| s.key.clone()).collect())
            .collect()
    };
    assert_eq!(keys(&mut whole), keys(&mut again));
}
