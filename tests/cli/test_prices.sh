#!/usr/bin/env bash
# test_prices.sh - `gpuplan prices|gpus|models` as a user types them: the
# shipped catalogs, list filters, updates (gpuplan and SkyPilot columns),
# every kind of bad input (one error line naming file:line:col, exit 2,
# stored table byte-for-byte unchanged), injected crashes, concurrent
# updates, the history, and the user's rows laid over the shipped table
# (a newer shipped table shows through; an older full copy still loads).
. "$(dirname "$0")/lib.sh"
export GPUPLAN_SHARE_DIR="$PWD/data"
FIX=tests/fixtures/prices
TABLE="$GPUPLAN_DATA_DIR/prices.csv"
HIST="$GPUPLAN_DATA_DIR/prices.history.csv"

# ---- help and the shipped catalogs
gp prices --help
expect_rc "prices --help exits 0" 0
expect_out "prices --help names --sort and its default" "--sort KEY +usd_per_gpu_hour \(default\)"
expect_out "prices --help names --dry-run" "--dry-run"

gp prices list
expect_rc "prices list exits 0" 0
# Cheapest GPU-hour in the shipped table: runpod 8x RTX 4000 Ada at
# 2.24 / 8 = 0.280 USD.
expect_out "prices list starts with the cheapest GPU-hour" "^PROVIDER"
[ "$(sed -n 2p "$OUT" | awk '{print $1, $2}')" = "runpod 8x_RTX4000-Ada_SECURE" ] \
	&& pass "first row is runpod 8x RTX4000-Ada" || fail "first row is runpod 8x RTX4000-Ada" "$(sed -n 2p "$OUT")"
expect_err "prices list says where the table came from" "155 offerings from .*data/prices.csv"

# Every shipped price carries the date its source states (data/SOURCES.md,
# "price_date").  The rows still undated are those of the five SkyPilot
# catalog snapshots whose commit dates were not found; no other source may
# add an undated price, and their number may only fall.
UNDATED=$(python3 - data/prices.csv <<'PY'
import csv, sys
known = {"aws": "skypilot-catalog v8 @00148f2af3672e2229b4f7bf8157d5a3f36e3c35",
         "azure": "skypilot-catalog v6 @098741e70562f65d7af1cceb81e33b284f742604",
         "lambda": "skypilot-catalog v8 @0f4070387edc953d7004cff197940e1918a1d6aa",
         "runpod": "skypilot-catalog v8 @01acdfd419ce5afae1289ff14825b893ced0c196",
         "vast": "skypilot-catalog v8 @01b8cdda287814b30ff0acb49746cca19fbd4355"}
gap, other = 0, []
for line, r in enumerate(csv.DictReader(open(sys.argv[1])), start=2):
    if not (r["on_demand_usd_per_hour"] or r["spot_usd_per_hour"]) or r["price_date"]:
        continue
    if known.get(r["provider"]) == r["catalog_version"]:
        gap += 1
    else:
        other.append("%d:%s %s %s" % (line, r["provider"], r["instance_type"], r["region"]))
print(gap, " ".join(other))
PY
)
[ "${UNDATED#* }" = "" ] && pass "every shipped price outside the SkyPilot snapshots is dated" \
	|| fail "every shipped price outside the SkyPilot snapshots is dated" "undated: ${UNDATED#* }"
[ "${UNDATED%% *}" -le 34 ] && pass "undated SkyPilot rows: ${UNDATED%% *}, no more than 34" \
	|| fail "undated SkyPilot rows no more than 34" "${UNDATED%% *}"
grep -q '^gcp,.*skypilot-catalog' data/prices.csv && fail "no GCP row from the undated snapshot" "$(grep '^gcp,.*skypilot-catalog' data/prices.csv)" \
	|| pass "no GCP row from the undated snapshot"
# make run's job: its answer says how old its prices are, in days
gp plan --model llama3-70b --tokens 1T --budget 2.5M
expect_rc "make run's plan exits 0" 0
expect_out "make run's answer prints its prices' age in days" "^prices: .* [0-9]+ days old on [0-9-]+$"
grep -hq "age is unknown" "$OUT" "$ERR" && fail "make run: no unknown age" "$(grep -h 'age is unknown' "$OUT" "$ERR")" \
	|| pass "make run: no unknown age"

