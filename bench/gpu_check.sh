#!/usr/bin/env bash
# gpu_check.sh - the CUDA backend on a machine with an NVIDIA GPU, in one
# run of under 8 minutes on one H100 or H200:
#
#   0. builds gpuplan with the CUDA backend (make CUDA=yes), or uses the
#      one bench/gpu_bundle.sh built elsewhere from the same sources, with
#      the libraries it brought (for a GPU machine without the build's
#      packages); CUDA libraries the binary cannot find are looked for in
#      the CUDA folders and NVIDIA's Python wheels;
#   1. trains a small model for 10 steps on the CUDA backend and on the CPU
#      backend from the same seed and compares the losses: bf16 (activations
#      and GEMM operands in bf16, fp32 master weights) within BF16_TOL (1%)
#      of the fp32 CPU at every step, fp32 throughout (--precision fp32)
#      within FP32_TOL (0.1%); then the same for a small mixture of experts
#      (8 SwiGLU experts, top-2, a shared expert: the router, the
#      permutation, the experts' cuBLAS GEMMs one expert at a time, the
#      combine), and with two GPUs and mpirun the experts shared over
#      them (dp 2, ep 2: NCCL's grouped send and receive all-to-all)
#      against the single CPU rank;
#   2. runs `gpuplan calibrate` (every GPU of the machine when mpirun is
#      there: the collective sweep too);
#   3. runs the pre-flight check (`execute --check`: the GPU type, free
#      memory, memory in use after one step against the prediction), then
#      a single-GPU plan of a mid-size model (24 layers x 2048 hidden,
#      16 heads, sequence 2048, vocabulary 50304, micro-batch 4, global
#      batch 8) and prints measured step time, MFU and peak memory against
#      the prediction (calibrated by step 2), and whether the executor's
#      targets are met there (step time and memory within 10%);
#   4. runs a GEMM-heavy step (2 layers x 8192 hidden, 64 heads, MLP
#      32768, vocabulary 32000, sequence 2048: matrices four times the
#      mid-size model's width, attention a smaller share) the same way,
#      where the MFU target applies (>= 50%; the simulator, calibrated or
#      not, says what to expect), with its step time and memory too;
#   5. where PyTorch with CUDA is installed, times the mid-size shape's
#      training step in PyTorch (bf16 autocast, fused AdamW, flash
#      attention through scaled_dot_product_attention) and prints the
#      ratio of the two step times.
#
# Everything it prints also goes to bench/results/gpu_check-DATE-GPU.txt
# ($GPU_CHECK_RESULTS names another folder), with the calibration, and
# each of the mid-size and GEMM-heavy runs' JSON, measured timeline and
# the simulator's timeline of the same step to lay beside it.  Each command
# may take $GPU_CHECK_STEP_LIMIT seconds (300).
# Without a GPU it says why and exits 0.  Exit 1 when a check fails.
#
#   bench/gpu_check.sh [BUILD_DIR]      (default build-gpu)
set -u
cd "$(dirname "$0")/.." || exit 1

BUILD=${1:-build-gpu}
BF16_TOL=0.01
FP32_TOL=0.001
STEP_LIMIT=${GPU_CHECK_STEP_LIMIT:-300}   # seconds any one command may take
RESULTS=${GPU_CHECK_RESULTS:-bench/results}
failed=0

if ! command -v nvidia-smi >/dev/null 2>&1; then
	echo "gpu_check: no nvidia-smi in PATH: not a GPU machine; nothing to check"
	exit 0
fi
gpu_line=$(timeout 30 nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | head -1)
if [ -z "$gpu_line" ]; then
	echo "gpu_check: nvidia-smi lists no GPU (driver not loaded?); nothing to check"
	exit 0
