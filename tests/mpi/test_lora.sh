#!/usr/bin/env bash
# test_lora.sh - the executor trains LoRA adapters with the base frozen
# (Hu et al. 2021) in every layout it runs: under mpirun each layout
# computes the single rank's LoRA losses, reports that its base weights
# are bit for bit as drawn after the last step (every rank's FNV-1a of its
# frozen fp32 masters), and counts the adapters alone as trainable; a
# LoRA plan runs end to end; what the executor does not run of fine-
# tuning is refused in one line with exit 2.
#
# test_layouts.sh's model (8 layers, hidden 32, 4 heads sharing 2 KV
# heads, MLP 64, vocabulary 64, sequence 16, global batch 8, 5 steps),
# rank 4 adapters on every projection at lr 0.01.
. "$(dirname "$0")/../cli/lib.sh"

MODEL="--layers 8 --hidden 32 --heads 4 --kv-heads 2 --ffn 64 --vocab 64 --seq 16 --gbs 8 --steps 5 --no-flash --finetune lora --lora-rank 4 --lr 0.01"
LIMIT=60   # seconds any one run may take before it counts as a hang
. "$(dirname "$0")/lib.sh"

if ! command -v mpirun >/dev/null; then
	echo "ok - skipped: mpirun not installed"
	finish
	exit
fi

# base_unchanged NAME FILE: the run file says the frozen base is unchanged
base_unchanged() {
	grep -q '"base_unchanged":[[:space:]]*true' "$2" \
		&& pass "$1: base weights bit for bit as drawn" \
		|| fail "$1: base weights bit for bit as drawn" "$(grep -o '"base_unchanged":[^,]*' "$2")"
}

# lora_layout NAME NP BASE FLAGS: a layout's losses, and its frozen base
lora_layout() {
	layout "$@"
	base_unchanged "$1" "$TMP/$1.json"
}

# Adapters per layer, r (in + out) each: q 4 (32 + 32) = 256, k and v
# 4 (32 + 16) = 192, o 256, up 4 (32 + 64) = 384, down 384 (GELU: no
# gate): 1,664 a layer, 13,312 for 8 layers; with SwiGLU's gate 384 more
# a layer, 16,384.
gp execute $MODEL --mbs 2 --json "$TMP/base.json"
expect_rc "single rank: exit 0" 0
expect_out "single rank: says what trains" \
	'^finetune: lora, rank 4 on all \(alpha 8\): adapters trained, the base frozen$'
expect_out "single rank: the adapters' count and the frozen base" \
	'^lora: 13\.3k trainable parameters \(the adapters\); the base weights bit for bit as drawn after the last step$'
expect_out "single rank: the optimizer's states measured against predicted" \
	'^optimizer per rank +104\.0 KiB +104\.0 KiB +\+0\.0%$'
n=$(json_num trainable_params "$TMP/base.json")
[ "$n" = 13312 ] && pass "single rank: 13,312 trainable parameters" \
	|| fail "single rank: 13,312 trainable parameters" "found '$n'"
base_unchanged "single rank" "$TMP/base.json"
last=$(losses "$TMP/base.json" | tail -1) first=$(losses "$TMP/base.json" | head -1)
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a) }' \
	&& pass "single rank: the adapters learn, loss $first -> $last" \
	|| fail "single rank: the adapters learn" "loss $first -> $last"
gp execute $MODEL --mlp swiglu --mbs 2 --json "$TMP/base-swiglu.json"
expect_rc "single rank, swiglu: exit 0" 0
n=$(json_num trainable_params "$TMP/base-swiglu.json")
[ "$n" = 16384 ] && pass "single rank, swiglu: 16,384 trainable parameters (the gate's too)" \
	|| fail "single rank, swiglu: 16,384 trainable parameters" "found '$n'"
gp execute $MODEL --lora-targets q,v,down --mbs 2 --json "$TMP/base-qvd.json"
expect_rc "single rank, q,v,down: exit 0" 0
gp execute $MODEL --tied --mbs 2 --json "$TMP/base-tied.json"
expect_rc "single rank, tied: exit 0" 0

each_layout lora_layout
lora_layout swiglu-tp2xpp2xdp2-zero3-v2 8 base-swiglu --mlp swiglu --tp 2 --pp 2 --dp 2 \
	--zero 3 --interleave 2 --recompute full --mbs 1
