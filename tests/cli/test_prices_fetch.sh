#!/usr/bin/env bash
# test_prices_fetch.sh - `gpuplan prices fetch aws|azure|gcp|lambda` on
# trimmed responses of each price list (tests/fixtures/fetch/): fed to
# --from-file for the parsers, and served by a loopback HTTP server
# (price_server.py) for the network path: paging, the API key kept out of
# URLs, output and files, and every failure (a 500, a timeout, a response
# cut in the middle, a malformed page, no server at all) leaving the user's
# table byte-identical.
. "$(dirname "$0")/lib.sh"
export GPUPLAN_SHARE_DIR="$PWD/data"
FIX=tests/fixtures/fetch
TABLE="$GPUPLAN_DATA_DIR/prices.csv"
HIST="$GPUPLAN_DATA_DIR/prices.history.csv"
unset GOOGLE_API_KEY LAMBDA_API_KEY GPUPLAN_PRICE_URL_AWS GPUPLAN_PRICE_URL_AZURE GPUPLAN_PRICE_URL_GCP \
	GPUPLAN_PRICE_URL_LAMBDA

# fetched_json PROVIDER FILE: the fetch's JSON report of a saved response
fetched_json() { $GPUPLAN prices fetch "$1" --from-file "$2" --dry-run --json >"$OUT" 2>"$ERR"; RC=$?; }
# row_val INSTANCE REGION KEY: one figure of the JSON report in $OUT
row_val() {
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
for o in r["offerings"]:
    if o["instance_type"] == sys.argv[2] and o["region"] == sys.argv[3]:
        print(o[sys.argv[4]])' "$OUT" "$1" "$2" "$3"
}
# same NAME GOT WANT: two numbers agree to 1e-9 relative
same() {
	python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 1e-9 * max(1, abs(b)))' "$2" "$3" \
		&& pass "$1" || fail "$1" "found $2, expected $3"
}

# ---- AWS: the offer file, on-demand Linux rows of the instance types the table knows
fetched_json aws "$FIX/aws-us-east-1.csv"
expect_rc "aws --from-file --dry-run exits 0" 0
[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["offerings"]))' "$OUT")" = 3 ] \
	&& pass "aws: three GPU offerings (Windows, reserved, unused reservation, dedicated, CPU rows passed over)" \
	|| fail "aws: three GPU offerings" "$(cat "$OUT")"
same "aws p5.48xlarge us-east-1 on demand = the file's 55.04" "$(row_val p5.48xlarge us-east-1 on_demand_usd_per_hour)" 55.04
same "aws p5en.48xlarge us-east-1 = 63.296" "$(row_val p5en.48xlarge us-east-1 on_demand_usd_per_hour)" 63.296
same "aws p6-b200.48xlarge us-east-1 = 113.9328" "$(row_val p6-b200.48xlarge us-east-1 on_demand_usd_per_hour)" 113.9328
[ "$(row_val p5.48xlarge us-east-1 price_date)" = 2026-11-20 ] \
	&& pass "aws rows are dated with the file's Publication Date" || fail "aws date" "$(row_val p5.48xlarge us-east-1 price_date)"
row_val p5.48xlarge us-east-1 source | grep -q "rate 2Z6QSP2XHCYN8CQH.JRTCKXETXF.6YS6EN2CT7" \
	&& pass "aws rows name their rate code (SKU.offer term.rate)" || fail "aws sku" "$(row_val p5.48xlarge us-east-1 source)"
[ "$(row_val p5.48xlarge us-east-1 spot_usd_per_hour)" = None ] \
	&& pass "aws: the offer file gives no spot price" || fail "aws spot" "$(row_val p5.48xlarge us-east-1 spot_usd_per_hour)"
[ ! -e "$TABLE" ] && pass "aws --dry-run writes no table" || fail "aws --dry-run writes no table" "$TABLE exists"