fi
ngpu=$(timeout 30 nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
gpu_name=${gpu_line%%,*}
gpu_tag=$(printf '%s' "$gpu_name" | tr -c 'A-Za-z0-9.-' '_' | sed 's/_*$//')
mkdir -p "$RESULTS"
STEM="$RESULTS/gpu_check-$(date -u +%Y-%m-%d)-$gpu_tag"
RESULT="$STEM.txt"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
exec > >(tee "$RESULT") 2>&1

say() { printf '%s\n' "$*"; }
section() { printf '\n== %s\n' "$*"; }
bad() { say "FAIL: $*"; failed=1; }

# num KEY FILE: the first number under KEY in a JSON file
num() { sed -n "s/.*\"$1\":[[:space:]]*\([-0-9.eE+]*\).*/\1/p" "$2" 2>/dev/null | head -1; }
# pct X: a fraction as a signed percentage
pct() { awk -v x="$1" 'BEGIN { if (x == "") print "?"; else printf "%+.1f%%", 100 * x }'; }
# target WHAT VALUE CONDITION: says whether VALUE (v in the awk CONDITION)
# meets a performance target
target() {
	if [ -n "$2" ] && awk -v v="$2" "BEGIN { exit !($3) }"; then
		say "target met: $1"
	else
		say "target MISSED: $1"
	fi
}
# losses FILE: the losses of a gpuplan.run/1 file, one per line
losses() { sed -n 's/.*"losses":[[:space:]]*\[\(.*\)\].*/\1/p' "$1" | tr ',' '\n' | tr -d ' \t'; }
# compare NAME A B TOL: every step's losses within TOL relative
compare() {
	local verdict
	verdict=$(paste <(losses "$2") <(losses "$3") | awk -v tol="$4" '
		{ n++; d = $1 - $2; if (d < 0) d = -d; r = d / ($1 < 0 ? -$1 : $1);
		  if (r > worst) worst = r;
		  printf "  step %2d  cpu %.6f  cuda %.6f  rel %.2e\n", n, $1, $2, r }
		END { if (n == 0) print "FAIL no losses";
		      else if (worst > tol) printf "FAIL worst %.2e > %g\n", worst, tol;
		      else printf "ok worst %.2e <= %g\n", worst, tol }')
	say "$verdict" | sed '$d'
	case "$(printf '%s\n' "$verdict" | tail -1)" in
	ok*) say "$1: $(printf '%s\n' "$verdict" | tail -1)" ;;
	*) bad "$1: $(printf '%s\n' "$verdict" | tail -1)" ;;
	esac
}

section "machine"
say "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
say "gpu:     $gpu_line ($ngpu visible)"
say "driver:  $(timeout 30 nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
say "system:  $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), $(ldd --version 2>/dev/null | head -1)"
commit=$(git rev-parse --short HEAD 2>/dev/null) &&
	{ git diff --quiet 2>/dev/null || commit="$commit (modified)"; }
[ -z "$commit" ] && [ -s "$BUILD/bundle.txt" ] &&
	commit="$(sed -n 's/^commit //p' "$BUILD/bundle.txt") (the bundle's)"
say "commit:  ${commit:-unknown}"
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
[ -x "$NVCC" ] && say "nvcc:    $("$NVCC" --version | tail -1)"

# ldd_problems BIN: what the loader cannot satisfy, one line each
ldd_problems() { LD_LIBRARY_PATH="$GP_LIBS" ldd "$1" 2>&1 | grep -E 'not found|No such file'; }
# find_libs BIN: adds to GP_LIBS the folder of each library BIN misses,
# from the CUDA folders and NVIDIA's Python wheels (PyTorch's cuBLAS,
# CUDA runtime and NCCL), and the bundle's libstdc++ where the machine's
# is too old; says what is still missing and fails then
find_libs() {
	local so f roots
	roots=("${CUDA_HOME:-/usr/local/cuda}" /usr/local /opt /usr/lib)
	while IFS= read -r f; do roots+=("$f"); done < <(python3 -c \
		'import nvidia; print("\n".join(nvidia.__path__))' 2>/dev/null)
	for so in $(ldd_problems "$1" | awk '$2 == "=>" && $3 == "not" { print $1 }' | sort -u); do
		f=$(find "${roots[@]}" -maxdepth 6 -name "$so" 2>/dev/null | head -1)
		[ -n "$f" ] && GP_LIBS="$GP_LIBS:$(dirname "$f")"
	done
	if ldd_problems "$1" | grep -q -e 'GLIBCXX_' -e 'libstdc++.*not found' -e 'libgcc_s.*not found' &&
		[ -d "$(dirname "$1")/lib/fallback" ]; then
		GP_LIBS="$(dirname "$1")/lib/fallback:$GP_LIBS"
	fi
	if ldd_problems "$1" >/dev/null; then
		ldd_problems "$1" | sed 's/^[[:space:]]*/  missing: /'
		return 1
	fi
	return 0
}

