// hookjournal's Amp shim, written by `hookjournal install --host amp` (no dependencies).
// Amp loads every .ts file of .amp/plugins/ (and ~/.config/amp/plugins/) as a plugin. Each event
// named in SETTINGS is forwarded to `hookjournal hook --host amp` as {"host": "amp",
// "hook_event_name", "host_time", "cwd", "session_id" (the thread's id), "event"} on stdin,
// through one ordered queue. Amp waits for its request events: tool.call is always allowed, and
// agent.start's answer (context) becomes a message appended to the user's, not displayed.
// agent.end's messages are sent as a count and the last one.
// Written from Amp's plugin API (`amp plugins show-docs`, 0.0.1790142911-g7618fb); not run here.
import { spawn } from "node:child_process";

// HOOKJOURNAL-SETTINGS (this line and the next are written by install)
const SETTINGS: any = {};

const QUEUE = Symbol.for("hookjournal.amp.queue");
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

// The event as sent: agent.end's message list as a count and its last message.
function slim(name: string, event: any) {
  if (name === "agent.end") {
    const { messages, ...rest } = event ?? {};
    const count = Array.isArray(messages) ? messages.length : 0;
    return { ...rest, messages: count, lastMessage: count ? messages[count - 1] : undefined };
  }
  return event;
}

// One hookjournal process; resolves to its answer (a JSON object) or null, never rejects. Killed
// past its budget: Amp goes on without an answer.
function run(body: string, cwd: string, timeoutMs: number | undefined): Promise<any> {
  return new Promise((resolve) => {
    const args = ["hook", "--host", "amp"];
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

// Enters the queue now (in the order Amp called), settles when hookjournal answered.
function forward(name: string, event: any, cwd: string): Promise<any> {
  const body = payload({
    host: "amp",
    hook_event_name: name,
    host_time: new Date().toISOString(),
    cwd,
    session_id: event?.thread?.id,
    event: slim(name, event),
  });
  const q = g[QUEUE];
  const answer = q.tail.then(() => run(body, cwd, TIMEOUT_MS[name]));
  q.tail = answer.catch(() => null);
  return answer;
}

const context = (a: any) => a?.hookSpecificOutput?.additionalContext;

export default function (amp: any) {
  // The workspace Amp has open (stable for the plugin's process), else where it runs.
  let cwd = process.cwd();
  try {
    const root = amp?.system?.workspaceRoot;
    const path = root ? amp?.helpers?.filePathFromURI?.(root) : undefined;
    if (typeof path === "string" && path) cwd = path;
  } catch {}
  for (const { name } of SETTINGS.hooks ?? []) {
    amp.on(name, async (event: any) => {
      const answer = forward(name, event, cwd);
      // A request event: Amp waits for its result.
      if (name === "tool.call") {
        await answer;
        return { action: "allow" };
      }
      if (name === "agent.start") {
        const text = context(await answer);
        return text ? { message: { content: text, display: false } } : {};
      }
      // tool.result and agent.end: their results would change the tool's output or start a
      // turn; hookjournal changes neither.
      await answer;
      return undefined;
    });
  }
}
