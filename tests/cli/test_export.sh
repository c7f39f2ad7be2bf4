#!/usr/bin/env bash
# test_export.sh - the ZeRO stage a plan is exported with: Megatron-LM's
# distributed optimizer for ZeRO-1 and Megatron-FSDP for ZeRO-2/3 without
# a pipeline (its flags, and CUDA_DEVICE_MAX_CONNECTIONS not 1); with a
# pipeline, where Megatron-LM and DeepSpeed run ZeRO-1 at most, ZeRO-1
# written with a warning and a comment whose memory per GPU is checked
# against `simulate --zero 1` of the same layout.  The SkyPilot task: valid
# against SkyPilot's schema, agreeing with the plan, and quoting what it
# takes from a plan file.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/export_lib.sh"
export GPUPLAN_SHARE_DIR="$PWD/data"

has_line() { grep -Fxq -- "$2" "$1"; }
check_line() { # NAME FILE LINE: FILE has LINE exactly
	has_line "$2" "$3" && pass "$1" || fail "$1" "no line '$3' in $(basename "$2")"
}
check_no() { # NAME FILE TEXT: FILE does not contain TEXT
	grep -Fq -- "$3" "$2" && fail "$1" "$(grep -F -m1 -- "$3" "$2")" || pass "$1"
}
gib() { awk -v b="$1" 'BEGIN { printf "%.1f GiB", b / 1073741824 }'; }

# ---- no pipeline: Llama-3 8B on 16 H100, tp 2, dp 8
for z in 1 2 3; do
	gp simulate --model llama3-8b --gpu H100 --gpus 16 --tp 2 --zero $z \
		--recompute selective --seq-parallel -o "$TMP/z$z.json" -q
	expect_rc "simulate -o a zero $z plan without a pipeline" 0
	gp export "$TMP/z$z.json" --format megatron
	expect_rc "export megatron: zero $z, pp 1 exits 0" 0
	cp "$OUT" "$TMP/z$z.sh"
	cp "$ERR" "$TMP/z$z.err"
	# simulate prices bf16 gradients; Megatron-LM keeps them in fp32
	check_line "export megatron: zero $z: the script says Megatron-LM runs it with fp32 gradients" \
		"$TMP/z$z.sh" "# NOTE: the plan was not priced as Megatron-LM runs it (fp32 gradients), which needs"
done
# ZeRO-1's fp32 gradients cost little here: no warning.  ZeRO-3's
# reduce-scatter of every micro-batch's gradients doubles: 2.4 -> 3.2 min,
# more than 5% slower, so one warning and a hint.
[ -s "$TMP/z1.err" ] && fail "export megatron: zero 1, pp 1 warns of nothing" "$(head -1 "$TMP/z1.err")" \
	|| pass "export megatron: zero 1, pp 1 warns of nothing"
grep -Eq "^warning: export: as Megatron-LM runs it \(fp32 gradients\) the plan needs .* and steps in 3\.[0-9] min \(the plan: 2\.[0-9] min\)$" \
	"$TMP/z3.err" && [ "$(grep -c '^warning:' "$TMP/z3.err")" = 1 ] \
	&& pass "export megatron: zero 3 warns once that fp32 gradients slow it" \
	|| fail "export megatron: zero 3 warns once that fp32 gradients slow it" "$(cat "$TMP/z3.err")"
grep -q "^hint: plan again with --framework megatron" "$TMP/z3.err" \
	&& pass "export megatron: zero 3 hints at --framework megatron" \
	|| fail "export megatron: zero 3 hints at --framework megatron" "$(cat "$TMP/z3.err")"
# A plan priced as Megatron-LM runs it (fp32 gradients) exports as it is.
sed 's/"grad_bytes":[[:space:]]*2/"grad_bytes": 4/' "$TMP/z1.json" >"$TMP/z1-mg.json"
gp simulate "$TMP/z1-mg.json" -o "$TMP/z1-mg.json" -q
gp export "$TMP/z1-mg.json" --format megatron
expect_rc "export megatron: a plan priced for it exits 0" 0
check_no "export megatron: a plan priced for it has no NOTE" "$OUT" "# NOTE"
[ -s "$ERR" ] && fail "export megatron: a plan priced for it warns of nothing" "$(head -1 "$ERR")" \
	|| pass "export megatron: a plan priced for it warns of nothing"
# DeepSpeed gathers ZeRO-1's updated weights after its step: on one node
# of 8 H100 with one micro-batch a step (1.4 s), the 44 ms gather moves
# the step by more than FRAMEWORK_SAME (0.5%): the launch says so, with a
# step longer than the plan's.  Not so at tp 2 over 16 GPUs above, where
# the backward hid none of the DP traffic anyway.
gp export "$TMP/z1.json" --format deepspeed -o "$TMP/z1-ds.json"
check_no "export deepspeed: no NOTE when the step moves by less than 0.5%" "$OUT" "# NOTE"
gp simulate --model llama3-8b --gpu H100 --gpus 8 --zero 1 --recompute full --gbs 8 \
	-o "$TMP/one-mb.json" -q
gp export "$TMP/one-mb.json" --format deepspeed -o "$TMP/z1-ds.json"
expect_rc "export deepspeed: zero 1 exits 0" 0
check_line "export deepspeed: zero 1: the launch says DeepSpeed gathers after the step" "$OUT" \
	"# NOTE: the plan was not priced as DeepSpeed runs it (the weight gather after the step), which needs"
sed -n 's/.*; step \([0-9.]*\) s (the plan: \([0-9.]*\) s)\.$/\1 \2/p' "$OUT" >"$TMP/ds-steps"
read -r ds_step plan_step <"$TMP/ds-steps"
awk -v a="$ds_step" -v b="$plan_step" 'BEGIN { exit !(a > b && b > 0) }' \
	&& pass "export deepspeed: zero 1 steps longer than planned ($ds_step s > $plan_step s)" \
	|| fail "export deepspeed: zero 1 steps longer than planned" "$(grep '; step' "$OUT")"
check_line "zero 1: the distributed optimizer" "$TMP/z1.sh" "  --use-distributed-optimizer \\"
check_no "zero 1: no Megatron-FSDP" "$TMP/z1.sh" "--use-megatron-fsdp"
# The simulator hides DP sums and ZeRO-1's gather under compute; Megatron
# overlaps them only when asked (both flags off by default).
check_line "zero 1: gradient sums and parameter gathers overlapped" "$TMP/z1.sh" \
	"  --overlap-grad-reduce --overlap-param-gather \\"
gp simulate --model llama3-8b --gpu H100 --gpus 16 --tp 2 --zero 0 \
	--recompute selective --seq-parallel -o "$TMP/z0.json" -q
gp export "$TMP/z0.json" --format megatron
expect_out "zero 0: gradient sums overlapped, no parameter gather to overlap" \
	"^  --overlap-grad-reduce \\\\$"
