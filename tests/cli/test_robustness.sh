#!/usr/bin/env bash
# test_robustness.sh - crash safety, concurrency, solver limits and
# executor faults, as a user would meet them.
#
#   prices update killed (SIGKILL) at every fault point of the update and
#   of the recovery that follows it, and at random instants: the table is
#   byte for byte the old or the new one, the history holds each change
#   exactly once once a reader has run, no temporary or pending file stays;
#   concurrent updates all land, readers never see a torn table, a killed
#   lock holder blocks nobody; the MILP under a 1 ms time limit answers
#   "feasible, not proven optimal" or says why it has no answer, never
#   aborts; the executor's ranks end with a message naming the rank when
#   one is killed, hangs, or runs out of memory.
#
# The closing lines "kill points: N tried, N corrupted" and "fault tests:
# N run" are what bench/robustness.sh reports.
. "$(dirname "$0")/lib.sh"
export GPUPLAN_SHARE_DIR="$PWD/data"
FIX=tests/fixtures/prices
U="$GPUPLAN_DATA_DIR"
RAW=$GPUPLAN                # kill loops run bare, even under VALGRIND=1
[ "${VALGRIND:-0}" = 1 ] && RAW=$GPUPLAN_BIN
A=$FIX/bom.csv             # the update that makes the first user table
B=$FIX/crlf.csv            # the update that is killed
KILLS=0 CORRUPT=0 FAULTS=0

# hist_body FILE: the history without its timestamp column
hist_body() { [ -f "$1" ] && cut -d, -f2- "$1"; }

# ---- the two tables an interrupted update may leave ------------------------
rm -rf "$U"
$RAW prices update $A >/dev/null 2>&1 || fail "base update" "exit $?"
cp -a "$U" "$TMP/S0"
cp "$U/prices.csv" "$TMP/T0"
hist_body "$U/prices.history.csv" > "$TMP/H0"
$RAW prices update $B >/dev/null 2>&1 || fail "second update" "exit $?"
cp "$U/prices.csv" "$TMP/T1"
hist_body "$U/prices.history.csv" > "$TMP/H1"
cmp -s "$TMP/T0" "$TMP/T1" && fail "the two tables differ" "identical"
# bom.csv changes 3 fields of one row (price_date the update's; its spot,
# not offered, is the shipped row's); crlf.csv 3 fields of one row (the same)
# and 4 of the other (its spot 2.2 where the shipped row offers none)
[ "$(wc -l < "$TMP/H0")" = 4 ] && [ "$(wc -l < "$TMP/H1")" = 11 ] \
	&& pass "reference histories: 3 then 3 + 7 changes" \
	|| fail "reference histories: 3 then 3 + 7 changes" "$(wc -l < "$TMP/H0") and $(wc -l < "$TMP/H1") lines"
# the stored tables are the user's rows only: format line, header, then
# bom.csv's row, then crlf.csv's two more
[ "$(head -n1 "$TMP/T0")" = "# gpuplan-user-prices/2" ] && [ "$(wc -l < "$TMP/T0")" = 3 ] \
	&& [ "$(wc -l < "$TMP/T1")" = 5 ] \
	&& pass "reference tables: 1 then 3 rows of the user's" \
	|| fail "reference tables: 1 then 3 rows of the user's" "$(wc -l < "$TMP/T0") and $(wc -l < "$TMP/T1") lines"

base() { rm -rf "$U"; cp -a "$TMP/S0" "$U"; }

# check NAME: after a kill and a reader, the table is T0 or T1 byte for
# byte, the history is the one that goes with it, nothing is left over.
check() {
	local t h ok=1
	if cmp -s "$U/prices.csv" "$TMP/T0"; then t=T0 h=H0
	elif cmp -s "$U/prices.csv" "$TMP/T1"; then t=T1 h=H1
	else t=none; fi
	$RAW prices history >/dev/null 2>"$ERR" || ok=0
	if [ "$t" = none ]; then
		CORRUPT=$((CORRUPT + 1))
		fail "$1: table is the old or the new one" "neither"
		return
	fi
	hist_body "$U/prices.history.csv" | cmp -s - "$TMP/$h" || {
		ok=0; CORRUPT=$((CORRUPT + 1))
		fail "$1: history matches table $t" "$(hist_body "$U/prices.history.csv" | wc -l) lines, expected $(wc -l < "$TMP/$h")"
		return
	}
	[ -e "$U/prices.history.pending" ] && { ok=0; fail "$1: pending history consumed" "still there"; }
	[ $ok = 1 ] && pass "$1: table $t, history consistent"
}

