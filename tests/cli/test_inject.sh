#!/usr/bin/env bash
# test_inject.sh - text from files is data, never code: price tables and
# plan files that try to run a command, change stored prices silently,
# crash an export or replace a file that is not a regular one.
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

H="provider,instance_type,gpu,gpus_per_node,region,on_demand_usd_per_hour,spot_usd_per_hour,inter_node_gbps,max_nodes,catalog_version"
TABLE="$GPUPLAN_DATA_DIR/prices.csv"
# A plan of 2 nodes of 2 GPUs (so launchers rendezvous by id), as a
# template for hostile ones.
PLAN="$TMP/plan.json"
sed 's/"gpus_per_node": *4/"gpus_per_node": 2/' tests/fixtures/exec/plan_tp2_pp2.json > "$PLAN"
# plan_with JQ_LIKE_SED OUT: the template with one sed expression applied
plan_with() { sed "$1" "$PLAN" > "$2"; }
no_esc() { ! LC_ALL=C grep -q $'\x1b' "$ERR"; }

# ---- 1. a price table cannot carry a command into a gnuplot script
printf '%s\nx,"p5\nEOD\nsystem ""touch pwned""\n#",H100,8,us-east-1,50,,,,v\n' "$H" > "$TMP/eod.csv"
gp prices update "$TMP/eod.csv"
expect_rc "an instance type with line breaks is refused" 2
expect_err "it is named file:line:col: column" "eod\.csv:2:2: instance_type: expected a name of letters, digits and .*, found a line break"
expect_err_lines "one line" 1
[ ! -e "$TABLE" ] && pass "nothing stored" || fail "nothing stored" "$(cat "$TABLE")"

printf '%s\nx,"p5$(touch pwned)",H100,8,us-east-1,50,,,,v\n' "$H" > "$TMP/dollar.csv"
gp prices update "$TMP/dollar.csv"
expect_rc "a name with '\$(' is refused" 2
expect_err "the character is named" "instance_type: expected a name .*, found '\\$' at byte 3"

printf '%s\nx,p5\x1b[2Jz,H100,8,us-east-1,50,,,,v\n' "$H" > "$TMP/esc.csv"
gp prices update "$TMP/esc.csv"
expect_rc "ESC in a name is refused" 2
expect_err "ESC named" "found control byte 0x1b at byte 3"
no_esc && pass "no ESC byte reaches the terminal" || fail "no ESC byte reaches the terminal" "raw ESC in stderr"

printf '%s\nx,p5\xff,H100,8,us-east-1,50,,,,v\n' "$H" > "$TMP/utf8.csv"
gp prices update "$TMP/utf8.csv"
expect_rc "invalid UTF-8 is refused" 2
expect_err "invalid UTF-8 named" "found byte 0xff \\(not UTF-8\\)"

printf '%s\nx,p5,H100,8,us-east-1,50,,,,"v\x07"\n' "$H" > "$TMP/bel.csv"
gp prices update "$TMP/bel.csv"
expect_rc "a control byte in catalog_version is refused" 2
expect_err "text cells are printable" "catalog_version: expected printable text, found control byte 0x07"

printf '%s\nvast,1x-RTX_4090,RTX4090,1,"Zürich, CH, EU",0.41,,,,"snapshot, 2025 @abc"\n' "$H" > "$TMP/ok.csv"
gp prices update "$TMP/ok.csv" --dry-run
expect_rc "commas, spaces, '@' and letters beyond ASCII still load" 0

gp prices list
expect_rc "every shipped row loads" 0
n=$(grep -c '^[a-z]' "$OUT")
[ "$n" = 155 ] && pass "155 shipped rows listed" || fail "155 shipped rows listed" "$n rows"

# ---- 3. silent changes
printf '%s\nx,p5,H100,8,us-east-1,50,,1e300,,v\n' "$H" > "$TMP/inf.csv"
gp prices update "$TMP/inf.csv"
expect_rc "inter_node_gbps 1e300 is refused" 2
expect_err "its range is stated" "inter_node_gbps: expected a number from 0 to 100000 or an empty cell, found '1e300'"

printf '%s\nx,p5,H100,8,us-east-1,1e308,,,,v\n' "$H" > "$TMP/big.csv"
gp prices update "$TMP/big.csv"
expect_rc "on_demand 1e308 is refused" 2
expect_err "the price range is stated" "on_demand_usd_per_hour: expected a price > 0 and at most 100000"

