#!/usr/bin/env bash
# snapshot.sh BUILD OUT - the outputs of a fixed set of commands, for
# showing that a move of code changes nothing a user sees: make run's
# plan, a frontier, five plans and every export format of each, simulate
# --json of preset plans, and the accuracy bench's row-by-row predictions.
#
#   tests/golden/snapshot.sh build /tmp/before   # on the old tree
#   tests/golden/snapshot.sh build /tmp/after    # on the new one
#   diff -r /tmp/before /tmp/after               # must print nothing
#
# Timings in the outputs ("search: ... s") are masked; nothing else is.
set -u
BUILD=${1:?usage: snapshot.sh BUILD OUT}
OUT=${2:?usage: snapshot.sh BUILD OUT}
cd "$(dirname "$0")/../.." || exit 1
G=$PWD/$BUILD/gpuplan
mkdir -p "$OUT"
export XDG_DATA_HOME=$(mktemp -d)
trap 'rm -rf "$XDG_DATA_HOME"' EXIT
# mask wall-clock figures only
mask() { sed -E 's/^speed: .*/speed: masked/; s/[0-9.]+ ?(s|ms)\b/T/g; s/[0-9.]+(e[+-]?[0-9]+)?[kM]?\/s/R/g; s/[0-9]+ (configurations|simulated|fit|frontier)/N \1/g'; }
run() { # run NAME CMD... : stdout, stderr and exit status of one command
	local name=$1; shift
	( cd "$OUT" && "$@" >"$name.out" 2>"$name.err"; echo $? >"$name.rc" )
	mask <"$OUT/$name.out" >"$OUT/$name.out.m" && mv "$OUT/$name.out.m" "$OUT/$name.out"
	mask <"$OUT/$name.err" >"$OUT/$name.err.m" && mv "$OUT/$name.err.m" "$OUT/$name.err"
}
run plan-run "$G" plan --model llama3-70b --tokens 1T --budget 2.5M -o plan-run.json
run plan-moe "$G" plan --model deepseek-v3 --tokens 15T --budget 20M -o plan-moe.json
run plan-deadline "$G" plan --model llama3-8b --tokens 100B --deadline 14d -o plan-deadline.json
run plan-spot "$G" plan --model llama3-8b --tokens 20B --budget 50k --spot -o plan-spot.json
run plan-lora "$G" plan --model llama3-8b --tokens 100M --finetune lora --have 4xRTX4090 --gpu RTX4090 --max-gpus 4 -o plan-lora.json
run plan-qwen "$G" plan --model qwen3-235b-a22b --tokens 1T --budget 5M --framework deepspeed -o plan-qwen.json
run frontier "$G" frontier --model llama3-8b --tokens 100B
for p in run moe deadline spot lora qwen; do
	[ -f "$OUT/plan-$p.json" ] || continue
	run sim-$p "$G" simulate "plan-$p.json" --json
	for f in megatron deepspeed torchrun slurm mpirun kubernetes trainjob skypilot \
		 slurm-execute mpirun-execute trl; do
		run export-$p-$f "$G" export "plan-$p.json" --format $f
		case $f in slurm|mpirun|kubernetes|trainjob|skypilot)
			run export-$p-$f-ds "$G" export "plan-$p.json" --format $f --framework deepspeed ;;
		esac
	done
	run export-$p-ds-o "$G" export "plan-$p.json" --format deepspeed -o ds-$p.json
done
if [ -x "$BUILD/bench/accuracy" ]; then
	run accuracy "$PWD/$BUILD/bench/accuracy" -vv "$PWD/data" "$PWD/bench/data"
fi
