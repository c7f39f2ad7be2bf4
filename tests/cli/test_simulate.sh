#!/usr/bin/env bash
# test_simulate.sh - `gpuplan simulate`: flags and plan files in, the
# breakdown, --json and -o out, one-line errors with exit status 2.
. "$(dirname "$0")/lib.sh"

gp simulate --help
expect_rc "help exits 0" 0
for o in --model --layers --hidden --heads --kv-heads --ffn --vocab --seq --mlp --tied \
	 --gpu --gpus --gpus-per-node --intra-node-gbps --inter-node-gbps --tp --pp --dp --cp \
	 --mbs --gbs --zero --recompute --interleave --pp-last-layers --recompute-modules --seq-parallel --no-flash --precision \
	 --tokens --usd-per-gpu-hour --json --output --experts --top-k --expert-ffn \
	 --shared-experts --shared-ffn --dense-layers --mtp-layers --head-dim --kv-lora-rank \
	 --q-lora-rank --qk-nope-dim --qk-rope-dim --v-head-dim --sliding-window \
	 --window-full-every --attention-sinks --ep --etp --moe-imbalance --ep-overlap --ep-dispatcher --nvlink-domain --stack; do
	grep -q -- "$o" "$OUT" || fail "help lists $o" "missing"
done
pass "help lists every option"

gp simulate --model llama3-70b --gpu H100 --gpus 64 --tp 4 --pp 4 --gbs 128 \
	--interleave 5 --seq-parallel --zero 1 --tokens 1T --usd-per-gpu-hour 2.5
expect_rc "preset simulates" 0
expect_out "prints step time" '^step time [0-9.]+ (s|ms)'
expect_out "prints each part with its share" 'pp bubble +[0-9.]+ (s|ms) +[0-9.]+%'
expect_out "prints MFU" '^MFU [0-9.]+%, HFU [0-9.]+%'
expect_out "prints memory against capacity" '^memory per GPU .* of .*GiB: (fits|does NOT fit)'
expect_out "prints time and cost" 'time to train 1T tokens: .*cost \$'

gp simulate --layers 24 --hidden 2048 --heads 16 --gpu A100-80GB --gpus 8 --gbs 64 --json
expect_rc "custom model --json" 0
for k in step_time_s tokens_per_s model_tflops_per_gpu hardware_tflops_per_gpu mfu hfu \
	 memory_per_gpu_bytes fits breakdown compute tp_comm pp_bubble pp_comm \
	 dp_comm_exposed optimizer memory weights grads activations other; do
	grep -q "\"$k\":" "$OUT" || fail "--json has $k" "missing"
done
pass "--json has every documented key"
grep -Eqi 'nan|inf' "$OUT" && fail "--json is finite" "found nan/inf" || pass "--json is finite"
cp "$OUT" "$TMP/a.json"
gp simulate --layers 24 --hidden 2048 --heads 16 --gpu A100-80GB --gpus 8 --gbs 64 --json
cmp -s "$OUT" "$TMP/a.json" && pass "--json is byte-identical run to run" \
	|| fail "--json is byte-identical run to run" "differs"

gp simulate --model gpt3-175b --gpu A100-80GB --gpus 1024 --tp 8 --pp 8 --recompute full \
	--interleave 2 -o "$TMP/plan.json"
expect_rc "-o writes a plan" 0
grep -Eq '"schema":[[:space:]]*"gpuplan.plan/1"' "$TMP/plan.json" && pass "plan has the schema" \
	|| fail "plan has the schema" "missing"
gp simulate "$TMP/plan.json" --json
expect_rc "plan file simulates" 0
cp "$OUT" "$TMP/from_plan.json"
gp simulate --model gpt3-175b --gpu A100-80GB --gpus 1024 --tp 8 --pp 8 --recompute full \
	--interleave 2 --json
cmp -s "$OUT" "$TMP/from_plan.json" && pass "plan file and flags agree" \
	|| fail "plan file and flags agree" "differs"
gp simulate "$TMP/plan.json" --pp 16 --json
expect_rc "flags override a plan" 0
cmp -s "$OUT" "$TMP/from_plan.json" && fail "override changes the answer" "same" \
	|| pass "override changes the answer"

gp simulate --model gpt3-175b --gpu A100-80GB --gpus 1280 --tp 5 --pp 8
expect_rc "tp not dividing heads exits 2" 2
expect_err "says why" 'error: simulate: tp: expected a divisor of heads 96, found 5'
expect_err_lines "one error line" 1

gp simulate --model gpt3-175b --gpu A100-80GB --gpus 1024 --tp 8 --pp 8 --gbs 1000
expect_rc "gbs not dividing exits 2" 2
expect_err "gbs error" 'gbs: expected a multiple of mbs x dp'

gp simulate --model gpt3-175b --gpu A100-80GB --gpus 1000 --tp 8 --pp 8
expect_rc "gpus not a multiple exits 2" 2
expect_err "gpus error" '^error: --gpus: expected a multiple of tp x pp x cp = 64, found 1000'
# a model without a batch gets plan's, and says so, but not before an error
gp simulate --layers 2 --hidden 100 --heads 3 --gpu H100 --gpus 1
expect_rc "heads not dividing hidden exits 2" 2
[ "$(wc -l <"$ERR")" = 1 ] && pass "a bad custom model: one line on stderr, the error" \
	|| fail "a bad custom model: one line on stderr, the error" "$(cat "$ERR")"

# a preset without a batch gets plan's: 4 Mi tokens / 8192 = 512 sequences
gp simulate --model llama3-70b --gpu H100 --gpus 64 --tp 8 --pp 2
expect_rc "a preset without a batch: exit 0" 0
expect_err "a preset without a batch: says which it took" '^gbs 512 sequences of 8192'
expect_out "a preset without a batch: 512 sequences, 128 micro-batches" 'gbs 512 \(128 micro-batches\)'

gp simulate --model no-such-model --gpu H100 --gpus 8 --gbs 8
expect_rc "unknown model exits 2" 2
expect_err "unknown model" "^error: --model: expected a preset"