gp prices fetch aws --from-file "$FIX/aws-us-west-2.csv"
expect_rc "aws --from-file us-west-2 exits 0" 0
expect_out "p6-b300.48xlarge us-west-2 dated anew" "p6-b300\.48xlarge us-west-2: price_date '2026-10-05' -> '2026-11-20'"
expect_out "the stored spot price stays (the file has none)" "^added 0, changed 3, unchanged 0"
expect_no_out "no spot price changed" "spot_usd_per_hour"
gp prices list --provider aws --region us-west-2 --gpu b300
expect_out "prices list: p6-b300 142.416, dated, 14 days old" "p6-b300\.48xlarge .* 142\.42 .* 2026-11-20 +14d"
grep -q "p6-b300.48xlarge,us-west-2,price_date,2026-10-05,2026-11-20" "$HIST" \
	&& pass "the fetch's changes are in the history" || fail "history" "$(tail -3 "$HIST")"
# make run's question on demand (--blocks none): its answer is the
# p6-b300 row, now of a known age
gp plan --model llama3-70b --tokens 1T --budget 2.5M --blocks none -o "$TMP/plan.json"
expect_rc "plan after the fetch exits 0" 0
grep -Eq "p6-b300\.48xlarge us-west-2 on-demand dated 2026-11-20 .*: 14 days old" "$OUT" "$ERR" \
	&& pass "make run's answer prints its price's age in days" || fail "price age" "$(grep -h 'prices' "$OUT" "$ERR")"
grep -hq "age is unknown" "$OUT" "$ERR" && fail "no unknown age" "an age is still unknown" || pass "no unknown age"

# ---- Azure: on demand, spot, 1- and 3-year reservations per hour
fetched_json azure "$FIX/azure-retail.json"
expect_rc "azure --from-file exits 0" 0
H1=Standard_ND96isr_H100_v5 H2=Standard_ND96isr_H200_v5
same "azure ND H100 v5 eastus on demand 98.32" "$(row_val $H1 eastus on_demand_usd_per_hour)" 98.32
same "azure ND H100 v5 eastus spot 18.169536" "$(row_val $H1 eastus spot_usd_per_hour)" 18.169536
same "azure ND H100 v5 1-year: 538,000 over 8,760 hours" "$(row_val $H1 eastus reserved_1y_usd_per_hour)" "$(python3 -c 'print(538000/8760)')"
same "azure ND H100 v5 3-year: 1,099,920 over 26,280 hours" "$(row_val $H1 eastus reserved_3y_usd_per_hour)" "$(python3 -c 'print(1099920/26280)')"
same "azure ND H200 v5 eastus2 on demand 110.24" "$(row_val $H2 eastus2 on_demand_usd_per_hour)" 110.24
same "azure ND H200 v5 spot 44.096" "$(row_val $H2 eastus2 spot_usd_per_hour)" 44.096
same "azure ND H200 v5 1-year" "$(row_val $H2 eastus2 reserved_1y_usd_per_hour)" "$(python3 -c 'print(602000/8760)')"
same "azure ND H200 v5 3-year" "$(row_val $H2 eastus2 reserved_3y_usd_per_hour)" "$(python3 -c 'print(1235000/26280)')"
[ "$(row_val $H1 eastus price_date)" = 2026-12-04 ] && pass "azure rows dated the day of the fetch" \
	|| fail "azure date" "$(row_val $H1 eastus price_date)"
row_val $H1 eastus source | grep -q "meter 4a3f5d2e-71c8-5b0e-9f4a-1c2d3e4f5a61 from 2025-10-01" \
	&& pass "azure rows name the on-demand meter and its effective date" || fail "azure source" "$(row_val $H1 eastus source)"
gp prices fetch azure --from-file "$FIX/azure-retail.json" --dry-run
expect_out "azure: the H200 v5 (described by machines.csv) is added" "^  \+ azure Standard_ND96isr_H200_v5 eastus2: 8x H200-SXM-141GB on_demand=110\.24 spot=44\.096"
expect_out "azure: reservations are shown per hour" "reserved 1y 61\.4155/h, reserved 3y 41\.8539/h"

