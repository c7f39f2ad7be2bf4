#!/usr/bin/env bash
# test_metrics.sh - `gpuplan execute --metrics-port/--metrics-file`: the
# textfile has the gauges after the run, and a scrape over the loopback
# address while the run is going returns Prometheus text.
. "$(dirname "$0")/lib.sh"

gp execute --steps 3 --metrics-file "$TMP/run.prom"
expect_rc "execute with --metrics-file exits 0" 0
grep -q '^gpuplan_step{model="tiny-gpt",backend="cpu"} 3$' "$TMP/run.prom" &&
	pass "textfile has the last step" || fail "textfile has the last step" "$(head -3 "$TMP/run.prom")"
grep -q '^# TYPE gpuplan_loss gauge$' "$TMP/run.prom" &&
	pass "textfile declares gauge types" || fail "textfile declares gauge types" "no TYPE line"
grep -Eq '^gpuplan_peak_memory_bytes\{.*rank="0"\} [0-9]+$' "$TMP/run.prom" &&
	pass "textfile has peak memory per rank" || fail "textfile has peak memory per rank" "missing"
grep -Eq '^gpuplan_prediction_ratio\{.*\} [0-9.e+-]+$' "$TMP/run.prom" &&
	pass "textfile has measured over predicted" || fail "textfile has measured over predicted" "missing"
[ ! -e "$TMP/run.prom.tmp" ] && pass "no temporary file left" || fail "no temporary file left" "found"

gp execute --metrics-port 0
expect_rc "--metrics-port 0 is refused" 2
expect_err "--metrics-port names the flag" "^error: --metrics-port: expected an integer from 1 to 65535"

# A scrape during a longer run, through bash's /dev/tcp (no client needed).
scrape() { # $1 port -> body on stdout
	exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
	printf 'GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n' >&3
	timeout 5 cat <&3
	exec 3<&-
}
port=$((20000 + RANDOM % 30000))
$GPUPLAN execute --steps 400 --metrics-port "$port" >"$TMP/long.out" 2>"$TMP/long.err" &
pid=$!
got=""
# up to 10 s for the first step; a minute under valgrind, which starts slowly
tries=100
[ "${VALGRIND:-0}" = 1 ] && tries=600
for _ in $(seq 1 $tries); do
	if body=$(scrape "$port" 2>/dev/null) && grep -q '^gpuplan_step{' <<<"$body"; then
		got=$body
		break
	fi
	sleep 0.1
done
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
grep -q '^HTTP/1.1 200 OK' <<<"$got" && pass "scrape answers 200" || fail "scrape answers 200" "no answer on port $port"
grep -q 'Content-Type: text/plain; version=0.0.4' <<<"$got" &&
	pass "scrape is Prometheus text 0.0.4" || fail "scrape is Prometheus text 0.0.4" "content type"
grep -Eq '^gpuplan_tokens_per_second\{model="tiny-gpt",backend="cpu"\} [0-9.e+]+' <<<"$got" &&
	pass "scrape has tokens per second" || fail "scrape has tokens per second" "missing"
finish