# ---- a crash between the history append and the removal of the pending
# file: the next reader must not append the same lines twice
base
{ GPUPLAN_FAULT=after_rename:kill $RAW prices update $B >/dev/null 2>&1; } 2>/dev/null
tail -n +2 "$U/prices.history.pending" >> "$U/prices.history.csv"
check "appended but pending not removed"

# ---- every fault point of an update, in order: step:N kills at the N-th
# point reached, until an update runs past all of them
n=1
while [ $n -le 40 ]; do
	base
	{ GPUPLAN_FAULT=step:$n:kill $RAW prices update $B >/dev/null 2>"$TMP/kill.err"; rc=$?; } 2>/dev/null
	[ $rc = 0 ] && break
	if [ $rc != 137 ]; then
		fail "kill at step $n: exit 137" "exit $rc"
		break
	fi
	KILLS=$((KILLS + 1))
	point=$(sed -n 's/.*GPUPLAN_FAULT: killed at \([a-z_]*\).*/\1/p' "$TMP/kill.err")
	# the recovery a reader runs can itself be killed at each of its points
	if [ -e "$U/prices.history.pending" ]; then
		m=1
		while [ $m -le 10 ]; do
			cp -a "$U" "$TMP/state"
			{ GPUPLAN_FAULT=step:$m:kill $RAW prices history >/dev/null 2>"$TMP/kill2.err"; rc=$?; } 2>/dev/null
			[ $rc = 0 ] && { rm -rf "$TMP/state"; break; }
			KILLS=$((KILLS + 1))
			p2=$(sed -n 's/.*GPUPLAN_FAULT: killed at \([a-z_]*\).*/\1/p' "$TMP/kill2.err")
			check "killed at $point, recovery killed at $p2"
			rm -rf "$U"; mv "$TMP/state" "$U"
			m=$((m + 1))
		done
	fi
	check "killed at step $n ($point)"
	$RAW prices update $B >/dev/null 2>&1
	cmp -s "$U/prices.csv" "$TMP/T1" && hist_body "$U/prices.history.csv" | cmp -s - "$TMP/H1" \
		&& pass "after a kill at $point the update reruns to the new table" \
		|| { CORRUPT=$((CORRUPT + 1)); fail "after a kill at $point the update reruns to the new table" "differs"; }
	ls -a "$U" | grep -q '^\.prices\.csv\.tmp' && fail "no temporary table after a rerun" "left"
	n=$((n + 1))
done
[ $n -ge 9 ] && pass "update walked past $((n - 1)) fault points" \
	|| fail "update walked past at least 8 fault points" "$((n - 1))"

# ---- fault points in error mode (no kill): the update fails cleanly, the
# table and history stay as they were
for point in after_lock after_pending after_write after_fsync before_rename; do
	base
	run "stop at $point" env GPUPLAN_FAULT=$point $GPUPLAN prices update $B
	FAULTS=$((FAULTS + 1))
	expect_rc "stopped at $point: exit 1" 1
	expect_err "stopped at $point: says so" "^error: update stopped by GPUPLAN_FAULT=$point"
	cmp -s "$U/prices.csv" "$TMP/T0" && hist_body "$U/prices.history.csv" | cmp -s - "$TMP/H0" \
		&& pass "stopped at $point: table and history unchanged" \
		|| fail "stopped at $point: table and history unchanged" "changed"
done

# ---- SIGKILL at random instants of a running update, spread uniformly
# over 1.2 times what one update takes here (timed first, in us), so most
# land inside it.  RANDOM_KILLS of them (bench/robustness.sh asks for
# hundreds; make test for a few).
base
t0=$(date +%s%N)
$RAW prices update $B >/dev/null 2>&1
span_us=$(( ($(date +%s%N) - t0) * 12 / 10000 ))
[ "$span_us" -gt 0 ] || span_us=1000
for i in $(seq 1 "${RANDOM_KILLS:-6}"); do
	base
	$RAW prices update $B >/dev/null 2>&1 &
	pid=$!
	us=$(( (RANDOM * 32768 + RANDOM) % span_us ))
	sleep "$(printf '%d.%06d' $((us / 1000000)) $((us % 1000000)))"
	kill -KILL $pid 2>/dev/null
	wait $pid 2>/dev/null
	KILLS=$((KILLS + 1))
	check "killed at a random instant ($i, ${us} us of ${span_us})"
done

