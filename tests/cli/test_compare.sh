#!/usr/bin/env bash
# test_compare.sh - rent, reserve or buy as a user types it on the shipped
# data: `gpuplan compare` (the table, the owning cost with its parts, the
# break-even, the assumptions, bad flags), and the cost models in `gpuplan
# plan` (reserved columns and the commitment share, GPUs the user owns,
# checkpoint storage).
. "$(dirname "$0")/lib.sh"
export GPUPLAN_SHARE_DIR="$PWD/data"

# ---- help
gp compare --help
expect_rc "compare --help exits 0" 0
for opt in --gpus --gpu --model --tokens --reserved --commitment-share --owned --storage-price \
	--ckpt-keep --ckpt-interval --hardware; do
	expect_out "compare --help lists $opt" -- "$opt"
done
expect_out "compare --help states the --gpus default" "--gpus N .*\(default 8"
gp help
expect_out "gpuplan help lists compare" "^  compare "

# ---- the README's query
gp compare --model llama3-8b --tokens 1T
expect_rc "compare exits 0" 0
expect_out "compare prints its header" "^GPU +OPTION +WHERE +TIME +COST +USD/B-TOK +USD/GPU-H +BREAK-EVEN"
expect_out "compare rents H100" "^H100-SXM5-80GB +rent "
expect_out "compare buys the HGX H100 machine" "^ +buy +1 x hgx-h100-8x \(\\\$296,644, 2024-03-21\)"
# Owning per GPU-hour: 296644 / (3 y x 8760 h x 0.7) / 8 = 2.016 purchase;
# (8 x 700 W + 4600 W) = 10200 W x 1.2 x 0.15 / 1000 / 8 = 0.2295 power;
# together 2.25 USD/GPU-h.
expect_out "owning an H100 costs 2.25 USD/GPU-h" "hgx-h100-8x .* \\\$2\.25 "
expect_out "the owning cost is shown with its parts" "= \\\$2\.016 purchase .* \+ \\\$0\.229 power \(10200 W x PUE 1\.2 x \\\$0\.15/kWh"
expect_out "compare states the break-even" "[0-9.]+ months"
expect_out "a cards-only price is flagged" "rtx4090-8x-cards .*cards only"
expect_out "compare lists its assumptions" "^assumptions \(sources in data/SOURCES.md\):"
expect_out "compare states the amortisation" "^  amortisation straight line over 3 years of which 70% busy"
expect_out "compare states the storage price" "2 kept at \\\$0.023/GB-month"
grep -q '/work\|/home\|/tmp' "$OUT" && fail "compare prints no machine paths" "$(grep -m1 '/work\|/home\|/tmp' "$OUT")" \
	|| pass "compare prints no machine paths"

# ---- owning options change the parts: 5 years fully busy,
# 296644 / (5 x 8760) / 8 = 0.847 USD/GPU-h purchase; power at 0.30 USD/kWh
# and PUE 1.5: 10.2 x 1.5 x 0.30 / 8 = 0.574
gp compare --model llama3-8b --tokens 1T --gpu h100 --owned amortisation=5y,utilisation=1,usd-per-kwh=0.30,pue=1.5
expect_rc "compare --owned exits 0" 0
expect_out "--owned amortisation and utilisation change the purchase part" "= \\\$0\.847 purchase"
expect_out "--owned PUE and electricity change the power part" "\+ \\\$0\.574 power"
n=$(awk '/^assumptions/ { exit } / (rent|buy) / { n++ } END { print n + 0 }' "$OUT")
[ "$n" = 2 ] && pass "--gpu h100 keeps one GPU type" || fail "--gpu h100 keeps one GPU type" "$n rows"

# ---- bad input: one error line, exit 2
gp compare --model llama3-8b --tokens 1T --owned pue=0.9
expect_rc "compare --owned pue=0.9 exits 2" 2
expect_err "a PUE below 1 is refused" "^error: --owned: pue: expected a ratio >= 1, found 0.9"
expect_err_lines "one error line for a bad --owned" 1
gp compare --model llama3-8b --tokens 1T --owned speed=3
expect_rc "compare --owned with an unknown key exits 2" 2
gp compare --model llama3-8b --tokens 1T --gpus 0
expect_rc "compare --gpus 0 exits 2" 2
gp compare --model llama3-8b --tokens 1T --have 8xh100
expect_rc "compare --have exits 2" 2
gp compare --model llama3-8b --tokens 1T --json
expect_rc "compare --json exits 2" 2
gp compare --model llama3-8b --tokens 1T --gpu h1000
expect_rc "compare --gpu h1000 exits 2" 2
expect_err "an unknown GPU gets a hint" "^hint: did you mean"
gp compare --model llama3-8b
expect_rc "compare without --tokens exits 2" 2
gp compare --model llama3-8b --tokens 1T --gpus 3
expect_rc "nothing on 3 GPUs exits 3" 3