lora_layout cp2 2 base --cp 2 --mbs 2
lora_layout tp2xcp2-sp 4 base --tp 2 --cp 2 --seq-parallel --mbs 1
lora_layout tied-pp2 2 base-tied --tied --pp 2 --mbs 2
lora_layout qvd-tp2xdp2-zero1 4 base-qvd --lora-targets q,v,down --tp 2 --dp 2 --zero 1 --mbs 1
# the gradient norms too: the adapters' shares summed over TP (a whole A
# of a column-parallel projection, a whole B of a row-parallel one)
same_losses "tp2xpp2xdp2: 5 gradient norms equal the single rank's within 1e-5" \
	"$TMP/base.json" "$TMP/tp2xpp2xdp2.json" grad_norms
same_losses "tp2xcp2-sp: 5 gradient norms equal the single rank's within 1e-5" \
	"$TMP/base.json" "$TMP/tp2xcp2-sp.json" grad_norms
# every layout counts the adapters once, whatever it replicates
for name in tp2 tp2xpp2xdp2 dp2-zero3 tp2xcp2-sp; do
	n=$(json_num trainable_params "$TMP/$name.json")
	[ "$n" = 13312 ] && pass "$name: 13,312 trainable parameters" \
		|| fail "$name: 13,312 trainable parameters" "found '$n'"
done
# ZeRO shards the adapters' states alone: AdamW's moments 8 bytes a
# trainable parameter, 106,496 bytes on one rank, half of it (53,248)
# on each of two with ZeRO 1
o0=$(json_num optimizer_bytes "$TMP/base.json") o1=$(json_num optimizer_bytes "$TMP/dp2-zero1.json")
[ "$o0" = 106496 ] && [ "$o1" = 53248 ] \
	&& pass "AdamW's moments: $o0 bytes on one rank, $o1 on each of dp 2 with ZeRO 1" \
	|| fail "AdamW's moments: 106496 bytes, 53248 with ZeRO 1 over dp 2" "found '$o0' '$o1'"

# A LoRA plan end to end: its rank and targets run as the plan says
sed 's/"parallel":/"finetune": { "method": "lora", "lora_rank": 4, "lora_targets": "all", "offload": "none" },\n\t"parallel":/' \
	tests/fixtures/exec/plan_tp2_pp2.json > "$TMP/plan-lora.json"
gp execute "$TMP/plan-lora.json" --steps 5 --lr 0.01 --json "$TMP/plan-run.json"
expect_rc "LoRA plan: exit 0" 0
expect_out "LoRA plan: says what trains" '^finetune: lora, rank 4 on all'
same_losses "LoRA plan: losses equal the single rank's" "$TMP/base.json" "$TMP/plan-run.json"
base_unchanged "LoRA plan" "$TMP/plan-run.json"
grep -q '"predicted_optimizer_bytes"' "$TMP/plan-run.json" \
	&& pass "LoRA plan: the prediction's states by kind in the run file" \
	|| fail "LoRA plan: the prediction's states by kind in the run file" "none"

# ---- what it does not run: one line, exit 2 ---------------------------
gp execute $MODEL --finetune qlora
expect_rc "--finetune qlora: exit 2" 2
expect_err "--finetune qlora: says why" \
	'^error: execute: finetune: expected none, full or lora, which the executor runs \(it keeps no 4-bit NormalFloat base weights\), found qlora$'
expect_err_lines "--finetune qlora: one error line" 1
gp execute $MODEL --experts 4 --top-k 2 --expert-ffn 16
expect_rc "LoRA with experts: exit 2" 2
expect_err "LoRA with experts: says why" \
	'^error: execute: finetune: expected a dense model for lora \(the executor adapts no expert projections\), found 4 experts$'
gp execute --lora-rank 4
expect_rc "--lora-rank without LoRA: exit 2" 2
expect_err "--lora-rank without LoRA: says why" \
	'^error: --lora-rank: expected --finetune lora \(or a LoRA plan\) with it, found none$'
gp execute $MODEL --lora-targets gate
expect_rc "--lora-targets gate on a GELU MLP: exit 2" 2
expect_err "--lora-targets gate: says why" \
	'lora_targets: expected a projection the model has, found only gate in a GELU MLP$'
gp execute $MODEL --lora-targets q,x
expect_rc "--lora-targets q,x: exit 2" 2
expect_err_lines "--lora-targets q,x: one error line" 1

finish
