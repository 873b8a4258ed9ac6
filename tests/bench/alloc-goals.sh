#!/bin/sh
# bench/alloc-goals on a runs file written here, its numbers chosen by hand and the
# expected output computed by hand (not by the program):
#   w1: glibc 1, 2, 4 s (no round= field: rounds by order), memreg 0.5, 1, 2 s: every
#       round 0.5, medians 1 / 2 = 0.5, interval [0.5, 0.5]. Peak RSS 1100 against
#       1000 KiB: 1.100, above 1.05.
#   w2: rounds 1-4 (round= fields, memreg's lines out of order, so that pairing by
#       the lines' order would give other ratios): glibc 1, 2, 1, 2 s, memreg e^0.12,
#       2 e^-0.08, e^0.12, 2 e^-0.08 (1.127497, 1.846233): the rounds' logs 0.12,
#       -0.08, 0.12, -0.08, mean 0.02 (1.020), sd sqrt(4 * 0.01 / 3) = 0.1154701, t(3)
#       = 3.18245, half width 0.1837388: [e^-0.1637388, e^0.2037388] = [0.849, 1.226],
#       above 1 but reaching it; medians (1.127497 + 1.846233) / 2 / 1.5 = 0.991.
#       Peak RSS 1900 against 2000: 0.950.
#   w3: glibc 1 s three times, memreg 1.2, 1.21, 1.19: logs' mean 0.1822993 (1.200),
#       sd 0.0083344, t(2) = 4.30265, half width 0.0207046: [1.175, 1.225], above 1.
#       Peak RSS 500 against 500: 1.000.
#   w4: glibc only (left out); jemalloc and memreg+profile lines ignored.
#   geomeans: time by medians (0.5 * 0.991243 * 1.2)^(1/3) = 0.841, paired
#   (0.5 * 1.020201 * 1.2)^(1/3) = 0.849; peak RSS (1.1 * 0.95 * 1)^(1/3) = 1.015.
set -u
b=${top_builddir:-.}/bench/alloc-goals
[ -x "$b" ] || { echo "FAIL: $b not built"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cat >"$tmp/runs" <<'RUNS'
glibc w1 1 1000 objects=10
memreg w1 0.5 1100 objects=10
jemalloc w1 9 9000
glibc w1 2 1000
memreg w1 1 1100
glibc w1 4 1000
memreg w1 2 1100
memreg+profile w1 9 9000
glibc w2 1 2000 round=1
memreg w2 1.846233 1900 round=2
glibc w2 2 2000 round=2
memreg w2 1.127497 1900 round=1
memreg w2 1.127497 1900 round=3
glibc w2 1 2000 round=3
memreg w2 1.846233 1900 round=4
glibc w2 2 2000 round=4
glibc w3 1 500
memreg w3 1.2 500
glibc w3 1 500
memreg w3 1.21 500
glibc w3 1 500
memreg w3 1.19 500
glibc w4 1 100
RUNS
"$b" --workloads "w1 w2 w3 w4" "$tmp/runs" >"$tmp/out" 2>"$tmp/err" || fail "exit $?: $(cat "$tmp/err")"
for want in \
	"Against the goals: memreg / glibc over 3 of the 4 workloads asked" \
	"w1            0.500   0.500 [0.500, 0.500]   1.100   1.100 [1.100, 1.100]" \
	"w2            0.991   1.020 [0.849, 1.226]   0.950   0.950 [0.950, 0.950]" \
	"w3            1.200   1.200 [1.175, 1.225]   1.000   1.000 [1.000, 1.000]" \
	"geomean       0.841   0.849                  1.015   1.015" \
	"- time geomean by medians 0.841, goal at most 0.70: missed (over 3 of the 4 workloads only)" \
	"- no workload slower than glibc: missed on w3 1.200 [1.175, 1.225]; not shown either way on w2" \
	"- peak RSS geomean by medians 1.015, goal at most 1.00: missed (over 3 of the 4 workloads only)" \
	"- no workload's peak RSS above 1.05 by medians: missed on w1 1.100" \
	"(1 asked had no runs of both: left out)"; do
	grep -qxF -e "$want" "$tmp/out" || fail "no line '$want' in: $(cat "$tmp/out")"
done

# Every workload of the file by default; w1 alone meets the time goal.
"$b" "$tmp/runs" >"$tmp/out" 2>&1 || fail "without --workloads: exit $?"
grep -qxF -e "Against the goals: memreg / glibc over 3 of the 3 workloads asked" "$tmp/out" ||
	fail "without --workloads: $(head -1 "$tmp/out")"
"$b" --workloads w1 "$tmp/runs" >"$tmp/out" 2>&1
grep -qxF -e "- time geomean by medians 0.500, goal at most 0.70: met" "$tmp/out" ||
	fail "w1 alone: $(cat "$tmp/out")"
grep -qxF -e "- no workload slower than glibc: no ratio above 1" "$tmp/out" ||
	fail "w1 alone, slower: $(cat "$tmp/out")"

# Lines of any length (runs saved before the script kept only alloc-bench's
# key=value lines carry 85 KB of git's output on a line).
junk=$(head -c 12000 /dev/zero | tr '\0' 'x')
printf 'glibc w5 2 100 a=%s\nmemreg w5 1 100 a=%s\n' "$junk" "$junk" >"$tmp/long"
"$b" "$tmp/long" >"$tmp/out" 2>&1 || fail "long lines: exit $?: $(cat "$tmp/out")"
grep -qxF -e "- time geomean by medians 0.500, goal at most 0.70: met" "$tmp/out" ||
	fail "long lines: $(cat "$tmp/out")"

# Bad input: a message naming the file and line, exit 1; usage errors exit 2.
check_err() {
	want_rc=$1 want=$2
	shift 2
	"$b" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = "$want_rc" ] || fail "$*: exit $rc, want $want_rc"
	grep -qF -e "$want" "$tmp/err" || fail "$*: no '$want' in: $(cat "$tmp/err")"
}
printf 'glibc w1 fast 1000\n' >"$tmp/bad"
check_err 1 "bad:1: 'fast' is not a time in seconds" "$tmp/bad"
printf 'glibc w1 1 1000\nglibc w1 1 1000 round=1\n' >"$tmp/bad"
check_err 1 "bad:2: glibc has round 1 of w1 twice" "$tmp/bad"
printf 'memreg w1 1\n' >"$tmp/bad"
check_err 1 "bad:1: want LABEL WORKLOAD SECONDS PEAK_KIB" "$tmp/bad"
printf 'glibc w1 1 1000 round=0\n' >"$tmp/bad"
check_err 1 "bad:1: 'round=0': a round from 1 to 256" "$tmp/bad"
check_err 1 "runs: no workload with runs of both glibc and memreg" --workloads w4 "$tmp/runs"
check_err 1 "missing: No such file or directory" "$tmp/missing"
check_err 2 "usage: alloc-goals" 
check_err 2 "usage: alloc-goals" --bogus "$tmp/runs"
"$b" --help | grep -q "^usage: alloc-goals" || fail "--help"

[ "$fails" = 0 ] || exit 1
echo "PASS: alloc-goals: paired and median ratios, verdicts, bad input"