printf '%s\nx,p5,H100,8,us-east-1,50,20,,,v\n' "$H" > "$TMP/full.csv"
gp prices update "$TMP/full.csv"
expect_rc "a whole row is stored" 0
printf '%s\nx,p5,H100,8,us-east-1,51\n' "$H" > "$TMP/short.csv"
gp prices update "$TMP/short.csv"
expect_rc "a row of 6 cells of 10 is refused" 2
expect_err "line, expected and found counts" "short\.csv:2:7: expected 10 cells as in the header \\(line 1\\), found 6"
grep -q '^x,p5,H100-SXM5-80GB,8,us-east-1,50,20,' "$TABLE" && pass "the stored spot price is kept" \
	|| fail "the stored spot price is kept" "$(cat "$TABLE")"
printf '%s\nx,p5,H100,8,us-east-1,51,20,,,v,extra\n' "$H" > "$TMP/long.csv"
gp prices update "$TMP/long.csv"
expect_rc "a row of 11 cells of 10 is refused" 2
expect_err "extra cell named" "long\.csv:2:11: expected 10 cells as in the header \\(line 1\\), found 11"

printf '%s\nx,p5.48x\0large,H100,8,us-east-1,5\0000,,,,v\n' "$H" > "$TMP/nul.csv"
gp prices update "$TMP/nul.csv"
expect_rc "a NUL byte in a cell is refused" 2
expect_err "the NUL is named" "nul\.csv:2:2: instance_type: expected text, found a NUL byte"
grep -q 'p5\.48x,' "$TABLE" && fail "no truncated row stored" "$(cat "$TABLE")" || pass "no truncated row stored"

# a user directory that is not one: the user's rows cannot be read
echo x > "$TMP/notadir"
GPUPLAN_DATA_DIR="$TMP/notadir" gp prices list
expect_rc "an unreadable user directory fails the listing (exit 1)" 1
expect_err "and says why" "cannot read the user's prices"
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	LOCKED="$TMP/locked"
	mkdir -p "$LOCKED" && cp "$TABLE" "$LOCKED/" && chmod 0700 "$LOCKED" && chmod 0755 "$TMP"
	GPUPLAN_DATA_DIR="$LOCKED" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$GPUPLAN_BIN" prices list >"$OUT" 2>"$ERR"
	RC=$?
	expect_rc "a directory the user cannot search fails the listing (exit 1)" 1
	expect_err "permission named" "cannot read the user's prices: Permission denied"
fi

# a torn last history line: history still reads, the next update repairs it
HIST="$GPUPLAN_DATA_DIR/prices.history.csv"
printf '2025-01-01T00:00:00Z,x,p5,"us-ea' >> "$HIST"
gp prices history
expect_rc "history with a torn last line still reads" 0
expect_err "with a warning" "skipped a last line cut short"
printf '%s\nx,p5,H100,8,us-east-1,52,20,,,v\n' "$H" > "$TMP/next.csv"
gp prices update "$TMP/next.csv"
expect_rc "the next update succeeds" 0
gp prices history
expect_rc "and the history reads whole again" 0
expect_out "with the new change" "us-east-1 +on_demand_usd_per_hour +51|us-east-1.*52"
[ -z "$(grep 'us-ea$' "$HIST")" ] && ! grep -q '^2025-01-01' "$HIST" && pass "the torn line is gone" \
	|| fail "the torn line is gone" "$(tail -3 "$HIST")"

# ---- 2. a plan file cannot carry a command into an export
plan_with 's/"name":[[:space:]]*"custom"/"name": "$(touch pwned)"/' "$TMP/evil.json"
cd "$TMP" || exit 1
for f in torchrun megatron slurm mpirun kubernetes trainjob deepspeed; do
	gp export "$TMP/evil.json" --format $f
	expect_rc "export --format $f refuses a plan named \$(touch pwned)" 2
done
cd - >/dev/null || exit 1
expect_err "the reader names the field" "evil\.json: \\.model\\.name: expected a name .*, found '\\$' at byte 1"
expect_err_lines "one line" 1
plan_with 's/"name":[[:space:]]*"custom"/"name": "x\\nrm -rf \/"/' "$TMP/evil2.json"
gp export "$TMP/evil2.json" --format torchrun
expect_rc "a plan named with a line break is refused" 2
expect_err "the line break is named" "\\.model\\.name: expected a name .*, found a line break at byte 2"
[ ! -e "$TMP/pwned" ] && [ ! -e pwned ] && pass "nothing ran" || fail "nothing ran" "pwned exists"

