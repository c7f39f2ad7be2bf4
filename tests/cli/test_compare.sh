#!/usr/bin/env bash
# test_compare.sh - rent, reserve or buy as a user types it on the shipped
# data: `gpuplan compare` (the table, the owning cost with its parts, the
# break-even, the assumptions, bad flags, --json against the table and a
# hand calculation), and the cost models in `gpuplan plan` (reserved
# columns and the commitment share, GPUs the user owns, checkpoint storage,
# the purchase option in plan files and reading it back).
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
# -q as plan, frontier and simulate take it: the same table, nothing on stderr
gp compare --model llama3-8b --tokens 1T -q
expect_rc "compare -q exits 0" 0
expect_out "compare -q prints the table" "^GPU +OPTION +WHERE"
[ -s "$ERR" ] && fail "compare -q: nothing on stderr" "$(head -1 "$ERR")" \
	|| pass "compare -q: nothing on stderr"

# ---- the query of docs/costs.md
gp compare --model llama3-8b --tokens 1T
expect_rc "compare exits 0" 0
expect_out "compare prints its header" "^GPU +OPTION +WHERE +TIME +COST +USD/B-TOK +USD/GPU-H +INTR +EFF +BREAK-EVEN"
expect_out "compare rents H100" "^H100-SXM5-80GB +rent "
# a purchase price carries its date and age (GPUPLAN_NOW 2026-12-04), stale
# beyond 90 days as a rental's is
expect_out "compare buys the HGX H100 machine, its price dated and aged" "^ +buy +1 x hgx-h100-8x \(\\\$296,644, 2024-03-21, 988 days old, stale\)"
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
# compare reads the products plan reads: 512 H100 are rented as the
# Capacity Block plan buys them as (37.76 USD an instance-hour against
# 55.04 and more on demand), not on demand
gp compare --model llama3-70b --tokens 1T --gpus 512 --gpu h100
expect_rc "compare on 512 H100 exits 0" 0
expect_out "compare rents 512 H100 as a capacity block" "^H100-SXM5-80GB +rent +aws p5\.48xlarge [a-z0-9-]+ capacity-block "
gp plan --model llama3-70b --tokens 1T --gpu h100 --min-gpus 512 --max-gpus 512 --objective cost -o "$TMP/h512.json"
expect_out "plan buys the same 512 H100 the same way" "^1 +aws p5\.48xlarge [a-z0-9-]+ capacity-block( \+[0-9] regions?)? +64x8=512 "

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
gp compare --model llama3-8b --tokens 1T --gpu h1000
expect_rc "compare --gpu h1000 exits 2" 2
expect_err "an unknown GPU gets a hint" "^hint: did you mean"
gp compare --model llama3-8b
expect_rc "compare without --tokens exits 2" 2
gp compare --model llama3-8b --tokens 1T --gpus 3
expect_rc "nothing on 3 GPUs exits 3" 3

# ---- compare --json: the table's figures for programs
gp compare --model llama3-8b --tokens 1T
cp "$OUT" "$TMP/compare.txt"
gp compare --model llama3-8b --tokens 1T --json
expect_rc "compare --json exits 0" 0
expect_out "compare --json names its schema" '"schema":[[:space:]]*"gpuplan.compare/1"'
cp "$OUT" "$TMP/compare.json"
gp compare --model llama3-8b --tokens 1T --json
[ -s "$OUT" ] && cmp -s "$OUT" "$TMP/compare.json" && pass "compare --json: same inputs, same bytes" \
	|| fail "compare --json: same inputs, same bytes" "two runs differ"
# check_json NAME FILE...: runs the python3 script on stdin with the files
# as arguments; each "ok CHECK" or "not ok CHECK: WHY" line it prints is one
# check, and anything else it prints (a traceback) fails NAME once.
check_json() {
	local name=$1 line other=""
	if ! command -v python3 >/dev/null; then
		echo "skip - $name: no python3 to parse JSON"
		return
	fi
	shift
	while IFS= read -r line; do
		case $line in
		"ok "*) pass "${line#ok }" ;;
		"not ok "*) line=${line#not ok }; fail "${line%%: *}" "${line#*: }" ;;
		*) other=$line ;;
		esac
	done < <(python3 - "$@" 2>&1)
	[ -z "$other" ] || fail "$name" "$other"
}
check_json "compare --json agrees with the table" "$TMP/compare.txt" "$TMP/compare.json" <<'PY'
import json, math, re, sys

def check(name, ok, why=""):
    print(("ok " if ok else "not ok ") + name + ("" if ok else ": " + why))