gp prices list --gpu h100 --provider aws --region us-east-1
expect_rc "prices list filters exit 0" 0
# p5.48xlarge us-east-1: 55.04 USD/h, 55.04 / 8 = 6.880 per GPU-hour,
# 55.04 * 730 = 40,179 per month.
expect_out "p5.48xlarge priced per node, GPU and month" "p5\.48xlarge +8x H100-SXM5-80GB +us-east-1 +55\.04 +6\.880 +\\\$40,179"
[ "$(grep -v '^NET:' "$OUT" | grep -c .)" = 3 ] && pass "three rows: header, p5.48xlarge, p5.4xlarge" \
	|| fail "three rows: header, p5.48xlarge, p5.4xlarge" "$(grep -c . "$OUT") lines"
# the network and the node limit a plan gets: EFA 3200 Gb/s and Capacity
# Blocks' 64 instances for p5.48xlarge; p5.4xlarge's one EFA card of 100
# Gb/s but no stated capacity, so one node
expect_out "p5.48xlarge: 3200 Gb/s, 64 nodes by gpuplan's policy" "p5\.48xlarge .* us-east-1 .* 3200 +64p  "
expect_out "p5.4xlarge: 100 Gb/s, one node" "p5\.4xlarge .* us-east-1 .* 100 +1  "
gp prices list --gpu h100 --spot --provider gcp --region us-central1
expect_out "spot: the 4-node spot bound, a policy" "a3-highgpu-8g .* 1000 +4p  "
gp prices list --provider lambda --gpu h100
expect_out "lambda: no network stated, one node" "gpu_8x_h100_sxm5 .* - +1  "

gp prices list --gpu H100 --provider gcp --spot
expect_rc "prices list --spot exits 0" 0
# Cheapest GCP H100 spot GPU-hour: europe-north1 at 10.20548 / 8 = 1.276.
expect_out "spot list starts with europe-north1" "^gcp +a3-highgpu-8g +8x H100-SXM5-80GB +europe-north1 +10\.21 +1\.276"
# AWS's dated rows carry no spot price: the snapshot's undated spot
# figures were emptied when their on-demand prices were dated
gp prices list --gpu H100 --provider aws --spot
expect_err "no AWS H100 spot offering" "^0 offerings from "
# Azure's ND H100 v5 in eastus: the Retail Prices API's spot meter as
# recorded on 2026-09-16 (18.169536), not the snapshot's undated 98.32
gp prices list --gpu H100 --provider azure --region eastus --spot
expect_out "azure ND H100 v5 eastus spot 18.17, dated 2026-09-16" \
	"^azure +Standard_ND96isr_H100_v5 +8x H100-SXM5-80GB +eastus +18\.17 +2\.271 .* 2026-09-16 +[0-9]+d$"

gp prices list --gpu a10g
expect_out "an offering whose GPU lacks bf16 is marked" "8x A10G\*"
expect_out "the mark is explained" "lacks a figure planning needs"

gp prices list --json --gpu B200
expect_rc "prices list --json exits 0" 0
expect_out "JSON names its schema" '"schema":[[:space:]]+"gpuplan.prices/1"'
expect_out "JSON gives USD per GPU-hour" '"usd_per_gpu_hour":[[:space:]]+6\.99,'

# GB200 trays of NVL72 racks: the row's 72 (azure) or the GPU's (oracle);
# an HGX board is its node's 8, one GPU of it 1
gp prices list --gpu GB200
expect_out "azure GB200: 108.16 a VM, 1600 Gb/s, 64 nodes by policy, domain 72" "^azure +Standard_ND128isr_NDR_GB200_v6 +4x GB200 +westus3 +108\.16 +27\.040 .* 1600 +64p +72 +2026-09-06"
expect_out "oracle GB200: the GPU's domain 72" "^oracle +BM\.GPU\.GB200\.4 +4x GB200 +all +64\.00 +16\.000 .* - +1 +72 +2026-09-01"
expect_out "NVLINK is explained" "NVLINK: GPUs of one NVLink domain"
gp prices list --gpu h100 --provider aws --region us-east-1
expect_out "p5.48xlarge: an 8-GPU domain" "^aws +p5\.48xlarge .* 3200 +64p +8 +2026-10-05 "
expect_out "p5.4xlarge: one GPU, a domain of 1" "^aws +p5\.4xlarge .* 100 +1 +1 +2026-10-05 "
gp prices list --gpu GB300 --json
expect_out "JSON gives the domain planning uses" '"nvlink_domain":[[:space:]]+72,'
expect_out "JSON says the row states none" '"nvlink_domain_stated":[[:space:]]+null,'

