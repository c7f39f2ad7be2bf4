#!/usr/bin/env bash
# test_docs.sh - the examples of README.md and docs/*.md run as shown, and
# the option lists of `--help`, the man page and docs/ agree.
#
# How a page shows a command (inside a ``` fence):
#   $ gpuplan plan --model llama3-70b ...   a command; a line ending in \ or |
#                                           goes on with the next
#   lines after it, up to the next $ line   output it shows: they must appear
#                                           in the real output (stdout and
#                                           stderr together), in this order
#                                           and one after the other
#   ...  (a line of its own)                any number of lines left out
#   ...  (inside a line)                    any text left out of that line
#   ~/                                      ~/ or the home directory
#   # exit N  (end of a command)            the command exits N (default 0)
#   # not run: REASON  (end of a command)   skipped, the reason printed; keep
#                                           these for what needs a GPU, a
#                                           cloud account or minutes
#   $ cat FILE                              shows a file: written from the
#                                           lines shown when no command before
#                                           made it, else checked like output
# Runs of blanks count as one.  `gpuplan`, `cat FILE`, `jq` (skipped where
# it is not installed) and the repository's `build/...` programs run; any
# other program needs "# not run: ...".
# Each page runs in a fresh directory with a fresh home (no user prices,
# quotas or calibration), the commands in the order shown, the shipped
# data, and GPUPLAN_NOW fixed.
#
# Refreshing the pages after a change: DOCS_SHOW=1 prints, under each
# failing command, the command and its real output as a page shows them
# (and "# exit N" where it is not 0), between "---- paste:" and "----" lines,
# ready to paste over the old block; elide long or volatile lines with
# "..." again.  DOCS_PAGES="docs/plan.md" runs one page.
#
# Links: every link to another page goes to a file that is there, and to
# one of its headings where it names one.
#
# Options: every option a command's --help defines appears in that
# command's page(s) and in its section of the man page; every --option
# README.md and docs/ name is one a command defines, one a command's
# output shows (a flag an export writes), or one of FOREIGN below.
. "$(dirname "$0")/lib.sh"
ROOT=$PWD
export GPUPLAN_SHARE_DIR="$ROOT/data"
unset GPUPLAN_DATA_DIR XDG_DATA_HOME GPUPLAN_CALIBRATION
PAGES=${DOCS_PAGES:-README.md $(ls docs/*.md)} # DOCS_PAGES: only these

# Options of other programs the pages name, each with where it belongs.
FOREIGN="--env --mpi --error-exitcode --allow-run-as-root --oversubscribe"
# --env: sky launch; --mpi: srun; --error-exitcode: valgrind;
# --allow-run-as-root, --oversubscribe: mpirun

# The page(s) that document each command.
pages_of() {
	case $1 in
	plan | frontier) echo "docs/plan.md docs/finetune.md" ;;
	# compare takes plan's job options
	compare) echo "docs/costs.md docs/plan.md docs/finetune.md" ;;
	simulate) echo "docs/simulate.md docs/finetune.md" ;;
	scaling) echo docs/plots.md ;;
	execute) echo docs/execute.md ;;
	calibrate) echo docs/gpus.md ;;
	export) echo docs/export.md ;;
	prices | quotas | gpus | models) echo docs/prices.md ;;
	esac
}

# a `gpuplan` on PATH for the pages' commands: line-buffered, so that
# stdout and stderr interleave as on a terminal.  stdbuf preloads its
# library, which AddressSanitizer (make asan) must be told to accept.
BIN="$TMP/bin"
mkdir -p "$BIN"
printf '#!/bin/sh\nASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 exec stdbuf -oL %s "$@"\n' \
	"$GPUPLAN" >"$BIN/gpuplan"
chmod +x "$BIN/gpuplan"
ALL_OUT="$TMP/all-output" # every output the pages' commands printed
: >"$ALL_OUT"

# split PAGE DIR: write each command of PAGE as DIR/N.cmd (its text),
# DIR/N.exp (the output shown) and DIR/N.line (its line in PAGE).
split_page() {
	awk -v dir="$2" '
	function done() { if (n) { close(dir "/" n ".cmd"); close(dir "/" n ".exp") } }
	/^ *```/ { infence = !infence; cmd = 0; cont = 0; done()
		   if (infence) { match($0, /^ */); indent = RLENGTH }
		   next }
	!infence { next }
	{ line = substr($0, indent + 1) }
	cont { print line > (dir "/" n ".cmd"); cont = (line ~ /[\\|]$/); next }
	line ~ /^\$ / {
		done(); n++; cmd = 1
		print substr(line, 3) > (dir "/" n ".cmd")
		printf "" > (dir "/" n ".exp")
		print FNR > (dir "/" n ".line"); close(dir "/" n ".line")
		cont = (line ~ /[\\|]$/)
		next
	}
	cmd { print line > (dir "/" n ".exp") }
	END { done(); print n + 0 > (dir "/count") }
	' "$1"
}

