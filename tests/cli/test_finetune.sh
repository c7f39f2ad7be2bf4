#!/usr/bin/env bash
# test_finetune.sh - fine-tuning as a user types it on the shipped data:
# the 70B on eight owned RTX 4090s (full fine-tuning with CPU offload,
# QLoRA on fewer GPUs, memory by kind with the host's), LoRA and QLoRA in
# simulate, offload searched only where GPU memory binds, epochs over a
# dataset, compare's 4x RTX 4090 owned against rented H100, the exports
# (DeepSpeed offload keys, trl), and every bad flag value (exit 2).
. "$(dirname "$0")/lib.sh"
export GPUPLAN_SHARE_DIR="$PWD/data"

# ---- help
for cmd in simulate plan compare; do
	gp $cmd --help
	for opt in --finetune --lora-rank --lora-targets --offload --epochs --dataset-tokens --host; do
		expect_out "$cmd --help lists $opt" -- "$opt"
	done
done

# ---- the 70B on 8 owned RTX 4090s: before, nothing fit (137-154 GiB a GPU)
gp plan --model llama2-70b --tokens 100M --have 8xRTX4090 --gpu RTX4090 --max-gpus 8 --finetune full
expect_rc "full 70B without a stated host: no feasible plan" 3
expect_out "and says offload needs the host's figures" "offload +not searched .*--host memory="
gp plan --model llama2-70b --tokens 100M --have 8xRTX4090 --gpu RTX4090 --max-gpus 8 \
	--finetune full --host memory=1536G,cores=64 -o "$TMP/full.json"
expect_rc "full 70B with the host stated: a plan" 0
expect_out "it offloads to the CPU" "^offload +cpu: optimizer states"
expect_out "memory by kind with the host's" "^memory +per GPU .* weights .* gradients .* optimizer 0 B, activations .*; host [0-9.]+ GiB of 1430.5 GiB per node"
expect_out "it says the links go through host memory" "no NVLink and no peer-to-peer"
expect_out "the layout names the links the RTX 4090 has" "^layout .* on 8 GPUs, PCIe within nodes of 8;"
expect_no_out "no NVLink domain for a GPU without NVLink" "NVLink domains of"
expect_out "an owned machine's price is its running cost" "^prices: owned .*: running cost only"
# Its 966 GB checkpoint takes 16.1 min at 1 GB/s; 8 GPUs fail once in
# 237 d (planner/plan.h), so Young/Daly's interval (2.3 d) outlasts the
# 1.2-day run: only the last checkpoint is written, where an hourly one
# added 26.8% (docs/finetune.md).
expect_out "its checkpoint interval follows the failure model, not 1 h" \
	"^checkpoints: 966 GB each .* written at the end only in 16\.1 min \(the Young/Daly interval, 2\.3 d, outlasts the run\)"
expect_out "and its interruptions: few, a small overhead" \
	"^interruptions: 0\.00[0-9]+ expected \(failures 2\.19e-05/GPU-hour x 8 GPUs: one every 237\.3 d\).*effective training time 98\.[0-9]+% \(\+1\.[0-9]+% wall time"
full_time=$(sed -n 's/^answer: llama2-70b in \([0-9.]*\) d .*/\1/p' "$OUT")
gp plan --model llama2-70b --tokens 100M --have 8xRTX4090 --gpu RTX4090 --max-gpus 8 \
	--finetune full --host memory=1536G,cores=64 --ckpt-interval 1h -o "$TMP/full-1h.json"
expect_out "an hourly checkpoint, pinned, adds 26.8%" "written every 1\.0 h in 16\.1 min \(--ckpt-interval; \+26\.82% wall time"
hourly_time=$(sed -n 's/^answer: llama2-70b in \([0-9.]*\) d .*/\1/p' "$OUT")
awk -v a="$full_time" -v b="$hourly_time" 'BEGIN { exit !(a > 0 && b > a * 1.2) }' \
	&& pass "the model's interval makes the run shorter: $full_time d against $hourly_time d hourly" \
	|| fail "the model's interval makes the run shorter" "$full_time d against $hourly_time d hourly"