# A plan file, calibration or export input that is not there, or is a
# directory, is the user's input being wrong: exit 2 like a bad field.
for args in "simulate $TMP/no-such-plan.json" "simulate $TMP" "export --format slurm $TMP/no-such-plan.json" \
	"simulate --model llama3-8b --gpu H100 --gpus 8 --gbs 8 --calibration $TMP/no-such-cal.json" \
	"execute $TMP/no-such-plan.json"; do
	gp $args
	expect_rc "$args exits 2" 2
	expect_err "$args names the file" "^error: $TMP/no-such-[a-z]*.json: cannot open: No such file|^error: $TMP: cannot read: Is a directory"
done

gp simulate --model llama3-8b --gpu NoSuchGPU --gpus 8 --gbs 8
expect_rc "unknown gpu exits 2" 2
expect_err "unknown gpu" "^error: --gpu: expected a GPU"

gp simulate --model llama3-8b --gpu H100 --gpus 8 --gbs 8 --zero 4
expect_rc "zero 4 exits 2" 2
expect_err "zero range" "^error: --zero: expected an integer from 0 to 3, found '4'"

gp simulate --model llama3-8b --gpu H100 --gpus 8 --gbs 8 --recompute most
expect_rc "bad recompute exits 2" 2
expect_err "recompute" "^error: --recompute: expected none, selective or full"

gp simulate --model llama3-8b --gpu H100 --gpus 8 --gbs 8 --bogus
expect_rc "unknown option exits 2" 2

gp simulate --layers 24 --hidden 2048 --gpu H100 --gpus 8 --gbs 8
expect_rc "incomplete custom model exits 2" 2
expect_err "names what is missing" -- '--heads'

printf '{"schema": "gpuplan.plan/1", "model": {' > "$TMP/broken.json"
gp simulate "$TMP/broken.json"
expect_rc "broken plan exits 2" 2
expect_err "names file:line:col" 'broken.json:1:[0-9]+: expected valid JSON'

sed 's/"tp":[[:space:]]*8/"tp": -2/' "$TMP/plan.json" > "$TMP/badtp.json"
gp simulate "$TMP/badtp.json"
expect_rc "bad plan field exits 2" 2
expect_err "names the field" 'badtp.json: .parallel.tp: expected an integer from 1 to [0-9]+, found -2'
# RoPE's scaling travels in the plan file as the preset states it, and a
# bad one is one line and exit 2
gp simulate --model gpt-oss-120b --gpu B200 --gpus 8 --ep 8 -o "$TMP/oss.json"
expect_rc "gpt-oss simulates" 0
grep -q '"rope_scaling":[[:space:]]*"yarn"' "$TMP/oss.json" && grep -q '"rope_factor":[[:space:]]*32' "$TMP/oss.json" &&
	pass "the plan carries YaRN and its factor" || fail "the plan carries YaRN and its factor" "not in oss.json"
gp simulate --model gpt-oss-120b --gpu B200 --gpus 8 --ep 8 --json
step=$(json_num step_time_s "$OUT")
gp simulate "$TMP/oss.json" --json
[ "$(json_num step_time_s "$OUT")" = "$step" ] && pass "the plan file steps as the preset" ||
	fail "the plan file steps as the preset" "$(json_num step_time_s "$OUT") vs $step"
sed 's/"rope_scaling":[[:space:]]*"yarn"/"rope_scaling": "ntk"/' "$TMP/oss.json" > "$TMP/badrope.json"
gp simulate "$TMP/badrope.json"
expect_rc "an unknown rope scaling exits 2" 2
expect_err "names the rope field" 'badrope.json: .model.rope_scaling: expected none, linear, llama3 or yarn, found "ntk"'
expect_err_lines "one error line" 1
sed 's/"rope_factor":[[:space:]]*32/"rope_factor": 0.5/' "$TMP/oss.json" > "$TMP/badrope.json"
gp simulate "$TMP/badrope.json"
expect_rc "a rope factor below 1 exits 2" 2
expect_err "names the factor" 'badrope.json: .model.rope_factor: expected a number from 1 to 1000, found 0.5'
# a device below a TFLOP/s (the executor's CPU ranks) in GFLOP/s, where
# TFLOP/s to one decimal read 0.0
gp simulate --model megatron-1.7b --gpu cpu --gpus 1 --gbs 8
expect_rc "simulate on the cpu device exits 0" 0
expect_out "cpu device: GFLOP/s, not 0.0 TFLOP/s" \
	'^GFLOP/s per GPU  [1-9][0-9.]* model, [1-9][0-9.]* hardware \(peak [1-9][0-9.]* fp32\)'
# a figure so large that the step's products overflow is refused, not
# answered with a step of 0 ms
sed 's/"host_layer_s":[^,}]*/"host_layer_s": 1e308/' "$TMP/plan.json" > "$TMP/huge.json"
gp simulate "$TMP/huge.json"
expect_rc "a 1e308 figure exits 2" 2
expect_err_lines "a 1e308 figure: one error line" 1
expect_err "a 1e308 figure: names the field and the bound" \
	'huge.json: .cluster.host_layer_s: expected a number from -1 to 1e\+30, found 1e\+308'

gp simulate --model llama3-70b --gpu A100-40GB --gpus 8 --gbs 8 --tp 8
expect_rc "not fitting still answers" 0
expect_out "says by how much it overflows" 'does NOT fit, over by'

# ZeRO-3 gathering: DeepSpeed 2021's synchronous per-tensor gathers cost
# more than FSDP's prefetched blocks (Narayanan et al. SC'21 Table 2 shape),
# and the choice survives a plan file.
z3="--model gpt3-175b --gpu A100-80GB --gpus 384 --tp 1 --pp 1 --zero 3 --mbs 4 --gbs 1536 --recompute full --no-flash --inter-node-gbps 1600 --json"
gp simulate $z3 --zero3-gather block
block=$(grep -o '"step_time_s":[^,]*' "$OUT" | head -1 | cut -d: -f2 | tr -d ' \t')
gp simulate $z3 --zero3-gather tensor_sync -o "$TMP/z3.json"
sync=$(grep -o '"step_time_s":[^,]*' "$OUT" | head -1 | cut -d: -f2 | tr -d ' \t')
awk -v a="$block" -v b="$sync" 'BEGIN { exit !(b > a * 1.1) }' &&
	pass "tensor_sync gathers are slower than block gathers ($sync s > $block s)" ||
	fail "tensor_sync gathers are slower than block gathers" "$sync vs $block"