gp simulate --model llama3-8b --gpu H100 --gpus 8 --tp 8 --zero 1 -o "$TMP/dp1.json" -q
gp export "$TMP/dp1.json" --format megatron
check_no "dp 1: nothing to overlap" "$OUT" "--overlap-"
check_line "zero 1: one CUDA connection" "$TMP/z1.sh" "export CUDA_DEVICE_MAX_CONNECTIONS=1"
# Megatron-FSDP: the flags its user guide requires, the stage by the
# sharding strategy
check_line "zero 2: Megatron-FSDP sharding optimizer and gradients" "$TMP/z2.sh" \
	"  --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads \\"
check_line "zero 3: Megatron-FSDP sharding the weights too" "$TMP/z3.sh" \
	"  --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params \\"
for z in 2 3; do
	check_line "zero $z: distributed optimizer, fsdp_dtensor checkpoints, no fused accumulation" \
		"$TMP/z$z.sh" "  --use-distributed-optimizer --ckpt-format fsdp_dtensor --no-gradient-accumulation-fusion \\"
	# arguments.py asserts CUDA_DEVICE_MAX_CONNECTIONS != "1" under Megatron-FSDP
	check_no "zero $z: no CUDA_DEVICE_MAX_CONNECTIONS=1" "$TMP/z$z.sh" "CUDA_DEVICE_MAX_CONNECTIONS=1"
	check_line "zero $z: CUDA_DEVICE_MAX_CONNECTIONS unset" "$TMP/z$z.sh" "unset CUDA_DEVICE_MAX_CONNECTIONS"
	check_line "zero $z: the script says why" "$TMP/z$z.sh" \
		"# Megatron-FSDP asserts CUDA_DEVICE_MAX_CONNECTIONS is not 1 (megatron/training/arguments.py)"
	# Megatron-FSDP sets the overlap flags from its sharding strategy
	check_no "zero $z: no overlap flags of the distributed optimizer" "$TMP/z$z.sh" "--overlap-"
	gp export "$TMP/z$z.json" --format deepspeed
	expect_out "deepspeed: zero $z without a pipeline keeps stage $z" "\"stage\":[[:space:]]*$z,"
done

# ---- a pipeline: Llama-3 8B on 16 RTX 4090, pp 4, dp 4, full recompute.
# ZeRO-2 fits (21.5 of 22.4 GiB), ZeRO-1 does not.
gp simulate --model llama3-8b --gpu RTX4090 --gpus 16 --pp 4 --zero 2 --recompute full \
	-o "$TMP/pp.json" -q
expect_rc "simulate -o a zero 2 plan with pp 4" 0
gp simulate "$TMP/pp.json" --zero 1 --json
expect_rc "simulate the same layout at zero 1" 0
total=$(json_num total "$OUT") grads=$(json_num grads "$OUT")
planned=$(gib "$(json_num memory_per_gpu_bytes "$TMP/pp.json")")
# DeepSpeed's ZeRO-1 keeps bf16 gradients, as simulate prices them.
ds_need=$(gib "$total")
# Megatron's --bf16 keeps fp32 gradients: twice simulate's 2-byte ones,
# and the 5% allocator slack on them (simulator/sim_memory.c).
mg_need=$(gib "$(awk -v t="$total" -v g="$grads" 'BEGIN { print t + 1.05 * g }')")
cap=$(gib "$(json_num capacity "$OUT")")

gp export "$TMP/pp.json" --format megatron
expect_rc "export megatron: zero 2 with pp 4 exits 0 (a warning)" 0
cp "$OUT" "$TMP/pp.sh"
warn="warning: export: Megatron-LM cannot run ZeRO-2 with pipeline parallelism (pp 4); wrote ZeRO-1, which needs $mg_need per GPU of $cap (the plan: $planned): it will NOT fit"
check_line "megatron: one warning with ZeRO-1's memory ($mg_need)" "$ERR" "$warn"
[ "$(grep -c '^warning:' "$ERR")" = 1 ] && pass "megatron: one warning line" \
	|| fail "megatron: one warning line" "$(grep -c '^warning:' "$ERR") lines"
expect_err "megatron: a hint at --framework megatron when ZeRO-1 does not fit" \
	"^hint: plan again with --framework megatron \(gpuplan plan \.\.\. --framework megatron\).* --pp 1 to keep ZeRO-2$"
check_line "megatron: the script says what differs" "$TMP/pp.sh" \
	"# NOTE: Megatron-LM does not run the plan's ZeRO-2 with pipeline parallelism (pp 4):"
grep -Eq "^# $mg_need per GPU of $cap: does NOT fit \(the plan: $planned\); step " "$TMP/pp.sh" \
	&& pass "megatron: the script states ZeRO-1's memory" \
	|| fail "megatron: the script states ZeRO-1's memory" "$(grep -m1 'per GPU' "$TMP/pp.sh")"
check_line "megatron: ZeRO-1 is the distributed optimizer" "$TMP/pp.sh" "  --use-distributed-optimizer \\"
check_no "megatron: no Megatron-FSDP with a pipeline" "$TMP/pp.sh" "--use-megatron-fsdp"
check_line "megatron: ZeRO-1 instead, its sums and gathers overlapped" "$TMP/pp.sh" \
	"  --overlap-grad-reduce --overlap-param-gather \\"
check_line "megatron: the distributed optimizer keeps one CUDA connection" "$TMP/pp.sh" \
	"export CUDA_DEVICE_MAX_CONNECTIONS=1"

gp export "$TMP/pp.json" --format deepspeed -o "$TMP/ds.json"
expect_rc "export deepspeed: zero 2 with pp 4 exits 0 (a warning)" 0
grep -Eq '"stage":[[:space:]]*1,' "$TMP/ds.json" && pass "deepspeed: the config has stage 1" \
	|| fail "deepspeed: the config has stage 1" "$(grep -m1 stage "$TMP/ds.json")"
warn="warning: export: DeepSpeed cannot run ZeRO-2 with pipeline parallelism (pp 4); wrote ZeRO-1, which needs $ds_need per GPU of $cap (the plan: $planned): it will NOT fit"
check_line "deepspeed: one warning with simulate --zero 1's memory ($ds_need)" "$ERR" "$warn"
check_line "deepspeed: the launch says what differs" "$OUT" \
	"# NOTE: DeepSpeed does not run the plan's ZeRO-2 with pipeline parallelism (pp 4):"
expect_out "deepspeed: the launch states ZeRO-1's memory" \
	"^# $ds_need per GPU of $cap: does NOT fit \(the plan: $planned\); step "
# Without -o the config alone is on stdout, still one JSON document.
gp export "$TMP/pp.json" --format deepspeed
expect_out "deepspeed to stdout: stage 1" "\"stage\":[[:space:]]*1,"
check_no "deepspeed to stdout: no comment in the JSON" "$OUT" "# NOTE"
[ "$(grep -c '^warning:' "$ERR")" = 1 ] && pass "deepspeed to stdout: one warning line" \
	|| fail "deepspeed to stdout: one warning line" "$(grep -c '^warning:' "$ERR") lines"

