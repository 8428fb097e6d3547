#!/usr/bin/env bash
# Installs the real OpenHands CLI (pinned, the Python `openhands` package) into a venv in the CI
# cache (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/openhands-<version>), where the
# end-to-end test tests/openhands.rs finds it; a later run reuses it. Idempotent: does nothing
# when the venv already holds the pinned version.
#
#   bash .ci/install-openhands.sh                 # install (or verify) and print the version
#   OPENHANDS_VERSION=1.16.0 PYTHON=python3.12 bash .ci/install-openhands.sh
#
# OpenHands 1.16.0 requires CPython ==3.12.* (first of $PYTHON, python3.12, pyenv's newest 3.12
# found). Only the Python package registry is used, through pip and uv (uv installed into the
# venv by pip: pip's own resolver did not finish the 203 packages in 7 minutes, uv takes
# seconds; tests/fixtures/real-hosts/openhands-1.16.0/FACTS.md). Its terminal tool runs commands
# in tmux: installed from Debian's packages where it is missing.
set -euo pipefail

if ! command -v tmux >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq tmux) >/dev/null
fi

VERSION="${OPENHANDS_VERSION:-1.16.0}"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${OPENHANDS_PREFIX:-$CACHE/openhands-$VERSION}"
PY="$PREFIX/venv/bin/python"

have_version() {
    [ -x "$PREFIX/venv/bin/openhands" ] || return 1
    local v
    v="$("$PY" -c 'import importlib.metadata as m; print(m.version("openhands"))' 2>/dev/null)" || return 1
    [ "$v" = "$VERSION" ]
}

if have_version; then
    echo "openhands already installed at $PREFIX"
else
    BASE=""
    # pyenv's shims answer only for its selected version: its installed 3.12 directly too.
    PYENV_PY="$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3 2>/dev/null | sort -V | tail -n 1 || true)"
    for p in ${PYTHON:-} python3.12 $PYENV_PY; do
        if command -v "$p" >/dev/null 2>&1 &&
            "$p" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 12) else 1)' 2>/dev/null; then
            BASE="$p"
            break
        fi
    done
    if [ -z "$BASE" ]; then
        echo "install-openhands: no python 3.12 found (set PYTHON=)" >&2
        exit 1
    fi
    rm -rf "$PREFIX/venv"
    mkdir -p "$PREFIX"
    "$BASE" -m venv "$PREFIX/venv"
    "$PREFIX/venv/bin/pip" install --quiet --disable-pip-version-check uv
    "$PREFIX/venv/bin/uv" pip install --quiet --python "$PY" "openhands==$VERSION"
    if ! have_version; then
        echo "install-openhands: $PREFIX does not hold openhands $VERSION" >&2
        exit 1
    fi
fi
echo "$PREFIX"
"$PY" -c 'import importlib.metadata as m; print("openhands", m.version("openhands"))'
