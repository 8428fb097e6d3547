// hookjournal's pi shim, written by `hookjournal install --host pi` (no dependencies).
// pi loads every .ts file of .pi/extensions/ (and ~/.pi/agent/extensions/) into its own process.
// Each event named in SETTINGS is forwarded to `hookjournal hook --host pi` as {"host": "pi",
// "hook_event_name", "host_time", "cwd", "session_id", "session_file", "context_usage" (pi's
// {tokens, contextWindow, percent}), "event"} on stdin, through
// one ordered queue, and pi waits for the answer where the event takes one: context becomes a
// message of the prompt (before_agent_start) or part of the tool's result (tool_result).
// Large fields are sent as counts: before_agent_start's system prompt and its options,
// turn_end's toolResults (each has its own tool_result), agent_end's messages but the last,
// session_before_compact's branch and message lists.
import { spawn } from "node:child_process";

// HOOKJOURNAL-SETTINGS (this line and the next are written by install)
const SETTINGS: any = {};

const QUEUE = Symbol.for("hookjournal.pi.queue");
const g: any = globalThis;
g[QUEUE] ??= { tail: Promise.resolve() };
const TIMEOUT_MS = Object.fromEntries((SETTINGS.hooks ?? []).map((h: any) => [h.name, h.timeoutMs]));

// Functions, signals and cycles do not serialise.
function payload(fields: any) {
  const seen = new WeakSet();
  return JSON.stringify(fields, (key, value) => {
    if (typeof value === "bigint") return value.toString();
    if (typeof value === "function") return undefined;
    if (typeof AbortSignal !== "undefined" && value instanceof AbortSignal) return undefined;
    if (value !== null && typeof value === "object") {
      if (seen.has(value)) return undefined;
      seen.add(value);
    }
    return value;
  });
}

// The event as sent: the big lists as counts (see the top).
function slim(event: any) {
  const count = (v: any) => (Array.isArray(v) ? v.length : 0);
  switch (event?.type) {
    case "before_agent_start": {
      const { systemPrompt, systemPromptOptions, images, ...rest } = event;
      return { ...rest, images: count(images) };
    }
    case "turn_end": {
      const { toolResults, ...rest } = event;
      return { ...rest, toolResults: count(toolResults) };
    }
    case "agent_end": {
      const { messages, ...rest } = event;
      return { ...rest, messages: count(messages), lastMessage: messages?.[messages.length - 1] };
    }
    case "session_before_compact": {
      const { branchEntries, preparation, signal, ...rest } = event;
      const { messagesToSummarize, turnPrefixMessages, ...prep } = preparation ?? {};
      return {
        ...rest,
        branchEntries: count(branchEntries),
        preparation: { ...prep, messagesToSummarize: count(messagesToSummarize), turnPrefixMessages: count(turnPrefixMessages) },
      };
    }
    default:
      return event;
  }
}

// One hookjournal process; resolves to its answer (a JSON object) or null, never rejects. Killed
// past its budget: pi goes on without an answer.
function run(body: string, cwd: string, timeoutMs: number | undefined): Promise<any> {
  return new Promise((resolve) => {
    const args = ["hook", "--host", "pi"];
    if (SETTINGS.journal) args.push("--journal", SETTINGS.journal);
    let out = "";
    let err = "";
    let child: any;
    try {
      child = spawn(SETTINGS.command, args, { cwd, stdio: ["pipe", "pipe", "pipe"] });
    } catch (e) {
      console.error(`hookjournal: ${e}`);
      return resolve(null);
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs ?? 10000);
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.on("error", (e: unknown) => {
      clearTimeout(timer);
      console.error(`hookjournal: ${e}`);
      resolve(null);
    });
    child.on("close", () => {
      clearTimeout(timer);
      if (err.trim()) console.error(err.trim());
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

// The session and directory of the last event: pi's ctx throws once the session is replaced.
const last: any = { cwd: process.cwd() };

// Enters the queue now (in the order pi called), settles when hookjournal answered.
function forward(name: string, event: any, ctx: any): Promise<any> {
  try {
    last.cwd = ctx?.cwd ?? last.cwd;
    last.session_id = ctx?.sessionManager?.getSessionId?.() ?? last.session_id;
    last.session_file = ctx?.sessionManager?.getSessionFile?.() ?? last.session_file;
    last.context_usage = ctx?.getContextUsage?.() ?? last.context_usage;
  } catch {}
  const { cwd, session_id, session_file, context_usage } = last;
  const body = payload({
    host: "pi",
    hook_event_name: name,
    host_time: new Date().toISOString(),
    cwd,
    session_id,
    session_file,
    context_usage,
    event: slim(event),
  });
  const q = g[QUEUE];
  const answer = q.tail.then(() => run(body, cwd, TIMEOUT_MS[name]));
  q.tail = answer.catch(() => null);
  return answer;
}

const context = (a: any) => a?.hookSpecificOutput?.additionalContext;

// pi runs its agent events (turn_end, agent_end) through a queue it does not wait for before it
// shuts down, and persists its session in that queue too: those are forwarded without holding pi
// up, and session_shutdown waits until every prompt's agent_end was forwarded.
const AGENT_EVENTS = new Set(["turn_end", "agent_end"]);

export default function (pi: any) {
  const prompts = { started: 0, ended: 0, wake: () => {} };
  const hook = (name: string, apply?: (event: any, text: string) => any) => {
    pi.on(name, async (event: any, ctx: any) => {
      if (name === "before_agent_start") prompts.started += 1;
      if (name === "agent_end") {
        prompts.ended += 1;
        prompts.wake();
      }
      if (name === "session_shutdown" && prompts.ended < prompts.started) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, TIMEOUT_MS[name] ?? 10000);
          prompts.wake = () => {
            if (prompts.ended >= prompts.started) {
              clearTimeout(timer);
              resolve();
            }
          };
        });
      }
      const answer = forward(name, event, ctx);
      if (AGENT_EVENTS.has(name)) return undefined;
      const text = context(await answer);
      return text && apply ? apply(event, text) : undefined;
    });
  };
  for (const { name } of SETTINGS.hooks ?? []) {
    if (name === "before_agent_start") {
      // A message of the prompt, stored in the session and sent to the model.
      hook(name, (_event, text) => ({ message: { customType: "hookjournal", content: text, display: false } }));
    } else if (name === "tool_result") {
      // The tool's result as the model gets it, the text appended.
      hook(name, (event, text) => ({ content: [...(event.content ?? []), { type: "text", text }] }));
    } else {
      hook(name);
    }
  }
}
