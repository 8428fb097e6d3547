// hookjournal's OpenCode shim, written by `hookjournal install --host opencode` (no dependencies).
// OpenCode loads every .js file of .opencode/plugins/ (and ~/.config/opencode/plugins/) into its
// own process. Each hook and bus event named in SETTINGS is forwarded to `hookjournal hook --host
// opencode` as {"hook_event_name", "host_time", "directory", "input", "output"} (a hook) or
// {"hook_event_name", "host_time", "directory", "event"} (a bus event, named by its type) on
// stdin, with "parent_session_id" in a subagent's child session, through one ordered queue, and
// the answer hookjournal prints is applied the way the hook takes it: context appended to the
// prompt, to the tool's output, to the compaction prompt. Kilo Code (an OpenCode fork, the same
// plugin API) runs it from .kilo/plugins/ (and ~/.config/kilo/plugins/): install writes
// "host":"kilo" in its settings, and it is then `hookjournal hook --host kilo`, each payload
// saying "host":"kilo" (Kilo sets OPENCODE=1 too, which tells nothing).
import { spawn, spawnSync } from "node:child_process";

// HOOKJOURNAL-SETTINGS (this line and the next are written by install)
const SETTINGS = {};

const QUEUE = Symbol.for("hookjournal.opencode.queue");
globalThis[QUEUE] ??= { tail: Promise.resolve(), waiting: [] };
const TIMEOUT_MS = Object.fromEntries((SETTINGS.hooks ?? []).map((h) => [h.name, h.timeoutMs]));

// Functions, signals and cycles do not serialise.
function payload(fields) {
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

// One hookjournal process; resolves to its answer (a JSON object) or null, never rejects. Killed
// past its budget: OpenCode goes on without an answer.
function run(body, directory, timeoutMs) {
  return new Promise((resolve) => {
    const args = hookArgs();
    let out = "";
    let err = "";
    let child;
    try {
      child = spawn(SETTINGS.command, args, { cwd: directory, stdio: ["pipe", "pipe", "pipe"] });
    } catch (e) {
      console.error(`hookjournal: ${e}`);
      return resolve(null);
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs ?? 10000);
    child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (err += d));
    child.on("error", (e) => {
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

function hookArgs() {
  const args = ["hook", "--host", SETTINGS.host ?? "opencode"];
  if (SETTINGS.journal) args.push("--journal", SETTINGS.journal);
  return args;
}

// A subagent runs in a child session (`session.created` names its `parentID`, before the child's
// first hook): each child's root session, so that the child's calls are filed under the session
// that started it, as `parent_session_id`.
const PARENTS = Symbol.for("hookjournal.opencode.parents");
globalThis[PARENTS] ??= new Map();

function sessionOf(fields) {
  const p = fields.event?.properties;
  return fields.input?.sessionID ?? p?.sessionID ?? p?.info?.sessionID ?? p?.info?.id;
}

function rootOf(fields) {
  const parents = globalThis[PARENTS];
  const info = fields.event?.type === "session.created" ? fields.event.properties?.info : undefined;
  if (info?.id && info?.parentID) parents.set(info.id, parents.get(info.parentID) ?? info.parentID);
  const session = sessionOf(fields);
  return session === undefined ? undefined : parents.get(session);
}

// Enters the queue now (in the order OpenCode called), settles when hookjournal answered.
function forward(name, directory, fields) {
  const parent_session_id = rootOf(fields);
  const body = payload({
    hook_event_name: name,
    ...(SETTINGS.host ? { host: SETTINGS.host } : {}),
    host_time: new Date().toISOString(),
    directory,
    ...(parent_session_id ? { parent_session_id } : {}),
    ...fields,
  });
  const q = globalThis[QUEUE];
  const entry = { body, directory, timeoutMs: TIMEOUT_MS[name] };
  q.waiting.push(entry);
  const answer = q.tail.then(() => {
    const i = q.waiting.indexOf(entry);
    if (i >= 0) q.waiting.splice(i, 1);
    return run(body, directory, entry.timeoutMs);
  });
  q.tail = answer.catch(() => null);
  return answer;
}

// OpenCode exits without waiting for its bus events' handlers (`opencode run` ends right after
// `session.idle`): what is still queued then is forwarded before the process goes, in order,
// each hookjournal process waited for (its answer can no longer be applied).
const EXIT = Symbol.for("hookjournal.opencode.exit");
if (!globalThis[EXIT]) {
  globalThis[EXIT] = true;
  process.on("exit", () => {
    for (const e of globalThis[QUEUE].waiting.splice(0)) {
      try {
        spawnSync(SETTINGS.command, hookArgs(), {
          cwd: e.directory,
          input: e.body,
          stdio: ["pipe", "ignore", "inherit"],
          timeout: e.timeoutMs ?? 10000,
        });
      } catch {}
    }
  });
}

const context = (a) => a?.hookSpecificOutput?.additionalContext;

// A bus event worth a record: not the streamed deltas and part states; an assistant message only
// once it is complete (its tokens and cost).
function wanted(event) {
  if (!(event?.type in TIMEOUT_MS)) return false;
  if (event.type !== "message.updated") return true;
  const info = event.properties?.info;
  return info?.role === "assistant" && Boolean(info?.time?.completed);
}

export const HookjournalPlugin = async ({ directory }) => {
  const send = (name, fields) => forward(name, directory, fields);
  const hooks = {
    event: async ({ event }) => {
      if (wanted(event)) await send(event.type, { event });
    },
  };
  const hook = (name, apply) => {
    if (!(name in TIMEOUT_MS)) return;
    hooks[name] = async (input, output) => {
      const answer = await send(name, { input, output });
      const text = context(answer);
      if (text && apply) apply(output, text);
    };
  };
  // The prompt: the last text part, as stored and sent.
  hook("chat.message", (output, text) => {
    const last = [...(output.parts ?? [])].reverse().find((p) => p.type === "text");
    if (last) last.text = `${last.text}\n\n${text}`;
  });
  hook("command.execute.before");
  hook("tool.execute.before");
  hook("tool.execute.after", (output, text) => {
    output.output = `${output.output ?? ""}\n\n${text}`;
  });
  hook("experimental.session.compacting", (output, text) => {
    (output.context ??= []).push(text);
  });
  return hooks;
};
