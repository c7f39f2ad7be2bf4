#!/usr/bin/env bash
# run_tests.sh - run every cmocka binary given as arguments, then every
# shell test script tests/*/test_*.sh, and print one closing line
# "N passed, N failed".  Exit 1 when anything failed.
#   --cli-only   run only the shell scripts (valgrind runs use this)
# Tests run TEST_JOBS at a time (default: one per core), each with its own
# GPUPLAN_DATA_DIR; their outputs are printed whole, in the order above.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
JOBS=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
RES=$(mktemp -d)
export BUILD RES
trap 'rm -rf "$RES"' EXIT

cli_only=0
[ "${1:-}" = "--cli-only" ] && { cli_only=1; shift; }

# run_one INDEX PROGRAM: a .sh runs under bash.  Tests never see a
# developer's own price updates, nor another test's.
run_one() {
	local data
	data=$(mktemp -d)
	case $2 in
	*.sh) GPUPLAN_DATA_DIR=$data bash "$2" ;;
	*) GPUPLAN_DATA_DIR=$data "$2" ;;
	esac >"$RES/$1.out" 2>&1 </dev/null
	echo $? >"$RES/$1.rc"
	rm -rf "$data"
}
export -f run_one

tests=()
[ $cli_only = 0 ] && tests=("$@")
for s in tests/*/test_*.sh; do
	[ -e "$s" ] && tests+=("$s")
done
for i in "${!tests[@]}"; do
	printf '%s\0%s\0' "$i" "${tests[$i]}"
done | xargs -0 -n 2 -P "$JOBS" bash -c 'run_one "$1" "$2"' _

passed=0 failed=0 failed_names=""
for i in "${!tests[@]}"; do
	t=${tests[$i]} out=$RES/$i.out
	cat "$out"
	rc=$(cat "$RES/$i.rc" 2>/dev/null || echo 1)
	case $t in
	*.sh) # "N passed, N failed" closes a script's output
		p=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1/p' "$out" | tail -n1)
		f=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\2/p' "$out" | tail -n1)
		if [ -z "$p" ]; then
			echo "$t: exited $rc without a summary line"
			f=1 p=0
		fi
		;;
	*) # cmocka's summary
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n1)
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n1)
		if [ "$rc" -ne 0 ] && ! grep -q '^\[  FAILED  \]' "$out"; then
			echo "$t: exited $rc without a cmocka summary"
			f=$((${f:-0} + 1))
		fi
		;;
	esac
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	[ "$rc" -ne 0 ] && failed_names="$failed_names $t"
done

echo
[ -n "$failed_names" ] && echo "failing:$failed_names"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ -z "$failed_names" ]
