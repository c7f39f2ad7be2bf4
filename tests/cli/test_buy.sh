#!/usr/bin/env bash
# test_buy.sh - buying at scale as a user asks for it: each purchase
# option's bound and the source or policy it comes from, named exactly;
# answers that are plans (a maximum duration, spot held for days, and a
# refusal that says what would make the job fit, with figures); up-front
# payments in a monthly budget; offerings in other regions folded into one
# row and a runner-up that is another choice; and the clusters each
# provider sells make run's job on.
. "$(dirname "$0")/lib.sh"
export GPUPLAN_SHARE_DIR="$PWD/data"
JOB="--model llama3-70b --tokens 1T --budget 2.5M"

# ---- make run's job: a Capacity Block, named as AWS's product with the
# source of its 64-instance bound; its up-front sum; the same block in
# us-west-2 at the same price folded into the row; the runner-up another
# purchase option or GPU
gp plan $JOB -o "$TMP/run.json"
expect_rc "make run's job: a plan" 0
expect_out "make run's job: a capacity block" "^1 +aws p6-b300\.48xlarge us-east-1 capacity-block \+1 region +64x8=512 "
expect_out "its bound: one AWS EC2 Capacity Block, with its source" \
	"^capacity: 64 of at most 64 nodes: one AWS EC2 Capacity Block for ML holds at most 64 aws p6-b300\.48xlarge nodes \(aws-capacity-blocks-pricing-2026-07\)$"
expect_out "its price: dated" "^prices: aws p6-b300\.48xlarge us-east-1 capacity-block dated 2026-07-22 "
expect_out "the up-front sum" '^up front: \$1,72[0-9],[0-9]{3}, paid when the AWS EC2 Capacity Block for ML is bought$'
expect_out "the region folded into row 1" "^regions: the same at the same price in us-west-2 \(folded into row 1\)$"
expect_out "the runner-up differs in GPU or purchase option" "^runner-up: .*\(another (GPU|purchase option)\)$"
# no two rows of the table are the same offering and price in two regions
dups=$(awk '$1 ~ /^[0-9]+$/ { split($3, a, "."); print $2, $3, $5, $(NF-2) }' "$OUT" | sort | uniq -d)
[ -z "$dups" ] && pass "no row repeats another in another region" || fail "no row repeats another in another region" "$dups"
# no answer names a provider as the source of a bound it does not state
grep -Eq "aws sells p6-b300|aws-capacity-blocks\)" "$OUT" \
	&& fail "no on-demand bound attributed to AWS" "$(grep -E 'aws sells|aws-capacity-blocks\)' "$OUT")" \
	|| pass "no on-demand bound attributed to AWS"

# ---- on demand: AWS states no cluster bound, so the bound is gpuplan's
# policy, named as policy
gp plan $JOB --provider aws --blocks none -o "$TMP/od.json"
expect_rc "on demand: a plan" 0
expect_out "on demand: the policy bound, named as policy" \
	"^capacity: [0-9]+ of at most 64 nodes: at most 64 aws [a-z0-9.-]+ nodes on-demand without a quota: gpuplan policy, as aws states no cluster bound for it; a quota replaces the policy \(gpuplan quotas update\)$"
# a quota replaces the policy, above it: 1056 B300 are 132 nodes
printf 'provider,region,gpu,max_gpus,instance_type\naws,us-west-2,B300,1056,p6-b300.48xlarge\n' >"$TMP/q.csv"
gp quotas update "$TMP/q.csv"
expect_rc "a quota of 1056 B300: stored" 0
gp plan --model llama3-405b --tokens 15T --budget 200M --provider aws --gpu b300 --blocks none -o "$TMP/q.json"
expect_out "on demand with a quota: the quota is the bound, above the policy" \
	"your quota of 1056 B300 in aws us-west-2"
expect_out "the quota's nodes, more than the policy's 64" "on (1[0-9]{3}) B300"
rm -f "$GPUPLAN_DATA_DIR/quotas.csv" "$GPUPLAN_DATA_DIR/quotas.history.csv"

# ---- spot: gpuplan's policy, 4 nodes, held for at most 30 days
gp plan --model llama3-70b --tokens 20B --budget 200k --spot -o "$TMP/spot.json"
expect_rc "spot: a plan" 0
expect_out "spot: the policy bound, named as policy" \
	"^capacity: [0-9] of at most 4 nodes: at most 4 [a-z]+ [a-zA-Z0-9._-]+ nodes on spot: gpuplan policy, as no provider guarantees spot capacity$"
