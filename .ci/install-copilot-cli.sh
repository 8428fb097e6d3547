#!/usr/bin/env bash
# Installs the real GitHub Copilot CLI (pinned) into the CI cache
# (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/copilot-cli-<version>), where the end-to-end
# test tests/copilot_cli.rs finds it; a later run reuses it. Idempotent: does nothing when the
# pinned binary is already there, answers --version and its bundle is unpacked.
#
#   bash .ci/install-copilot-cli.sh            # install (or verify) and print the version
#   COPILOT_CLI_VERSION=1.0.102 bash .ci/install-copilot-cli.sh
#
# Only the npm registry is used (npm install by package name). The package is a loader: the
# real program is the native executable of the platform package
# (node_modules/@github/copilot-linux-x64/copilot), which unpacks its JS bundle (~235 MB) into
# $XDG_CACHE_HOME/copilot/pkg/linux-x64/<version>/ the first time it starts. That cache is kept
# here too ($CACHE/copilot-xdg-cache, printed as XDG_CACHE_HOME=…): the test points every run's
# XDG_CACHE_HOME at it, so a fresh HOME does not unpack the bundle again.
set -euo pipefail

VERSION="${COPILOT_CLI_VERSION:-1.0.102}"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${COPILOT_CLI_PREFIX:-$CACHE/copilot-cli-$VERSION}"
XDG="$CACHE/copilot-xdg-cache"
BIN="$PREFIX/node_modules/@github/copilot-linux-x64/copilot"
BUNDLE="$XDG/copilot/pkg/linux-x64/$VERSION"

have_version() {
    [ -x "$BIN" ] || return 1
    local out
    out="$(XDG_CACHE_HOME="$XDG" HOME="$CACHE/copilot-home" "$BIN" --version 2>/dev/null)" || return 1
    case "$out" in
        *"$VERSION"*) return 0 ;;
        *) return 1 ;;
    esac
}

unpacked() {
    [ -d "$BUNDLE" ] && [ -n "$(ls -A "$BUNDLE" 2>/dev/null)" ]
}

if have_version && unpacked; then
    echo "copilot-cli already installed at $BIN"
else
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-copilot-cli: npm not found (apt-get install -y nodejs npm)" >&2
        exit 1
    fi
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) ;;
        *) echo "install-copilot-cli: only linux-x64 is supported by this script" >&2; exit 1 ;;
    esac
    if ! have_version; then
        mkdir -p "$PREFIX"
        # A package.json of our own keeps npm from walking up into the repository.
        [ -f "$PREFIX/package.json" ] || echo '{"name":"hookjournal-copilot-cli","private":true}' > "$PREFIX/package.json"
        npm install --prefix "$PREFIX" --no-audit --no-fund --no-save "@github/copilot@$VERSION"
        chmod +x "$BIN" 2>/dev/null || true
    fi
    mkdir -p "$XDG" "$CACHE/copilot-home"
    # The first start unpacks the bundle; `help` starts the program without a model or a login.
    XDG_CACHE_HOME="$XDG" HOME="$CACHE/copilot-home" COPILOT_OFFLINE=true \
        "$BIN" help >/dev/null 2>&1 || true
    if ! have_version; then
        echo "install-copilot-cli: $BIN does not report version $VERSION" >&2
        XDG_CACHE_HOME="$XDG" "$BIN" --version >&2 || true
        exit 1
    fi
    if ! unpacked; then
        echo "install-copilot-cli: the bundle was not unpacked into $BUNDLE" >&2
        exit 1
    fi
fi
echo "$BIN"
echo "XDG_CACHE_HOME=$XDG"
XDG_CACHE_HOME="$XDG" HOME="$CACHE/copilot-home" "$BIN" --version
