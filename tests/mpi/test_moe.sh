#!/usr/bin/env bash
# test_moe.sh - the executor's mixture of experts under mpirun: every
# expert-parallel layout (EP 1, 2, 4; with TP, PP, DP, CP, ZeRO,
# recomputation, interleaving, tied embeddings) computes the single
# rank's losses and gradient norms, the experts' gradients are summed over
# the expert-data-parallel group and not the data-parallel one, an MoE
# plan file runs end to end against its prediction, and layouts the
# executor does not run are one line and exit status 2.
#
# The model runs in seconds on 2 cores: 4 layers (PP 2 x v 2 needs 4
# chunks), hidden 32, 4 heads sharing 2 KV heads, vocabulary 64,
# sequence 16, global batch 8, 5 steps; 8 experts of width 32, top-2.
# The second model: SwiGLU experts of width 16, one shared expert of 32,
# a dense first layer (MLP 64), and the router's pre-softmax weights.
. "$(dirname "$0")/../cli/lib.sh"

DENSE="--layers 4 --hidden 32 --heads 4 --kv-heads 2 --ffn 64 --vocab 64 --seq 16 --gbs 8 --no-flash"
SHAPE="$DENSE --experts 8 --top-k 2 --expert-ffn 32"
MODEL="$SHAPE --steps 5"
SHARED="--mlp swiglu --expert-ffn 16 --shared-experts 1 --shared-ffn 32 --dense-layers 1 --router-pre-softmax 1"
LIMIT=60
. "$(dirname "$0")/lib.sh"

if ! command -v mpirun >/dev/null; then
	echo "ok - skipped: mpirun not installed"
	finish
	exit
fi

# the references: one rank, mbs 2 x 4 micro-batches
gp execute $MODEL --mbs 2 --json "$TMP/base.json"
expect_rc "single rank, 8 experts top-2: exit 0" 0
expect_out "single rank: says its experts" '^experts: 8 of width 32, top-2 \(renormalised\), ep 1 x expert dp 1$'
gp execute $MODEL $SHARED --mbs 2 --json "$TMP/base-shared.json"
expect_rc "single rank, shared expert, dense layer: exit 0" 0
expect_out "single rank, shared: says so" \
	'^experts: 8 of width 16, top-2 \(softmax over all\), 1 shared of width 32, the first 1 layer dense'
gp execute $MODEL --tied --mbs 2 --json "$TMP/base-tied.json"
expect_rc "single rank, tied: exit 0" 0
# the experts change the model: a dense run's losses are not these
gp execute $DENSE --steps 5 --mbs 2 --json "$TMP/dense.json"
verdict=$(paste <(losses "$TMP/base.json") <(losses "$TMP/dense.json") | awk '$1 != $2 { n++ } END { print n + 0 }')
[ "$verdict" = 5 ] && pass "the MoE model's losses are not the dense model's" \
	|| fail "the MoE model's losses are not the dense model's" "$verdict of 5 differ"

# Expert parallelism folded over the data-parallel ranks: ep 1 keeps
# every expert on each DP rank (expert DP 2), ep 2 and 4 share them out.
layout_norms ep1-dp2 2 base --dp 2 --mbs 2
layout_norms ep2-dp2 2 base --dp 2 --ep 2 --mbs 2
layout_norms ep4-dp4 4 base --dp 4 --ep 4 --mbs 1
layout_norms ep2-dp4 4 base --dp 4 --ep 2 --mbs 1
# over tensor parallelism: each TP rank routes its own slice of the
# sequence (sequence parallel), the experts shared over TP ranks
layout_norms ep2-tp2 2 base --tp 2 --seq-parallel --ep 2 --mbs 2
layout_norms ep4-tp2xdp2 4 base --tp 2 --dp 2 --seq-parallel --ep 4 --mbs 1
layout_norms ep1-tp2 2 base --tp 2 --seq-parallel --mbs 2
# with pipeline stages, each stage's own EP groups
layout_norms ep2-pp2xdp2 4 base --pp 2 --dp 2 --ep 2 --mbs 1
layout ep2-pp2xdp2-v2 4 base --pp 2 --dp 2 --ep 2 --interleave 2 --mbs 1
layout_norms ep4-tp2xpp2xdp2-zero1 8 base --tp 2 --pp 2 --dp 2 --seq-parallel --ep 4 --zero 1 \
	--mbs 1
# ZeRO shards the experts' states over the expert-DP group
layout ep2-dp2-zero2 2 base --dp 2 --ep 2 --zero 2 --mbs 2
layout_norms ep2-dp4-zero3 4 base --dp 4 --ep 2 --zero 3 --mbs 1
# recomputation runs the dispatch again before the backward
layout ep2-dp2-recompute-full 2 base --dp 2 --ep 2 --recompute full --mbs 2
layout ep2-tp2-recompute-selective 2 base --tp 2 --seq-parallel --ep 2 --recompute selective \
	--mbs 2