# match_output ACTUAL EXPECTED: 0 when EXPECTED shows ACTUAL as the rules
# above say; else prints the first line shown that is not there.
match_output() {
	awk -v home="$HOME" '
	function norm(s) { gsub(/[ \t]+/, " ", s); sub(/^ /, "", s); sub(/ $/, "", s); return s }
	# a line with "..." elisions against a real one
	function lmatch(a, e,   p, k, i, pos, rest) {
		k = split(e, p, /\.\.\./)
		if (k == 1) return a == e
		if (substr(a, 1, length(p[1])) != p[1]) return 0
		rest = substr(a, length(p[1]) + 1)
		for (i = 2; i < k; i++) {
			pos = index(rest, p[i]); if (!pos) return 0
			rest = substr(rest, pos + length(p[i]))
		}
		return length(rest) >= length(p[k]) && substr(rest, length(rest) - length(p[k]) + 1) == p[k]
	}
	FNR == NR { act[++na] = norm($0); next }
	{ e = norm($0); shown[++ne] = e
	  while ((i = index(e, "~/"))) e = substr(e, 1, i - 1) home "/" substr(e, i + 2)
	  athome[ne] = e }
	END {
		from = 1; i = 1
		while (i <= ne) {
			if (shown[i] == "...") { i++; continue }
			j = i; while (j <= ne && shown[j] != "...") j++ # segment i..j-1
			best = -1; found = 0
			for (s = from; s <= na && !found; s++) {
				for (m = 0; i + m < j && s + m <= na && (lmatch(act[s + m], shown[i + m]) || lmatch(act[s + m], athome[i + m])); m++) ;
				if (i + m == j) { found = 1; from = s + m }
				else if (m > best) { best = m; at = s + m }
			}
			if (!found) {
				if (best <= 0) { print "output lacks: " shown[i]; exit 1 }
				print "output lacks: " shown[i + best] "; after the line before it, the output has: " act[at]
				exit 1
			}
			i = j
		}
	}
	' "$1" "$2"
}

# show_real CMDFILE RC: with DOCS_SHOW=1, the command and its real output
# ($OUT) as a page writes them: "$ " before the command, the home
# directory as ~/, "# exit RC" after the command where RC is not 0.
show_real() {
	[ "${DOCS_SHOW:-0}" = 1 ] || return 0
	echo "---- paste:"
	awk -v rc="$2" '{ sub(/[ \t]*#[ \t]*exit[ \t]+[0-9]+[ \t]*$/, "") }
		{ l[NR] = $0 }
		END { for (i = 1; i <= NR; i++) print (i == 1 ? "$ " : "") l[i] (i == NR && rc != 0 ? "    # exit " rc : "") }' "$1"
	awk -v home="$TMP/home/$name/" -v root="$ROOT/" '{ while ((i = index($0, root))) $0 = substr($0, 1, i - 1) "..." substr($0, i + length(root)); while ((i = index($0, home))) $0 = substr($0, 1, i - 1) "~/" substr($0, i + length(home)); print }' "$OUT"
	echo "----"
}

