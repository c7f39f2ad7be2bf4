#!/usr/bin/env bash
# test_layouts.sh - the executor under mpirun: every parallel layout
# (uneven pipeline splits included) computes the single-rank run's
# losses, the loss falls on the synthetic
# data, plan files run end to end (their tied embeddings and sequence
# parallelism included), --trace gathers every rank's timeline, and
# faults end the job with a clear
# message and a non-zero status within seconds, never a hang.
#
# The model is small enough for 8 ranks oversubscribed on 2 cores: 8
# layers (PP4 x v2 needs 8 chunks), hidden 32, 4 heads sharing 2 KV heads,
# MLP 64, vocabulary 64, sequence 16, global batch 8, 5 steps, attention
# probabilities kept (--no-flash) so selective recomputation takes the
# other path.
. "$(dirname "$0")/../cli/lib.sh"

FIX=tests/fixtures/exec
MODEL="--layers 8 --hidden 32 --heads 4 --kv-heads 2 --ffn 64 --vocab 64 --seq 16 --gbs 8 --steps 5 --no-flash"
LIMIT=60   # seconds any one run may take before it counts as a hang
. "$(dirname "$0")/lib.sh"

if ! command -v mpirun >/dev/null; then
	echo "ok - skipped: mpirun not installed"
	finish
	exit
fi

# layout_norms also checks the gradient norms (measured within 4e-7; a
# norm weight's gradient left to one slice of the sequence moves them by
# 7e-4, a tied copy's left unsummed by 0.12, while Adam's scale
# invariance hides much of it from the loss)

# the references: one rank, mbs 2 x 4 micro-batches, 1F1B; GELU with
# LayerNorm, and SwiGLU with RMSNorm
gp execute $MODEL --mlp swiglu --mbs 2 --json "$TMP/base-swiglu.json"
expect_rc "single rank, swiglu: exit 0" 0
gp execute $MODEL --mbs 2 --json "$TMP/base.json"
expect_rc "single rank: exit 0" 0
expect_out "single rank: prints per-step loss" '^step 5/5  loss [0-9.]+'
expect_out "single rank: measured against predicted" '^step CPU time \(median\) +[0-9.]+ ms +[0-9.]+ ms'
expect_out "single rank: the wall clock beside it" '^step wall time +[0-9.]+ m?s +-$'
expect_out "single rank: each step's CPU time" '^step 5/5  loss .* [0-9.]+ m?s \([0-9.]+ m?s CPU\)$'
[ "$(losses "$TMP/base.json" | wc -l)" = 5 ] && pass "single rank: 5 losses" \
	|| fail "single rank: 5 losses" "found $(losses "$TMP/base.json" | wc -l)"

# three of the layouts' runs are traced, and the trace's checks below read
# them (a trace leaves the losses as they are: the runs still compare
# with the single rank's); their output is kept for those checks
traced_layout() {
	case $1 in
	tp2xpp2 | dp2 | dp2-zero1)
		layout "$@" --trace "$TMP/trace-$1.json"
		cp "$OUT" "$TMP/$1.out"
		cp "$ERR" "$TMP/$1.err"
		;;
	*) layout "$@" ;;
	esac
}
each_layout traced_layout
gp execute $MODEL --vocab 63 --mbs 2 --json "$TMP/base-v63.json"
expect_rc "single rank, vocabulary 63: exit 0" 0
layout tp2-vocab63-uneven 2 base-v63 --tp 2 --vocab 63 --mbs 2
layout swiglu-tp2xpp2xdp2-zero3-v2 8 base-swiglu --mlp swiglu --tp 2 --pp 2 --dp 2 --zero 3 \
	--interleave 2 --recompute full --mbs 1

# Uneven pipeline splits, cut as the simulator cuts them (sim_stage_layers):
# the extra layers go to the middle stages, then to the first.  5 layers
# over pp 2 are 3 + 2, 6 over pp 4 1 + 2 + 2 + 1, 7 over pp 4 2 + 2 + 2 +
# 1 (too few on the last stage for 2 chunks); interleaved, 7 over pp 2 x
# v 2 make chunks 2, 2 | 2, 1 and 9 over pp 4 x v 2 make 1, 1 | 2, 1 |
# 1, 1 | 1, 1.  Each is checked against a single rank of as many layers.
for n in 5 6 7 9; do
	gp execute $MODEL --layers $n --mbs 2 --json "$TMP/base-l$n.json"
	expect_rc "single rank, $n layers: exit 0" 0
