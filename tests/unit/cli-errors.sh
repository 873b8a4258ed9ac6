#!/bin/sh
# One failing invocation of every memregctl command `memregctl help` lists: exit 1,
# nothing on stdout, the whole stderr as expected, and no message repeating its own
# context ("x: x: ...", as 'memregctl: prof.rec: prof.rec: ds no snapshot' did).
# A command added to `memregctl help` without a case here fails the test.
set -u
b=${top_builddir:-.}
ctl=$b/tools/memregctl
fix=$b/tests/fixtures/cxl-cpuless
[ -d "$fix/sys/devices/system/memory" ] || { echo "SKIP: fixture $fix not built"; exit 77; }
command -v gzip >/dev/null || { echo "SKIP: no gzip (it computes a record's CRC-32)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
MEMREG_STATE_DIR=$tmp/state
export MEMREG_STATE_DIR
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
nl='
'

# repeated FILE: the lines of FILE in which a context is repeated right after itself
# ("a: b: a: b: c" or "a: a: c"), split at ": ".
repeated() {
	awk '{
		n = split($0, s, /: /)
		for (k = 1; 2 * k <= n; k++)
			for (i = 1; i + 2 * k - 1 <= n; i++) {
				same = 1
				for (j = 0; j < k && same; j++)
					if (s[i + j] != s[i + k + j])
						same = 0
				if (same) { print; next }
			}
	}' "$1"
}

# fails_with COMMAND STDERR ARGS...: memregctl COMMAND ARGS... exits 1 with nothing on
# stdout and exactly STDERR on stderr.
tested=
fails_with() {
	cmd=$1 want=$2
	shift 2
	tested="$tested $cmd "
	"$ctl" "$cmd" "$@" >"$tmp/out" 2>"$tmp/err"
	status=$?
	what="memregctl $cmd $*"
	if [ $status -ne 1 ]; then
		fail "$what: exit status $status, expected 1: $(cat "$tmp/err")"
	elif [ -s "$tmp/out" ]; then
		fail "$what: wrote to stdout: $(cat "$tmp/out")"
	elif [ "$(cat "$tmp/err"; echo .)" != "$want$nl." ]; then
		fail "$what: stderr is:$nl$(cat "$tmp/err")${nl}expected:$nl$want"
	elif [ -n "$(repeated "$tmp/err")" ]; then
		fail "$what: a context repeats itself: $(repeated "$tmp/err")"
	else
		echo "ok: $what: $want"
	fi
}

# The checker itself: it must catch the two garbled messages of the trust issue.
printf '%s\n' 'memregctl: prof.rec: prof.rec: ds no snapshot' \
	'refs: self-test: refs: self-test: _refs: refusing to run' \
	'memregctl: root /x: No such file or directory' >"$tmp/garbled"
[ "$(repeated "$tmp/garbled" | wc -l)" -eq 2 ] ||
	fail "the repeated-context check misses a garbled message: $(repeated "$tmp/garbled")"

# le VALUE BYTES: VALUE as BYTES little-endian bytes.
le() {
	v=$1 n=$2
	while [ "$n" -gt 0 ]; do
		printf "\\$(printf %03o $((v & 255)))"
		v=$((v >> 8)) n=$((n - 1))
	done
}
# A record (memreg-record(5)) of pid 4242 with a header and no snapshot; its CRC-32 is
# zlib's crc32, which gzip keeps in the last 8 bytes of its output.
{
	printf MRMONREC; le 1 4; le 80 4; le 0 4; le 4242 4
	le 1000 8; le 100000 8; le 1000000 8; le 10 4; le 1000 4
	printf refs; le 0 12; le 0 4
} >"$tmp/hdr"
{ cat "$tmp/hdr"; gzip -c <"$tmp/hdr" | tail -c 8 | head -c 4; } >"$tmp/empty.rec"
printf 'memreg-site-map 1\npage_size 4096\npid 4242\n' >"$tmp/site.map"

fails_with regions "memregctl: root $tmp/none: No such file or directory" --root "$tmp/none"
fails_with where "memregctl: pid 999999999: no such process" 999999999 --root "$fix"
fails_with move "memregctl: pid 999999999: no such process" 999999999 --to 0 --root "$fix"
fails_with offline "memregctl: no region 7: this machine has regions 0-1 (memregctl regions)" \
	7 --root "$fix"
fails_with online "memregctl: root $tmp/none: No such file or directory" \
	--restore --root "$tmp/none"
fails_with plan "memregctl: root $tmp/none: No such file or directory" --root "$tmp/none"
fails_with evacuate "memregctl: $tmp/none.plan: No such file or directory" "$tmp/none.plan"
fails_with record "memregctl: $tmp/none.rec: No such file or directory" \
	--replay "$tmp/none.rec" -o "$tmp/out.rec"
