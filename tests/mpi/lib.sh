# lib.sh - what the executor's MPI tests share (tests/mpi/test_*.sh):
# mpirun's command line, reading a gpuplan.run/1 file, and a layout run
# under mpirun checked against a single rank's run.  Source it after
# tests/cli/lib.sh; set MODEL (the flags every run takes) and LIMIT
# (seconds a run may take before it counts as a hang).
#
#   array KEY FILE              a number array of a run file, one per line
#   same_losses NAME A B [KEY]  every step's loss (or KEY's value) of B
#                               within 1e-5 relative of A's; the pass line
#                               says the largest difference
#   layout NAME NP BASE FLAGS   run under mpirun, compare with BASE's run
#   layout_norms NAME NP BASE FLAGS   the same, the gradient norms too
#
# Why 1e-5 and not equality: a layout sums in another order what one rank
# sums at once (a TP-split GEMM's halves, DP's gradients, micro-batches
# accumulated), and OpenBLAS's sgemm blocks its sums by the shape it is
# given, so the single rank's bits are not the layout's.  The differences
# measured are at most 2.2e-7 relative on these models (5 steps; 2e-7
# in the gradient norms), 45 times under the tolerance.  The bugs the
# checks catch still move them far past it, with OpenBLAS as with the
# hand-written GEMM before it (the same figures to two digits): the TP
# sum of the norm weights' gradients under sequence parallelism dropped
# moves the losses by 1.5e-5 and the gradient norms by 4.1e-4; the DP
# all-reduce of half of each unit's gradients dropped, the losses by
# 7.4e-3; the loss scaled by a DP rank's batch instead of the global one
# moves the losses by 4e-9 only (AdamW is blind to a gradient's scale)
# and the gradient norms by 100%, which layout_norms catches.
MPIRUN="mpirun --oversubscribe"
[ "$(id -u)" = 0 ] && MPIRUN="mpirun --allow-run-as-root --oversubscribe"
RAW=$GPUPLAN_BIN   # ranks started by mpirun here run bare, even under VALGRIND=1

array() { sed -n "s/.*\"$1\":[[:space:]]*\\[\\(.*\\)\\].*/\\1/p" "$2" | tr ',' '\n' | tr -d ' \t'; }
losses() { array losses "$1"; }

same_losses() {
	if [ ! -s "$2" ] || [ ! -s "$3" ]; then
		fail "$1" "missing run file"
		return
	fi
	local verdict key=${4:-losses}
	verdict=$(paste <(array "$key" "$2") <(array "$key" "$3") | awk '
		{ n++; d = $1 - $2; if (d < 0) d = -d; m = $1 < 0 ? -$1 : $1;
		  if (m > 0 && d / m > worst) worst = d / m
		  if (d > 1e-5 * m) { bad = bad sprintf(" step %d: %.10g vs %.10g", n, $1, $2) } }
		END { if (n != 5) print "expected 5 losses, found " n; else if (bad) print bad;
		      else printf "ok %.1e\n", worst }')
	case $verdict in
	ok*) pass "$1 (largest difference ${verdict#ok } relative)" ;;
	*) fail "$1" "$verdict" ;;
	esac
}

layout() {
	local name=$1 np=$2 base=$3
	shift 3
	run "$name runs" timeout $LIMIT $MPIRUN -np "$np" "$RAW" execute $MODEL "$@" \
		--json "$TMP/$name.json"
	expect_rc "$name: exit 0" 0
	same_losses "$name: 5 losses equal the single rank's within 1e-5" \
		"$TMP/$base.json" "$TMP/$name.json"
}

layout_norms() {
	layout "$@"
	same_losses "$1: 5 gradient norms equal the single rank's within 1e-5" \
		"$TMP/$3.json" "$TMP/$1.json" grad_norms
}

# each_layout FN: FN NAME RANKS BASE ARGS... for every layout both the
# dense and the LoRA tests run against the single rank's BASE run
each_layout() {
	local fn=$1
	# fd 3: mpirun reads standard input
	while read -r name ranks base args <&3; do
		# shellcheck disable=SC2086 # ARGS are words
		"$fn" "$name" "$ranks" "$base" $args
	done 3<<'LAYOUTS'
tp2 2 base --tp 2 --mbs 2
pp2 2 base --pp 2 --mbs 2
pp2-gpipe 2 base --pp 2 --schedule gpipe --mbs 2
dp2 2 base --dp 2 --mbs 2
tp2xpp2 4 base --tp 2 --pp 2 --mbs 1
pp4-interleaved-v2 4 base --pp 4 --interleave 2 --mbs 1
pp4-last5 4 base --pp 4 --pp-last-layers 5 --mbs 1
dp2-zero1 2 base --dp 2 --zero 1 --mbs 2
dp2-zero2 2 base --dp 2 --zero 2 --mbs 2
dp2-zero3 2 base --dp 2 --zero 3 --mbs 2
dp2-accum4 2 base --dp 2 --mbs 1 --grad-accum 4
recompute-full 2 base --tp 2 --recompute full --mbs 2
recompute-selective 2 base --pp 2 --recompute selective --mbs 2
tp2xpp2xdp2 8 base --tp 2 --pp 2 --dp 2 --mbs 1
LAYOUTS
}