grep -q '"zero3_gather":[[:space:]]*"tensor_sync"' "$TMP/z3.json" &&
	pass "plan file keeps zero3_gather" || fail "plan file keeps zero3_gather" "missing"
gp simulate $z3 --zero3-gather eager
expect_rc "--zero3-gather eager exits 2" 2
expect_err "--zero3-gather names the choices" "^error: --zero3-gather: expected block or tensor_sync, found 'eager'"

# plan_keeps FLAG KEY VALUE FILE STEP: the plan file FILE written with FLAG
# records "KEY": "VALUE", and simulating it gives its step time STEP again.
plan_keeps() {
	grep -q "\"$2\":[[:space:]]*\"$3\"" "$4" && pass "$1 is written to the plan" \
		|| fail "$1 is written to the plan" "no \"$2\": \"$3\" in $(basename "$4")"
	gp simulate "$4" --json
	[ "$(json_num step_time_s "$OUT")" = "$5" ] && pass "$1: read back from the plan, the same step" \
		|| fail "$1: read back from the plan, the same step" "$(json_num step_time_s "$OUT") against $5"
}

# costs_more ARGS FLAG CHEAP DEAR FACTOR BAD KEY: simulate ARGS with FLAG
# CHEAP and with FLAG DEAR; DEAR's step is above FACTOR x CHEAP's; the plan
# file written with DEAR keeps it as KEY; FLAG BAD exits 2.
costs_more() {
	gp simulate $1 "$2" "$3"
	local cheap=$(json_num step_time_s "$OUT")
	gp simulate $1 "$2" "$4" -o "$TMP/dear.json"
	local dear=$(json_num step_time_s "$OUT")
	awk -v a="$cheap" -v b="$dear" -v f="$5" 'BEGIN { exit !(b > a * f) }' \
		&& pass "$2 $4 costs more than $3 ($dear s > $cheap s)" \
		|| fail "$2 $4 costs more than $3" "$dear s against $cheap s"
	plan_keeps "$2" "$7" "$4" "$TMP/dear.json" "$dear"
	gp simulate $1 "$2" "$6"
	expect_rc "$2 $6 exits 2" 2
}

# ZeRO-2 reducing every micro-batch (DeepSpeed) against once a step (FSDP):
# 32 DP ranks, 16 micro-batches, so 15 more reduce-scatters of the
# gradients' (N-1)/N.
costs_more "--model llama3-8b --gpu H100 --gpus 64 --tp 2 --zero 2 --gbs 512 --json" \
	--zero2-reduce step micro_batch 1.2 often zero2_reduce
# DeepSpeed's pipeline engine (whole activations, send then receive)
# against Megatron's split exchange: the pipeline's sends cost more.
costs_more "--model llama3-8b --gpu H100 --gpus 16 --tp 2 --pp 2 --gbs 512 --inter-node-gbps 3200 --json" \
	--pp-send split whole 1 some pp_send

# FP8 weights gathered in FP8 (Megatron-LM's --fp8-param-gather): ZeRO-3
# over 16 H100 moves half the gathers' bytes, so less DP traffic and a
# shorter step; the plan keeps it; at bf16 it changes nothing.
F8="--model llama3-8b --gpu H100 --gpus 16 --zero 3 --gbs 256 --precision fp8 --inter-node-gbps 3200 --json"
gp simulate $F8
t_bf=$(json_num step_time_s "$OUT") d_bf=$(json_num dp_comm_total "$OUT")
gp simulate $F8 --fp8-param-gather -o "$TMP/f8g.json"
t_f8=$(json_num step_time_s "$OUT") d_f8=$(json_num dp_comm_total "$OUT")
awk -v a="$d_bf" -v b="$d_f8" -v s="$t_bf" -v t="$t_f8" \
	'BEGIN { exit !(b < 0.9 * a && b > 0.5 * a && t < s) }' \
	&& pass "--fp8-param-gather: less DP traffic ($d_bf s -> $d_f8 s), a shorter step" \
	|| fail "--fp8-param-gather: less DP traffic, a shorter step" "$d_bf -> $d_f8 s, step $t_bf -> $t_f8 s"
grep -Eq '"fp8_param_gather":[[:space:]]*true' "$TMP/f8g.json" \
	&& pass "--fp8-param-gather is written to the plan" \
	|| fail "--fp8-param-gather is written to the plan" "no \"fp8_param_gather\": true"
gp simulate "$TMP/f8g.json" --json
[ "$(json_num step_time_s "$OUT")" = "$t_f8" ] \
	&& pass "--fp8-param-gather: read back from the plan, the same step" \
	|| fail "--fp8-param-gather: read back from the plan, the same step" "$(json_num step_time_s "$OUT") against $t_f8"
gp simulate ${F8/fp8/bf16}
t_b=$(json_num step_time_s "$OUT")
gp simulate ${F8/fp8/bf16} --fp8-param-gather
[ "$(json_num step_time_s "$OUT")" = "$t_b" ] \
	&& pass "--fp8-param-gather at bf16 changes nothing" \
	|| fail "--fp8-param-gather at bf16 changes nothing" "$t_b -> $(json_num step_time_s "$OUT") s"

# Which DP collectives run under the backward: llama3-8b with ZeRO-1 on
# one node of 8 H100 (full recomputation, so a micro-batch's backward
# hides the sums).  Gathering the updated weights after the optimizer
# (DeepSpeed's stage 1) exposes the half of the DP traffic that
# Megatron-LM's --overlap-param-gather hides: the step grows by at least
# 40% of that half (the rest was hidden at SIM_OVERLAP_SLOWDOWN's cost);
# overlapping nothing (DeepSpeed without ZeRO) exposes all of it.
Z1="--model llama3-8b --gpu H100 --gpus 8 --zero 1 --recompute full --gbs 64 --json"
gp simulate $Z1 --dp-overlap all
t_all=$(json_num step_time_s "$OUT") dp_total=$(json_num dp_comm_total "$OUT")
gp simulate $Z1 --dp-overlap sums -o "$TMP/z1sums.json"
t_sums=$(json_num step_time_s "$OUT")
gp simulate $Z1 --dp-overlap none
t_none=$(json_num step_time_s "$OUT") x_none=$(json_num dp_comm_exposed "$OUT")
awk -v a="$t_all" -v b="$t_sums" -v d="$dp_total" 'BEGIN { exit !(d > 0 && b - a > 0.4 * d / 2) }' \
	&& pass "--dp-overlap sums waits for the gather ($t_all s -> $t_sums s, DP $dp_total s)" \
	|| fail "--dp-overlap sums waits for the gather" "$t_all s -> $t_sums s, DP $dp_total s"