grep -q "unknown age" "$ERR" && fail "no price-age warning for an owned machine" "stderr: $(cat "$ERR")" \
	|| pass "no price-age warning for an owned machine"
grep -Eq '"offload":[[:space:]]*"cpu"' "$TMP/full.json" && pass "the plan file records the offload" \
	|| fail "the plan file records the offload" "no offload key"
# Megatron-LM's --optimizer-cpu-offload at ZeRO-1: the weights stay on the
# GPUs, 69B x 16 bytes of states x 1.05 slack = 1079 GiB on the host
expect_out "a layout Megatron-LM runs with its CPU offload: ZeRO-1" "^1 +owned .* 1x8=8 +[0-9]+/[0-9]+/[0-9]+/1( v[0-9]+)? +[0-9]+x[0-9]+ +1 "
expect_out "named with its flag" "^framework: Megatron-LM, the optimizer in host memory \(--optimizer-cpu-offload"
gp simulate "$TMP/full.json" --json
expect_out "simulate re-reads it: host memory 1079 GiB" "\"host_per_node\":[[:space:]]*1158[0-9]{9}"
# a host too small for the states: nothing fits, NVMe is not stated
gp plan --model llama2-70b --tokens 100M --have 8xRTX4090 --gpu RTX4090 --max-gpus 8 \
	--finetune full --host memory=512G,cores=64
expect_rc "full 70B on a 512 GB host: no feasible plan" 3
gp plan --model llama2-70b --tokens 100M --have 8xRTX4090 --gpu RTX4090 --max-gpus 8 \
	--finetune full --host memory=512G,cores=64,nvme=12
expect_rc "with its NVMe stated: ZeRO-Infinity fits" 0
expect_out "on NVMe" "^offload +nvme: .*NVMe"
expect_out "NVMe holds the states" "NVMe [0-9.]+ (GiB|TiB)"

# ---- only layouts the framework runs: Megatron-LM has no NVMe offload and
# DeepSpeed puts the optimizer on NVMe only under ZeRO-3 (ZeRO-Infinity),
# which its pipeline engine does not run, so the seed's job is DeepSpeed's
gp plan --model llama2-70b --tokens 100M --have 8xRTX4090 --gpu RTX4090 --max-gpus 8 \
	--finetune full --host memory=512G,cores=64,nvme=6 -o "$TMP/nvme.json"
expect_rc "full 70B, 512 GB host and NVMe: a plan" 0
expect_out "a layout DeepSpeed runs: ZeRO-3, no pipeline" "^1 +owned .* 1x8=8 +1/1/8/1 +[0-9]+x[0-9]+ +3 "
expect_out "the framework line names DeepSpeed ZeRO-3 on NVMe" \
	"^framework: DeepSpeed ZeRO-3, the optimizer and weights on NVMe \(ZeRO-Infinity\).*Megatron-LM fits no layout"
expect_no_out "not Megatron-LM" "^framework: Megatron-LM"
expect_out "the search says so" "layouts deepspeed runs"
grep -Eq '"framework":[[:space:]]*"deepspeed"' "$TMP/nvme.json" \
	&& pass "the plan file names DeepSpeed" || fail "the plan file names DeepSpeed" "no deepspeed"
gp plan --model llama2-70b --tokens 100M --have 8xRTX4090 --gpu RTX4090 --max-gpus 8 \
	--finetune full --host memory=512G,cores=64,nvme=6 --framework megatron
expect_rc "--framework megatron: no NVMe offload, no plan" 3
gp plan --model llama2-70b --tokens 100M --have 8xRTX4090 --gpu RTX4090 --max-gpus 8 \
	--finetune full --host memory=1536G,cores=64 --framework deepspeed
expect_rc "--framework deepspeed with host memory: a plan" 0
expect_out "ZeRO-Offload, named as DeepSpeed's" "^framework: DeepSpeed ZeRO-[123], the optimizer.* in host memory \(ZeRO-Offload\)"
gp plan --model llama2-70b --tokens 100M --have 8xRTX4090 --gpu RTX4090 --max-gpus 8 \
	--finetune full --host memory=512G,cores=64,nvme=6 --framework deepspeed --offload nvme --zero 1