done
gp execute $MODEL --layers 7 --tied --mbs 2 --json "$TMP/base-l7-tied.json"
expect_rc "single rank, 7 layers, tied: exit 0" 0
layout l5-pp2 2 base-l5 --layers 5 --pp 2 --mbs 2
expect_out "l5-pp2: says the model's 5 layers" '^execute: .*, 5 layers x 32 hidden'
layout l5-pp2-gpipe 2 base-l5 --layers 5 --pp 2 --schedule gpipe --mbs 2
layout l6-pp4 4 base-l6 --layers 6 --pp 4 --mbs 1
layout l7-pp4 4 base-l7 --layers 7 --pp 4 --mbs 1
layout l7-pp2-interleaved-v2 2 base-l7 --layers 7 --pp 2 --interleave 2 --mbs 1
layout l9-pp4-interleaved-v2 4 base-l9 --layers 9 --pp 4 --interleave 2 --mbs 1
layout l5-tp2xpp2xdp2-zero1 8 base-l5 --layers 5 --tp 2 --pp 2 --dp 2 --zero 1 --mbs 1
layout l7-pp2xdp2-zero3-v2-full 4 base-l7 --layers 7 --pp 2 --dp 2 --zero 3 --interleave 2 \
	--recompute full --mbs 1
layout_norms l6-tp2xpp2-sp-zero2 4 base-l6 --layers 6 --tp 2 --pp 2 --seq-parallel --zero 2 \
	--mbs 1
layout_norms l7-pp4-tied 4 base-l7-tied --layers 7 --pp 4 --tied --mbs 1
# the stage with 3 layers and the embedding holds more than the one with 2
# and the head (measured 757 and 430 KiB)
p0=$(array peak_memory_bytes "$TMP/l5-pp2.json" | sed -n 1p)
p1=$(array peak_memory_bytes "$TMP/l5-pp2.json" | sed -n 2p)
if [ -n "$p0" ] && [ -n "$p1" ] && [ "$p0" -gt "$p1" ]; then
	pass "l5-pp2: stage 0 (3 layers) peaks above stage 1 (2 layers): $p0 > $p1 bytes"
else
	fail "l5-pp2: stage 0 (3 layers) peaks above stage 1 (2 layers)" "found '$p0' '$p1'"
fi

# Tied embeddings: the single rank's one matrix, or a copy on each end of
# the pipeline with the copies' gradients summed.  Sequence parallelism:
# the single rank has none, so equal losses are the point; mbs 1 cuts
# each sequence in half (positions 8..15 on TP rank 1).
gp execute $MODEL --tied --mbs 2 --json "$TMP/base-tied.json"
expect_rc "single rank, tied: exit 0" 0
expect_out "single rank, tied: says so" '^execute: .*, tied embeddings$'
layout_norms tied-pp2 2 base-tied --tied --pp 2 --mbs 2
layout_norms tied-pp2-interleaved-v2 2 base-tied --tied --pp 2 --interleave 2 --mbs 1
layout_norms tp2-seq-parallel 2 base --tp 2 --seq-parallel --mbs 1
expect_out "tp2-seq-parallel: says so" '^layout: .*, sequence parallel,'
layout_norms tp2xpp2xdp2-sp-tied-zero1 8 base-tied --tp 2 --pp 2 --dp 2 --seq-parallel --tied \
	--zero 1 --mbs 1

