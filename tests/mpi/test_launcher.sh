#!/usr/bin/env bash
# test_launcher.sh - the job never outlives the `gpuplan execute` that
# started it: SIGTERM, SIGINT and SIGHUP to it are forwarded to mpirun
# and reported as an interruption, SIGKILL to it ends mpirun and every
# rank too (the kernel's parent-death signal); a rank killed from outside,
# which says nothing itself, is named by the launcher, --quiet or not.
. "$(dirname "$0")/../cli/lib.sh"

if ! command -v mpirun >/dev/null; then
	echo "ok - skipped: mpirun not installed"
	finish
	exit
fi

# procs SEED: how many processes run with this seed on their command line
# (the launcher, mpirun and the ranks all carry the launcher's arguments)
procs() { pgrep -f -- "execute --dp 2 --steps 100000 --seed $1\$" | wc -l; }

# start SEED: a long dp 2 job in the background, $LPID its launcher; waits
# until both ranks run (4 processes: launcher, mpirun, 2 ranks)
start() {
	$GPUPLAN_BIN execute --dp 2 --steps 100000 --seed "$1" >"$OUT" 2>"$ERR" &
	LPID=$!
	for _ in $(seq 1 100); do
		[ "$(procs "$1")" -ge 4 ] && break
		sleep 0.1
	done
}

# reap NAME: waits up to 15 s for the launcher $LPID to end, its status
# in $RC; one that does not end is killed and counted as a failure
reap() {
	for _ in $(seq 1 150); do
		kill -0 $LPID 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 $LPID 2>/dev/null; then
		fail "$1: the launcher ends" "still running after 15 s"
		kill -KILL $LPID
	fi
	wait $LPID 2>/dev/null
	RC=$?
}

# gone NAME SEED: none of the job's processes is left within 5 s
gone() {
	local n
	for _ in $(seq 1 50); do
		n=$(procs "$2")
		[ "$n" = 0 ] && break
		sleep 0.1
	done
	[ "$n" = 0 ] && pass "$1: no process of the job left" \
		|| { fail "$1: no process of the job left" "$n left"; pkill -KILL -f -- "--seed $2\$"; }
}

seed=71000
for sig in TERM INT HUP; do
	seed=$((seed + 1))
	start $seed
	[ "$(procs $seed)" -ge 4 ] && pass "SIG$sig: the job runs (launcher, mpirun, 2 ranks)" \
		|| fail "SIG$sig: the job runs" "$(procs $seed) processes"
	kill -$sig $LPID
	reap "SIG$sig"
	expect_rc "SIG$sig to the launcher: exit 1" 1
	expect_err "SIG$sig: reported as an interruption" "^error: execute: interrupted by SIG$sig: the job's 2 ranks were stopped$"
	grep -q 'ended abnormally\|ended first' "$ERR" && fail "SIG$sig: not reported as a rank's failure" "$(cat "$ERR")" \
		|| pass "SIG$sig: not reported as a rank's failure"
	gone "SIG$sig" $seed
done

seed=$((seed + 1))
start $seed
kill -KILL $LPID
reap "SIGKILL"
gone "SIGKILL to the launcher" $seed

# a rank killed from outside (as the OOM killer would) prints nothing;
# the launcher names it, with --quiet too
seed=$((seed + 1))
$GPUPLAN_BIN execute --dp 2 --steps 100000 --seed $seed --quiet >"$OUT" 2>"$ERR" &
LPID=$!
r1=""
for _ in $(seq 1 100); do
	for p in $(pgrep -f -- "--seed $seed --quiet\$"); do
		tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1' && r1=$p
	done
	[ -n "$r1" ] && break
	sleep 0.1
done
sleep 0.5
[ -n "$r1" ] && kill -KILL "$r1"
reap "rank 1 killed from outside"
expect_rc "rank 1 killed from outside: exit 1" 1
expect_err "rank 1 killed from outside, --quiet: the launcher names it" \
	'^error: execute: the job failed \(mpirun exit status [0-9]+\): rank 1 ended first$'
expect_err_lines "rank 1 killed from outside: one error line" 1
finish