# reservations as commitments.csv rows, which plan --reserved reads
gp prices fetch azure --from-file "$FIX/azure-retail.json" --dry-run --commitments-out "$TMP/commit.csv"
[ ! -e "$TMP/commit.csv" ] && pass "--commitments-out: a dry run writes none" || fail "--commitments-out dry run" "written"
gp prices fetch azure --from-file "$FIX/azure-retail.json" --commitments-out "$TMP/commit.csv"
expect_out "--commitments-out: four written" "^wrote .*commit\.csv \(4 commitments"
grep -q '^azure,Standard_ND96isr_H100_v5,H100-SXM5-80GB,1,37.5351,2026-12-04,".*",Standard_ND96isr_H100_v5,eastus,98.32$' "$TMP/commit.csv" \
	&& pass "--commitments-out: 1 - (538,000 / 8,760) / 98.32 = 37.5351% off, with its base price" \
	|| fail "--commitments-out row" "$(cat "$TMP/commit.csv")"
gp plan --model llama3-8b --tokens 10B --budget 50k --gpu h200 --reserved --commitments "$TMP/commit.csv" -o "$TMP/r.json"
expect_rc "plan --reserved reads the fetched commitments" 0
expect_out "plan --reserved: the four fetched commitments considered" "^reserved: considered \(4 commitments\)"

# ---- GCP: a node is its GPU, core and RAM SKUs
fetched_json gcp "$FIX/gcp-skus.json"
expect_rc "gcp --from-file exits 0" 0
same "gcp a3-highgpu-8g us-central1 = 8 x 9.796550569 + 208 x 0.031611 + 1872 x 0.00265" \
	"$(row_val a3-highgpu-8g us-central1 on_demand_usd_per_hour)" "$(python3 -c 'print(round(8*9.796550569 + 208*0.031611 + 1872*0.00265, 6))')"
same "gcp a3-highgpu-8g spot = the Preemptible SKUs' sum" \
	"$(row_val a3-highgpu-8g us-central1 spot_usd_per_hour)" "$(python3 -c 'print(round(8*2.25 + 208*0.007903 + 1872*0.000663, 6))')"
same "gcp a3-ultragpu-8g us-central1 = 8 x 9.3117 + 224 x 0.028 + 2952 x 0.0028" \
	"$(row_val a3-ultragpu-8g us-central1 on_demand_usd_per_hour)" "$(python3 -c 'print(round(8*9.3117 + 224*0.028 + 2952*0.0028, 6))')"
same "gcp a3-highgpu-8g us-east4 priced too (the SKUs serve both regions)" \
	"$(row_val a3-highgpu-8g us-east4 on_demand_usd_per_hour)" "$(row_val a3-highgpu-8g us-central1 on_demand_usd_per_hour)"
same "gcp a3-megagpu-8g us-east4 = 8 x 10.344276 + 208 x 0.026924 + 1872 x 0.002344 (the H100 Plus and A3Plus SKUs)" \
	"$(row_val a3-megagpu-8g us-east4 on_demand_usd_per_hour)" "$(python3 -c 'print(round(8*10.344276 + 208*0.026924 + 1872*0.002344, 6))')"
same "gcp a4-highgpu-8g us-central1 = 8 x 16.11 + 224 x 0.03 + 3968 x 0.003 (machines.csv: Google's A4 table)" \
	"$(row_val a4-highgpu-8g us-central1 on_demand_usd_per_hour)" "$(python3 -c 'print(round(8*16.11 + 224*0.03 + 3968*0.003, 6))')"
grep -Eq '"skipped_why":[[:space:]]*".*a4-highgpu-8g: machines.csv states no' "$OUT" && fail "gcp: a4 not skipped" "$(grep skipped "$OUT")" \
	|| pass "gcp: a4 not skipped now that machines.csv states its memory"
