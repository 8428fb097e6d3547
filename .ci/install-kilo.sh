#!/usr/bin/env bash
# Installs the real Kilo Code CLI (pinned) into the CI cache
# (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/kilo-<version>), where the end-to-end test
# tests/kilo.rs finds it; a later run reuses it. Idempotent: does nothing when the pinned binary
# is already there and answers --version.
#
#   bash .ci/install-kilo.sh                 # install (or verify) and print the version
#   KILO_VERSION=7.7.9 bash .ci/install-kilo.sh
#
# Only the npm registry is used (npm install by package name). The launcher @kilocode/cli@7.8.1
# needs a platform package 7.8.1 the registry does not have (its postinstall fails), so the
# platform package @kilocode/cli-linux-x64 is installed alone, without its scripts: its bin/kilo
# is one executable (Bun and Kilo), run directly.
set -euo pipefail

VERSION="${KILO_VERSION:-7.7.9}"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${KILO_PREFIX:-$CACHE/kilo-$VERSION}"
BIN="$PREFIX/node_modules/@kilocode/cli-linux-x64/bin/kilo"

# --version runs with HOME in a temp dir: it must not write the ~/.config/kilo of whoever runs this.
SCRATCH_HOME="$(mktemp -d)"
trap 'rm -rf "$SCRATCH_HOME"' EXIT

have_version() {
    [ -x "$BIN" ] || return 1
    local out
    out="$(HOME="$SCRATCH_HOME" XDG_CONFIG_HOME="$SCRATCH_HOME/.config" XDG_DATA_HOME="$SCRATCH_HOME/.local/share" \
        XDG_CACHE_HOME="$SCRATCH_HOME/.cache" XDG_STATE_HOME="$SCRATCH_HOME/.local/state" \
        KILO_DISABLE_AUTOUPDATE=1 KILO_TELEMETRY_LEVEL=off \
        "$BIN" --version 2>/dev/null)" || return 1
    case "$out" in
        *"$VERSION"*) return 0 ;;
        *) return 1 ;;
    esac
}

if have_version; then
    echo "kilo already installed at $BIN"
else
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-kilo: npm not found (apt-get install -y nodejs npm)" >&2
        exit 1
    fi
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) ;;
        *) echo "install-kilo: only linux-x64 is supported by this script" >&2; exit 1 ;;
    esac
    mkdir -p "$PREFIX"
    # A package.json of our own keeps npm from walking up into the repository.
    [ -f "$PREFIX/package.json" ] || echo '{"name":"hookjournal-kilo","private":true}' > "$PREFIX/package.json"
    npm install --prefix "$PREFIX" --no-audit --no-fund --no-save --ignore-scripts \
        "@kilocode/cli-linux-x64@$VERSION"
    chmod +x "$BIN" 2>/dev/null || true
    if ! have_version; then
        echo "install-kilo: $BIN does not report version $VERSION" >&2
        "$BIN" --version >&2 || true
        exit 1
    fi
fi
echo "$BIN"
HOME="$SCRATCH_HOME" XDG_CONFIG_HOME="$SCRATCH_HOME/.config" XDG_DATA_HOME="$SCRATCH_HOME/.local/share" \
    XDG_CACHE_HOME="$SCRATCH_HOME/.cache" XDG_STATE_HOME="$SCRATCH_HOME/.local/state" \
    KILO_DISABLE_AUTOUPDATE=1 KILO_TELEMETRY_LEVEL=off "$BIN" --version