# ---- the pages' commands ------------------------------------------------------
ran=0 skipped=0
for page in $PAGES; do
	name=$(basename "$page" .md)
	dir="$TMP/split/$name" work="$TMP/work/$name"
	mkdir -p "$dir" "$work" "$TMP/home/$name"
	split_page "$ROOT/$page" "$dir"
	n=$(cat "$dir/count")
	for k in $(seq 1 "$n"); do
		cmd=$(cat "$dir/$k.cmd") line=$(cat "$dir/$k.line")
		where="$page:$line"
		first=${cmd%% *}
		want=0
		[[ $cmd =~ \#[[:space:]]*exit[[:space:]]+([0-9]+)[[:space:]]*$ ]] && want=${BASH_REMATCH[1]}
		if [[ $cmd =~ \#[[:space:]]*not\ run:[[:space:]]*(.*)$ ]]; then
			reason=${BASH_REMATCH[1]} short=${cmd%%$'\n'*}
			echo "skip - $where: ${short%%#*}: $reason"
			skipped=$((skipped + 1))
			continue
		fi
		if [[ $first == jq || $cmd == *"| jq"* ]] && ! command -v jq >/dev/null; then
			echo "skip - $where: jq is not installed"
			skipped=$((skipped + 1))
			continue
		fi
		if [ "$first" = cat ] && [[ $cmd =~ ^cat\ ([^ ]+)$ ]] && [ ! -e "$work/${BASH_REMATCH[1]}" ]; then
			cp "$dir/$k.exp" "$work/${BASH_REMATCH[1]}" # a file the page gives
			continue
		fi
		case $first in
		gpuplan | cat | jq) cwd=$work ;;
		build/*) cwd=$ROOT cmd="$BUILD/${cmd#build/}" ;;
		*)
			fail "$where runs" "'$first' is not gpuplan, cat, jq or build/...: mark it '# not run: REASON'"
			continue
			;;
		esac
		(cd "$cwd" && HOME="$TMP/home/$name" PATH="$BIN:$PATH" timeout 300 bash -c "$cmd") \
			>"$OUT" 2>&1 </dev/null
		RC=$?
		: >"$ERR" # fail() shows stderr: here it is in $OUT
		ran=$((ran + 1))
		cat "$OUT" >>"$ALL_OUT"
		short=${cmd%%$'\n'*}
		if [ "$RC" != "$want" ]; then
			fail "$where: $short" "exit $RC, the page says $want"
			sed 's/^/    | /' "$OUT" | tail -5
			show_real "$dir/$k.cmd" "$RC"
			continue
		fi
		if ! why=$(HOME="$TMP/home/$name" match_output "$OUT" "$dir/$k.exp"); then
			fail "$where: $short" "$why"
			show_real "$dir/$k.cmd" "$RC"
			continue
		fi
		pass "$where: $short"
	done
done
echo "# the pages' commands: $ran run, $skipped skipped"
if [ -z "${DOCS_PAGES:-}" ]; then
	[ "$ran" -ge 40 ] && pass "the pages show at least 40 commands that run ($ran)" ||
		fail "the pages show at least 40 commands that run" "found $ran"
fi

# ---- option lists: --help, the man page and docs/ agree ----------------------
# the options a command's --help defines: those on its option lines
defined() {
	$GPUPLAN_BIN "$1" --help | grep -E '^ +-' | sed -E 's/^ +//; s/ {2,}.*//' |
		grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}
# the man page's text for a command: its section, the job, filter and
# cost options plan shares with frontier and compare (SHARED 1), and the
# FINE-TUNING section (FT 1)
man_section() {
	local up
	up=$(echo "$1" | tr a-z A-Z)
	awk -v s="$up" -v shared="$2" -v ft="$3" '
		/^\.SH / { on = ($2 == s || (ft && $2 == "FINE-TUNING")) }
		/^\.SS Job, filter/ && shared { sh = 1 }
		/^\.S[HS] / && !/^\.SS Job, filter/ { sh = 0 }
		on || sh' "$ROOT/docs/gpuplan.1" | sed 's/\\-/-/g'
}
has_opt() { grep -qE -- "$1([^a-z0-9-]|$)" "$2"; }
gp help
cmds=$(awk '/^  [a-z]/ && $1 != "help" && $1 != "version" {print $1}' "$OUT")
all_defined="$TMP/all-defined"
: >"$all_defined"
for c in $cmds; do
	pages=$(pages_of "$c")
	if [ -z "$pages" ]; then
		fail "$c has a page in docs/" "add one and name it in pages_of in $0"
		continue
	fi
	defined "$c" >"$TMP/opts"
	cat "$TMP/opts" >>"$all_defined"
	shared=0 ft=0
	case $c in plan | frontier | compare) shared=1 ft=1 ;; simulate) ft=1 ;; esac
	man_section "$c" $shared $ft >"$TMP/man"
	missing="" mmissing=""
	for o in $(cat "$TMP/opts"); do
		[ "$o" = --help ] && continue
		found=0
		for p in $pages; do has_opt "$o" "$ROOT/$p" && found=1; done
		[ $found = 1 ] || missing="$missing $o"
		has_opt "$o" "$TMP/man" || mmissing="$mmissing $o"
	done
	[ -z "$missing" ] && pass "$pages documents every option of $c --help" ||
		fail "$pages documents every option of $c --help" "missing:$missing"
	[ -z "$mmissing" ] && pass "the man page's $c section has every option of $c --help" ||
		fail "the man page's $c section has every option of $c --help" "missing:$mmissing"