def near(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b))

def usd(s):
    return float(s.lstrip("$").replace(",", ""))

UNIT_S = {"ms": 1e-3, "s": 1, "min": 60, "h": 3600, "d": 86400, "y": 86400 * 365.0}

table = open(sys.argv[1]).read().splitlines()
doc = json.load(open(sys.argv[2]))
rows = []      # (gpu, option, time_s, cost, per_btok, per_gpu_h, breakeven, intr, eff)
gpu = None
row_re = re.compile(r"^(\S*)\s+(rent|buy)\s+(.*?)\s+([0-9.]+ (?:ms|s|min|h|d|y))\s+"
                    r"(\$[0-9,.]+)\s+(\$[0-9,.]+)\s+(\$[0-9.]+)\s+([0-9.]+)\s+([0-9.]+)%\s*(.*)$")
for line in table:
    if line.startswith("assumptions"):
        break
    m = row_re.match(line)
    if not m:
        continue
    gpu = m.group(1) or gpu
    t, u = m.group(4).split()
    rows.append((gpu, m.group(2), float(t) * UNIT_S[u], usd(m.group(5)), usd(m.group(6)),
                 usd(m.group(7)), m.group(10), float(m.group(8)), float(m.group(9))))
opts = [(t["gpu"], k, t[k]) for t in doc["types"] for k in ("rent", "buy") if t[k]]
check("compare --json has one option per table row", len(rows) == len(opts) > 0,
      "%d rows, %d options" % (len(rows), len(opts)))
check("compare --json lists the GPU types in the table's order",
      [r[0] for r in rows] == [o[0] for o in opts])
bad = []
for r, (g, k, o) in zip(rows, opts):
    # The table rounds to 3 significant digits or more (0.5%), or to cents.
    for name, a, b in (("time", r[2], o["time_to_train_s"]), ("cost", r[3], o["cost_usd"]),
                       ("usd/b-tok", r[4], o["usd_per_billion_tokens"]),
                       ("usd/gpu-h", r[5], o["usd_per_gpu_hour"])):
        if r[1] != k or not (near(a, b, 0.005) or (name != "time" and abs(a - b) <= 0.00501)):
            bad.append("%s %s %s: table %g, json %g" % (g, k, name, a, b))
check("compare --json times and costs agree with the table", not bad, "; ".join(bad[:3]))
# Each row states its interruptions (INTR, 3 significant digits) and the
# effective training time (EFF, 0.01%), as --json's
bad = []
for r, (g, k, o) in zip(rows, opts):
    i = o["interruptions"]
    if not near(r[7], i["expected"], 0.005) or abs(r[8] - 100 * i["effective_training_time"]) > 0.0051:
        bad.append("%s %s: table %g, %g%%; json %r" % (g, k, r[7], r[8], i))
check("compare: every row's INTR and EFF agree with --json", not bad and rows, "; ".join(bad[:3]))
be = {(r[0]): r[6] for r in rows if r[1] == "buy"}
bad = []
for t in doc["types"]:
    if t["breakeven"] == "pays_back":
        months = float(be[t["gpu"]].split()[0])
        if abs(t["breakeven_s"] / doc["assumptions"]["month_s"] - months) > 0.05:
            bad.append("%s: %s vs %g s" % (t["gpu"], be[t["gpu"]], t["breakeven_s"]))
    elif t["breakeven"] == "no_buy" and t["rent"]:
        if ("buy    " + t["why_no_buy"]) not in "\n".join(table):
            bad.append("%s: why_no_buy %r not in the table" % (t["gpu"], t["why_no_buy"]))
check("compare --json break-even and reasons agree with the table", not bad, "; ".join(bad[:3]))

# By hand, the HGX H100 (data/hardware.csv: 296644 USD, 8 x 700 W GPUs +
# 4600 W host): 296644 / (3 y x 8760 h x 0.7) / 8 = 2.01568 USD/GPU-h
# purchase, 10200 W x 1.2 x 0.15 USD/kWh / 1000 / 8 = 0.2295 power.
h100 = [t for t in doc["types"] if t["gpu"] == "H100-SXM5-80GB"][0]
b = h100["buy"]
own = 296644 / (3 * 8760 * 0.7) / 8 + 10200 * 1.2 * 0.15 / 1000 / 8
check("compare --json: owning an H100 costs 2.2452 USD/GPU-h",
      near(b["owning"]["usd_per_gpu_hour"], own, 1e-9) and near(b["usd_per_gpu_hour"], own, 1e-9),
      "%r vs %r" % (b["owning"]["usd_per_gpu_hour"], own))
