#!/usr/bin/env bash
# cpu_vs_torch.sh - one training step of the same model, GPT-2 124M's shape
# (12 layers, hidden 768, 12 heads, vocabulary 50257, tied embeddings, fp32,
# sequence 256, batch 4, AdamW), in PyTorch on the CPU (bench/cpu_vs_torch.py)
# and in `gpuplan execute --backend cpu` on one rank, both on THREADS threads
# (default 1), alternating ROUNDS times (default 3) so a machine's load falls
# on both alike.  Each run takes STEPS steps (default 3) and reports the
# median of all but its first; the script prints every run's figure, then
# the ratio of the medians over the rounds, gpuplan / PyTorch (below 1:
# gpuplan is faster).  Beside each run's wall-clock step it prints the CPU
# time the whole run took (user + system: start-up, model, every step),
# which a machine shared with other work inflates far less than the wall
# clock, and the ratio of those too.  Where torch does not import, its side
# is skipped with the reason, and gpuplan's step is still measured.
#
#   BUILD=build ROUNDS=3 STEPS=3 THREADS=1 bash bench/cpu_vs_torch.sh
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-3}
STEPS=${STEPS:-3}
THREADS=${THREADS:-1}
PYTHON=${PYTHON:-python3}
GP="$BUILD/gpuplan"
[ -x "$GP" ] || { echo "cpu_vs_torch: $GP not built (make)" >&2; exit 2; }
for v in ROUNDS STEPS THREADS; do
	case "${!v}" in ''|*[!0-9]*|0) echo "cpu_vs_torch: $v: expected a positive integer, found '${!v}'" >&2; exit 2 ;; esac
done
[ "$STEPS" -ge 2 ] || { echo "cpu_vs_torch: STEPS: expected at least 2 (the first is not timed)" >&2; exit 2; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "machine: $(uname -m), $(getconf _NPROCESSORS_ONLN) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
export OMP_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS

# CPU: the CPU seconds (user + system) of this shell's children that have
# ended, from `times` run in this shell (its second line: "XmY.YYYs XmY.YYYs")
child_cpu() {
	times >"$tmp/times"
	CPU=$(sed -n 2p "$tmp/times" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); s += a[1] * 60 + a[2] } print s }')
}
echo "model: 12 layers x 768, 12 heads, vocab 50257, tied, fp32, seq 256, batch 4, AdamW; $THREADS thread(s); $STEPS steps a run, $ROUNDS rounds"

torch=yes
probe=$("$PYTHON" bench/cpu_vs_torch.py --probe 2>/dev/null | head -1)
case "$probe" in skip:*) torch=; echo "pytorch: $probe" ;; torch*) echo "pytorch: $probe" ;; *) torch=; echo "pytorch: skip: $PYTHON bench/cpu_vs_torch.py printed nothing" ;; esac

gp_times=() pt_times=() gp_cpu=() pt_cpu=()
for r in $(seq 1 "$ROUNDS"); do
	if [ -n "$torch" ]; then
		child_cpu
		c0=$CPU
		"$PYTHON" bench/cpu_vs_torch.py --layers 12 --hidden 768 --heads 12 --vocab 50257 \
			--seq 256 --batch 4 --steps "$STEPS" --threads "$THREADS" >"$tmp/pt" 2>"$tmp/pt.err" ||
			{ echo "cpu_vs_torch: pytorch run failed:" >&2; tail -3 "$tmp/pt.err" >&2; exit 1; }
		child_cpu
		c=$(awk -v a="$c0" -v b="$CPU" 'BEGIN { printf "%.1f", b - a }')
		t=$(awk '$1 == "median" { print $2 }' "$tmp/pt")
		pt_times+=("$t") pt_cpu+=("$c")
		echo "round $r  pytorch  ${t} s/step; the run: $c CPU s"
	fi
	child_cpu
	c0=$CPU
	"$GP" execute --backend cpu --np 1 --layers 12 --hidden 768 --heads 12 --kv-heads 12 \
		--ffn 3072 --vocab 50257 --seq 256 --mbs 4 --gbs 4 --tied --mlp gelu --norm layernorm \
		--steps "$STEPS" --timeout 2h -q --json "$tmp/gp.json" >"$tmp/gp" 2>&1 ||
		{ echo "cpu_vs_torch: gpuplan execute failed:" >&2; tail -3 "$tmp/gp" >&2; exit 1; }
	child_cpu
	c=$(awk -v a="$c0" -v b="$CPU" 'BEGIN { printf "%.1f", b - a }')
	t=$("$PYTHON" -c 'import json, statistics, sys
d = json.load(open(sys.argv[1]))
print("%.3f %.3f" % (statistics.median(d["step_times_s"][1:]), d["predicted_step_time_s"]))' "$tmp/gp.json")
	gp_times+=("${t% *}") gp_cpu+=("$c")
	echo "round $r  gpuplan  ${t% *} s/step (predicted ${t#* } s); the run: $c CPU s"
done

med() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
g=$(med "${gp_times[@]}")
echo "gpuplan median: $g s/step"
if [ -n "$torch" ]; then
	p=$(med "${pt_times[@]}")
	echo "pytorch median: $p s/step"
	awk -v g="$g" -v p="$p" 'BEGIN { printf "ratio gpuplan / pytorch: %.2f (%s)\n", g / p, g <= p ? "gpuplan is at least as fast" : "gpuplan is slower" }'
	awk -v g="$(med "${gp_cpu[@]}")" -v p="$(med "${pt_cpu[@]}")" \
		'BEGIN { printf "CPU seconds of a run, gpuplan / pytorch: %.1f / %.1f = %.2f\n", g, p, g / p }'
fi
