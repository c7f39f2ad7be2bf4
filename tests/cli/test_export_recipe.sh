#!/usr/bin/env bash
# test_export_recipe.sh - exports train what was priced: every MoE preset's
# router, q/k norm and activation derived from data/models.csv itself and
# found in the Megatron-LM script (and in Megatron-LM's parsed arguments
# where $MEGATRON_LM names a checkout); DeepSpeed's MoE launch with EP and
# the experts; precisions DeepSpeed cannot run refused; offload carried by
# every format or refused in one line; TRL's flags; SkyPilot's managed
# jobs; the placeholders and gated tokenizers each header names.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/export_lib.sh"
export GPUPLAN_SHARE_DIR="$PWD/data"

# ---- A. the router as each MoE preset's recipe trains it
moe=$(python3 -c 'import csv; print(" ".join(r["name"] for r in csv.DictReader(open("data/models.csv")) if r["experts"]))')
n=0
for m in $moe; do
	n=$((n + 1))
	gp simulate --model "$m" --gpu H100-SXM5-80GB --gpus 64 --pp 4 --ep 8 --tokens 1T \
		-o "$TMP/r-$m.json" -q
	expect_rc "simulate $m" 0
	launch "$m megatron" "$TMP/r-$m.json" megatron megatron "$TMP/r-$m.argv"
	# what the row says, as Megatron-LM's argument names and values; an
	# empty coefficient is the placeholder the script asks for (argv's
	# MOE_AUX_LOSS_COEFF=0.0123, MOE_ROUTER_BIAS_UPDATE_RATE=0.00123)
	python3 - "$m" "$TMP/r-$m.argv" "$TMP/r-$m.argv.sh" "$TMP/r-$m.want" <<'PY' >"$TMP/checks"
import csv, json, subprocess, sys
name, argv, script, out = sys.argv[1:]
r = next(r for r in csv.DictReader(open("data/models.csv")) if r["name"] == name)
num = lambda s, d=None: float(s) if s else d
balance = r["router_balance"] or "aux_loss"
bias = r["router_expert_bias"] == "1"
want = {
    "moe_router_score_function": r["router_score"] or "softmax",
    "moe_router_load_balancing_type": balance,
    "moe_aux_loss_coeff": 0.0 if balance == "none" else num(r["router_aux_coeff"], 0.0123),
    "moe_router_enable_expert_bias": bias,
    "moe_router_num_groups": int(r["router_groups"]) if r["router_groups"] else None,
    "moe_router_group_topk": int(r["router_group_topk"]) if r["router_group_topk"] else None,
    "moe_router_topk_scaling_factor": num(r["router_topk_scale"]),
    "qk_layernorm": r["qk_norm"] == "1",
    "swiglu": r["mlp"] == "swiglu" and r["glu_act"] != "quick_gelu",
    "quick_geglu": r["glu_act"] == "quick_gelu",
    "glu_linear_offset": num(r["glu_offset"], 0.0),
    "activation_func_clamp_value": num(r["glu_clamp"]),
}
if bias:
    want["moe_router_bias_update_rate"] = num(r["router_bias_rate"], 0.00123)
json.dump(want, open(out, "w"))
d = json.loads(subprocess.run([sys.executable, "tests/cli/megatron_args.py", "meaning", argv, r["vocab"]],
                              capture_output=True, text=True, check=True).stdout)
f = d["flags"]
def flag(k):
    flag = "--" + k.replace("_", "-")
    v = f.get(flag)
    d = want[k]
    if isinstance(d, bool):
        return flag in f
    if v is None:
        return {"moe_router_score_function": "softmax", "moe_router_load_balancing_type": "aux_loss",
                "moe_aux_loss_coeff": 0.0, "glu_linear_offset": 0.0}.get(k)
    return v if isinstance(d, str) else type(d)(v)
for k, v in want.items():
    got = flag(k)
    print("ok\t%s in the script (%s)" % (k, got) if got == v else
          "bad\t%s in the script\tgot %r, expected %r" % (k, got, v))
text = open(script).read()
for var, empty in (("MOE_AUX_LOSS_COEFF", not r["router_aux_coeff"] and balance != "none"),
                   ("MOE_ROUTER_BIAS_UPDATE_RATE", bias and not r["router_bias_rate"])):
    asks = ("${%s:?" % var) in text
    print("%s\tasks for %s only where models.csv has no value (%s)\t%s" % (
        "ok" if asks == empty else "bad", var, asks, "asks" if asks else "does not ask"))
