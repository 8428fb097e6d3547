#!/usr/bin/env bash
# Installs the real Mistral Vibe CLI (pinned, the Python `mistral-vibe` package, a wheel bundling
# its Rust TUI) into a venv in the CI cache
# (${HOOKJOURNAL_CI_CACHE:-~/.cache/hookjournal-ci}/mistral-vibe-<version>), where the end-to-end
# test tests/vibe.rs finds it; a later run reuses it. Idempotent: does nothing when the venv
# already holds the pinned version.
#
#   bash .ci/install-vibe.sh                      # install (or verify) and print the version
#   VIBE_VERSION=3.0.3 PYTHON=python3.12 bash .ci/install-vibe.sh
#
# Mistral Vibe 3.0.3 requires CPython >= 3.12 (first of $PYTHON, python3.12, pyenv's newest 3.12
# found). Only the Python package registry is used, through pip and uv. Its pinned
# `certifi==2026.10.19` is not in the registry (only 2026.10.19.post1): overridden, or uv finds
# no solution (tests/fixtures/real-hosts/mistral-vibe-3.0.3/FACTS.md).
set -euo pipefail

VERSION="${VIBE_VERSION:-3.0.3}"
CACHE="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
PREFIX="${VIBE_PREFIX:-$CACHE/mistral-vibe-$VERSION}"
PY="$PREFIX/venv/bin/python"

have_version() {
    [ -x "$PREFIX/venv/bin/vibe" ] || return 1
    local v
    v="$("$PY" -c 'import importlib.metadata as m; print(m.version("mistral-vibe"))' 2>/dev/null)" || return 1
    [ "$v" = "$VERSION" ]
}

if have_version; then
    echo "mistral-vibe already installed at $PREFIX"
else
    BASE=""
    # pyenv's shims answer only for its selected version: its installed 3.12 directly too.
    PYENV_PY="$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3 2>/dev/null | sort -V | tail -n 1 || true)"
    for p in ${PYTHON:-} python3.12 $PYENV_PY; do
        if command -v "$p" >/dev/null 2>&1 &&
            "$p" -c 'import sys; sys.exit(0 if sys.version_info[:2] >= (3, 12) else 1)' 2>/dev/null; then
            BASE="$p"
            break
        fi
    done
    if [ -z "$BASE" ]; then
        echo "install-vibe: no python >= 3.12 found (set PYTHON=)" >&2
        exit 1
    fi
    rm -rf "$PREFIX/venv"
    mkdir -p "$PREFIX"
    "$BASE" -m venv "$PREFIX/venv"
    "$PREFIX/venv/bin/pip" install --quiet --disable-pip-version-check uv
    echo "certifi==2026.10.19.post1" >"$PREFIX/overrides.txt"
    "$PREFIX/venv/bin/uv" pip install --quiet --python "$PY" --override "$PREFIX/overrides.txt" \
        "mistral-vibe==$VERSION"
    if ! have_version; then
        echo "install-vibe: $PREFIX does not hold mistral-vibe $VERSION" >&2
        exit 1
    fi
fi
echo "$PREFIX"
"$PY" -c 'import importlib.metadata as m; print("mistral-vibe", m.version("mistral-vibe"))'
