#!/usr/bin/env bash
# Installs the real Factory Droid (pinned) into the CI cache
# (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/droid-<version>), where the end-to-end test
# tests/droid.rs finds it; a later run reuses it. Idempotent: does nothing when the pinned binary
# is already there and answers --version.
#
#   bash .ci/install-droid.sh                # install (or verify) and print the version
#   DROID_VERSION=0.225.1 DROID_BINARY_VERSION=0.225.2 bash .ci/install-droid.sh
#
# Only the npm registry is used (npm install by package name). @factory/cli is a launcher whose
# optional dependency @factory/cli-linux-x64 ships the binary (Bun and Droid in one file); the
# registry has no 0.225.1 of that package, so it is named at its nearest version, 0.225.2, which
# is the binary that runs (its --version says 0.225.2). The launcher's postinstall (a hard link
# of the binary, or a download) is not needed: the test runs
# `<prefix>/node_modules/@factory/cli-linux-x64/bin/droid`.
set -euo pipefail

VERSION="${DROID_VERSION:-0.225.1}"
BINARY_VERSION="${DROID_BINARY_VERSION:-0.225.2}"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${DROID_PREFIX:-$CACHE/droid-$VERSION}"
BIN="$PREFIX/node_modules/@factory/cli-linux-x64/bin/droid"

# --version runs with HOME in a temp dir: it must not write the ~/.factory of whoever runs this.
SCRATCH_HOME="$(mktemp -d)"
trap 'rm -rf "$SCRATCH_HOME"' EXIT

have_version() {
    [ -x "$BIN" ] && [ -f "$PREFIX/node_modules/@factory/cli/package.json" ] || return 1
    local out
    out="$(HOME="$SCRATCH_HOME" "$BIN" --version 2>/dev/null)" || return 1
    [ "$out" = "$BINARY_VERSION" ]
}

if have_version; then
    echo "droid already installed at $PREFIX"
else
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-droid: npm not found (apt-get install -y nodejs npm)" >&2
        exit 1
    fi
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) ;;
        *) echo "install-droid: only linux-x64 is supported by this script" >&2; exit 1 ;;
    esac
    mkdir -p "$PREFIX"
    # A package.json of our own keeps npm from walking up into the repository.
    [ -f "$PREFIX/package.json" ] || echo '{"name":"hookjournal-droid","private":true}' > "$PREFIX/package.json"
    npm install --prefix "$PREFIX" --no-audit --no-fund --no-save --ignore-scripts \
        "@factory/cli@$VERSION" "@factory/cli-linux-x64@$BINARY_VERSION"
    chmod +x "$BIN" 2>/dev/null || true
    if ! have_version; then
        echo "install-droid: $PREFIX does not hold droid $BINARY_VERSION" >&2
        HOME="$SCRATCH_HOME" "$BIN" --version >&2 || true
        exit 1
    fi
fi
echo "$PREFIX"
HOME="$SCRATCH_HOME" "$BIN" --version