# the A4 B200's spot SKU is tagged usageType OnDemand and worded "Spot
# Preemptible ...": it is the GPUs' spot part, never an on-demand price
same "gcp a4-highgpu-8g spot = 8 x 4.9542 (a spot SKU tagged OnDemand) + 224 x 0.0075 + 3968 x 0.00075" \
	"$(row_val a4-highgpu-8g us-central1 spot_usd_per_hour)" "$(python3 -c 'print(round(8*4.9542 + 224*0.0075 + 3968*0.00075, 6))')"
row_val a3-highgpu-8g us-central1 source | grep -q "SKUs E1D5-7F3A-2B41 x8 + 6B8E-2C1D-4F70 x208 + C3F1-8A2B-6E94 x1872" \
	&& pass "gcp rows name their three SKUs and counts" || fail "gcp source" "$(row_val a3-highgpu-8g us-central1 source)"

# ---- Lambda: one on-demand row of region "all" per instance type the table knows
fetched_json lambda "$FIX/lambda-instance-types.json"
expect_rc "lambda --from-file exits 0" 0
same "lambda gpu_8x_h100_sxm5 = 3192 cents" "$(row_val gpu_8x_h100_sxm5 all on_demand_usd_per_hour)" 31.92
same "lambda gpu_1x_gh200 = 229 cents" "$(row_val gpu_1x_gh200 all on_demand_usd_per_hour)" 2.29
[ "$(row_val gpu_8x_h100_sxm5 all spot_usd_per_hour)" = None ] && pass "lambda: no spot price" \
	|| fail "lambda spot" "$(row_val gpu_8x_h100_sxm5 all spot_usd_per_hour)"
[ -z "$(row_val gpu_2x_h100_sxm5 all on_demand_usd_per_hour)" ] && pass "lambda: a type the table lacks is not added" \
	|| fail "lambda: gpu_2x_h100_sxm5" "added"
row_val gpu_8x_h100_sxm5 all source | grep -q "^Lambda Cloud API instance-types gpu_8x_h100_sxm5 3192 cents/h$" \
	&& pass "lambda rows name the type and its price in cents" || fail "lambda source" "$(row_val gpu_8x_h100_sxm5 all source)"
gp prices fetch lambda --from-file "$FIX/lambda-instance-types.json" --dry-run
expect_out "lambda: a row the response prices alike takes its date" "gpu_1x_a100_sxm4 all: price_date '2026-09-25' -> '2026-12-04'"
printf '{"error": {"code": "global/invalid-api-key", "message": "API key was invalid"}}\n' >"$TMP/lambda-err.json"
gp prices fetch lambda --from-file "$TMP/lambda-err.json" --dry-run
expect_rc "lambda: an error response exits 2" 2
expect_err_lines "lambda: an error response: one error line" 1
expect_err "lambda: an error response names its code" "lambda-err\.json: expected instance types, found an error response \(code 'global/invalid-api-key'\)"

# ---- the network path, on a loopback server
# start_server MODE: serves the fixtures for at most 60 s (15 min under
# valgrind, where each command is slower); sets PORT, SPID
LIFE=60
[ "${VALGRIND:-0}" = 1 ] && LIFE=900
start_server() {
	rm -f "$TMP/port" "$TMP/requests"
	python3 tests/cli/price_server.py "$FIX" "$1" "$TMP/port" "$TMP/requests" "$LIFE" &
	SPID=$!
	for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.05; done
	PORT=$(cat "$TMP/port" 2>/dev/null)
	URL="http://127.0.0.1:$PORT"
}
stop_server() { [ -n "${SPID:-}" ] && kill "$SPID" 2>/dev/null; wait "${SPID:-}" 2>/dev/null; SPID=; }
trap 'stop_server; rm -rf "$TMP"' EXIT