gp prices list --gpu H10O
expect_rc "unknown --gpu exits 2" 2
expect_err_lines "unknown --gpu: one error line" 1
expect_err "unknown --gpu suggests a name" "did you mean 'H100'"

gp prices list --sort cheapest
expect_rc "bad --sort exits 2" 2
expect_err "bad --sort names the flag" "^error: --sort: expected usd_per_gpu_hour"

gp gpus list
expect_rc "gpus list exits 0" 0
expect_out "gpus list shows H100 figures" "^H100-SXM5-80GB +80 +3\.35 +989\.4 +1978\.9"
expect_out "gpus list says why A10G cannot be planned" "^A10G .*no bf16_dense_tflops figure"
expect_out "gpus list shows B200's MXFP8 and NVFP4 peaks" "^B200 +180 +8 +2250 +4500 +4500 +9000 +1100 "
expect_out "gpus list shows GB300 and its NVL72 domain" "^GB300 +279 +8 +2500 +5000 +5000 +15000 +1250 +80 +1800 +yes +72 +1400 "
expect_out "an HGX board's domain is its node" "^H100-SXM5-80GB .* yes +node +700 "
gp gpus list --json
expect_out "gpus --json marks ineligible GPUs" '"eligible":[[:space:]]+false'
expect_out "gpus --json gives NVFP4 peaks" '"nvfp4_dense_tflops":[[:space:]]+15000,'
expect_out "gpus --json gives the NVLink domain" '"nvlink_domain":[[:space:]]+72,'
# a bad cell of gpus.csv: one line naming file:line:col, exit 2
mkdir -p "$TMP/badshare"
cp data/*.csv "$TMP/badshare/"
sed -i 's/^GB300,\(\([^,]*,\)\{12\}\)72,/GB300,\1seventy-two,/' "$TMP/badshare/gpus.csv"
GPUPLAN_SHARE_DIR="$TMP/badshare" gp gpus list
expect_rc "bad nvlink_domain in gpus.csv exits 2" 2
expect_err_lines "bad nvlink_domain in gpus.csv: one error line" 1
expect_err "bad nvlink_domain names gpus.csv:line:col" "gpus\.csv:[0-9]+:14: nvlink_domain: expected a whole number of GPUs from 0 to 65536 or an empty cell, found 'seventy-two'"

gp models list
expect_rc "models list exits 0" 0
expect_out "models list has llama3-70b" "^llama3-70b +80 +8192 +64 +8 +28672 +128256 +8192 +swiglu"
gp models show llama3-70b
expect_rc "models show exits 0" 0
# 80 layers x (2 x 8192^2 + 2 x 8192 x 1024 + 3 x 8192 x 28672 + 2 x 8192)
# + 2 x 128256 x 8192 (untied) + 8192 = 70,553,706,496.
expect_out "models show prints the exact parameter count" "^parameters +70,553,706,496"
gp models show llama3-70b --json
expect_out "models show --json" '"schema":[[:space:]]+"gpuplan.model/1"'
gp models show llama9
expect_rc "unknown model exits 2" 2
expect_err_lines "unknown model: one error line" 1

# ---- a first update creates the user's table
gp prices update $FIX/bom.csv
expect_rc "update with a byte-order mark exits 0" 0
# 55.04 -> 51.5 is (51.5 - 55.04) / 55.04 = -6.4%.
expect_out "update shows old -> new with percent" "on_demand_usd_per_hour 55\.04 -> 51\.5 \(-6\.4%\)"
expect_out "update counts" "^added 0, changed 1, unchanged 0"
[ -f "$TABLE" ] && pass "user table written" || fail "user table written" "no $TABLE"
[ "$(head -n1 "$TABLE")" = "# gpuplan-user-prices/2" ] && pass "user table starts with its format line" \
	|| fail "user table starts with its format line" "$(head -n1 "$TABLE")"
# the user's rows only: header and the one changed row, not the 155 shipped ones
[ "$(grep -c . "$TABLE")" = 3 ] && grep -q '^aws,p5\.48xlarge,H100-SXM5-80GB,8,us-east-1,51\.5,,3200,,t-bom,2026-12-04,$' "$TABLE" \
	&& pass "user table holds only the changed row" || fail "user table holds only the changed row" "$(grep -c . "$TABLE") lines"
gp prices list
expect_err "list counts the user's rows" "^155 offerings from .*data/prices\.csv with 1 rows of yours from .*/userdata/prices\.csv"
gp prices list --mine
expect_rc "prices list --mine exits 0" 0
expect_out "--mine lists the user's row" "^aws +p5\.48xlarge +8x H100-SXM5-80GB +us-east-1 +51\.50 +6\.438"
[ "$(grep -v '^NET:' "$OUT" | grep -c .)" = 2 ] && pass "--mine: header and one row" || fail "--mine: header and one row" "$(grep -c . "$OUT") lines"
gp prices list --mine --json
expect_out "--json marks the user's rows" '"mine":[[:space:]]+true'
cp "$TABLE" "$TMP/table.before"
cp "$HIST" "$TMP/hist.before"