# Context parallelism: each CP rank holds two of the 2 cp chunks of every
# sequence (positions 4..7 and 8..11 on CP rank 1 of 2, 2..3 and 12..13
# on rank 1 of 4), all-gathers K and V for attention and reduce-scatters
# their gradients; the dp x cp ranks reduce the gradients and share
# ZeRO's shards.  Ranks: TP innermost, then CP, PP, DP.  Measured: losses within 1.6e-9 relative, gradient norms
# within 4.5e-8, of the single rank's.
layout_norms cp2 2 base --cp 2 --mbs 2
layout cp4 4 base --cp 4 --mbs 2
layout cp2xdp2 4 base --cp 2 --dp 2 --mbs 2
layout tp2xcp2 4 base --tp 2 --cp 2 --mbs 2
layout pp2xcp2 4 base --pp 2 --cp 2 --mbs 2
layout cp2xdp2-zero1 4 base --cp 2 --dp 2 --zero 1 --mbs 2
layout cp2xdp2-zero3 4 base --cp 2 --dp 2 --zero 3 --mbs 2
layout cp2-recompute-selective 2 base --cp 2 --recompute selective --mbs 2
layout_norms tp2xcp2-sp 4 base --tp 2 --cp 2 --seq-parallel --mbs 1
layout_norms pp2xcp2-tied 4 base-tied --pp 2 --cp 2 --tied --mbs 2

# --trace: every rank's measured timeline in one file on rank 0, and the
# run unchanged by it (the layouts' losses still equal the single rank's).
# per_rank RE FILE: "pid count" of the complete events whose name matches
# RE (the writer prints name, cat, ph, ts, dur, pid in that order).
per_rank() {
	grep -oE "\"name\":\"$1\",\"cat\":\"[a-z0-9-]+\",\"ph\":\"X\",\"ts\":[-0-9.e+]+,\"dur\":[-0-9.e+]+,\"pid\":[0-9]+" "$2" |
		sed 's/.*"pid"://' | sort -n | uniq -c | awk '{printf "%s:%s ", $2, $1}'
}
# expect_per_rank NAME RE FILE WANT
expect_per_rank() {
	local got
	got=$(per_rank "$2" "$3")
	[ "$got" = "$4" ] && pass "$1" || fail "$1" "expected '$4', found '$got'"
}
# the tp2xpp2 layout's run above, traced
cp "$TMP/tp2xpp2.out" "$OUT"
cp "$TMP/tp2xpp2.err" "$ERR"
expect_err "tp2xpp2 trace: says where it went" '^trace of 4 ranks, [0-9]+ events over 5 steps written to .*trace-tp2xpp2.json'
# the trace splits the step as the simulator's breakdown does: the
# slowest rank's forwards and backwards a step, and the optimizer; a
# rank runs its passes one after another, so they take less than the
# slowest step
expect_out "tp2xpp2 trace: forward + backward against the breakdown" \
	'^forward \+ backward +[0-9.]+ (us|ms|s) +[0-9.]+ (us|ms|s) +[-+][0-9.]+%$'
expect_out "tp2xpp2 trace: optimizer against the breakdown" \
	'^optimizer +[0-9.]+ (us|ms|s) +[0-9.]+ (us|ms|s) +[-+][0-9.]+%$'
fb=$(json_num forward_backward_s "$TMP/tp2xpp2.json")
pfb=$(json_num predicted_forward_backward_s "$TMP/tp2xpp2.json")
slowest=$(sed -n 's/.*"step_times_s":[[:space:]]*\[\(.*\)\].*/\1/p' "$TMP/tp2xpp2.json" |
	tr ',' '\n' | sort -g | tail -1)
awk -v f="$fb" -v p="$pfb" -v s="$slowest" 'BEGIN { exit !(f > 0 && p > 0 && f <= s) }' \
	&& pass "tp2xpp2 trace: forward + backward $fb s a step, within the slowest step ($slowest s)" \
	|| fail "tp2xpp2 trace: forward + backward a step" "'$fb' (predicted '$pfb'), slowest step '$slowest'"
n=$(grep -o '"name":"process_name"' "$TMP/trace-tp2xpp2.json" | wc -l)
[ "$n" = 4 ] && pass "tp2xpp2 trace: 4 process tracks" || fail "tp2xpp2 trace: 4 process tracks" "found $n"
grep -q '"args":{"name":"rank 3 (dp 0, pp 1, tp 1)"}' "$TMP/trace-tp2xpp2.json" \
	&& pass "tp2xpp2 trace: rank 3 is named by its coordinates" \
	|| fail "tp2xpp2 trace: rank 3 is named by its coordinates" "no such process_name"