expect_rc "--offload nvme --zero 1 under DeepSpeed: exit 2" 2
expect_err_lines "one error line" 1
expect_err "it says why" "--offload nvme: DeepSpeed does not run it with ZeRO-1"
# the binding constraint named: host memory, not GPU memory
gp plan --model llama2-70b --tokens 100M --have 8xRTX4090 --gpu RTX4090 --max-gpus 8 \
	--finetune full --host memory=1024G,cores=64
expect_rc "a 1 TB host without NVMe: no plan" 3
expect_err "host memory binds, with figures" \
	"no configuration fits in host memory: .* needs [0-9.]+ GiB of host memory a node, the host has 953\.7 GiB"
expect_out "the nearest answer says what to state" "^  host memory that fits +[0-9.]+ GiB a node"
grep -q "fits in GPU memory" "$ERR" && fail "not GPU memory" "$(cat "$ERR")" || pass "not GPU memory"
gp plan --model llama2-70b --tokens 100M --have 8xRTX4090 --gpu RTX4090 --max-gpus 8 \
	--finetune full --host memory=1024G,cores=64 --json
expect_out "--json gives the host's figures" "\"least_host_memory_needed_bytes\":[[:space:]]*1158[0-9]{9}"
expect_out "and the host's memory" "\"host_memory_bytes\":[[:space:]]*1024000000000"
# --host given: offload was searched on the owned machine
gp plan --model llama3-70b --tokens 100M --finetune lora --have 8xRTX4090 --gpu RTX4090 \
	--host memory=1024G,cores=64
expect_out "offload searched where --host stated the host" \
	"^  offload +searched on the 1 offering whose host is stated \(--host"
expect_no_out "not 'not searched'" "offload +not searched"

# QLoRA: fits without offload, on fewer GPUs
gp plan --model llama2-70b --tokens 100M --have 8xRTX4090 --gpu RTX4090 --max-gpus 4 --finetune qlora
expect_rc "QLoRA 70B fits on 4 RTX 4090s" 0
expect_out "no offload needed" "^finetune +qlora rank 16 on all: .* in NF4"
expect_no_out "no offload line" "^offload "
expect_out "memory by kind" "^memory +per GPU [0-9.]+ GiB of 22.4 GiB: weights"
expect_out "on 4 GPUs" "1x4=4"
# adapters train under TRL: the search keeps to data parallelism with ZeRO,
# and the formats that start Megatron-LM (every weight trained) refuse it
expect_out "a layout TRL runs" "1x4=4 +1/1/4/1 "
expect_out "it names the framework" "^framework: TRL with PEFT"
gp plan --model llama2-70b --tokens 100M --have 8xRTX4090 --gpu RTX4090 --max-gpus 8 \
	--finetune qlora --host memory=1536G,cores=64 -q -o "$TMP/qlora.json"
expect_rc "QLoRA 70B on 8: a plan" 0
for fmt in megatron slurm torchrun skypilot; do
	gp export "$TMP/qlora.json" --format $fmt -o "$TMP/qlora.$fmt"
	expect_rc "export $fmt of a QLoRA plan: exit 2" 2
	expect_err_lines "export $fmt of a QLoRA plan: one error line" 1
	expect_err "export $fmt: says why and where to" "finetune: Megatron-(LM|DeepSpeed) trains every weight.*QLoRA"
	[ ! -e "$TMP/qlora.$fmt" ] && pass "export $fmt: nothing written" || fail "export $fmt: nothing written" "$TMP/qlora.$fmt exists"
done
gp export "$TMP/qlora.json" --format trl -o "$TMP/qlora.sh"
expect_rc "export trl of it: exit 0" 0
grep -q -- "--load_in_4bit --bnb_4bit_quant_type nf4" "$TMP/qlora.sh" && pass "trl loads the base in NF4" \
	|| fail "trl loads the base in NF4" "no 4-bit flags"