same_table() { # NAME
	if cmp -s "$TABLE" "$TMP/table.before" && cmp -s "$HIST" "$TMP/hist.before"; then
		pass "$1: table and history unchanged"
	else
		fail "$1: table and history unchanged" "files differ"
	fi
}

bad() { # NAME FILE REGEX
	gp prices update "$2"
	expect_rc "$1 exits 2" 2
	expect_err_lines "$1: one error line" 1
	expect_err "$1: names file:line:col" "$3"
	same_table "$1"
}

bad "missing column" $FIX/missing_column.csv "missing_column\.csv:1:6: expected a column named 'gpu', found none"
bad "non-numeric price" $FIX/bad_price.csv "bad_price\.csv:2:6: on_demand_usd_per_hour: expected a price in USD per hour, found 'fifty'"
bad "negative price" $FIX/negative_price.csv "negative_price\.csv:2:6: on_demand_usd_per_hour: expected a price > 0 .*found '-3\.5'"
bad "unknown GPU" $FIX/unknown_gpu.csv "unknown_gpu\.csv:2:3: gpu: expected a GPU name or alias from gpus\.csv, found 'H10O' \(did you mean 'H100'\?\)"
bad "zero GPUs per node" $FIX/zero_gpus.csv "zero_gpus\.csv:2:4: gpus_per_node: expected an integer from 1 to 4096, found '0'"
bad "fractional NVLink domain" $FIX/bad_nvlink_domain.csv "bad_nvlink_domain\.csv:2:11: nvlink_domain: expected a whole number of GPUs from 0 to 65536 or an empty cell, found '2\.5'"
bad "duplicate key" $FIX/duplicate_key.csv "duplicate_key\.csv:4:1: expected one row per .*found \(aws, p5\.48xlarge, us-east-1\) again \(first at line 2\)"
bad "empty file" $FIX/empty.csv "empty\.csv:1:1: expected a header row .*found an empty file"
bad "header only" $FIX/header_only.csv "header_only\.csv:2:1: expected data rows after the header, found none"
bad "unterminated quote" $FIX/truncated_quote.csv "truncated_quote\.csv:2:5: expected a closing quote .*found the end of the file"
bad "stray quote" $FIX/stray_quote.csv "stray_quote\.csv:2:35: expected no quote inside an unquoted field"
{
	head -n1 $FIX/bom.csv | sed 's/^\xef\xbb\xbf//'
	printf 'aws,p5.48xlarge,H100,8,us-east-1,50,,,,%s\n' "$(head -c 5000 /dev/zero | tr '\0' v)"
} > "$TMP/long_line.csv"
bad "over-long line" "$TMP/long_line.csv" "long_line\.csv:2:10: expected a field of at most 4096 bytes, found 5000 bytes"
bad "SkyPilot file without --provider" $FIX/skypilot_aws.csv "^error: --provider: expected the cloud SkyPilot catalog"
# a misspelt column would be passed over: every spot price kept as it was
# and the rows reported unchanged; a repeated one would shadow the other
sed '1s/spot_usd_per_hour/spot_usd_per_hr/' $FIX/crlf.csv > "$TMP/typo_column.csv"
bad "misspelt column" "$TMP/typo_column.csv" \
	"typo_column\.csv:1:[0-9]+: expected each of gpuplan's price columns .* once, found 'spot_usd_per_hr' \(did you mean 'spot_usd_per_hour'\?\)"