section "0. build"
start=$SECONDS
GP_LIBS=""
bundle_hash=$(sed -n 's/^source_hash //p' "$BUILD/bundle.txt" 2>/dev/null)
if [ -n "$bundle_hash" ] && [ -x "$BUILD/gpuplan" ] &&
	[ "$bundle_hash" = "$(bash bench/gpu_bundle.sh --hash)" ]; then
	say "using the bundle in $BUILD (bench/gpu_bundle.sh):"
	sed 's/^/  /' "$BUILD/bundle.txt"
	GP_LIBS=$PWD/$BUILD/lib
	if ! find_libs "$PWD/$BUILD/gpuplan"; then
		bad "the bundle's binary cannot load here (above)"
		exit 1
	fi
else
	[ -n "$bundle_hash" ] && say "the bundle in $BUILD was built from other sources: building"
	if [ ! -x "$NVCC" ]; then
		bad "nvcc not found at $NVCC (set CUDA_HOME): the CUDA backend cannot be built"
		exit 1
	fi
	if ! timeout $STEP_LIMIT make -j"$(nproc)" BUILD="$BUILD" CUDA=yes >"$WORK/build.log" 2>&1; then
		tail -30 "$WORK/build.log"
		bad "build failed"
		exit 1
	fi
	say "built $BUILD/gpuplan with the CUDA backend in $((SECONDS - start)) s"
	if ! find_libs "$PWD/$BUILD/gpuplan"; then
		bad "the binary cannot load here (above)"
		exit 1
	fi
fi
[ -n "$GP_LIBS" ] && say "libraries from: ${GP_LIBS#:}"
# every gpuplan below runs through this wrapper, which gives it the
# libraries found above and nothing else of this script's environment
GP=$WORK/gpuplan
if [ -n "$GP_LIBS" ]; then
	printf '#!/bin/sh\nLD_LIBRARY_PATH="%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "%s" "$@"\n' \
		"${GP_LIBS#:}" "$PWD/$BUILD/gpuplan" >"$GP"
else
	printf '#!/bin/sh\nexec "%s" "$@"\n' "$PWD/$BUILD/gpuplan" >"$GP"
fi
chmod +x "$GP"
export GPUPLAN_DATA_DIR="$WORK/userdata"

section "1. small model: CUDA against CPU, same seed, 10 steps"
SMALL="--layers 4 --hidden 256 --heads 8 --kv-heads 4 --ffn 1024 --vocab 512 --seq 128 --mbs 4 --gbs 8 --steps 10 --seed 7"
timeout $STEP_LIMIT "$GP" execute $SMALL --backend cpu --json "$WORK/cpu.json" >"$WORK/cpu.out" 2>&1 \
	|| { tail -5 "$WORK/cpu.out"; bad "cpu run failed"; }
timeout $STEP_LIMIT "$GP" execute $SMALL --backend cuda --json "$WORK/bf16.json" >"$WORK/bf16.out" 2>&1 \
	|| { tail -5 "$WORK/bf16.out"; bad "cuda bf16 run failed"; }