# 1F1B with gbs 8 / mbs 1 = 8 micro-batches: every stage runs 8 forwards
# and 8 backwards a step, 40 of each over 5 steps, on every rank
expect_per_rank "tp2xpp2 trace: 40 forwards on each rank" 'F[0-9]+' "$TMP/trace-tp2xpp2.json" \
	"1:40 2:40 3:40 4:40 "
expect_per_rank "tp2xpp2 trace: 40 backwards on each rank" 'B[0-9]+' "$TMP/trace-tp2xpp2.json" \
	"1:40 2:40 3:40 4:40 "
# stage 0 sends 8 activations a step and receives 8 gradients; stage 1
# the other way round
expect_per_rank "tp2xpp2 trace: 40 activation sends from stage 0" 'act [0-9]+ -> stage 1' \
	"$TMP/trace-tp2xpp2.json" "1:40 2:40 "
expect_per_rank "tp2xpp2 trace: 40 gradient receives on stage 0" 'grad [0-9]+ <- stage 1' \
	"$TMP/trace-tp2xpp2.json" "1:40 2:40 "
expect_per_rank "tp2xpp2 trace: one optimizer step a step" 'optimizer' \
	"$TMP/trace-tp2xpp2.json" "1:5 2:5 3:5 4:5 "
grep -q '"tp all-reduce","cat":"tp"' "$TMP/trace-tp2xpp2.json" \
	&& pass "tp2xpp2 trace: tensor-parallel all-reduces recorded" \
	|| fail "tp2xpp2 trace: tensor-parallel all-reduces recorded" "none found"
# interleaved: v 2 chunks, each micro-batch through both, named F3.c1
layout pp2-v2-trace 2 base --pp 2 --interleave 2 --mbs 1 --trace "$TMP/trace-v2.json"
expect_per_rank "pp2 v2 trace: 40 forwards of chunk 1 on each rank" 'F[0-9]+\.c1' \
	"$TMP/trace-v2.json" "1:40 2:40 "
expect_per_rank "pp2 v2 trace: 80 backwards on each rank" 'B[0-9]+\.c[01]' \
	"$TMP/trace-v2.json" "1:80 2:80 "
# the most events a step makes (sequence parallel gathers, ZeRO-3 gathers
# and reduce-scatters, full recomputation) fit the recorder's bound
layout trace-tp2xdp2-sp-zero3-full 4 base --tp 2 --dp 2 --seq-parallel --zero 3 \
	--recompute full --mbs 1 --trace "$TMP/trace-heavy.json"
grep -q '"dropped_events":0' "$TMP/trace-heavy.json" \
	&& pass "sp + zero3 + full recompute trace: no event dropped" \
	|| fail "sp + zero3 + full recompute trace: no event dropped" "$(grep -o '"dropped_events":[0-9]*' "$TMP/trace-heavy.json")"
for c in '"tp all-gather","cat":"tp"' '"tp reduce-scatter","cat":"tp"' \
	'"dp all-gather","cat":"dp"' '"dp reduce-scatter","cat":"dp"'; do
	grep -q "$c" "$TMP/trace-heavy.json" && pass "heavy trace: has $c" \
		|| fail "heavy trace: has $c" "not found"
done

# first_sum_under_backward FILE OP: "ok" when in every step on every rank
# of a dp2 trace (10 rank-steps) the first "dp OP" starts before the last
# backward (B1, through every layer) has ended; else what was late.
first_sum_under_backward() {
	grep -oE "\"name\":\"(B[0-9]+|dp $2)\",\"cat\":\"[a-z]+\",\"ph\":\"X\",\"ts\":[-0-9.e+]+,\"dur\":[-0-9.e+]+,\"pid\":[0-9]+,\"tid\":[0-9]+,\"args\":\\{\"step\":[0-9]+" \
		"$1" | sed -E 's/"name":"([^"]*)".*"ts":([^,]*),"dur":([^,]*),"pid":([0-9]+).*"step":([0-9]+)/\1|\2|\3|\4|\5/' |
		awk -F'|' '{ k = $4 " " $5 }
			$1 ~ /^B/ { e = $2 + $3; if (!(k in bend) || e > bend[k]) bend[k] = e }
			$1 !~ /^B/ { if (!(k in sum0) || $2 < sum0[k]) sum0[k] = $2 }
			END { n = 0; for (k in bend) { n++; if (!(k in sum0) || sum0[k] >= bend[k]) bad = bad " " k }
			      print (n == 10 && bad == "") ? "ok" : n " rank-steps, late:" bad }'
}