# 1T tokens would hold 4 spot nodes for months: no answer, and what would
gp plan $JOB --spot -o "$TMP/spot2.json"
expect_rc "spot for months: no plan" 3
expect_err "spot for months: the cause, with the limit" \
	"^error: plan: no feasible plan: llama3-70b: every plan that fits lasts longer than a spot fleet is held \(--max-spot-duration 30\.0 d\): the fastest takes [0-9.]+ d on 32 GPUs$"
expect_out "spot for months: what would make it fit" \
	"^  what would make it fit   the same nodes on demand or reserved, or --max-spot-duration [0-9.]+ d$"
gp plan $JOB --spot --max-spot-duration 200d -o "$TMP/spot3.json"
expect_rc "--max-spot-duration 200d: a plan" 0

# ---- GCP: a calendar-mode future reservation of up to 80 VMs, its price a
# ceiling, paid monthly
gp plan $JOB --provider gcp -o "$TMP/gcp.json"
expect_rc "--provider gcp: a plan" 0
expect_out "--provider gcp: more than one node through a calendar-mode reservation" \
	"^1 +gcp a4-highgpu-8g us-central1 calendar-reservation +([2-9]|[1-9][0-9])x8="
expect_out "--provider gcp: its bound, product and source" \
	"^capacity: [0-9]+ of at most 80 nodes: one GCP calendar-mode future reservation holds at most 80 gcp a4-highgpu-8g nodes \(gcp-calendar-mode \(top of the DWS price range as a ceiling\)\)$"
expect_out "--provider gcp: paid monthly, approval stated" \
	"^calendar-reservation: GCP calendar-mode future reservation of [0-9]+ x a4-highgpu-8g in us-central1 for [0-9]+ days, paid monthly as the term runs .*the provider approves each request, lead time not published"
expect_no_out "--provider gcp: nothing paid up front" "^up front:"

# ---- Azure: ND VMs with InfiniBand, bounded by gpuplan's policy
gp plan $JOB --provider azure -o "$TMP/azure.json"
expect_rc "--provider azure: a plan" 0
expect_out "--provider azure: more than one node" "^1 +azure Standard_ND[A-Za-z0-9_]+ [a-z0-9]+ on-demand( \+[0-9] regions?)? +([2-9]|[1-9][0-9])x8="
expect_out "--provider azure: the policy bound, named as policy" \
	"^capacity: [0-9]+ of at most 64 nodes: at most 64 azure Standard_ND[A-Za-z0-9_]+ nodes on-demand without a quota: gpuplan policy, as azure states no cluster bound for it"

# ---- Lambda: its on-demand instances have no cluster network and no
# 1-Click Cluster is priced: one node, a plan of years, refused with why
gp plan $JOB --provider lambda -o "$TMP/lambda.json"
expect_rc "--provider lambda: no plan" 3
expect_err "--provider lambda: the cause, a year at most" \
	"^error: plan: no feasible plan: llama3-70b: every plan that fits lasts longer than a plan may \(--max-duration 1\.00 y\): the fastest takes [0-9.]+ y on 8 GPUs$"
expect_out "--provider lambda: one node because no cluster network" \
	"^  fastest plan +[0-9.]+ y on 8 B200, .*lambda gpu_8x_b200_sxm6 has no inter_node_gbps figure, so one node$"
expect_out "--provider lambda: the missing sourced product, named, and why it is missing" \
	"^  what would make it fit   Lambda 1-Click Cluster, which sells lambda gpu_8x_b200_sxm6 as a cluster \(lambda-1-click-clusters\): no source read gives its price \(blocks\.csv\) or its nodes' network \(prices\.csv inter_node_gbps\), so it is not planned; or --max-duration [0-9.]+ y$"
expect_no_out "--provider lambda: not 'allow more GPUs'" "allow more GPUs"
expect_no_out "--provider lambda: the unpriced product is never a row" "^[0-9]+ +lambda .* cluster "
# without the product's row the refusal says only what kind of product
# is missing: the line comes from blocks.csv, not from code
grep -v '^lambda,' data/blocks.csv >"$TMP/blocks-nolambda.csv"
gp plan $JOB --provider lambda --blocks "$TMP/blocks-nolambda.csv"
expect_rc "--provider lambda, no 1-Click Cluster row: no plan" 3
expect_out "--provider lambda, no 1-Click Cluster row: a product with a cluster network" \
	"^  what would make it fit   a product with a cluster network for B200 \(lambda gpu_8x_b200_sxm6 is one node\)"
