#!/usr/bin/env bash
# check_exports.sh - `make check-exports`: every export of 20 plans (7B to
# 405B; TP, PP, interleaved and uneven pipelines, SP, CP 2 and 4, ZeRO 0-3,
# recompute, bf16, fp8, V100's fp16, 12 GPUs on 8-GPU nodes, the presets'
# architectures) through the tools that read them, where this machine has
# them, and what each launch means checked against the plan:
#
#   bash -n and shellcheck -S warning   every shell script
#   Megatron-LM's parse_args and validate_args   each launch of Megatron-LM
#       ($MEGATRON_LM: a checkout; tests/cli/megatron_args.py)
#   torch.distributed.run's parser   each torchrun line (python3 imports torch)
#   DeepSpeed's DeepSpeedConfig   each ds_config.json (python3 imports deepspeed)
#   TRL's parser for `trl sft`   each trl export (python3 imports trl;
#       tests/cli/trl_args.py)
#   the PyTorchJob and TrainJob CRDs' schemas and rules   (python3 jsonschema)
#   SkyPilot's own task validator   ($SKY_PYTHON imports sky)
#   a real mpirun   the one-node mpirun scripts: every rank's RANK,
#       LOCAL_RANK and WORLD_SIZE as Megatron-LM and DeepSpeed read them
#   meaning   world size, training samples, checkpoint interval, layout,
#       batch, Megatron-LM's model flags and the parameters they build
#
# A check whose tool is missing prints "skip - NAME: why".  Nothing is
# downloaded.  Ends with "N passed, N failed"; exit 1 when one failed.
cd "$(dirname "$0")/.." || exit 1
. tests/cli/lib.sh
. tests/cli/export_lib.sh
export GPUPLAN_SHARE_DIR="$PWD/data"
SKY_PYTHON=${SKY_PYTHON:-python3}
have_shellcheck=$(command -v shellcheck)
[ -n "$have_shellcheck" ] || echo "skip - shellcheck: not installed"

# shell_ok NAME SCRIPT: bash -n, then shellcheck
shell_ok() {
	bash -n "$2" 2>"$TMP/why" && pass "$1: bash -n" || fail "$1: bash -n" "$(head -1 "$TMP/why")"
	[ -n "$have_shellcheck" ] || return 0
	shellcheck -S warning -s bash "$2" >"$TMP/why" 2>&1 && pass "$1: shellcheck" \
		|| fail "$1: shellcheck" "$(grep -m1 SC "$TMP/why")"
}
# torchrun_parse NAME ARGV WORLD and ds_config_check NAME PLAN ARGV queue
# a check of torch's own torchrun parser (ARGV's torchrun words as WORLD
# ranks) and of DeepSpeed's DeepSpeedConfig (the config ARGV names, with
# the plan's tp, pp and dp) for run_queued, which makes them all in one
# python3 (skipped, with why, where it has no torch or deepspeed)
torchrun_parse() { printf '%s\ttorchrun\t%s\t%s\n' "$1" "$2" "$3" >>"$TMP/queued"; }
ds_config_check() {
	printf '%s\tdsconfig\t%s\t%s\n' "$1" "$3.config" \
		"$(plan_val "$2" "'\t'.join(str(p['parallel'][k]) for k in ('tp', 'pp', 'dp'))")" >>"$TMP/queued"
}
run_queued() {
	[ -s "$TMP/queued" ] || return 0
	python3 tests/cli/launchers.py batch "$TMP/queued" >"$TMP/checks" 2>&1
	checks "" <"$TMP/checks"
	rm -f "$TMP/queued"
}
# real_mpirun NAME SCRIPT WORLD: runs a one-node mpirun script with Open
# MPI's real mpirun and a training script that records what each rank was
# told.  The plan's GPUs run as processes on this machine's cores: a shim
# first on PATH passes everything to mpirun but the binding, which cannot
# hold more processes than cores (--bind-to none for --bind-to numa).
real_mpirun() {
	local d="$TMP/mpi" real
	real=$(command -v mpirun) || { echo "skip - $1: real mpirun: not installed"; return; }
	rm -rf "$d" && mkdir -p "$d/bin"
	printf '#!/usr/bin/env bash
args=()
for a in "$@"; do [ "${args[-1]:-}" = --bind-to ] && a=none; args+=("$a"); done
exec %s --oversubscribe "${args[@]}"
' "$real" >"$d/bin/mpirun"
	chmod +x "$d/bin/mpirun"
	printf 'import os\nopen("rank.%%s" %% os.environ["RANK"], "w").write("%%s %%s %%s" %% (os.environ["LOCAL_RANK"], os.environ["WORLD_SIZE"], os.environ["MASTER_ADDR"]))\n' >"$d/train.py"
	# the plan's GPUs as processes on this machine's cores
	(cd "$d" && PATH="$d/bin:$PATH" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		TRAIN_SCRIPT=train.py DATA_PATH=/d CKPT_DIR=/c TOKENIZER=t TRAIN_SAMPLES=1 HF_TOKEN=t \
		GPUPLAN_TRAIN_SAMPLES=1 timeout 120 bash "$2" >"$d/out" 2>&1)
	python3 - "$d" "$3" <<'PY' >"$TMP/why" 2>&1
import glob, os, sys
d, world = sys.argv[1], int(sys.argv[2])
got = sorted(int(f.rsplit(".", 1)[1]) for f in glob.glob(os.path.join(d, "rank.*")))
assert got == list(range(world)), "ranks %s of %d" % (got, world)
for r in got:
    local, size, addr = open(os.path.join(d, "rank.%d" % r)).read().split()
    assert (int(local), int(size), addr) == (r, world, "localhost"), (r, local, size, addr)
print("%d ranks" % world)
PY
	[ $? = 0 ] && pass "$1: a real mpirun starts each rank as told ($(cat "$TMP/why"))" \
		|| fail "$1: a real mpirun starts each rank as told" "$(tail -1 "$TMP/why"; tail -2 "$d/out")"
}

