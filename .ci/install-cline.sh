#!/usr/bin/env bash
# Installs the real Cline CLI (pinned) into the CI cache
# (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/cline-<version>), where the end-to-end test
# tests/cline.rs finds it; a later run reuses it. Idempotent: does nothing when the pinned binary
# is already there and answers --version.
#
#   bash .ci/install-cline.sh                # install (or verify) and print the version
#   CLINE_VERSION=3.0.65 bash .ci/install-cline.sh
#
# Only the npm registry is used (npm install by package name): cline's optional dependency
# @cline/cli-linux-x64 ships the binary (Bun and the CLI in one file), which runs without node;
# nothing else is downloaded. The test runs <prefix>/node_modules/@cline/cli-linux-x64/bin/cline.
set -euo pipefail

# --version runs with HOME in a temp dir: it must not write the ~/.cline of whoever runs this.
SCRATCH_HOME="$(mktemp -d)"
trap 'rm -rf "$SCRATCH_HOME"' EXIT

VERSION="${CLINE_VERSION:-3.0.65}"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${CLINE_PREFIX:-$CACHE/cline-$VERSION}"
BIN="$PREFIX/node_modules/@cline/cli-linux-x64/bin/cline"

have_version() {
    [ -x "$BIN" ] || return 1
    local out
    out="$(HOME="$SCRATCH_HOME" CLINE_SESSION_BACKEND_MODE=local "$BIN" --version 2>/dev/null)" || return 1
    [ "$out" = "$VERSION" ]
}

if have_version; then
    echo "cline already installed at $PREFIX"
else
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-cline: npm not found (apt-get install -y nodejs npm)" >&2
        exit 1
    fi
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) ;;
        *) echo "install-cline: only linux-x64 is supported by this script" >&2; exit 1 ;;
    esac
    mkdir -p "$PREFIX"
    # A package.json of our own keeps npm from walking up into the repository.
    [ -f "$PREFIX/package.json" ] || echo '{"name":"hookjournal-cline","private":true}' > "$PREFIX/package.json"
    # The JS packages declare node >= 22; the binary the test runs needs none.
    npm install --prefix "$PREFIX" --no-audit --no-fund --no-save --engine-strict=false "cline@$VERSION"
    if ! have_version; then
        echo "install-cline: $PREFIX does not hold cline $VERSION" >&2
        "$BIN" --version >&2 || true
        exit 1
    fi
fi
echo "$PREFIX"
HOME="$SCRATCH_HOME" CLINE_SESSION_BACKEND_MODE=local "$BIN" --version