check("compare --json: the owning cost's parts add up",
      near(b["owning"]["capex_usd_per_gpu_hour"] + b["owning"]["power_usd_per_gpu_hour"], own, 1e-9))
# Compute cost is the rate times the hours: 8 GPUs x 2.2452 x time / 3600;
# storage keeps 2 checkpoints of 14 B/param at 0.023 USD/GB-month for the
# run (months of 730 h); the total is both.
compute = 8 * own * b["time_to_train_s"] / 3600
storage = (b["costs"]["checkpoint_bytes"] / 1e9 * 2 * 0.023 * b["time_to_train_s"]
           / (730 * 3600.0))
check("compare --json: buy compute cost = GPUs x USD/GPU-h x hours",
      near(b["costs"]["compute_usd"], compute, 1e-9), "%r vs %r" % (b["costs"]["compute_usd"], compute))
check("compare --json: cost = compute + checkpoint storage",
      near(b["cost_usd"], compute + storage, 1e-9), "%r vs %r" % (b["cost_usd"], compute + storage))
check("compare --json: 8.03e9 params x 14 B = 112 GB checkpoints",
      near(b["costs"]["checkpoint_bytes"], 112.42e9, 1e-3), repr(b["costs"]["checkpoint_bytes"]))
r = h100["rent"]
# Rent is billed by the second (a 60 s minimum, data/capacity.csv) from
# the job's start-up on: whole seconds of the time less provisioning.
billed = math.ceil(r["time_to_train_s"] - r["costs"]["provision_s"] - 1e-9)
check("compare --json: rent is billed in whole seconds from start-up",
      near(r["costs"]["billed_s"], billed, 1e-12), "%r vs %r" % (r["costs"]["billed_s"], billed))
check("compare --json: rent compute cost = USD/h x hours billed",
      near(r["costs"]["compute_usd"], r["usd_per_hour"] * r["costs"]["billed_s"] / 3600, 1e-9))
# Break-even: purchase / ((rent - power) per token x tokens a month owned
# at 70% busy).
tok = doc["tokens"]
saving = ((r["costs"]["compute_usd"] - b["owning"]["power_usd_per_machine_hour"]
           * b["time_to_train_s"] / 3600) / tok
          * tok / b["time_to_train_s"] * 3600 * 730 * 0.7)
check("compare --json: the break-even is the purchase over the monthly saving",
      h100["breakeven"] == "pays_back"
      and near(h100["breakeven_s"] / (730 * 3600.0), 296644 / saving, 1e-9),
      "%r vs %r months" % (h100["breakeven_s"] / (730 * 3600.0), 296644 / saving))
a = doc["assumptions"]
check("compare --json states its assumptions in seconds and USD",
      a["amortisation_s"] == 3 * 8760 * 3600 and a["utilisation"] == 0.7 and a["pue"] == 1.2
      and a["usd_per_kwh"] == 0.15 and a["rent_purchase"] == "on-demand"
      and a["checkpoints_kept"] == 2 and a["storage_usd_per_gb_month"] == 0.023, repr(a))
check("compare --json: rented options say how they are paid for (as plan reads them)",
      all(t["rent"]["purchase"] in ("on-demand", "capacity-block") and not t["rent"]["spot"]
          for t in doc["types"] if t["rent"]))
check("compare --json: bought options are owned",
      all(t["buy"]["purchase"] == "owned" and t["buy"]["provider"] == "owned"
          for t in doc["types"] if t["buy"]))
PY
gp compare --model llama3-8b --tokens 1T --gpu h100 --spot
expect_out "compare states the interruptions in TIME" \
	"^  interruptions failures 2\.19e-05/GPU-hour x 8 GPUs .*, and spot preemptions 0\.01/node-hour; INTR expected over a row's TIME, .*; EFF the effective training time .* \(in TIME\)"
expect_out "a spot row states its interruptions (more than the failures alone)" \
	"^H100-SXM5-80GB +rent .* spot +[0-9.]+ d +.* [0-9.]+ +9[0-9]\.[0-9]{2}%"
gp compare --model llama3-8b --tokens 1T --gpu h100 --spot --json
expect_rc "compare --spot --json exits 0" 0
check_json "compare --spot --json rents spot" "$OUT" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["types"][0]
ok = t["rent"]["purchase"] == "spot" and t["rent"]["spot"] and t["rent"]["preemption"]["mtbf_s"] > 0
print(("ok " if ok else "not ok ") + "compare --spot --json: spot rent with its preemption model"
      + ("" if ok else ": " + json.dumps(t["rent"])[:200]))
