#!/usr/bin/env bash
# test_sched_timeline.sh - `simulate` with the event-driven replay of the
# pipeline schedule: the replayed figures beside the analytic ones,
# --timeline (Chrome trace-event JSON), --gantt, --split-backward, and bad
# input.
. "$(dirname "$0")/lib.sh"

# megatron-1.7b on 4 A100s, pp 4, 8 micro-batches: each stage runs 8
# forwards and 8 backwards (64 compute events) and 3 stage boundaries carry
# 8 activations and 8 gradients each (48 transfers); dp 1, no DP buckets.
SIM="simulate --model megatron-1.7b --gpu A100-SXM4-80GB --gpus 4 --pp 4 --gbs 8"

gp $SIM --timeline "$TMP/trace.json"
expect_rc "timeline exit 0" 0
expect_out "replay section" '^pipeline  1f1b, 4 stages x 1 chunk, 8 micro-batches \(event-driven replay\)'
expect_out "replay beside analytic" 'step time .*\(analytic '
expect_out "peak in flight p - i" 'peak in flight +4 3 2 1 \(micro-batches per stage\)'
expect_err "timeline reported" "wrote $TMP/trace.json \(160 operations\)"
n=$(grep -o '"ph":"X"' "$TMP/trace.json" | wc -l)
[ "$n" = 112 ] && pass "one X event per compute op and transfer" || fail "X events" "found $n, expected 112"
n=$(grep -o '"name":"F3","cat":"forward"' "$TMP/trace.json" | wc -l)
[ "$n" = 4 ] && pass "F3 on every stage" || fail "F3 events" "found $n, expected 4"
grep -q '"traceEvents":\[' "$TMP/trace.json" && tail -c 2 "$TMP/trace.json" | grep -q '}' \
	&& pass "trace is one JSON object" || fail "trace shape" "no traceEvents array"

gp $SIM --json --timeline "$TMP/t2.json"
expect_rc "json with timeline exit 0" 0
head -c 1 "$OUT" | grep -q '{' && ! grep -q 'event-driven' "$OUT" \
	&& pass "--json keeps stdout pure JSON" || fail "--json" "stdout is not only JSON"
[ -s "$TMP/t2.json" ] && pass "json run writes the trace" || fail "json run" "no trace"

gp $SIM --gantt
expect_rc "gantt exit 0" 0
expect_out "gantt stage 0 row starts with forwards" '^stage 0 F0'
expect_out "gantt last stage row" '^stage 3 \.+F0'
expect_out "gantt legend" '1 column = .*F forward, B backward, \. idle'

gp simulate --model megatron-1.7b --gpu A100-SXM4-80GB --gpus 4 --pp 2 --interleave 2 --gbs 4 --split-backward --gantt
expect_rc "split interleaved exit 0" 0
expect_out "split schedule named" 'interleaved with B/W split, 2 stages x 2 chunks'
expect_out "W ops drawn" 'W0\.1'

gp $SIM --timeline /nonexistent-dir/trace.json
expect_rc "unwritable timeline exit 1" 1
expect_err_lines "unwritable timeline one error" 1
expect_err "unwritable timeline names the file" '^error: /nonexistent-dir/trace.json: cannot create'

gp $SIM --timeline
expect_rc "timeline without a file exit 2" 2

finish
