// hookjournal's OpenClaw shim, written by `hookjournal install --host openclaw` (no dependencies).
// Every hook named in hookjournal.json is forwarded to `hookjournal hook --host openclaw` as
// {"hook_event_name", "host_time", "event", "ctx"} on stdin, through one ordered queue, and the
// answer hookjournal prints is applied the way the hook takes it.
//
// The gateway loads this module more than once in one process (one copy gets the session hooks,
// another the agent-run hooks), so the queue lives on globalThis; everything else hookjournal
// knows is in its journal. Observe hooks are not awaited by every emitter: the queue, entered
// synchronously when the hook fires, keeps the journal in the order OpenClaw fired them.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

const SETTINGS = JSON.parse(readFileSync(new URL("./hookjournal.json", import.meta.url), "utf8"));
const QUEUE = Symbol.for("hookjournal.openclaw.queue");
globalThis[QUEUE] ??= { tail: Promise.resolve() };

// The conversation itself stays in OpenClaw's session files: `messages` arrays are replaced by
// their length. Functions, signals and cycles do not serialise.
function payload(name, event, ctx) {
  const seen = new WeakSet();
  const replacer = (key, value) => {
    if (typeof value === "bigint") return value.toString();
    if (typeof value === "function") return undefined;
    if (typeof AbortSignal !== "undefined" && value instanceof AbortSignal) return undefined;
    if (value !== null && typeof value === "object") {
      if (seen.has(value)) return undefined;
      seen.add(value);
    }
    return value;
  };
  const ev = { ...(event ?? {}) };
  if (Array.isArray(ev.messages)) {
    ev.messagesOmitted = ev.messages.length;
    delete ev.messages;
  }
  return JSON.stringify(
    { hook_event_name: name, host_time: new Date().toISOString(), event: ev, ctx: ctx ?? {} },
    replacer,
  );
}

// One hookjournal process; resolves to its answer (a JSON object) or null. Never rejects.
function run(body, logger) {
  return new Promise((resolve) => {
    const args = ["hook", "--host", "openclaw"];
    if (SETTINGS.journal) args.push("--journal", SETTINGS.journal);
    let out = "";
    let err = "";
    let child;
    try {
      child = spawn(SETTINGS.command, args, { stdio: ["pipe", "pipe", "pipe"] });
    } catch (e) {
      logger?.warn?.(`hookjournal: ${e}`);
      return resolve(null);
    }
    child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (err += d));
    child.on("error", (e) => {
      logger?.warn?.(`hookjournal: ${e}`);
      resolve(null);
    });
    child.on("close", () => {
      if (err.trim()) logger?.warn?.(err.trim());
      try {
        const answer = out.trim() ? JSON.parse(out) : null;
        resolve(answer && typeof answer === "object" ? answer : null);
      } catch {
        resolve(null);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(body);
  });
}

// Enters the queue now (in the order OpenClaw fired the hooks); settles when hookjournal answered.
function forward(name, event, ctx, logger) {
  const body = payload(name, event, ctx);
  const q = globalThis[QUEUE];
  const answer = q.tail.then(() => run(body, logger));
  q.tail = answer.catch(() => null);
  return answer;
}

const context = (a) => a?.hookSpecificOutput?.additionalContext;

// How each hook takes hookjournal's answer; hooks not listed only observe.
const APPLY = {
  before_prompt_build: (a) => (context(a) ? { prependContext: context(a) } : undefined),
  before_tool_call: (a) =>
    a?.decision === "block" || a?.continue === false
      ? { block: true, blockReason: a.reason ?? a.stopReason }
      : undefined,
  before_agent_finalize: (a) =>
    a?.decision === "block"
      ? { action: "revise", reason: a.reason, retry: { instruction: a.reason } }
      : undefined,
  before_agent_run: (a) =>
    a?.continue === false
      ? { outcome: "block", reason: a.stopReason, message: a.stopReason }
      : undefined,
};

// Synchronous hooks: their answer cannot wait for a process; they are journaled only.
const SYNC = new Set(["tool_result_persist", "before_message_write"]);

export default {
  id: "hookjournal",
  name: "hookjournal",
  description: "Journals every hook in the project's hookjournal.",
  register(api) {
    const logger = api.logger;
    for (const { name, timeoutMs } of SETTINGS.hooks) {
      const handler = SYNC.has(name)
        ? (event, ctx) => {
            forward(name, event, ctx, logger);
            return undefined;
          }
        : async (event, ctx) => {
            const answer = await forward(name, event, ctx, logger);
            return APPLY[name]?.(answer);
          };
      api.on(name, handler, timeoutMs ? { timeoutMs } : undefined);
    }
  },
};