timeout $STEP_LIMIT "$GP" execute $SMALL --backend cuda --precision fp32 --json "$WORK/fp32.json" \
	>"$WORK/fp32.out" 2>&1 || { tail -5 "$WORK/fp32.out"; bad "cuda fp32 run failed"; }
if [ -s "$WORK/cpu.json" ] && [ -s "$WORK/bf16.json" ]; then
	say "bf16 activations and GEMMs (tolerance $BF16_TOL relative; bf16 keeps 8 bits of mantissa, 0.4% per element):"
	compare "cuda bf16 against cpu fp32" "$WORK/cpu.json" "$WORK/bf16.json" $BF16_TOL
fi
if [ -s "$WORK/cpu.json" ] && [ -s "$WORK/fp32.json" ]; then
	say "fp32 throughout (tolerance $FP32_TOL relative: sums in another order, atomic adds):"
	compare "cuda fp32 against cpu fp32" "$WORK/cpu.json" "$WORK/fp32.json" $FP32_TOL
fi

MOE="--layers 4 --hidden 256 --heads 8 --kv-heads 4 --ffn 1024 --vocab 512 --seq 128 --mbs 4 --gbs 8 --steps 10 --seed 7 --mlp swiglu --experts 8 --top-k 2 --expert-ffn 256 --shared-experts 1"
timeout $STEP_LIMIT "$GP" execute $MOE --backend cpu --json "$WORK/moe-cpu.json" >"$WORK/moe-cpu.out" 2>&1 \
	|| { tail -5 "$WORK/moe-cpu.out"; bad "MoE cpu run failed"; }
timeout $STEP_LIMIT "$GP" execute $MOE --backend cuda --json "$WORK/moe-bf16.json" >"$WORK/moe-bf16.out" 2>&1 \
	|| { tail -5 "$WORK/moe-bf16.out"; bad "MoE cuda bf16 run failed"; }
timeout $STEP_LIMIT "$GP" execute $MOE --backend cuda --precision fp32 --json "$WORK/moe-fp32.json" \
	>"$WORK/moe-fp32.out" 2>&1 || { tail -5 "$WORK/moe-fp32.out"; bad "MoE cuda fp32 run failed"; }
if [ -s "$WORK/moe-cpu.json" ] && [ -s "$WORK/moe-bf16.json" ]; then
	say "mixture of experts, bf16 (a bf16 router may choose another expert where two are near):"
	compare "MoE cuda bf16 against cpu fp32" "$WORK/moe-cpu.json" "$WORK/moe-bf16.json" $BF16_TOL
fi
if [ -s "$WORK/moe-cpu.json" ] && [ -s "$WORK/moe-fp32.json" ]; then
	say "mixture of experts, fp32 throughout:"
	compare "MoE cuda fp32 against cpu fp32" "$WORK/moe-cpu.json" "$WORK/moe-fp32.json" $FP32_TOL
fi
if [ "$ngpu" -gt 1 ] && command -v mpirun >/dev/null 2>&1; then
	MPI="mpirun --oversubscribe"
	[ "$(id -u)" = 0 ] && MPI="mpirun --allow-run-as-root --oversubscribe"
	if timeout $STEP_LIMIT $MPI -np 2 "$GP" execute $MOE --backend cuda --precision fp32 --dp 2 \
		--ep 2 --json "$WORK/moe-ep2.json" >"$WORK/moe-ep2.out" 2>&1; then
		say "mixture of experts over 2 GPUs (dp 2, ep 2; NCCL all-to-all), fp32:"
		compare "MoE cuda ep2 fp32 against cpu fp32" "$WORK/moe-cpu.json" "$WORK/moe-ep2.json" \
			$FP32_TOL
	else
		tail -5 "$WORK/moe-ep2.out"
		bad "MoE cuda ep2 run failed"
	fi
fi

section "2. calibrate"
CAL="$WORK/calibration.json"
np=1
if [ "$ngpu" -gt 1 ] && command -v mpirun >/dev/null 2>&1; then
	np=$ngpu
