#!/usr/bin/env bash
# Debian's chromium, for tests/report_html.rs (the HTML report rendered headless). Idempotent:
# nothing to do when /usr/bin/chromium exists. apt's lock may be held by another installer: wait.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
for attempt in 1 2 3 4 5 6 7 8 9 10; do
    if $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null; then
        break
    fi
    echo "apt busy or failing (attempt $attempt); retrying in 15 s" >&2
    sleep 15
done
/usr/bin/chromium --version
