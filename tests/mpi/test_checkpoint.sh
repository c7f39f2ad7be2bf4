#!/usr/bin/env bash
# test_checkpoint.sh - execute --checkpoint-dir and --resume: a run killed
# mid-way (a rank SIGKILLed at a step, or stopped by --steps) and resumed
# from its newest checkpoint computes the uninterrupted run's losses and
# gradient norms bit for bit, in every kind of layout of the layout test
# (TP, PP, interleaved PP, DP, ZeRO 1 to 3, CP, tied embeddings, sequence
# parallel, mixed); a checkpoint write killed half-way leaves the one
# before it whole; a checkpoint of another model, layout, seed, backend or
# precision, a damaged shard, and a directory that holds checkpoints for a
# new run are refused in one line with exit 2.
#
# The model is test_layouts.sh's, small enough for 4 ranks oversubscribed
# on 2 cores; 6 steps, a checkpoint every 2.
. "$(dirname "$0")/../cli/lib.sh"

MODEL="--layers 8 --hidden 32 --heads 4 --kv-heads 2 --ffn 64 --vocab 64 --seq 16 --gbs 8 --no-flash"
LIMIT=60   # seconds any one run may take before it counts as a hang

if ! command -v mpirun >/dev/null; then
	echo "ok - skipped: mpirun not installed"
	finish
	exit
fi

# array KEY FILE: a number array of a gpuplan.run/1 file, one per line
array() { sed -n "s/.*\"$1\":[[:space:]]*\\[\\(.*\\)\\].*/\\1/p" "$2" | tr ',' '\n' | tr -d ' \t'; }

# same_tail NAME FULL RESUMED FIRST KEY: RESUMED's KEY values are FULL's
# from step FIRST on, digit for digit (the run JSON prints each double in
# the digits that read back exactly: equal text is equal bits)
same_tail() {
	local want got
	want=$(array "$5" "$2" | tail -n +"$4" | tr '\n' ' ')
	got=$(array "$5" "$3" | tr '\n' ' ')
	if [ -n "$want" ] && [ "$want" = "$got" ]; then
		pass "$1"
	else
		fail "$1" "expected '$want', found '$got'"
	fi
}

# resume_case NAME RANKS FLAGS...: 6 steps uninterrupted; the same killed
# (the last rank SIGKILLed as step 5 begins, checkpoints at steps 2 and 4)
# and resumed to 6; the resumed run's steps 5 and 6 are the
# uninterrupted run's.
resume_case() {
	local name=$1 ranks=$2 d=$TMP/$1
	shift 2
	mkdir -p "$d"
	gp execute $MODEL "$@" --steps 6 --checkpoint-dir "$d/full" --checkpoint-every 2 \
		--json "$d/full.json"
	expect_rc "$name: uninterrupted with checkpoints: exit 0" 0
	run "$name: killed" env GPUPLAN_FAULT_KILL_RANK=$((ranks - 1)):5 timeout $LIMIT \
		$GPUPLAN execute $MODEL "$@" --steps 6 --checkpoint-dir "$d/ck" --checkpoint-every 2
	[ "$RC" != 0 ] && [ "$RC" != 124 ] && pass "$name: killed at step 5: exit $RC" \
		|| fail "$name: killed at step 5" "exit $RC"
	[ -f "$d/ck/step-00000004/manifest.json" ] && [ ! -e "$d/ck/step-00000006" ] \
		&& pass "$name: the killed run left the checkpoint of step 4" \
		|| fail "$name: the killed run left the checkpoint of step 4" "$(ls "$d/ck" | tr '\n' ' ')"
	gp execute $MODEL "$@" --steps 6 --checkpoint-dir "$d/ck" --resume --json "$d/res.json"
	# under make asan on a loaded machine LeakSanitizer's own tracer can
	# crash at a rank's exit (signal 11 in StopTheWorld) after the run
	# finished: say so and judge the run by what it wrote (below)
	if [ "$RC" = 1 ] && grep -q "LeakSanitizer has encountered a fatal error" "$ERR" &&
	   [ -s "$d/res.json" ]; then
		echo "# $name: LeakSanitizer's tracer failed at exit, not the run"
		RC=0
	fi
	expect_rc "$name: resumed: exit 0" 0
	[ "$(json_num first_step "$d/res.json")" = 5 ] && pass "$name: resumed at first_step 5" \
		|| fail "$name: resumed at first_step 5" "found '$(json_num first_step "$d/res.json")'"
	same_tail "$name: resumed losses of steps 5-6 are the uninterrupted run's, bit for bit" \
		"$d/full.json" "$d/res.json" 5 losses
	same_tail "$name: resumed gradient norms of steps 5-6 are the uninterrupted run's" \
		"$d/full.json" "$d/res.json" 5 grad_norms
}