layout ep2-cp2 2 base --cp 2 --ep 2 --mbs 2
layout_norms ep2-pp2xdp2-tied 4 base-tied --pp 2 --dp 2 --ep 2 --tied --mbs 1
# shared experts (tensor parallel), a dense layer, the other router
layout_norms shared-ep2-dp2 2 base-shared $SHARED --dp 2 --ep 2 --mbs 2
layout_norms shared-ep4-tp2xpp2xdp2 8 base-shared $SHARED --tp 2 --pp 2 --dp 2 --seq-parallel \
	--ep 4 --zero 1 --mbs 1

# The experts' gradients are summed over the expert-DP group, the rest
# over DP: ep 2 over dp 4 makes expert-DP groups of 2.  A step sums each
# dense unit (embedding, 4 layers, head) over DP and each layer's experts
# over expert DP: 30 and 20 sums over 5 steps on each rank; and each
# layer's micro-batch (2 a step) sends counts, rows and rows back
# forward, rows and rows back backward: 5 all-to-alls, 200 over 5 steps.
layout ep2-dp4-trace 4 base --dp 4 --ep 2 --mbs 1 --trace "$TMP/trace.json"
per_rank() {
	grep -oE "\"name\":\"$1\",\"cat\":\"[a-z0-9-]+\",\"ph\":\"X\",\"ts\":[-0-9.e+]+,\"dur\":[-0-9.e+]+,\"pid\":[0-9]+" "$2" |
		sed 's/.*"pid"://' | sort -n | uniq -c | awk '{printf "%s:%s ", $2, $1}'
}
for c in "dp all-reduce:30" "edp all-reduce:20" "ep all-to-all:200"; do
	want=${c##*:} got=$(per_rank "${c%:*}" "$TMP/trace.json")
	[ "$got" = "1:$want 2:$want 3:$want 4:$want " ] && pass "ep2 x dp4 trace: $want ${c%:*}s on each rank" \
		|| fail "ep2 x dp4 trace: $want ${c%:*}s on each rank" "found '$got'"
done

# the most events an MoE step makes (a recomputed dispatch, ZeRO-3's
# gathers and reduce-scatters of the experts over expert DP) fit the
# recorder's bound
layout ep2-tp2xdp2-zero3-full-trace 4 base --tp 2 --dp 2 --seq-parallel --ep 2 --zero 3 \
	--recompute full --mbs 1 --trace "$TMP/trace-heavy.json"
grep -q '"dropped_events":0' "$TMP/trace-heavy.json" \
	&& pass "ep2 x tp2 x dp2, zero3, full recompute trace: no event dropped" \
	|| fail "ep2 x tp2 x dp2, zero3, full recompute trace: no event dropped" \
		"$(grep -o '"dropped_events":[0-9]*' "$TMP/trace-heavy.json")"
grep -q '"edp reduce-scatter","cat":"edp"' "$TMP/trace-heavy.json" \
	&& pass "heavy trace: the experts' gradients reduce-scattered over expert DP" \
	|| fail "heavy trace: the experts' gradients reduce-scattered over expert DP" "none found"

# Each rank holds its share of the experts: over dp 4, ep 4 a quarter
# of them where ep 2 holds half; ZeRO-3 shards ep 2's states over its
# expert-DP group (and the rest over DP).
p4=$(array peak_memory_bytes "$TMP/ep4-dp4.json" | head -1)
p2=$(array peak_memory_bytes "$TMP/ep2-dp4.json" | head -1)
p3=$(array peak_memory_bytes "$TMP/ep2-dp4-zero3.json" | head -1)
if [ -n "$p4" ] && [ -n "$p2" ] && [ -n "$p3" ] && [ "$p2" -gt "$p4" ] && [ "$p2" -gt "$p3" ]; then
	pass "peak memory per rank: ep 2 above ep 4 and above ep 2 with ZeRO-3 ($p2 > $p4, $p3 bytes)"
else
	fail "peak memory per rank: ep 2 above ep 4 and above ep 2 with ZeRO-3" "found '$p2' '$p4' '$p3'"
fi
# every layout counts the model's parameters once
want=$(json_num params "$TMP/base.json")
for r in ep2-dp2 ep4-tp2xdp2 ep4-tp2xpp2xdp2-zero1 ep2-dp4-zero3; do
	got=$(json_num params "$TMP/$r.json")
	[ -n "$want" ] && [ "$got" = "$want" ] && pass "$r: $got parameters, the single rank's" \
		|| fail "$r: the single rank's parameters" "found '$got', expected '$want'"
done

# Checkpoints keep each rank's experts: ep 2 over dp 2 stopped after
# step 3 and resumed gives the single rank's steps 4 and 5; a resume at
# another ep is refused.
run "ep2-dp2: 3 steps, checkpointed" timeout $LIMIT $MPIRUN -np 2 "$RAW" execute $SHAPE --dp 2 \
	--ep 2 --mbs 2 --steps 3 --checkpoint-dir "$TMP/ckpt" --checkpoint-every 3
expect_rc "ep2-dp2 checkpointed: exit 0" 0
run "ep2-dp2: resumed" timeout $LIMIT $MPIRUN -np 2 "$RAW" execute $SHAPE --dp 2 --ep 2 --mbs 2 \
	--steps 5 --checkpoint-dir "$TMP/ckpt" --resume --json "$TMP/resumed.json"
expect_rc "ep2-dp2 resumed: exit 0" 0
verdict=$(paste <(losses "$TMP/base.json" | tail -2) <(losses "$TMP/resumed.json") | awk '
	{ n++; d = $1 - $2; if (d < 0) d = -d; if (d > 1e-5 * $1) bad = 1 }
	END { print (n == 2 && !bad) ? "ok" : "differ" }')
[ "$verdict" = ok ] && pass "ep2-dp2 resumed: steps 4 and 5 are the single rank's" \
	|| fail "ep2-dp2 resumed: steps 4 and 5 are the single rank's" "$verdict"
gp execute $SHAPE --dp 2 --mbs 2 --steps 5 --checkpoint-dir "$TMP/ckpt" --resume
expect_rc "resume at ep 1 of an ep 2 checkpoint: exit 2" 2
expect_err "resume at another ep: says why" "expected a checkpoint of this run's layout \(tp 1 x pp 1 x dp 2 x cp 1, ep 1,"

# An MoE plan file, end to end: the launcher starts mpirun with the
# plan's 4 ranks (dp 4, ep 2), the run reproduces the single rank's
# losses, and the measurement goes beside the simulator's prediction.
gp simulate $SHAPE --mbs 1 --gpu H100 --gpus 4 --dp 4 --ep 2 -o "$TMP/plan.json"
expect_rc "simulate writes an MoE plan: exit 0" 0
gp execute $MODEL --mbs 1 --json "$TMP/base-mbs1.json"
gp execute "$TMP/plan.json" --steps 5 --json "$TMP/plan-run.json"
expect_rc "MoE plan file: exit 0" 0
expect_out "MoE plan file: the plan's experts and layout" '^experts: 8 of width 32, top-2 .*, ep 2 x expert dp 2$'
expect_out "MoE plan file: measured against predicted" '^step CPU time \(median\) +[0-9.]+ ms +[0-9.]+ ms'
same_losses "MoE plan file: losses equal the single rank's" "$TMP/base-mbs1.json" "$TMP/plan-run.json"
pt=$(json_num predicted_step_time_s "$TMP/plan-run.json")
pm=$(json_num predicted_memory_bytes "$TMP/plan-run.json")
awk -v t="$pt" -v m="$pm" 'BEGIN { exit !(t > 0 && m > 0) }' \
	&& pass "MoE plan file: the run JSON holds the prediction ($pt s, $pm bytes)" \
	|| fail "MoE plan file: the run JSON holds the prediction" "step '$pt', memory '$pm'"

# --hidden shrinks a plan's experts with its MLP (width 32 at hidden 32:
# 64 at 64), unless --expert-ffn says otherwise
gp execute "$TMP/plan.json" --hidden 64 --steps 1
expect_rc "MoE plan at --hidden 64: exit 0" 0
expect_out "MoE plan at --hidden 64: the experts' width keeps its ratio" '^experts: 8 of width 64,'
gp execute "$TMP/plan.json" --hidden 64 --expert-ffn 48 --steps 1
expect_out "MoE plan at --hidden 64 --expert-ffn 48: as given" '^experts: 8 of width 48,'

# Layouts the executor does not run: one line, exit 2, before any rank
bad() {
	local name=$1 re=$2
	shift 2
	gp execute $MODEL "$@"
	expect_rc "$name: exit 2" 2
	expect_err_lines "$name: one error line" 1
	expect_err "$name: says why" "$re"
}
bad "ep 3 of 8 experts" 'parallel\.ep: expected a divisor of the 8 experts, found 3' --dp 3 --gbs 6 --ep 3
bad "ep 4 over 2 ranks" 'parallel\.ep: expected a divisor of tp x cp x dp = 2, the ranks of a pipeline stage the experts fold over, found 4' \
	--dp 2 --ep 4
bad "etp 2" 'parallel\.etp: expected 1, experts whole on one rank' --dp 2 --etp 2
bad "tp 2 without sequence parallelism" 'parallel\.seq_parallel: expected sequence parallelism with tp 2 and experts' \
	--tp 2 --ep 2
bad "ep without experts" 'parallel\.ep: expected 1 without experts, found 2' --experts 0 --top-k 0 \
	--expert-ffn 0 --dp 2 --ep 2
bad "top-k above the experts" 'model\.top_k: expected 1 to experts 8, found 9' --top-k 9
sed 's/"ep_dispatcher":[[:space:]]*"alltoall"/"ep_dispatcher": "flex"/' "$TMP/plan.json" >"$TMP/flex.json"
gp execute "$TMP/flex.json" --steps 1
expect_rc "a plan with the flex dispatcher: exit 2" 2
expect_err "flex dispatcher: says why" 'parallel\.ep_dispatcher: expected alltoall'

finish