# ---- plan: a reserved column for a long job (the whole 3-year term is
# still cheaper than 2.2 years on demand at 56% off)
gp plan --model llama3-8b --tokens 5T --provider gcp --no-spot --objective cost --reserved --top 2 -o "$TMP/r.json"
expect_rc "plan --reserved exits 0" 0
expect_out "a long job answers with a reserved column" "^1 +gcp .* reserved-3y "
expect_out "the reserved answer says what it is billed" "^reserved-3y: 56\.1% off on-demand .* billed 3\.00 y .* cheaper even carrying the whole term"
# A 200B-token job carries 20% of the term: still cheaper than on demand,
# but only while its share stays under the printed break-even.
gp plan --model llama3-8b --tokens 200B --provider gcp --no-spot --objective cost --commitment-share 0.2 -o "$TMP/r2.json"
expect_rc "plan --commitment-share exits 0" 0
expect_out "--commitment-share states the break-even share" "carries 20% of the commitment: .* cheaper only if this job carries at most [0-9.]+% of the term"
gp plan --model llama3-8b --tokens 200B --commitment-share 1.5 -o "$TMP/r3.json"
expect_rc "plan --commitment-share 1.5 exits 2" 2
gp plan --model llama3-8b --tokens 200B --reserved --commitments "$TMP/none.csv" -o "$TMP/r4.json"
expect_rc "plan with a missing commitments file exits 1" 1

# ---- plan with GPUs you own: an offering charged its power only
gp plan --model llama3-8b --tokens 100B --have 16xRTX4090 --objective cost -o "$TMP/o.json"
expect_rc "plan --have exits 0" 0
expect_out "the owned GPUs are the cheapest answer" "^1 +owned rtx4090-8x-cards local owned +2x8=16 "
# 8 x 450 W + 400 W = 4000 W x 1.2 x 0.15 / 1000 = 0.72 USD/h per machine
expect_out "owned hours cost their power only" "^owned: 16 x RTX4090 .* running cost only,.* 4000 W per machine .* = \\\$0\.72/h per machine"
gp plan --model llama3-8b --tokens 100B --have 12xRTX4090 -o "$TMP/o2.json"
expect_rc "--have 12xRTX4090 exits 2" 2
expect_err "--have needs whole machines" "expected a multiple of 8"
gp plan --model llama3-8b --tokens 100B --have 2xL40S -o "$TMP/o3.json"
expect_rc "--have without a hardware row exits 2" 2
gp plan --model llama3-8b --tokens 100B --have RTX4090 -o "$TMP/o4.json"
expect_rc "--have without a count exits 2" 2

# ---- checkpoint storage in every plan
gp plan --model llama3-8b --tokens 100B --no-spot -o "$TMP/s.json"
expect_rc "plan exits 0" 0
# 8.03e9 params x 14 B = 112 GB
expect_out "plan states the checkpoint size, interval and storage cost" "^checkpoints: 112 GB each \(14 bytes/param\), written every 1\.0 h .* 2 kept at \\\$0.023/GB-month .*, included"
gp plan --model llama3-8b --tokens 100B --no-spot --storage-price 0 --ckpt-interval 0 -o "$TMP/s2.json"
expect_out "--storage-price 0 makes storage free" "2 kept at \\\$0/GB-month for .*: \\\$0\.00, included"
gp plan --model llama3-8b --tokens 100B --no-spot --json -o "$TMP/s3.json"
for k in purchase costs compute_usd storage_usd checkpoint_bytes commitment storage_usd_per_gb_month; do
	expect_out "plan --json has \"$k\"" "\"$k\":"
done
gp plan --model llama3-8b --tokens 100B --ckpt-keep -1 -o "$TMP/s4.json"
expect_rc "--ckpt-keep -1 exits 2" 2

finish