# the plans: simulate's flags, or plan's answer for a preset (read from
# fd 3: mpirun hands its standard input to rank 0)
i=0
while read -r name args <&3; do
	[ -z "$name" ] || [ "${name#\#}" != "$name" ] && continue
	i=$((i + 1))
	plan="$TMP/p$i.json"
	case $args in
	plan\ *) gp ${args} -o "$plan" -q ;;
	*) gp simulate $args --tokens 100B -o "$plan" -q ;;
	esac
	[ "$RC" = 0 ] || { fail "$name: the plan" "$(head -1 "$ERR")"; continue; }
	gpus=$(plan_val "$plan" "p['cluster']['gpus']")
	cp=$(plan_val "$plan" "p['parallel']['cp']")
	pos=$(plan_val "$plan" "p['model']['position_embedding']")
	serial=$(plan_val "$plan" "not (p['model'].get('parallel_residual') or p['model'].get('embedding_norm'))")
	nodes=$(plan_val "$plan" "1 if p['cluster']['gpus'] <= p['cluster']['gpus_per_node'] else 2")
	prec=$(plan_val "$plan" "p['parallel']['precision']")
	# Megatron-LM builds the model: every format that starts it
	if [ "$pos" != alibi ] && [ "$serial" = True ]; then
		for fmt in megatron slurm mpirun kubernetes trainjob skypilot; do
			out="$TMP/p$i.m.$fmt"
			launch "$name megatron $fmt" "$plan" $fmt megatron "$out"
			meaning "$name megatron $fmt" "$plan" "$out"
			case $fmt in mpirun) ;; *) torchrun_parse "$name megatron $fmt" "$out" "$gpus" ;; esac
			case $fmt in megatron|slurm|mpirun) shell_ok "$name megatron $fmt" "$out.sh" ;; esac
		done
		[ "$nodes" = 1 ] && real_mpirun "$name megatron mpirun" "$TMP/p$i.m.mpirun.sh" "$gpus"
	fi
	# DeepSpeed, which has no context parallelism and no FP8 or FP4 recipe
	if [ "$prec" != bf16 ]; then
		gp export "$plan" --format deepspeed
		[ "$RC" = 2 ] && pass "$name deepspeed: $prec refused" || fail "$name deepspeed: $prec refused" "exit $RC"
	elif [ "$cp" = 1 ]; then
		for fmt in deepspeed slurm mpirun kubernetes trainjob skypilot; do
			out="$TMP/p$i.d.$fmt"
			launch "$name deepspeed $fmt" "$plan" $fmt deepspeed "$out"
			ds_meaning "$name deepspeed $fmt" "$plan" "$out"
			ds_config_check "$name deepspeed $fmt" "$plan" "$out"
			case $fmt in deepspeed|mpirun) ;; *) torchrun_parse "$name deepspeed $fmt" "$out" "$gpus" ;; esac
			case $fmt in deepspeed|slurm|mpirun) shell_ok "$name deepspeed $fmt" "$out.sh" ;; esac
		done
		[ "$nodes" = 1 ] && real_mpirun "$name deepspeed mpirun" "$TMP/p$i.d.mpirun.sh" "$gpus"
	else
		gp export "$plan" --format deepspeed
		[ "$RC" = 2 ] && pass "$name deepspeed: CP $cp refused" || fail "$name deepspeed: CP $cp refused" "exit $RC"
	fi
	# torchrun for the user's own script
	gp export "$plan" --format torchrun -o "$TMP/p$i.t.sh"
	argv "$name torchrun" "$TMP/p$i.t.sh" "$TMP/p$i.t" TRAIN_SCRIPT=train.py
	torchrun_parse "$name torchrun" "$TMP/p$i.t" "$gpus"
	shell_ok "$name torchrun" "$TMP/p$i.t.sh"
	run_queued
	# SkyPilot's validator, where it is installed
	for fw in megatron deepspeed; do
		[ -e "$TMP/p$i.${fw:0:1}.skypilot.yaml" ] || continue
		$SKY_PYTHON tests/cli/skypilot_task.py sky "$TMP/p$i.${fw:0:1}.skypilot.yaml" >"$TMP/why" 2>&1; case $? in
		0) pass "$name $fw skypilot: SkyPilot's validator accepts it" ;;
		77) echo "skip - $name $fw skypilot: SkyPilot's validator: $(head -1 "$TMP/why")" ;;
		*) fail "$name $fw skypilot: SkyPilot's validator accepts it" "$(tail -1 "$TMP/why")" ;;
		esac
	done
