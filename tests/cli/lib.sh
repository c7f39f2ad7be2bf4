# lib.sh - helpers for the shell-level CLI tests.  Source it, call the
# checks, end with `finish`.  Each check prints "ok - NAME" or
# "not ok - NAME" with the reason; finish prints "N passed, N failed".
#
#   run NAME CMD...           run CMD, keep $OUT, $ERR and $RC
#   expect_rc NAME CODE       last run exited CODE
#   expect_out NAME REGEX     stdout matches REGEX (grep -E)
#   expect_err NAME REGEX     stderr matches REGEX
#   expect_err_lines NAME N   stderr has exactly N lines starting "error:"
set -u
BUILD=${BUILD:-build}
# GPUPLAN_BIN is the binary itself; GPUPLAN may wrap it in valgrind.
case $BUILD in
/*) GPUPLAN_BIN=$BUILD/gpuplan ;;
*) GPUPLAN_BIN=$PWD/$BUILD/gpuplan ;;
esac
GPUPLAN=${GPUPLAN:-$GPUPLAN_BIN}
if [ "${VALGRIND:-0}" = 1 ]; then
	# by absolute path: tests that narrow PATH must still find valgrind.bin;
	# fair scheduling: a progress thread must run beside a busy one, as it
	# does natively
	GPUPLAN="$(command -v valgrind) -q --error-exitcode=99 --leak-check=full --fair-sched=yes --suppressions=$PWD/tests/valgrind.supp $GPUPLAN"
fi
T_PASS=0 T_FAIL=0
TMP=$(mktemp -d)
export GPUPLAN_DATA_DIR="$TMP/userdata"
# Today, for the dates updates record and the ages answers print.
export GPUPLAN_NOW=2026-12-04
trap 'rm -rf "$TMP"' EXIT
OUT="$TMP/out" ERR="$TMP/err" RC=0

pass() { T_PASS=$((T_PASS + 1)); echo "ok - $1"; }
# A sanitizer's report is printed whole (its stack says whose it is).
fail() {
	T_FAIL=$((T_FAIL + 1))
	echo "not ok - $1: $2"
	if grep -q 'Sanitizer' "$ERR" 2>/dev/null; then
		sed -n '/Sanitizer/,$p' "$ERR" | head -60 | sed 's/^/    stderr: /'
	else
		sed 's/^/    stderr: /' "$ERR" | head -5
	fi
}

run() { shift; "$@" >"$OUT" 2>"$ERR"; RC=$?; }
gp() { $GPUPLAN "$@" >"$OUT" 2>"$ERR"; RC=$?; }

expect_rc() { [ "$RC" = "$2" ] && pass "$1" || fail "$1" "exit $RC, expected $2"; }
expect_out() { grep -Eq -- "$2" "$OUT" && pass "$1" || fail "$1" "stdout lacks /$2/"; }
expect_no_out() { ! grep -Eq -- "$2" "$OUT" && pass "$1" || fail "$1" "stdout has /$2/"; }
expect_err() { grep -Eq -- "$2" "$ERR" && pass "$1" || fail "$1" "stderr lacks /$2/"; }
# expect_ok NAME FILE: a check's script wrote "ok" to FILE, else what failed
expect_ok() { [ "$(cat "$2")" = ok ] && pass "$1" || fail "$1" "$(cat "$2")"; }
expect_err_lines() {
	local n; n=$(grep -c '^error:' "$ERR")
	[ "$n" = "$2" ] && pass "$1" || fail "$1" "$n error lines, expected $2"
}
finish() { echo "$T_PASS passed, $T_FAIL failed"; [ "$T_FAIL" = 0 ]; }

# json_num KEY FILE: the first number after "KEY":
json_num() { sed -n "s/.*\"$1\":[[:space:]]*\\([-0-9.eE+]*\\).*/\\1/p" "$2" | head -1; }