# ---- concurrency: six updates of different rows and readers at once,
# after an update killed while it held the lock
base
H="provider,instance_type,gpu,gpus_per_node,region,on_demand_usd_per_hour,spot_usd_per_hour,inter_node_gbps,max_nodes,catalog_version"
for i in 1 2 3 4 5 6; do
	printf '%s\nrace,node%d,L4,1,r%d,%d.5,,,,t-race\n' "$H" $i $i $i > "$TMP/race$i.csv"
done
# first an update dies holding the lock: a lock file that stays behind
# must not block anyone (flock goes with the process)
{ GPUPLAN_FAULT=after_lock:kill $RAW prices update $B >/dev/null 2>&1; rc=$?; } 2>/dev/null
[ $rc = 137 ] || fail "update killed holding the lock: exit 137" "exit $rc"
KILLS=$((KILLS + 1))
for i in 1 2 3 4 5 6; do
	timeout 60 $RAW prices update "$TMP/race$i.csv" >"$TMP/race$i.out" 2>&1 &
done
readers_ok=0
for i in 1 2 3; do
	$RAW prices list --provider race >/dev/null 2>"$TMP/reader.err" && readers_ok=$((readers_ok + 1))
done
wait
[ "$(grep -c '^race,' "$U/prices.csv")" = 6 ] && pass "six concurrent updates all in the table" \
	|| fail "six concurrent updates all in the table" "$(grep -c '^race,' "$U/prices.csv") rows"
[ "$(grep -c ',race,' "$U/prices.history.csv")" = 6 ] && pass "six concurrent updates all in the history" \
	|| fail "six concurrent updates all in the history" "$(grep -c ',race,' "$U/prices.history.csv") lines"
[ $readers_ok = 3 ] && pass "readers during the updates read a whole table (3 of 3)" \
	|| fail "readers during the updates read a whole table" "$readers_ok of 3"
pass "an update killed holding the lock blocked none of the others"

# four updates of the same price at once: the table keeps the last one
# the history records, and the history has all four
for v in 1 2 3 4; do
	printf '%s\nrace,node1,L4,1,r1,%d.75,,,,t-race\n' "$H" $v > "$TMP/same$v.csv"
done
for v in 1 2 3 4; do $RAW prices update "$TMP/same$v.csv" >/dev/null 2>&1 & done
wait
last=$(grep ',race,node1,r1,on_demand_usd_per_hour,' "$U/prices.history.csv" | tail -n1 | cut -d, -f7)
[ "$(grep -c ',race,node1,r1,on_demand_usd_per_hour,' "$U/prices.history.csv")" = 4 ] \
	&& pass "same-row race: all four changes in the history" \
	|| fail "same-row race: all four changes in the history" "$(grep -c ',race,node1,r1,on_demand' "$U/prices.history.csv") lines"
grep -q "^race,node1,L4,1,r1,$last," "$U/prices.csv" && pass "same-row race: the table holds the history's last value ($last)" \
	|| fail "same-row race: the table holds the history's last value" "$last not in the table"

# ---- solver limits: a time limit too short to find any plan is an error
# that says so, never an abort; the MILP that stops at its time limit with
# a plan in hand is test_robustness.c's test_plan_milp_solve_time_limit_*
gp plan --model llama3-8b --tokens 1T --gpu H100 --milp-time-limit 0.001
FAULTS=$((FAULTS + 1))
if [ "$RC" = 0 ]; then
	expect_out "1 ms MILP limit: a plan, marked when not proven optimal" "."
else
	expect_rc "1 ms MILP limit without a plan: exit 1" 1
	expect_err "1 ms MILP limit: says GLPK stopped at its time limit" \
		"^error: plan: milp: GLPK stopped at its time limit \(0\.001 s\)"
	expect_err_lines "1 ms MILP limit: one error line" 1
fi