# gpuplan's executor runs ZeRO-2 with a pipeline: no warning
gp export "$TMP/pp.json" --format torchrun
expect_rc "export torchrun: zero 2 with pp 4 exits 0" 0
[ -s "$ERR" ] && fail "torchrun: zero 2 with pp 4 warns of nothing" "$(head -1 "$ERR")" \
	|| pass "torchrun: zero 2 with pp 4 warns of nothing"

# Where ZeRO-1 fits (Llama-3 8B on 32 H100, tp 2, pp 4) the warning says
# so and there is no hint.
gp simulate --model llama3-8b --gpu H100 --gpus 32 --tp 2 --pp 4 --zero 3 --recompute full \
	-o "$TMP/fit.json" -q
gp export "$TMP/fit.json" --format megatron
expect_rc "export megatron: zero 3 with pp 4 exits 0" 0
expect_err "megatron: zero 3 with pp 4 warns, ZeRO-1 fitting" \
	"^warning: export: Megatron-LM cannot run ZeRO-3 with pipeline parallelism \(pp 4\); .*: it fits$"
grep -q '^hint:' "$ERR" && fail "megatron: no hint when ZeRO-1 fits" "$(grep -m1 '^hint:' "$ERR")" \
	|| pass "megatron: no hint when ZeRO-1 fits"
expect_out "megatron: the script says ZeRO-1 fits" "^# [0-9.]+ GiB per GPU of [0-9.]+ GiB: fits "

# A layout the simulator refuses (32 heads over tp 5 after a hand edit)
# cannot be re-simulated at ZeRO-1: exit 2, one line.
sed 's/"tp":[[:space:]]*1,/"tp": 5,/' "$TMP/pp.json" >"$TMP/bad.json"
gp export "$TMP/bad.json" --format megatron
expect_rc "export: a layout the simulator refuses exits 2" 2
expect_err_lines "export: one error line for it" 1
expect_err "export: the error says why" "^error: plan: layout is not exportable: .*tp"


# ---- skypilot: a task YAML SkyPilot accepts, agreeing with the plan
# The YAML is checked against tests/fixtures/skypilot/task.schema.json
# (python3 jsonschema) and, where SkyPilot is importable ($SKY_PYTHON,
# default python3), with SkyPilot's own validator; each check is shown
# to fail on a misspelt key and a wrong type first.
SKY_PYTHON=${SKY_PYTHON:-python3}
SCHEMA=tests/fixtures/skypilot/task.schema.json
# sky_valid NAME TASK: both validators accept TASK (one skips, with why,
# when its module is missing)
sky_valid() {
	local why
	why=$(st schema "$SCHEMA" "$2" 2>"$TMP/why"); case $? in
	0) pass "$1 (schema)" ;;
	77) echo "skip - $1 (schema): $why" ;;
	*) fail "$1 (schema)" "$(cat "$TMP/why")" ;;
	esac
	why=$($SKY_PYTHON tests/cli/skypilot_task.py sky "$2" 2>"$TMP/why"); case $? in
	0) pass "$1 (SkyPilot)" ;;
	77) echo "skip - $1 (SkyPilot): $why" ;;
	*) fail "$1 (SkyPilot)" "$(cat "$TMP/why")" ;;
	esac
}
# sky_invalid NAME TASK: each validator present rejects TASK
sky_invalid() {
	st schema "$SCHEMA" "$2" >"$TMP/why" 2>&1; case $? in
	1) pass "$1 (schema)" ;;
	77) echo "skip - $1 (schema): $(cat "$TMP/why")" ;;
	*) fail "$1 (schema)" "accepted" ;;
	esac
	$SKY_PYTHON tests/cli/skypilot_task.py sky "$2" >"$TMP/why" 2>&1; case $? in
	1) pass "$1 (SkyPilot)" ;;
	77) echo "skip - $1 (SkyPilot): $(cat "$TMP/why")" ;;
	*) fail "$1 (SkyPilot)" "accepted" ;;
	esac
}

if ! python3 -c 'import yaml' 2>/dev/null; then
	echo "skip - skypilot: python3 has no yaml module to read the task (make deps)"
else
# make run's job (README.md), under Megatron-LM
gp plan --model llama3-70b --tokens 1T --budget 2.5M -o "$TMP/sky-mg.json" -q
expect_rc "plan: make run's job for megatron" 0
gp export "$TMP/sky-mg.json" --format skypilot -o "$TMP/sky-mg.yaml"
expect_rc "export skypilot: make run's plan exits 0" 0
sky_valid "export skypilot: megatron task is valid" "$TMP/sky-mg.yaml"
sed 's/^  use_spot:/  use_spott:/' "$TMP/sky-mg.yaml" >"$TMP/sky-typo.yaml"
sky_invalid "skypilot validators reject a misspelt use_spot" "$TMP/sky-typo.yaml"
sed 's/^num_nodes: \(.*\)/num_nodes: "\1"/' "$TMP/sky-mg.yaml" >"$TMP/sky-type.yaml"
sky_invalid "skypilot validators reject num_nodes as a string" "$TMP/sky-type.yaml"
sed 's/^  use_spot: \(.*\)/  use_spot: "\1"/' "$TMP/sky-mg.yaml" >"$TMP/sky-type2.yaml"
sky_invalid "skypilot validators reject use_spot as a string" "$TMP/sky-type2.yaml"
sed 's/^  cloud: ".*"/  cloud: "gpc"/' "$TMP/sky-mg.yaml" >"$TMP/sky-cloud.yaml"
sky_invalid "skypilot validators reject an unknown cloud" "$TMP/sky-cloud.yaml"