start=$SECONDS
resume_case single 1 --mbs 2
resume_case tp2 2 --tp 2 --mbs 2
resume_case pp2 2 --pp 2 --mbs 2
resume_case pp2-interleaved-v2 2 --pp 2 --interleave 2 --mbs 1
resume_case dp2 2 --dp 2 --mbs 2
resume_case dp2-zero1 2 --dp 2 --zero 1 --mbs 2
resume_case dp2-zero2 2 --dp 2 --zero 2 --mbs 2
resume_case dp2-zero3 2 --dp 2 --zero 3 --mbs 2
resume_case cp2 2 --cp 2 --mbs 2
resume_case tied-pp2 2 --tied --pp 2 --mbs 2
resume_case tp2xpp2 4 --tp 2 --pp 2 --mbs 1
resume_case swiglu-tp2xdp2-sp-zero3 4 --mlp swiglu --tp 2 --dp 2 --seq-parallel --zero 3 \
	--recompute full --mbs 1
echo "# 12 layouts killed and resumed in $((SECONDS - start)) s"

# --steps 3 stops cleanly with a checkpoint after its last step; --resume
# --steps 6 runs 4 to 6 as the uninterrupted run did
d=$TMP/stop
gp execute $MODEL --dp 2 --zero 1 --mbs 2 --steps 3 --checkpoint-dir "$d" --checkpoint-every 2 \
	--json "$TMP/stop3.json"
expect_rc "--steps 3: exit 0" 0
[ -f "$d/step-00000003/manifest.json" ] && [ -f "$d/step-00000002/manifest.json" ] \
	&& pass "--steps 3 with a checkpoint every 2: checkpoints of steps 2 and 3" \
	|| fail "--steps 3: checkpoints of steps 2 and 3" "$(ls "$d" | tr '\n' ' ')"
gp execute $MODEL --dp 2 --zero 1 --mbs 2 --steps 6 --checkpoint-dir "$d" --checkpoint-every 2 \
	--resume --json "$TMP/stop6.json"
expect_rc "resumed after --steps 3: exit 0" 0
expect_out "resumed after --steps 3: the header says so" '^checkpoint: every 2 steps .*; resuming after step 3$'
expect_out "resumed after --steps 3: the summary says so" '^loss [0-9.]+ -> [0-9.]+ over steps 4-6 \(resumed after step 3\)'
same_tail "resumed after --steps 3: losses of steps 4-6 are the uninterrupted run's" \
	"$TMP/dp2-zero1/full.json" "$TMP/stop6.json" 4 losses
# two checkpoints are kept: after 6 steps, those of steps 4 and 6
[ "$(ls "$d" | tr '\n' ' ')" = "step-00000004 step-00000006 " ] \
	&& pass "the newest 2 checkpoints are kept" \
	|| fail "the newest 2 checkpoints are kept" "found '$(ls -A "$d" | tr '\n' ' ')'"

# A write killed half-way through a shard: the checkpoint of step 2 stays
# whole, step 4's never appears, and resuming from step 2 reproduces 3-6.
d=$TMP/torn
run "checkpoint write killed" env GPUPLAN_FAULT_KILL_CKPT=1:4 timeout $LIMIT \
	$GPUPLAN execute $MODEL --tp 2 --mbs 2 --steps 6 --checkpoint-dir "$d" --checkpoint-every 2
