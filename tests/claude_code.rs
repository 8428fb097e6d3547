//! End-to-end test against the REAL Claude Code CLI (pinned 2.1.197), driven by a scripted model
//! server on 127.0.0.1, with `hookjournal hook` registered for every hook event.
//!
//! FINDINGS (observed with this harness; rerun with --nocapture and HOOKJOURNAL_E2E_KEEP=1 to re-check:
//! the kept temp dir holds requests.jsonl, calls/ (every hook payload) and the transcripts)
//! ==================================================================================================
//! Claude Code 2.1.197 (npm @anthropic-ai/claude-code-linux-x64), `claude -p ... --output-format
//! json`, HOME = temp dir, ANTHROPIC_BASE_URL = this test's server, run as root with --allowedTools.
//!
//! Requests (POST /v1/messages?beta=true, always `stream: true`)
//! - Each process first sends `HEAD /` (connectivity probe), then only Messages requests: no
//!   count_tokens, no title generation, no haiku side requests in -p mode (with or without
//!   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC). The server still answers such requests (short text).
//! - Body: model (as given), max_tokens 32000, thinking {enabled, budget 31999}, context_management,
//!   metadata.user_id (a JSON string holding device_id and session_id), system = [billing-header
//!   text, "You are a Claude agent, built on Anthropic's Claude Agent SDK.", main prompt], 24 tools
//!   (Agent, Bash, Cron*, Edit, Enter/ExitWorktree, NotebookEdit, Read, ReportFindings,
//!   ScheduleWakeup, SendMessage, Skill, TaskCreate/Get/List/Output/Stop/Update, WebFetch,
//!   WebSearch, Workflow, Write). No TodoWrite, Glob or Grep. Headers: x-api-key,
//!   anthropic-version 2023-06-01, anthropic-beta claude-code-20250219,..., X-Claude-Code-Session-Id,
//!   User-Agent claude-cli/2.1.197 (external, sdk-cli).
//! - A subagent (Agent tool) request: same model, 21 tools, "cc_is_subagent=true" in the billing
//!   header block; its first user message is the Agent prompt.
//! - The /compact summary request: same model, system prompt and tools, max_tokens 32000; the whole
//!   conversation with the LAST user message = the last tool_result + "CRITICAL: Respond with TEXT
//!   ONLY ... Your task is to create a detailed summary of the conversation so far ..." (the final
//!   assistant text of the turn is not in it). Recognised here by that text, not by position.
//! - The response's `request-id` header becomes the transcript's `requestId` (no header → no field).
//!
//! Hook events, in order (payload `source`/`trigger`/`reason` in parentheses)
//! - turn 1: SessionStart(startup), UserPromptSubmit, then per tool call PreToolUse, [TaskCreated
//!   between Pre and Post of TaskCreate; TaskCompleted before PostToolUse of TaskUpdate→completed;
//!   nothing for TaskUpdate→in_progress], PostToolUse or PostToolUseFailure (Read of a missing
//!   file), PostToolBatch after each batch; the Agent call gives PreToolUse(Agent), SubagentStart,
//!   SubagentStop, PostToolUse(Agent); then Stop, SessionEnd(other).
//! - `-p /compact --resume SID` (same session id): SessionStart(resume), PreCompact(manual,
//!   custom_instructions: null), SubagentStop with agent_type "" (the compaction runs as a forked
//!   agent: no SubagentStart, agent_transcript_path names a file that is never written,
//!   last_assistant_message = the raw summary), SessionStart(compact, with `model`),
//!   PostCompact(manual, compact_summary = the raw model text incl. <analysis>), SessionEnd(other).
//!   No model request follows the compaction in this process (a synthetic "No response requested."
//!   assistant line, model "<synthetic>", is written to the transcript instead).
//! - `-p "what next?" --resume SID`: SessionStart(resume), UserPromptSubmit, Stop, SessionEnd(other).
//! - Notification never fires in -p mode. `model` is on SessionStart(compact) only, not on
//!   startup/resume. `prompt_id` is on everything after the first prompt; `permission_mode` is not
//!   on SessionStart/SessionEnd/PreCompact. Stop adds `background_tasks: []`, `session_crons: []`.
//!   PostToolUse has `duration_ms`; PostToolUseFailure has `error` (string), `is_interrupt`,
//!   `duration_ms`. PostToolBatch `tool_calls[].tool_response` is the TEXT result, not the object.
//! - tool_response: TaskCreate {task:{id:"1",subject}}; TaskUpdate {success, taskId, updatedFields,
//!   statusChange:{from,to}}; Bash {stdout, stderr, interrupted, isImage, noOutputExpected}; Write
//!   {type:"create", filePath, content, structuredPatch, originalFile, userModified}; Edit {filePath,
//!   oldString, newString, originalFile, structuredPatch, userModified, replaceAll}; Agent {status,
//!   prompt, agentId, agentType, content[], resolvedModel, totalDurationMs, totalTokens, usage, ...}.
//!   Task ids are per session ("1", "2"); Claude Code keeps its own copy in ~/.claude/tasks/<session>/.
//! - Hook environment: CLAUDE_PROJECT_DIR, CLAUDE_CODE_SESSION_ID, CLAUDECODE=1,
//!   CLAUDE_CODE_ENTRYPOINT=sdk-cli, CLAUDE_CODE_CHILD_SESSION=1, CLAUDE_ENV_FILE (SessionStart
//!   only), plus the caller's environment (HOOKJOURNAL_DIR passes through).
//!
//! Where additionalContext lands
//! - SessionStart: `<system-reminder>\nSessionStart hook additional context: A\nB\n</system-reminder>`,
//!   ONE text block per firing, the outputs of all parallel hooks joined by "\n" (completion order).
//!   UserPromptSubmit / PostToolUse: one block per hook, "PostToolUse:<Tool> hook additional context: X".
//! - Startup: first text block of the first user message. After /compact, the next request ("what
//!   next?") is: [0] user: date reminder + "This session is being continued from a previous
//!   conversation ... Summary:\n<summary without <analysis>>"; [1] assistant: the turn's last text;
//!   [2] user: SessionStart(resume) context of the /compact process, re-read file attachments
//!   ("Called the Read tool ..."/"Result of calling the Read tool" for the edited file), agent listing,
//!   the SessionStart(compact) context, local-command caveat, <command-name>/compact</command-name>,
//!   <local-command-stdout>Compacted ... PreCompact [cmd] completed successfully ...,
//!   "Continue from where you left off."; [3] assistant (synthetic) "No response requested.";
//!   [4] user: SessionStart(resume) context of this process, skills listing, UserPromptSubmit
//!   context, "what next?". So the compact context DOES reach the model, on the next turn.
//! - A hook's context identical to one already in the conversation is dropped (seen with a constant
//!   probe text): the probe here carries a nonce.
//!
//! Transcripts and cost
//! - $HOME/.claude/projects/<cwd with '/' → '-'>/<session>.jsonl; subagents in
//!   <session>/subagents/agent-<agent_id>.jsonl (+ .meta.json), lines isSidechain: true. The
//!   subagent's assistant line is flushed ~100 ms AFTER its SubagentStop hook starts.
//! - One line per content block of a response, all carrying the response's final usage (here).
//!   Without a `cache_creation` split in the API usage, Claude Code writes `cache_creation:
//!   {ephemeral_5m: 0, ephemeral_1h: 0}` next to a non-zero cache_creation_input_tokens.
//! - total_cost_usd = Σ tokens × Sonnet 4.5 prices (input 3, output 15, 5m cache write 3.75, 1h
//!   cache write 6 (2× input), cache read 0.30 $/MTok), unsplit cache writes priced as 5m — the
//!   ccusage formula; it includes subagent responses. The /compact turn's total_cost_usd is the
//!   summary request's cost (its `usage` is all zeros, `modelUsage` has the tokens), and that usage
//!   is in NO transcript: neither hookjournal nor ccusage can see it. Assertion (d) therefore
//!   expects turns 1 + 3 (and also accepts all turns, should the journal ever learn it).
//! - Without a model server `claude -p` retries for minutes: every run here has a hard timeout.
//!
//! Fork and model switch (turns 4 and 5; 2.1.197 and 2.1.330 measured)
//! - `-p P --resume SID --fork-session`: a new session id whose transcript starts with a copy of
//!   the parent's messages (same message and request ids). 2.1.330 fires SessionStart(fork) under
//!   the fork's id (with `context_tokens`, `seconds_since_last_response`,
//!   `prompt_cache_likely_expired`, `estimated_cache_write_usd`); 2.1.197 fires SessionStart(resume)
//!   under the PARENT's id and transcript, then UserPromptSubmit/Stop/SessionEnd under the fork's.
//!   2.1.330's fork `total_cost_usd` includes the parent's turns (cumulative, copied).
//! - `--model X` on a resume and `/model X` as a -p prompt fire no model-switch event (2.1.330).
//!   The SDK's `set_model` control request on `--input-format stream-json` does: PreModelSwitch and
//!   PostModelSwitch, source `sdk`, after a one-token "Hi" request (max_tokens 1) that checks the
//!   model; that request is in no transcript and not in total_cost_usd. 2.1.197 answers no
//!   `set_model` in -p mode (it ends after SessionStart): there the switch is `--model` on resume.
//! - 2.1.197 runs every hook as before when settings.json names events it does not know
//!   (PreModelSwitch, PostModelSwitch, DirectoryAdded): the test registers install's whole table.
//!
//! What the test does
//! ------------------
//! Three `claude -p` runs in one session: (1) a scripted tool turn: TaskCreate ×2, TaskUpdate
//! in_progress, Bash `echo`, Write, Edit, Read of a missing file (PostToolUseFailure), Agent
//! (subagent), TaskUpdate completed, final text; (2) `-p /compact --resume`; (3) `-p "what next?"
//! --resume`. Every event is registered twice: `hookjournal hook` and a recording shell hook
//! (one file per invocation; it also answers SessionStart with a probe context naming its source).
//! The Claude Code side is checked first (turns finish, every scripted request arrives, Claude's
//! cost = scripted usage × prices, the documented hooks fire, the compact probe reaches the next
//! request), then hookjournal: (a) `export --report events` holds exactly one Hook event per
//! invocation, with the same payload, in a gap-free chain; (b) `tasks list --json` has the two tasks
//! with their final statuses; (c) the SessionStart(compact) context block of the first request after
//! the compaction holds hookjournal's restore text naming both task subjects and the edited file,
//! within 6,000 chars; (d) `cost --by session --json` equals Claude Code's own total_cost_usd;
//! then (h) a fork and a model switch: the fork's start as the version sends it, the parent's
//! restore in the fork's first request, the fork's `sessions` row = its own requests and the
//! total = every transcript-visible request once, the switched model in `show` and `sessions`.
//!
//! Running it
//! ----------
//!   bash .ci/install-claude-code.sh          # once; npm registry only, into target/claude-code
//!   CARGO_TARGET_DIR=/work/target-claude cargo test -p hookjournal --test claude_code -- --nocapture
//! Environment:
//!   HOOKJOURNAL_CLAUDE_BIN=/path/to/claude   use another Claude Code executable
//!   HOOKJOURNAL_CLAUDE_VERSION=2.1.330       the installed version to run (default: the pinned
//!                                            2.1.197; CI runs both)
//!   HOOKJOURNAL_REQUIRE_CLAUDE=1             fail (instead of skip) when Claude Code is missing
//!   HOOKJOURNAL_E2E_SKIP_JOURNAL=1           only exercise the Claude Code side (developer aid)
//!   HOOKJOURNAL_E2E_KEEP=1                   keep the temp dir (project, HOME, transcripts, calls)

