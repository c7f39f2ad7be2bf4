#!/usr/bin/env bash
# test_execute_guard.sh - what execute refuses before it allocates or
# starts a rank: a model the machine cannot hold (the simulator's memory
# per rank against the host's available memory: one line and exit 2, not
# a backtrace from every rank or the OOM killer), an output file in a
# directory that is not there; and a diverged run (NaN loss) is a
# failure, exit 1, not steps of NaN.
. "$(dirname "$0")/lib.sh"

FIX=tests/fixtures/exec
HAVE_MPI=0
command -v mpirun >/dev/null && HAVE_MPI=1

# a plan of hidden 2^24 (every rank aborted allocating it) and one of 2^20
# layers (the host was OOM-killed); both tp 2 x pp 2
sed 's/"hidden":[[:space:]]*32/"hidden": 16777216/' "$FIX/plan_tp2_pp2.json" >"$TMP/hidden.json"
sed 's/"layers":[[:space:]]*8/"layers": 1048576/' "$FIX/plan_tp2_pp2.json" >"$TMP/layers.json"
for p in hidden layers; do
	run "plan too big ($p)" timeout 60 $GPUPLAN execute "$TMP/$p.json" --steps 1
	expect_rc "plan too big ($p): exit 2" 2
	expect_err "plan too big ($p): says what it needs and what there is" \
		'^error: execute: memory: expected the run to fit the .* this machine has available, found 4 CPU ranks x .* \(the simulator.s memory per rank\)'
	[ "$(wc -l <"$ERR")" = 1 ] && pass "plan too big ($p): one line on stderr, no backtrace" \
		|| fail "plan too big ($p): one line on stderr" "$(wc -l <"$ERR") lines"
	[ -s "$OUT" ] && fail "plan too big ($p): nothing run" "$(head -1 "$OUT")" \
		|| pass "plan too big ($p): nothing run"
done

# output files are checked before the run, not written after it
for flag in --json --trace --metrics-file; do
	gp execute --steps 1 $flag "$TMP/no/such/out"
	expect_rc "$flag in a missing directory: exit 2" 2
	expect_err "$flag in a missing directory: says so" \
		"^error: $flag: .*/no/such/out: expected a file in an existing directory, found no directory .*/no/such$"
	[ -s "$OUT" ] && fail "$flag in a missing directory: no step run" "$(head -1 "$OUT")" \
		|| pass "$flag in a missing directory: no step run"
done
gp execute --steps 1 --json "$TMP"
expect_rc "--json naming a directory: exit 2" 2
expect_err "--json naming a directory: says so" '^error: --json: .*: expected a file, found a directory$'
if [ $HAVE_MPI = 1 ]; then
	gp execute --dp 2 --steps 1 --trace "$TMP/no/such/trace.json"
	expect_rc "--trace in a missing directory, 2 ranks: exit 2 before mpirun" 2
	expect_err_lines "--trace in a missing directory, 2 ranks: one error line" 1
	[ -s "$OUT" ] && fail "--trace in a missing directory, 2 ranks: no rank started" "$(head -1 "$OUT")" \
		|| pass "--trace in a missing directory, 2 ranks: no rank started"
fi

# a diverged run: lr 1000 (the most --lr takes) makes the loss NaN by step 4
gp execute --lr 1000 --steps 6 --json "$TMP/nan.json"
expect_rc "diverged run: exit 1" 1
expect_err "diverged run: says which step and why" \
	'^error: execute: step [0-9]+: expected a finite loss, found nan \(the run diverged; try a lower --lr\)$'
expect_no_out "diverged run: no step of NaN printed" 'loss nan'
if [ $HAVE_MPI = 1 ]; then
	gp execute --lr 1000 --steps 6 --dp 2
	expect_rc "diverged run, 2 ranks: exit 1" 1
	expect_err "diverged run, 2 ranks: rank 0 says why" '^error: execute: step [0-9]+: expected a finite loss, found nan'
	[ "$(grep -c 'expected a finite loss' "$ERR")" = 1 ] && pass "diverged run, 2 ranks: said once" \
		|| fail "diverged run, 2 ranks: said once" "$(grep -c 'expected a finite loss' "$ERR") times"
fi
finish
