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

finish
