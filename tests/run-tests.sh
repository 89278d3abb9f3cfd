#!/usr/bin/env bash
# Runs every tests/t_*.sh (or those named: tests/run-tests.sh t_15 t_21) but those CS_SKIP_TESTS
# names; each exits 0 (pass),
# 77 (skip, with a reason on stdout) or other (fail).
set -u
cd "$(dirname "$0")/.."
export BUILD="${BUILD:-build}" CUDA="${CUDA:-/usr/local/cuda}" CC="${CC:-gcc}"
pass=0 fail=0 skip=0 failed=()
mkdir -p "$BUILD/test-logs"
chosen=(tests/t_*.sh ${CS_EXTRA_TESTS:-})
[ $# -gt 0 ] && chosen=($(for n in "$@"; do ls tests/"$n"*.sh; done))
for t in "${chosen[@]}"; do
    name=$(basename "$t" .sh)
    # CS_SKIP_TESTS="t_13 t_28": tests a run leaves out on purpose (CI's second compiler and the
    # sanitizer builds leave out those that test nothing compiler- or sanitizer-specific)
    if [ -n "${CS_SKIP_TESTS:-}" ] && grep -qw -- "${name%%_[a-z]*}" <<<"$CS_SKIP_TESTS"; then
        skip=$((skip + 1)); printf 'SKIP  %-28s left out by CS_SKIP_TESTS\n' "$name"; continue
    fi
    log="$BUILD/test-logs/$name.log"
    start=$(date +%s%N)
    # A test that hangs fails after CS_TEST_TIMEOUT seconds, with everything it started (timeout
    # signals its process group): a deadlock shows as a failure, not as a run that never ends.
    timeout -k 10 "${CS_TEST_TIMEOUT:-900}" bash "$t" >"$log" 2>&1
    rc=$?
    [ $rc -eq 124 ] && echo "FAIL: timed out after ${CS_TEST_TIMEOUT:-900} s (a hang)" >>"$log"
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    case $rc in
    0) pass=$((pass + 1)); printf 'PASS  %-28s %6d ms\n' "$name" "$ms" ;;
    77) skip=$((skip + 1)); printf 'SKIP  %-28s %s\n' "$name" "$(tail -n 1 "$log")" ;;
    *) fail=$((fail + 1)); failed+=("$name"); printf 'FAIL  %-28s (log: %s)\n' "$name" "$log"; tail -n 20 "$log" | sed 's/^/      /' ;;
    esac
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
