#!/usr/bin/env bash
# test_quotas.sh - `gpuplan quotas` as a user types it: list, update and
# history round-trip; a dry run changes nothing; concurrent updates all
# land; a bad row is one error line naming file:line:col, exit 2, with the
# stored table and history byte-for-byte unchanged; a misspelt column and
# an unknown GPU get a "did you mean"; a bad stored table stops every
# command that reads it.
. "$(dirname "$0")/lib.sh"
export GPUPLAN_SHARE_DIR="$PWD/data"
TABLE="$GPUPLAN_DATA_DIR/quotas.csv"
HIST="$GPUPLAN_DATA_DIR/quotas.history.csv"
H="provider,region,gpu,max_gpus,instance_type"

# ---- help
gp quotas --help
expect_rc "quotas --help exits 0" 0
expect_out "quotas --help names update --dry-run" "update FILE \[--dry-run\]"
expect_out "quotas --help says an empty max_gpus removes" "an empty max_gpus removes it"
gp help quotas
expect_rc "help quotas exits 0" 0
gp help
expect_out "help lists quotas" "^  quotas +list, update and show the history of your GPU quotas"

# ---- no quotas yet
gp quotas list
expect_rc "list without quotas exits 0" 0
expect_err "list says there are none" "you have no quotas"
gp quotas history
expect_rc "history without quotas exits 0" 0
expect_err "history says there is none" "no quota changes recorded yet"

# ---- a dry run writes nothing
printf '%s\n%s\n%s\n%s\n' "$H" "AWS,us-east-1,h100,64," "aws,*,A100-80GB,16,*" \
	"lambda,us-west-1,H100,8,gpu_8x_h100_sxm5" > "$TMP/q1.csv"
gp quotas update "$TMP/q1.csv" --dry-run
expect_rc "dry run exits 0" 0
expect_out "dry run shows the rows it would add" "^  \+ aws us-east-1 H100-SXM5-80GB \*: max_gpus 64$"
expect_out "dry run says so" "^dry run: nothing written"
[ ! -e "$TABLE" ] && [ ! -e "$HIST" ] && pass "dry run: no table, no history" \
	|| fail "dry run: no table, no history" "$(ls "$GPUPLAN_DATA_DIR")"

# ---- update, list, history
gp quotas update "$TMP/q1.csv"
expect_rc "update exits 0" 0
expect_out "update counts" "^added 3, changed 0, removed 0, unchanged 0"
expect_out "an alias is stored as its canonical name" "\+ aws \* A100-SXM4-80GB \*: max_gpus 16"
expect_out "update says where it wrote" "^wrote .*/userdata/quotas\.csv \(3 quotas\); history in .*/userdata/quotas\.history\.csv"
expect_err "a row no offering matches is kept with a warning" \
	"^warning: .*q1\.csv:4: no offering in the price table matches \(lambda, us-west-1, H100-SXM5-80GB, gpu_8x_h100_sxm5\)"
[ "$(head -n1 "$TABLE")" = "provider,region,gpu,instance_type,max_gpus" ] \
	&& grep -qx 'aws,us-east-1,H100-SXM5-80GB,,64' "$TABLE" \
	&& pass "quotas.csv holds canonical rows" || fail "quotas.csv holds canonical rows" "$(cat "$TABLE")"
gp quotas list
expect_rc "list exits 0" 0
# The shipped table has p5.48xlarge and p5.4xlarge in aws us-east-1 with
# H100s, so the first quota bounds 2 offerings; the lambda one none.
expect_out "list shows a quota and the offerings it bounds" "^aws +us-east-1 +H100-SXM5-80GB +\* +64 +2$"
expect_out "list shows a quota that bounds nothing" "^lambda +us-west-1 +H100-SXM5-80GB +gpu_8x_h100_sxm5 +8 +0$"
expect_err "list says where the quotas came from" "^3 quotas from .*/userdata/quotas\.csv"
gp quotas list --json
expect_out "list --json names its schema" '"schema":[[:space:]]+"gpuplan.quotas/1"'
expect_out "list --json: any instance type is null" '"instance_type":[[:space:]]+null'

# a changed quota and a removed one
printf '%s\n%s\n%s\n' "provider,region,gpu,max_gpus" "aws,us-east-1,H100,128" "aws,*,A100-SXM4-80GB," \
	> "$TMP/q2.csv"
