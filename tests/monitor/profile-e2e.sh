#!/bin/sh
# memregctl profile end to end: a program with a hot site (10% of the bytes) and a cold
# one interleaved runs under libmemreg.so with MEMREG_SITE_MAP while `memregctl record
# -b refs` watches it; the profile learned from that record and map must take the hot
# set's inflation (pages holding hot objects / hot bytes' pages) from well above 1.5
# to below 1.5 in the next run. Bad inputs: one line, exit 1.
: "${top_builddir:=.}"
MEMREG_LIB="$(cd "$top_builddir" && pwd)/.libs/libmemreg.so"
CTL="$top_builddir/tools/memregctl"
PROG="$top_builddir/tests/monitor/profile-prog"
[ -f "$MEMREG_LIB" ] || { echo "libmemreg.so not built" >&2; exit 99; }
tmp=$(mktemp -d) || exit 99
pid= rpid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$rpid" ] && kill "$rpid" 2>/dev/null; rm -rf "$tmp"' EXIT
status=0
fail() {
	echo "FAIL: $*" >&2
	status=1
}
infl() { sed -n 's/.*inflation=\([0-9.]*\).*/\1/p' "$1"; }

# 1 MiB regions: the 8 MiB heap fills whole regions. The learning run splits its
# heap into one mapping per page ("split", the same for every page): refs sees
# mappings, not pages. 150000 regions: about one a page over the heap and its
# neighbours (the 512 MiB site side table lies next to it and counts in the total).
# The record starts once the program says ready (its heap built) and the program
# touches its hot objects until the record holds 10 snapshots (FILE.part-*, valid
# at every moment), when SIGUSR1 lets it exit and the record ends with it: every
# snapshot sees the touching, however slow the machine. Each wait at most 120 s.
export MEMREG_REGION_SIZE=1M
LD_PRELOAD="$MEMREG_LIB" MEMREG_SITE_MAP="$tmp/map" "$PROG" 8388608 600000 split >"$tmp/learn" &
pid=$!
i=0
while ! grep -q '^ready' "$tmp/learn"; do
	i=$((i + 1))
	[ $i -lt 1200 ] || { echo "profile-prog not ready in 120 s" >&2; exit 99; }
	sleep 0.1
done
"$CTL" record -b refs --apply -a 50000,500000,1000000,150000,300000 -o "$tmp/rec" --pid "$pid" \
	2>"$tmp/rec.log" &
rpid=$!
i=0
while [ "$("$CTL" report raw "$tmp"/rec.part-* 2>/dev/null | grep -c '^snapshot ')" -lt 10 ]; do
	kill -0 "$rpid" 2>/dev/null || { cat "$tmp/rec.log" >&2; echo "record ended before 10 snapshots" >&2; exit 99; }
	i=$((i + 1))
	[ $i -lt 240 ] || { cat "$tmp/rec.log" >&2; echo "no 10 snapshots in the record in 120 s" >&2; exit 99; }
	sleep 0.5
done
kill -USR1 "$pid"
wait "$pid" || fail "learning run exited $?"
pid=
wait "$rpid" || { rc=$?; cat "$tmp/rec.log" >&2; echo "record exited $rc" >&2; exit 99; }
rpid=
[ -s "$tmp/map" ] || { echo "no site map written" >&2; exit 99; }
before=$(infl "$tmp/learn")

"$CTL" profile "$tmp/rec" --site-map "$tmp/map" -o "$tmp/prof" >"$tmp/table" || fail "profile failed"
cat "$tmp/table"
# The program's two sites, found back to their functions.
nm -n "$PROG" | awk '$2 ~ /^[tT]$/ { print $1, $3 }' >"$tmp/syms"
classes=$(awk -v syms="$tmp/syms" '
	function hex(s,  i, v) { s = tolower(s); sub(/^0x/, "", s); v = 0
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v }
	BEGIN { while ((getline l < syms) > 0) { split(l, f, " "); n++; a[n] = hex(f[1]); nm[n] = f[2] } }
	/^[0-9a-f]+ 0x/ { off = hex($2); fn = ""
		for (i = 1; i <= n; i++) if (a[i] <= off) fn = nm[i]
		if (fn == "hot_site" || fn == "cold_site") printf "%s=%s ", fn, $3 }' "$tmp/prof")
echo "learned: $classes"
case $classes in *hot_site=hot*) ;; *) fail "hot_site not learned hot: $classes" ;; esac
case $classes in *cold_site=cold*) ;; *) fail "cold_site not learned cold: $classes" ;; esac

LD_PRELOAD="$MEMREG_LIB" MEMREG_PROFILE="$tmp/prof" "$PROG" 8388608 0 >"$tmp/after" 2>"$tmp/after.err" ||
	fail "profiled run failed: $(cat "$tmp/after.err")"
after=$(infl "$tmp/after")
echo "inflation: without a profile $before, with the learned profile $after"
awk -v b="$before" 'BEGIN { exit !(b + 0 >= 3) }' || fail "inflation without a profile $before, want >= 3"
awk -v a="$after" 'BEGIN { exit !(a != "" && a + 0 < 1.5) }' || fail "inflation with the profile $after, want < 1.5"

# Bad inputs: one line naming the problem, exit 1.
check_bad() {
	want=$1
	shift
	"$CTL" profile "$@" -o "$tmp/x" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc = 1 ] || fail "profile $*: exit $rc, want 1"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "profile $*: not one line: $(cat "$tmp/err")"
	grep -q "$want" "$tmp/err" || fail "profile $*: '$(cat "$tmp/err")' lacks '$want'"
}
sed 's/^pid .*/pid 1/' "$tmp/map" >"$tmp/otherpid"
check_bad "record of pid $(sed -n 's/^pid //p' "$tmp/map"), but site map .* is of pid 1" "$tmp/rec" -s "$tmp/otherpid"
printf 'memreg-site-map 1\npage_size 4096\npid 5\npage 0x1000 9:10\n' >"$tmp/badmap"
check_bad "badmap:4: site 9 has no site line" "$tmp/rec" -s "$tmp/badmap"
head -c 100 "$tmp/rec" >"$tmp/shortrec"
check_bad "shortrec" "$tmp/shortrec" -s "$tmp/map"
check_bad "map" "$tmp/map" -s "$tmp/map"
exit $status