fi
if timeout $STEP_LIMIT "$GP" calibrate --backend cuda --np "$np" -o "$CAL" >"$WORK/cal.out" 2>&1; then
	cat "$WORK/cal.out"
	cp "$CAL" "$STEM-calibration.json"
else
	tail -20 "$WORK/cal.out"
	bad "calibrate failed"
	CAL=""
fi

catalog_gpu=$(sed -n 's/.*"gpu":[[:space:]]*"\([^"]*\)".*/\1/p' "${CAL:-/dev/null}" 2>/dev/null | head -1)
calflag=()
[ -n "$CAL" ] && calflag=(--calibration "$CAL")

# plan NAME SHAPE...: a single-GPU plan of the shape from `gpuplan
# simulate` on the calibration's catalog GPU into $WORK/NAME-plan.json
# (printed), with the simulator's timeline of its step; sets plan_file
# (empty when there is no catalog GPU: the shape is run from flags)
plan() {
	local name=$1
	shift
	plan_file=""
	if [ -n "$catalog_gpu" ] && timeout 60 "$GP" simulate --gpu "$catalog_gpu" --gpus 1 "$@" \
		${calflag[@]+"${calflag[@]}"} -o "$WORK/$name-plan.json" \
		--timeline "$STEM-$name-sim-timeline.json" >"$WORK/$name-plan.out" 2>&1; then
		say "plan (gpuplan simulate on $catalog_gpu, calibrated):"
		grep -v '^wrote ' "$WORK/$name-plan.out"
		plan_file="$WORK/$name-plan.json"
	else
		say "no catalog GPU named by the calibration; running the shape from flags"
	fi
}

# measure NAME SHAPE...: 10 steps of $plan_file with the shape's flags,
# predicted on the same calibration (named explicitly); the run's JSON
# and measured timeline kept beside the report
measure() {
	local name=$1
	shift
	if timeout $STEP_LIMIT "$GP" execute $plan_file "$@" --backend cuda --steps 10 \
		${calflag[@]+"${calflag[@]}"} --json "$WORK/$name.json" --trace "$WORK/$name-trace.json" \
		>"$WORK/$name.out" 2>&1; then
		cat "$WORK/$name.out"
		cp "$WORK/$name.json" "$STEM-$name-run.json"
		cp "$WORK/$name-trace.json" "$STEM-$name-trace.json"
	else
		tail -20 "$WORK/$name.out"
		bad "$name run failed"
	fi
}

# Targets, reported and not counted as failed checks.
# mfu_of NAME: the measured MFU in percent of a run's table
mfu_of() { sed -n 's/^MFU[[:space:]]*\([0-9.]*\)%.*/\1/p' "$WORK/$1.out" 2>/dev/null | head -1; }
# accuracy_targets NAME: step time (calibrated) and peak memory within
# 10% of the prediction
accuracy_targets() {
	local e
	[ -s "$WORK/$1.json" ] || return 0
	e=$(num step_time_error "$WORK/$1.json")
	target "$1: step time $(pct "${e:-}") against the calibrated prediction (within 10%)" \
		"${e:-}" 'v <= 0.1 && v >= -0.1'
	e=$(num memory_error "$WORK/$1.json")
	target "$1: peak memory $(pct "${e:-}") against the prediction (within 10%)" \
		"${e:-}" 'v <= 0.1 && v >= -0.1'
}

section "3. single-GPU plan: 24 layers x 2048 hidden, sequence 2048"
MID="--layers 24 --hidden 2048 --heads 16 --ffn 8192 --vocab 50304 --seq 2048 --mbs 4 --gbs 8"
plan mid $MID
# the pre-flight first: the GPU is the plan's, the memory it needs is
# free, and after one step the device's memory in use against the
# prediction
if timeout $STEP_LIMIT "$GP" execute $plan_file $MID --backend cuda --check \
	${calflag[@]+"${calflag[@]}"} >"$WORK/check.out" 2>&1; then
	say "execute --check:"
	cat "$WORK/check.out"
