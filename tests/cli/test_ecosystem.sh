#!/usr/bin/env bash
# test_ecosystem.sh - what makes gpuplan fit the tools around it: charts
# through gnuplot (PNG and SVG) and the CSV fallback without it, the
# scaling sweep, progress only on a terminal and never with --quiet,
# "did you mean" for GPU names, help listing every option, the man page
# rendering cleanly and covering every option, bash completion, and the
# GPU check's answer without a GPU and its bundle's source hash.
. "$(dirname "$0")/lib.sh"

ROOT=$PWD
HAVE_GNUPLOT=0
command -v gnuplot >/dev/null 2>&1 && HAVE_GNUPLOT=1

# A PATH without gnuplot (with valgrind, when the run uses it).
NOGP="$TMP/no-gnuplot-bin"
mkdir -p "$NOGP"
if [ "${VALGRIND:-0}" = 1 ]; then ln -s "$(command -v valgrind)" "$NOGP/valgrind"; fi

is_png() { [ -s "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '211PNG' ]; }
is_svg() { [ -s "$1" ] && grep -q '<svg' "$1"; }
check() { if eval "$2"; then pass "$1"; else fail "$1" "$2 is false"; fi; }

# ---- charts through gnuplot ------------------------------------------------

if [ $HAVE_GNUPLOT = 1 ]; then
	gp frontier --model llama3-70b --tokens 1T --budget 2.5M --deadline 30d \
		--plot "$TMP/frontier.png"
	expect_rc "frontier --plot png exits 0" 0
	check "frontier chart is a PNG" "is_png '$TMP/frontier.png'"
	expect_err "frontier says where the chart is" "plot written to .*frontier.png"
	expect_out "frontier names the chosen plan" \
		'^chosen within the budget and deadline \(as `gpuplan plan` would\): .* GPUs, .* for \$'

	gp frontier --model llama3-8b --tokens 300B --gpu h100 --plot "$TMP/frontier.svg"
	expect_rc "frontier --plot svg exits 0" 0
	check "frontier chart is an SVG" "is_svg '$TMP/frontier.svg'"

	gp simulate --model llama3-8b --gpu H100 --gpus 16 --gbs 512 --tp 2 --pp 2 \
		--plot "$TMP/breakdown.png"
	expect_rc "simulate --plot png exits 0" 0
	check "breakdown chart is a PNG" "is_png '$TMP/breakdown.png'"
	gp simulate --model llama3-8b --gpu H100 --gpus 16 --gbs 512 --plot "$TMP/breakdown.SVG"
	expect_rc "simulate --plot SVG (upper case) exits 0" 0
	check "breakdown chart is an SVG" "is_svg '$TMP/breakdown.SVG'"

	gp scaling --model llama3-8b --gpu h100 --max-gpus 256 --plot "$TMP/scaling.png"
	expect_rc "scaling --plot png exits 0" 0
	check "scaling chart is a PNG" "is_png '$TMP/scaling.png'"
	gp scaling --model llama3-8b --gpu h100 --max-gpus 64 --plot "$TMP/scaling.svg"
	check "scaling chart is an SVG" "is_svg '$TMP/scaling.svg'"
	# gnuplot says nothing about the scripts gpuplan writes.
	check "gnuplot warned about nothing" "! grep -qi 'warning\|line [0-9]' '$ERR'"

	# A chart that cannot be created is one line from gpuplan; gnuplot,
	# unable to open it, would draw to its stdout, which is ours.
	gp simulate --model llama3-8b --gpu H100 --gpus 8 --gbs 512 --plot "$TMP/no-dir/c.png"
	expect_rc "a chart in a missing directory exits 1" 1
	expect_err_lines "a chart in a missing directory: one error line" 1
	expect_err "a chart in a missing directory is named" "^error: --plot: cannot create a file beside .*no-dir/c.png"
	check "a chart in a missing directory: no image on stdout" "! grep -aq PNG '$OUT'"
	check "a chart in a missing directory: gnuplot says nothing" "[ \$(wc -l <'$ERR') = 1 ]"
fi

# A gnuplot that refuses the script is an error, not a silent success.
mkdir -p "$TMP/bad-gnuplot"
printf '#!/bin/sh\ncat >/dev/null\necho "gnuplot: bad script" >&2\nexit 1\n' \
	>"$TMP/bad-gnuplot/gnuplot"
chmod +x "$TMP/bad-gnuplot/gnuplot"
[ "${VALGRIND:-0}" = 1 ] && ln -sf "$(command -v valgrind)" "$TMP/bad-gnuplot/valgrind"
PATH="$TMP/bad-gnuplot" $GPUPLAN simulate --model llama3-8b --gpu H100 --gpus 8 --gbs 512 \
	--plot "$TMP/bad.png" >"$OUT" 2>"$ERR"
RC=$?
expect_rc "a failing gnuplot exits 1" 1
expect_err "a failing gnuplot is named" '^error: --plot: gnuplot failed drawing .*bad.png'
check "a failing gnuplot leaves no chart" "[ ! -e '$TMP/bad.png' ]"
echo "old chart" >"$TMP/old.png"
PATH="$TMP/bad-gnuplot" $GPUPLAN simulate --model llama3-8b --gpu H100 --gpus 8 --gbs 512 \
	--plot "$TMP/old.png" >"$OUT" 2>"$ERR"
RC=$?
expect_rc "a failing gnuplot over an old chart exits 1" 1
check "a failing gnuplot keeps the old chart" "[ \"\$(cat '$TMP/old.png')\" = 'old chart' ]"
check "a failing gnuplot leaves no temporary file" "! ls '$TMP'/old.png.tmp.* >/dev/null 2>&1"

# ---- without gnuplot: the data as CSV and a script, exit 0 -----------------

PATH="$NOGP" $GPUPLAN frontier --model llama3-8b --tokens 1T --budget 100k \
	--plot "$TMP/nogp/frontier.png" >"$OUT" 2>"$ERR"
RC=$?
expect_rc "fallback into a missing directory is an I/O error" 1
mkdir -p "$TMP/nogp"
PATH="$NOGP" $GPUPLAN frontier --model llama3-8b --tokens 1T --budget 100k \
	--plot "$TMP/nogp/frontier.png" >"$OUT" 2>"$ERR"
RC=$?
expect_rc "frontier without gnuplot exits 0" 0
expect_err "says gnuplot is missing and where the data went" \
	'^warning: --plot: gnuplot is not on PATH, so .*frontier.png was not drawn; wrote its data to .*frontier.csv'
expect_err "hints how to draw it later" "^hint: install gnuplot .*gnuplot .*frontier.gp"
check "no chart without gnuplot" "[ ! -e '$TMP/nogp/frontier.png' ]"
check "the CSV has a header and one row per plan" \
	"[ \"\$(head -1 '$TMP/nogp/frontier.csv')\" = 'gpu,time_days,cost_usd,gpus,offering,chosen' ] &&
	 [ \$(( \$(wc -l <'$TMP/nogp/frontier.csv') - 1 )) = \$(grep -cE '^[a-z]+ .* (spot|on-demand|reserved|owned|capacity-block|calendar-reservation) +[0-9]+x[0-9]+=[0-9]+ ' '$OUT') ]"
check "exactly one chosen plan in the CSV" \
	"[ \$(awk -F, 'NR > 1 && \$6 == 1' '$TMP/nogp/frontier.csv' | wc -l) = 1 ]"
PATH="$NOGP" $GPUPLAN scaling --model llama3-8b --gpu h100 --max-gpus 64 \
	--plot "$TMP/nogp/scaling.svg" >"$OUT" 2>"$ERR"
RC=$?
expect_rc "scaling without gnuplot exits 0" 0
check "scaling data written as CSV" "[ -s '$TMP/nogp/scaling.csv' ] && [ -s '$TMP/nogp/scaling.gp' ]"
PATH="$NOGP" $GPUPLAN simulate --model llama3-8b --gpu H100 --gpus 8 --gbs 512 \
	--plot "$TMP/nogp/breakdown.png" >"$OUT" 2>"$ERR"
RC=$?
expect_rc "simulate without gnuplot exits 0" 0
check "breakdown CSV has the 8 time and 5 memory rows" \
	"[ \$(grep -c '^time,' '$TMP/nogp/breakdown.csv') = 8 ] && [ \$(grep -c '^memory,' '$TMP/nogp/breakdown.csv') = 5 ]"
PATH="$NOGP" $GPUPLAN simulate --model llama3-8b --gpu H100 --gpus 8 --gbs 512 -q \
	--plot "$TMP/nogp/quiet.png" >"$OUT" 2>"$ERR"
check "--quiet keeps the fallback warning off" "[ ! -s '$ERR' ] && [ -s '$TMP/nogp/quiet.csv' ]"
if [ $HAVE_GNUPLOT = 1 ]; then
	(cd "$TMP/nogp" && gnuplot frontier.gp 2>"$TMP/gp.err")
	check "the fallback script draws the chart later" "is_png '$TMP/nogp/frontier.png'"
fi

gp frontier --model llama3-8b --tokens 1T --plot "$TMP/frontier.jpg"
expect_rc "--plot with another extension exits 2" 2
expect_err "says which extensions" "^error: --plot: expected a file name ending in .png or .svg, found"
gp scaling --model llama3-8b --gpu h100 --plot "$TMP/s.pdf"
expect_rc "scaling --plot .pdf exits 2" 2

# ---- scaling -----------------------------------------------------------------

gp scaling --model llama3-70b --gpu h100 --max-gpus 2048 --csv "$TMP/scaling.csv"
expect_rc "scaling exits 0" 0
expect_out "scaling names the machine" '^gpuplan scaling: llama3-70b on H100-SXM5-80GB, 8 per node'
expect_out "scaling says what ideal means" '^ideal: linear scaling of the best per-GPU rate'
check "counts strictly increase" \
	"awk -F, 'NR > 1 { if (\$1 <= last) exit 1; last = \$1 }' '$TMP/scaling.csv'"
check "efficiency is in (0, 1] wherever something fits" \
	"awk -F, 'NR > 1 && \$4 == 1 { n++; if (\$19 <= 0 || \$19 > 1.000001) exit 1 } END { exit n < 3 }' '$TMP/scaling.csv'"
check "the best count has efficiency 1" \
	"awk -F, 'NR > 1 && \$19 == 1.0000 { one = 1 } END { exit !one }' '$TMP/scaling.csv'"
check "throughput never exceeds the ideal line" \
	"awk -F, 'NR > 1 && \$4 == 1 && \$15 > \$17 * 1.000001 { exit 1 }' '$TMP/scaling.csv'"
check "every point is tp x pp x dp x cp GPUs" \
	"awk -F, 'NR > 1 && \$4 == 1 && \$5 * \$6 * \$7 * \$8 != \$1 { exit 1 }' '$TMP/scaling.csv'"
gp scaling --model llama3-70b --gpu h100 --max-gpus 2048 --json
expect_rc "scaling --json exits 0" 0
expect_out "scaling --json has its schema" '"schema":	"gpuplan.scaling/1"'
cp "$OUT" "$TMP/s1.json"
gp scaling --model llama3-70b --gpu h100 --max-gpus 2048 --json
check "same inputs give byte-identical JSON" "cmp -s '$OUT' '$TMP/s1.json'"
gp scaling --model llama3-405b --gpu h100 --max-gpus 8
expect_rc "nothing fits at any count exits 3" 3
expect_err "says it does not fit" '^error: scaling: llama3-405b does not fit on 1 to 8'
gp scaling --model llama3-8b --gpu h100 --min-gpus 9 --max-gpus 15
expect_rc "no count in range exits 2" 2

# ---- progress: on a terminal only, never with --quiet ----------------------

if command -v script >/dev/null 2>&1; then
	GPUPLAN_PROGRESS_DELAY=0 script -qec "$GPUPLAN scaling --model llama3-70b --gpu h100 --max-gpus 512" \
		/dev/null </dev/null >"$TMP/tty.out" 2>&1
	check "progress is drawn on a terminal" "grep -q 'scaling: searching: [0-9]*/[0-9]* ([0-9]*%)' '$TMP/tty.out'"
	GPUPLAN_PROGRESS_DELAY=0 script -qec "$GPUPLAN scaling --model llama3-70b --gpu h100 --max-gpus 512 --quiet" \
		/dev/null </dev/null >"$TMP/tty.out" 2>&1
	check "--quiet silences progress on a terminal" "! grep -q 'searching' '$TMP/tty.out'"
	GPUPLAN_PROGRESS_DELAY=0 script -qec "$GPUPLAN plan --model llama3-8b --tokens 1T -o $TMP/p.json" \
		/dev/null </dev/null >"$TMP/tty.out" 2>&1
	check "plan draws progress on a terminal" "grep -q 'plan: searching' '$TMP/tty.out'"
	GPUPLAN_PROGRESS_DELAY=0 script -qec "$GPUPLAN plan --model llama3-8b --tokens 1T -q -o $TMP/p.json" \
		/dev/null </dev/null >"$TMP/tty.out" 2>&1
	check "plan -q silences it" "! grep -q 'searching' '$TMP/tty.out'"
	GPUPLAN_PROGRESS_DELAY=0 script -qec "$GPUPLAN frontier --model llama3-8b --tokens 1T --quiet" \
		/dev/null </dev/null >"$TMP/tty.out" 2>&1
	check "frontier --quiet silences it" "! grep -q 'searching' '$TMP/tty.out'"
	# execute: rank 0 shows the running step, erased before the step's
	# own line prints; through the mpirun it starts, too
	EX="execute --layers 2 --hidden 32 --seq 16 --steps 2"
	GPUPLAN_PROGRESS_DELAY=0 script -qec "$GPUPLAN $EX" /dev/null </dev/null >"$TMP/tty.out" 2>&1
	check "execute draws 'execute: step S/N' on a terminal" "grep -q 'execute: step 2/2' '$TMP/tty.out'"
	check "execute erases it before the step's line" \
		"grep -q \$'\\r\\033\\[Kstep 1/2  loss' '$TMP/tty.out'"
	GPUPLAN_PROGRESS_DELAY=0 script -qec "$GPUPLAN $EX -q" /dev/null </dev/null >"$TMP/tty.out" 2>&1
	check "execute -q silences it" "! grep -q 'execute: step' '$TMP/tty.out' && grep -q '^step 2/2' '$TMP/tty.out'"
	if command -v mpirun >/dev/null 2>&1; then
		GPUPLAN_PROGRESS_DELAY=0 script -qec "$GPUPLAN_BIN $EX --pp 2" /dev/null </dev/null \
			>"$TMP/tty.out" 2>&1
		check "execute shows progress through the mpirun it starts" \
			"grep -q 'execute: step [12]/2' '$TMP/tty.out'"
	fi
	GPUPLAN_PROGRESS_DELAY=0 script -qec "$GPUPLAN calibrate --backend cpu --quick -o $TMP/cal.json" \
		/dev/null </dev/null >"$TMP/tty.out" 2>&1
	check "calibrate shows its phases on a terminal" \
		"grep -qE 'calibrate: [0-9]+/[0-9]+ \([0-9]+%\), (copies|GEMMs)' '$TMP/tty.out'"
	GPUPLAN_PROGRESS_DELAY=0 script -qec "$GPUPLAN calibrate --backend cpu --quick -q -o $TMP/cal.json" \
		/dev/null </dev/null >"$TMP/tty.out" 2>&1
	check "calibrate -q silences them" "! grep -q 'calibrate: [0-9]' '$TMP/tty.out'"
fi
GPUPLAN_PROGRESS_DELAY=0 $GPUPLAN execute --layers 2 --hidden 32 --seq 16 --steps 2 >"$OUT" 2>"$ERR"
check "execute draws nothing when stderr is not a terminal" "! grep -q \$'\\r' '$ERR' && grep -q '^step 2/2' '$OUT'"
GPUPLAN_PROGRESS_DELAY=0 $GPUPLAN scaling --model llama3-8b --gpu h100 --max-gpus 64 >"$OUT" 2>"$ERR"
check "no progress when stderr is not a terminal" "! grep -q 'searching' '$ERR' && ! grep -q \$'\\r' '$ERR'"

# ---- GPU names: aliases and "did you mean" everywhere -----------------------

for c in "plan --model llama3-8b --tokens 1T" "frontier --model llama3-8b --tokens 1T" \
	 "compare --model llama3-8b --tokens 1T" "simulate --model llama3-8b --gpus 8 --gbs 512" \
	 "scaling --model llama3-8b" "prices"; do
	gp $c --gpu h10
	expect_rc "${c%% *} --gpu h10 exits 2" 2
	expect_err "${c%% *} --gpu h10 suggests H100" "^hint: did you mean 'H100'\?"
	expect_err_lines "${c%% *} --gpu h10 is one error line" 1
done

# ---- help, the man page, completion -----------------------------------------

# Long options a command's source declares (its own table, in cmd_X.c or
# one of its cmd_X_*.c, plus the shared plan/frontier/compare table when
# it uses it).
declared() {
	local f="$ROOT/cli/cmd_$1.c" files g
	files=$f
	for g in "$ROOT/cli/cmd_$1"_*.c; do
		[ -f "$g" ] && files="$files $g"
	done
	grep -q PLAN_CLI_OPTIONS $files && files="$files $ROOT/cli/cli_plan.h"
	grep -qE 'PLAN_CLI_OPTIONS|FT_CLI_OPTIONS' $files && files="$files $ROOT/cli/cli_finetune.h"
	{
		grep -hoE '\{ "[a-z0-9-]+", (required|no|optional)_argument' $files |
			sed -E 's/\{ "([^"]+)".*/\1/'
		# the model's fields whose flags the simulator's table names
		grep -q sim_model_fields $files &&
			grep -hoE '^	F\("[a-z0-9_]+", "[a-z0-9_]+", "--[a-z0-9-]+"' "$ROOT/simulator/sim_models.c" |
			sed -E 's/.*"--([a-z0-9-]+)"$/\1/'
	} | sort -u
}
gp help
cmds=$(awk '/^  [a-z]/ && $1 != "help" && $1 != "version" {print $1}' "$OUT")
check "help lists scaling" "echo '$cmds' | grep -qx scaling"
man_text="$TMP/man.txt"
groff -man -Tutf8 -ww "$ROOT/docs/gpuplan.1" 2>"$TMP/groff.err" | col -b >"$man_text"
check "man page renders without groff warnings" "[ ! -s '$TMP/groff.err' ] && [ -s '$man_text' ]"
if command -v man >/dev/null 2>&1; then
	MANWIDTH=80 man --warnings -l "$ROOT/docs/gpuplan.1" >/dev/null 2>"$TMP/man.err"
	check "man -l renders without warnings" "[ ! -s '$TMP/man.err' ]"
fi
for c in $cmds; do
	[ -f "$ROOT/cli/cmd_$c.c" ] || { fail "$c has a source file" "no cli/cmd_$c.c"; continue; }
	gp "$c" --help
	missing=""
	for o in $(declared "$c"); do
		grep -q -- "--$o\b" "$OUT" || missing="$missing --$o"
	done
	check "$c --help lists every option it takes" "[ -z '$missing' ]" ||
		echo "    missing:$missing"
	gp help "$c"
	check "gpuplan help $c is $c --help" "grep -q -- '^usage: gpuplan $c' '$OUT'"
	check "man page has a $c command entry" "grep -qE '^ +$c\$|^ +$c +[a-z]' '$man_text'"
	# every option --help lists is in the man page's section for $c and in
	# its docs/ page: tests/cli/test_docs.sh
done

completions() { # words... -> what bash completion offers for the last word
	PATH="$(dirname "${GPUPLAN##* }"):$PATH" bash -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gpuplan
		printf "%s\n" "${COMPREPLY[@]}"' _ "$ROOT/docs/gpuplan.bash-completion" "$@"
}
check "completion offers scaling" "completions gpuplan sca | grep -qx scaling"
check "completion offers --plot for frontier" "completions gpuplan frontier --pl | grep -qx -- --plot"
check "completion offers --max-gpus for scaling" "completions gpuplan scaling --max | grep -qx -- --max-gpus"
# exactly the options each command takes: none it refuses (a flag of another
# command named in its help's prose) and none left out
for c in $cmds; do
	[ -f "$ROOT/cli/cmd_$c.c" ] || continue
	completions gpuplan "$c" -- | sort -u >"$TMP/offered"
	declared "$c" | sed 's/^/--/' >"$TMP/declared"
	extra=$(comm -13 "$TMP/declared" "$TMP/offered" | tr '\n' ' ')
	lacking=$(comm -23 "$TMP/declared" "$TMP/offered" | tr '\n' ' ')
	if [ -z "$extra$lacking" ]; then
		pass "completion offers exactly the options of $c"
	else
		fail "completion offers exactly the options of $c" \
			"offered but not taken: $extra; taken but not offered: $lacking"
	fi
done

# ---- the GPU check and its bundle --------------------------------------------

# without nvidia-smi the check says why and succeeds, building nothing
# (a PATH of dirname alone, so that a GPU machine's nvidia-smi stays out)
NOSMI="$TMP/no-nvidia-smi-bin"
mkdir -p "$NOSMI"
ln -s "$(command -v dirname)" "$NOSMI/dirname"
run "gpu_check without a GPU" env PATH="$NOSMI" "$BASH" "$ROOT/bench/gpu_check.sh" \
	"$TMP/no-gpu-build"
expect_rc "gpu_check without a GPU: exit 0" 0
expect_out "gpu_check without a GPU: says why" '^gpu_check: no nvidia-smi in PATH'
check "gpu_check without a GPU: builds nothing" "[ ! -e '$TMP/no-gpu-build' ]"
# the bundle is used only while the sources hash the same: one changed
# byte of one source changes the hash
run "gpu_bundle --hash" bash "$ROOT/bench/gpu_bundle.sh" --hash
hash=$(cat "$OUT")
check "gpu_bundle --hash: 16 hex digits ($hash)" "printf '%s' '$hash' | grep -Eqx '[0-9a-f]{16}'"
mkdir -p "$TMP/tree"
(cd "$ROOT" && tar cf - Makefile bench/gpu_bundle.sh common pricing simulator planner executor cli) |
	(cd "$TMP/tree" && tar xf -)
run "gpu_bundle --hash of a copy" bash "$TMP/tree/bench/gpu_bundle.sh" --hash
check "gpu_bundle --hash: a copy of the sources hashes the same" "[ '$(cat "$OUT")' = '$hash' ]"
echo "/* changed */" >>"$TMP/tree/simulator/sim.c"
run "gpu_bundle --hash of a changed copy" bash "$TMP/tree/bench/gpu_bundle.sh" --hash
check "gpu_bundle --hash: a changed source changes it" "[ '$(cat "$OUT")' != '$hash' ]"

finish
