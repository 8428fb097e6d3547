#!/usr/bin/env bash
# Installs the real Claude Code CLI (pinned) into the CI cache
# (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/claude-code-<version>), where the end-to-end
# test tests/claude_code.rs finds it; a later run reuses it. Idempotent: does nothing when the pinned
# binary is already there and answers --version.
#
#   bash .ci/install-claude-code.sh            # install (or verify) and print the version
#   CLAUDE_CODE_VERSION=2.1.197 bash .ci/install-claude-code.sh
#
# Only the npm registry is used (npm install by package name). The wrapper package's
# postinstall (which would download/copy a native binary) is not needed: the real
# executable ships inside the platform package
# node_modules/@anthropic-ai/claude-code-linux-x64/claude.
set -euo pipefail

VERSION="${CLAUDE_CODE_VERSION:-2.1.197}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${CLAUDE_CODE_PREFIX:-$CACHE/claude-code-$VERSION}"
BIN="$PREFIX/node_modules/@anthropic-ai/claude-code-linux-x64/claude"

have_version() {
    [ -x "$BIN" ] || return 1
    local out
    out="$("$BIN" --version 2>/dev/null)" || return 1
    case "$out" in
        "$VERSION"*) return 0 ;;
        *) return 1 ;;
    esac
}

if have_version; then
    echo "claude-code already installed at $BIN"
else
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-claude-code: npm not found (apt-get install -y nodejs npm)" >&2
        exit 1
    fi
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) ;;
        *) echo "install-claude-code: only linux-x64 is supported by this script" >&2; exit 1 ;;
    esac
    mkdir -p "$PREFIX"
    # A package.json of our own keeps npm from walking up into the repository.
    [ -f "$PREFIX/package.json" ] || echo '{"name":"hookjournal-claude-code","private":true}' > "$PREFIX/package.json"
    # --ignore-scripts: the wrapper's postinstall is not needed (see above) and may try to fetch.
    npm install --prefix "$PREFIX" --no-audit --no-fund --ignore-scripts --no-save \
        "@anthropic-ai/claude-code@$VERSION" \
        "@anthropic-ai/claude-code-linux-x64@$VERSION"
    chmod +x "$BIN" 2>/dev/null || true
    if ! have_version; then
        echo "install-claude-code: $BIN does not report version $VERSION" >&2
        "$BIN" --version >&2 || true
        exit 1
    fi
fi
echo "$BIN"
"$BIN" --version