PY
gp compare --model llama3-8b --tokens 1T --gpus 3 --json
expect_rc "compare --json: nothing on 3 GPUs exits 3" 3

# ---- plan: a reserved column for a long job (GCP sells one a3-highgpu-8g
# node as a cluster: 284 days on one node, and the whole 1-year term at
# 30.6% off is still cheaper than those days on demand)
gp plan --model llama3-8b --tokens 1.8T --provider gcp --gpu h100 --no-spot --objective cost --reserved --top 2 -o "$TMP/r.json"
expect_rc "plan --reserved exits 0" 0
expect_out "a long job answers with a reserved column" "^1 +gcp .* reserved-1y "
expect_out "the reserved answer says what it is billed" "^reserved-1y: 30\.6% off on-demand .* billed 1\.00 y .* cheaper even carrying the whole term"
# The plan file records how the hours are paid for, and reading it back
# (simulate -o) keeps it.
grep -Eq '"purchase":[[:space:]]*"reserved-1y"' "$TMP/r.json" && pass "a plan file records its purchase option" \
	|| fail "a plan file records its purchase option" "$(grep -m1 purchase "$TMP/r.json")"
gp simulate "$TMP/r.json" -o "$TMP/r-back.json"
expect_rc "simulate reads a reserved plan file" 0
grep -Eq '"purchase":[[:space:]]*"reserved-1y"' "$TMP/r-back.json" && pass "simulate -o keeps the purchase option" \
	|| fail "simulate -o keeps the purchase option" "$(grep -m1 purchase "$TMP/r-back.json")"
# A bad value: one line with the JSON path, exit 2, from every reader.
sed 's/"reserved-1y"/"reserved-2y"/' "$TMP/r.json" > "$TMP/bad-purchase.json"
gp simulate "$TMP/bad-purchase.json"
expect_rc "simulate: a bad purchase option exits 2" 2
expect_err "a bad purchase option names the field" "^error: $TMP/bad-purchase.json: \.offering\.purchase: expected on-demand, spot, reserved-1y, reserved-3y, owned or capacity-block, found \"reserved-2y\""
expect_err_lines "one error line for a bad purchase option" 1
gp export "$TMP/bad-purchase.json" --format torchrun
expect_rc "export: a bad purchase option exits 2" 2
expect_err "export names the bad field" "\.offering\.purchase: expected on-demand"
# export -o: a write that fails (here the file size limit) leaves the
# file it would replace as it was.  stderr goes through a pipe, which
# the limit does not touch.
echo "old config" >"$TMP/keep.sh"
(trap '' XFSZ; ulimit -f 0; exec $GPUPLAN export "$TMP/r.json" --format slurm -o "$TMP/keep.sh") \
	2>&1 >/dev/null | cat >"$ERR"
RC=${PIPESTATUS[0]}
expect_rc "export -o: a failed write exits 1" 1
expect_err_lines "export -o: a failed write is one error line" 1
expect_err "export -o: a failed write says why" "^error: .*keep.sh: cannot write: File too large"
[ "$(cat "$TMP/keep.sh")" = "old config" ] && pass "export -o: a failed write keeps the old file" \
	|| fail "export -o: a failed write keeps the old file" "$(head -c 80 "$TMP/keep.sh")"
ls "$TMP"/keep.sh.tmp.* >/dev/null 2>&1 && fail "export -o: no temporary file left" "$(ls "$TMP")" \
	|| pass "export -o: no temporary file left"
gp execute "$TMP/bad-purchase.json" --steps 1
expect_rc "execute: a bad purchase option exits 2" 2
expect_err "execute names the bad field" "\.offering\.purchase: expected on-demand"
sed 's/"reserved-1y"/"spot"/' "$TMP/r.json" > "$TMP/bad-spot.json"
gp simulate "$TMP/bad-spot.json"
expect_rc "a spot purchase on a plan with spot false exits 2" 2
expect_err "the contradiction is named" "^error: $TMP/bad-spot.json: \.offering\.purchase: expected on-demand, reserved-1y, reserved-3y, owned or capacity-block as \.offering\.spot is false, found \"spot\""
# Plan files written before the field existed still load: on-demand, or
# spot when .offering.spot says so.
old_plan() { sed -e '/"purchase":/d' -e 's/\("spot":[[:space:]]*[a-z]*\),$/\1/' "$1"; }
old_plan "$TMP/r.json" > "$TMP/old.json"
grep -q purchase "$TMP/old.json" && fail "the old plan has no purchase" "still there" || pass "the old plan has no purchase"
gp simulate "$TMP/old.json" -o "$TMP/old-back.json"
expect_rc "an old plan file loads" 0
grep -Eq '"purchase":[[:space:]]*"on-demand"' "$TMP/old-back.json" && pass "an old plan file reads as on-demand" \
	|| fail "an old plan file reads as on-demand" "$(grep -m1 purchase "$TMP/old-back.json")"