# ---- executor faults on the CPU backend: every rank exits non-zero with
# a message naming the rank, within the stated time
if command -v mpirun >/dev/null; then
	start=$SECONDS
	run "kill rank 1" env GPUPLAN_FAULT_KILL_RANK=1:2 timeout 60 $RAW execute --dp 2 --steps 5
	FAULTS=$((FAULTS + 1))
	expect_rc "killed rank: exit 1" 1
	expect_err "killed rank: names rank 1" '^error: rank 1: fault injected at step 2'
	expect_err "killed rank: the job failed" '^error: execute: the job failed'
	[ $((SECONDS - start)) -lt 30 ] && pass "killed rank: ended in $((SECONDS - start)) s" \
		|| fail "killed rank: ended within 30 s" "$((SECONDS - start)) s"

	start=$SECONDS
	run "hang rank 1" env GPUPLAN_FAULT_HANG_RANK=1:2 timeout 60 $RAW execute --dp 2 --steps 5 --timeout 1s
	FAULTS=$((FAULTS + 1))
	expect_rc "hung rank: exit 1" 1
	expect_err "hung rank: rank 1 says it is stuck" \
		'^error: rank 1: did not reach the start of step 2 within 1 s \(--timeout\); this rank is stuck'
	expect_err "hung rank: rank 0 says it waited" '^error: rank 0: waited 1 s at the start of step 2'
	expect_err "hung rank: the job failed" '^error: execute: the job failed'
	# 1 s timeout + start-up and mpirun's teardown
	[ $((SECONDS - start)) -lt 20 ] && pass "hung rank: ended in $((SECONDS - start)) s (timeout 1 s)" \
		|| fail "hung rank: ended within 20 s" "$((SECONDS - start)) s"

	run "OOM on rank 1" env GPUPLAN_FAULT_OOM_RANK=1 timeout 60 $RAW execute --dp 2 --steps 3
	FAULTS=$((FAULTS + 1))
	expect_rc "OOM rank: exit 1" 1
	expect_err "OOM rank: names rank 1 and the allocation" \
		'^error: rank 1: cpu backend: out of memory allocating [0-9]+ bytes .*ending the job'
	expect_err "OOM rank: the job failed" '^error: execute: the job failed'
else
	pass "skipped the MPI fault tests: mpirun not installed"
fi

start=$SECONDS
run "hang, one rank" env GPUPLAN_FAULT_HANG_RANK=0:2 timeout 60 $RAW execute --steps 3 --timeout 1s
FAULTS=$((FAULTS + 1))
expect_rc "hung single rank: exit 1" 1
expect_err "hung single rank: says so" '^error: rank 0: did not reach the start of step 2 within 1 s'
[ $((SECONDS - start)) -lt 10 ] && pass "hung single rank: ended in $((SECONDS - start)) s (timeout 1 s)" \
	|| fail "hung single rank: ended within 10 s" "$((SECONDS - start)) s"

# (through sh, so that the shell running this says nothing of the abort)
run "memory cap" sh -c '"$@"' sh timeout 60 $RAW execute --steps 2 --max-memory 100k
FAULTS=$((FAULTS + 1))
[ "$RC" != 0 ] && [ "$RC" != 124 ] && pass "memory cap: non-zero exit ($RC)" || fail "memory cap: non-zero exit" "exit $RC"
expect_err "memory cap: names the rank, the allocation and the limit" \
	'^error: rank 0: cpu backend: out of memory allocating [0-9]+ bytes \([0-9]+ in use of a 100000-byte limit\)'
gp execute --steps 1 --max-memory 100M
expect_rc "a cap the run fits in: exit 0" 0

gp execute --steps 1 --timeout soon
expect_rc "bad --timeout: exit 2" 2
expect_err "bad --timeout: names the flag" '^error: --timeout: expected'
run "bad hang variable" env GPUPLAN_FAULT_HANG_RANK=one $GPUPLAN execute --steps 1
expect_rc "bad GPUPLAN_FAULT_HANG_RANK: exit 2" 2
expect_err "bad GPUPLAN_FAULT_HANG_RANK: says what it expects" '^error: GPUPLAN_FAULT_HANG_RANK: expected RANK:STEP'

# ---- command lines fuzz_cli crashed on, kept in tests/fuzz/corpus/cli/
# (NUL-separated argv): each now ends with one error line and exit 2
for crash in tests/fuzz/corpus/cli/crash_*; do
	mapfile -d '' args < "$crash"
	gp "${args[@]}"
	expect_rc "$(basename "$crash"): exit 2" 2
	expect_err_lines "$(basename "$crash"): one error line" 1
done
gp simulate --model llama3-70b --gpu H100 --gpus 65536 --tp 65536 --pp 65536 --cp 65536 --gbs 8
expect_err "tp x pp x cp = 2^48 GPUs: says so, no SIGFPE" \
	'^error: simulate: gpus: expected tp x pp x dp x cp of at most 67108864, found 281474976710656'
gp simulate --layers 4 --hidden 1073741824 --heads 1 --gpu H100 --gpus 8 --gbs 8
expect_err "hidden 2^30: names --hidden, with the range a plan file holds" \
	'^error: --hidden: expected an integer from 1 to 16777216, found .1073741824.'

finish_extra() {
	echo "kill points: $KILLS tried, $CORRUPT corrupted"
	echo "fault tests: $FAULTS run"
}
finish_extra
finish
