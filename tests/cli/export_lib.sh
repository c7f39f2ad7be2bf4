# export_lib.sh - what an export launches, and whether that means the
# plan: sourced by test_export.sh and check_exports.sh after lib.sh (pass,
# fail, gp); run from the repository's root.
#
#   launch NAME PLAN FORMAT FRAMEWORK OUT   export PLAN; OUT gets what it
#       launches, one word a line, OUT.env the launcher's environment,
#       OUT.config the ds_config.json it names (DeepSpeed)
#   meaning NAME PLAN ARGV      Megatron-LM's arguments mean the plan
#   ds_meaning NAME PLAN ARGV   the DeepSpeed launch means the plan
#   trl_meaning NAME PLAN       the trl export, through TRL's own parser
#       (tests/cli/trl_args.py; skipped where trl does not import), means
#       the plan

# same NAME GOT WANT
same() { [ "$2" = "$3" ] && pass "$1 ($2)" || fail "$1" "got '$2', expected '$3'"; }
# plan_val FILE PYEXPR: PYEXPR of the plan JSON p
plan_val() { python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print($2)" "$1"; }
st() { python3 tests/cli/skypilot_task.py "$@"; }
MA() { python3 tests/cli/megatron_args.py "$@"; }
KJ() { python3 tests/cli/k8s_job.py "$@"; }
STUB="$TMP/stub"
mkdir -p "$STUB/bin"
for n in torchrun srun mpirun scontrol deepspeed trl; do
	printf '#!/bin/sh\n[ "$(basename "$0")" = scontrol ] && { [ "$1" = show ] && echo node1; exit 0; }\nfor a in "$@"; do printf "%%s\\n" "$a"; done >"$ARGV_OUT"\nenv >"$ARGV_OUT.env"\n' >"$STUB/bin/$n"
	chmod +x "$STUB/bin/$n"
done
# argv NAME SCRIPT OUT [VAR=VALUE...]: runs SCRIPT in $STUB with the stubs
# and the variables the user sets; OUT gets the launcher's arguments, one
# a line, OUT.env its environment
argv() {
	local name=$1 script=$2 out=$3
	shift 3
	rm -f "$STUB/ds_config.json" "$STUB/.deepspeed_env"
	(cd "$STUB" && env PATH="$STUB/bin:$PATH" ARGV_OUT="$out" MASTER_ADDR=10.0.0.1 DATA_PATH=/d/x \
		CKPT_DIR=/ck HOSTFILE=/h SLURM_JOB_ID=7 SLURM_JOB_NODELIST=n[1-2] \
		MOE_AUX_LOSS_COEFF=0.0123 MOE_ROUTER_BIAS_UPDATE_RATE=0.00123 HF_TOKEN=hf-test "$@" \
		bash "$script" >"$STUB/run.out" 2>&1) \
		&& [ -s "$out" ] && pass "$name: runs to its launcher" \
		|| fail "$name: runs to its launcher" "$(tail -2 "$STUB/run.out")"
}
# k8s_valid NAME SCHEMA JOB: the manifest passes the CRD's schema and rules
k8s_valid() {
	KJ check "$2" "$3" >"$TMP/why" 2>&1; case $? in
	0) pass "$1: valid for the CRD" ;;
	77) echo "skip - $1: valid for the CRD: $(cat "$TMP/why")" ;;
	*) fail "$1: valid for the CRD" "$(cat "$TMP/why")" ;;
	esac
}
# launch NAME PLAN FORMAT FRAMEWORK OUT: exports PLAN and records what it
# launches in OUT (arguments), OUT.env (environment) and, under DeepSpeed,
# OUT.config (the ds_config.json the arguments name)
launch() {
	local name=$1 plan=$2 fmt=$3 fw=$4 out=$5 fwopt="" ds=""
	case $fmt in slurm|mpirun|kubernetes|trainjob|skypilot) fwopt="--framework $fw" ;; esac
	[ "$fw" = deepspeed ] && ds="TRAIN_SCRIPT=train.py"
	case $fmt in
	kubernetes|trainjob)
		gp export "$plan" --format $fmt $fwopt -o "$out.yaml"
		k8s_valid "$name" "tests/fixtures/kubeflow/$([ $fmt = trainjob ] && echo trainjob || echo pytorchjob).schema.json" "$out.yaml"
		KJ argv "$out.yaml" >"$out" 2>"$TMP/why" && pass "$name: the kubelet's command, the operator's nodes" \
			|| fail "$name: the kubelet's command, the operator's nodes" "$(cat "$TMP/why")"
		python3 -c 'import sys, yaml