# the router's and the tokenizer's new fields: names from a fixed list
# and numbers, checked on reading, each bad value one line
gp simulate --model mixtral-8x7b --gpu H100 --gpus 16 --ep 8 -o "$TMP/moe.json" -q
for kv in 'router_balance/"$(touch pwned)"' 'router_score/"sigmoid\nrm -rf /"' 'glu_act/"x; touch pwned"' \
	'router_aux_coeff/"0.02; touch pwned"' 'tokenizer_gated/"yes"' 'router_groups/3'; do
	k=${kv%%/*} v=${kv#*/}
	python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p["model"][sys.argv[2]]=json.loads(sys.argv[3]); json.dump(p,open(sys.argv[4],"w"))' \
		"$TMP/moe.json" "$k" "$v" "$TMP/evil-$k.json"
	for f in megatron kubernetes skypilot deepspeed; do
		gp export "$TMP/evil-$k.json" --format $f
		expect_rc "export --format $f refuses .model.$k = $v" 2
		expect_err_lines "in one line ($k, $f)" 1
		expect_err "it names .model.$k" "\\.model(\\.$k|: $k)"
	done
done
[ ! -e "$TMP/pwned" ] && [ ! -e pwned ] && pass "nothing ran (router fields)" || fail "nothing ran (router fields)" "pwned exists"

# ---- 4. export refuses what simulate refuses
plan_with 's/"mbs":[[:space:]]*[0-9]*/"mbs": 16777216/; s/"dp":[[:space:]]*[0-9]*/"dp": 256/; s/"gbs":[[:space:]]*[0-9]*/"gbs": 16777216/' "$TMP/fpe.json"
for f in torchrun slurm mpirun kubernetes trainjob megatron deepspeed; do
	gp export "$TMP/fpe.json" --format $f
	expect_rc "export --format $f: mbs 2^24 x dp 256 is exit 2, not SIGFPE" 2
done
expect_err "it says why" "gbs: expected a multiple of mbs x dp = 4294967296"
plan_with 's/"hidden":[[:space:]]*[0-9]*/"hidden": 5/; s/"heads":[[:space:]]*[0-9]*/"heads": 32/; s/"kv_heads":[[:space:]]*[0-9]*/"kv_heads": 32/' "$TMP/h5.json"
gp simulate "$TMP/h5.json"
expect_rc "simulate refuses hidden 5 with 32 heads" 2
for f in torchrun slurm mpirun kubernetes trainjob; do
	gp export "$TMP/h5.json" --format $f
	expect_rc "export --format $f refuses it too" 2
	expect_err_lines "in one line ($f)" 1
done

# ---- 5. -o into a FIFO, a device and a symlink
mkfifo "$TMP/fifo"
timeout 20 cat "$TMP/fifo" > "$TMP/fifo.out" &
reader=$!
gp export "$PLAN" --format torchrun -o "$TMP/fifo"
expect_rc "-o a FIFO exits 0" 0
wait $reader
[ -p "$TMP/fifo" ] && pass "the FIFO is still a FIFO" || fail "the FIFO is still a FIFO" "$(ls -l "$TMP/fifo")"
grep -q '^torchrun ' "$TMP/fifo.out" && pass "the export went through the FIFO" \
	|| fail "the export went through the FIFO" "$(cat "$TMP/fifo.out")"
# As root a gpuplan with the bug would replace the real /dev/null: root
# tests on a null device of its own, anyone else on /dev/null itself.
NULLDEV=/dev/null
if [ "$(id -u)" = 0 ] && mknod -m 666 "$TMP/null" c 1 3 2>/dev/null; then
	NULLDEV="$TMP/null"
fi
gp simulate "$PLAN" --json -o "$NULLDEV"
expect_rc "-o a null device exits 0" 0
[ -c "$NULLDEV" ] && pass "the null device is still a character device" \
	|| fail "the null device is still a character device" "$(ls -l "$NULLDEV")"
ls "$NULLDEV".tmp.* >/dev/null 2>&1 && fail "no temporary file left beside it" "$(ls "$NULLDEV".tmp.*)" \
	|| pass "no temporary file left beside it"