mod common;
use common::harness::{missing, Ran};
#[path = "claude_code/server.rs"]
mod server;
#[path = "claude_code/support.rs"]
mod support;

use serde_json::{json, Value};
use server::excerpt;
use server::{Exchange, Kind, ModelServer, Usage};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use support::{canonical, Recorded};

const MODEL: &str = "claude-sonnet-4-5-20250929";
const ALLOWED_TOOLS: &str = "TaskCreate TaskUpdate Write Edit Bash Read";
/// Hard limit for one `claude -p` run (a normal run takes 1–3 s).
const TURN_TIMEOUT: Duration = Duration::from_secs(90);
/// Hard limit for one hookjournal CLI command.
const CLI_TIMEOUT: Duration = Duration::from_secs(60);
/// Every event the handler is registered for: what `hookjournal install` registers for Claude
/// Code, from the host facts table (2.1.197 runs every hook as before when the settings name
/// events it does not know, such as 2.1.330's PreModelSwitch, PostModelSwitch and DirectoryAdded).
fn registered_events() -> Vec<&'static str> {
    projections::hosts::CLAUDE
        .registered()
        .map(|(e, _)| e.name)
        .collect()
}
/// The model of the model-switch turn: another model at Sonnet 4.5's prices, so every turn is
/// priced alike by Claude Code and by the journal.
const SWITCH_MODEL: &str = "claude-sonnet-4-20250514";
/// The recording hook answers SessionStart with this context (+ " source=<source> nonce=<ns>"),
/// so the test can tell which SessionStart's context block is which in the requests. The nonce
/// keeps every probe unique: Claude Code drops a SessionStart context identical to one the
/// conversation already holds.
const PROBE: &str = "HJ-E2E-PROBE SessionStart";
/// Claude Code 2.1.197 wraps a SessionStart hook's additionalContext like this (the outputs of
/// all SessionStart hooks of one firing are joined with "\n" inside ONE such block).
const SESSION_START_CONTEXT_PREFIX: &str =
    "<system-reminder>\nSessionStart hook additional context: ";
/// The restore text budget of SPEC §5.
const RESTORE_BUDGET: usize = 6000;

/// Sonnet 4.5 prices, USD per million tokens: input, output, 5-minute cache write, 1-hour cache
/// write (2× input), cache read. Long-context pricing never applies: every request is < 200k.
const PRICE: [f64; 5] = [3.0, 15.0, 3.75, 6.0, 0.30];

fn price(u: &Usage) -> f64 {
    (u.input as f64 * PRICE[0]
        + u.output as f64 * PRICE[1]
        + u.cache_write_5m as f64 * PRICE[2]
        + u.cache_write_1h as f64 * PRICE[3]
        + u.cache_read as f64 * PRICE[4])
        / 1_000_000.0
}

fn env_flag(name: &str) -> bool {
    matches!(
        std::env::var(name).as_deref(),
        Ok("1") | Ok("true") | Ok("yes")
    )
}

/// Collects failures so that one run reports every problem, each with what was seen.
#[derive(Default)]
struct Report {
    failures: Vec<String>,
    notes: Vec<String>,
}

impl Report {
    fn check(&mut self, ok: bool, msg: impl FnOnce() -> String) -> bool {
        if !ok {
            self.failures.push(msg());
        }
        ok
    }
    fn fail(&mut self, msg: String) {
        self.failures.push(msg);
    }
    fn note(&mut self, msg: String) {
        println!("note: {msg}");
        self.notes.push(msg);
    }
}

struct Turn {
    label: &'static str,
    outcome: support::Outcome,
    result: Option<Value>,
    /// This turn's own cost, where Claude Code reports `total_cost_usd` summed over the session's
    /// turns (see `per_turn_costs`).
    own_cost: Option<f64>,
}

impl Turn {
    /// What this turn cost, as Claude Code reported it.
    fn cost(&self) -> Option<f64> {
        self.own_cost.or_else(|| self.reported_cost())
    }
    fn reported_cost(&self) -> Option<f64> {
        self.result.as_ref()?.get("total_cost_usd")?.as_f64()
    }
    fn session(&self) -> Option<&str> {
        self.result.as_ref()?.get("session_id")?.as_str()
    }
    fn text(&self) -> Option<&str> {
        self.result.as_ref()?.get("result")?.as_str()
    }
}

struct Harness {
    claude: PathBuf,
    hj: PathBuf,
    project: PathBuf,
    home: PathBuf,
    journal: PathBuf,
    base_url: String,
}

impl Harness {
    fn claude_turn(&self, label: &'static str, prompt: &str, resume: Option<&str>) -> Turn {
        self.claude_turn_with(label, prompt, resume, &[], MODEL)
    }

    /// A turn with more arguments (`--fork-session`) and a model of its own.
    fn claude_turn_with(
        &self,
        label: &'static str,
        prompt: &str,
        resume: Option<&str>,
        extra: &[&str],
        model: &str,
    ) -> Turn {
        let mut cmd = Command::new(&self.claude);
        cmd.arg("-p").arg(prompt);
        self.run_turn(label, cmd, resume, extra, model, None)
    }