sed 's/"spot":\([[:space:]]*\)false/"spot":\1true/' "$TMP/old.json" > "$TMP/old-spot.json"
gp simulate "$TMP/old-spot.json" -o "$TMP/old-spot-back.json"
expect_rc "an old spot plan file loads" 0
grep -Eq '"purchase":[[:space:]]*"spot"' "$TMP/old-spot-back.json" && pass "an old spot plan file reads as spot" \
	|| fail "an old spot plan file reads as spot" "$(grep -m1 purchase "$TMP/old-spot-back.json")"
# A 200B-token job carries 20% of the term: still cheaper than on demand,
# but only while its share stays under the printed break-even.
gp plan --model llama3-8b --tokens 200B --provider gcp --no-spot --blocks none --objective cost --commitment-share 0.2 -o "$TMP/r2.json"
expect_rc "plan --commitment-share exits 0" 0
expect_out "--commitment-share states the break-even share" "carries 20% of the commitment: .* cheaper only if this job carries at most [0-9.]+% of the term"
gp plan --model llama3-8b --tokens 200B --commitment-share 1.5 -o "$TMP/r3.json"
expect_rc "plan --commitment-share 1.5 exits 2" 2
gp plan --model llama3-8b --tokens 200B --reserved --commitments "$TMP/none.csv" -o "$TMP/r4.json"
expect_rc "plan with a missing commitments file exits 2" 2

# ---- plan with GPUs you own: an offering charged its power only
gp plan --model llama3-8b --tokens 100B --have 16xRTX4090 --objective cost --provider owned -o "$TMP/o.json"
expect_rc "plan --have exits 0" 0
# hardware.csv states no network for the cards: the two machines are not
# clustered (one node), and the answer says why
expect_out "the owned GPUs are planned as one machine" "^1 +owned rtx4090-8x-cards local owned +1x8=8 "
expect_out "owned machines without a network figure: one node, says why" \
	"^capacity: 1 of at most 1 node: owned rtx4090-8x-cards has no inter_node_gbps figure, so one node"
# 8 x 450 W + 400 W = 4000 W x 1.2 x 0.15 / 1000 = 0.72 USD/h per machine
expect_out "owned hours cost their power only" "^owned: 8 x RTX4090 .* running cost only,.* 4000 W per machine .* = \\\$0\.72/h per machine"
grep -Eq '"purchase":[[:space:]]*"owned"' "$TMP/o.json" && pass "a plan on owned GPUs records purchase owned" \
	|| fail "a plan on owned GPUs records purchase owned" "$(grep -m1 purchase "$TMP/o.json")"
old_plan "$TMP/o.json" > "$TMP/old-owned.json"
gp simulate "$TMP/old-owned.json" -o "$TMP/old-owned-back.json"
grep -Eq '"purchase":[[:space:]]*"owned"' "$TMP/old-owned-back.json" && pass "an old plan on owned GPUs reads as owned" \
	|| fail "an old plan on owned GPUs reads as owned" "$(grep -m1 purchase "$TMP/old-owned-back.json")"
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
expect_out "plan states the checkpoint size, interval and storage cost" "^checkpoints: 112 GB each \(14 bytes/param\), written every [0-9.]+ [a-z]+ in .* \(Young/Daly; .* 2 kept at \\\$0.023/GB-month .*, included"
gp plan --model llama3-8b --tokens 100B --no-spot --storage-price 0 --ckpt-interval 0 -o "$TMP/s2.json"
expect_out "--storage-price 0 makes storage free" "2 kept at \\\$0/GB-month for .*: \\\$0\.00, included"
gp plan --model llama3-8b --tokens 100B --no-spot --json -o "$TMP/s3.json"
for k in purchase costs compute_usd storage_usd checkpoint_bytes commitment storage_usd_per_gb_month \
	interruptions effective_training_time failures_per_gpu_hour; do
	expect_out "plan --json has \"$k\"" "\"$k\":"
done
gp plan --model llama3-8b --tokens 100B --ckpt-keep -1 -o "$TMP/s4.json"
expect_rc "--ckpt-keep -1 exits 2" 2

finish