[ "$RC" != 0 ] && [ "$RC" != 124 ] && pass "checkpoint write killed: exit $RC" \
	|| fail "checkpoint write killed: non-zero exit" "exit $RC"
[ -d "$d/.step-00000004.tmp" ] && [ ! -e "$d/step-00000004" ] && [ -f "$d/step-00000002/manifest.json" ] \
	&& pass "checkpoint write killed: step 4 half-written aside, step 2 whole" \
	|| fail "checkpoint write killed: step 4 aside, step 2 whole" "$(ls -A "$d" | tr '\n' ' ')"
gp execute $MODEL --tp 2 --mbs 2 --steps 6 --checkpoint-dir "$d" --resume --json "$TMP/torn.json"
expect_rc "resumed after a killed write: exit 0" 0
same_tail "resumed after a killed write: losses of steps 3-6 are the uninterrupted run's" \
	"$TMP/tp2/full.json" "$TMP/torn.json" 3 losses
[ -e "$d/.step-00000004.tmp" ] && fail "resumed after a killed write: the torn write removed" "still there" \
	|| pass "resumed after a killed write: the torn write removed"

# Without --checkpoint-every: the plan's checkpoint interval over the
# predicted step time.  An interval of 3.5 predicted steps checkpoints
# every 3: of 7 steps, 6 and 7 are kept.
FIX=tests/fixtures/exec
gp execute "$FIX/plan_tp2_pp2.json" --steps 1 --json "$TMP/pred.json"
expect_rc "plan run for its prediction: exit 0" 0
interval=$(awk -v p="$(json_num predicted_step_time_s "$TMP/pred.json")" 'BEGIN { printf "%.9g", 3.5 * p }')
sed "s/\"usd_per_gpu_hour\":[[:space:]]*0/\"usd_per_gpu_hour\": 0, \"checkpoint_interval_s\": $interval/" \
	"$FIX/plan_tp2_pp2.json" >"$TMP/plan-interval.json"
gp execute "$TMP/plan-interval.json" --steps 7 --checkpoint-dir "$TMP/interval"
expect_rc "plan with a checkpoint interval: exit 0" 0
expect_out "plan with a checkpoint interval of 3.5 predicted steps: every 3" \
	'^checkpoint: every 3 steps and after the last'
[ "$(ls "$TMP/interval" | tr '\n' ' ')" = "step-00000006 step-00000007 " ] \
	&& pass "plan's interval: checkpoints of steps 6 and 7 kept" \
	|| fail "plan's interval: checkpoints of steps 6 and 7 kept" "found '$(ls -A "$TMP/interval" | tr '\n' ' ')'"

# Refusals: one line, exit 2, before any rank starts.
ck=$TMP/tp2/ck   # holds tp 2 checkpoints of steps 4 and 6
refuse() { # NAME REGEX FLAGS...
	local name=$1 re=$2
	shift 2
	gp execute $MODEL --mbs 2 "$@"
	expect_rc "$name: exit 2" 2
	expect_err "$name: says why" "$re"
	expect_err_lines "$name: one error line" 1
	[ -s "$OUT" ] && fail "$name: nothing on stdout" "$(head -1 "$OUT")" || pass "$name: nothing on stdout"
}
refuse "resume on another layout" \
	"^error: --resume: .*/step-00000006: expected a checkpoint of this run's layout \\(tp 1 x pp 2 .*\\), found one of tp 2 x pp 1" \
	--pp 2 --steps 8 --checkpoint-dir "$ck" --resume
refuse "resume with another ZeRO stage" "layout .*zero 1.*found one of .*zero 0" \
	--tp 2 --zero 1 --steps 8 --checkpoint-dir "$ck" --resume
refuse "resume of another model" "expected a checkpoint of this run's model \\(tiny-gpt: 8 layers x 48 hidden" \
	--tp 2 --hidden 48 --ffn 96 --steps 8 --checkpoint-dir "$ck" --resume