sed '1s/$/,region/; 2,$s/$/,us-east-1/' $FIX/crlf.csv | tr -d '\r' > "$TMP/repeated_column.csv"
bad "repeated column" "$TMP/repeated_column.csv" \
	"repeated_column\.csv:1:[0-9]+: expected each of .* once, found 'region' again \(column [0-9]+\)"

gp prices update $FIX/crlf.csv --dry-run
expect_rc "dry run exits 0" 0
expect_out "dry run says so" "^dry run: nothing written"
grep -q '^no changes' "$OUT" && fail "dry run: no 'no changes' line" "$(grep '^no changes' "$OUT")" \
	|| pass "dry run: no 'no changes' line"
same_table "dry run"

# ---- injected crashes: between write and rename nothing changes
for point in after_write after_fsync before_rename; do
	# The braces keep bash's "Killed" notice out of the log.
	{ GPUPLAN_FAULT=$point:kill $GPUPLAN prices update $FIX/crlf.csv >"$OUT" 2>"$ERR"; RC=$?; } 2>/dev/null
	expect_rc "killed at $point: exit 137" 137
	same_table "killed at $point"
	ls -a "$GPUPLAN_DATA_DIR" | grep -q '^\.prices\.csv\.tmp' \
		&& pass "killed at $point: temp file left for the next update to remove" \
		|| fail "killed at $point: temp file left for the next update to remove" "none"
	gp prices history
	same_table "history read after a kill at $point"
done

# Killed after the rename: the new table is in place and its history
# is completed by the next reader.
{ GPUPLAN_FAULT=after_rename:kill $GPUPLAN prices update $FIX/crlf.csv >"$OUT" 2>"$ERR"; RC=$?; } 2>/dev/null
expect_rc "killed after rename: exit 137" 137
grep -q '52\.5' "$TABLE" && pass "killed after rename: new table in place" \
	|| fail "killed after rename: new table in place" "no 52.5"
cmp -s "$HIST" "$TMP/hist.before" && pass "killed after rename: history not yet appended" \
	|| fail "killed after rename: history not yet appended" "history changed"
gp prices history
expect_rc "history after a kill exits 0" 0
expect_out "history completed from the pending file" "p4d\.24xlarge +us-east-1 +on_demand_usd_per_hour +21\.957642 +21"
[ ! -e "$GPUPLAN_DATA_DIR/prices.history.pending" ] && pass "pending history consumed" \
	|| fail "pending history consumed" "still there"

gp prices update $FIX/quoted_commas.csv
expect_rc "quoted fields with commas accepted" 0
expect_out "quoted region kept whole" "vast 1x-RTX_4090-32-65536 Germany, DE, EU: on_demand_usd_per_hour 0\.4 -> 0\.41"
ls -a "$GPUPLAN_DATA_DIR" | grep -q '^\.prices\.csv\.tmp' \
	&& fail "stale temp files removed" "still there" || pass "stale temp files removed"

gp prices update $FIX/no_final_newline.csv
expect_rc "missing final newline accepted" 0
expect_out "last line read" "g6\.48xlarge us-east-1: on_demand_usd_per_hour 13\.3504 -> 13\.5"

gp prices update $FIX/skypilot_aws.csv --provider aws
expect_rc "SkyPilot catalog accepted with --provider" 0
expect_out "CPU rows skipped and counted" "skipped 1 rows without a GPU"
expect_out "unknown GPUs skipped and named" "skipped 1 rows whose GPU gpus.csv lacks: T4"
expect_out "zones folded, lowest price kept" "3 availability-zone rows folded into 1 region; each keeps its lowest price"
expect_out "spot = lowest zone" "spot_usd_per_hour - -> 16\.5"
gp prices update $FIX/skypilot_gcp_parts.csv --provider gcp --dry-run
expect_rc "a catalog pricing hosts apart: exit 0" 0
expect_out "GPU-only rows skipped" "skipped 1 GPU-only rows with no instance type"
expect_out "GPU rows completed with their host" "completed 1 GPU rows with their host VM row"
expect_out "GPU rows without a priced host flagged" "skipped 2 GPU rows whose host VM row is missing or priced 0 \(a4-highgpu-8g us-central1, a3-highgpu-8g us-west4\)"