# ---- simulate: LoRA and QLoRA on one RTX 4090 (torchtune's Llama 3.1 8B)
gp simulate --model llama3-8b --gpu RTX4090 --gpus 1 --gbs 2 --seq 2048 --recompute full \
	--finetune lora --lora-rank 8 --lora-targets q,v
expect_rc "simulate LoRA exits 0" 0
# PEFT: "trainable params: 3,407,872" for this rank and these targets
expect_out "LoRA's adapters as PEFT counts them" "3\.41M trainable of 8\.03B"
expect_out "the base is frozen" "no weight gradients"
gp simulate --model llama3-8b --gpu RTX4090 --gpus 1 --gbs 2 --seq 2048 --recompute full \
	--finetune qlora --json
expect_rc "simulate QLoRA --json exits 0" 0
gp simulate --model llama3-8b --gpu RTX4090 --gpus 1 --gbs 2 --seq 2048 --recompute full \
	--finetune qlora
expect_out "QLoRA says where its time goes" "NF4 dequantisation [0-9.]+ ms"
expect_out "and fits" "fits, "
# offload in simulate needs the host
gp simulate --model llama3-8b --gpu RTX4090 --gpus 2 --zero 2 --gbs 8 --finetune full --offload cpu
expect_rc "simulate --offload cpu without a host: exit 2" 2
expect_err "and the reason" "offload: expected the host's memory and CPU cores"
gp simulate --model llama3-8b --gpu RTX4090 --gpus 2 --zero 2 --gbs 8 --finetune full \
	--offload cpu --host memory=256G,cores=32
expect_rc "with --host: exit 0" 0
expect_out "the CPU step in the breakdown" "optimizer \(CPU\) "
expect_out "the host transfers" "offload transfers "
expect_out "host memory" "^host memory per node .* fits"

# ---- consumer GPUs: "90%+ scaling on 8x RTX 4090 with a good mix" holds for
# LoRA, whose gradients are a few MB: 8 GPUs give at least 7.2x one
tps() { json_num tokens_per_s "$OUT"; }
gp simulate --model llama3-8b --gpu RTX4090 --gpus 1 --gbs 64 --seq 2048 --recompute full \
	--finetune lora --json
one=$(tps)
gp simulate --model llama3-8b --gpu RTX4090 --gpus 8 --gbs 64 --seq 2048 --recompute full \
	--finetune lora --json
eight=$(tps)
awk -v a="$one" -v b="$eight" 'BEGIN { exit !(b >= 7.2 * a) }' &&
	pass "LoRA on 8 RTX 4090s scales 90% or better ($one -> $eight tokens/s)" ||
	fail "LoRA on 8 RTX 4090s scales 90% or better" "$one -> $eight tokens/s"
# full fine-tuning with ZeRO-3 gathers 16 GB of weights three times a
# micro-batch through host memory: well below that
gp simulate --model llama3-8b --gpu RTX4090 --gpus 8 --gbs 64 --seq 2048 --recompute full \
	--finetune full --zero 3 --json
full=$(tps)
awk -v a="$one" -v b="$full" 'BEGIN { exit !(b < 0.5 * 8 * a) }' &&
	pass "full fine-tuning over PCIe scales far worse ($full tokens/s on 8)" ||
	fail "full fine-tuning over PCIe scales far worse" "$full tokens/s on 8"

# simulate's fine-tuning batch is plan's: 64 sequences unless --gbs says
gp simulate --model llama3-8b --gpu H100 --gpus 8 --finetune lora
expect_out "simulate --finetune: 64 sequences a step" "gbs 64 \(8 micro-batches\)"