refuse "resume with another seed" "expected a checkpoint of this run's seed 7 \\(its data\\), found one of seed 1234" \
	--tp 2 --seed 7 --steps 8 --checkpoint-dir "$ck" --resume
refuse "resume to no further step" "^error: --steps: expected more than the 6 steps of the checkpoint in" \
	--tp 2 --steps 6 --checkpoint-dir "$ck" --resume
refuse "a new run into a directory with checkpoints" \
	"^error: --checkpoint-dir: .*: expected no checkpoint \\(a new run\\), found one of step 6; pass --resume" \
	--tp 2 --steps 8 --checkpoint-dir "$ck"
mkdir -p "$TMP/empty"
refuse "resume from a directory without checkpoints" "^error: --resume: .*empty: expected a checkpoint" \
	--steps 8 --checkpoint-dir "$TMP/empty" --resume
refuse "resume from no directory" "^error: --resume: .*nodir: expected a checkpoint directory, found none" \
	--steps 8 --checkpoint-dir "$TMP/nodir" --resume
refuse "checkpoint directory under a missing parent" "^error: --checkpoint-dir: .*: expected a writable directory to make it in, found no parent directory" \
	--steps 2 --checkpoint-dir "$TMP/no/such/dir"
refuse "--resume without --checkpoint-dir" "^error: --resume: expected --checkpoint-dir DIR beside it" \
	--steps 2 --resume
# a damaged shard: caught by the manifest's hash on the rank that reads it
cp -r "$ck" "$TMP/damaged"
printf '\x7f' | dd of="$TMP/damaged/step-00000006/rank-00001.bin" bs=1 seek=1000 conv=notrunc 2>/dev/null
gp execute $MODEL --mbs 2 --tp 2 --steps 8 --checkpoint-dir "$TMP/damaged" --resume
expect_rc "a damaged shard: exit 2" 2
expect_err "a damaged shard: names it and the hash" \
	"rank-00001.bin: expected the manifest's [0-9]+ bytes of FNV-1a [0-9a-f]{16}, found [0-9]+ bytes of [0-9a-f]{16}"
expect_err_lines "a damaged shard: one error line" 1
[ -s "$OUT" ] && fail "a damaged shard of a tp 2 run: found before mpirun starts the ranks" "$(head -1 "$OUT")" \
	|| pass "a damaged shard of a tp 2 run: found before mpirun starts the ranks"