[ -n "$x_none" ] && [ "$x_none" = "$dp_total" ] && awk -v b="$t_sums" -v c="$t_none" 'BEGIN { exit !(c > b) }' \
	&& pass "--dp-overlap none exposes all DP traffic ($x_none s)" \
	|| fail "--dp-overlap none exposes all DP traffic" "$x_none s of $dp_total s, step $t_none s"
plan_keeps --dp-overlap dp_overlap sums "$TMP/z1sums.json" "$t_sums"
sed 's/"dp_overlap":[[:space:]]*"sums"/"dp_overlap": "some"/' "$TMP/z1sums.json" >"$TMP/z1bad.json"
gp simulate "$TMP/z1bad.json"
expect_rc "a plan file's bad dp_overlap exits 2" 2
expect_err "... naming the field and the choices" \
	'\.parallel\.dp_overlap: expected all, sums or none, found "some"'
expect_err_lines "... in one line" 1
gp simulate $Z1 --dp-overlap some
expect_rc "--dp-overlap some exits 2" 2
expect_err "--dp-overlap names the choices" "^error: --dp-overlap: expected all, sums or none, found 'some'"

# The attention kernel a plan names: on H100, auto is Transformer Engine's
# cuDNN attention (FlashAttention-3 paper, Fig. 5: 539 TFLOP/s causal at
# 16k tokens), FlashAttention-2 runs at 335 and FA1 slower still, so at
# 8192 tokens the step grows from auto to fa2 to fa1; the plan file keeps
# the choice.
AK="--model llama3-8b --gpu H100 --gpus 8 --gbs 64 --json"
gp simulate $AK
t_auto=$(json_num step_time_s "$OUT")
gp simulate $AK --attn-kernel fa2 -o "$TMP/fa2.json"
t_fa2=$(json_num step_time_s "$OUT")
gp simulate $AK --attn-kernel fa1
t_fa1=$(json_num step_time_s "$OUT")
awk -v a="$t_auto" -v b="$t_fa2" -v c="$t_fa1" 'BEGIN { exit !(a < b && b < c) }' \
	&& pass "--attn-kernel: auto (cuDNN) < fa2 < fa1 on H100 ($t_auto, $t_fa2, $t_fa1 s)" \
	|| fail "--attn-kernel: auto (cuDNN) < fa2 < fa1 on H100" "$t_auto, $t_fa2, $t_fa1 s"
plan_keeps --attn-kernel attn_kernel fa2 "$TMP/fa2.json" "$t_fa2"
gp simulate $AK --attn-kernel fa9
expect_rc "--attn-kernel fa9 exits 2" 2
expect_err "--attn-kernel names the choices" \
	"^error: --attn-kernel: expected auto, fa1, fa2, fa3 or cudnn, found 'fa9'"

# The purchase option a plan was priced at (.offering.purchase) is shown
# beside its offering and its price, and in --json; a price given with
# --usd-per-gpu-hour is the user's own and is not labelled.
gp plan --model llama2-7b --tokens 100B --budget 200k --spot -q -o "$TMP/spot.json"
expect_rc "a spot plan is written" 0
gp simulate "$TMP/spot.json"
expect_rc "a spot plan simulates" 0
expect_out "cluster line names the offering and purchase" '^cluster .*\), [a-z0-9]+ [^ ]+ [^ ]+ spot$'
expect_out "price line says spot" 'cost \$[0-9,]+ at \$[0-9.]+ per GPU-hour \(spot\)$'
gp simulate "$TMP/spot.json" --json
expect_out "--json has the purchase" '"purchase":[[:space:]]*"spot"'
gp simulate "$TMP/spot.json" --usd-per-gpu-hour 1 -o "$TMP/own.json"
expect_out "own price keeps its line" 'cost \$[0-9,]+ at \$1\.00 per GPU-hour$'
expect_out "own price drops the offering from the cluster line" '^cluster .*\)$'
grep -q '"offering"' "$TMP/own.json" && fail "a plan at its own price names no offering" "found" \
	|| pass "a plan at its own price names no offering"
gp simulate "$TMP/own.json" --json
expect_rc "the re-priced plan simulates" 0
expect_out "and keeps its price" '"cost_usd"'
grep -q '"purchase"' "$OUT" && fail "re-priced plan has no purchase in --json" "found" \
	|| pass "re-priced plan has no purchase in --json"
gp plan --model llama2-7b --tokens 100B --budget 200k --no-spot -q -o "$TMP/od.json"
gp simulate "$TMP/od.json"
expect_out "on-demand plan says on-demand" 'per GPU-hour \(on-demand\)$'
gp simulate --layers 24 --hidden 2048 --heads 16 --gpu A100-80GB --gpus 8 --gbs 64 --json
grep -q '"purchase"' "$OUT" && fail "no offering, no purchase in --json" "found" \
	|| pass "no offering, no purchase in --json"

# a network no one stated is an assumed figure, and simulate says so
gp simulate --model llama3-8b --gpu h100 --gpus 16 --tp 8
expect_err "two nodes without --inter-node-gbps: the assumed network is named" \
	"^cluster: no inter-node bandwidth stated \(--inter-node-gbps\): 200 Gb/s a node assumed"
gp simulate --model llama3-8b --gpu h100 --gpus 16 --tp 8 --inter-node-gbps 3200
grep -q "no inter-node bandwidth stated" "$ERR" && fail "with --inter-node-gbps: no assumption named" "found" \
	|| pass "with --inter-node-gbps: no assumption named"
gp simulate --model llama3-8b --gpu h100 --gpus 8 --tp 8
grep -q "no inter-node bandwidth stated" "$ERR" && fail "one node: no network needed, none named" "found" \
	|| pass "one node: no network needed, none named"