gp prices list --gpu H100 --provider aws --region us-east-1 --spot
expect_out "list reads the user's table" "us-east-1 +16\.50 +2\.062"
expect_err "list names the user's table" "offerings from .*/userdata/prices\.csv"

# ---- concurrent updates all land
H="provider,instance_type,gpu,gpus_per_node,region,on_demand_usd_per_hour"
for i in 1 2 3 4; do
	printf '%s\nconc,node%d,L4,1,r%d,%d.25\n' "$H" $i $i $i > "$TMP/conc$i.csv"
done
for i in 1 2 3 4; do
	$GPUPLAN prices update "$TMP/conc$i.csv" >"$TMP/conc$i.out" 2>&1 &
done
wait
n=$(grep -c '^conc,' "$TABLE")
[ "$n" = 4 ] && pass "four concurrent updates all in the table" || fail "four concurrent updates all in the table" "$n rows"
n=$(grep -c ',conc,' "$HIST")
[ "$n" = 4 ] && pass "four concurrent updates all in the history" || fail "four concurrent updates all in the history" "$n lines"

gp prices history --json
expect_out "history --json" '"schema":[[:space:]]+"gpuplan.price_history/1"'
gp prices update $FIX/crlf.csv --gpu H100
expect_rc "list flags with update exit 2" 2
gp prices update $FIX/crlf.csv --mine
expect_rc "--mine with update exits 2" 2

