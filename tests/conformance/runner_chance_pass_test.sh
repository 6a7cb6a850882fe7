#!/bin/sh
# The runner's expectations syntax: a listed test that passes fails the run, unless it is listed
# as ~name (a random draw that can match by chance), which is reported and tolerated.
# Usage: runner_chance_pass_test.sh ONYX_CONFORMANCE SUITE_DIR
runner=$1 suite=$2
[ -d "$suite/test_abs" ] || { echo "skipped: no $suite/test_abs"; exit 77; }
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
fail=0

printf '~test_abs  listed as a random draw\n' > "$work/chance.txt"
out=$("$runner" --suite "$suite" --filter test_abs --expect "$work/chance.txt") || { echo "~test_abs passing failed the run"; fail=1; }
echo "$out" | grep -q '^CHANCE PASS test_abs ' || { echo "no CHANCE PASS line: $out"; fail=1; }

printf 'test_abs  listed as a known failure\n' > "$work/plain.txt"
if "$runner" --suite "$suite" --filter test_abs --expect "$work/plain.txt" > "$work/out.txt"; then
  echo "a listed test that passes did not fail the run"; fail=1
fi
grep -q '^UNEXPECTED PASS test_abs ' "$work/out.txt" || { echo "no UNEXPECTED PASS line"; fail=1; }

[ $fail = 0 ] && echo "2 passed, 0 failed" || echo "failed"
exit $fail