# sky_agrees NAME PLAN TASK: the task's resources and nodes are the plan's
sky_agrees() {
	local gpn
	gpn=$(plan_val "$2" "p['cluster']['gpus_per_node']")
	same "$1: num_nodes is the plan's nodes" "$(st get "$3" num_nodes)" \
		"$(plan_val "$2" "p['cluster']['nodes']")"
	# the plans are Blackwell's (B200, B300), which SkyPilot names as
	# gpus.csv does
	same "$1: one accelerator, the plan's GPUs per node" \
		"$(st get "$3" resources accelerators)" \
		"{\"$(plan_val "$2" "p['cluster']['gpu']['name']")\": $gpn}"
	same "$1: cloud is the offering's" "$(st get "$3" resources cloud)" \
		"$(plan_val "$2" "json.dumps(p['offering']['provider'])")"
	same "$1: region is the offering's" "$(st get "$3" resources region)" \
		"$(plan_val "$2" "json.dumps(p['offering']['region'])")"
	same "$1: instance_type is the offering's" "$(st get "$3" resources instance_type)" \
		"$(plan_val "$2" "json.dumps(p['offering']['instance_type'])")"
	same "$1: use_spot is the plan's purchase" "$(st get "$3" resources use_spot)" \
		"$(plan_val "$2" "json.dumps(p['offering']['purchase'] == 'spot')")"
}
sky_agrees "skypilot megatron" "$TMP/sky-mg.json" "$TMP/sky-mg.yaml"
# the layout in the run: line: Megatron-LM takes tp, pp, cp and derives
# dp from the world size, SKYPILOT_NUM_NODES x SKYPILOT_NUM_GPUS_PER_NODE
st run "$TMP/sky-mg.yaml" >"$TMP/sky-mg.run"
flag() { # FILE FLAG: the number after FLAG, 1 when absent
	local v; v=$(grep -o -- "$2 [0-9]*" "$1" | head -1 | cut -d' ' -f2); echo "${v:-1}"
}
mg_tp=$(flag "$TMP/sky-mg.run" --tensor-model-parallel-size)
mg_pp=$(flag "$TMP/sky-mg.run" --pipeline-model-parallel-size)
mg_cp=$(flag "$TMP/sky-mg.run" --context-parallel-size)
same "skypilot megatron: run line tp is the plan's" "$mg_tp" "$(plan_val "$TMP/sky-mg.json" "p['parallel']['tp']")"
same "skypilot megatron: run line pp is the plan's" "$mg_pp" "$(plan_val "$TMP/sky-mg.json" "p['parallel']['pp']")"
same "skypilot megatron: run line cp is the plan's" "$mg_cp" "$(plan_val "$TMP/sky-mg.json" "p['parallel']['cp']")"
same "skypilot megatron: nodes x GPUs / (tp pp cp) is the plan's dp" \
	"$(( $(st get "$TMP/sky-mg.yaml" num_nodes) * $(plan_val "$TMP/sky-mg.json" "p['cluster']['gpus_per_node']") / (mg_tp * mg_pp * mg_cp) ))" \
	"$(plan_val "$TMP/sky-mg.json" "p['parallel']['dp']")"
# the arguments are the megatron format's, not a copy of them
gp export "$TMP/sky-mg.json" --format megatron
sed -n '/--num-layers/,$p' "$OUT" | sed 's/ \\$//' >"$TMP/mg-args"
sed -n '/--num-layers/,$p' "$TMP/sky-mg.run" | sed 's/ \\$//; s/ \$EXTRA_ARGS$//' >"$TMP/sky-args"
cmp -s "$TMP/mg-args" "$TMP/sky-args" && pass "skypilot megatron: the megatron format's arguments" \
	|| fail "skypilot megatron: the megatron format's arguments" "$(diff "$TMP/mg-args" "$TMP/sky-args" | head -3)"
grep -Fq 'torchrun --nnodes "$SKYPILOT_NUM_NODES" --nproc-per-node "$SKYPILOT_NUM_GPUS_PER_NODE"' "$TMP/sky-mg.run" \
	&& grep -Fq -- '--node-rank "$SKYPILOT_NODE_RANK" --master-addr "$MASTER_ADDR"' "$TMP/sky-mg.run" \
	&& grep -Fq 'MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1)' "$TMP/sky-mg.run" \
	&& pass "skypilot megatron: torchrun over SkyPilot's node variables" \
	|| fail "skypilot megatron: torchrun over SkyPilot's node variables" "$(grep -m1 torchrun "$TMP/sky-mg.run")"

# a DeepSpeed plan: the deepspeed format's config, written by the script
gp plan --model llama3-8b --tokens 100B --budget 50K --framework deepspeed -o "$TMP/sky-ds.json" -q
expect_rc "plan: a deepspeed job" 0
gp export "$TMP/sky-ds.json" --format skypilot --framework deepspeed -o "$TMP/sky-ds.yaml"
expect_rc "export skypilot --framework deepspeed exits 0" 0
# the plan file names the trainer it was priced for, and the launchers
# start it when --framework says nothing
grep -Eq '"framework":[[:space:]]*"deepspeed"' "$TMP/sky-ds.json" &&
	pass "a deepspeed plan file names its framework" ||
	fail "a deepspeed plan file names its framework" "no framework key"
gp export "$TMP/sky-ds.json" --format skypilot -o "$TMP/sky-ds-default.yaml"
expect_rc "export skypilot of a deepspeed plan, no --framework: exit 0" 0
cmp -s "$TMP/sky-ds.yaml" "$TMP/sky-ds-default.yaml" && pass "it launches DeepSpeed by default" \
	|| fail "it launches DeepSpeed by default" "differs from --framework deepspeed"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p["inputs"]["framework"]="evil\x1b[2J"; json.dump(p, open(sys.argv[2], "w"))' \
	"$TMP/sky-ds.json" "$TMP/fw-bad.json"
gp export "$TMP/fw-bad.json" --format slurm
expect_rc "export: an unknown framework in the plan: exit 2" 2
expect_err_lines "export: an unknown framework: one error line" 1
expect_err "export: names the field, escaped" 'inputs\.framework: expected megatron, deepspeed or trl, found "evil\\x1b\[2J"'
sky_valid "export skypilot: deepspeed task is valid" "$TMP/sky-ds.yaml"
sky_agrees "skypilot deepspeed" "$TMP/sky-ds.json" "$TMP/sky-ds.yaml"
st run "$TMP/sky-ds.yaml" >"$TMP/sky-ds.run"
sed -n "/<<'GPUPLAN_DS_CONFIG'/,/^GPUPLAN_DS_CONFIG$/p" "$TMP/sky-ds.run" | sed '1d;$d' >"$TMP/sky-ds-config.json"
gp export "$TMP/sky-ds.json" --format deepspeed
cmp -s "$OUT" "$TMP/sky-ds-config.json" && pass "skypilot deepspeed: the deepspeed format's config" \
	|| fail "skypilot deepspeed: the deepspeed format's config" "$(diff "$OUT" "$TMP/sky-ds-config.json" | head -3)"
