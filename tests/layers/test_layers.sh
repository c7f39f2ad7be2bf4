#!/usr/bin/env bash
# test_layers.sh - no file includes or calls a layer above its own, no two
# files depend on each other round a circle (by a call, or by including a
# header private to the other; in simulator/ any header of the other's),
# no source file outside tests/ is over
# 1,000 lines without saying why (tests/layers/layers.py says how each is
# found; `layers.py --list build` prints every include and call that
# crosses a layer).  First layers.py's self-test: the checks must catch
# the circles and the long file of synthetic trees.
# Reads the objects of $BUILD, which `make test` has built.
set -u
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
if ! command -v python3 >/dev/null || ! command -v nm >/dev/null; then
	echo "ok - skipped: python3 or nm not installed"
	echo "1 passed, 0 failed"
	exit 0
fi
passed=0 failed=0
for args in "--self-test" "--check $BUILD"; do
	# shellcheck disable=SC2086 # two words: the mode and the build folder
	out=$(python3 tests/layers/layers.py $args)
	rc=$?
	printf '%s\n' "$out" | grep -v '^[0-9]* passed, [0-9]* failed$'
	p=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
	f=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
	if [ -z "$p" ]; then
		echo "not ok - layers.py $args exited $rc without a summary"
		p=0 f=1
	fi
	passed=$((passed + p)) failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
