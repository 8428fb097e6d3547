#!/usr/bin/env bash
# Installs ccusage (pinned) into the CI cache
# (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/ccusage-<version>), where tests/codex_cli.rs
# (its Codex report, `ccusage codex daily|session --offline --json`) and `cargo bench --bench hook`
# find it; a later run reuses it. Idempotent: does nothing when the pinned binary is already there
# and answers --version.
#
#   bash .ci/install-ccusage.sh              # install (or verify) and print the version
#   CCUSAGE_VERSION=20.0.24 bash .ci/install-ccusage.sh
#
# Only the npm registry is used (npm install by package name). Since ccusage 19 the Codex report is
# part of ccusage itself (`ccusage codex …`; the separate @ccusage/codex package is a deprecated
# stub). The native executable ships in the platform package @ccusage/ccusage-linux-x64; `--offline`
# prices from the LiteLLM table embedded in it, so the report needs no network.
set -euo pipefail

VERSION="${CCUSAGE_VERSION:-20.0.24}"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${CCUSAGE_PREFIX:-$CACHE/ccusage-$VERSION}"
BIN="$PREFIX/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage"

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
    echo "ccusage already installed at $BIN"
else
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-ccusage: npm not found (apt-get install -y nodejs npm)" >&2
        exit 1
    fi
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) ;;
        *) echo "install-ccusage: only linux-x64 is supported by this script" >&2; exit 1 ;;
    esac
    mkdir -p "$PREFIX"
    # A package.json of our own keeps npm from walking up into the repository.
    [ -f "$PREFIX/package.json" ] || echo '{"name":"hookjournal-ccusage","private":true}' > "$PREFIX/package.json"
    npm install --prefix "$PREFIX" --no-audit --no-fund --ignore-scripts --no-save \
        "ccusage@$VERSION" "@ccusage/ccusage-linux-x64@$VERSION"
    chmod +x "$BIN" 2>/dev/null || true
    if ! have_version; then
        echo "install-ccusage: $BIN does not report version $VERSION" >&2
        "$BIN" --version >&2 || true
        exit 1
    fi
fi
echo "$BIN"
"$BIN" --version
