#!/usr/bin/env bash
# test_accuracy_data.sh - the accuracy bench reads the MoE recipes' facts
# and the systems from bench/data (moe_recipes.csv, moe_systems.csv): a
# fact taken out changes the predictions it applies to, and a bad cell
# is one error line naming the file, line and column, exit 2.
. "$(dirname "$0")/../cli/lib.sh"
ACC=$PWD/$BUILD/bench/accuracy
if [ ! -x "$ACC" ]; then
	echo "ok - skipped: $BUILD/bench/accuracy not built"
	echo "1 passed, 0 failed"
	exit 0
fi
D=$TMP/bench
fresh() { rm -rf "$D"; cp -r bench/data "$D"; }

fresh
run "as shipped" "$ACC" -v data "$D"
expect_rc "the bench runs on bench/data" 0
expect_out "the MoE headline is there" '^mbridge_moe newest +15 '
cp "$OUT" "$TMP/shipped"

moves() { # moves FACT SYSTEM WHAT: without FACT's rows the bench runs and
	# DeepSeek-V3's SYSTEM predictions differ from the shipped ones
	local pick="mbridge_moe newest DeepSeekV3 DGX-$2"
	grep -v "^$1," bench/data/moe_recipes.csv >"$D/moe_recipes.csv"
	run "no $1" "$ACC" -v data "$D"
	expect_rc "without the $1 rows it runs" 0
	if grep -q "$pick" "$TMP/shipped" &&
		! diff <(grep "$pick" "$TMP/shipped") <(grep "$pick" "$OUT") >/dev/null; then
		pass "the $1 fact moves DeepSeek-V3's $2 predictions ($3)"
	else
		fail "the $1 fact moves DeepSeek-V3's $2 predictions ($3)" "the same without it"
	fi
}
moves a2a_overlap B200 "the EP all-to-all overlapped"
moves fp8_param_gather GB300 "ZeRO-1's MXFP8 weight gathers a byte a weight"

bad() { # bad NAME FILE SED REGEX: one error line, exit 2
	fresh
	sed -i "$3" "$D/$2"
	run "$1" "$ACC" data "$D"
	expect_rc "$1: exit 2" 2
	expect_err "$1: says where" "$4"
	expect_err_lines "$1: one line" 1
}
bad "unknown fact" moe_recipes.csv '2s/^dispatcher,/dispatch,/' \
	"^error: .*moe_recipes.csv:2: fact: expected zero, dispatcher, .*found 'dispatch'"
bad "a value the fact does not take" moe_recipes.csv '3s/,1,"/,one,"/' \
	"^error: .*moe_recipes.csv:3: value: expected .*found 'one'"
bad "a gather that is not 0 or 1" moe_recipes.csv 's/^fp8_param_gather,\(.*\),1,"/fp8_param_gather,\1,yes,"/' \
	"^error: .*moe_recipes.csv:[0-9]+: value: expected .*found 'yes'"
bad "an unknown module" moe_recipes.csv 's/,mla_up_proj mlp,/,mla_up_proj mpl,/' \
	"^error: .*moe_recipes.csv:[0-9]+: value: .*found 'mla_up_proj mpl'"
bad "a degree that is not a number" moe_recipes.csv '4s/,DGX-H100,1,2,12,/,DGX-H100,1,2,x,/' \
	"^error: .*moe_recipes.csv:4: vp: expected .*found 'x'"
bad "a release that is not one" moe_recipes.csv 's/,26.06.01,,1,/,26-06,,1,/' \
	"^error: .*moe_recipes.csv:[0-9]+: from_container: expected .*found '26-06'"
bad "a fact without its source" moe_recipes.csv '2s/,flex,.*/,flex,/' \
	"^error: .*moe_recipes.csv:2: source: expected where the fact was read"
bad "a column missing" moe_recipes.csv '1s/,source$//' \
	"^error: .*moe_recipes.csv:1: expected a column 'source'"
bad "a system's network that is not a number" moe_systems.csv '2s/,3200,/,fast,/' \
	"^error: .*moe_systems.csv:2: inter_node_gbps: expected .*found 'fast'"
bad "a control byte is escaped" moe_recipes.csv "2s/^dispatcher,/disp$(printf '\033')atcher,/" \
	"found 'disp\\\\x1batcher'"
# transcribe_recipes.py follows a release's workload configs to each run
# and says where moe_recipes.csv disagrees with them
if command -v python3 >/dev/null; then
	cat >"$TMP/configs.py" <<'PY'
from dataclasses import replace
BASE = WorkloadBaseConfig(expert_tensor_parallel_size=1)
QWEN3_30B_A3B_PRETRAIN_CONFIG_B200_FP8_MX_V1 = replace(BASE, global_batch_size=512,
    micro_batch_size=4, expert_model_parallel_size=8, moe_a2a_overlap=True)
QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1 = replace(BASE, global_batch_size=512,
    expert_model_parallel_size=16, recompute_modules=["mlp"])
PY
	printf '%s\n' 'source_id,container,model,system,num_gpus,precision,gbs,mbs,seq_len,tp,pp,cp,vp,ep,etp,fsdp' \
		'x,26.06.01,Qwen3_30B_a3B,DGX-B200,8,MXFP8,512,4,4096,1,1,1,n/a,8,1,,' \
		'x,26.06.01,Qwen3_30B_a3B,DGX-H100,16,FP8,512,1,4096,1,1,1,n/a,16,1,,' >"$TMP/runs.csv"
	run "transcribe" python3 bench/data/transcribe_recipes.py "$TMP/runs.csv" \
		"26.06.01=$TMP/configs.py" --check bench/data/moe_recipes.csv
	expect_out "transcribe: the B200 run's entry overlaps" \
		'^26\.06\.01,Qwen3_30B_a3B,DGX-B200,MXFP8,4,1,1,8,QWEN3_30B_A3B_PRETRAIN_CONFIG_B200_FP8_MX_V1,1,none$'
	expect_out "transcribe: the H100 run's entry recomputes the MLP" \
		',QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1,0,mlp$'
	expect_rc "transcribe --check: a difference exits 1" 1
	expect_err "transcribe --check: names it" \
		'^differs: 26\.06\.01 Qwen3_30B_a3B DGX-H100 .* recompute_modules: .* says mlp, the table none$'
	[ "$(wc -l <"$ERR")" = 1 ] && pass "transcribe --check: one difference" \
		|| fail "transcribe --check: one difference" "$(wc -l <"$ERR") lines"
fi
finish