j = yaml.safe_load(open(sys.argv[1]))
t = j["spec"]["trainer"] if j["kind"] == "TrainJob" else j["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
for e in t["env"]:
    print("%s=%s" % (e["name"], e.get("value", "")))' "$out.yaml" >"$out.env"
		[ "$fw" = deepspeed ] && KJ env "$out.yaml" GPUPLAN_DS_CONFIG >"$out.config"
		;;
	skypilot)
		gp export "$plan" --format skypilot $fwopt -o "$out.yaml"
		st run "$out.yaml" >"$out.sh"
		argv "$name" "$out.sh" "$out" $ds SKYPILOT_NODE_IPS=10.0.0.1 \
			SKYPILOT_NUM_NODES="$(st get "$out.yaml" num_nodes)" \
			SKYPILOT_NUM_GPUS_PER_NODE="$(plan_val "$plan" "p['cluster']['gpus'] // p['cluster']['nodes']")" \
			SKYPILOT_NODE_RANK=0 EXTRA_ARGS=
		;;
	deepspeed)
		gp export "$plan" --format deepspeed -o "$STUB/$(basename "$out").json"
		cp "$OUT" "$out.sh"
		argv "$name" "$out.sh" "$out" $ds
		cp "$STUB/$(basename "$out").json" "$out.config"
		;;
	*)
		gp export "$plan" --format $fmt $fwopt -o "$out.sh"
		argv "$name" "$out.sh" "$out" $ds
		;;
	esac
	[ "$fw" = deepspeed ] && [ -s "$STUB/ds_config.json" ] && cp "$STUB/ds_config.json" "$out.config"
	return 0
}
# jq_ FILE EXPR: a value of megatron_args.py's JSON
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# checks NAME: reads "ok<TAB>WHAT", "bad<TAB>WHAT<TAB>WHY" and
# "skip<TAB>WHAT<TAB>WHY" lines into pass, fail and a skip line (from a
# file: a pipe would count in a subshell); NAME prefixes WHAT
checks() {
	local r what why
	while IFS=$'\t' read -r r what why; do
		case $r in
		ok) pass "$1$what" ;;
		skip) echo "skip - $1$what: $why" ;;
		*) fail "$1$what" "$why" ;;
		esac
	done
}
# meaning NAME PLAN ARGV: Megatron-LM's arguments mean the plan: world
# size, train samples, save interval (the plan's checkpoint interval, an
# hour where it states none: PLAN_DEFAULT_CKPT_INTERVAL_S), the
# architecture flags, layout, batch, padded vocabulary, and the parameters
# they build (to 0.5%)
meaning() {
	python3 - "$2" "$3" <<'PY' >"$TMP/checks"
import json, subprocess, sys
plan = json.load(open(sys.argv[1]))
pm, par = plan["model"], plan["parallel"]
r = subprocess.run([sys.executable, "tests/cli/megatron_args.py", "meaning", sys.argv[2],
                    str(pm["vocab"])], capture_output=True, text=True)
if r.returncode:
    print("bad\targuments readable\t%s" % r.stderr.strip().splitlines()[-1:])
    sys.exit()
d = json.loads(r.stdout)
f = d["flags"]
get = lambda k, v=None: f.get(k, v)
want = [
    ("world size is the plan's GPUs", d["world_size"], plan["cluster"]["gpus"]),
    ("train-samples = tokens / seq", int(get("--train-samples", 0)),
     -(-int(plan["job"]["tokens"]) // pm["seq"])),
    ("save-interval = the plan's checkpoint interval in steps", int(get("--save-interval", 0)),
     max(1, int(plan.get("costs", {}).get("checkpoint_interval_s", 3600) / plan["prediction"]["step_time_s"] + 0.5))),
    ("position encoding", get("--position-embedding-type"),
     {"rope": "rope", "learned": "learned_absolute"}[pm["position_embedding"]]),
    ("rotary base", get("--rotary-base"),
     "%.0f" % pm["rotary_base"] if "rotary_base" in pm else None),
    ("rotary share", float(get("--rotary-percent", 1)), float(pm.get("rotary_percent", 1))),
    ("norm", get("--normalization"), {"rmsnorm": "RMSNorm", "layernorm": "LayerNorm"}[pm["norm"]]),
    ("linear biases", "--disable-bias-linear" not in f, pm["linear_bias"]),
    ("dropout", (float(get("--hidden-dropout", -1)), float(get("--attention-dropout", -1))),
     (float(pm["dropout"]), float(pm["dropout"]))),
    ("tokenizer", get("--tokenizer-model"), pm["tokenizer"]),
    ("sliding window", int(get("--window-size", "0,0").split(",")[0]), pm["sliding_window"]),
    ("tied embeddings", "--untie-embeddings-and-output-weights" not in f, pm["tied_embeddings"]),
    ("GQA groups", int(get("--num-query-groups", pm["heads"])), pm["kv_heads"]),
    ("shape", [int(get(k)) for k in ("--num-layers", "--hidden-size", "--num-attention-heads",
                                     "--ffn-hidden-size", "--seq-length")],
     [pm[k] for k in ("layers", "hidden", "heads", "ffn", "seq")]),
    ("layout tp pp cp", [int(get(k, 1)) for k in ("--tensor-model-parallel-size",
                                                  "--pipeline-model-parallel-size",
                                                  "--context-parallel-size")],
     [par[k] for k in ("tp", "pp", "cp")]),
    ("batch", [int(get(k)) for k in ("--micro-batch-size", "--global-batch-size")],
     [par["mbs"], par["gbs"]]),
    ("padded vocab is the preset's", d["padded_vocab"], pm["vocab"]),
    ("head width", int(get("--kv-channels", 0)),
     0 if pm.get("kv_lora_rank") else pm.get("head_dim", 0)),
    ("attention sinks", get("--softmax-type") == "learnable", bool(pm.get("attention_sinks"))),
    ("full attention every n-th layer", int(get("--window-attn-skip-freq", 0)),
     pm.get("window_full_every", 0) if pm["sliding_window"] else 0),
    ("MLA ranks and heads", [int(get(k, 0)) for k in ("--q-lora-rank", "--kv-lora-rank",
                             "--qk-head-dim", "--qk-pos-emb-head-dim", "--v-head-dim")],
     [pm.get(k, 0) for k in ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                             "qk_rope_head_dim", "v_head_dim")]),
    ("MTP layers", int(get("--mtp-num-layers", 0)), pm.get("mtp_layers", 0)),
    ("MTP modules in the pipeline layout", get("--pipeline-model-parallel-layout", "m" *
     pm.get("mtp_layers", 0)).count("m"), pm.get("mtp_layers", 0)),
]
if pm.get("experts"):
    sw = pm.get("shared_ffn") or pm["expert_ffn"]
    want += [
        ("experts top-k width", [int(get(k, 0)) for k in ("--num-experts", "--moe-router-topk",
                                                          "--moe-ffn-hidden-size")],
         [pm["experts"], pm["top_k"], pm["expert_ffn"]]),
        ("shared experts' width", int(get("--moe-shared-expert-intermediate-size", 0)),
         pm.get("shared_experts", 0) * sw),
        ("dense layers first", get("--moe-layer-freq"),
         "([0]*%d+[1]*%d)" % (pm["dense_layers"], pm["layers"] - pm["dense_layers"])
         if pm.get("dense_layers") else None),
        ("router pre-softmax", "--moe-router-pre-softmax" in f, bool(pm.get("router_pre_softmax"))),
        ("ep etp", [int(get(k, 1)) for k in ("--expert-model-parallel-size",
                                             "--expert-tensor-parallel-size")],
         [par["ep"], par["etp"]]),
        ("dispatcher", get("--moe-token-dispatcher-type"), par["ep_dispatcher"]),
        ("flex backend DeepEP", get("--moe-flex-dispatcher-backend"),
         "deepep" if par["ep_dispatcher"] == "flex" else None),
        ("EP overlap", "--overlap-moe-expert-parallel-comm" in f, par["ep_overlap"]),
        ("grouped GEMM", "--moe-grouped-gemm" in f, True),
    ]
prec = {"bf16": (None, None, None), "fp8": ("hybrid", None, None),
        "mxfp8": ("e4m3", "mxfp8", None), "nvfp4": (None, None, "e2m1")}
if "--fp16" not in f:
    want.append(("precision %s" % par["precision"], (get("--fp8-format"), get("--fp8-recipe"),
                 get("--fp4-format")), prec[par["precision"]]))
    want.append(("FP8 weight gather", "--fp8-param-gather" in f,
                 bool(par.get("fp8_param_gather")) and par.get("zero", 0) >= 1
                 and par["precision"] in ("fp8", "mxfp8")))
for what, got, exp in want:
    print("%s\t%s (%s)" % ("ok", what, got) if got == exp else
          "bad\t%s\tgot %r, expected %r" % (what, got, exp))
a, b = d["params"], pm["params"]
print("%s\tparameters from the arguments = the plan's (%d vs %d)\t" % (
    "ok" if abs(a - b) <= 0.005 * b else "bad", a, b))
PY
	checks "$1: " <"$TMP/checks"
	MA parse "$3" >"$TMP/why" 2>&1; case $? in
	0) pass "$1: Megatron-LM's parse_args and validate_args accept it" ;;
	77) echo "skip - $1: Megatron-LM's parser: $(head -1 "$TMP/why")" ;;
	*) fail "$1: Megatron-LM's parse_args and validate_args accept it" "$(tail -1 "$TMP/why")" ;;
	esac
}
# ds_meaning NAME PLAN ARGV: the DeepSpeed launch means the plan: the
# plan's GPUs, the config the arguments name with the plan's batch (and
# DeepSpeed's identity train_batch_size = micro x accumulation x world /
# (tp pp)), ZeRO stage and precision, tp and pp as Megatron-DeepSpeed
# takes them, and the training length and checkpoint interval in the
# environment every rank gets
ds_meaning() {
	python3 - "$2" "$3" "$3.config" "$3.env" <<'PY' >"$TMP/why" 2>&1
import json, subprocess, sys
plan = json.load(open(sys.argv[1]))
words = [w for w in open(sys.argv[2]).read().split("\n") if w]
cfg = json.load(open(sys.argv[3]))
env = dict(l.split("=", 1) for l in open(sys.argv[4]).read().split("\n") if "=" in l)
m = json.loads(subprocess.run([sys.executable, "tests/cli/megatron_args.py", "meaning", sys.argv[2], "0"],
                              capture_output=True, text=True, check=True).stdout)
par, f = plan["parallel"], m["flags"]
world = plan["cluster"]["gpus"]
want = {
    "world size": (m["world_size"], world),
    "config named": ("--deepspeed" in f and f.get("--deepspeed_config", "").endswith(".json"), True),
    "train_batch_size": (cfg["train_batch_size"], par["gbs"]),
    "micro batch": (cfg["train_micro_batch_size_per_gpu"], par["mbs"]),
    "accumulation": (cfg["gradient_accumulation_steps"], par["gbs"] // (par["mbs"] * par["dp"])),
    "DeepSpeed's batch identity": (cfg["train_micro_batch_size_per_gpu"] * cfg["gradient_accumulation_steps"]
                                   * world // (par["tp"] * par["pp"]), cfg["train_batch_size"]),
    "ZeRO stage": (cfg["zero_optimization"]["stage"], 1 if par["zero"] >= 2 and par["pp"] > 1 else par["zero"]),
    # Volta has no bf16: fp16 with dynamic loss scaling (loss_scale 0)
    "precision": ("bf16" if "bf16" in cfg else "fp16 %s" % cfg["fp16"]["loss_scale"],
                  "fp16 0" if plan["cluster"]["gpu"]["name"].startswith("V100") else "bf16"),
    "tp": (int(f.get("--tensor-model-parallel-size", 1)), par["tp"]),
    "pp": (int(f.get("--pipeline-model-parallel-size", 1)), par["pp"]),
    "GPUPLAN_TRAIN_SAMPLES = tokens / seq": (int(env["GPUPLAN_TRAIN_SAMPLES"]),
                                             -(-int(plan["job"]["tokens"]) // plan["model"]["seq"])),
    "GPUPLAN_SAVE_INTERVAL_STEPS = the plan's interval": (int(env["GPUPLAN_SAVE_INTERVAL_STEPS"]),
        max(1, int(plan.get("costs", {}).get("checkpoint_interval_s", 3600) / plan["prediction"]["step_time_s"] + 0.5))),
}
bad = ["%s: %r, expected %r" % (k, a, b) for k, (a, b) in want.items() if a != b]
print("; ".join(bad) if bad else "world %d, batch %d = %d x %d x %d, stage %d, %s samples, save every %s steps" % (
    world, cfg["train_batch_size"], cfg["train_micro_batch_size_per_gpu"], cfg["gradient_accumulation_steps"],
    par["dp"], cfg["zero_optimization"]["stage"], env["GPUPLAN_TRAIN_SAMPLES"], env["GPUPLAN_SAVE_INTERVAL_STEPS"]))
sys.exit(1 if bad else 0)
PY
	[ $? = 0 ] && pass "$1: DeepSpeed runs the plan ($(cat "$TMP/why"))" \
		|| fail "$1: DeepSpeed runs the plan" "$(tail -3 "$TMP/why")"
}

# trl_meaning NAME PLAN: exports PLAN for trl (the script in $TRL_SCRIPT), runs the script to its
# (stub) trl and parses what trl gets with TRL's own parser: the values it
# reads are the plan's (processes, batch, accumulation, precision and
# dtype, recomputation, checkpoint steps, LoRA rank and QLoRA's 4-bit)
trl_meaning() {
	local name=$1 plan=$2 out="$TMP/trl-$RANDOM"
	TRL_SCRIPT="$out.sh"
	gp export "$plan" --format trl -o "$out.sh"
	[ "$RC" = 0 ] || { fail "$name: trl export" "exit $RC: $(head -1 "$ERR")"; return; }
	argv "$name" "$out.sh" "$out.argv" DATASET=d NODE_RANK=0 HF_TOKEN=t
	python3 tests/cli/trl_args.py parse "$out.argv" bf16 fp16 dtype gradient_checkpointing \
		save_strategy save_steps per_device_train_batch_size gradient_accumulation_steps \
		use_peft lora_r load_in_4bit bnb_4bit_quant_type >"$out.json" 2>"$TMP/why"
	case $? in
	77) echo "skip - $name: TRL's parser: $(head -1 "$out.json")"; return ;;
	0) pass "$name: TRL's parser accepts it" ;;
	*) fail "$name: TRL's parser accepts it" "$(tail -1 "$TMP/why")"; return ;;
	esac
	python3 - "$plan" "$out.json" <<'PY' >"$TMP/checks"
import json, sys
plan, got = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
par, ft = plan["parallel"], plan.get("finetune", {})
method = ft.get("method", "none")
bf16 = not plan["cluster"]["gpu"]["name"].startswith("V100")
launch = dict(zip(got["launch"][::2], got["launch"][1::2]))
want = {
    "processes": (int(launch.get("--num_processes", 0)), plan["cluster"]["gpus"]),
    "micro-batch": (got["per_device_train_batch_size"], par["mbs"]),
    "accumulation": (got["gradient_accumulation_steps"], par["gbs"] // (par["mbs"] * par["dp"])),
    "bf16 or fp16": ((got["bf16"], got["fp16"]), (True, False) if bf16 else (None, True)),
    "dtype (QLoRA's compute dtype)": (got["dtype"], "bfloat16" if bf16 else "float16"),
    "recomputation": (got["gradient_checkpointing"], par["recompute"] != "none"),
    "checkpoints at the plan's interval": ((got["save_strategy"], int(got["save_steps"])),
        ("steps", max(1, int(plan.get("costs", {}).get("checkpoint_interval_s", 3600) / plan["prediction"]["step_time_s"] + 0.5)))),
    "adapters": (got["use_peft"], method in ("lora", "qlora")),
    "4-bit NF4": ((got["load_in_4bit"], got["bnb_4bit_quant_type"]), (method == "qlora", "nf4")),
}
for k, (a, b) in want.items():
    print("ok\t%s (%r)\t" % (k, a) if a == b else "bad\t%s\tgot %r, expected %r" % (k, a, b))
PY
	checks "$name: " <"$TMP/checks"
}
