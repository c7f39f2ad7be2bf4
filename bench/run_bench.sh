#!/usr/bin/env bash
# run_bench.sh BUILD - run every benchmark binary in BUILD/bench/ and every
# bench/*.sh script except this one, the GPU check and its bundle, and the
# reliability report (robustness.sh runs for many minutes on its own), from
# the repository root, printing each one's report.  cpu_vs_torch.sh (a
# minute a GPT-2-shape training step, run alone) is left out too.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-build}
echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
status=0
for b in "$BUILD"/bench/*; do
	[ -x "$b" ] || continue
	echo "== $(basename "$b")"
	"$b" || status=1
done
for s in bench/*.sh; do
	case "$s" in bench/run_bench.sh|bench/gpu_check.sh|bench/gpu_bundle.sh|bench/robustness.sh|bench/cpu_vs_torch.sh) continue ;; esac
	echo "== $(basename "$s")"
	BUILD=$BUILD bash "$s" || status=1
done
exit $status
