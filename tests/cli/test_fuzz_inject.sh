#!/usr/bin/env bash
# test_fuzz_inject.sh - a short, seeded mutation fuzz for what a file can
# make gpuplan do rather than whether it crashes: names built from shell,
# YAML, gnuplot and terminal payloads go into price rows and plan files.
#   - every update exits 0 or 2, and an accepted one round-trips (the same
#     file again changes nothing);
#   - a frontier chart drawn over every accepted row keeps each row inside
#     its datablock, and gnuplot running the script creates nothing;
#   - every export of an accepted plan, run with stub launchers, creates
#     nothing.
# FUZZ_CASES (default 120) cases per parser; FUZZ_SEED (default 22).
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

CASES=${FUZZ_CASES:-120}
RANDOM=${FUZZ_SEED:-22}
# Fragments, as printf formats: shell, YAML, gnuplot and terminal payloads
# beside the characters names legitimately hold.
FRAG=('$(touch pwned)' '`touch pwned`' "'; touch pwned; '" '"; touch pwned; "' ';touch pwned'
	'\nEOD\nsystem "touch pwned"\n#' 'EOD' '\n' '\r' '\033[2J' '\033]0;x\007' '\377'
	'\342\200\256' '|touch pwned' '&& touch pwned' '\\' '@' ':' ',' ' ' '(' ')' '/' '+'
	'p5.48xlarge' 'us-east-1' 'Z\303\274rich' '\t' '{x: 1}' '- a' '# c' '$HOME' '%s')
name() { # a random name of 1 to 4 fragments
	local n=$((RANDOM % 4 + 1)) s=""
	for ((k = 0; k < n; k++)); do s="$s${FRAG[RANDOM % ${#FRAG[@]}]}"; done
	printf '%s' "$s"
}
H="provider,instance_type,gpu,gpus_per_node,region,on_demand_usd_per_hour"
STUBS="$TMP/stubs"
mkdir -p "$STUBS"
for s in torchrun srun mpirun deepspeed sbatch kubectl gpuplan; do
	printf '#!/bin/sh\nexit 0\n' > "$STUBS/$s"
	chmod +x "$STUBS/$s"
done

# ---- price rows
accepted=0 refused=0 bad_rc=0 no_trip=0
for ((i = 0; i < CASES; i++)); do
	f="$TMP/p$i.csv"
	# the name CSV-quoted, quotes doubled, in instance_type and region
	n=$(name | sed 's/"/""/g')
	printf "%s\nfz,\"$n\",H100,8,\"r$i$n\",$((i + 1))\n" "$H" > "$f" 2>/dev/null
	gp prices update "$f"
	case $RC in
	0) accepted=$((accepted + 1))
	   gp prices update "$f"
	   grep -q 'added 0, changed 0' "$OUT" || no_trip=$((no_trip + 1)) ;;
	2) refused=$((refused + 1)) ;;
	*) bad_rc=$((bad_rc + 1)); echo "case $i: exit $RC"; cat "$f" ;;
	esac
	LC_ALL=C grep -q $'[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]' "$ERR" && { echo "case $i: control byte on stderr"; bad_rc=$((bad_rc + 1)); }
done
echo "# price rows: $CASES cases, $accepted accepted, $refused refused"
[ $bad_rc = 0 ] && pass "price rows: every update exits 0 or 2, no control byte echoed" \
	|| fail "price rows: every update exits 0 or 2, no control byte echoed" "$bad_rc cases"
[ $no_trip = 0 ] && pass "price rows: each accepted update round-trips" \
	|| fail "price rows: each accepted update round-trips" "$no_trip did not"
[ $accepted -gt 0 ] && [ $refused -gt 0 ] && pass "price rows: both outcomes seen" \
	|| fail "price rows: both outcomes seen" "$accepted accepted, $refused refused"

# a chart over every accepted row: the script without gnuplot on PATH,
# then run by gnuplot when there is one
cd "$TMP" || exit 1
PATH="$STUBS:/usr/bin/nonexistent" "$GPUPLAN_BIN" frontier --model llama3-8b --tokens 1T \
	--provider fz --plot "$TMP/fz.png" >"$OUT" 2>"$ERR"
RC=$?
expect_rc "frontier over the fuzzed rows" 0
if [ -f "$TMP/fz.gp" ]; then
	awk '/^\$data << EOD$/ { inb = 1; next } inb && /^EOD$/ { inb = 0; next }
	     !inb && /pwned/ { bad = 1 } END { exit bad }' "$TMP/fz.gp" \
		&& pass "no script line outside the datablock was written by a row" \
		|| fail "no script line outside the datablock was written by a row" "$(grep -n pwned "$TMP/fz.gp" | head -3)"
	if command -v gnuplot >/dev/null; then
		(cd "$TMP" && gnuplot fz.gp >/dev/null 2>&1)
		[ ! -e "$TMP/pwned" ] && pass "gnuplot running the script creates nothing" \
			|| fail "gnuplot running the script creates nothing" "pwned exists"
	fi
else
	fail "the fallback script was written" "$(cat "$ERR")"
fi
cd - >/dev/null || exit 1

# ---- plan names
PLAN="$TMP/plan.json"
sed 's/"gpus_per_node":[[:space:]]*4/"gpus_per_node": 2/' tests/fixtures/exec/plan_tp2_pp2.json > "$PLAN"
accepted=0 refused=0 bad_rc=0 ran=0
for ((i = 0; i < CASES; i++)); do
	# the name JSON-escaped: backslash, quote and the control bytes
	n=$(printf "$(name)" 2>/dev/null | od -An -v -tu1 | tr -s ' \n' ' ' |
		awk '{ for (i = 1; i <= NF; i++) { c = $i + 0
			if (c < 32 || c == 34 || c == 92 || c == 127) printf "\\u%04x", c
			else printf "%c", c } }')
	sed "s|\"name\":[[:space:]]*\"custom\"|\"name\": \"$(printf '%s' "$n" | sed 's/[|&\\]/\\&/g')\"|" "$PLAN" > "$TMP/f$i.json"
	f=$(printf 'torchrun\nmegatron\nslurm\nmpirun\nkubernetes\ndeepspeed' | sed -n "$((i % 6 + 1))p")
	gp export "$TMP/f$i.json" --format "$f"
	case $RC in
	0) accepted=$((accepted + 1))
	   d="$TMP/run$i"; mkdir -p "$d"; cp "$OUT" "$d/run.sh"
	   (cd "$d" && MASTER_ADDR=h TRAIN_SCRIPT=t IMAGE=i PATH="$STUBS:/usr/bin:/bin" bash run.sh >/dev/null 2>&1)
	   ran=$((ran + 1))
	   [ -e "$d/pwned" ] && { echo "case $i ($f): injected"; bad_rc=$((bad_rc + 1)); } ;;
	2) refused=$((refused + 1)) ;;
	*) bad_rc=$((bad_rc + 1)); echo "case $i: exit $RC" ;;
	esac
done
echo "# plan names: $CASES cases, $accepted accepted (each export run), $refused refused"
[ $bad_rc = 0 ] && pass "plan names: exit 0 or 2, no export ran an injected command" \
	|| fail "plan names: exit 0 or 2, no export ran an injected command" "$bad_rc cases"
[ $refused -gt 0 ] && pass "plan names: hostile names refused" || fail "plan names: hostile names refused" "none"
[ ! -e pwned ] && [ ! -e "$TMP/pwned" ] && pass "nothing created anywhere" || fail "nothing created anywhere" "pwned"

finish