ds_dp=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); print(c["train_batch_size"] // (c["train_micro_batch_size_per_gpu"] * c["gradient_accumulation_steps"]))' "$TMP/sky-ds-config.json")
same "skypilot deepspeed: the config's dp is the plan's" "$ds_dp" "$(plan_val "$TMP/sky-ds.json" "p['parallel']['dp']")"
ds_tp=$(flag "$TMP/sky-ds.run" --tensor-model-parallel-size)
ds_pp=$(flag "$TMP/sky-ds.run" --pipeline-model-parallel-size)
same "skypilot deepspeed: run line tp is the plan's" "$ds_tp" "$(plan_val "$TMP/sky-ds.json" "p['parallel']['tp']")"
same "skypilot deepspeed: run line pp is the plan's" "$ds_pp" "$(plan_val "$TMP/sky-ds.json" "p['parallel']['pp']")"
same "skypilot deepspeed: tp x pp x dp x cp fills the nodes" \
	"$(( ds_tp * ds_pp * ds_dp * $(plan_val "$TMP/sky-ds.json" "p['parallel']['cp']") ))" \
	"$(( $(st get "$TMP/sky-ds.yaml" num_nodes) * $(plan_val "$TMP/sky-ds.json" "p['cluster']['gpus_per_node']") ))"
grep -Fq -- "--deepspeed --deepspeed_config 'ds_config.json'" "$TMP/sky-ds.run" \
	&& pass "skypilot deepspeed: the script gets the config" \
	|| fail "skypilot deepspeed: the script gets the config" "$(grep -m1 deepspeed_config "$TMP/sky-ds.run")"

# Strings from the plan file: one with shell or YAML syntax is refused
# where the plan is read (names are letters, digits and ' ._-:/+(),@'); the
# writers quote anyway (test_export.c feeds them $(...) directly).
python3 - "$TMP/sky-mg.json" "$TMP/sky-evil.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["model"]["name"] = "$(touch pwned)"
json.dump(p, open(sys.argv[2], "w"))
PY
gp export "$TMP/sky-evil.json" --format skypilot -o "$TMP/sky-evil.yaml"
expect_rc "export skypilot: a plan named \$(touch pwned) exits 2" 2
expect_err "export skypilot: the reader names the field" "\.model\.name: expected a name of letters, digits"
[ ! -e "$TMP/sky-evil.yaml" ] && pass "export skypilot: nothing written for it" \
	|| fail "export skypilot: nothing written for it" "$TMP/sky-evil.yaml exists"
# names the reader takes that a shell or YAML would still split: the YAML
# reads back the literal strings, and the run: script, run with a stub
# torchrun, passes them as one word and runs nothing
python3 - "$TMP/sky-mg.json" "$TMP/sky-odd.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["model"]["name"] = "x (y), z@w+v"
p["offering"]["region"] = "us west, 2: x"
p["offering"]["instance_type"] = "p6 (b), 2"
json.dump(p, open(sys.argv[2], "w"))
PY
gp export "$TMP/sky-odd.json" --format skypilot -o "$TMP/sky-odd.yaml"
expect_rc "export skypilot: a plan with blanks, commas and parentheses in its names exits 0" 0
sky_valid "export skypilot: that task is valid" "$TMP/sky-odd.yaml"
same "skypilot: ': ' and a comma in the region read back literally" \
	"$(st get "$TMP/sky-odd.yaml" resources region)" '"us west, 2: x"'
same "skypilot: the model name reads back literally" \
	"$(st get "$TMP/sky-odd.yaml" name)" '"x (y), z@w+v"'
same "skypilot: the instance type reads back literally" \
	"$(st get "$TMP/sky-odd.yaml" resources instance_type)" '"p6 (b), 2"'
# region "all" (one price in every region, as Lambda's, RunPod's, Oracle's
# and Nebius's rows are) is no region SkyPilot knows: none is written, and
# SkyPilot chooses
python3 - "$TMP/sky-mg.json" "$TMP/sky-all.json" <<'PY2'
import json, sys
p = json.load(open(sys.argv[1]))
p["offering"]["region"] = "all"
json.dump(p, open(sys.argv[2], "w"))
PY2
gp export "$TMP/sky-all.json" --format skypilot -o "$TMP/sky-all.yaml"
expect_rc "export skypilot: a plan in region 'all' exits 0" 0
sky_valid "export skypilot: that task is valid" "$TMP/sky-all.yaml"
same "skypilot: region 'all' is not written, the cloud is" \
	"$(st get "$TMP/sky-all.yaml" resources | python3 -c 'import json, sys; r = json.load(sys.stdin); print("region" in r, r["cloud"])')" \
	"False $(plan_val "$TMP/sky-mg.json" "p['offering']['provider']")"
mkdir -p "$TMP/sky-run/bin"
printf '#!/bin/sh\necho "$@" >"%s"\n' "$TMP/sky-run/torchrun.args" >"$TMP/sky-run/bin/torchrun"
chmod +x "$TMP/sky-run/bin/torchrun"
st run "$TMP/sky-odd.yaml" >"$TMP/sky-run/run.sh"
(cd "$TMP/sky-run" && PATH="$TMP/sky-run/bin:$PATH" SKYPILOT_NODE_IPS=$'10.0.0.1\n10.0.0.2' \
	SKYPILOT_NUM_NODES=2 SKYPILOT_NUM_GPUS_PER_NODE=8 SKYPILOT_NODE_RANK=0 \
	TRAIN_SCRIPT=pretrain_gpt.py EXTRA_ARGS= DATA_PATH=/data/x CKPT_DIR=/ck HF_TOKEN=t bash run.sh >run.out 2>&1)
[ -s "$TMP/sky-run/torchrun.args" ] && pass "skypilot: the run: script reached the stub torchrun" \
	|| fail "skypilot: the run: script reached the stub torchrun" "$(cat "$TMP/sky-run/run.out")"
grep -q -- "--master-addr 10.0.0.1 " "$TMP/sky-run/torchrun.args" \
	&& pass "skypilot: the head node's address from SKYPILOT_NODE_IPS" \
	|| fail "skypilot: the head node's address from SKYPILOT_NODE_IPS" "$(cat "$TMP/sky-run/torchrun.args")"
[ "$(ls "$TMP/sky-run")" = "$(printf 'bin\nrun.out\nrun.sh\ntorchrun.args')" ] \
	&& pass "skypilot: the run: script creates nothing from the plan" \
	|| fail "skypilot: the run: script creates nothing from the plan" "$(ls "$TMP/sky-run")"
grep -Fxq 'x (y), z@w+v' "$TMP/sky-run/run.out" && pass "skypilot: the script echoes the model name as written" \
	|| fail "skypilot: the script echoes the model name as written" "$(head -1 "$TMP/sky-run/run.out")"
# a control character cannot be carried in the run: script: refused
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p["model"]["name"]="a\nb"; json.dump(p, open(sys.argv[2], "w"))' \
	"$TMP/sky-mg.json" "$TMP/sky-nl.json"
gp export "$TMP/sky-nl.json" --format skypilot
expect_rc "export skypilot: a newline in the model name exits 2" 2
expect_err "export skypilot: the error names the field" "\.model\.name: expected a name of letters, digits and .*, found a line break"
fi

# ---- meaning: for each preset family, what each format launches is the
# planned model, trained on the plan's tokens, checkpointed at the plan's
# interval, on the plan's GPUs.  The launchers are stubs that record their
# arguments and environment; tests/cli/megatron_args.py reads the
# arguments as Megatron-LM does and counts the parameters those arguments
# build, checked against the plan's to 0.5%.  Where $MEGATRON_LM names a
# Megatron-LM checkout, its own parse_args and validate_args must accept
# them too (skipped otherwise).  The Kubernetes manifests are checked
# against the CRDs' schemas (tests/fixtures/kubeflow) and what the kubelet
# and the operators make of them (tests/cli/k8s_job.py).
# Megatron-LM: Llama 3 (rope 500000, RMSNorm, GQA), GPT-3/Megatron
# (learned, LayerNorm, biases, dropout 0.1, tied), Mistral (sliding
# window), in every format that starts it
for fam in "llama3-70b 1T 2.5M" "megatron-1.7b 20B 20K" "mistral-7b 100B 100K"; do
	set -- $fam
	gp plan --model "$1" --tokens "$2" --budget "$3" -o "$TMP/f-$1.json" -q
	expect_rc "plan $1" 0
	for fmt in megatron slurm mpirun kubernetes trainjob skypilot; do
		launch "$1 $fmt" "$TMP/f-$1.json" $fmt megatron "$TMP/f-$1.$fmt.argv"
		meaning "$1 $fmt" "$TMP/f-$1.json" "$TMP/f-$1.$fmt.argv"
	done
done
cp "$TMP/f-llama3-70b.megatron.argv.sh" "$TMP/f-llama3-70b.megatron.sh"
cp "$TMP/f-llama3-70b.slurm.argv.sh" "$TMP/f-llama3-70b.slurm.sh"
# Mixtures of experts: DeepSeek-V3 (MLA, shared expert, 3 dense layers,
# MTP, mxfp8, flex dispatcher, EP overlap), Qwen3-30B-A3B, GPT-OSS-20B
# (sliding window every other layer, sinks, head_dim 64, biases): the MoE,
# MLA and precision flags equal the plan's fields and the parameters they
# build its total (planned on AWS, whose B300 answers keep tp 1, which the
# DeepSpeed-MoE checks below lean on)
for fam in "deepseek-v3 15T 20M" "qwen3-30b-a3b 1T 1M" "gpt-oss-20b 500B 500K"; do
	set -- $fam
	gp plan --model "$1" --tokens "$2" --budget "$3" --provider aws -o "$TMP/e-$1.json" -q
	expect_rc "plan $1" 0
	for fmt in megatron slurm; do
		launch "$1 $fmt" "$TMP/e-$1.json" $fmt megatron "$TMP/e-$1.$fmt.argv"
		meaning "$1 $fmt" "$TMP/e-$1.json" "$TMP/e-$1.$fmt.argv"
	done
done
# Llama 3 405B's own pipeline (Dubey et al. 2024, sec. 3.3.2): 16 stages of
# 8 one-layer chunks, the first chunk the embedding's alone and the last
# the loss's: a layout whose chunks Megatron-LM must build
gp simulate --model llama3-405b --gpu H100-SXM5-80GB --gpus 8192 --tp 8 --pp 16 \
	--interleave 8 --gbs 2048 --seq-parallel --zero 1 --tokens 15T -o "$TMP/l3-405b.json" >/dev/null
expect_rc "simulate llama3-405b pp 16 x 8 chunks" 0
launch "llama3-405b pp16 v8 megatron" "$TMP/l3-405b.json" megatron megatron "$TMP/l3-405b.argv"
meaning "llama3-405b pp16 v8 megatron" "$TMP/l3-405b.json" "$TMP/l3-405b.argv"
grep -Eq "'E\|t\*1\|t\*1\|.*\|t\*1\|L'" "$TMP/l3-405b.argv.sh" &&
	pass "llama3-405b pp16 v8: the embedding's and the loss's chunks alone" ||
	fail "llama3-405b pp16 v8: the embedding's and the loss's chunks alone" "no 'E|t*1|...|t*1|L' layout"
# TP's collectives under the GEMMs, as priced: Megatron-LM's userbuffers
# flag, with the sequence parallelism it asserts
gp simulate --model llama3-70b --gpu H100-SXM5-80GB --gpus 64 --tp 4 --pp 2 --seq-parallel \
	--tp-overlap --zero 1 --recompute selective --tokens 1T -o "$TMP/tpo.json" >/dev/null
expect_rc "simulate llama3-70b tp 4 with TP overlap" 0
launch "llama3-70b tp-overlap megatron" "$TMP/tpo.json" megatron megatron "$TMP/tpo.argv"
meaning "llama3-70b tp-overlap megatron" "$TMP/tpo.json" "$TMP/tpo.argv"
grep -q -- "--tp-comm-overlap" "$TMP/tpo.argv.sh" && grep -q -- "--sequence-parallel" "$TMP/tpo.argv.sh" &&
	pass "llama3-70b tp 4: --tp-comm-overlap beside --sequence-parallel" ||
	fail "llama3-70b tp 4: --tp-comm-overlap beside --sequence-parallel" "missing"
# Megatron-Bridge's DeepSeek-V3 layout: 16 stages of 4 layers but the last,
# 1 beside the MTP module and the loss
gp simulate --model deepseek-v3 --gpu H100-SXM5-80GB --gpus 256 --pp 16 --ep 8 --gbs 4096 \
	--zero 1 --precision fp8 --fp8-param-gather --pp-last-layers 1 --tokens 1T \
	-o "$TMP/dsv3-pp16.json" >/dev/null
expect_rc "simulate deepseek-v3 pp 16, the last stage 1 layer" 0
launch "deepseek-v3 pp16 last 1 megatron" "$TMP/dsv3-pp16.json" megatron megatron "$TMP/dsv3-pp16.argv"
meaning "deepseek-v3 pp16 last 1 megatron" "$TMP/dsv3-pp16.json" "$TMP/dsv3-pp16.argv"
grep -q -- "--fp8-format hybrid --fp8-param-gather" "$TMP/dsv3-pp16.argv.sh" &&
	pass "deepseek-v3 pp16: FP8 weights gathered in FP8 (--fp8-param-gather)" ||
	fail "deepseek-v3 pp16: FP8 weights gathered in FP8 (--fp8-param-gather)" "missing"
grep -Eq "'Et\*4(\|t\*4){14}\|t\*1,m,L'" "$TMP/dsv3-pp16.argv.sh" &&
	pass "deepseek-v3 pp16: the recipe's layout, spelt out" ||
	fail "deepseek-v3 pp16: the recipe's layout, spelt out" "no 'Et*4|...|t*1,m,L' layout"
# the other precisions: fp8 (hybrid, delayed scaling), nvfp4 (e2m1)
for prec in fp8 nvfp4; do
	python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p["parallel"]["precision"]=sys.argv[3]; json.dump(p, open(sys.argv[2], "w"))' \
		"$TMP/e-deepseek-v3.json" "$TMP/e-$prec.json" $prec
	launch "deepseek-v3 $prec megatron" "$TMP/e-$prec.json" megatron megatron "$TMP/e-$prec.argv"
	meaning "deepseek-v3 $prec megatron" "$TMP/e-$prec.json" "$TMP/e-$prec.argv"
done
# Megatron-Core overlaps the EP all-to-all with pp > 1 only interleaved:
# a plan priced so is refused in one line, nothing written
gp simulate --model deepseek-v3 --gpu B300 --gpus 256 --pp 16 --ep 8 --gbs 4096 --zero 1 \
	--precision mxfp8 --inter-node-gbps 6400 --ep-overlap -o "$TMP/e-ovl.json" >/dev/null
expect_rc "simulate deepseek-v3 pp 16 with the EP overlap" 0
gp export "$TMP/e-ovl.json" --format megatron -o "$TMP/e-ovl.sh"
[ "$RC" = 2 ] && [ "$(grep -c '^error:' "$ERR")" = 1 ] && [ ! -e "$TMP/e-ovl.sh" ] \
	&& grep -q "^error: plan: \.parallel\.ep_overlap: Megatron-Core overlaps the EP all-to-all only with ep > 1, interleaving with pp > 1, .*found ep 8, pp 16, interleave 1" "$ERR" \
	&& pass "megatron: an EP overlap Megatron-Core refuses is refused in one line" \
	|| fail "megatron: an EP overlap Megatron-Core refuses is refused in one line" "exit $RC, $(head -1 "$ERR")"
# DeepSpeed-MoE runs expert groups dividing dp, unsplit or split over tp:
# an etp of 2 at tp 1 is refused in one line, nothing written
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p["parallel"]["etp"]=2; json.dump(p, open(sys.argv[2], "w"))' \
	"$TMP/e-deepseek-v3.json" "$TMP/e-etp2.json"
gp export "$TMP/e-etp2.json" --format deepspeed -o "$TMP/e-etp2.ds.json"
[ "$RC" = 2 ] && [ "$(grep -c '^error:' "$ERR")" = 1 ] && [ ! -e "$TMP/e-etp2.ds.json" ] \
	&& grep -Eq "^error: plan: \.parallel: DeepSpeed-MoE cannot run ep [0-9]+, etp 2 over dp [0-9]+, tp 1: it needs ep dividing dp and etp 1 or tp" "$ERR" \
	&& pass "deepspeed: an MoE layout DeepSpeed-MoE cannot run is refused in one line" \
	|| fail "deepspeed: an MoE layout DeepSpeed-MoE cannot run is refused in one line" "exit $RC, $(head -1 "$ERR")"
# Models Megatron-LM cannot build: GPT-NeoX (attention and MLP in
# parallel), MPT (ALiBi), BLOOM (ALiBi, a LayerNorm after the embedding):
# every format that would start Megatron-LM refuses in one line and
# writes nothing; under DeepSpeed each format starts the user's script
# with the plan's GPUs, batch, training length and checkpoint interval.
for fam in "gpt-neox-20b 50B 200K parallel_residual" "mpt-7b 50B 100K alibi" \
	"bloom-176b 20B 2M alibi" "llama3-8b 100B 50K -"; do
	set -- $fam
	if [ "$4" != - ]; then
		gp plan --model "$1" --tokens "$2" --budget "$3" -o "$TMP/m-$1.json" -q
		for fmt in megatron slurm mpirun kubernetes trainjob skypilot; do
			gp export "$TMP/m-$1.json" --format $fmt -o "$TMP/m-$1.$fmt"
			[ "$RC" = 2 ] && [ "$(grep -c '^error:' "$ERR")" = 1 ] && [ ! -e "$TMP/m-$1.$fmt" ] \
				&& grep -q "^error: plan: \.model: Megatron-LM cannot build $1 as planned: it has no .*$4)$" "$ERR" \
				&& pass "$1 $fmt: Megatron-LM refused in one line naming $4" \
				|| fail "$1 $fmt: Megatron-LM refused in one line naming $4" "exit $RC, $(head -1 "$ERR")"
		done
	fi
	gp plan --model "$1" --tokens "$2" --budget "$3" --framework deepspeed -o "$TMP/d-$1.json" -q
	expect_rc "plan $1 for deepspeed" 0
	for fmt in deepspeed slurm mpirun kubernetes trainjob skypilot; do
		launch "$1 deepspeed $fmt" "$TMP/d-$1.json" $fmt deepspeed "$TMP/d-$1.$fmt.argv"
		ds_meaning "$1 deepspeed $fmt" "$TMP/d-$1.json" "$TMP/d-$1.$fmt.argv"
	done
	# mpirun hands the variables to every rank (-x); deepspeed's runner
	# only those in .deepspeed_env
	grep -qx GPUPLAN_TRAIN_SAMPLES "$TMP/d-$1.mpirun.argv" && grep -qx GPUPLAN_SAVE_INTERVAL_STEPS "$TMP/d-$1.mpirun.argv" \
		&& pass "$1 deepspeed mpirun: -x passes the GPUPLAN_ variables on" \
		|| fail "$1 deepspeed mpirun: -x passes the GPUPLAN_ variables on" "$(grep -A1 -- -x "$TMP/d-$1.mpirun.argv" | head -4)"
done
# GPT-NeoX's partial rotary, where its parallel residual is dropped: the
# export says --rotary-percent 0.25 (meaning checks it against the plan)
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p["model"]["parallel_residual"]=0; json.dump(p, open(sys.argv[2], "w"))' \
	"$TMP/m-gpt-neox-20b.json" "$TMP/neox-serial.json"
launch "gpt-neox-20b serial megatron" "$TMP/neox-serial.json" megatron megatron "$TMP/neox-serial.argv"
grep -qx -- --rotary-percent "$TMP/neox-serial.argv" && pass "gpt-neox-20b serial: --rotary-percent written" \
	|| fail "gpt-neox-20b serial: --rotary-percent written" "absent"
meaning "gpt-neox-20b serial megatron" "$TMP/neox-serial.json" "$TMP/neox-serial.argv"
# the validators are shown to refuse what they should: a misspelt key, a
# name the webhook refuses, more args than a TrainJob holds, a reserved
# torchrun variable
sed 's/^    numNodes:/    numNode:/' "$TMP/f-llama3-70b.trainjob.argv.yaml" >"$TMP/bad-tj1.yaml"
sed 's/^  name: gpuplan-llama3-70b$/  name: gpuplan-llama3.70b/' "$TMP/f-llama3-70b.trainjob.argv.yaml" >"$TMP/bad-tj2.yaml"
python3 -c 'import sys, yaml; j = yaml.safe_load(open(sys.argv[1])); j["spec"]["trainer"]["args"] *= 4; yaml.safe_dump(j, open(sys.argv[2], "w"))' \
	"$TMP/f-llama3-70b.trainjob.argv.yaml" "$TMP/bad-tj3.yaml"
python3 -c 'import sys, yaml; j = yaml.safe_load(open(sys.argv[1])); j["spec"]["trainer"]["env"].append({"name": "PET_NNODES", "value": "2"}); yaml.safe_dump(j, open(sys.argv[2], "w"))' \
	"$TMP/f-llama3-70b.trainjob.argv.yaml" "$TMP/bad-tj4.yaml"
sed 's/^      replicas: 1$/      replicas: 2/' "$TMP/f-llama3-70b.kubernetes.argv.yaml" >"$TMP/bad-pj1.yaml"
sed 's/^    Master:$/    Chief:/' "$TMP/f-llama3-70b.kubernetes.argv.yaml" >"$TMP/bad-pj2.yaml"
for bad in tj1:trainjob tj2:trainjob tj3:trainjob tj4:trainjob pj1:pytorchjob pj2:pytorchjob; do
	KJ check "tests/fixtures/kubeflow/${bad#*:}.schema.json" "$TMP/bad-${bad%%:*}.yaml" >"$TMP/why" 2>&1; case $? in
	1) pass "${bad#*:} validator refuses bad-${bad%%:*} ($(head -c 90 "$TMP/why"))" ;;
	77) echo "skip - ${bad#*:} validator refuses bad-${bad%%:*}: $(cat "$TMP/why")" ;;
	*) fail "${bad#*:} validator refuses bad-${bad%%:*}" "accepted" ;;
	esac