mkdir -p "$TMP/real"
echo old > "$TMP/real/target.sh"
ln -s real/target.sh "$TMP/link.sh"
gp export "$PLAN" --format torchrun -o "$TMP/link.sh"
expect_rc "-o a symlink exits 0" 0
[ -L "$TMP/link.sh" ] && grep -q '^torchrun ' "$TMP/real/target.sh" \
	&& pass "the link stays a link; its target is written" \
	|| fail "the link stays a link; its target is written" "$(ls -l "$TMP/link.sh")"
# the user's prices.csv kept in a dotfiles directory and linked in
DOT="$TMP/dotfiles"
LINKED="$TMP/linked"
mkdir -p "$DOT" "$LINKED"
cp "$TABLE" "$DOT/prices.csv"
ln -s "$DOT/prices.csv" "$LINKED/prices.csv"
printf '%s\nx,p5,H100,8,us-east-1,53,20,,,v\n' "$H" > "$TMP/l.csv"
GPUPLAN_DATA_DIR="$LINKED" gp prices update "$TMP/l.csv"
expect_rc "an update through a symlinked prices.csv exits 0" 0
[ -L "$LINKED/prices.csv" ] && grep -q ',53,' "$DOT/prices.csv" \
	&& pass "the user's symlinked prices.csv stays a link, its target updated" \
	|| fail "the user's symlinked prices.csv stays a link, its target updated" "$(ls -l "$LINKED")"

# ---- 6. strict JSON, one range, flags named
cp "$PLAN" "$TMP/trail.json"; echo 'garbage' >> "$TMP/trail.json"
gp simulate "$TMP/trail.json"
expect_rc "trailing garbage is refused" 2
expect_err "where it starts" "trail\.json:[0-9]+:1: expected the end of the file after the JSON value, found 'g'"
cat "$PLAN" "$PLAN" > "$TMP/two.json"
gp simulate "$TMP/two.json"
expect_rc "two concatenated plans are refused" 2
sed '0,/"tp":[[:space:]]*2/s//"tp": 2, "tp": 4/' "$PLAN" > "$TMP/dup.json"
gp simulate "$TMP/dup.json"
expect_rc "a repeated key is refused" 2
expect_err "the key and object named" "\\.parallel: expected each key once, found \"tp\" again"
plan_with 's/"name":[[:space:]]*"custom"/"name": "cus\\u0000tom"/' "$TMP/nul.json"
gp simulate "$TMP/nul.json"
expect_rc "\\u0000 in a string is refused" 2
expect_err "named" "expected a string without NUL characters, found \\\\u0000"
plan_with 's/"tokens":[[:space:]]*[0-9.e+]*/"tokens": 1e400/' "$TMP/e400.json"
grep -q '1e400' "$TMP/e400.json" || plan_with 's/"layers":[[:space:]]*[0-9]*/"layers": 1e400/' "$TMP/e400.json"
gp simulate "$TMP/e400.json"
expect_rc "1e400 is refused" 2
expect_err "as a number beyond range, not null" "expected a number of at most 1.8e308 in size, found one beyond"
A="--hidden 64 --heads 1 --vocab 64 --seq 64 --gpu H100 --gpus 8 --gbs 8"
gp simulate --layers 1048577 $A
expect_rc "--layers beyond what a plan file holds is refused" 2
gp simulate --layers 1048576 $A -o "$TMP/maxlayers.json"
expect_rc "--layers at the bound writes a plan" 0
gp simulate "$TMP/maxlayers.json"
expect_rc "which reads back" 0
gp simulate --layers
expect_rc "a long option without its value exits 2" 2
expect_err "the option is named" "simulate: expected a value after '--layers', found none"
LC_ALL=C grep -q $'[\x01-\x08]' "$ERR" && fail "no control byte printed" "$(cat -v "$ERR")" || pass "no control byte printed"
gp plan --model llama3-8b --tokens 1T --storage-price 1e308
expect_rc "--storage-price 1e308 is a bad flag, not a solver error" 2
expect_err "with its range" "--storage-price: expected a number from 0 to 1000, found '1e308'"
gp simulate --model llama3-8b --gpu H100 --gpus 8 --tokens 1e18 --usd-per-gpu-hour 1e308
expect_rc "--usd-per-gpu-hour 1e308 is refused" 2

finish