fails_with report "memregctl: $tmp/none.rec: No such file or directory" raw "$tmp/none.rec"
fails_with profile "memregctl: $tmp/empty.rec: record holds no snapshot" \
	"$tmp/empty.rec" --site-map "$tmp/site.map" -o "$tmp/profile"
fails_with energy "memregctl: root $tmp/none: No such file or directory" \
	--root "$tmp/none" -- true
fails_with alloc-stats "memregctl: $tmp/none: no such file" --file "$tmp/none"
fails_with damon-reset "memregctl: root $tmp/none: No such file or directory" --root "$tmp/none"
fails_with bench "memregctl: $tmp/none.bench: No such file or directory" \
	--bench-file "$tmp/none.bench" -- true
fails_with control "memregctl: $tmp/none.rec: No such file or directory" \
	--replay "$tmp/none.rec" --scheme 'min max min max min max stat'
# version cannot fail but by its usage: exit 2, one line and the hint
tested="$tested version "
"$ctl" version extra >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && [ ! -s "$tmp/out" ] &&
	[ "$(cat "$tmp/err")" = "memregctl version: unexpected argument 'extra'${nl}Try 'memregctl help version'." ] ||
	fail "memregctl version extra: $(cat "$tmp/err")"

# A bad option, for every command: one line and the hint, exit 2 (getopt's own
# message used to come first, two error lines for one mistake).
for c in $("$ctl" help | sed -n '/^Commands:$/,/^$/s/^  \([a-z][a-z-]*\)  .*/\1/p'); do
	"$ctl" "$c" --no-such-option >"$tmp/out" 2>"$tmp/err"
	st=$?
	want="memregctl $c: unknown option '--no-such-option'${nl}Try 'memregctl help $c'."
	if [ $st -ne 2 ] || [ -s "$tmp/out" ] || [ "$(cat "$tmp/err")" != "$want" ]; then
		fail "memregctl $c --no-such-option: exit $st, stderr:$nl$(cat "$tmp/err")"
	else
		echo "ok: memregctl $c --no-such-option: one line, exit 2"
	fi
done
# --timeout, parsed by one helper for offline and evacuate: a bad, zero or
# over-a-day duration is bad usage (exit 2), one line and the hint.
for c in offline evacuate; do
	for d in 2x 0 25h; do
		"$ctl" "$c" 1 --timeout "$d" >"$tmp/out" 2>"$tmp/err"
		st=$?
		want="memregctl $c: --timeout: bad duration '$d'${nl}Try 'memregctl help $c'."
		if [ $st -ne 2 ] || [ -s "$tmp/out" ] || [ "$(cat "$tmp/err")" != "$want" ]; then
			fail "memregctl $c --timeout $d: exit $st, stderr:$nl$(cat "$tmp/err")"
		else
			echo "ok: memregctl $c --timeout $d: bad usage, exit 2"
		fi
	done
done
# Options before the command apply to every command (handed on as MEMREG_ROOT).
"$ctl" --root "$tmp/none" regions >"$tmp/out" 2>"$tmp/err"
st=$?
[ $st -eq 1 ] && [ "$(cat "$tmp/err")" = "memregctl: root $tmp/none: No such file or directory" ] ||
	fail "memregctl --root DIR regions: exit $st: $(cat "$tmp/err")"
"$ctl" --root "$fix" regions --json --no-occupancy >"$tmp/out" 2>"$tmp/err" &&
	"$ctl" regions --root "$fix" --json --no-occupancy >"$tmp/out2" 2>&1 &&
	cmp -s "$tmp/out" "$tmp/out2" || fail "memregctl --root DIR regions differs from regions --root DIR"
"$ctl" --bogus regions >"$tmp/out" 2>"$tmp/err"
st=$?
[ $st -eq 2 ] && [ "$(cat "$tmp/err")" = "memregctl: unknown option '--bogus' (before the command: --root DIR, --version, --help)" ] ||
	fail "memregctl --bogus regions: exit $st: $(cat "$tmp/err")"
[ "$("$ctl" --version)" = "$("$ctl" version)" ] || fail "--version and version differ"

# Every command `memregctl help` lists has its case above.
"$ctl" help >"$tmp/help" || fail "memregctl help: exit status $?"
commands=$(sed -n '/^Commands:$/,/^$/s/^  \([a-z][a-z-]*\)  .*/\1/p' "$tmp/help")
[ -n "$commands" ] || fail "no command list in memregctl help: $(cat "$tmp/help")"
for c in $commands; do
	case $tested in
	*" $c "*) ;;
	*) fail "memregctl $c: listed by memregctl help, no error case in $0" ;;
	esac
done
[ "$fails" -eq 0 ]