# a model no node holds: the cause is the missing network, and the product
# that would give one, not "allow more GPUs"
gp plan --model llama3-405b --tokens 1T --budget 50M --provider lambda
expect_rc "--provider lambda, 405B: no plan" 3
expect_err "--provider lambda, 405B: the cause is one node" \
	"no configuration fits in GPU memory: .*, on one node: no offering considered has a cluster network figure$"
expect_out "--provider lambda, 405B: the missing product" \
	"^  what would make it fit   Lambda 1-Click Cluster, which sells lambda gpu_8x_b200_sxm6 as a cluster \(lambda-1-click-clusters\): no source read gives its price"
expect_no_out "--provider lambda, 405B: not 'allow more GPUs'" "allow more GPUs"

# ---- a neocloud with a stated network: Nebius's H200 nodes (8 x 400 Gb/s
# InfiniBand, its MLPerf Training system description) at its list price,
# dated by Nebius's billing page, bounded by gpuplan's policy as Nebius
# states no cluster bound, billed per second
gp plan $JOB --provider nebius -o "$TMP/nebius.json"
expect_rc "--provider nebius: a plan" 0
expect_out "--provider nebius: more than one node" \
	"^1 +nebius gpu-h200-sxm_8gpu-128vcpu-1600gb all on-demand +([2-9]|[1-9][0-9])x8="
expect_out "--provider nebius: the policy bound, named as policy" \
	"^capacity: [0-9]+ of at most 64 nodes: at most 64 nebius gpu-h200-sxm_8gpu-128vcpu-1600gb nodes on-demand without a quota: gpuplan policy, as nebius states no cluster bound for it"
expect_out "--provider nebius: its price's source and date" \
	"^prices: nebius gpu-h200-sxm_8gpu-128vcpu-1600gb all on-demand dated 2025-10-22 \(docs\.nebius\.com billing changes Oct 2025 \(3\.50 USD per H200 GPU-hour\) read 2026-12-06\): [0-9]+ days old on [0-9-]+$"
expect_out "--provider nebius: billed per second" "^overheads: .*billed per second"
expect_no_out "--provider nebius: no undated price" "states no date"

# ---- a neocloud: CoreWeave's list prices are sourced, its nodes' network
# bandwidth is not (data/SOURCES.md), so make run's job is refused with
# that cause
gp plan $JOB --provider coreweave
expect_rc "--provider coreweave: no plan" 3
expect_err "--provider coreweave: the cause is one node" \
	", on one node: no offering considered has a cluster network figure$"
expect_out "--provider coreweave: what would make it fit, named" \
	"^  what would make it fit   a cluster network figure: every offering considered is one node, as none states its inter-node bandwidth \(prices\.csv inter_node_gbps; e\.g\. coreweave gd-8xh200ib-i128\)$"
expect_no_out "--provider coreweave: not 'allow more GPUs'" "allow more GPUs"

# an unpriced row must name its product; a priced one its terms
printf 'provider,instance_prefix,region,usd_per_hour,min_nodes,max_nodes,min_days,max_days,step_days,long_step_days,long_from_days,price_date,source,product\nlambda,gpu_8x_b200_sxm6,all,,,,,,7,,,,lambda-1-click-clusters,\n' >"$TMP/blocks-bad.csv"
gp plan $JOB --provider lambda --blocks "$TMP/blocks-bad.csv"
expect_rc "blocks.csv: an unpriced row without a product exits 2" 2
expect_err "blocks.csv: an unpriced row without a product: where and what" "blocks-bad\.csv:2:14: product"
printf 'provider,instance_prefix,region,usd_per_hour,min_nodes,max_nodes,min_days,max_days,step_days,long_step_days,long_from_days,price_date,source,product\nlambda,gpu_8x_b200_sxm6,all,50,,,,,7,,,,lambda-1-click-clusters,Lambda 1-Click Cluster\n' >"$TMP/blocks-bad2.csv"
gp plan $JOB --provider lambda --blocks "$TMP/blocks-bad2.csv"
expect_rc "blocks.csv: a priced row without its terms exits 2" 2
expect_err "blocks.csv: a priced row without its terms: where and what" "blocks-bad2\.csv:2:5: min_nodes"

# ---- the SkyPilot export of a plan that buys a reservation says what to
# buy by hand, and where SkyPilot takes its id; one that buys none does not
gp export "$TMP/run.json" --format skypilot -o "$TMP/run.yaml"
expect_rc "export skypilot of make run's block plan" 0
grep -Eq '^# BUY FIRST, by hand: this plan is priced as a reservation \(purchase capacity-block\): 64 x "p6-b300\.48xlarge" of "aws" in "us-east-1" for at least [0-9]+ days' "$TMP/run.yaml" \
	&& pass "export skypilot: the reservation to buy, named" \
	|| fail "export skypilot: the reservation to buy, named" "$(head -8 "$TMP/run.yaml")"
