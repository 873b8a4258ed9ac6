#!/bin/sh
# Monitoring overhead: for each backend, the monitor's CPU time as a share of one
# core and the slowdown of a 1 GiB target (memreg-accessgen, random reads and
# writes, one per 64-byte line), at the backend's default attributes; for damon
# also the kdamond's own CPU share ("kernel"). Baseline
# and monitored runs alternate, RUNS times; medians are printed. POSIX sh, so it
# also runs in the lab guest (installed as PKGDATADIR/bench/mon-overhead.sh):
#   bench/mon-overhead.sh [-b "refs softdirty damon"] [-r RUNS] [-s SECONDS] [-z SIZE]
# damon needs root and a free DAMON; it is run with --apply (lab only).
set -u
backends="damon softdirty refs" runs=3 secs=10 size=1G
while getopts b:r:s:z: o; do
	case $o in
	b) backends=$OPTARG ;; r) runs=$OPTARG ;; s) secs=$OPTARG ;; z) size=$OPTARG ;;
	*) echo "usage: $0 [-b BACKENDS] [-r RUNS] [-s SECONDS] [-z SIZE]" >&2; exit 2 ;;
	esac
done
# Programs from the build tree when run there, else from PATH (the lab guest).
here=$(cd "$(dirname "$0")" && pwd)
if [ -x "$here/../build/tools/memregctl" ]; then
	ctl=$here/../build/tools/memregctl gen=$here/../build/monitor/memreg-accessgen
else
	ctl=memregctl gen=memreg-accessgen
fi
tmp=$(mktemp -d /tmp/mr-mon-overhead-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf 'stride 64\narea big %s\nphase %ss big random rw\n' "$size" "$secs" >"$tmp/target.conf"

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "nan" }'; }
rate() { sed -n 's/.*accesses_per_second \([0-9]*\).*/\1/p'; }

echo "# target: memreg-accessgen, $size area, random rw per 64 B line, ${secs}s; $runs runs; $(uname -r)"
printf '%-10s %-26s %12s %12s %10s %10s %10s\n' backend "attrs (sample/aggr/update)" "base acc/s" "mon acc/s" slowdown "cpu/core" "kernel"
for b in $backends; do
	apply=
	[ "$b" = damon ] && apply=--apply
	: >"$tmp/base" ; : >"$tmp/mon" ; : >"$tmp/cpu" ; : >"$tmp/kcpu"
	attrs=$("$ctl" record --help | sed -n "s/^  $b (\([0-9]*\) us \/ \([0-9]*\) us \/ \([0-9]*\) us.*/\1\/\2\/\3 us/p")
	ok=1
	i=0
	while [ $i -lt "$runs" ]; do
		"$gen" -s "$tmp/target.conf" | rate >>"$tmp/base"
		if ! "$ctl" record -b "$b" $apply -o "$tmp/r.rec" -- "$gen" -s "$tmp/target.conf" \
			>"$tmp/out" 2>"$tmp/err"; then
			printf '%-10s n/a: %s\n' "$b" "$(head -1 "$tmp/err")"
			ok=0
			break
		fi
		rate <"$tmp/out" >>"$tmp/mon"
		sed -n 's/.*monitor cpu .* = \([0-9.]*\)% of one core.*/\1/p' "$tmp/err" >>"$tmp/cpu"
		k=$(sed -n 's/.*kernel sampling cpu .* = \([0-9.]*\)% of one core.*/\1/p' "$tmp/err")
		echo "${k:-0}" >>"$tmp/kcpu"
		i=$((i + 1))
	done
	[ $ok = 1 ] || continue
	base=$(median <"$tmp/base") mon=$(median <"$tmp/mon") cpu=$(median <"$tmp/cpu")
	kcpu=$(median <"$tmp/kcpu")
	slow=$(awk -v a="$base" -v b="$mon" 'BEGIN { printf("%.1f%%", (b > 0) ? 100 * (a / b - 1) : 0) }')
	printf '%-10s %-26s %12s %12s %10s %9s%% %9s%%\n' "$b" "$attrs" "$base" "$mon" "$slow" "$cpu" "$kcpu"
done