# ... and records it where the run's results go: simulate --json and the
# plan file, which reads back with it and is simulated saying it again
gp simulate --model llama3-8b --gpu h100 --gpus 16 --tp 8 --json -o "$TMP/assumed.json"
expect_rc "two nodes, --json -o: exit 0" 0
python3 - "$OUT" "$TMP/assumed.json" <<'PY' && pass "the assumed 200 Gb/s is in --json and the plan file" \
	|| fail "the assumed 200 Gb/s is in --json and the plan file" "$(grep -c assumptions "$OUT" "$TMP/assumed.json")"
import json, sys
for f in sys.argv[1:]:
    a = {x["field"]: x for x in json.load(open(f)).get("assumptions", [])}
    x = a["cluster.inter_bytes_per_s"]
    assert x["value"] == 25e9 and "200 Gb/s a node assumed" in x["why"], x
PY
gp simulate "$TMP/assumed.json" --json -o "$TMP/assumed2.json"
expect_rc "simulate of a plan file that carries an assumption: exit 0" 0
expect_err "simulate of that plan file: states the assumption again" \
	"^cluster: no inter-node bandwidth stated \(--inter-node-gbps\): 200 Gb/s a node assumed"
grep -A3 '"cluster.inter_bytes_per_s"' "$TMP/assumed2.json" | grep -q '"value":[[:space:]]*25000000000' \
	&& pass "the plan file round-trips its assumption" \
	|| fail "the plan file round-trips its assumption" "$(grep -A3 assumptions "$TMP/assumed2.json")"
gp simulate "$TMP/assumed.json" --inter-node-gbps 3200 --json
grep -q 'cluster.inter_bytes_per_s' "$OUT" && fail "a network stated over the plan's: no longer assumed" "found" \
	|| pass "a network stated over the plan's: no longer assumed"
gp simulate --model llama3-8b --gpu h100 --gpus 8 --tp 8 --gbs 512 --json
grep -q '"assumptions"' "$OUT" && fail "one node, --gbs: nothing assumed in --json" "found" \
	|| pass "one node, --gbs: nothing assumed in --json"
# the batch a model does not state is an assumption too
gp simulate --layers 24 --hidden 2048 --heads 16 --gpu A100-80GB --gpus 8 --json -o "$TMP/gbs.json"
grep -A3 '"parallel.gbs"' "$TMP/gbs.json" | grep -q '"value"' && grep -q '"parallel.gbs"' "$OUT" \
	&& pass "an assumed gbs is in --json and the plan file" \
	|| fail "an assumed gbs is in --json and the plan file" "$(grep -A3 assumptions "$OUT")"
gp simulate "$TMP/gbs.json"
expect_err "simulate of a plan with an assumed gbs: states it again" "^gbs [0-9]+ sequences of .*as plan assumes"
# a plan file's assumptions are data: refused when malformed
sed 's/"field":[[:space:]]*"parallel.gbs"/"field": "bad\\u001bname"/' "$TMP/gbs.json" >"$TMP/gbs-bad.json"
gp simulate "$TMP/gbs-bad.json"
expect_rc "a plan with a control byte in an assumption's field: exit 2" 2
expect_err "a plan with a control byte in an assumption's field: names it" '\.assumptions\[0\]\.field: expected a name'

# ---- mixture of experts: presets, counts, custom shapes -----------------
gp models list
expect_out "models list: deepseek-v3 with its experts and counts" \
	'^deepseek-v3 +61 +7168 +128 +128 +18432 +129280 +4096 +swiglu +no +15360 +256/8 +671\.026 +671 +36\.626 +37$'
expect_out "models list: gpt-oss-120b active 5.133 of 116.829" '^gpt-oss-120b .* 128/4 +116\.829 +116\.8 +5\.133 +5\.13$'
gp models show gpt-oss-120b
expect_out "models show: the exact total" '^parameters +116,829,156,672 '
expect_out "models show: the exact active count" '^active +5,132,849,472 \(5\.133 B; 5\.712 B counting the input embedding\)'
expect_out "models show: the window pattern" '^sliding_window +128 tokens, every 2nd layer full'
gp models show deepseek-v3
expect_out "models show: MLA" '^attention +MLA: q rank 1536, kv rank 512, heads of 128 nope \+ 64 rope, values 128'
expect_out "models show: experts" '^experts +256 routed of 2048, top-8, 1 shared of 2048'
expect_out "models show: MTP" '^mtp layers +1 \(11\.610 B more parameters'
gp models show qwen3-30b-a3b --json
expect_out "models --json: active_params" '"active_params":[[:space:]]*3041855488,'
expect_out "models --json: the moe object" '"top_k":[[:space:]]*8'
for bad in "--experts x:--experts: expected an integer from 0 to 65536, found 'x'" \
	   "--top-k -1:--top-k: expected an integer from 0 to 65536, found '-1'"; do
	gp simulate --layers 4 --hidden 1024 --heads 8 --gpu H100 --gpus 8 --gbs 8 ${bad%%:*}
	expect_rc "${bad%%:*} exits 2" 2
	expect_err "${bad%%:*} says why" "^error: ${bad#*:}"
	expect_err_lines "${bad%%:*}: one error line" 1
done
gp simulate --layers 4 --hidden 1024 --heads 8 --gpu H100 --gpus 8 --gbs 8 --experts 8 --top-k 9 --expert-ffn 512
expect_rc "top-k above experts exits 2" 2
expect_err "top-k above experts says why" '^error: simulate: top_k: expected 1 to experts 8, found 9$'
gp simulate --layers 4 --hidden 1024 --heads 8 --gpu H100 --gpus 8 --gbs 8 --experts 8 --top-k 2
expect_rc "experts without a width exits 2" 2
expect_err "experts without a width says why" '^error: simulate: expert_ffn: expected an integer >= 1 with experts, found 0$'
gp simulate --layers 4 --hidden 1024 --heads 8 --gpu H100 --gpus 8 --gbs 8 --dense-layers 1
expect_rc "dense layers without experts exits 2" 2
expect_err "dense layers without experts says why" '^error: simulate: dense_layers: expected 0 without experts, found 1$'
gp simulate --layers 4 --hidden 1024 --heads 8 --gpu H100 --gpus 8 --gbs 8 --kv-lora-rank 128 --qk-rope-dim 64
expect_rc "MLA without its head widths exits 2" 2
expect_err "MLA without its head widths says why" '^error: simulate: qk_nope_dim: expected an integer >= 1 with MLA, found 0$'