gp quotas update "$TMP/q2.csv"
expect_rc "second update exits 0" 0
expect_out "a change shows old -> new" "~ aws us-east-1 H100-SXM5-80GB \*: max_gpus 64 -> 128 \(\+100\.0%\)"
expect_out "an empty max_gpus removes" "^  - aws \* A100-SXM4-80GB \*: max_gpus 16 \(removed\)"
expect_out "second update counts" "^added 0, changed 1, removed 1, unchanged 0"
gp quotas update "$TMP/q2.csv"
expect_out "the same file again changes nothing" "^no changes: .*quotas\.csv left as it was"
expect_err "a removal of a quota not stored warns" "q2\.csv:3: no stored quota \(aws, \*, A100-SXM4-80GB, \*\) to remove"
gp quotas history
expect_rc "history exits 0" 0
[ "$(grep -c 'max_gpus' "$OUT")" = 5 ] && pass "history has the five changes" \
	|| fail "history has the five changes" "$(cat "$OUT")"
expect_out "history shows a change" "aws +us-east-1 +H100-SXM5-80GB +\* +max_gpus +64 +128"
expect_out "history shows a removal" "aws +\* +A100-SXM4-80GB +\* +max_gpus +16 +-"
gp quotas history --json
expect_out "history --json names its schema" '"schema":[[:space:]]+"gpuplan.quota_history/1"'
gp prices history
expect_err "the price history is not the quota history" "no price changes recorded yet"

# ---- concurrent updates all land (the lock serialises read-merge-write)
for i in 1 2 3 4; do
	printf '%s\nconc%d,r%d,L4,%d,\n' "$H" $i $i $i > "$TMP/conc$i.csv"
done
for i in 1 2 3 4; do
	$GPUPLAN quotas update "$TMP/conc$i.csv" >"$TMP/conc$i.out" 2>&1 &
done
wait
n=$(grep -c '^conc' "$TABLE")
[ "$n" = 4 ] && pass "four concurrent updates all in the table" || fail "four concurrent updates all in the table" "$n rows"
n=$(grep -c ',conc' "$HIST")
[ "$n" = 4 ] && pass "four concurrent updates all in the history" || fail "four concurrent updates all in the history" "$n lines"

# ---- bad input: one line, exit 2, nothing stored changes
cp "$TABLE" "$TMP/table.before"
cp "$HIST" "$TMP/hist.before"
bad() { # NAME CONTENT REGEX
	printf '%b' "$2" > "$TMP/bad.csv"
	gp quotas update "$TMP/bad.csv"
	expect_rc "$1 exits 2" 2
	expect_err_lines "$1: one error line" 1
	expect_err "$1: says where and what" "$3"
	if cmp -s "$TABLE" "$TMP/table.before" && cmp -s "$HIST" "$TMP/hist.before"; then
		pass "$1: table and history unchanged"
	else
		fail "$1: table and history unchanged" "files differ"
	fi
}
bad "misspelt column" "provider,region,gpu,max_gpu\naws,us-east-1,H100,1\n" \
	"^error: .*bad\.csv:1:4: expected each of gpuplan's quota columns .* once, found 'max_gpu' \(did you mean 'max_gpus'\?\)"
bad "repeated column" "provider,region,gpu,max_gpus,region\naws,us-east-1,H100,1,x\n" \
	"bad\.csv:1:5: expected each of .* once, found 'region' again \(column 2\)"
bad "unknown GPU" "$H\naws,us-east-1,H10O,1,\n" \
	"^error: .*bad\.csv:2:3: gpu: expected a GPU name or alias from gpus\.csv, found 'H10O' \(did you mean 'H100'\?\)"
bad "count out of range" "$H\naws,us-east-1,H100,1000001,\n" \
	"bad\.csv:2:4: max_gpus: expected an integer from 0 to 1000000, found '1000001'"
bad "count not a number" "$H\naws,us-east-1,H100,many,\n" \
	"bad\.csv:2:4: max_gpus: expected an integer from 0 to 1000000, found 'many'"
bad "shell syntax in a name" "$H\naws,us\$(x),H100,1,\n" \
	"bad\.csv:2:2: region: expected a name of letters, digits and ' \._-:/\+\(\),@', found '\\\$' at byte 3"
bad "control byte in a name" "$H\naws,us-east-1,H100,1,p5\\x07\n" \
	"bad\.csv:2:5: instance_type: expected a name of letters, digits and .*, found control byte 0x07 at byte 3"
bad "empty region" "$H\naws,,H100,1,\n" \
	"bad\.csv:2:2: region: expected a region or '\*' \(any region\), found an empty cell"
