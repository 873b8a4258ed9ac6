#!/bin/sh
# bench/hansen.sh's table, JSON and plot from a fixed log of guest lines
# (tests/bench/hansen-fixture.txt, numbers chosen by hand): no boot. The expected table is
# written out here, the overhead computed by hand: scenario 2's medians are 11.00 (off:
# 10, 12, 11) and 10.00 (on: 9, 11), 10/11 - 1 = -9.09%; round by round 9/10 - 1 = -10%,
# 11/12 - 1 = -8.33%, their median -9.17%.
set -u
s=$(cd "${top_srcdir:-.}" && pwd)
command -v bash >/dev/null || { echo "SKIP: no bash (bench/hansen.sh is a bash script)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

bash "$s/bench/hansen.sh" --from-log "$s/tests/bench/hansen-fixture.txt" --out "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr" ||
	fail "hansen.sh --from-log failed: $(cat "$tmp/stderr")"
cat >"$tmp/want" <<'TABLE'
Hansen's scenarios: random 64 KiB reads of a 768 MiB data set on a disk the host does
not cache, 20 s per measurement, MB/s (higher is better) and the reads the page
cache served (mincore before each read), VM lab under TCG

scenario                                     MemTotal MiB       MB/s   hits %
(1) booted with 4 DIMMs                               910      20.00     99.5
(1) booted with 2 DIMMs                               654      10.00     75.0
(1) booted with 0 DIMMs                               398       5.00     40.0
(3) all DIMMs, evacuation steps done: 0               910      19.00     99.0
(3) all DIMMs, evacuation steps done: 1               654       9.50     74.0
(2) one node, memreg off (median of 3)                         11.00
(2) one node, memreg on (median of 2)                          10.00

(2) overhead of memreg with nothing to manage: -9.1% MB/s
(2) each round, on against its own off: -10.0%, -8.3% (median -9.2%)
TABLE
diff "$tmp/want" "$tmp/stdout" >"$tmp/diff" || fail "the table differs: $(cat "$tmp/diff")"
cmp -s "$tmp/stdout" "$tmp/out/hansen.txt" || fail "hansen.txt is not the printed table"
# The JSON: every run, in the log's order, scenario 2's raw runs unsorted.
runs=$(tr -d ' \n' <"$tmp/out/hansen.json" | grep -o '{"scenario":[^}]*}' | sed 's/.*"label":"\([^"]*\)".*"MBps":\([0-9.]*\).*/\1:\2/' | tr '\n' ' ')
[ "$runs" = "dimms=4:20 dimms=2:10 dimms=0:5 evacuated=0:19 evacuated=1:9.5 off:10 off:12 off:11 on:9 on:11 " ] ||
	fail "JSON runs: '$runs'"
# The plot: two lines of 3 and 2 points, the legend names both scenarios and (2)'s figure.
[ "$(grep -c '<polyline' "$tmp/out/hansen.svg")" = 2 ] || fail "the plot has not 2 lines"
[ "$(grep -c '<circle' "$tmp/out/hansen.svg")" = 5 ] || fail "the plot has not 5 points"
for t in '(1) booted with fewer DIMMs' '(3) memreg evacuating' '(2) one node, memreg on vs off: -9.1% MB/s'; do
	grep -qF ">$t</text>" "$tmp/out/hansen.svg" || fail "the plot lacks '$t'"
done
# The plot is of the hits: 40% at 398 MiB (the smallest memory) is at the left edge,
# 40% of the way up the 230-pixel axis from its foot at 260: y = 260 - 92 = 168.
grep -q '<circle cx="60.0" cy="168.0"' "$tmp/out/hansen.svg" || fail "40% at 398 MiB is not at (60, 168)"
# A run made with guest time in instructions says so in the header; a log from
# before the option (the fixture) or with --icount none does not.
{ echo "hansen-config icount=3"; cat "$s/tests/bench/hansen-fixture.txt"; } >"$tmp/icount.log"
bash "$s/bench/hansen.sh" --from-log "$tmp/icount.log" --out "$tmp/out3" 2>/dev/null |
	grep -qx "cache served (mincore before each read), VM lab under TCG, guest time counted in instructions (icount shift 3)" ||
	fail "an icount run's header does not name it"
{ echo "hansen-config icount=none"; cat "$s/tests/bench/hansen-fixture.txt"; } >"$tmp/none.log"
bash "$s/bench/hansen.sh" --from-log "$tmp/none.log" --out "$tmp/outn" 2>/dev/null |
	grep -qx "cache served (mincore before each read), VM lab under TCG" ||
	fail "a run without icount claims it"
[ "$fails" = 0 ] || exit 1
echo "ok: table, JSON and plot from the fixed log"
