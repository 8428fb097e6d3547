#!/usr/bin/env bash
# Runs every fuzz target (or the ones named) for SECONDS each, seeded from the real fixtures
# (fuzz/seed.sh), with the nightly toolchain and cargo-fuzz (installed when missing). CI runs it
# for a few seconds per target; a longer run is the same command with more seconds.
#
#   fuzz/run.sh SECONDS [TARGET...]
#
# Exits 0 when no target crashed; non-zero when the build failed or a target crashed, leaked,
# ran past 10 s on one input, or allocated more than 512 MB at once (the input is kept in
# fuzz/artifacts/TARGET/, and reproduced with `cargo +nightly fuzz run TARGET FILE`).
# Executions per target are printed at the end.
set -uo pipefail
cd "$(dirname "$0")"
secs=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
if [ $# -gt 0 ]; then targets=("$@"); else mapfile -t targets <targets.txt; fi
named=$#

if ! cargo +nightly --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal || exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked || exit 1
fi
bash seed.sh >/dev/null || exit 1
# Release code with debug assertions (overflow checks included), address sanitizer.
build=(--release --debug-assertions)
if [ "$named" -gt 0 ]; then
    for t in "${targets[@]}"; do
        cargo +nightly fuzz build "${build[@]}" "$t" || exit 1
    done
else
    cargo +nightly fuzz build "${build[@]}" || exit 1
fi

failed=()
summary=()
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t"
    log=$(mktemp)
    cargo +nightly fuzz run "${build[@]}" "$t" "corpus/$t" -- \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
        -print_final_stats=1 >"$log" 2>&1
    status=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    summary+=("$(printf '%-16s %10s executions  %s' "$t" "${execs:-?}" "$([ $status -eq 0 ] && echo ok || echo CRASH)")")
    echo "${summary[-1]}"
    if [ $status -ne 0 ]; then
        failed+=("$t")
        echo "=== $t: crashed (exit $status)"
        grep -E 'ERROR|panicked|SUMMARY|Test unit written|==[0-9]+==' "$log" | head -20
    fi
    rm -f "$log"
done
echo "--- executions in ${secs}s per target"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: ${#failed[@]} target(s) crashed: ${failed[*]}"
    exit 1
fi
echo "fuzz: no crash in ${#targets[@]} target(s), ${secs}s each"
