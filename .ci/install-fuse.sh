#!/usr/bin/env bash
# Debian's fuse3 for the power-loss test (tests/power_loss.rs) and the crash file system's own
# tests (crashfs/). As root they mount with mount(2) and need only the kernel's /dev/fuse;
# fusermount3 is what a mount falls back to without that privilege. Idempotent: nothing to
# install when fusermount3 exists. apt's lock may be held by another installer: wait.
set -euo pipefail
if ! command -v fusermount3 >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    for attempt in 1 2 3 4 5 6 7 8 9 10; do
        if $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends fuse3 >/dev/null; then
            break
        fi
        echo "apt busy or failing (attempt $attempt); retrying in 15 s" >&2
        sleep 15
    done
fi
command -v fusermount3 >/dev/null 2>&1 || { echo "install-fuse: fusermount3 is still missing" >&2; exit 1; }
if [ ! -c /dev/fuse ]; then
    modprobe fuse 2>/dev/null || true
fi
[ -c /dev/fuse ] || { echo "install-fuse: no /dev/fuse: the kernel's fuse module is not loaded" >&2; exit 1; }
fusermount3 --version