done
# AMD GPUs: amd.com/gpu in both manifests
gp simulate --model llama3-8b --gpu MI300X --gpus 8 --zero 1 --tokens 1B -o "$TMP/amd.json" -q
for fmt in kubernetes trainjob; do
	gp export "$TMP/amd.json" --format $fmt
	expect_out "$fmt: AMD GPUs are amd.com/gpu" "^ +amd\.com/gpu: 8$"
	expect_no_out "$fmt: no nvidia.com/gpu for AMD" "nvidia\.com/gpu"
done
# the whole-run time a partition would refuse is not asked for: a day a job
grep -q '^#SBATCH --time=1-00:00:00$' "$TMP/f-llama3-70b.slurm.sh" \
	&& pass "slurm: make run's job runs in jobs of a day" \
	|| fail "slurm: make run's job runs in jobs of a day" "$(grep -- --time "$TMP/f-llama3-70b.slurm.sh")"
grep -q 'MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)' "$TMP/f-llama3-70b.slurm.sh" \
	&& pass "slurm: MASTER_ADDR from the allocation's first node" \
	|| fail "slurm: MASTER_ADDR from the allocation's first node" "no scontrol line"
# an unset MASTER_ADDR stops a multi-node script with what to set
(cd "$STUB" && PATH="$STUB/bin:$PATH" ARGV_OUT=/dev/null DATA_PATH=/d CKPT_DIR=/c \
	bash "$TMP/f-llama3-70b.megatron.sh" >"$OUT" 2>"$ERR"); RC=$?