# What a checkpoint was trained with is checked on resume: the --data
# file (its size and FNV-1a hash; its path and time stamp are only where
# it was), --lr and the rest of AdamW's settings, and every shard (a
# regular file of the manifest's size and hash) before any rank starts.
# Single-rank checkpoints of steps 1 and 2 trained on tokens.bin.
g=$TMP/guard
mkdir -p "$g"
# tokens FILE SEED: 4096 uint16 tokens below the vocabulary (64)
tokens() { python3 -c 'import random, struct, sys
r = random.Random(int(sys.argv[2]))
open(sys.argv[1], "wb").write(struct.pack("<4096H", *[r.randrange(64) for _ in range(4096)]))' "$1" "$2"; }
tokens "$g/tokens.bin" 1
tokens "$g/other.bin" 2
gp execute $MODEL --mbs 2 --data "$g/tokens.bin" --steps 2 --checkpoint-dir "$g/ck" \
	--checkpoint-every 1
expect_rc "guard: a run on --data with checkpoints: exit 0" 0
grep -q '"data"' "$g/ck/step-00000002/manifest.json" && grep -q '"lr"' "$g/ck/step-00000002/manifest.json" \
	&& pass "guard: the manifest records the data and the optimizer" \
	|| fail "guard: the manifest records the data and the optimizer" "$(head -c 300 "$g/ck/step-00000002/manifest.json")"
refuse "resume on another --data" \
	"^error: --resume: .*/step-00000002: --data: expected the checkpoint's .*tokens.bin \\(8192 bytes, FNV-1a [0-9a-f]{16}\\), found .*other.bin \\(8192 bytes, FNV-1a [0-9a-f]{16}\\)" \
	--data "$g/other.bin" --steps 3 --checkpoint-dir "$g/ck" --resume
refuse "resume without the checkpoint's --data" \
	"^error: --resume: .*/step-00000002: --data: expected the checkpoint's .*tokens.bin \\(8192 bytes, .*\\), found synthetic data" \
	--steps 3 --checkpoint-dir "$g/ck" --resume
refuse "resume with another --lr" \
	"^error: --resume: .*/step-00000002: --lr: expected the checkpoint's 0.001, found 0.002" \
	--data "$g/tokens.bin" --lr 0.002 --steps 3 --checkpoint-dir "$g/ck" --resume
cp -r "$g/ck" "$g/ck2"
cp "$g/tokens.bin" "$g/moved.bin"
touch -d '2001-01-01' "$g/moved.bin"
gp execute $MODEL --mbs 2 --data "$g/moved.bin" --steps 3 --checkpoint-dir "$g/ck2" --resume
expect_rc "resume on the same tokens at another path and time: exit 0" 0
expect_err "resume on the same tokens elsewhere: says why that is safe" \
	"^--data: .*moved.bin holds the checkpoint's tokens \\(8192 bytes, FNV-1a [0-9a-f]{16}\\), first read as .*tokens.bin"
# the data file changed in place, same size
cp "$g/tokens.bin" "$g/keep.bin"
printf '\x01\x00' | dd of="$g/tokens.bin" bs=1 seek=100 conv=notrunc 2>/dev/null
refuse "resume on --data changed in place" \
	"--data: expected the checkpoint's .*tokens.bin \\(8192 bytes, FNV-1a ([0-9a-f]{16})\\), found .*tokens.bin \\(8192 bytes, FNV-1a [0-9a-f]{16}\\)" \
	--data "$g/tokens.bin" --steps 3 --checkpoint-dir "$g/ck" --resume
cp "$g/keep.bin" "$g/tokens.bin"
# the newest checkpoint without its manifest: an error naming it, not a
# silent resume from step 1
cp -r "$g/ck" "$g/nomanifest"
rm "$g/nomanifest/step-00000002/manifest.json"
refuse "newest checkpoint without its manifest" \
	"^error: --resume: .*nomanifest/step-00000002: expected its manifest.json, found none" \
	--data "$g/tokens.bin" --steps 3 --checkpoint-dir "$g/nomanifest" --resume
# a FIFO in place of a shard is refused without reading it: no hang, even
# with no --timeout (the test's timeout says 124 if it hangs)
cp -r "$g/ck" "$g/fifo"
rm "$g/fifo/step-00000002/rank-00000.bin"
mkfifo "$g/fifo/step-00000002/rank-00000.bin"
run "FIFO shard" timeout 20 $GPUPLAN execute $MODEL --mbs 2 --data "$g/tokens.bin" --steps 3 \
	--checkpoint-dir "$g/fifo" --resume
expect_rc "a FIFO in place of a shard: exit 2, no hang" 2
expect_err "a FIFO in place of a shard: says so" \
	"^error: --resume: .*fifo/step-00000002/rank-00000.bin: expected a regular file \\(the shard of rank 0\\), found a FIFO"
expect_err_lines "a FIFO in place of a shard: one error line" 1
# a short shard and a damaged one are found before any rank starts:
# nothing on stdout (the run's header comes after the check)
cp -r "$g/ck" "$g/short"
truncate -s -4 "$g/short/step-00000002/rank-00000.bin"
refuse "a short shard" \
	"^error: --resume: .*short/step-00000002/rank-00000.bin: expected the manifest's [0-9]+ bytes, found [0-9]+" \
	--data "$g/tokens.bin" --steps 3 --checkpoint-dir "$g/short" --resume
cp -r "$g/ck" "$g/bad"
printf '\x7f' | dd of="$g/bad/step-00000002/rank-00000.bin" bs=1 seek=1000 conv=notrunc 2>/dev/null
refuse "a damaged shard, found before the ranks start" \
	"^error: --resume: .*bad/step-00000002/rank-00000.bin: expected the manifest's [0-9]+ bytes of FNV-1a [0-9a-f]{16}, found [0-9]+ bytes of [0-9a-f]{16}" \
	--data "$g/tokens.bin" --steps 3 --checkpoint-dir "$g/bad" --resume


# The backend and precision a checkpoint was computed with are in its
# manifest (the CPU backend computes in fp32 whatever --precision says); a
# resume on another backend or precision is refused naming both, and a
# manifest written before gpuplan recorded them resumes on this run's and
# says so.
man=$g/ck/step-00000002/manifest.json
grep -Eq '"backend":[[:space:]]*"cpu"' "$man" && grep -Eq '"precision":[[:space:]]*"fp32"' "$man" \
	&& pass "compute: the manifest records the backend cpu and the precision fp32" \
	|| fail "compute: the manifest records the backend cpu and the precision fp32" \
		"$(grep -E 'backend|precision' "$man")"
# set_compute DIR BACKEND PRECISION: DIR's checkpoint of step 2 as if
# that backend and precision had written it
set_compute() {
	sed -E -i "s/\"backend\":([[:space:]]*)\"[a-z0-9]*\"/\"backend\":\\1\"$2\"/;
		s/\"precision\":([[:space:]]*)\"[a-z0-9]*\"/\"precision\":\\1\"$3\"/" \
		"$1/step-00000002/manifest.json"
}
cp -r "$g/ck" "$g/gpu"
set_compute "$g/gpu" cuda bf16
refuse "resume of a cuda bf16 checkpoint on the CPU backend" \
	"^error: --resume: .*gpu/step-00000002: expected a checkpoint of this run's backend and precision \\(cpu, fp32\\), found one of cuda, bf16$" \
	--data "$g/tokens.bin" --steps 3 --checkpoint-dir "$g/gpu" --resume
set_compute "$g/gpu" cuda fp32
refuse "resume of a cuda fp32 checkpoint on the CPU backend" \
	"^error: --resume: .*gpu/step-00000002: expected a checkpoint of this run's backend and precision \\(cpu, fp32\\), found one of cuda, fp32$" \
	--data "$g/tokens.bin" --steps 3 --checkpoint-dir "$g/gpu" --resume
set_compute "$g/gpu" cpu bf16
refuse "resume of a bf16 checkpoint in fp32" \
	"^error: --resume: .*gpu/step-00000002: expected a checkpoint of this run's backend and precision \\(cpu, fp32\\), found one of cpu, bf16$" \
	--data "$g/tokens.bin" --steps 3 --checkpoint-dir "$g/gpu" --resume
cp -r "$g/ck" "$g/fp32"
gp execute $MODEL --mbs 2 --data "$g/tokens.bin" --precision fp32 --steps 3 \
	--checkpoint-dir "$g/fp32" --resume
expect_rc "the CPU backend's checkpoint resumes with --precision fp32, its precision all along" 0
cp -r "$g/ck" "$g/old"
sed -E -i '/"(backend|precision)":/d' "$g/old/step-00000002/manifest.json"
gp execute $MODEL --mbs 2 --data "$g/tokens.bin" --steps 3 --checkpoint-dir "$g/old" --resume
expect_rc "a manifest without backend and precision resumes: exit 0" 0
# (tokens.bin, copied back above, has a new time stamp: the data's note
# comes first, on the same line)
expect_err "a manifest without backend and precision: says what it assumes" \
	"(^|; )--resume: [^;]*old/step-00000002: the checkpoint does not say its backend and precision \\(written before gpuplan recorded them\\); taken to be this run's, cpu and fp32$"
grep -Eq '"backend":[[:space:]]*"cpu"' "$g/old/step-00000003/manifest.json" \
	&& pass "a resumed old checkpoint's next one records its backend" \
	|| fail "a resumed old checkpoint's next one records its backend" "none in step 3's manifest"

finish