bad "key twice" "$H\naws,us-east-1,H100,1,\naws,US-EAST-1,H100,2,*\n" \
	"bad\.csv:3:1: expected one row per \(provider, region, gpu, instance_type\), found .* again \(first at line 2\)"
bad "header only" "$H\n" "bad\.csv:2:1: expected data rows after the header, found none"
gp quotas update "$TMP/absent.csv"
expect_rc "a missing file exits 2" 2
gp quotas update
expect_rc "update without a file exits 2" 2
gp quotas list --dry-run
expect_rc "--dry-run with list exits 2" 2
gp quotas show
expect_rc "an unknown subcommand exits 2" 2
expect_err "an unknown subcommand names the choices" "expected list, update or history, found 'show'"

# ---- a bad stored table: its own line, exit 2, for every reader
mkdir -p "$TMP/broken"
printf 'provider,region,gpu,instance_type,max_gpus\naws,us-east-1,H100-SXM5-80GB,,lots\n' \
	> "$TMP/broken/quotas.csv"
GPUPLAN_DATA_DIR="$TMP/broken" gp quotas list
expect_rc "a bad stored table exits 2" 2
expect_err_lines "a bad stored table: one error line" 1
expect_err "a bad stored table: names its own line" "broken/quotas\.csv:2:5: max_gpus: expected an integer"
GPUPLAN_DATA_DIR="$TMP/broken" gp prices list
expect_rc "prices list reads the quotas too" 2

# ---- the planner respects a quota, and says when it binds
export GPUPLAN_DATA_DIR="$TMP/planq"
mkdir -p "$GPUPLAN_DATA_DIR"
printf '%s\n%s\n' "provider,region,gpu,max_gpus" "aws,us-east-1,H100,64" > "$TMP/q64.csv"
gp quotas update "$TMP/q64.csv"
expect_rc "a quota of 64 H100 in aws us-east-1 is stored" 0
gp plan --model llama3-70b --tokens 1T --budget 2.5M --gpu h100 --provider aws --region us-east-1 -q --json
over=$(awk -F'[:,]' '/"nodes":/ { n = $2 + 0 } /"gpus_per_node":/ { if (n * ($2 + 0) > 64) c++ } END { print c + 0 }' "$OUT")
n=$(grep -c '"gpus_per_node":' "$OUT")
[ "$n" -ge 1 ] && [ "$over" = 0 ] && pass "plan: no row above the quota's 64 GPUs ($n rows)" \
	|| fail "plan: no row above the quota's 64 GPUs" "$over of $n rows above"
gp plan --model llama3-70b --tokens 1T --budget 2.5M --gpu h100 --provider aws --region us-east-1 -q
expect_out "plan: the answer uses the whole quota" "^1 +aws p5\.48xlarge us-east-1 (on-demand|capacity-block) +8x8=64 "
expect_out "plan: the binding quota is named" "^binding: quota: your quota of 64 H100-SXM5-80GB in aws us-east-1$"
gp frontier --model llama3-8b --tokens 100B --gpu h100 --provider aws -q
over=$(awk '/ us-east-1 / { split($5, g, "="); if (g[2] + 0 > 64) c++ } END { print c + 0 }' "$OUT")
more=$(awk '!/ us-east-1 / && $5 ~ /=/ { split($5, g, "="); if (g[2] + 0 > 64) c++ } END { print c + 0 }' "$OUT")
[ "$over" = 0 ] && [ "$more" -ge 1 ] && pass "frontier: us-east-1 within the quota, other regions beyond it ($more rows)" \
	|| fail "frontier: us-east-1 within the quota, other regions beyond it" "$over over in us-east-1, $more elsewhere"
# two jobs at once share the quota: their H100 GPUs add up to at most 64
printf '%s\n%s\n%s\n' "model,tokens,name" "llama3-8b,100B,a" "llama3-8b,100B,b" > "$TMP/jobs.csv"
gp plan --jobs "$TMP/jobs.csv" --gpu h100 --provider aws --region us-east-1 --no-spot -q --json -o "$TMP/jobs-plan.json"
total=$(awk -F'[:,]' '/"nodes":/ { n = $2 + 0 } /"gpus_per_node":/ { t += n * ($2 + 0) } END { print t + 0 }' "$OUT")
[ "$total" -ge 16 ] && [ "$total" -le 64 ] && pass "two jobs share the quota ($total GPUs of 64)" \
	|| fail "two jobs share the quota" "$total GPUs"

finish