else
	tail -20 "$WORK/check.out"
	bad "execute --check failed"
fi
measure mid $MID
gp_step=$(num step_time_s "$WORK/mid.json")
[ -s "$WORK/mid.json" ] && say "mid: MFU $(mfu_of mid)% (the MFU target is the GEMM-heavy step's, below)"
accuracy_targets mid

section "4. GEMM-heavy step: 2 layers x 8192 hidden, sequence 2048"
WIDE="--layers 2 --hidden 8192 --heads 64 --ffn 32768 --vocab 32000 --seq 2048 --mbs 4 --gbs 8"
plan wide $WIDE
measure wide $WIDE
if [ -s "$WORK/wide.json" ]; then
	mfu=$(mfu_of wide)
	target "wide: MFU ${mfu:-?}% (>= 50%)" "${mfu:-}" 'v >= 50'
fi
accuracy_targets wide

section "5. the mid-size shape in PyTorch"
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
	cat >"$WORK/torch_step.py" <<'EOF'
# A GPT-2-style decoder of gpu_check's mid-size shape (LayerNorm, GELU,
# untied head, biases), trained in bf16 autocast with fused AdamW and
# scaled_dot_product_attention's flash kernel: median step time of 10.
import statistics, time, torch
import torch.nn as nn
import torch.nn.functional as F

L, C, H, FF, V, T, MBS, GBS = 24, 2048, 16, 8192, 50304, 2048, 4, 8

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(C), nn.LayerNorm(C)
        self.qkv, self.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.fc, self.out = nn.Linear(C, FF), nn.Linear(FF, C)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (z.view(b, t, H, C // H).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, C))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(T, C)
        self.blocks = nn.ModuleList(Block() for _ in range(L))
        self.lnf, self.head = nn.LayerNorm(C), nn.Linear(C, V, bias=False)

    def forward(self, idx, tgt):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for b in self.blocks:
            x = b(x)
        logits = self.head(self.lnf(x))
        return F.cross_entropy(logits.float().view(-1, V), tgt.view(-1))

torch.manual_seed(0)
dev = "cuda"
model = GPT().to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
idx = torch.randint(0, V, (GBS // MBS, MBS, T), device=dev)
tgt = torch.randint(0, V, (GBS // MBS, MBS, T), device=dev)
times = []
torch.cuda.reset_peak_memory_stats()
for step in range(13):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for m in range(GBS // MBS):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(idx[m], tgt[m]) / (GBS // MBS)
        loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    if step >= 3:
        times.append(time.perf_counter() - t0)
print("torch %s, median step %.4f s, peak memory %.1f GiB"
      % (torch.__version__, statistics.median(times), torch.cuda.max_memory_allocated() / 2**30))
print("median_step_s %.6f" % statistics.median(times))
EOF
	if CUDA_VISIBLE_DEVICES=0 timeout $STEP_LIMIT python3 "$WORK/torch_step.py" >"$WORK/torch.out" 2>&1; then
		grep -v '^median_step_s' "$WORK/torch.out"
		pt_step=$(sed -n 's/^median_step_s //p' "$WORK/torch.out")
		if [ -n "$gp_step" ] && [ -n "$pt_step" ]; then
			awk -v g="$gp_step" -v p="$pt_step" 'BEGIN {
				printf "gpuplan %.4f s, PyTorch %.4f s per step: gpuplan takes %.2fx PyTorch'"'"'s time\n", g, p, g / p }'
		fi
	else
		tail -10 "$WORK/torch.out"
		bad "the PyTorch step failed"
	fi
else
	say "PyTorch with CUDA is not installed here: no comparison"
fi

section "verdict"
if [ "$failed" = 0 ]; then
	say "all checks passed; output kept in $RESULT"
else
	say "some checks FAILED; output kept in $RESULT"
fi
exit $failed