expect_rc "megatron: MASTER_ADDR unset exits 1" 1
expect_err "megatron: MASTER_ADDR unset says what to set" "MASTER_ADDR: set MASTER_ADDR to the address of the first node"
# Megatron-LM's parser is shown to refuse a misspelt flag
if [ -n "${MEGATRON_LM:-}" ]; then
	sed 's/^--rotary-base$/--rotary-bas/' "$TMP/f-llama3-70b.megatron.argv" >"$TMP/bad.argv"
	MA parse "$TMP/bad.argv" >"$TMP/why" 2>&1
	case $? in
	1) pass "Megatron-LM's parser refuses --rotary-bas" ;;
	77) echo "skip - Megatron-LM's parser refuses --rotary-bas: $(cat "$TMP/why")" ;;
	*) fail "Megatron-LM's parser refuses --rotary-bas" "accepted" ;;
	esac
fi
# DeepSpeed: CP refused in one line; activation partitioning and the
# contiguous buffer together or not at all
gp simulate --model llama3-8b --gpu H100 --gpus 16 --cp 2 -o "$TMP/cp2.json" -q
gp export "$TMP/cp2.json" --format deepspeed
expect_rc "deepspeed: a CP plan exits 2" 2
expect_err_lines "deepspeed: one error line for CP" 1
expect_err "deepspeed: the error names cp" "^error: plan: \.parallel\.cp: expected 1 for DeepSpeed"
gp simulate --model llama3-8b --gpu H100 --gpus 8 --zero 1 --recompute full -o "$TMP/ds1.json" -q
gp export "$TMP/ds1.json" --format deepspeed
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["activation_checkpointing"]; sys.exit(a["contiguous_memory_optimization"] and not a["partition_activations"])' "$OUT" \
	&& pass "deepspeed: no contiguous_memory_optimization without partition_activations" \
	|| fail "deepspeed: no contiguous_memory_optimization without partition_activations" "$(cat "$OUT")"
