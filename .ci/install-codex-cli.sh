#!/usr/bin/env bash
# Installs the real Codex CLI (pinned) into the CI cache
# (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/codex-cli-<version>), where the end-to-end
# test tests/codex_cli.rs finds it; a later run reuses it. Idempotent: does nothing when the pinned
# binary is already there and answers --version.
#
#   bash .ci/install-codex-cli.sh              # install (or verify) and print the version
#   CODEX_CLI_VERSION=0.169.0 bash .ci/install-codex-cli.sh
#
# Only the npm registry is used (npm install by package name). The wrapper package's JS launcher
# is not needed: the native executable ships in the platform package (an npm alias of
# @openai/codex@<version>-linux-x64), under vendor/x86_64-unknown-linux-musl/bin/codex.
set -euo pipefail

VERSION="${CODEX_CLI_VERSION:-0.169.0}"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${CODEX_CLI_PREFIX:-$CACHE/codex-cli-$VERSION}"
BIN="$PREFIX/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"

have_version() {
    [ -x "$BIN" ] || return 1
    local out
    out="$("$BIN" --version 2>/dev/null)" || return 1
    case "$out" in
        *"$VERSION"*) return 0 ;;
        *) return 1 ;;
    esac
}

if have_version; then
    echo "codex-cli already installed at $BIN"
else
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-codex-cli: npm not found (apt-get install -y nodejs npm)" >&2
        exit 1
    fi
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) ;;
        *) echo "install-codex-cli: only linux-x64 is supported by this script" >&2; exit 1 ;;
    esac
    mkdir -p "$PREFIX"
    # A package.json of our own keeps npm from walking up into the repository.
    [ -f "$PREFIX/package.json" ] || echo '{"name":"hookjournal-codex-cli","private":true}' > "$PREFIX/package.json"
    npm install --prefix "$PREFIX" --no-audit --no-fund --ignore-scripts --no-save \
        "@openai/codex@$VERSION" \
        "@openai/codex-linux-x64@npm:@openai/codex@$VERSION-linux-x64"
    chmod +x "$BIN" 2>/dev/null || true
    if ! have_version; then
        echo "install-codex-cli: $BIN does not report version $VERSION" >&2
        "$BIN" --version >&2 || true
        exit 1
    fi
fi
echo "$BIN"
"$BIN" --version
