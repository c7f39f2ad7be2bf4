#!/usr/bin/env bash
# test_layers.sh - no file includes or calls a layer above its own, no two
# files of the planner, the executor or the CLI call each other round a
# circle, no two files of the simulator include or call each other round
# one (tests/layers/layers.py says how each is found; `layers.py --list
# build` prints every include and call that crosses a layer).  First
# `layers.py --selftest` shows the circle finder finds a made-up circle.
# Reads the objects of $BUILD, which `make test` has built.
set -u
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
if ! command -v python3 >/dev/null || ! command -v nm >/dev/null; then
	echo "ok - skipped: python3 or nm not installed"
	echo "1 passed, 0 failed"
	exit 0
fi
self=$(python3 tests/layers/layers.py --selftest 2>&1); s=$?
checked=$(python3 tests/layers/layers.py --check "$BUILD" 2>&1); c=$?
out=$(printf '%s\n%s\n' "$self" "$checked" | grep -v '^[0-9]* passed, [0-9]* failed$')
printf '%s\n' "$out"
passed=$(printf '%s\n' "$out" | grep -c '^ok - ')
failed=$(printf '%s\n' "$out" | grep -c '^not ok - ')
# a script that stopped before its own count fails too
if [ "$s" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; echo "not ok - layers.py --selftest exited $s"; fi
if [ "$c" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; echo "not ok - layers.py --check exited $c"; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