done 3<<'PLANS'
# NAME            gpuplan simulate flags (--tokens 100B), or plan ...
llama3-8b-dp8     --model llama3-8b --gpu H100 --gpus 8 --zero 1 --recompute full --gbs 64
llama3-8b-z0-tp2  --model llama3-8b --gpu H100 --gpus 16 --tp 2 --zero 0 --recompute selective --seq-parallel
llama3-8b-z2-tp2  --model llama3-8b --gpu H100 --gpus 16 --tp 2 --zero 2 --recompute selective --seq-parallel
llama3-8b-z3-tp2  --model llama3-8b --gpu H100 --gpus 16 --tp 2 --zero 3 --recompute selective --seq-parallel
llama3-8b-pp4-z2  --model llama3-8b --gpu RTX4090 --gpus 16 --pp 4 --zero 2 --recompute full
llama3-8b-cp4     --model llama3-8b --gpu H100 --gpus 32 --tp 2 --cp 4 --zero 1 --recompute selective --seq-parallel
llama3-8b-12gpu   --model llama3-8b --gpu H100 --gpus 12 --tp 2 --zero 1 --recompute full --gbs 12
llama3-8b-fp8     --model llama3-8b --gpu H100 --gpus 8 --tp 2 --zero 1 --precision fp8 --gbs 64
llama2-7b-v100    --model llama2-7b --gpu V100-SXM2-32GB --gpus 16 --tp 2 --zero 1 --recompute full
llama2-13b-pp2    --model llama2-13b --gpu A100-SXM4-80GB --gpus 16 --tp 4 --pp 2 --zero 1 --recompute selective --seq-parallel
llama3-70b-uneven --model llama3-70b --gpu H100 --gpus 128 --tp 8 --pp 8 --interleave 4 --zero 1 --recompute selective --seq-parallel --gbs 256
llama3-70b-cp2    --model llama3-70b --gpu H100 --gpus 128 --tp 8 --pp 4 --cp 2 --interleave 5 --zero 1 --recompute selective --seq-parallel --gbs 256
llama3-70b-readme plan --model llama3-70b --tokens 1T --budget 2.5M
llama3-405b       --model llama3-405b --gpu H100 --gpus 1024 --tp 8 --pp 16 --interleave 3 --zero 1 --recompute full --seq-parallel --gbs 512
gpt3-175b         --model gpt3-175b --gpu A100-SXM4-80GB --gpus 1024 --tp 8 --pp 16 --zero 1 --recompute full --seq-parallel --gbs 1536
megatron-1.7b     plan --model megatron-1.7b --tokens 20B --budget 20K
mistral-7b        plan --model mistral-7b --tokens 100B --budget 100K
gpt-neox-20b      plan --model gpt-neox-20b --tokens 50B --budget 200K --framework deepspeed
mpt-7b            plan --model mpt-7b --tokens 50B --budget 100K --framework deepspeed
bloom-176b        plan --model bloom-176b --tokens 20B --budget 2M --framework deepspeed
PLANS
# TRL's own parser on every trl export: LoRA, QLoRA (ZeRO-3, 4-bit
# storage), full fine-tuning with CPU and NVMe offload, two nodes, V100's
# fp16 (trl_meaning; skipped with why where trl does not import)
while read -r name args <&3; do
	[ -z "$name" ] || [ "${name#\#}" != "$name" ] && continue
	gp simulate $args --tokens 100M -o "$TMP/trl-$name.json" -q
	[ "$RC" = 0 ] || { fail "$name: the plan" "$(head -1 "$ERR")"; continue; }
	trl_meaning "$name trl" "$TMP/trl-$name.json"
	shell_ok "$name trl" "$TRL_SCRIPT"
done 3<<'PLANS'
# NAME             gpuplan simulate flags (--tokens 100M)
lora-8b            --model llama3-8b --gpu H100 --gpus 8 --finetune lora --zero 2
lora-8b-2nodes     --model llama3-8b --gpu H100 --gpus 16 --finetune lora --zero 2 --recompute full
qlora-70b-z3       --model llama3-70b --gpu H100 --gpus 8 --finetune qlora --zero 3 --recompute full
full-7b-cpu        --model llama2-7b --gpu RTX4090 --gpus 8 --finetune full --offload cpu --zero 2 --host memory=512G,cores=64,nvme=6
full-7b-nvme       --model llama2-7b --gpu RTX4090 --gpus 8 --finetune full --offload nvme --zero 3 --host memory=512G,cores=64,nvme=6
lora-7b-v100       --model llama2-7b --gpu V100-SXM2-32GB --gpus 8 --finetune lora --zero 2
PLANS
finish