gp export "$TMP/z1.json" --format deepspeed -o "$TMP/ds16.json"
grep -q "> .deepspeed_env$" "$OUT" && grep -q "> hostfile$" "$OUT" \
	&& pass "deepspeed: the launch writes .deepspeed_env and the hostfile it names" \
	|| fail "deepspeed: the launch writes .deepspeed_env and the hostfile it names" "$(cat "$OUT")"
# V100 has no bf16: fp16 with dynamic loss scaling
gp simulate --model llama2-7b --gpu V100-SXM2-32GB --gpus 16 --tp 2 --zero 1 --recompute full --tokens 10B -o "$TMP/v100.json" -q
gp export "$TMP/v100.json" --format megatron
expect_out "V100: megatron runs fp16" "^  --fp16$"
expect_no_out "V100: no --bf16" "--bf16"
# nor grouped GEMM: Megatron-LM's validate_args refuses it below sm80
gp simulate --model mixtral-8x7b --gpu V100-SXM2-32GB --gpus 64 --ep 8 -o "$TMP/v100moe.json" -q
gp export "$TMP/v100moe.json" --format megatron
expect_out "V100 MoE: experts over EP" "--expert-model-parallel-size 8"
expect_no_out "V100 MoE: no grouped GEMM" "--moe-grouped-gemm"
gp simulate --model mixtral-8x7b --gpu H100 --gpus 64 --ep 8 -o "$TMP/h100moe.json" -q
gp export "$TMP/h100moe.json" --format megatron
expect_out "H100 MoE: grouped GEMM" "^  --moe-grouped-gemm"
gp export "$TMP/v100.json" --format deepspeed
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); sys.exit(not (c["fp16"]["enabled"] and c["fp16"]["loss_scale"] == 0 and "bf16" not in c))' "$OUT" \
	&& pass "V100: deepspeed fp16 with dynamic loss scaling" || fail "V100: deepspeed fp16 with dynamic loss scaling" "$(cat "$OUT")"
# 12 GPUs on 8-GPU nodes launch 12 ranks (2 x 6)
gp simulate --model llama3-8b --gpu H100 --gpus 12 --tp 2 --zero 1 --recompute full --gbs 12 --tokens 1B -o "$TMP/g12.json" -q
for fmt in megatron slurm mpirun; do
	gp export "$TMP/g12.json" --format $fmt -o "$TMP/g12.$fmt.sh"
	argv "12 GPUs $fmt" "$TMP/g12.$fmt.sh" "$TMP/g12.$fmt.argv"
	same "12 GPUs on 8-GPU nodes: $fmt starts 12" "$(MA meaning "$TMP/g12.$fmt.argv" 128256 | python3 -c 'import json,sys; print(json.load(sys.stdin)["world_size"])')" 12
done

# --framework belongs to the launchers
gp export "$TMP/pp.json" --format megatron --framework deepspeed
expect_rc "export: --framework with another format exits 2" 2
expect_err "export: --framework with another format says so" "^error: --framework: expected only with --format slurm, mpirun, kubernetes, trainjob or skypilot"
gp export "$TMP/pp.json" --format skypilot --framework any
expect_rc "export: --framework any exits 2" 2
expect_err "export: --framework any is refused" "^error: --framework: expected megatron or deepspeed, found 'any'"

finish