# ---- expert parallelism, NVLink domains, block-scaled precisions -------
dsv3="--model deepseek-v3 --gpu GB200 --gpus 256 --gpus-per-node 4 --nvlink-domain 72 \
	--inter-node-gbps 1600 --pp 4 --interleave 4 --gbs 4096 --zero 1 --precision mxfp8"
gp simulate $dsv3 --ep 64 --ep-overlap --ep-dispatcher flex
expect_rc "DeepSeek-V3 on GB200 NVL72 with EP 64 simulates" 0
expect_out "the EP all-to-all is a breakdown line" '^  ep comm +[0-9.]+ (s|ms) +[0-9.]+%'
expect_out "its hidden share is stated" '^  \(ep all-to-all in all [0-9.]+ (s|ms), [0-9.]+ (s|ms) of it hidden by compute\)'
expect_out "the expert layout is stated" '^experts   ep 64, etp 1, expert data parallel 1, imbalance 1, flex dispatcher, all-to-all overlap on, expert GEMMs device; NVLink domain 72 GPUs'
expect_out "the precision is stated" 'mxfp8$'
gp simulate $dsv3 --ep 64 --json
expect_rc "--json with EP" 0
for k in ep_comm ep_comm_total; do
	grep -q "\"$k\":" "$OUT" || fail "--json has $k" "missing"
done
pass "--json has the EP parts"
ep_total=$(json_num ep_comm_total "$OUT")
gp simulate $dsv3 --ep 64 --nvlink-domain 4 --json
ep_trays=$(json_num ep_comm_total "$OUT")
awk -v a="$ep_total" -v b="$ep_trays" 'BEGIN { exit !(b > 5 * a) }' \
	&& pass "EP 64 over 4-GPU trays costs more than inside the NVL72 domain" \
	|| fail "EP 64 over 4-GPU trays costs more than inside the NVL72 domain" "$ep_trays vs $ep_total"
gp simulate $dsv3 --ep 64 --ep-overlap --moe-imbalance 1.3 -o "$TMP/moe.json"
expect_rc "-o writes an MoE plan" 0
grep -q '"ep":[[:space:]]*64' "$TMP/moe.json" && grep -q '"ep_dispatcher":[[:space:]]*"alltoall"' "$TMP/moe.json" \
	&& grep -q '"nvlink_domain":[[:space:]]*72' "$TMP/moe.json" && grep -q '"experts":[[:space:]]*256' "$TMP/moe.json" \
	&& pass "the plan carries the experts, EP and the domain" || fail "the plan carries the experts, EP and the domain" "missing"
gp simulate "$TMP/moe.json" --json
cp "$OUT" "$TMP/moe_plan.json"
gp simulate $dsv3 --ep 64 --ep-overlap --moe-imbalance 1.3 --json
cmp -s "$OUT" "$TMP/moe_plan.json" && pass "an MoE plan file and its flags agree" \
	|| fail "an MoE plan file and its flags agree" "differs"
for bad in "--ep 3:^error: simulate: ep: expected a divisor of experts 256, found 3$" \
	   "--ep 0:^error: --ep: expected an integer from 1 to 65536, found '0'$" \
	   "--ep 128:^error: simulate: ep: expected ep x etp = 128 to divide tp x cp x dp = 64" \
	   "--ep 64 --etp 3:^error: simulate: etp: expected a divisor of expert_ffn 2048, found 3$" \
	   "--ep 64 --moe-imbalance 0.5:^error: --moe-imbalance: expected a number from 1 to 1000" \
	   "--ep 64 --ep-dispatcher deepep:^error: --ep-dispatcher: expected alltoall or flex" \
	   "--ep 64 --precision fp16:^error: --precision: expected bf16, fp8, mxfp8 or nvfp4" \
	   "--ep 64 --nvlink-domain 2:^error: --nvlink-domain: expected at least the 4 GPUs of a node, found 2$"; do
	gp simulate $dsv3 ${bad%%:*}
	expect_rc "${bad%%:*} exits 2" 2
	expect_err "${bad%%:*} says why" "${bad#*:}"
	expect_err_lines "${bad%%:*}: one error line" 1
done
# Megatron-Bridge's DeepSeek-V3 layout over these 16 virtual stages: 4
# layers each, the last 1 beside the MTP module and the loss
gp simulate $dsv3 --ep 64 --json
own=$(json_num step_time_s "$OUT")
gp simulate $dsv3 --ep 64 --pp-last-layers 1
expect_rc "--pp-last-layers 1 simulates" 0
expect_out "the stated split is shown" '^layers    4 in each virtual stage, 1 in the last \(with the loss\)$'
gp simulate $dsv3 --ep 64 --pp-last-layers 1 --json
bridge=$(json_num step_time_s "$OUT")
awk -v a="$own" -v b="$bridge" 'BEGIN { exit !(b < a) }' \
	&& pass "fewer layers beside the two LM heads make a shorter step" \
	|| fail "fewer layers beside the two LM heads make a shorter step" "$bridge vs $own"
gp simulate $dsv3 --ep 64 --pp-last-layers 1 -o "$TMP/last.json"
grep -q '"pp_last_layers":[[:space:]]*1' "$TMP/last.json" && pass "the plan carries pp_last_layers" \
	|| fail "the plan carries pp_last_layers" "missing"
gp simulate "$TMP/last.json" --json
bridge_file=$(json_num step_time_s "$OUT")
[ "$bridge_file" = "$bridge" ] && pass "a plan file keeps the stated split" \
	|| fail "a plan file keeps the stated split" "$bridge_file vs $bridge"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p["parallel"]["pp_last_layers"]=-1; json.dump(p, open(sys.argv[2], "w"))' \
	"$TMP/last.json" "$TMP/last-bad.json"
