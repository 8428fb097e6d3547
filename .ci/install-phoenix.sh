#!/usr/bin/env bash
# Installs Arize Phoenix (pinned, from the Python package registry) for tests/traces.rs, which
# starts its own server on 127.0.0.1 (HTTP and gRPC both on loopback) in a temp dir. Cached: a
# virtual environment under the CI cache, reused while its pinned version is the one installed.
# Phoenix needs Python >= 3.10; the image's pyenv has 3.12.
#
#   bash .ci/install-phoenix.sh          # install (or verify) and print the `phoenix` program
set -euo pipefail

version="${PHOENIX_VERSION:-20.26.1}"
cache="${HOOKJOURNAL_CI_CACHE:-$HOME/.cache/hookjournal-ci}"
venv="$cache/phoenix-$version"
program="$venv/bin/phoenix"

if [ ! -x "$program" ] || ! "$venv/bin/python" -c "import phoenix" >/dev/null 2>&1; then
    python=""
    for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3 \
        "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3 python3.12 python3.13 python3; do
        if command -v "$p" >/dev/null 2>&1 &&
            "$p" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
            python="$p"
            break
        fi
    done
    if [ -z "$python" ]; then
        echo "install-phoenix: no Python 3.10 or newer found" >&2
        exit 1
    fi
    rm -rf "$venv"
    mkdir -p "$cache"
    "$python" -m venv "$venv"
    # uv installs Phoenix's ~200 packages in seconds where pip takes minutes.
    "$venv/bin/python" -m pip install -q --disable-pip-version-check uv
    "$venv/bin/uv" pip install -q --python "$venv/bin/python" "arize-phoenix==$version"
fi
"$venv/bin/python" -c "import phoenix, sys; print('phoenix', phoenix.__version__, file=sys.stderr)"
echo "$program"
