#!/usr/bin/env bash
# Builds the seed corpora of every fuzz target in fuzz/corpus/<target>/ (not committed: rebuilt
# from the repository each time) from the real fixtures under tests/fixtures/ (host payloads,
# bad inputs, transcripts, session files) and from the files the real binary writes when the
# fixture session is played through `hookjournal hook` (log, mirror, spool files, segments,
# archives, hot cache, CURRENT) and when `install` edits the agents' settings.
#
#   fuzz/seed.sh            # builds (or finds built) the debug binary of the main workspace
#   HOOKJOURNAL_BIN=… fuzz/seed.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
fx=$root/tests/fixtures
out=$root/fuzz/corpus
bin=${HOOKJOURNAL_BIN:-}
if [ ! -x "$bin" ]; then
    bin=$(cargo build -q -p hookjournal --message-format=json |
        sed -n 's/.*"executable":"\([^"]*\/hookjournal\)".*/\1/p' | tail -1)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Files are named after their content's hash, so rerunning adds nothing twice.
add() { # add TARGET FILE...
    local t=$1
    shift
    mkdir -p "$out/$t"
    for f in "$@"; do
        [ -f "$f" ] || continue
        cp "$f" "$out/$t/seed-$(sha1sum <"$f" | cut -c1-16)"
    done
}

# Host payloads: every fixture, real or written, and the bad ones.
payloads=$(find "$fx/events" "$fx/real-hosts" "$fx/bad" -type f -path '*payloads*' -o -type f -path '*/events/*' -o -type f -path '*/bad/*')
# And each real host's own payloads, beside its FACTS.md (Letta Code's, OpenHands', Kimi's, …).
payloads="$payloads $(find "$fx/real-hosts" -mindepth 2 -maxdepth 2 -type f -name '*.json')"
# shellcheck disable=SC2086
add host_payload $payloads
# shellcheck disable=SC2086
add hook_classify $payloads

# The fixture session, played through the real binary (as Claude Code would, transcripts
# growing), into a journal with small segments: every kind of file the journal writes.
j=$work/journal
mkdir -p "$j"
printf '[hook]\nsegment_events = 20\n' >"$j/config.toml"
python3 - "$fx/claude-session" "$work/steps" <<'EOF'
import json, sys, os
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst, exist_ok=True)
session = []
for i, line in enumerate(open(os.path.join(src, "session.steps.jsonl"))):
    hook = json.dumps(json.loads(line)["hook"]).replace("__FIXTURES__", os.path.join(src, "transcripts"))
    open(os.path.join(dst, f"{i:03}.json"), "w").write(hook)
    session.append(hook)
# A few invocations in a row, for the hook target's multi-event inputs.
for k in range(0, len(session), 6):
    open(os.path.join(dst, f"run-{k:03}.multi"), "w").write("\n\0".join(session[k:k + 6]))
EOF
for p in "$work"/steps/*.json; do
    env -u RALPH_AGENT_ID -u HOOKJOURNAL_DIR HOOKJOURNAL_DRAINER=inline \
        "$bin" --journal "$j" hook <"$p" >/dev/null 2>&1 || true
done
add hook_classify "$work"/steps/*.multi
# Record-only events stay in the spool until the next lock holder.
for i in 1 2 3; do
    printf '{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/%s"}}' "$i" |
        HOOKJOURNAL_DRAINER=inline "$bin" --journal "$j" hook >/dev/null 2>&1 || true
done
add wal_scan "$j"/wal/*.wal "$j"/wal/*.mirror
add spool_file "$j"/spool/*.spool
add segment "$j"/segments/*.seg
add archive "$j"/state/*.cold
# Hot cache: `[u16 le length of HEAD][HEAD][a partition file]`, for each partition file.
if [ -f "$j/hot/HEAD" ]; then
    head_len=$(stat -c %s "$j/hot/HEAD")
    for p in "$j"/hot/????????????????????????????????; do
        [ -f "$p" ] || continue
        python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<H", int(sys.argv[1])))' "$head_len" >"$work/hot"
        cat "$j/hot/HEAD" "$p" >>"$work/hot"
        add hot_cache "$work/hot"
    done
fi
# CURRENT, then a NUL, then ACTIVE_EMPTY (as a seal writes it, where there is one).
{ cat "$j/CURRENT"; printf '\0'; cat "$j/ACTIVE_EMPTY" 2>/dev/null || true; } >"$work/current"
add current "$work/current"
# Envelopes: the records of a segment (`HJSEG001`, then `[u32 le length][bincode]`).
python3 - "$j/segments" "$work/envelopes" <<'EOF'
import os, struct, sys
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst, exist_ok=True)
for name in sorted(os.listdir(src))[:2]:
    b = open(os.path.join(src, name), "rb").read()
    pos, end, n = 8, len(b) - 64, 0
    while pos + 4 <= end and n < 20:
        (l,) = struct.unpack_from("<I", b, pos)
        open(os.path.join(dst, f"{name}-{n}"), "wb").write(b[pos + 4:pos + 4 + l])
        pos, n = pos + 4 + l, n + 1
EOF
add envelope "$work"/envelopes/*

# config.toml: every TOML example in the docs, and the fixture journal's own.
mkdir -p "$work/toml"
awk '/^```toml/{f=1; n++; next} /^```/{f=0} f{print > (dir "/" n ".toml")}' dir="$work/toml" "$root"/docs/*.md "$root"/README.md
add config_toml "$work"/toml/*.toml "$j/config.toml"

# The agents' settings files, as install writes them into a fresh home and project, and
# what uninstall leaves.
home=$work/home
proj=$work/project
mkdir -p "$home" "$proj/.git"
for host in claude codex gemini openclaw; do
    (cd "$proj" && HOME=$home "$bin" install --host "$host" >/dev/null 2>&1) || true
done
(cd "$proj" && HOME=$home "$bin" install --host claude --statusline >/dev/null 2>&1) || true
settings=$(find "$home" "$proj" -type f \( -name '*.json' -o -name '*.json5' -o -name '*.toml' \) ! -path '*/.hookjournal/*')
# shellcheck disable=SC2086
add agent_settings $settings

# Transcripts and session files.
add transcript $(find "$fx/claude-session" "$fx/transcripts-corpus" -name '*.jsonl')
add gemini_chat "$fx"/real-hosts/gemini-0.61.0-chats/*.jsonl
add codex_rollout $(find "$fx/real-hosts/codex-0.169.0-rollouts" -name '*.jsonl')

for t in $(cat "$root/fuzz/targets.txt"); do
    printf '%-16s %4d seeds\n' "$t" "$(find "$out/$t" -type f 2>/dev/null | wc -l)"
done
