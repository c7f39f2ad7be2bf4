#!/usr/bin/env bash
# robustness.sh - the reliability report: runs every libFuzzer target for
# FUZZ_SECONDS (make fuzz), the whole test suite under ASan + UBSan (make
# asan), the CLI tests under valgrind memcheck (make valgrind), and the
# crash-safety and fault tests (tests/cli/test_robustness.sh), then prints
# a Markdown report: executions and crashes per fuzz target, sanitizer and
# valgrind status, kill points tried against corrupted tables, fault tests
# run.  Exits 1 when anything failed.  `make bench` leaves it out: it
# takes many minutes; run it on its own.
#
#   bench/robustness.sh                  60 s per fuzz target
#   FUZZ_SECONDS=300 bench/robustness.sh
#   SKIP="asan valgrind" bench/robustness.sh   leave steps out
#   RANDOM_KILLS=500 bench/robustness.sh   SIGKILLs at random instants (200)
set -u
cd "$(dirname "$0")/.." || exit 1
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
SKIP=${SKIP:-}
RANDOM_KILLS=${RANDOM_KILLS:-200}
LOG=$(mktemp -d)
trap 'rm -rf "$LOG"' EXIT
status=0

skipped() { case " $SKIP " in *" $1 "*) return 0 ;; esac; return 1; }
# the closing "N passed, N failed" line of a test log
summary() { grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -n1; }

# ---- fuzzing -------------------------------------------------------------
fuzz_rows=""
if ! skipped fuzz; then
	echo "robustness: make fuzz FUZZ_SECONDS=$FUZZ_SECONDS" >&2
	before=$(ls build-fuzz 2>/dev/null | grep -cE -- '-(crash|leak|timeout|oom)-')
	make --no-print-directory fuzz FUZZ_SECONDS="$FUZZ_SECONDS" >"$LOG/fuzz" 2>&1
	fuzz_rc=$?
	# "== fuzz_NAME (...)" then its stat::number_of_executed_units line
	fuzz_rows=$(awk '
		/^== fuzz_/ { if (name != "") print name, execs, bad; name = $2; execs = "-"; bad = 0 }
		/stat::number_of_executed_units/ { execs = $2 }
		/ERROR|SUMMARY/ { bad = 1 }
		END { if (name != "") print name, execs, bad }' "$LOG/fuzz")
	after=$(ls build-fuzz 2>/dev/null | grep -cE -- '-(crash|leak|timeout|oom)-')
	[ $fuzz_rc = 0 ] || status=1
fi

# ---- sanitizers and valgrind ---------------------------------------------
run_make() { # NAME TARGET
	if skipped "$1"; then
		echo "skipped"
		return
	fi
	echo "robustness: make $2" >&2
	make --no-print-directory "$2" >"$LOG/$1" 2>&1
	local rc=$? s
	s=$(summary "$LOG/$1")
	if [ $rc = 0 ]; then
		echo "clean: ${s:-no summary}"
	else
		echo "FAILED (exit $rc): ${s:-no summary}; $(grep -m1 -E 'ERROR: (Address|Undefined|Leak)Sanitizer|runtime error|definitely lost|Invalid (read|write)|not ok' "$LOG/$1")"
	fi
}
asan=$(run_make asan asan)
valgrind=$(run_make valgrind valgrind)
case "$asan$valgrind" in *FAILED*) status=1 ;; esac

# ---- crash safety and faults ---------------------------------------------
make --no-print-directory all >/dev/null 2>&1
echo "robustness: tests/cli/test_robustness.sh" >&2
RANDOM_KILLS=$RANDOM_KILLS bash tests/cli/test_robustness.sh >"$LOG/kill" 2>&1 || status=1
kills=$(sed -n 's/^kill points: \([0-9]*\) tried, \([0-9]*\) corrupted.*/\1 \2/p' "$LOG/kill")
faults=$(sed -n 's/^fault tests: \([0-9]*\) run.*/\1/p' "$LOG/kill")
ksum=$(summary "$LOG/kill")
# which table each random-instant kill left: the old one or the new one
old=$(grep -c 'random instant.*table T0' "$LOG/kill")
new=$(grep -c 'random instant.*table T1' "$LOG/kill")

# ---- the report ------------------------------------------------------------
echo "Reliability report ($(date -u +%Y-%m-%d), $(nproc) cores, FUZZ_SECONDS=$FUZZ_SECONDS):"
echo
if [ -n "$fuzz_rows" ]; then
	echo "| fuzz target (libFuzzer, ASan + UBSan) | executions in ${FUZZ_SECONDS} s | crashes |"
	echo "| --- | ---: | ---: |"
	echo "$fuzz_rows" | while read -r name execs bad; do
		echo "| \`$name\` | $execs | $bad |"
	done
	echo
	echo "New crash artifacts in build-fuzz/: $((after - before))."
	echo
fi
echo "| check | result |"
echo "| --- | --- |"
echo "| \`make asan\` (every test, ASan + UBSan) | $asan |"
echo "| \`make valgrind\` (CLI tests, memcheck) | $valgrind |"
echo "| kill test (\`prices update\` under SIGKILL) | ${kills% *} kill points tried (every fault point, then $RANDOM_KILLS random instants: $old left the old table, $new the new), ${kills#* } corrupted tables |"
echo "| fault tests (price writes, MILP limit, executor kill/hang/OOM) | ${faults:-0} run; test_robustness.sh: ${ksum:-no summary} |"
exit $status