# ZeRO 0 over dp 2: each unit's gradients are summed over DP on a track
# of their own, the sum starting as the step's last backward through the
# unit ends: 10 units (embedding, 8 layers, head), 50 sums over 5 steps on
# each rank, and in every step the first starts before the last backward
# has ended.  Summed after the backward, as before, no sum would start
# before it ends.
# (the dp2 layout's run above, traced)
grep -q '"name":"thread_name","ph":"M","pid":2,"tid":3,"args":{"name":"gradient reduce"}' \
	"$TMP/trace-dp2.json" && pass "dp2 trace: a gradient-reduce track on rank 1" \
	|| fail "dp2 trace: a gradient-reduce track on rank 1" "no such thread_name"
expect_per_rank "dp2 trace: 50 DP sums on each rank" 'dp all-reduce' "$TMP/trace-dp2.json" \
	"1:50 2:50 "
verdict=$(first_sum_under_backward "$TMP/trace-dp2.json" all-reduce)
[ "$verdict" = ok ] && pass "dp2 trace: every step's first DP sum starts under its last backward" \
	|| fail "dp2 trace: every step's first DP sum starts under its last backward" "$verdict"

# ZeRO 1 over dp 2 reduce-scatters the gradients, each rank receiving the
# sum of its own shard alone, and all-gathers the updated parameters
# (Rajbhandari et al., SC'20, sec. 5): on the wire, (n-1)/n of each
# buffer, one all-reduce's 2 (n-1)/n of the fp32 gradients in all, the
# params x 4 bytes a step and rank at n = 2 (every unit's size is even:
# no shard is padded), as the simulator prices it.
# All-reducing the gradients before the gather moved 1.5 times that
# (measured 387456 bytes against 258304).  The reduce-scatters still
# start under the backward, on the gradient-reduce track.
# (the dp2-zero1 layout's run above, traced)
expect_per_rank "dp2 zero1 trace: 50 DP reduce-scatters on each rank" 'dp reduce-scatter' \
	"$TMP/trace-dp2-zero1.json" "1:50 2:50 "
expect_per_rank "dp2 zero1 trace: no DP all-reduce" 'dp all-reduce' "$TMP/trace-dp2-zero1.json" ""
grep -qE '"name":"dp reduce-scatter","cat":"dp","ph":"X","ts":[-0-9.e+]+,"dur":[-0-9.e+]+,"pid":[0-9]+,"tid":2' \
	"$TMP/trace-dp2-zero1.json" \
	&& fail "dp2 zero1 trace: the reduce-scatters on the gradient-reduce track" "one on tid 2" \
	|| pass "dp2 zero1 trace: the reduce-scatters on the gradient-reduce track"