# ---- a newer shipped table: its rows show through where the user has none
NEWER="$TMP/newer"
mkdir -p "$NEWER"
cp data/*.csv "$NEWER/"
# The newer release lowers p5.4xlarge us-east-1 (no row of the user's) from
# 6.88 to 6.5 and p5.48xlarge us-east-1 (the user's row: 55.04 on demand,
# spot 16.5 since the SkyPilot update) to 40, and adds a provider.
sed -i -e 's/^aws,p5\.4xlarge,H100-SXM5-80GB,1,us-east-1,6\.88,/aws,p5.4xlarge,H100-SXM5-80GB,1,us-east-1,6.5,/' \
	-e 's/^aws,p5\.48xlarge,H100-SXM5-80GB,8,us-east-1,55\.04,/aws,p5.48xlarge,H100-SXM5-80GB,8,us-east-1,40,/' \
	"$NEWER/prices.csv"
echo 'newcloud,h8,H100-SXM5-80GB,8,moon-1,30,,,,v-next,,' >> "$NEWER/prices.csv"
grep -q '^aws,p5\.4xlarge,H100-SXM5-80GB,1,us-east-1,6\.5,' "$NEWER/prices.csv" \
	&& grep -q '^aws,p5\.48xlarge,H100-SXM5-80GB,8,us-east-1,40,' "$NEWER/prices.csv" \
	|| fail "newer shipped table prepared" "sed matched nothing"
GPUPLAN_SHARE_DIR="$NEWER" gp prices list --gpu H100 --provider aws --region us-east-1
expect_rc "list over a newer shipped table exits 0" 0
# 6.5 / 1 GPU = 6.500 per GPU-hour; the user's 55.04 / 8 = 6.880.
expect_out "a newer shipped price shows through" "p5\.4xlarge +1x H100-SXM5-80GB +us-east-1 +6\.50 +6\.500"
expect_out "the user's row wins over the newer shipped one" "p5\.48xlarge +8x H100-SXM5-80GB +us-east-1 +55\.04 +6\.880"
GPUPLAN_SHARE_DIR="$NEWER" gp prices list --provider newcloud
expect_out "a row the newer shipped table adds shows" "^newcloud +h8 +8x H100-SXM5-80GB +moon-1 +30\.00"

# ---- a stored table that is bad: file:line:col of the user's file, exit 2
mkdir -p "$TMP/broken"
sed '4s/,52\.5,/,fifty,/' "$TABLE" > "$TMP/broken/prices.csv"
grep -q fifty "$TMP/broken/prices.csv" || fail "broken user table prepared" "no row 4 with 52.5"
GPUPLAN_DATA_DIR="$TMP/broken" gp prices list
expect_rc "a bad user table exits 2" 2
expect_err_lines "a bad user table: one error line" 1
expect_err "a bad user table: names its own line" "broken/prices\.csv:4:6: on_demand_usd_per_hour: expected a price in USD per hour, found 'fifty'"

# ---- a full copy an older gpuplan stored (no format line) still loads,
# every row of it the user's, and the next update keeps only the rows that
# differ from the shipped table.  The copy is today's table less the row
# only a shipped table may hold (P6e-GB200 and p6-b300 in us-east-1, no
# price: a capacity block's);
# the user's table must price every row.
LEGACY="$TMP/legacy"
mkdir -p "$LEGACY"
sed -e 's/^aws,p5\.4xlarge,H100-SXM5-80GB,1,us-east-1,6\.88,/aws,p5.4xlarge,H100-SXM5-80GB,1,us-east-1,6,/' \
	-e '/^aws,p6e-gb200\./d' -e '/^aws,p6-b300\.48xlarge,B300,8,us-east-1,,,/d' data/prices.csv > "$LEGACY/prices.csv"
GPUPLAN_DATA_DIR="$LEGACY" gp prices list --gpu H100 --provider aws --region us-east-1
expect_rc "an older full copy loads" 0
expect_out "the copy's price is read" "p5\.4xlarge +1x H100-SXM5-80GB +us-east-1 +6\.00"
expect_err "list says the copy counts as the user's" "is a full copy an older gpuplan wrote"
GPUPLAN_DATA_DIR="$LEGACY" gp prices list --mine
[ "$(grep -c "^[a-z]" "$OUT")" = 153 ] && pass "every row of the copy is the user's (153)" \
	|| fail "every row of the copy is the user's (153)" "$(grep -c "^[a-z]" "$OUT") rows"
GPUPLAN_DATA_DIR="$LEGACY" gp prices update $FIX/crlf.csv
expect_rc "an update over the copy exits 0" 0
expect_out "it rewrites the copy as the user's rows" "wrote .*legacy/prices\.csv \(3 rows of yours; 155 offerings"
expect_out "and says so" "it was a full copy an older gpuplan wrote"
[ "$(head -n1 "$LEGACY/prices.csv")" = "# gpuplan-user-prices/2" ] && [ "$(grep -c . "$LEGACY/prices.csv")" = 5 ] \
	&& grep -q '^aws,p5\.4xlarge,H100-SXM5-80GB,1,us-east-1,6,' "$LEGACY/prices.csv" \
	&& pass "rewritten: format line, header, the copy's changed row and crlf.csv's two" \
	|| fail "rewritten: format line, header, the copy's changed row and crlf.csv's two" "$(cat "$LEGACY/prices.csv")"

# ---- size caps: a file past 32 MiB, or a merge past 20000 offerings, is
# refused before anything is stored (every command reads the table)
export GPUPLAN_DATA_DIR="$TMP/caps"
mkdir -p "$GPUPLAN_DATA_DIR"
head -1 data/prices.csv > "$TMP/huge.csv"
truncate -s 33M "$TMP/huge.csv"
gp prices update "$TMP/huge.csv"
expect_rc "a 33 MiB update exits 2" 2
expect_err_lines "a 33 MiB update: one error line" 1
expect_err "a 33 MiB update says the cap" "huge\.csv: expected at most 32 MiB, found 33\.0 MiB"
{ head -1 data/prices.csv; awk 'BEGIN { for (i = 0; i < 20001; i++) printf "acloud,x%d,H100,8,r1,10,,,,,,\n", i }'; } > "$TMP/many.csv"
gp prices update "$TMP/many.csv"
expect_rc "20001 offerings more exit 2" 2
expect_err "the offerings cap is named" "expected a price table of at most 20000 offerings, found 20156 after the merge"
[ ! -e "$GPUPLAN_DATA_DIR/prices.csv" ] && pass "nothing stored after a refused update" \
	|| fail "nothing stored after a refused update" "$(ls "$GPUPLAN_DATA_DIR")"

finish