PY
	checks "$m: " <"$TMP/checks"
	MA parse "$TMP/r-$m.argv" $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))))' "$TMP/r-$m.want") \
		>"$TMP/parsed" 2>"$TMP/why"
	case $? in
	0) python3 - "$TMP/r-$m.want" "$TMP/parsed" <<'PY' >"$TMP/checks"
import json, sys
want, got = json.load(open(sys.argv[1])), json.loads(open(sys.argv[2]).read().splitlines()[-1])
one = lambda v: v[0] if isinstance(v, list) and len(v) == 1 else v
for k, v in want.items():
    g = one(got.get(k))
    print("ok\tMegatron-LM parses %s = %r\t" % (k, g) if g == v else
          "bad\tMegatron-LM parses %s\tgot %r, expected %r" % (k, g, v))
PY
		checks "$m: " <"$TMP/checks" ;;
	77) echo "skip - $m: Megatron-LM's parsed router: $(head -1 "$TMP/parsed")" ;;
	*) fail "$m: Megatron-LM's parse_args and validate_args accept the router" "$(tail -1 "$TMP/why")" ;;
	esac
done
[ "$n" -ge 8 ] && pass "every MoE preset checked ($n)" || fail "every MoE preset checked" "only $n"

# a bad router cell: one line naming the file, the line, the column
mkdir -p "$TMP/share" && cp data/*.csv "$TMP/share/"
sed -i 's/^\(mixtral-8x7b,.*\),softmax,aux_loss,0.02,/\1,softmax,aux_loss,lots,/' "$TMP/share/models.csv"
GPUPLAN_SHARE_DIR="$TMP/share" gp models
expect_rc "models.csv: a bad router_aux_coeff exits 2" 2
expect_err_lines "models.csv: one line for the bad cell" 1
expect_err "models.csv: the line names router_aux_coeff" "models.csv:[0-9]*:[0-9]*: router_aux_coeff: expected a number from 0 to 10, found 'lots'"

# ---- B. DeepSpeed: MoE plans name their experts and EP; a precision its
# config has no recipe for is refused, never written as bf16
gp simulate --model mixtral-8x7b --gpu H100 --gpus 64 --ep 8 --tokens 10B -o "$TMP/dsm.json" -q
launch "mixtral-8x7b deepspeed" "$TMP/dsm.json" deepspeed deepspeed "$TMP/dsm.argv"
python3 - "$TMP/dsm.argv" <<'PY' >"$TMP/checks"
import json, subprocess, sys
f = json.loads(subprocess.run([sys.executable, "tests/cli/megatron_args.py", "meaning", sys.argv[1], "0"],
                              capture_output=True, text=True, check=True).stdout)["flags"]
env = dict(l.split("=", 1) for l in open(sys.argv[1] + ".env").read().split("\n") if "=" in l)
for what, got, want in (("--num-experts", f.get("--num-experts"), "8"), ("--topk", f.get("--topk"), "2"),
                        ("--moe-expert-parallel-size", f.get("--moe-expert-parallel-size"), "8"),
                        ("GPUPLAN_EP_SIZE", env.get("GPUPLAN_EP_SIZE"), "8"),
                        ("GPUPLAN_NUM_EXPERTS", env.get("GPUPLAN_NUM_EXPERTS"), "8"),
                        ("GPUPLAN_MOE_AUX_LOSS_COEFF", env.get("GPUPLAN_MOE_AUX_LOSS_COEFF"), "0.02")):
    print("ok\t%s is the plan's (%s)\t" % (what, got) if got == want else
          "bad\t%s\tgot %r, expected %r" % (what, got, want))
PY
checks "deepspeed MoE: " <"$TMP/checks"
for fmt in "slurm deepspeed" "mpirun deepspeed" "kubernetes deepspeed"; do
	set -- $fmt
	launch "mixtral-8x7b $1 $2" "$TMP/dsm.json" $1 $2 "$TMP/dsm-$1.argv"
	grep -qx -- "--moe-expert-parallel-size" "$TMP/dsm-$1.argv" && grep -qx "8" "$TMP/dsm-$1.argv" &&
		pass "deepspeed MoE $1: the launch names EP" || fail "deepspeed MoE $1: the launch names EP" "no --moe-expert-parallel-size"
done
for prec in fp8 mxfp8; do
	gp simulate --model llama3-8b --gpu B200 --gpus 8 --zero 1 --precision $prec -o "$TMP/ds-$prec.json" -q
	for f in "deepspeed" "slurm --framework deepspeed"; do
		gp export "$TMP/ds-$prec.json" --format $f
		expect_rc "$prec to $f: refused (exit 2)" 2
		expect_err_lines "$prec to $f: one error line" 1
		expect_err "$prec to $f: says DeepSpeed has no such recipe" "precision: DeepSpeed's config trains in bf16 or fp16 \(it has no FP8 or FP4 recipe\), found $prec"
	done
	gp simulate --model llama3-8b --gpu B200 --gpus 8 --zero 1 --precision $prec --finetune full -o "$TMP/ft-$prec.json" -q
	gp export "$TMP/ft-$prec.json" --format trl
	expect_rc "$prec fine-tuning to trl: refused (exit 2)" 2
	expect_err "$prec fine-tuning to trl: says DeepSpeed has no such recipe" "found $prec"
	gp export "$TMP/ds-$prec.json" --format megatron
	expect_rc "$prec to megatron: written" 0
	expect_out "$prec to megatron: its FP8 format" "--fp8-format"
done

# ---- offload: every format of every offload plan carries it or refuses
# in one line.  The seed's job (full fine-tuning on 8 RTX 4090 with the
# optimizer in host memory or on NVMe): CPU offload with ZeRO-2, NVMe
# with ZeRO-3 (ZeRO-Infinity) and with ZeRO-1 (which only Megatron-LM's
# CPU offload and DeepSpeed's ZeRO-3 cannot run)
host="--host memory=512G,cores=64,nvme=6"
gp simulate --model llama2-7b --gpu RTX4090 --gpus 8 --finetune full --offload cpu --zero 2 --tokens 100M $host -o "$TMP/off-cpu.json" -q
gp simulate --model llama2-7b --gpu RTX4090 --gpus 8 --finetune full --offload nvme --zero 3 --tokens 100M $host -o "$TMP/off-nvme3.json" -q
gp simulate --model llama2-7b --gpu RTX4090 --gpus 8 --finetune full --offload nvme --zero 1 --tokens 100M $host -o "$TMP/off-nvme1.json" -q
written=0 refused=0
for plan in off-cpu off-nvme3 off-nvme1; do
	dev=$(plan_val "$TMP/$plan.json" "p['finetune']['offload']")
	for f in megatron deepspeed torchrun trl slurm-execute mpirun-execute \
		"slurm megatron" "slurm deepspeed" "mpirun megatron" "mpirun deepspeed" \
		"kubernetes megatron" "kubernetes deepspeed" "trainjob megatron" "trainjob deepspeed" \
		"skypilot megatron" "skypilot deepspeed"; do
		set -- $f
		gp export "$TMP/$plan.json" --format $1 ${2:+--framework $2}
		if [ "$RC" = 0 ]; then
			written=$((written + 1))
			# what carries it: DeepSpeed's offload_optimizer (device cpu or
			# nvme), Megatron-LM's --optimizer-cpu-offload, torchrun's
			# GPUPLAN_OFFLOAD
			# (the config indented, or one line YAML-escaped: compared
			# without blanks and backslashes)
			python3 - "$OUT" "$dev" "$1" <<'PY' >"$TMP/why"
import re, sys
t, dev, fmt = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
flat = re.sub(r"[\s\\]", "", t)
has = lambda key: ('"%s":{"device":"%s"' % (key, dev)) in flat
ok = (has("offload_optimizer") or "--optimizer-cpu-offload" in t or "GPUPLAN_OFFLOAD=%s" % dev in t)
# NVMe offload is ZeRO-Infinity: the weights go there too
if ok and dev == "nvme" and fmt != "torchrun":
    ok = has("offload_param")
print("carried" if ok else "no offload of the optimizer (and at ZeRO-3 the weights) to %s" % dev)
sys.exit(0 if ok else 1)
PY
			[ $? = 0 ] && pass "$plan $f: written with the offload" ||
				fail "$plan $f: written with the offload" "$(cat "$TMP/why")"
		else
			refused=$((refused + 1))
			expect_rc "$plan $f: refused (exit 2)" 2
			expect_err_lines "$plan $f: in one line" 1
			expect_err "$plan $f: the line names the offload" "finetune\.offload"
		fi
	done
done
[ "$written" -ge 10 ] && [ "$refused" -ge 10 ] && pass "offload: $written exports carry it, $refused refuse" ||
	fail "offload: both kinds seen" "$written written, $refused refused"
# Megatron-LM's parser takes its CPU offload
launch "offload cpu megatron" "$TMP/off-cpu.json" megatron megatron "$TMP/off-cpu.argv"
MA parse "$TMP/off-cpu.argv" optimizer_cpu_offload use_precision_aware_optimizer >"$TMP/parsed" 2>"$TMP/why"
case $? in
0) grep -q '"optimizer_cpu_offload": true' "$TMP/parsed" && pass "Megatron-LM parses --optimizer-cpu-offload" ||
	fail "Megatron-LM parses --optimizer-cpu-offload" "$(tail -1 "$TMP/parsed")" ;;
77) echo "skip - Megatron-LM parses --optimizer-cpu-offload: $(head -1 "$TMP/parsed")" ;;
*) fail "Megatron-LM accepts the CPU offload" "$(tail -1 "$TMP/why")" ;;
esac

# ---- C. TRL: what starts (TRL's own parser where trl imports), and no
# pre-training plan fine-tunes a released checkpoint
gp simulate --model llama3-8b --gpu H100 --gpus 8 --finetune qlora --zero 3 --tokens 100M -o "$TMP/qlora.json" -q
trl_meaning "trl qlora zero 3" "$TMP/qlora.json"
gp simulate --model llama3-8b --gpu H100 --gpus 16 --finetune lora --zero 2 --recompute full --tokens 1B -o "$TMP/lora.json" -q
trl_meaning "trl lora 2 nodes" "$TMP/lora.json"
trl_meaning "trl full, cpu offload" "$TMP/off-cpu.json"
gp export "$TMP/qlora.json" --format trl
expect_out "trl qlora: the compute dtype is bf16" "--dtype bfloat16"
expect_out "trl qlora: --bf16 with its value" "--bf16 true"
expect_no_out "trl qlora: no bare --bf16" "--bf16( |$)[^t]"
expect_out "trl: checkpoints at the plan's interval" "--save_strategy steps --save_steps [0-9]+"
gp simulate --model llama3-8b --gpu H100 --gpus 8 --tokens 1B -o "$TMP/pretrain.json" -q
gp export "$TMP/pretrain.json" --format trl
expect_rc "trl: a pre-training plan is refused" 2
expect_err_lines "trl: in one line" 1
expect_err "trl: says trl fine-tunes a released checkpoint" "trl fine-tunes a released checkpoint, and the plan pre-trains"
# the parser the check uses refuses what trl 1.16 refuses: --bf16 alone
if [ -s "$TMP/qlora.trl.argv" ]; then :; fi
gp export "$TMP/qlora.json" --format trl -o "$TMP/q.sh"
argv "trl qlora run" "$TMP/q.sh" "$TMP/q.argv" DATASET=d HF_TOKEN=t
awk '$0 == "--bf16" { print; getline; next } { print }' "$TMP/q.argv" >"$TMP/q-bare.argv"
python3 tests/cli/trl_args.py parse "$TMP/q-bare.argv" bf16 >"$TMP/parsed" 2>"$TMP/why"
case $? in
1) grep -q "argument --bf16: expected one argument" "$TMP/why" && pass "TRL's parser refuses a bare --bf16" ||
	fail "TRL's parser refuses a bare --bf16" "$(cat "$TMP/why")" ;;
77) echo "skip - TRL's parser refuses a bare --bf16: $(head -1 "$TMP/parsed")" ;;
*) fail "TRL's parser refuses a bare --bf16" "accepted" ;;
esac

# ---- D. SkyPilot spot plans are managed jobs; every placeholder is in
# the header; a gated tokenizer asks for HF_TOKEN, never written
gp plan --model llama3-8b --tokens 10B --budget 5K --spot -o "$TMP/spot.json" -q
gp export "$TMP/spot.json" --format skypilot -o "$TMP/spot.yaml"
expect_rc "skypilot spot: written" 0
grep -q "^# SkyPilot managed job written by gpuplan: sky jobs launch" "$TMP/spot.yaml" &&
	pass "skypilot spot: sky jobs launch" || fail "skypilot spot: sky jobs launch" "$(head -3 "$TMP/spot.yaml")"
same "skypilot spot: job_recovery" "$(st get "$TMP/spot.yaml" resources job_recovery strategy)" '"FAILOVER"'
same "skypilot spot: HF_TOKEN from --env" "$(st get "$TMP/spot.yaml" envs HF_TOKEN)" "null"
python3 tests/cli/skypilot_task.py schema tests/fixtures/skypilot/task.schema.json "$TMP/spot.yaml" >"$TMP/why" 2>&1
case $? in 0) pass "skypilot spot: valid for the schema" ;; 77) echo "skip - skypilot spot schema: $(cat "$TMP/why")" ;;
*) fail "skypilot spot: valid for the schema" "$(cat "$TMP/why")" ;; esac
gp plan --model llama3-8b --tokens 10B --budget 5K --no-spot -o "$TMP/od.json" -q
gp export "$TMP/od.json" --format skypilot
expect_out "skypilot on-demand: sky launch" "^# SkyPilot task written by gpuplan: sky launch"
expect_no_out "skypilot on-demand: no job_recovery" "job_recovery"
# every placeholder the text asks for is named in its header
gp simulate --model mixtral-8x22b --gpu H100 --gpus 64 --ep 8 -o "$TMP/notok.json" -q
for f in megatron torchrun "slurm megatron" "slurm deepspeed" "mpirun megatron" "kubernetes megatron" \
	"kubernetes deepspeed" "trainjob megatron" "skypilot megatron" "skypilot deepspeed"; do
	set -- $f
	gp export "$TMP/notok.json" --format $1 ${2:+--framework $2}
	python3 - "$OUT" <<'PY' >"$TMP/why"
import re, sys
t = open(sys.argv[1]).read()
head = next((l for l in t.split("\n")[:3] if l.startswith("# to set before running: ")), "")
named = set(head[len("# to set before running: "):].split(", ")) if head else set()
asked = set(re.findall(r"\$\{([A-Z0-9_]+):\?", t)) | set(re.findall(r"(?<![A-Za-z0-9])SET-([A-Z0-9_]+)", t))
asked = {a for a in asked if not a.startswith(("SLURM_", "SKYPILOT_"))}
missing = asked - named
print("missing %s" % sorted(missing) if missing else "%d named" % len(named))
sys.exit(1 if missing or not asked else 0)
PY
	[ $? = 0 ] && pass "$f: the header names every placeholder ($(cat "$TMP/why"))" ||
		fail "$f: the header names every placeholder" "$(cat "$TMP/why")"
done
gp export "$TMP/notok.json" --format kubernetes
expect_out "kubernetes: SET-TRAIN_SAMPLES in the header" "^# to set before running: .*TRAIN_SAMPLES"
expect_out "kubernetes: the router coefficient no source gives" "SET-MOE_AUX_LOSS_COEFF"
# gated tokenizers: HF_TOKEN from the environment or a Secret, never a value
gp simulate --model llama3-8b --gpu H100 --gpus 16 --zero 1 --tokens 1B -o "$TMP/gated.json" -q
for f in megatron torchrun "slurm megatron" "mpirun megatron" "mpirun deepspeed" "skypilot megatron" \
	"kubernetes megatron" "trainjob deepspeed"; do
	set -- $f
	gp export "$TMP/gated.json" --format $1 ${2:+--framework $2}
	grep -Eq 'HF_TOKEN:\?|secretKeyRef|HF_TOKEN: null' "$OUT" && pass "$f: a gated tokenizer asks for HF_TOKEN" ||
		fail "$f: a gated tokenizer asks for HF_TOKEN" "no HF_TOKEN"
	grep -Eq 'HF_TOKEN=[^$ ]|HF_TOKEN: "' "$OUT" && fail "$f: HF_TOKEN never written" "$(grep -m1 HF_TOKEN "$OUT")" ||
		pass "$f: HF_TOKEN never written"
done
gp export "$TMP/gated.json" --format mpirun
expect_out "mpirun: HF_TOKEN passed to every rank" " -x HF_TOKEN"
gp export "$TMP/gated.json" --format kubernetes
expect_out "kubernetes: HF_TOKEN from the Secret" "name: gpuplan-hf-token"
gp simulate --model qwen3-30b-a3b --gpu H100 --gpus 16 --ep 8 --tokens 1B -o "$TMP/open.json" -q
gp export "$TMP/open.json" --format megatron
expect_no_out "an open tokenizer asks for no HF_TOKEN" "HF_TOKEN"

finish