params=$(json_num params "$TMP/dp2-zero1.json")
verdict=$(grep -oE '"name":"dp [a-z-]+","cat":"dp",[^}]*"pid":[0-9]+,"tid":[0-9]+,"args":\{"step":[0-9]+,"bytes":[0-9.e+]+' \
	"$TMP/trace-dp2-zero1.json" | sed -E 's/"name":"dp ([a-z-]+)".*"pid":([0-9]+).*"step":([0-9]+),"bytes":(.*)/\1 \2 \3 \4/' |
	awk -v want="$params" '{ wire[$2 " " $3] += ($1 == "all-reduce" ? 2 : 1) * $4 / 2 }
		END { n = 0; for (k in wire) { n++; if (wire[k] != 4 * want) bad = bad sprintf(" %s: %d", k, wire[k]) }
		      print (n == 10 && bad == "" && want > 0) ? "ok" : n " rank-steps of " 4 * want " bytes:" bad }')
[ "$verdict" = ok ] && pass "dp2 zero1 trace: $((4 * params)) bytes on the wire a step, one all-reduce's" \
	|| fail "dp2 zero1 trace: one all-reduce's bytes on the wire a step" "$verdict"
verdict=$(first_sum_under_backward "$TMP/trace-dp2-zero1.json" reduce-scatter)
[ "$verdict" = ok ] && pass "dp2 zero1 trace: every step's first reduce-scatter starts under its last backward" \
	|| fail "dp2 zero1 trace: every step's first reduce-scatter starts under its last backward" "$verdict"

# ZeRO shards what it says it shards: peak memory per rank falls with the
# stage (model states are 16 bytes a parameter, 4 + 4 + 8 in fp32)
peak() { array peak_memory_bytes "$1" | head -1; }
p0=$(peak "$TMP/dp2.json") p1=$(peak "$TMP/dp2-zero1.json")
p2=$(peak "$TMP/dp2-zero2.json") p3=$(peak "$TMP/dp2-zero3.json")
if [ -n "$p0" ] && [ "$p0" -gt "$p1" ] && [ "$p1" -gt "$p2" ] && [ "$p2" -gt "$p3" ]; then
	pass "zero 0 > 1 > 2 > 3 in peak memory per rank ($p0 $p1 $p2 $p3 bytes)"
else
	fail "zero 0 > 1 > 2 > 3 in peak memory per rank" "found '$p0' '$p1' '$p2' '$p3'"
fi

# Loss falls: the bigram process's entropy is 1.76 nats at vocabulary 128
# (executor/train/exec_data.c); from ln 128 = 4.85 two data-parallel ranks get
# below 3.0 in 40 steps at lr 0.01 (measured 2.3).
gp execute --layers 2 --hidden 32 --heads 4 --ffn 128 --vocab 128 --seq 16 --dp 2 \
	--mbs 4 --gbs 8 --steps 40 --lr 0.01 --json "$TMP/fall.json"
expect_rc "loss falls: exit 0" 0
last=$(losses "$TMP/fall.json" | tail -1) first=$(losses "$TMP/fall.json" | head -1)
awk -v a="$first" -v b="$last" 'BEGIN { exit !(a > 4.8 && b < 3.0) }' \
	&& pass "loss falls from $first to $last (< 3.0) in 40 steps" \
	|| fail "loss falls below 3.0 in 40 steps" "from '$first' to '$last'"

# A plan file, end to end: the launcher starts mpirun with the plan's 4
# ranks, and the run reproduces the single rank's losses.
gp execute "$FIX/plan_tp2_pp2.json" --steps 5 --json "$TMP/plan.json"
expect_rc "plan file: exit 0" 0
expect_out "plan file: the plan's layout" 'layout: +4 ranks = tp 2 x pp 2 x dp 1'
grep -q '"schema":[[:space:]]*"gpuplan.run/1"' "$TMP/plan.json" \
	&& grep -q '"predicted_step_time_s"' "$TMP/plan.json" \
	&& grep -q '"tokens_per_s"' "$TMP/plan.json" \
	&& pass "plan file: run JSON with schema, tokens/s and prediction" \
	|| fail "plan file: run JSON" "fields missing"
same_losses "plan file: losses equal the single rank's" "$TMP/base.json" "$TMP/plan.json"
# The run JSON compares memory as the table does: the fullest rank's own
# allocations against the prediction less sim_memory's "other" (logits,
# CUDA context and allocator slack, which a rank's count leaves out).
peak=$(array peak_memory_bytes "$TMP/plan.json" | sort -g | tail -1)
want=$(json_num predicted_memory_bytes "$TMP/plan.json")
err=$(json_num memory_error "$TMP/plan.json")
awk -v p="$peak" -v w="$want" -v e="$err" 'BEGIN {
	d = e - (p - w) / w; if (d < 0) d = -d
	exit !(w > 0 && d < 1e-9 && e > -0.3 && e < 0.3) }' \
	&& pass "plan file: memory_error is the fullest rank against the prediction ($err)" \
	|| fail "plan file: memory_error" "peak '$peak', predicted '$want', error '$err'"

# The plan's tied_embeddings and seq_parallel are run as written, and
# --untied and --no-seq-parallel override them.
sed -e 's/"tied_embeddings":[[:space:]]*false/"tied_embeddings": true/' \
	-e 's/"seq_parallel":[[:space:]]*false/"seq_parallel": true/' \
	"$FIX/plan_tp2_pp2.json" > "$TMP/plan-sp-tied.json"