start_server ok
gp prices fetch aws --endpoint "$URL" --region us-east-1 --region us-west-2
expect_rc "aws over HTTP: two regions' offer files" 0
expect_out "aws over HTTP: 2 responses" "^aws: 2 responses, "
expect_out "aws over HTTP: p5.48xlarge us-east-1 dated anew" "p5\.48xlarge us-east-1: price_date '2026-10-05' -> '2026-11-20'"
: >"$TMP/requests"
gp prices fetch aws --endpoint "$URL" --region us-east-1-dfw-2a --region us-east-1 --dry-run
expect_rc "aws: a Local Zone and its region" 0
[ "$(cat "$TMP/requests")" = "/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.csv key=none" ] \
	&& pass "aws: a Local Zone's prices are read from its region's one offer file" \
	|| fail "aws: Local Zone" "$(cat "$TMP/requests")"
GPUPLAN_PRICE_URL_AZURE="$URL" gp prices fetch azure --timeout 10
expect_rc "azure over HTTP (the URL from the environment)" 0
expect_out "azure over HTTP follows NextPageLink: 2 pages" "^azure: 2 responses, "
expect_out "azure over HTTP: both pages' rows" "Standard_ND96isr_H200_v5 eastus2: 8x H200-SXM-141GB on-demand 110\.2400"
grep -q "armSkuName%20eq%20%27Standard_ND96isr_H100_v5%27" "$TMP/requests" \
	&& pass "azure's query asks for the table's instance types" || fail "azure query" "$(head -1 "$TMP/requests")"
gp prices fetch gcp --endpoint "$URL" --dry-run
expect_rc "gcp without GOOGLE_API_KEY exits 2" 2
expect_err_lines "gcp without a key: one error line" 1
expect_err "gcp: the key comes from the environment" "GOOGLE_API_KEY: expected a Cloud Billing API key in the environment"
GOOGLE_API_KEY=sekrit-test-key-123 gp prices fetch gcp --endpoint "$URL" --region us-central1
expect_rc "gcp over HTTP with a key" 0
expect_out "gcp over HTTP follows nextPageToken: 2 pages" "^gcp: 2 responses, "
expect_out "gcp over HTTP: a3-ultragpu-8g from page 2" "a3-ultragpu-8g us-central1: 8x H200-SXM-141GB on-demand 89\.0312"
grep -q "key=header" "$TMP/requests" && ! grep -q "sekrit" "$TMP/requests" \
	&& pass "gcp: the key travels in a header, never in a URL" || fail "gcp key" "$(cat "$TMP/requests")"
! grep -rq "sekrit" "$OUT" "$ERR" "$GPUPLAN_DATA_DIR" \
	&& pass "gcp: the key is printed nowhere and written nowhere" || fail "gcp key leak" "found it"
gp prices fetch lambda --endpoint "$URL" --dry-run
expect_rc "lambda without LAMBDA_API_KEY exits 2" 2
expect_err_lines "lambda without a key: one error line" 1
expect_err "lambda: the key comes from the environment" "LAMBDA_API_KEY: expected a Lambda Cloud API key in the environment"
: >"$TMP/requests"
LAMBDA_API_KEY=lambda-sekrit-456 GPUPLAN_PRICE_URL_LAMBDA="$URL" gp prices fetch lambda
expect_rc "lambda over HTTP with a key" 0
expect_out "lambda over HTTP: one response" "^lambda: 1 response, "
expect_out "lambda over HTTP: gpu_1x_a100_sxm4 dated anew" "gpu_1x_a100_sxm4 all: price_date '2026-09-25' -> '2026-12-04'"
[ "$(cat "$TMP/requests")" = "/api/v1/instance-types key=header" ] \
	&& pass "lambda: the key travels in a header, never in a URL" || fail "lambda key" "$(cat "$TMP/requests")"
! grep -rq "sekrit" "$OUT" "$ERR" "$GPUPLAN_DATA_DIR" \
	&& pass "lambda: the key is printed nowhere and written nowhere" || fail "lambda key leak" "found it"
stop_server

# ---- failures: one line, exit 1 (network) or 2 (bad response), the table untouched
cp "$TABLE" "$TMP/before.csv"
cp "$HIST" "$TMP/before.history.csv"
unchanged() {
	cmp -s "$TABLE" "$TMP/before.csv" && cmp -s "$HIST" "$TMP/before.history.csv" \
		&& pass "$1: table and history byte-identical" || fail "$1: table and history byte-identical" "changed"
}