done

# every --option the pages name (prose and $ gpuplan lines, not output shown)
sort -u "$all_defined" -o "$all_defined"
grep -oE -- '--[a-z][a-z0-9-]*' "$ALL_OUT" | sort -u >"$TMP/output-opts"
for page in $PAGES; do
	unknown=""
	for o in $(awk '
		/^ *```/ { infence = !infence; cont = 0; next }
		!infence { print; next }
		{ l = $0; sub(/^ */, "", l) }
		cont || l ~ /^\$ gpuplan / { print l; cont = (l ~ /[\\|]$/) }
		' "$ROOT/$page" | grep -oE -- '(^|[^a-zA-Z0-9-])--[a-z][a-z0-9-]*' |
		grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
		grep -qx -- "$o" "$all_defined" "$TMP/output-opts" && continue
		[[ " $FOREIGN " == *" $o "* ]] && continue
		unknown="$unknown $o"
	done
	[ -z "$unknown" ] && pass "$page names only options gpuplan takes or writes" ||
		fail "$page names only options gpuplan takes or writes" "unknown:$unknown"
done

# ---- links between the pages: the file is there, and so is the heading -------
for page in $PAGES; do
	bad=""
	for link in $(grep -oE '\]\([^)#:]*(#[^)]*)?\)' "$ROOT/$page" | sed -E 's/^\]\((.*)\)$/\1/'); do
		file=${link%%#*} anchor=""
		[[ $link == *"#"* ]] && anchor=${link#*#}
		target=$(dirname "$ROOT/$page")/$file
		[ -z "$file" ] && target=$ROOT/$page
		if [ ! -e "$target" ]; then bad="$bad $link"; continue; fi
		[ -z "$anchor" ] && continue
		# GitHub's anchor of a heading: lower case, punctuation dropped,
		# blanks as hyphens
		awk '/^#+ / { sub(/^#+ /, ""); s = tolower($0); gsub(/[^a-z0-9 -]/, "", s)
			      gsub(/ /, "-", s); print s }' "$target" | grep -qx -- "$anchor" ||
			bad="$bad $link"
	done
	[ -z "$bad" ] && pass "$page links to pages and headings that are there" ||
		fail "$page links to pages and headings that are there" "broken:$bad"
done

finish
