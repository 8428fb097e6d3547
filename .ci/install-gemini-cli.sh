#!/usr/bin/env bash
# Installs the real Gemini CLI (pinned) into the CI cache
# (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/gemini-cli-<version>), where the end-to-end
# test tests/gemini_cli.rs finds it; a later run reuses it. Idempotent: does nothing when the pinned
# CLI is already there and answers --version.
#
#   bash .ci/install-gemini-cli.sh             # install (or verify) and print the version
#   GEMINI_CLI_VERSION=0.61.0 bash .ci/install-gemini-cli.sh
#
# Only the npm registry is used (npm install by package name). The CLI is a Node program:
# the test runs `node <prefix>/node_modules/@google/gemini-cli/dist/index.js` through the
# package's bin link, node_modules/.bin/gemini.
set -euo pipefail

VERSION="${GEMINI_CLI_VERSION:-0.61.0}"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${GEMINI_CLI_PREFIX:-$CACHE/gemini-cli-$VERSION}"
BIN="$PREFIX/node_modules/.bin/gemini"

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
    echo "gemini-cli already installed at $BIN"
else
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-gemini-cli: npm not found (apt-get install -y nodejs npm)" >&2
        exit 1
    fi
    mkdir -p "$PREFIX"
    # A package.json of our own keeps npm from walking up into the repository.
    [ -f "$PREFIX/package.json" ] || echo '{"name":"hookjournal-gemini-cli","private":true}' > "$PREFIX/package.json"
    npm install --prefix "$PREFIX" --no-audit --no-fund --no-save "@google/gemini-cli@$VERSION"
    if ! have_version; then
        echo "install-gemini-cli: $BIN does not report version $VERSION" >&2
        "$BIN" --version >&2 || true
        exit 1
    fi
fi
echo "$BIN"
"$BIN" --version