start_server 500
gp prices fetch aws --endpoint "$URL" --region us-east-1
expect_rc "a 500 exits 1" 1
expect_err_lines "a 500: one error line" 1
expect_err "a 500 says what it found" "index\.csv: expected HTTP status 200, found 500"
unchanged "a 500"
stop_server

start_server 500
cp "$TABLE" "$TMP/before.csv"
cp "$HIST" "$TMP/before.history.csv"
LAMBDA_API_KEY=k gp prices fetch lambda --endpoint "$URL"
expect_rc "lambda: a 500 exits 1" 1
expect_err_lines "lambda: a 500: one error line" 1
expect_err "lambda: a 500 says what it found" "instance-types: expected HTTP status 200, found 500"
unchanged "a Lambda fetch answered 500"
stop_server

start_server slow
gp prices fetch azure --endpoint "$URL" --timeout 1
expect_rc "a timeout exits 1" 1
expect_err_lines "a timeout: one error line" 1
expect_err "a timeout names --timeout" "expected the whole response within 1 s \(--timeout\)"
unchanged "a timeout"
stop_server

# the fetch killed in the middle: the second region's offer file is cut
# after half its bytes, after the first was read and parsed whole
start_server truncate2
gp prices fetch aws --endpoint "$URL" --region us-east-1 --region us-west-2
expect_rc "an offer file cut in the middle exits 1" 1
expect_err_lines "cut in the middle: one error line" 1
expect_err "cut in the middle: says so" "us-west-2/index\.csv: expected the whole response, found it cut short"
unchanged "an AWS fetch cut in the middle"
stop_server

start_server truncate2
gp prices fetch azure --endpoint "$URL"
expect_rc "azure's second page cut exits 1" 1
unchanged "an Azure fetch cut on its second page"
stop_server

gp prices fetch aws --endpoint "http://127.0.0.1:9" --region us-east-1 --timeout 5
expect_rc "no network (nothing listening) exits 1" 1
expect_err_lines "no network: one error line" 1
expect_err "no network: one clear line" "cannot connect .*is the network down\? \(--from-file FILE"
unchanged "no network"

head -c 3000 "$FIX/azure-retail.json" >"$TMP/azure-cut.json"
gp prices fetch azure --from-file "$TMP/azure-cut.json"
expect_rc "a truncated saved page exits 2" 2
expect_err_lines "a truncated page: one error line" 1
expect_err "a truncated page: malformed JSON at its byte" "azure-cut\.json: expected a Retail Prices page \(JSON\), found malformed JSON at byte"
unchanged "a truncated saved page"

printf '{"skus": 7}\n' >"$TMP/gcp-bad.json"
gp prices fetch gcp --from-file "$TMP/gcp-bad.json"
expect_rc "a page of the wrong shape exits 2" 2
expect_err "the wrong shape: where" "gcp-bad\.json: \.skus: expected the page's array of SKUs, found something else"
unchanged "a page of the wrong shape"

printf '"FormatVersion","v1.0"\n"SKU","TermType"\n' >"$TMP/aws-noheader.csv"
gp prices fetch aws --from-file "$TMP/aws-noheader.csv"
expect_rc "an offer file missing its columns exits 2" 2
expect_err "names the missing column" "expected the offer file's column 'Unit' in its header"
unchanged "an offer file missing its columns"

gp prices fetch oracle
expect_rc "an unknown provider exits 2" 2
expect_err "an unknown provider: what is expected" "expected a provider aws, azure, gcp or lambda, found 'oracle'"
gp prices list --from-file x.csv
expect_rc "--from-file belongs to fetch" 2
gp prices fetch aws --endpoint ftp.example.com
expect_rc "--endpoint must be an http(s) URL" 2
expect_err "--endpoint: what it expects" "--endpoint: expected a URL starting https:// or http://"

finish