    /// A headless turn that first switches the model the way an SDK host does (`set_model`,
    /// a control request on stream-json input), then sends `prompt`.
    fn claude_switch_turn(
        &self,
        label: &'static str,
        prompt: &str,
        resume: &str,
        to_model: &str,
    ) -> Turn {
        let mut cmd = Command::new(&self.claude);
        cmd.args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
        ]);
        let input = format!(
            "{}\n{}\n",
            json!({"type": "control_request", "request_id": "hj-switch",
                   "request": {"subtype": "set_model", "model": to_model}}),
            json!({"type": "user", "message": {"role": "user", "content": prompt}}),
        );
        self.run_turn(label, cmd, Some(resume), &[], MODEL, Some(input.as_bytes()))
    }

    fn run_turn(
        &self,
        label: &'static str,
        mut cmd: Command,
        resume: Option<&str>,
        extra: &[&str],
        model: &str,
        input: Option<&[u8]>,
    ) -> Turn {
        match resume {
            Some(sid) => {
                cmd.arg("--resume").arg(sid);
            }
            // The session runs as the project's `dev` agent: hookjournal takes its role from the
            // `agent_type` Claude Code puts in the payload.
            None => {
                cmd.args(["--agent", AGENT]);
            }
        }
        cmd.args(["--allowedTools", ALLOWED_TOOLS, "--model", model]);
        if input.is_none() {
            cmd.args(["--output-format", "json"]);
        }
        cmd.args(extra);
        cmd.current_dir(&self.project).env_clear();
        // A clean environment: nothing of the developer's Claude Code, API keys or hookjournal.
        for k in ["PATH", "LANG", "LC_ALL"] {
            if let Some(v) = std::env::var_os(k) {
                cmd.env(k, v);
            }
        }
        let shell = if Path::new("/bin/bash").exists() {
            "/bin/bash"
        } else {
            "/bin/sh"
        };
        cmd.env("SHELL", shell)
            .env("HOME", &self.home)
            .env("TMPDIR", common::client::private_tmp(&self.home))
            .env("TERM", "dumb")
            .env("ANTHROPIC_BASE_URL", &self.base_url)
            .env("ANTHROPIC_API_KEY", "dummy-key-for-the-local-model-server")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("HOOKJOURNAL_DIR", &self.journal);
        let outcome =
            support::run_captured_with_input(&mut cmd, input, TURN_TIMEOUT).expect("spawn claude");
        let result = support::parse_result(&outcome.stdout);
        Turn {
            label,
            outcome,
            result,
            own_cost: None,
        }
    }

    fn hj(&self, args: &[&str]) -> support::Outcome {
        let mut cmd = Command::new(&self.hj);
        cmd.arg("--journal").arg(&self.journal).args(args);
        cmd.env_remove("HOOKJOURNAL_DIR")
            .env_remove("CLAUDE_PROJECT_DIR");
        support::run_captured(&mut cmd, CLI_TIMEOUT).expect("spawn hookjournal")
    }
}

fn recorder_script(calls: &Path) -> String {
    format!(
        r#"#!/bin/sh
# Records one hook invocation verbatim, one file per invocation (parallel hooks never
# interleave), then answers SessionStart with a probe context naming its source.
d='{dir}'
f=$(mktemp "$d/$(date +%s%N)-XXXXXX") || exit 0
cat > "$f"
env | grep -E '^(CLAUDE|HOOKJOURNAL)' > "$f.json.env" 2>/dev/null
mv "$f" "$f.json"
in=$(cat "$f.json")
case "$in" in
  *'"hook_event_name":"SessionStart"'*)
    case "$in" in
      *'"source":"startup"'*) src=startup ;;
      *'"source":"resume"'*) src=resume ;;
      *'"source":"compact"'*) src=compact ;;
      *'"source":"clear"'*) src=clear ;;
      *'"source":"fork"'*) src=fork ;;
      *) src=other ;;
    esac
    printf '{{"hookSpecificOutput":{{"hookEventName":"SessionStart","additionalContext":"{probe} source=%s nonce=%s"}}}}' "$src" "$(date +%s%N)" ;;
esac
exit 0
"#,
        dir = calls.display(),
        probe = PROBE
    )
}

fn settings_json(hj: &Path, recorder: &Path) -> Value {
    let hj_cmd = format!("'{}' hook", hj.display());
    let rec_cmd = format!("sh '{}'", recorder.display());
    let mut hooks = serde_json::Map::new();
    for ev in registered_events() {
        hooks.insert(
            ev.to_string(),
            json!([{
                "matcher": "*",
                "hooks": [
                    {"type": "command", "command": hj_cmd, "timeout": 10},
                    {"type": "command", "command": rec_cmd, "timeout": 10},
                ]
            }]),
        );
    }
    json!({ "hooks": hooks })
}

fn real_claude_code_session_is_journaled_restored_and_costed() -> Ran {
    let started = Instant::now();
    let (claude, version) = match support::find_claude() {
        Ok(found) => found,
        Err(why) => {
            return missing(
                "HOOKJOURNAL_REQUIRE_CLAUDE",
                format!("real Claude Code not installed: {why} (bash .ci/install-claude-code.sh)"),
            )
        }
    };
    println!("claude: {} ({version})", claude.display());

    let tmp = tempfile::Builder::new()
        .prefix("hj-claude-e2e-")
        .tempdir()
        .expect("tempdir");
    let root = tmp.path().canonicalize().expect("canonical temp dir");
    let project = root.join("project");
    let home = root.join("home");
    let calls = root.join("calls");
    for d in [&project, &home, &calls, &project.join(".claude")] {
        fs::create_dir_all(d).expect("mkdir");
    }
    let hj = PathBuf::from(env!("CARGO_BIN_EXE_hookjournal"));
    assert!(
        !hj.to_string_lossy().contains('\'') && !root.to_string_lossy().contains('\''),
        "paths must not contain quotes"
    );
    fs::create_dir_all(project.join(".claude/agents")).expect("mkdir agents");
    fs::write(
        project.join(format!(".claude/agents/{AGENT}.md")),
        format!("---\nname: {AGENT}\ndescription: Implements the tasks of this project.\n---\nYou implement tasks.\n"),
    )
    .expect("write agent");
    let recorder = root.join("record-hook.sh");
    fs::write(&recorder, recorder_script(&calls)).expect("write recorder");
    fs::write(
        project.join(".claude/settings.json"),
        serde_json::to_string_pretty(&settings_json(&hj, &recorder)).unwrap(),
    )
    .expect("write settings");

    let server = ModelServer::start(&project).expect("start model server");
    let h = Harness {
        claude,
        hj,
        project: project.clone(),
        home: home.clone(),
        journal: project.join(".hookjournal"),
        base_url: server.base_url(),
    };
    println!("model server: {}  temp dir: {}", h.base_url, root.display());

    // ---- the three turns
    let prompt = format!(
        "{} Create two tasks, then write and edit {}.",
        server::START_MARKER,
        server::NOTES_FILE
    );
    server.set_phase(0);
    let t1 = h.claude_turn("turn 1 (tools)", &prompt, None);
    let mut turns = vec![t1];
    let sid = turns[0].session().map(String::from);
    if let Some(sid) = &sid {
        support::settle(&calls, Duration::from_secs(3));
        server.set_phase(1);
        turns.push(h.claude_turn("turn 2 (/compact)", "/compact", Some(sid)));
        support::settle(&calls, Duration::from_secs(3));
        server.set_phase(2);
        turns.push(h.claude_turn("turn 3 (what next?)", server::NEXT_PROMPT, Some(sid)));
    }
    support::settle(&calls, Duration::from_secs(3));
    server.set_phase(3);
    per_turn_costs(&mut turns);
    let exchanges = server.exchanges();
    let recorded = support::read_recorded(&calls);
    dump_exchanges(&root.join("requests.jsonl"), &exchanges);
    let sid = sid.unwrap_or_default();

    let mut r = Report::default();
    print_observations(&turns, &exchanges, &recorded);

    // ---- Claude Code side: the harness works and Claude Code behaves as documented.
    let claude_ok = check_claude_side(&mut r, &turns, &exchanges, &recorded, &sid);

    // ---- hookjournal side.
    if env_flag("HOOKJOURNAL_E2E_SKIP_JOURNAL") {
        eprintln!("HOOKJOURNAL_E2E_SKIP_JOURNAL=1: hookjournal assertions skipped");
    } else if claude_ok {
        let events = check_journal_complete(&mut r, &h, &recorded);
        check_tasks(&mut r, &h, &sid);
        check_restore_text(&mut r, &exchanges);
        check_role_priorities(&mut r, &exchanges);
        check_cost(&mut r, &h, &turns, &exchanges, &events, &sid);
        check_traces(&mut r, &h, &sid);
        check_reconciliation(&mut r, &h, &turns, &sid);
        check_fork_and_switch(&mut r, &h, &server, &calls, &sid);
    } else {
        r.fail(
            "hookjournal assertions not run: a Claude Code turn did not finish (see above)".into(),
        );
    }

    drop(server);
    println!("elapsed: {:?}", started.elapsed());
    if !r.failures.is_empty() {
        if env_flag("HOOKJOURNAL_E2E_KEEP") {
            let kept = tmp.keep();
            eprintln!("kept temp dir: {}", kept.display());
        }
        let mut msg = format!(
            "{} failure(s) in the real-Claude-Code end-to-end test:\n",
            r.failures.len()
        );
        for (i, f) in r.failures.iter().enumerate() {
            msg.push_str(&format!("\n[{}] {}\n", i + 1, f));
        }
        panic!("{msg}");
    }
    if env_flag("HOOKJOURNAL_E2E_KEEP") {
        let kept = tmp.keep();
        println!("kept temp dir: {}", kept.display());
    }
    Ok(())
}

