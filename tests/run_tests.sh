#!/usr/bin/env bash
# run_tests.sh - run every cmocka binary given as arguments, then every
# shell test script tests/*/test_*.sh, and print one closing line
# "N passed, N failed".  Exit 1 when anything failed.
#   --cli-only   run only the shell scripts (valgrind runs use this)
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
export BUILD
# Tests never see a developer's own price updates.
GPUPLAN_DATA_DIR=$(mktemp -d)
export GPUPLAN_DATA_DIR
trap 'rm -rf "$GPUPLAN_DATA_DIR"' EXIT
passed=0 failed=0 failed_names=""

count_cmocka() { # $1 = output file
	local p f
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$1" | tail -n1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$1" | tail -n1)
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
}

cli_only=0
[ "${1:-}" = "--cli-only" ] && { cli_only=1; shift; }

if [ $cli_only = 0 ]; then
	for t in "$@"; do
		out=$(mktemp)
		"$t" 2>&1 | tee "$out"
		rc=${PIPESTATUS[0]}
		count_cmocka "$out"
		if [ "$rc" -ne 0 ] && ! grep -q '^\[  FAILED  \]' "$out"; then
			echo "$t: exited $rc without a cmocka summary"
			failed=$((failed + 1))
		fi
		[ "$rc" -ne 0 ] && failed_names="$failed_names $t"
		rm -f "$out"
	done
fi

for s in tests/*/test_*.sh; do
	[ -e "$s" ] || continue
	out=$(mktemp)
	bash "$s" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	p=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1/p' "$out" | tail -n1)
	f=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\2/p' "$out" | tail -n1)
	if [ -z "$p" ]; then
		echo "$s: exited $rc without a summary line"
		f=1 p=0
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	[ "$rc" -ne 0 ] && failed_names="$failed_names $s"
	rm -f "$out"
done

echo
[ -n "$failed_names" ] && echo "failing:$failed_names"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ -z "$failed_names" ]
