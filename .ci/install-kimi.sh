#!/usr/bin/env bash
# Installs the real Kimi CLI (pinned, the Python `kimi-cli` package) into a venv in the CI cache
# (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/kimi-<version>), where the end-to-end test
# tests/kimi.rs finds it; a later run reuses it. Idempotent: does nothing when the venv already
# holds the pinned version.
#
#   bash .ci/install-kimi.sh                 # install (or verify) and print the version
#   KIMI_VERSION=1.52.0 PYTHON=python3.12 bash .ci/install-kimi.sh
#
# Needs CPython >= 3.12 (first of $PYTHON, python3.13, python3.12, pyenv's newest found). Only the Python package
# registry is used, through pip and uv (uv installed into the venv by pip: the 132 packages take
# seconds with it, minutes with pip). 1.52.0's `kimi` command is a deprecation gate (with no
# arguments it downloads another installer): the test runs `<prefix>/venv/bin/python -m
# kimi_cli.cli`, the agent 1.51.0's `kimi` ran (tests/fixtures/real-hosts/kimi-1.52.0/FACTS.md).
set -euo pipefail

VERSION="${KIMI_VERSION:-1.52.0}"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${KIMI_PREFIX:-$CACHE/kimi-$VERSION}"
PY="$PREFIX/venv/bin/python"

have_version() {
    [ -x "$PY" ] || return 1
    local v
    v="$("$PY" -c 'import importlib.metadata as m; print(m.version("kimi-cli"))' 2>/dev/null)" || return 1
    [ "$v" = "$VERSION" ] && "$PY" -c 'import kimi_cli.cli' 2>/dev/null
}

if have_version; then
    echo "kimi-cli already installed at $PREFIX"
else
    BASE=""
    # pyenv's shims answer only for its selected version: its installed 3.12/3.13 directly too.
    PYENV_PY="$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -V | tail -n 1 || true)"
    for p in ${PYTHON:-} python3.13 python3.12 $PYENV_PY; do
        if command -v "$p" >/dev/null 2>&1 &&
            "$p" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
            BASE="$p"
            break
        fi
    done
    if [ -z "$BASE" ]; then
        echo "install-kimi: no python >= 3.12 found (set PYTHON=)" >&2
        exit 1
    fi
    rm -rf "$PREFIX/venv"
    mkdir -p "$PREFIX"
    "$BASE" -m venv "$PREFIX/venv"
    "$PREFIX/venv/bin/pip" install --quiet --disable-pip-version-check uv
    "$PREFIX/venv/bin/uv" pip install --quiet --python "$PY" "kimi-cli==$VERSION"
    if ! have_version; then
        echo "install-kimi: $PREFIX does not hold kimi-cli $VERSION" >&2
        exit 1
    fi
fi
echo "$PREFIX"
"$PY" -c 'import importlib.metadata as m; print("kimi-cli", m.version("kimi-cli"))'