grep -q 'specific_reservations in ~/.sky/config.yaml' "$TMP/run.yaml" \
	&& pass "export skypilot: where SkyPilot takes the reservation's id" \
	|| fail "export skypilot: where SkyPilot takes the reservation's id" "$(head -8 "$TMP/run.yaml")"
gp export "$TMP/od.json" --format skypilot -o "$TMP/od.yaml"
grep -q 'BUY FIRST' "$TMP/od.yaml" && fail "export skypilot: an on-demand plan buys nothing first" "$(head -6 "$TMP/od.yaml")" \
	|| pass "export skypilot: an on-demand plan buys nothing first"

# ---- a job no year holds: llama3-405b on 15T tokens for $100M.  Refused,
# with the GPUs a year would take (at least the fastest plan's GPU-hours in
# a year), the money, and the ways to get them
gp plan --model llama3-405b --tokens 15T --budget 100M -o "$TMP/405b.json"
expect_rc "405B 15T \$100M: no plan of decades" 3
expect_err "405B: the cause" \
	"^error: plan: no feasible plan: llama3-405b: every plan that fits lasts longer than a plan may \(--max-duration 1\.00 y\): the fastest takes [0-9.]+ y on 512 GPUs$"
expect_out "405B: the fastest plan, its bound as policy" \
	"^  fastest plan +[0-9.]+ y on 512 B300, .*bound: at most 64 aws p6-b300\.48xlarge nodes on-demand without a quota: gpuplan policy"
gpus=$(sed -n 's/^  what would make it fit   at least \([0-9]*\) B300 GPUs to finish within 1\.00 y, about \$[0-9,]* at this plan.s rate, so also a larger --budget: a quota for them (gpuplan quotas update) or a reservation by request (capacity and lead time not published); or --max-duration [0-9.]* y$/\1/p' "$OUT")
[ -n "$gpus" ] && [ "$gpus" -gt 512 ] && pass "405B: the GPUs a year needs ($gpus), the budget, a quota or a reservation" \
	|| fail "405B: the GPUs a year needs, the budget, a quota or a reservation" "$(grep 'what would' "$OUT")"
expect_no_out "405B: no answer measured in years" "^answer:"
# --max-duration lifts the limit; a bad one is one line, exit 2
gp plan --model llama3-405b --tokens 15T --budget 200M --max-duration 1100d -o "$TMP/405b.json"
expect_rc "--max-duration 1100d: a plan" 0
expect_out "--max-duration 1100d: the answer within it" "^answer: llama3-405b in [12]\.[0-9]+ y "
for bad in "0d" "soon" "-1d"; do
	gp plan $JOB --max-duration "$bad"
	expect_rc "--max-duration $bad exits 2" 2
	expect_err_lines "--max-duration $bad: one error line" 1
done
gp plan --help
expect_out "plan --help lists --max-duration" "--max-duration DUR"
expect_out "plan --help gives its default, a year" "\(default 365d\)"
expect_out "plan --help lists --max-spot-duration" "--max-spot-duration DUR"

# ---- cash flow: a monthly budget counts a block's up-front payment whole
# in the month it is paid.  $1M a month cannot buy the $1.5M+ blocks that
# make run's job takes; $2M a month buys the p6-b300 block, whose hourly
# rate ($7,188) is far above $2M / 730 h
gp plan $JOB --provider aws --monthly-budget 1M -o "$TMP/m1.json"
expect_rc "--monthly-budget 1M: a plan" 0
expect_no_out "--monthly-budget 1M: no block paid up front" "^1 .* capacity-block "
expect_no_out "--monthly-budget 1M: nothing up front" "^up front:"
gp plan $JOB --provider aws --monthly-budget 2M -o "$TMP/m2.json"
expect_rc "--monthly-budget 2M: a plan" 0
expect_out "--monthly-budget 2M: the block" "^1 +aws p6-b300\.48xlarge us-east-1 capacity-block "
expect_out "--monthly-budget 2M: its up-front sum, counted in its month" \
	'^up front: \$1,72[0-9],[0-9]{3}, paid when the AWS EC2 Capacity Block for ML is bought \(--monthly-budget counts it whole in that month\)$'
up=$(sed -n 's/^up front: \$\([0-9,]*\),.*/\1/p' "$OUT" | tr -d ,)
[ -n "$up" ] && [ "$up" -le 2000000 ] && pass "the up-front sum is within the month's budget" \
	|| fail "the up-front sum is within the month's budget" "up front $up"

finish
