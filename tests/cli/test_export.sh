#!/usr/bin/env bash
# test_export.sh - the ZeRO stage a plan is exported with: Megatron-LM's
# distributed optimizer for ZeRO-1 and Megatron-FSDP for ZeRO-2/3 without
# a pipeline (its flags, and CUDA_DEVICE_MAX_CONNECTIONS not 1); with a
# pipeline, where Megatron-LM and DeepSpeed run ZeRO-1 at most, ZeRO-1
# written with a warning and a comment whose memory per GPU is checked
# against `simulate --zero 1` of the same layout.
. "$(dirname "$0")/lib.sh"
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

finish