gp execute "$TMP/plan-sp-tied.json" --steps 5 --json "$TMP/plan-sp-tied-run.json"
expect_rc "plan with tied embeddings and sequence parallelism: exit 0" 0
expect_out "plan with sp and tied: runs both" '^layout: .*, sequence parallel,'
grep -q '"tied_embeddings":[[:space:]]*true' "$TMP/plan-sp-tied-run.json" \
	&& grep -q '"seq_parallel":[[:space:]]*true' "$TMP/plan-sp-tied-run.json" \
	&& pass "plan with sp and tied: the run JSON says both" \
	|| fail "plan with sp and tied: the run JSON says both" "fields missing or false"
same_losses "plan with sp and tied: losses equal the tied single rank's" \
	"$TMP/base-tied.json" "$TMP/plan-sp-tied-run.json"
gp execute "$TMP/plan-sp-tied.json" --untied --no-seq-parallel --steps 5 \
	--json "$TMP/plan-untied-run.json"
expect_rc "plan overridden by --untied --no-seq-parallel: exit 0" 0
grep -q '"seq_parallel":[[:space:]]*false' "$TMP/plan-untied-run.json" \
	&& pass "--no-seq-parallel: the run JSON says so" \
	|| fail "--no-seq-parallel: the run JSON says so" "seq_parallel not false"
same_losses "--untied: losses equal the untied single rank's" "$TMP/base.json" \
	"$TMP/plan-untied-run.json"

gp execute $MODEL --tp 2 --seq-parallel --seq 15
expect_rc "sequence parallelism with tp 2 and sequence 15: exit 2" 2
expect_err "sequence 15: says why" 'parallel.seq_parallel: expected tp 2 to divide the sequence 15'
gp execute $MODEL --cp 3
expect_rc "context parallelism with cp 3 and sequence 16: exit 2" 2
expect_err "cp 3: says why" 'parallel.cp: expected 2 x cp to divide the sequence \(16\), found cp 3'

# A token file: 4096 uint16 tokens of a period-7 sequence
awk 'BEGIN { for (i = 0; i < 4096; i++) printf "%c%c", (i % 7) + 1, 0 }' > "$TMP/tok.bin"
gp execute --layers 2 --hidden 32 --vocab 64 --seq 16 --dp 2 --steps 3 --data "$TMP/tok.bin"
expect_rc "token file: exit 0" 0
awk 'BEGIN { for (i = 0; i < 64; i++) printf "%c%c", 100, 0 }' > "$TMP/big.bin"
gp execute --vocab 64 --data "$TMP/big.bin"
expect_rc "token file with a token >= vocab: exit 2" 2
expect_err "token file: names the token" 'big.bin: token 0 .*expected a token < vocab 64, found 100'
# a bad token file is one line before anything runs: nothing on stdout,
# no ranks started (with dp 2 they would each have found it)
for bad in missing odd; do
	[ $bad = odd ] && head -c 11 /dev/zero >"$TMP/odd.bin"
	gp execute --vocab 64 --dp 2 --data "$TMP/$bad.bin"
	expect_rc "token file $bad: exit 2" 2
	expect_err_lines "token file $bad: one error line" 1
	expect_err "token file $bad: names the flag and the file" "^error: --data: .*$bad.bin: "
	[ -s "$OUT" ] && fail "token file $bad: nothing on stdout" "$(head -1 "$OUT")" \
		|| pass "token file $bad: nothing on stdout"
done
# --grad-accum sets gbs = mbs x dp x N: a --gbs that disagrees is refused
# (dp2-accum4 above gives one that agrees)
gp execute --grad-accum 2 --gbs 16
expect_rc "--grad-accum 2 with --gbs 16: exit 2" 2
expect_err "--grad-accum 2 with --gbs 16: says why" '^error: --grad-accum: expected mbs 2 x dp 1 x 2 = --gbs, found --gbs 16'

# ---- faults: one clear message, non-zero exit, within seconds ----------

start=$SECONDS
run "kill rank 1 at step 3" env GPUPLAN_FAULT_KILL_RANK=1:3 timeout $LIMIT \
	$GPUPLAN execute --dp 2 --steps 20
