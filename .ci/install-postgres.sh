#!/usr/bin/env bash
# Installs PostgreSQL's server binaries (initdb, postgres) for tests/ship.rs, which starts its own
# server on 127.0.0.1 in a temp dir. Idempotent: does nothing when a server is already installed
# under /usr/lib/postgresql/*/bin. Debian's package, by name; no service is started or enabled.
#
#   bash .ci/install-postgres.sh          # install (or verify) and print the bin directory
set -euo pipefail

find_bindir() {
    local d
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$d/initdb" ] && [ -x "$d/postgres" ]; then
            echo "$d"
            return 0
        fi
    done
    return 1
}

if ! bindir="$(find_bindir)"; then
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "install-postgres: no PostgreSQL server and no apt-get; install postgresql (15 or later) by hand" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    # policy-rc.d keeps the package from starting a cluster service during installation.
    policy=/usr/sbin/policy-rc.d
    created_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' > "$policy"
        chmod +x "$policy"
        created_policy=1
    fi
    apt-get update -qq
    # `postgresql-15` on Debian 12; whatever `postgresql` names elsewhere.
    if apt-cache show postgresql-15 >/dev/null 2>&1; then
        apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null
    else
        apt-get install -y -qq --no-install-recommends postgresql >/dev/null
    fi
    if [ "$created_policy" = 1 ]; then rm -f "$policy"; fi
    bindir="$(find_bindir)" || { echo "install-postgres: installed, but no initdb found" >&2; exit 1; }
fi
# The TLS test makes its certificates with the openssl CLI (postgresql pulls it in via ssl-cert).
if ! command -v openssl >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssl >/dev/null
fi
command -v setpriv >/dev/null 2>&1 || { echo "install-postgres: setpriv (util-linux) is needed to run the test server as nobody" >&2; exit 1; }
echo "$bindir"
"$bindir/postgres" --version