# ---- epochs over a dataset
gp simulate --model llama3-8b --gpu H100 --gpus 8 --gbs 64 --finetune lora --epochs 3 --dataset-tokens 20M
expect_out "3 epochs of 20M tokens train 60M" "time to train 60M tokens"
gp plan --model llama3-8b --epochs 2 --dataset-tokens 50M --gpu H100 --finetune lora -o "$TMP/ep.json"
expect_rc "plan with --epochs exits 0" 0
expect_out "the job is 100M tokens" "100M tokens"
grep -Eq '"epochs":[[:space:]]*2,' "$TMP/ep.json" && pass "the plan file keeps the epochs" \
	|| fail "the plan file keeps the epochs" "no epochs"
grep -Eq '"loss":[[:space:]]*"eager_fp32"' "$TMP/ep.json" \
	&& pass "a LoRA plan is priced with TRL's loss" \
	|| fail "a LoRA plan is priced with TRL's loss" "no eager_fp32 loss in the plan"

# ---- compare: fine-tune 8B on 100M tokens, 4 owned RTX 4090s against rented H100
gp compare --model llama3-8b --tokens 100M --gpus 4 --finetune lora --gpu RTX4090 --vs H100
expect_rc "compare --vs exits 0" 0
expect_out "4 cards bought at their share of the price" "4 cards of rtx4090-8x-cards \(\\\$6,396"
expect_out "against renting H100" "^against renting H100-SXM5-80GB \("
expect_out "with its break-even" "buy 4 x RTX4090: .* breaks even after [0-9.]+ months"

# ---- exports
gp export "$TMP/nvme.json" --format deepspeed
expect_out "DeepSpeed offloads the optimizer" "\"offload_optimizer\""
expect_out "and at stage 3 the parameters" "\"offload_param\""
expect_out "the stage the plan priced, ZeRO-3" "\"stage\":[[:space:]]*3,"
expect_out "on NVMe, as planned" "\"device\":[[:space:]]*\"nvme\""
gp plan --model llama3-8b --have 4xRTX4090 --gpu RTX4090 --finetune qlora --tp 1 --pp 1 \
	--epochs 2 --dataset-tokens 50M --framework deepspeed --max-gpus 4 -o "$TMP/q.json"
gp export "$TMP/q.json" --format trl
expect_rc "export trl exits 0" 0
expect_out "trl sft with PEFT" "^trl sft --num_processes 4 "
expect_out "its adapters" "--use_peft --lora_r 16 --lora_alpha 32"
expect_out "QLoRA's NF4" "--load_in_4bit --bnb_4bit_quant_type nf4 --use_bnb_nested_quant"
expect_out "the epochs" "--num_train_epochs 2"
gp export "$TMP/full.json" --format trl
expect_rc "trl refuses tensor parallelism: exit 2" 2

# ---- execute runs full training or LoRA: a QLoRA plan is refused, not mismeasured
gp execute "$TMP/q.json" --backend cpu
expect_rc "execute refuses a QLoRA plan: exit 2" 2
expect_err "and says why" "\.finetune: expected full training or lora without offload"

# ---- bad values: one line, exit 2
for args in "--finetune dora" "--lora-rank 0" "--lora-rank x" "--lora-targets q,x" \
	"--offload disk" "--epochs -1" "--dataset-tokens lots" "--host memory" \
	"--host ram=1G" "--host cores=1.5"; do
	gp simulate --model llama3-8b --gpu H100 --gpus 8 --gbs 64 $args
	expect_rc "simulate $args: exit 2" 2
	expect_err_lines "simulate $args: one error line" 1
done
gp simulate --model llama3-8b --gpu H100 --gpus 8 --gbs 64 --lora-rank 8
expect_rc "--lora-rank without LoRA: exit 2" 2
gp simulate --model llama3-8b --gpu H100 --gpus 8 --gbs 64 --epochs 2
expect_rc "--epochs without --dataset-tokens: exit 2" 2
gp simulate --model llama3-8b --gpu H100 --gpus 8 --gbs 64 --offload auto
expect_rc "simulate --offload auto: exit 2" 2
gp plan --model llama3-8b --tokens 1B --host memory=1T
expect_rc "plan --host without --have: exit 2" 2
gp plan --model llama3-8b --tokens 1B --finetune qlora --offload nvme2
expect_rc "plan --offload nvme2: exit 2" 2
finish