gp simulate "$TMP/last-bad.json"
expect_rc "a negative pp_last_layers in a plan exits 2" 2
expect_err "a negative pp_last_layers says where" 'last-bad.json: .parallel.pp_last_layers: expected an integer from 0 to'
expect_err_lines "a negative pp_last_layers: one error line" 1
for bad in "--pp-last-layers 2:^error: simulate: pp_last_layers: the other 15 virtual stages must split the other 59 layers evenly, found 2 in the last$" \
	   "--pp-last-layers x:^error: --pp-last-layers: expected an integer" \
	   "--pp-last-layers 61:^error: simulate: pp_last_layers: expected 0 \(the simulator's split\) to 60, found 61$" \
	   "--recompute selective --recompute-modules mla_up_proj,bogus:^error: --recompute-modules: expected layernorm, mla_up_proj, moe_act or mlp, found 'bogus'$" \
	   "--recompute selective --recompute-modules mlp,mlp:^error: --recompute-modules: expected each module once, found 'mlp' twice$" \
	   "--recompute selective --recompute-modules ,:^error: --recompute-modules: expected a list like mla_up_proj,moe_act, found ','$" \
	   "--recompute-modules mlp:^error: simulate: recompute_modules: expected recompute selective with modules, found none$"; do
	gp simulate $dsv3 --ep 64 ${bad%%:*}
	expect_rc "${bad%%:*} exits 2" 2
	expect_err "${bad%%:*} says why" "${bad#*:}"
	expect_err_lines "${bad%%:*}: one error line" 1
done
# the modules recomputed beside the attention core, as Megatron-Core's
# --recompute-modules names them; a plan file keeps them
gp simulate $dsv3 --ep 64 --recompute selective --json
sel=$(json_num step_time_s "$OUT")
gp simulate $dsv3 --ep 64 --recompute selective --recompute-modules mla_up_proj,moe_act
expect_rc "--recompute-modules simulates" 0
expect_out "the modules are stated" 'recompute selective \(and mla_up_proj,moe_act\),'
gp simulate $dsv3 --ep 64 --recompute selective --recompute-modules mla_up_proj,moe_act -o "$TMP/mods.json" --json
mods=$(json_num step_time_s "$OUT")
awk -v a="$sel" -v b="$mods" 'BEGIN { exit !(b > a) }' \
	&& pass "recomputing two more modules costs time" \
	|| fail "recomputing two more modules costs time" "$mods vs $sel"
grep -q '"mla_up_proj"' "$TMP/mods.json" && grep -q '"moe_act"' "$TMP/mods.json" \
	&& pass "the plan carries the modules" || fail "the plan carries the modules" "missing"
gp simulate --model qwen3-30b-a3b --gpu H100 --gpus 16 --ep 16 --gbs 1024 --precision mxfp8
expect_rc "MXFP8 on Hopper exits 2" 2
expect_err "MXFP8 on Hopper says why" "^error: simulate: precision: expected a GPU with an MXFP8 rate \(an mxfp8 figure, or Blackwell's fp8\), found none for H100-SXM5-80GB$"
gp simulate --model qwen3-30b-a3b --gpu H100 --gpus 16 --ep 16 --gbs 1024 --precision nvfp4
expect_rc "NVFP4 without an NVFP4 figure exits 2" 2
expect_err "NVFP4 without a figure says why" "^error: simulate: precision: expected a GPU with an NVFP4 rate \(an nvfp4 figure\), found none for H100-SXM5-80GB$"
gp simulate --model llama3-8b --gpu H100 --gpus 8 --gbs 8 --ep 2
expect_rc "EP without experts exits 2" 2
expect_err "EP without experts says why" '^error: simulate: ep: expected 1 without experts, found 2$'
gp simulate --model qwen3-30b-a3b --gpu H100 --gpus 16 --tp 2 --ep 8 --gbs 1024
expect_rc "TP with experts and no sequence parallelism exits 2" 2
expect_err "says why" '^error: simulate: seq_parallel: expected on with tp 2 and experts'

# every run of Megatron-Bridge's MoE table simulates, or is refused for a
# GPU figure the catalog lacks, never for anything else
moe_csv=$(dirname "$0")/../../bench/data/moe_runs.csv
rows=0 ran=0
while IFS=, read -r _ _ model system gpus prec gbs mbs seq tp pp cp vp ep etp _; do
	case $model in model) continue ;; esac
	case $system in
	DGX-H100) sys="--gpu H100 --gpus-per-node 8 --inter-node-gbps 3200" ;;
	DGX-B200) sys="--gpu B200 --gpus-per-node 8 --inter-node-gbps 3200" ;;
	DGX-B300) sys="--gpu B300 --gpus-per-node 8 --inter-node-gbps 6400" ;;
	DGX-GB200) sys="--gpu GB200 --gpus-per-node 4 --nvlink-domain 72 --inter-node-gbps 1600" ;;
	DGX-GB300) sys="--gpu GB300 --gpus-per-node 4 --nvlink-domain 72 --inter-node-gbps 3200" ;;
	esac
	case $model in DeepSeekV3) m=deepseek-v3 ;; *) m=qwen3-30b-a3b ;; esac
	[ "$vp" = n/a ] && vp=1
	rows=$((rows + 1))
	gp simulate --model "$m" $sys --gpus "$gpus" --gbs "$gbs" --mbs "$mbs" --seq "$seq" \
		--tp "$tp" --pp "$pp" --cp "$cp" --interleave "$vp" --ep "$ep" --zero 1 \
		--precision "$(echo "$prec" | tr A-Z a-z)" --ep-dispatcher flex -q
	if [ "$RC" = 0 ]; then
		ran=$((ran + 1))
	elif [ "$RC" != 2 ] || ! grep -Eq '^error: (--gpu: expected a GPU|simulate: gpu [A-Z0-9]+: expected a bf16 FLOP/s figure)' "$ERR"; then
		fail "moe_runs.csv row $rows ($model $system) simulates" "exit $RC: $(head -1 "$ERR")"
	fi
done <"$moe_csv"
[ "$rows" = 52 ] && [ "$ran" -ge 27 ] && pass "moe_runs.csv: every row simulates or names the missing GPU figure ($ran of $rows ran)" \
	|| fail "moe_runs.csv: every row simulates or names the missing GPU figure" "$ran of $rows ran"