expect_rc "killed rank: job exits 1" 1
expect_err "killed rank: message names rank 1" 'rank 1'
expect_err "killed rank: the launcher says the job failed" '^error: execute: the job failed'
grep -q -e 'Primary job' -e 'mpirun noticed' "$ERR" \
	&& fail "killed rank: no mpirun banner" "$(grep -c . "$ERR") lines on stderr" \
	|| pass "killed rank: no mpirun banner"
[ $((SECONDS - start)) -lt 20 ] && pass "killed rank: ended in $((SECONDS - start)) s (< 20)" \
	|| fail "killed rank: ended within 20 s" "took $((SECONDS - start)) s"

run "kill rank 5 of 8 under mpirun" env GPUPLAN_FAULT_KILL_RANK=5:2 timeout $LIMIT \
	$MPIRUN -np 8 "$RAW" execute --tp 2 --pp 2 --dp 2 --mbs 1 --steps 10
[ "$RC" != 0 ] && [ "$RC" != 124 ] && pass "killed rank of 8: non-zero exit $RC, no hang" \
	|| fail "killed rank of 8: non-zero exit, no hang" "exit $RC"
expect_err "killed rank of 8: message names rank 5" 'rank 5'

gp execute --heads 6 --kv-heads 6 --hidden 60 --ffn 120 --tp 4
expect_rc "unsplittable heads: exit 2" 2
expect_err "unsplittable heads: says why" '^error: execute: parallel.tp: expected a divisor of heads \(6\)'
expect_err_lines "unsplittable heads: one error line" 1

# what the split cannot give: a stage without a layer, a chunk without one
gp execute $MODEL --layers 3 --pp 4
expect_rc "3 layers over pp 4: exit 2" 2
expect_err "3 layers over pp 4: says why" \
	'^error: execute: parallel.pp: expected at most the 3 layers \(one a stage\), found 4$'
expect_err_lines "3 layers over pp 4: one error line" 1
gp execute $MODEL --layers 7 --pp 4 --interleave 2 --mbs 1
expect_rc "7 layers over pp 4 x v 2: exit 2" 2
expect_err "7 layers over pp 4 x v 2: says why" \
	'parallel.interleave: expected at most 1, a layer a chunk \(stage 3 holds 1 of the 7 layers\), found 2$'
expect_err_lines "7 layers over pp 4 x v 2: one error line" 1

gp execute "$FIX/plan_bad_tp.json"
expect_rc "plan with unsplittable tp: exit 2" 2
expect_err "plan with unsplittable tp: says why" 'parallel.tp: expected a divisor of heads \(4\) and kv_heads \(2\), found 4'

gp execute --dp 128 --gbs 256
expect_rc "too many ranks: exit 2" 2
expect_err "too many ranks: says the limit" 'layout: expected at most 64 ranks, found 128'

gp execute --dp 2 --np 4
expect_rc "--np disagrees with the layout: exit 2" 2
expect_err "--np disagrees: says so" '^error: --np: expected 2 \(tp 1 x pp 1 x dp 2\), found 4'

run "wrong rank count under mpirun" timeout $LIMIT $MPIRUN -np 3 "$RAW" execute --dp 2
expect_rc "wrong rank count under mpirun: exit 2" 2
expect_err "wrong rank count: says so" 'layout: expected 2 ranks \(tp 1 x pp 1 x dp 2\), found 3'
# every rank fails its options alike, and waits until rank 0 has said why
run "bad layout under mpirun" timeout $LIMIT $MPIRUN -np 3 "$RAW" execute --tp 3
expect_rc "bad layout under mpirun: exit 2" 2
expect_err "bad layout under mpirun: says why" '^error: execute: parallel\.tp: expected a divisor of heads'

run "no mpirun in PATH" env PATH=/nonexistent GPUPLAN_MPIRUN= "$RAW" execute --dp 2
expect_rc "no mpirun: exit 4" 4
expect_err "no mpirun: says so" '^error: execute: mpirun not found'
expect_err_lines "no mpirun: one error line" 1
run "GPUPLAN_MPIRUN names no program" env GPUPLAN_MPIRUN=/nonexistent/mpirun $GPUPLAN execute --tp 2
expect_rc "GPUPLAN_MPIRUN names no program: exit 4" 4

finish