/// (t) The real session as traces in a real Arize Phoenix (started on loopback): one LLM span per
/// response the journal priced, Phoenix's token counts equal to the journal's (which `check_cost`
/// holds equal to what the model server served), the session in Phoenix's session view. Skipped
/// when Phoenix is not installed; required with HOOKJOURNAL_REQUIRE_PHOENIX=1.
fn check_traces(r: &mut Report, h: &Harness, sid: &str) {
    use common::phoenix::{attr_i64, kind_of, phoenix_python, Phoenix};
    let python = match phoenix_python() {
        Ok(p) => p,
        Err(common::harness::Skip(why)) => return r.note(format!("(t) not checked: {why}")),
    };
    let phoenix = Phoenix::start(&python);
    let out = h.hj(&["ship", "--otlp", &phoenix.url(), "--otlp-signals", "traces"]);
    if !r.check(out.ok(), || {
        format!("(t) ship --otlp failed:\n{}", out.describe())
    }) {
        return;
    }
    let cost: Value =
        serde_json::from_str(h.hj(&["cost", "--json"]).stdout.trim()).unwrap_or_default();
    let Some(row) = cost["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|row| row["key"] == sid))
    else {
        return r.fail(format!("(t) no cost row for session {sid}"));
    };
    let n = |k: &str| row[k].as_i64().unwrap_or(-1);
    let want = (
        n("responses"),
        n("input_tokens") + n("cache_read_tokens") + n("cache_write_tokens"),
        n("output_tokens"),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let (got, spans) = loop {
        let spans = phoenix.spans();
        let llm: Vec<&Value> = spans.iter().filter(|s| kind_of(s) == "LLM").collect();
        let got = (
            llm.len() as i64,
            llm.iter()
                .map(|s| attr_i64(s, "llm.token_count.prompt"))
                .sum::<i64>(),
            llm.iter()
                .map(|s| attr_i64(s, "llm.token_count.completion"))
                .sum::<i64>(),
        );
        if got == want || Instant::now() > deadline {
            break (got, spans);
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    println!(
        "traces in phoenix: {} span(s); (responses, input, output) = {got:?}, cost says {want:?}",
        spans.len()
    );
    r.check(got == want, || {
        format!("(t) phoenix's (LLM spans, prompt tokens, completion tokens) {got:?} beside cost's {want:?}")
    });
    let tools = spans.iter().filter(|s| kind_of(s) == "TOOL").count();
    r.check(tools > 0, || "(t) no tool span in phoenix".into());
    let sessions =
        common::phoenix::get(phoenix.port, "/v1/projects/default/sessions").unwrap_or_default();
    r.check(
        sessions["data"]
            .as_array()
            .is_some_and(|d| d.iter().any(|x| x["session_id"] == sid)),
        || format!("(t) session {sid} not in phoenix's sessions: {sessions}"),
    );
}

/// Every exchange as one JSON line (kept with HOOKJOURNAL_E2E_KEEP=1, for study).
/// Claude Code 2.1.197 reports each `--resume` turn's own `total_cost_usd`; 2.1.330 reports it
/// summed over the session's turns so far (measured: turn 2 = turn 1 + the /compact request).
/// Each turn's own cost is then the difference from the turn before.
fn per_turn_costs(turns: &mut [Turn]) {
    if !support::reports_cumulative_cost() {
        return;
    }
    let reported: Vec<Option<f64>> = turns.iter().map(Turn::reported_cost).collect();
    for (i, t) in turns.iter_mut().enumerate().skip(1) {
        t.own_cost = match (reported[i], reported[i - 1]) {
            (Some(now), Some(before)) => Some(now - before),
            _ => None,
        };
    }
}

fn dump_exchanges(path: &Path, exchanges: &[Exchange]) {
    let mut out = String::new();
    for e in exchanges {
        let line = json!({
            "n": e.n, "phase": e.phase, "method": e.method, "path": e.path, "kind": format!("{:?}", e.kind),
            "headers": e.headers.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>(),
            "usage": e.usage.map(|u| json!({"input": u.input, "output": u.output, "cache_write_5m": u.cache_write_5m,
                "cache_write_1h": u.cache_write_1h, "cache_read": u.cache_read, "split": u.split})),
            "message_id": e.message_id, "request_id": e.request_id,
            "body": e.json.clone().unwrap_or_else(|| Value::String(String::from_utf8_lossy(&e.body).into_owned())),
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    let _ = fs::write(path, out);
}

fn print_observations(turns: &[Turn], exchanges: &[Exchange], recorded: &[Recorded]) {
    println!("--- turns");
    for t in turns {
        println!(
            "{}: {:?} session={:?} total_cost_usd={:?} result={:?}",
            t.label,
            t.outcome.elapsed,
            t.session(),
            t.cost(),
            t.text().map(|s| excerpt(s, 80))
        );
    }
    println!("--- requests to the model server");
    for e in exchanges {
        println!("{}", e.describe());
    }
    println!("--- hook invocations (recording hook, start order)");
    println!(
        "{}",
        recorded
            .iter()
            .map(Recorded::label)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut env: Vec<&str> = recorded
        .iter()
        .flat_map(|x| x.env.lines())
        .filter_map(|l| l.split('=').next())
        .collect();
    env.sort();
    env.dedup();
    println!("--- CLAUDE*/HOOKJOURNAL* variables the hooks received: {env:?}");
}

/// Everything here checks Claude Code and the harness, not hookjournal. Returns false when the
/// run is too broken for the hookjournal checks to mean anything (a turn did not finish).
fn check_claude_side(
    r: &mut Report,
    turns: &[Turn],
    exchanges: &[Exchange],
    recorded: &[Recorded],
    sid: &str,
) -> bool {
    let usable = turns.len() == 3 && turns.iter().all(|t| t.outcome.ok() && t.result.is_some());
    for t in turns {
        r.check(t.outcome.ok() && t.result.is_some(), || {
            format!(
                "{} did not finish with a JSON result:\n{}",
                t.label,
                t.outcome.describe()
            )
        });
        if let Some(res) = &t.result {
            r.check(res.get("is_error") == Some(&Value::Bool(false)), || {
                format!(
                    "{} reported an error: {}",
                    t.label,
                    excerpt(&res.to_string(), 1500)
                )
            });
            r.check(t.session() == Some(sid), || {
                format!(
                    "{} ran in session {:?}, expected {sid}",
                    t.label,
                    t.session()
                )
            });
        }
    }
    if turns.len() < 3 {
        r.fail(
            "turn 1 gave no session id, so the /compact and \"what next?\" turns could not run"
                .into(),
        );
        return false;
    }
    r.check(turns[0].text() == Some(server::FINAL_TEXT), || {
        format!(
            "turn 1 did not end with the scripted final answer {:?}: result {:?}\nrequests:\n{}",
            server::FINAL_TEXT,
            turns[0].text(),
            exchanges
                .iter()
                .map(Exchange::describe)
                .collect::<Vec<_>>()
                .join("\n")
        )
    });
    r.check(turns[2].text() == Some(server::AFTER_COMPACT_TEXT), || {
        format!(
            "turn 3 did not get the scripted answer: {:?}",
            turns[2].text()
        )
    });

    // Every scripted request arrived, in the phase it belongs to.
    let mut expected: Vec<(Kind, usize)> = (1..=server::LAST_STEP)
        .map(|k| (Kind::Step(k), 0))
        .collect();
    expected.extend([
        (Kind::Subagent, 0),
        (Kind::Final, 0),
        (Kind::CompactSummary, 1),
        (Kind::AfterCompact, 2),
    ]);
    for (kind, phase) in &expected {
        let n = exchanges
            .iter()
            .filter(|e| &e.kind == kind && e.phase == *phase)
            .count();
        r.check(n >= 1, || {
            format!(
                "the model server never received the {kind:?} request in phase {phase}; requests seen:\n{}",
                exchanges.iter().map(Exchange::describe).collect::<Vec<_>>().join("\n")
            )
        });
        if n > 1 {
            r.note(format!("{kind:?} was requested {n} times (retries?)"));
        }
    }
    let side: Vec<String> = exchanges
        .iter()
        .filter(|e| e.kind == Kind::Side)
        .map(Exchange::describe)
        .collect();
    if !side.is_empty() {
        r.note(format!(
            "unscripted Messages requests, answered with a short text: {side:?}"
        ));
    }

    // Claude Code's own cost = the scripted usage × Sonnet 4.5 prices, per turn.
    for (phase, t) in turns.iter().enumerate() {
        let usage_cost: f64 = exchanges
            .iter()
            .filter(|e| e.phase == phase && e.is_messages())
            .filter_map(|e| e.usage.as_ref())
            .map(price)
            .sum();
        if let Some(c) = t.cost() {
            r.check((c - usage_cost).abs() < 1e-9, || {
                format!(
                    "{}: Claude Code's total_cost_usd {c} != scripted usage × Sonnet 4.5 prices {usage_cost} \
                     (Claude Code's pricing or usage accounting changed)",
                    t.label
                )
            });
        }
    }

    // The hooks fired as documented (the recording hook saw them).
    let labels: Vec<String> = recorded.iter().map(Recorded::label).collect();
    let count = |l: &str| labels.iter().filter(|x| x.as_str() == l).count();
    let want: &[(&str, usize)] = &[
        ("SessionStart(startup)", 1),
        ("UserPromptSubmit", 2),
        ("PreToolUse(TaskCreate)", 2),
        ("PostToolUse(TaskCreate)", 2),
        ("PreToolUse(TaskUpdate)", 2),
        ("PostToolUse(TaskUpdate)", 2),
        ("PostToolUse(Bash)", 1),
        ("PostToolUse(Write)", 1),
        ("PostToolUse(Edit)", 1),
        ("PostToolUseFailure(Read)", 1),
        ("PostToolBatch", 8),
        ("TaskCreated", 2),
        ("TaskCompleted", 1),
        ("SubagentStart(general-purpose)", 1),
        ("SubagentStop(general-purpose)", 1),
        ("Stop", 2),
        ("SessionStart(resume)", 2),
        ("PreCompact(manual)", 1),
        ("SessionStart(compact)", 1),
        ("PostCompact(manual)", 1),
        ("SessionEnd(other)", 3),
    ];
    for (label, n) in want {
        r.check(count(label) >= *n, || {
            format!("Claude Code fired {label} {} time(s), expected at least {n}; all invocations: {labels:?}", count(label))
        });
    }
    let unparsed: Vec<&Recorded> = recorded.iter().filter(|x| x.json.is_none()).collect();
    r.check(unparsed.is_empty(), || {
        format!(
            "the recording hook saved payloads that are not JSON: {:?}",
            unparsed
                .iter()
                .map(|x| excerpt(&String::from_utf8_lossy(&x.raw), 200))
                .collect::<Vec<_>>()
        )
    });

    // The SessionStart(compact) context reached the next request (the probe's own block).
    match after_compact_request(exchanges) {
        Some(e) => {
            let probe = format!("{PROBE} source=compact");
            let found = e
                .json
                .as_ref()
                .map(|j| {
                    server::all_text_blocks(j)
                        .iter()
                        .any(|(_, _, _, t)| t.contains(&probe))
                })
                .unwrap_or(false);
            r.check(found, || {
                format!(
                    "the SessionStart(compact) probe context {probe:?} is not in the first request after the compaction \
                     ({}); its text blocks:\n{}",
                    e.describe(),
                    text_block_listing(e)
                )
            });
        }
        None => r.fail(format!(
            "no Messages request arrived after the compaction; requests:\n{}",
            exchanges
                .iter()
                .map(Exchange::describe)
                .collect::<Vec<_>>()
                .join("\n")
        )),
    }
    usable
}

/// The first Messages request after the /compact turn finished.
fn after_compact_request(exchanges: &[Exchange]) -> Option<&Exchange> {
    exchanges.iter().find(|e| e.phase >= 2 && e.is_messages())
}

fn text_block_listing(e: &Exchange) -> String {
    e.json
        .as_ref()
        .map(|j| {
            server::all_text_blocks(j)
                .iter()
                .map(|(i, k, role, t)| {
                    format!("  msg {i} ({role}) block {k}: {:?}", excerpt(t, 300))
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// (a) Every hook invocation Claude Code made is journaled once, verbatim.
/// Returns the exported events (empty when the export failed).
fn check_journal_complete(r: &mut Report, h: &Harness, recorded: &[Recorded]) -> Vec<Value> {
    // Readers never ingest the spool: a writer does first.
    let _ = h.hj(&["drain"]);
    let out = h.hj(&["export", "--report", "events"]);
    if !r.check(out.ok(), || {
        format!(
            "(a) `hookjournal export --report events` failed:\n{}",
            out.describe()
        )
    }) {
        return Vec::new();
    }
    let (events, bad) = support::parse_jsonl(&out.stdout);
    r.check(bad.is_empty(), || {
        format!("(a) export printed lines that are not JSON: {bad:?}")
    });

    // Chain shape: seq gap-free from 1, prev = previous hash.
    let mut prev_hash: Option<Value> = None;
    for (i, ev) in events.iter().enumerate() {
        let seq = ev.get("seq").and_then(Value::as_u64);
        if !r.check(seq == Some(i as u64 + 1), || {
            format!(
                "(a) export line {} has seq {:?}, expected {} (gap-free from 1): {}",
                i + 1,
                seq,
                i + 1,
                excerpt(&ev.to_string(), 300)
            )
        }) {
            break;
        }
        if let (Some(p), Some(prev)) = (&prev_hash, ev.get("prev")) {
            if !r.check(p == prev, || {
                format!(
                    "(a) event seq {} has prev {prev} but the previous event's hash is {p}",
                    i + 1
                )
            }) {
                break;
            }
        }
        prev_hash = ev.get("hash").cloned();
    }

    let kind_of = |ev: &Value| -> String {
        match ev.get("kind") {
            Some(Value::String(s)) => s.clone(),
            // Tolerate an externally tagged enum ({"Hook": {...}}) when reading; report it below.
            Some(Value::Object(m)) => m.keys().next().cloned().unwrap_or_default(),
            _ => String::new(),
        }
    };
    if let Some(ev) = events
        .iter()
        .find(|ev| !matches!(ev.get("kind"), Some(Value::String(_))))
    {
        r.fail(format!(
            "(a) export `kind` is not a string as documented: {}",
            excerpt(&ev.to_string(), 300)
        ));
    }
    let hooks: Vec<&Value> = events.iter().filter(|ev| kind_of(ev) == "Hook").collect();
    let malformed: Vec<&Value> = events
        .iter()
        .filter(|ev| kind_of(ev) == "Malformed")
        .collect();
    r.check(malformed.is_empty(), || {
        format!(
            "(a) Claude Code only sends JSON objects, yet {} invocation(s) were journaled as Malformed: {:?}",
            malformed.len(),
            malformed.iter().map(|m| excerpt(&m.to_string(), 400)).collect::<Vec<_>>()
        )
    });

    // Multisets of canonical payloads: what Claude sent (recorder) vs what was journaled.
    let mut want: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for rec in recorded {
        let key = match &rec.json {
            Some(j) => canonical(j),
            None => String::from_utf8_lossy(&rec.raw).into_owned(),
        };
        want.entry(key).or_insert((0, rec.label())).0 += 1;
    }
    let mut got: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut shape_problems = Vec::new();
    for ev in &hooks {
        let payload = journal_payload(ev);
        let (key, label) = match &payload {
            Some(Value::Object(_)) => {
                let p = payload.as_ref().unwrap();
                let name = p
                    .get("hook_event_name")
                    .and_then(Value::as_str)
                    .unwrap_or("?");
                if ev.get("name").and_then(Value::as_str) != Some(name) {
                    shape_problems.push(format!(
                        "seq {:?}: name {:?} but payload hook_event_name {name:?}",
                        ev.get("seq"),
                        ev.get("name")
                    ));
                }
                if ev.get("session_id") != p.get("session_id") {
                    shape_problems.push(format!(
                        "seq {:?}: session_id {:?} but payload session_id {:?}",
                        ev.get("seq"),
                        ev.get("session_id"),
                        p.get("session_id")
                    ));
                }
                (
                    canonical(p),
                    ev.get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_string(),
                )
            }
            _ => {
                shape_problems.push(format!(
                    "seq {:?}: no JSON payload/payload_b64: {}",
                    ev.get("seq"),
                    excerpt(&ev.to_string(), 300)
                ));
                (ev.to_string(), "?".into())
            }
        };
        got.entry(key).or_insert((0, label)).0 += 1;
    }
    r.check(shape_problems.is_empty(), || {
        format!("(a) Hook events whose envelope disagrees with their payload: {shape_problems:#?}")
    });

    let mut missing = Vec::new();
    let mut extra = Vec::new();
    for (k, (n, label)) in &want {
        let g = got.get(k).map(|x| x.0).unwrap_or(0);
        if g < *n {
            missing.push(format!("{label} ×{} : {}", n - g, excerpt(k, 240)));
        }
    }
    for (k, (n, label)) in &got {
        let w = want.get(k).map(|x| x.0).unwrap_or(0);
        if *n > w {
            extra.push(format!("{label} ×{} : {}", n - w, excerpt(k, 240)));
        }
    }
    let by_name = |labels: Vec<String>| {
        let mut m: BTreeMap<String, usize> = BTreeMap::new();
        for l in labels {
            *m.entry(l).or_default() += 1;
        }
        m
    };
    r.check(recorded.len() == hooks.len() && missing.is_empty() && extra.is_empty(), || {
        format!(
            "(a) Claude Code made {} hook invocations (recorded by the parallel recording hook) but the journal holds {} \
             Hook events.\nper event, Claude: {:?}\nper event, journal: {:?}\nnot journaled (or payload changed): {missing:#?}\n\
             journaled but not made by Claude (or payload changed): {extra:#?}",
            recorded.len(),
            hooks.len(),
            by_name(recorded.iter().map(Recorded::event).collect()),
            by_name(hooks.iter().map(|e| e.get("name").and_then(Value::as_str).unwrap_or("?").to_string()).collect()),
        )
    });
    events
}

/// For each scripted response: what was sent, and the UsageObserved events that name its
/// message id (found anywhere in their payload, whatever its exact shape).
fn usage_diagnosis(exchanges: &[Exchange], events: &[Value]) -> String {
    fn mentions(v: &Value, id: &str) -> bool {
        match v {
            Value::String(s) => s == id,
            Value::Array(a) => a.iter().any(|x| mentions(x, id)),
            Value::Object(m) => m.values().any(|x| mentions(x, id)),
            _ => false,
        }
    }
    let observed: Vec<&Value> = events
        .iter()
        .filter(|e| e.get("kind").and_then(Value::as_str) == Some("UsageObserved"))
        .collect();
    let mut out = String::new();
    for e in exchanges.iter().filter(|e| e.is_messages()) {
        let (Some(id), Some(u)) = (&e.message_id, &e.usage) else {
            continue;
        };
        let hits: Vec<String> = observed
            .iter()
            .filter(|o| o.get("payload").map(|p| mentions(p, id)).unwrap_or(false))
            .map(|o| {
                let p = o.get("payload").cloned().unwrap_or(Value::Null);
                match find_key(&p, "usage") {
                    Some(u) => format!("seq {} usage {u}", o.get("seq").unwrap_or(&Value::Null)),
                    None => excerpt(&p.to_string(), 400),
                }
            })
            .collect();
        out.push_str(&format!(
            "  {id} {:?} sent in={} out={} cw5m={} cw1h={} cr={} split={} → {}\n",
            e.kind,
            u.input,
            u.output,
            u.cache_write_5m,
            u.cache_write_1h,
            u.cache_read,
            u.split,
            match (hits.is_empty(), &e.kind) {
                (true, Kind::CompactSummary) =>
                    "not observed (expected: Claude Code writes no transcript for it)".to_string(),
                (true, _) => "NOT OBSERVED".to_string(),
                _ => hits.join(" ; "),
            }
        ));
    }
    out
}

/// The first value under `key`, searching depth-first.
fn find_key<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    match v {
        Value::Object(m) => m
            .get(key)
            .or_else(|| m.values().find_map(|x| find_key(x, key))),
        Value::Array(a) => a.iter().find_map(|x| find_key(x, key)),
        _ => None,
    }
}

/// The payload of an exported event as JSON: `payload` (object, or a string holding JSON) or
/// `payload_b64` (raw bytes).
fn journal_payload(ev: &Value) -> Option<Value> {
    match ev.get("payload") {
        Some(v @ Value::Object(_)) => return Some(v.clone()),
        Some(Value::String(s)) => {
            if let Ok(v) = serde_json::from_str::<Value>(s) {
                return Some(v);
            }
        }
        _ => {}
    }
    let b = ev.get("payload_b64")?.as_str()?;
    serde_json::from_slice(&support::base64_decode(b)?).ok()
}

/// (b) The task store holds the two tasks the model created, with the statuses it set.
fn check_tasks(r: &mut Report, h: &Harness, sid: &str) {
    let out = h.hj(&["tasks", "list", "--json"]);
    if !r.check(out.ok(), || {
        format!(
            "(b) `hookjournal tasks list --json` failed:\n{}",
            out.describe()
        )
    }) {
        return;
    }
    let v: Value = match serde_json::from_str(out.stdout.trim()) {
        Ok(v) => v,
        Err(e) => {
            return r.fail(format!(
                "(b) tasks list --json is not JSON ({e}):\n{}",
                excerpt(&out.stdout, 2000)
            ))
        }
    };
    let Some(all) = v.as_array() else {
        return r.fail(format!(
            "(b) tasks list --json is not an array: {}",
            excerpt(&v.to_string(), 2000)
        ));
    };
    let ours: Vec<&Value> = all
        .iter()
        .filter(|t| t.get("session_id").and_then(Value::as_str) == Some(sid))
        .collect();
    let subject_status: Vec<(String, String)> = ours
        .iter()
        .map(|t| {
            (
                t.get("subject")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string(),
                t.get("status")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string(),
            )
        })
        .collect();
    let mut want = vec![
        (server::TASK_A_SUBJECT.to_string(), "completed".to_string()),
        (server::TASK_B_SUBJECT.to_string(), "pending".to_string()),
    ];
    let mut got = subject_status.clone();
    want.sort();
    got.sort();
    r.check(got == want, || {
        format!(
            "(b) tasks of session {sid}: expected {want:?} (TaskCreate ×2, TaskUpdate in_progress → completed on the first), \
             got {got:?}\nfull `tasks list --json`: {}",
            excerpt(&serde_json::to_string_pretty(&v).unwrap_or_default(), 3000)
        )
    });
    for t in &ours {
        r.check(t.get("id").map(|id| !id.is_null()).unwrap_or(false), || {
            format!("(b) task without an id: {t}")
        });
    }
}

/// The project agent the first turn runs as (its role: dev).
const AGENT: &str = "dev";

/// (g) The role's priorities reach the model twice: in the compaction summary request, as Claude
/// Code's "Additional Instructions" (the PreCompact hook's plain-text answer), and in the restore
/// text of the first request after the compaction.
fn check_role_priorities(r: &mut Report, exchanges: &[Exchange]) {
    let priority = "- (dev) Finish the in-progress task before starting another";
    let Some(summary) = exchanges
        .iter()
        .find(|e| e.kind == server::Kind::CompactSummary)
    else {
        r.fail("(g) no compaction summary request arrived".into());
        return;
    };
    let texts: Vec<String> = summary
        .json
        .as_ref()
        .map(server::all_text_blocks)
        .unwrap_or_default()
        .into_iter()
        .map(|(_, _, _, t)| t)
        .collect();
    let instructions = texts.iter().find_map(|t| {
        t.split_once("Additional Instructions:\n")
            .map(|(_, rest)| rest)
    });
    match instructions {
        Some(rest) => {
            r.check(
                rest.starts_with("hookjournal: manual compaction of session ")
                    && rest.contains(" Keep in the summary:\n")
                    && rest.contains(priority),
                || {
                    format!(
                        "(g) the summary request's Additional Instructions lack the dev priorities: {}",
                        excerpt(rest, 1500)
                    )
                },
            );
        }
        None => r.fail(format!(
            "(g) the summary request has no Additional Instructions (the PreCompact answer did not reach the summariser); text blocks:\n{}",
            text_block_listing(summary)
        )),
    }
    if let Some(e) = after_compact_request(exchanges) {
        let all = e
            .json
            .as_ref()
            .map(server::all_text_blocks)
            .unwrap_or_default();
        r.check(
            all.iter().any(|(_, _, _, t)| {
                t.contains("Role dev: priorities: Finish the in-progress task")
            }),
            || {
                format!(
                    "(g) the restore after the compaction lacks the dev role's priorities:\n{}",
                    text_block_listing(e)
                )
            },
        );
    }
}

/// (c) After /compact, the model sees hookjournal's restore text: in the SessionStart(compact)
/// context block of the first request after the compaction (the block also holds the probe).
fn check_restore_text(r: &mut Report, exchanges: &[Exchange]) {
    let Some(e) = after_compact_request(exchanges) else {
        return;
    }; // reported on the Claude side
    let Some(j) = &e.json else { return };
    let blocks = server::all_text_blocks(j);
    let probe = format!("{PROBE} source=compact");
    let must = [
        server::TASK_A_SUBJECT,
        server::TASK_B_SUBJECT,
        server::NOTES_FILE,
    ];
    let Some((mi, bi, _, block)) = blocks.iter().find(|(_, _, _, t)| t.contains(&probe)) else {
        return;
    };
    // The hookjournal part: the block without its wrapper and the probe's line.
    let inner = block
        .strip_prefix(SESSION_START_CONTEXT_PREFIX)
        .unwrap_or(block)
        .trim_end()
        .trim_end_matches("</system-reminder>")
        .trim_end();
    let ours: String = inner
        .lines()
        .filter(|l| !l.contains(PROBE))
        .collect::<Vec<_>>()
        .join("\n");
    let absent: Vec<&str> = must.iter().copied().filter(|m| !ours.contains(m)).collect();
    if !absent.is_empty() {
        // Where else did it land, if anywhere? (e.g. only in a resume context)
        let elsewhere: Vec<String> = blocks
            .iter()
            .filter(|(_, _, _, t)| {
                t.starts_with(SESSION_START_CONTEXT_PREFIX) && !t.contains(&probe)
            })
            .filter(|(_, _, _, t)| must.iter().all(|m| t.contains(m)))
            .map(|(i, k, _, t)| format!("msg {i} block {k}: {}", excerpt(t, 400)))
            .collect();
        r.fail(format!(
            "(c) the SessionStart(compact) context the model received (request {}, message {mi}, block {bi}) lacks {absent:?} \
             (the next task, the last completed task and the edited file).\nhookjournal's part of that block:\n{}\n\
             other SessionStart contexts in that request that mention all of them: {elsewhere:#?}\nall text blocks:\n{}",
            e.describe(),
            excerpt(&ours, 3000),
            text_block_listing(e)
        ));
    }
    r.check(ours.chars().count() <= RESTORE_BUDGET, || {
        format!(
            "(c) the restore text is {} chars, over the {RESTORE_BUDGET}-char budget of SPEC §5",
            ours.chars().count()
        )
    });
}

/// (d) `cost --by session` for the session equals what Claude Code itself charged.
fn check_cost(
    r: &mut Report,
    h: &Harness,
    turns: &[Turn],
    exchanges: &[Exchange],
    events: &[Value],
    sid: &str,
) {
    let out = h.hj(&["cost", "--by", "session", "--json"]);
    if !r.check(out.ok(), || {
        format!(
            "(d) `hookjournal cost --by session --json` failed:\n{}",
            out.describe()
        )
    }) {
        return;
    }
    let v: Value = match serde_json::from_str(out.stdout.trim()) {
        Ok(v) => v,
        Err(e) => {
            return r.fail(format!(
                "(d) cost --json is not JSON ({e}):\n{}",
                excerpt(&out.stdout, 2000)
            ))
        }
    };
    let rows = v
        .get("rows")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let Some(row) = rows
        .iter()
        .find(|row| row.get("key").and_then(Value::as_str) == Some(sid))
    else {
        return r.fail(format!(
            "(d) no row for session {sid} in `cost --by session --json`: {}",
            excerpt(&v.to_string(), 2000)
        ));
    };
    let num = |o: &Value, k: &str| o.get(k).and_then(Value::as_f64);
    let tokens = |o: &Value| -> [Option<u64>; 4] {
        [
            "input_tokens",
            "output_tokens",
            "cache_write_tokens",
            "cache_read_tokens",
        ]
        .map(|k| o.get(k).and_then(Value::as_u64))
    };

    // Claude Code writes the usage of every main-chain and subagent response to a transcript, but
    // NOT that of the /compact summary request (2.1.197: the compaction runs as a forked agent
    // whose transcript is never written, although its cost is in the /compact turn's
    // total_cost_usd). So the cost hookjournal can know from transcripts (and ccusage computes)
    // is turns 1 + 3; a journal that also knew the compaction's usage would match all turns.
    let claude_cost = |skip_compact: bool| -> f64 {
        turns
            .iter()
            .enumerate()
            .filter(|(i, _)| !(skip_compact && *i == 1))
            .filter_map(|(_, t)| t.cost())
            .sum()
    };
    let scripted_tokens = |skip_compact: bool| -> [Option<u64>; 4] {
        let mut u = Usage::default();
        for e in exchanges.iter().filter(|e| e.is_messages()) {
            if skip_compact && e.kind == Kind::CompactSummary {
                continue;
            }
            if let Some(x) = &e.usage {
                u.add(x);
            }
        }
        [
            Some(u.input),
            Some(u.output),
            Some(u.cache_write()),
            Some(u.cache_read),
        ]
    };
    let usd = num(row, "usd");
    let matches = |skip: bool| {
        usd.map(|x| (x - claude_cost(skip)).abs() <= 1e-6)
            .unwrap_or(false)
            && tokens(row) == scripted_tokens(skip)
    };
    if matches(true) {
        println!("(d) cost row matches Claude Code's total_cost_usd of the transcript-visible turns (1 + 3): {:?}", usd);
    } else if matches(false) {
        r.note(format!("(d) cost row matches Claude Code's total_cost_usd of ALL turns, /compact included: {usd:?}"));
    } else {
        r.fail(format!(
            "(d) `cost --by session` for {sid}: usd {usd:?}, tokens [in, out, cache_write, cache_read] {:?}.\n\
             expected Claude Code's own total_cost_usd of turns 1+3 = {} with tokens {:?} \
             (the /compact turn's {:?} is not in any transcript),\n\
             or of all turns = {} with tokens {:?}.\nper turn: {:?}\nfull output: {}\n\
             each scripted response vs the journal's UsageObserved events:\n{}",
            tokens(row),
            claude_cost(true),
            scripted_tokens(true),
            turns.get(1).and_then(Turn::cost),
            claude_cost(false),
            scripted_tokens(false),
            turns.iter().map(|t| (t.label, t.cost())).collect::<Vec<_>>(),
            excerpt(&v.to_string(), 2000),
            usage_diagnosis(exchanges, events)
        ));
    }
    // The total of a journal holding one session is that session.
    let total = v.get("total").cloned().unwrap_or(Value::Null);
    let sum_rows: f64 = rows.iter().filter_map(|x| num(x, "usd")).sum();
    r.check(
        num(&total, "usd")
            .map(|t| (t - sum_rows).abs() <= 1e-6)
            .unwrap_or(false)
            && tokens(&total) == tokens(row),
        || format!("(d) cost total {total} does not equal the only session's row {row}"),
    );
    let others: Vec<&Value> = rows
        .iter()
        .filter(|x| x.get("key").and_then(Value::as_str) != Some(sid))
        .collect();
    r.check(others.is_empty(), || format!("(d) cost rows for sessions that do not exist (all usage is session {sid}'s): {others:?}"));
}

/// (e) Cost reconciliation: Claude Code's own figure beside the transcripts', the difference named.
/// Each turn is one process, and a status line in each would see that process's cost counter
/// start at 0 and reach the turn's `total_cost_usd`: that is what is fed to `hookjournal
/// statusline`, as Claude Code's `statusLine` command would receive it. The /compact turn's cost
/// is in no transcript, so `cost` must show the host's total, the transcripts' (turns 1 + 3) and
/// name the difference (turn 2) as compaction summary requests.
fn check_reconciliation(r: &mut Report, h: &Harness, turns: &[Turn], sid: &str) {
    use std::io::Write;
    use std::process::Stdio;
    let costs: Vec<f64> = turns.iter().filter_map(Turn::cost).collect();
    if !r.check(costs.len() == 3, || {
        format!("(e) expected 3 turns with total_cost_usd, got {costs:?}")
    }) {
        return;
    }
    for (i, cost) in costs.iter().enumerate() {
        for reading in [0.0, *cost] {
            let input = json!({
                "session_id": sid,
                "model": {"id": "claude-sonnet-4-5", "display_name": "Sonnet 4.5"},
                "workspace": {"current_dir": h.project},
                "cost": {"total_cost_usd": reading, "total_duration_ms": 1000 * (i + 1)},
            });
            let mut child = Command::new(&h.hj)
                .arg("--journal")
                .arg(&h.journal)
                .arg("statusline")
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn hookjournal statusline");
            let _ = child
                .stdin
                .take()
                .unwrap()
                .write_all(input.to_string().as_bytes());
            let _ = child.wait();
        }
    }
    let out = h.hj(&["cost", "--json"]);
    let v: Value = serde_json::from_str(out.stdout.trim()).unwrap_or_default();
    let Some(rec) = v["reconciliation"]["sessions"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["session"] == sid))
        .cloned()
    else {
        return r.fail(format!(
            "(e) no reconciliation row for {sid}: {}",
            excerpt(&out.stdout, 2000)
        ));
    };
    let host: f64 = costs.iter().sum();
    let transcripts = costs[0] + costs[2];
    let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-6);
    r.check(close(rec["host_usd"].as_f64(), host), || {
        format!(
            "(e) host_usd {} != Σ Claude Code's total_cost_usd {host}",
            rec["host_usd"]
        )
    });
    r.check(close(rec["transcript_usd"].as_f64(), transcripts), || {
        format!(
            "(e) transcript_usd {} != turns 1 + 3 {transcripts}",
            rec["transcript_usd"]
        )
    });
    r.check(close(rec["difference_usd"].as_f64(), costs[1]), || {
        format!(
            "(e) difference_usd {} != the /compact turn's cost {}",
            rec["difference_usd"], costs[1]
        )
    });
    r.check(
        rec["explanation"][0]
            .as_str()
            .is_some_and(|e| e.starts_with("compaction summary requests")),
        || {
            format!(
                "(e) the difference is not named as the compaction: {}",
                rec["explanation"]
            )
        },
    );
    let text = h.hj(&["cost"]);
    r.check(text.stdout.contains("compaction summary requests"), || {
        format!(
            "(e) `cost` does not name the difference:\n{}",
            excerpt(&text.stdout, 2000)
        )
    });
}

/// (h) A fork and a model switch, after the three turns: `-p FORK_PROMPT --resume SID
/// --fork-session` (a new session whose transcript starts with a copy of the parent's messages),
/// then `-p SWITCH_PROMPT --resume FORK --model SWITCH_MODEL`. The fork's SessionStart source is
/// what the version sends; hookjournal's restore of the parent reaches the fork's first request;
/// the fork's row is its own two requests and the `sessions` total counts every request once
/// (the copies are the parent's); the snapshot's model is the switched-to model (2.1.330: from
/// its PostModelSwitch; 2.1.197, which has none, from the transcript).
fn check_fork_and_switch(
    r: &mut Report,
    h: &Harness,
    server: &ModelServer,
    calls: &Path,
    sid: &str,
) {
    server.set_phase(4);
    let fork = h.claude_turn_with(
        "turn 4 (fork)",
        server::FORK_PROMPT,
        Some(sid),
        &["--fork-session"],
        MODEL,
    );
    support::settle(calls, Duration::from_secs(3));
    let Some(fid) = fork.session().map(String::from) else {
        return r.fail(format!(
            "(h) the fork turn gave no session id:\n{}",
            fork.outcome.describe()
        ));
    };
    r.check(fid != sid && fork.text() == Some(server::FORK_TEXT), || {
        format!(
            "(h) the fork ran in session {fid} (parent {sid}) and answered {:?}",
            fork.text()
        )
    });
    server.set_phase(5);
    // 2.1.330: the SDK's `set_model` on stream-json input (what fires PreModelSwitch and
    // PostModelSwitch in -p mode; `--model` on a resume and `/model` fire nothing there).
    // 2.1.197 answers no `set_model` in -p mode (measured: it ends after SessionStart), so it
    // switches by resuming with `--model`.
    let switch = if support::reports_cumulative_cost() {
        h.claude_switch_turn(
            "turn 5 (model switch)",
            server::SWITCH_PROMPT,
            &fid,
            SWITCH_MODEL,
        )
    } else {
        h.claude_turn_with(
            "turn 5 (model switch)",
            server::SWITCH_PROMPT,
            Some(&fid),
            &[],
            SWITCH_MODEL,
        )
    };
    support::settle(calls, Duration::from_secs(3));
    server.set_phase(6);
    r.check(
        switch.session() == Some(fid.as_str()) && switch.text() == Some(server::SWITCH_TEXT),
        || {
            format!(
                "(h) the model-switch turn ran in {:?} (want {fid}) and answered {:?}:\n{}",
                switch.session(),
                switch.text(),
                switch.outcome.describe()
            )
        },
    );
    let exchanges = server.exchanges();
    let recorded = support::read_recorded(calls);
    // `set_model` first checks the model with a one-token request ("Hi", max_tokens 1): it is in
    // no transcript, and Claude Code's own total_cost_usd leaves it out too (measured).
    let probe = |e: &Exchange| e.max_tokens() == Some(1);
    let in_phase = |p: usize| -> Vec<&Exchange> {
        exchanges
            .iter()
            .filter(|e| e.phase == p && e.is_messages() && !probe(e))
            .collect()
    };
    let of_fork: Vec<&Recorded> = recorded
        .iter()
        .filter(|x| x.str_field("session_id") == Some(fid.as_str()))
        .collect();
    println!(
        "--- fork {fid}: hook invocations {:?}\n--- fork requests: {:?}\n--- switch requests: {:?}\n--- Claude Code's total_cost_usd: fork {:?}, switch {:?}",
        of_fork.iter().map(|x| x.label()).collect::<Vec<_>>(),
        in_phase(4).iter().map(|e| e.describe()).collect::<Vec<_>>(),
        in_phase(5).iter().map(|e| e.describe()).collect::<Vec<_>>(),
        fork.reported_cost(),
        switch.reported_cost(),
    );

    // Claude Code's side: the fork's start, and the switched model on the wire. 2.1.330 starts
    // the fork with SessionStart(fork) under the fork's id; 2.1.197 with SessionStart(resume)
    // under the PARENT's id (and its transcript), then goes on under the fork's id.
    let first_of_fork = recorded
        .iter()
        .position(|x| x.str_field("session_id") == Some(fid.as_str()));
    let fork_start = first_of_fork.and_then(|i| {
        recorded[..=i]
            .iter()
            .rev()
            .find(|x| x.event() == "SessionStart")
            .map(|x| {
                (
                    x.str_field("source").unwrap_or("").to_string(),
                    x.str_field("session_id").unwrap_or("").to_string(),
                )
            })
    });
    let (want_source, start_id) = if support::reports_cumulative_cost() {
        ("fork", fid.as_str())
    } else {
        ("resume", sid)
    };
    r.check(
        fork_start == Some((want_source.to_string(), start_id.to_string())),
        || {
            format!(
                "(h) the fork turn's SessionStart (source, session) is {fork_start:?}, expected                  ({want_source:?}, {start_id}) at this version"
            )
        },
    );
    let fork_reqs = in_phase(4);
    let switch_reqs = in_phase(5);
    r.check(
        fork_reqs.iter().any(|e| e.kind == Kind::Fork)
            && switch_reqs.iter().any(|e| e.kind == Kind::Switch),
        || {
            format!(
                "(h) the scripted fork and switch requests did not both arrive: {:?} / {:?}",
                fork_reqs.iter().map(|e| e.describe()).collect::<Vec<_>>(),
                switch_reqs.iter().map(|e| e.describe()).collect::<Vec<_>>()
            )
        },
    );
    let wire_models: Vec<Option<&str>> = switch_reqs
        .iter()
        .map(|e| e.json.as_ref().and_then(|j| j["model"].as_str()))
        .collect();
    r.check(wire_models.iter().all(|m| *m == Some(SWITCH_MODEL)), || {
        format!("(h) the switched turn's requests ran {wire_models:?}, not {SWITCH_MODEL}")
    });
    // 2.1.330 announces the switch (PreModelSwitch, PostModelSwitch with source `sdk`); 2.1.197
    // has no such events, so the model must come from the transcript.
    let switched_event = of_fork
        .iter()
        .any(|x| x.event() == "PostModelSwitch" && x.str_field("to_model") == Some(SWITCH_MODEL));
    let announces = support::reports_cumulative_cost();
    r.check(switched_event == announces, || {
        format!(
            "(h) PostModelSwitch to {SWITCH_MODEL} fired: {switched_event}, expected {announces} at this version"
        )
    });

    // (h1) Every invocation, the fork's included, journaled once.
    check_journal_complete(r, h, &recorded);

    // (h2) The parent's restore reached the fork's first request, in its SessionStart context.
    let first = fork_reqs.first();
    let must = [
        server::TASK_A_SUBJECT,
        server::TASK_B_SUBJECT,
        server::NOTES_FILE,
    ];
    let restored = first.and_then(|e| e.json.as_ref()).is_some_and(|j| {
        server::all_text_blocks(j).iter().any(|(_, _, _, t)| {
            t.starts_with(SESSION_START_CONTEXT_PREFIX)
                && t.contains(&format!("{PROBE} source={want_source}"))
                && t.contains(projections::short_id(sid))
                && must.iter().all(|m| t.contains(m))
        })
    });
    r.check(restored, || {
        format!(
            "(h2) the fork's first request holds no SessionStart({want_source}) context with the parent's \
             ({}) restore naming {must:?}; its text blocks:\n{}",
            projections::short_id(sid),
            first.map(|e| text_block_listing(e)).unwrap_or_default()
        )
    });

    // (h3) Each request counted once: the fork's row is its own two requests, the total is
    // every transcript-visible request (all but the /compact summary).
    let priced = |es: &[&Exchange]| -> (f64, u64) {
        let mut u = Usage::default();
        for e in es {
            if let Some(x) = &e.usage {
                u.add(x);
            }
        }
        (price(&u), u.input)
    };
    let own: Vec<&Exchange> = fork_reqs.iter().chain(&switch_reqs).copied().collect();
    let (fork_usd, fork_input) = priced(&own);
    let visible: Vec<&Exchange> = exchanges
        .iter()
        .filter(|e| e.is_messages() && e.kind != Kind::CompactSummary && !probe(e))
        .collect();
    let (all_usd, all_input) = priced(&visible);
    let out = h.hj(&["sessions", "--json"]);
    let rows: Vec<Value> = serde_json::from_str(out.stdout.trim()).unwrap_or_default();
    let row = |id: &str| rows.iter().find(|x| x["session_id"] == id).cloned();
    let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-9);
    let fork_row = row(&fid).unwrap_or_default();
    r.check(
        close(fork_row["usd"].as_f64(), fork_usd)
            && fork_row["input_tokens"].as_u64() == Some(fork_input),
        || {
            format!(
                "(h3) the fork's row is not its own requests (usd {fork_usd}, input {fork_input}): {fork_row}"
            )
        },
    );
    let total: f64 = rows.iter().filter_map(|x| x["usd"].as_f64()).sum();
    let total_input: u64 = rows.iter().filter_map(|x| x["input_tokens"].as_u64()).sum();
    r.check(
        rows.len() == 2 && close(Some(total), all_usd) && total_input == all_input,
        || {
            format!(
                "(h3) the sessions total {total} (input {total_input}) is not every request once {all_usd} \
                 (input {all_input}); rows: {}",
                excerpt(&out.stdout, 3000)
            )
        },
    );
    let text = h.hj(&["sessions"]);
    r.check(text.stdout.contains(&format!("${total:.4}")), || {
        format!(
            "(h3) the sessions table's total row is not {total:.4}:\n{}",
            text.stdout
        )
    });
    let cost: Value =
        serde_json::from_str(h.hj(&["cost", "--json"]).stdout.trim()).unwrap_or_default();
    r.check(close(cost["total"]["usd"].as_f64(), all_usd), || {
        format!("(h3) cost's total {} is not {all_usd}", cost["total"])
    });

    // (h4) The snapshot: the switched model, the copies named.
    let show: Value =
        serde_json::from_str(h.hj(&["show", &fid, "--json"]).stdout.trim()).unwrap_or_default();
    r.check(
        show["model"] == SWITCH_MODEL && fork_row["model"] == SWITCH_MODEL,
        || {
            format!(
                "(h4) after the switch the fork's model is {} (show) / {} (sessions), not {SWITCH_MODEL}",
                show["model"], fork_row["model"]
            )
        },
    );
    r.check(
        show["usage_copied"].as_u64().unwrap_or(0) > 0 && show["continues"] == sid,
        || {
            format!(
                "(h4) the fork names no copied responses of its parent {sid}: usage_copied {}, continues {}",
                show["usage_copied"], show["continues"]
            )
        },
    );
}

harness_main!(real_claude_code_session_is_journaled_restored_and_costed,);
