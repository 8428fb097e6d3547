#!/usr/bin/env bash
# Installs the real OpenCode (pinned) into the CI cache
# (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/opencode-<version>), where the end-to-end test
# tests/opencode.rs finds it; a later run reuses it. Idempotent: does nothing when the pinned
# binary is already there and answers --version.
#
#   bash .ci/install-opencode.sh             # install (or verify) and print the version
#   OPENCODE_VERSION=1.18.33 bash .ci/install-opencode.sh
#
# Only the npm registry is used (npm install by package name): opencode-ai's optional dependency
# opencode-linux-x64 ships the binary (Bun and OpenCode in one file), so nothing else is
# downloaded. OpenCode installs its plugin package @opencode-ai/plugin with npm at every fresh
# start: this script also fills the npm cache the test gives it (<cache>/opencode-npm-cache) with
# that package and its dependencies, so a test run reads them from there.
set -euo pipefail

VERSION="${OPENCODE_VERSION:-1.18.33}"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${OPENCODE_PREFIX:-$CACHE/opencode-$VERSION}"
NPM_CACHE="$CACHE/opencode-npm-cache"
BIN="$PREFIX/node_modules/opencode-linux-x64/bin/opencode"

# --version runs with HOME in a temp dir: it must not write the ~/.config/opencode of whoever runs this.
SCRATCH_HOME="$(mktemp -d)"
trap 'rm -rf "$SCRATCH_HOME"' EXIT

have_version() {
    [ -x "$BIN" ] || return 1
    local out
    out="$(HOME="$SCRATCH_HOME" XDG_CONFIG_HOME="$SCRATCH_HOME/.config" XDG_DATA_HOME="$SCRATCH_HOME/.local/share" \
        XDG_CACHE_HOME="$SCRATCH_HOME/.cache" XDG_STATE_HOME="$SCRATCH_HOME/.local/state" \
        "$BIN" --version 2>/dev/null)" || return 1
    case "$out" in
        *"$VERSION"*) return 0 ;;
        *) return 1 ;;
    esac
}

if have_version; then
    echo "opencode already installed at $BIN"
else
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-opencode: npm not found (apt-get install -y nodejs npm)" >&2
        exit 1
    fi
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) ;;
        *) echo "install-opencode: only linux-x64 is supported by this script" >&2; exit 1 ;;
    esac
    mkdir -p "$PREFIX"
    # A package.json of our own keeps npm from walking up into the repository.
    [ -f "$PREFIX/package.json" ] || echo '{"name":"hookjournal-opencode","private":true}' > "$PREFIX/package.json"
    npm install --prefix "$PREFIX" --no-audit --no-fund --no-save "opencode-ai@$VERSION"
    if ! have_version; then
        echo "install-opencode: $BIN does not report version $VERSION" >&2
        "$BIN" --version >&2 || true
        exit 1
    fi
fi
# The package OpenCode installs at start (and its dependencies), into the npm cache the test hands
# it: installed once into a throwaway prefix with that cache, which then holds every tarball.
if [ ! -f "$NPM_CACHE/.plugin-$VERSION" ]; then
    npm install --prefix "$SCRATCH_HOME/plugin" --cache "$NPM_CACHE" --no-audit --no-fund --no-save \
        "@opencode-ai/plugin@$VERSION" >/dev/null
    touch "$NPM_CACHE/.plugin-$VERSION"
fi
echo "$BIN"
echo "npm cache for its plugin package: $NPM_CACHE"
HOME="$SCRATCH_HOME" XDG_CONFIG_HOME="$SCRATCH_HOME/.config" XDG_DATA_HOME="$SCRATCH_HOME/.local/share" \
    XDG_CACHE_HOME="$SCRATCH_HOME/.cache" XDG_STATE_HOME="$SCRATCH_HOME/.local/state" "$BIN" --version