# --stack: a release sets the expert GEMM, dispatcher and EP overlap
# together; flags beside it override; the plan file keeps it.
q3="--model qwen3-30b-a3b --gpu B200 --gpus 8 --ep 8 --precision mxfp8 --gbs 512 -q"
gp simulate $q3 --stack te2.14
expect_rc "--stack te2.14 simulates" 0
expect_out "te2.14: loop, flex, no overlap" 'flex dispatcher, all-to-all overlap off, expert GEMMs loop'
expect_out "te2.14 names its release" '^stack +Megatron-Core with Transformer Engine <= 2.14 .*host-looped'
grep -Eo '^step time [0-9.]+' "$OUT" > "$TMP/te214"
gp simulate $q3 --stack te2.16 -o "$TMP/te216.json"
expect_out "te2.16: device, flex, overlap" 'flex dispatcher, all-to-all overlap on, expert GEMMs device'
grep -Eo '^step time [0-9.]+' "$OUT" > "$TMP/te216"
cmp -s "$TMP/te214" "$TMP/te216" && fail "the two releases predict apart" "same step" \
	|| pass "the two releases predict apart"
grep -q '"stack":[[:space:]]*"te2.16"' "$TMP/te216.json" && pass "-o records the stack" \
	|| fail "-o records the stack" "missing"
gp simulate "$TMP/te216.json"
expect_out "a plan file reads its stack back" '^stack +Megatron-Core with Transformer Engine >= 2.16'
gp simulate $q3 --stack te2.14 --ep-overlap --moe-gemm device
expect_out "flags override the release" 'all-to-all overlap on, expert GEMMs device'
gp simulate $q3
expect_out "no --stack: unstated" '^stack +unstated'
gp simulate $q3 --json --stack te2.14
grep -q '"stack":[[:space:]]*"Megatron-Core with Transformer Engine <= 2.14' "$OUT" \
	&& pass "--json names the stack" || fail "--json names the stack" "missing"
gp simulate $q3 --stack te3
expect_rc "--stack te3 exits 2" 2
expect_err "--stack te3 says why" "^error: --stack: expected te2.14 or te2.16"
expect_err_lines "--stack te3: one error line" 1


# ---- interruptions: a plan of more than 1,000 GPUs and more than a week
# states them, and -o carries them.  Checked against the hand calculation
# (planner/plan.h): failures 466 / (54 d x 24 h x 16,384 GPUs) per
# GPU-hour; a checkpoint of 14 bytes/param written by every node at 1 GB/s;
# Daly's interval tau = sqrt(2CM)(1 + sqrt(C/2M)/3 + C/18M) - C; the wall
# time of W seconds of work W e^(R/M) (e^((tau+C)/M) - 1) M / tau with a
# 5-minute restart R; expected = rate x GPUs x wall hours.
gp simulate --model llama3-405b --gpu H100 --gpus 16384 --tp 8 --pp 16 --tokens 15T \
	-o "$TMP/big.json"
expect_rc "interruptions: a 16,384-GPU run simulates" 0
expect_out "it states them, whole above 100" \
	"^interruptions: [0-9]+ expected \(failures 2\.19e-05/GPU-hour x 16384 GPUs: one every 2\.8 h\), checkpoints every .* \(Young/Daly\): effective training time 9[0-9]\.[0-9]+%"
if command -v python3 >/dev/null; then
	python3 - "$TMP/big.json" >"$TMP/big.check" <<'PY'
import json, math, sys
p = json.load(open(sys.argv[1]))
i = p["interruptions"]
gpus, nodes = 16384, 16384 // 8
rate = 466 / (54 * 24 * 16384)                    # per GPU-hour
M = 3600 / (rate * gpus)                          # s between interruptions
C = p["model"]["params"] * 14 / (nodes * 1e9)     # s to write a checkpoint
W = p["prediction"]["time_to_train_s"]            # s of training work
x = C / (2 * M)
tau = min(math.sqrt(2 * C * M) * (1 + math.sqrt(x) / 3 + x / 9) - C, W)
wall = W * math.exp(300 / M) * math.expm1((tau + C) / M) * M / tau
bad = []
for name, got, want in (("failures_per_gpu_hour", i["failures_per_gpu_hour"], rate),
                        ("mtbf_s", i["mtbf_s"], M),
                        ("expected = rate x GPUs x wall hours", i["expected"], rate * gpus * wall / 3600),
                        ("effective = W / wall", i["effective_training_time"], W / wall)):
    if abs(got - want) > 1e-9 * abs(want):
        bad.append("%s: %r, expected %r" % (name, got, want))
if not (W > 7 * 86400 and 1000 < i["expected"] and 0.9 < i["effective_training_time"] < 0.99):
    bad.append("not the case meant: W %r, %r" % (W, i))
print("ok" if not bad else "; ".join(bad))
PY
	[ "$(cat "$TMP/big.check")" = ok ] \
		&& pass "-o: interruptions and effective training time as calculated by hand" \
		|| fail "-o: interruptions and effective training time as calculated by hand" "$(cat "$TMP/big.check")"
	n=$(sed -n 's/^interruptions: \([0-9]*\) expected.*/\1/p' "$OUT")
	gp simulate "$TMP/big.json" --json
	python3 -c 'import json,sys; i=json.load(open(sys.argv[1]))["interruptions"]; sys.exit(round(i["expected"]) != int(sys.argv[2]))' "$OUT" "$n" \
		&& pass "--json of the written plan states the same interruptions" \
		|| fail "--json of the written plan states the same interruptions" "not $n"
	python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p["interruptions"]["failures_per_gpu_hour"]=1e-4; json.dump(p, open(sys.argv[2], "w"))' \
		"$TMP/big.json" "$TMP/big-rate.json"
	gp simulate "$TMP/big-rate.json"
	expect_out "a plan file's failure rate is the one simulate reckons with" \
		"^interruptions: [0-9]+ expected \(failures 0\.0001/GPU-hour x 16384 GPUs"
	python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p["interruptions"]["effective_training_time"]=0; json.dump(p, open(sys.argv[2], "w"))' \
		"$TMP/big.json" "$TMP/big-bad.json"
	gp simulate "$TMP/big-bad.json"
	expect_rc "a plan file with effective training time 0 exits 2" 2
	expect_err "and names the field" "big-bad\.json: \.interruptions\.effective_training_time: expected"
	expect_err_lines "one error line" 1
else
	echo "skip - interruptions by hand: no python3"
fi

finish
