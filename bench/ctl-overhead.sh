#!/bin/sh
# The controller's overhead: a target (memreg-accessgen, random reads and writes one
# per 64-byte line over one area) run plain, under monitoring alone (memregctl
# record) and under memregctl control with stat-only schemes (1 and 8), alternating,
# RUNS times each; medians of the target's accesses per second, its slowdown against
# the plain run, and memreg's CPU time as a share of one core (record: its own
# "monitor cpu" line; control: the growth of cpu_seconds in its status file from the
# first aggregation to the last over the monitoring time between them, which counts
# every thread of memreg and a kdamond's time where there is one, and leaves out the
# start-up's one-off scan of the regions' occupancy for the status). POSIX sh, so
# it also runs in the lab guest (installed as PKGDATADIR/bench/ctl-overhead.sh):
#   bench/ctl-overhead.sh [-b BACKEND] [-a ATTRS] [-r RUNS] [-s SECONDS] [-z SIZE]
#                         [-c "plain record stat1 stat8"]
# A dry run on a process memreg starts: nothing is changed but the target's
# accessed bits (refs) or soft-dirty bits. damon needs --apply (the lab): -A.
set -u
backend=refs attrs=1000000,2000000,4000000,10,1000 runs=5 secs=20 size=256M apply=
configs="plain record stat1 stat8"
while getopts b:a:r:s:z:c:A o; do
	case $o in
	b) backend=$OPTARG ;; a) attrs=$OPTARG ;; r) runs=$OPTARG ;; s) secs=$OPTARG ;;
	z) size=$OPTARG ;; c) configs=$OPTARG ;; A) apply=--apply ;;
	*) echo "usage: $0 [-b BACKEND] [-a ATTRS] [-r RUNS] [-s SECONDS] [-z SIZE] [-c CONFIGS] [-A]" >&2
	   exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
if [ -x "$here/../build/tools/memregctl" ]; then
	ctl=$here/../build/tools/memregctl gen=$here/../build/monitor/memreg-accessgen
else
	ctl=memregctl gen=memreg-accessgen
fi
tmp=$(mktemp -d /tmp/mr-ctl-overhead-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf 'stride 64\narea big %s\nphase %ss big random rw\n' "$size" "$secs" >"$tmp/target.conf"
# eight stat schemes of different patterns: the engine's cost per scheme shows
cat >"$tmp/stat8.sch" <<'SCH'
min max min max min max stat
min max 0 0 min max stat
min max 1% max min max stat
4K 1M min max 1s max stat
1M max 0 5% 2s max stat
min max 50% max min max stat
min max min max 10s max stat
2M max 0 0 5s max stat
SCH

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "nan" }'; }
rate() { sed -n 's/.*accesses_per_second \([0-9]*\).*/\1/p'; }
status_cpu() { sed -n 's/.*"cpu_seconds": *\([0-9.e+-]*\).*/\1/p' "$1" | head -1; }
status_time() { sed -n 's/.*"monitor_time_us": *\([0-9]*\).*/\1/p' "$1" | head -1; }

# run CONFIG: one run of the target under CONFIG; appends its rate and memreg's cpu %
run() {
	case $1 in
	plain)
		"$gen" -s "$tmp/target.conf" >"$tmp/out" 2>"$tmp/err"
		cpu=0 ;;
	record)
		"$ctl" record -b "$backend" -a "$attrs" $apply -o "$tmp/r.rec" -- \
			"$gen" -s "$tmp/target.conf" >"$tmp/out" 2>"$tmp/err" || return 1
		cpu=$(sed -n 's/.*monitor cpu .* = \([0-9.]*\)% of one core.*/\1/p' "$tmp/err") ;;
	stat1|stat8)
		if [ "$1" = stat1 ]; then set -- --scheme 'min max min max min max stat'
		else set -- --schemes "$tmp/stat8.sch"; fi
		rm -f "$tmp/st.json"
		"$ctl" control -b "$backend" -a "$attrs" $apply --status-file "$tmp/st.json" "$@" \
			-- "$gen" -s "$tmp/target.conf" >"$tmp/out" 2>"$tmp/err" &
		cpid=$!
		# the loop's CPU only: from the first status (after the start-up, which
		# scans the regions' occupancy for the status) to the last
		c0= t0=
		while kill -0 $cpid 2>/dev/null; do
			if [ -z "$c0" ] && [ -s "$tmp/st.json" ]; then
				c0=$(status_cpu "$tmp/st.json") t0=$(status_time "$tmp/st.json")
			fi
			sleep 0.1
		done
		wait $cpid || return 1
		c1=$(status_cpu "$tmp/st.json") t1=$(status_time "$tmp/st.json")
		cpu=$(awk -v a="${c0:-0}" -v b="$c1" -v t="${t0:-0}" -v u="$t1" \
			'BEGIN { if (u > t) printf("%.2f", 100 * (b - a) / ((u - t) / 1e6)); else print "nan" }') ;;
	esac
	rate <"$tmp/out" >>"$tmp/rate.$c"
	echo "${cpu:-nan}" >>"$tmp/cpu.$c"
}

echo "# target: memreg-accessgen, $size area, random rw per 64 B line, ${secs}s; backend $backend," \
	"attrs $attrs; $runs runs each, alternating; $(uname -r), $(nproc) cpus"
for c in $configs; do : >"$tmp/rate.$c"; : >"$tmp/cpu.$c"; done
i=0
while [ $i -lt "$runs" ]; do
	for c in $configs; do
		run $c || { echo "$c: failed: $(head -1 "$tmp/err")" >&2; exit 1; }
	done
	i=$((i + 1))
done
base=$(median <"$tmp/rate.plain" 2>/dev/null)
printf '%-8s %-34s %12s %10s %12s\n' config what "acc/s" slowdown "memreg cpu"
for c in $configs; do
	case $c in
	plain) what="the target alone" ;;
	record) what="monitoring only (record)" ;;
	stat1) what="control, 1 stat scheme" ;;
	stat8) what="control, 8 stat schemes" ;;
	esac
	r=$(median <"$tmp/rate.$c") cpu=$(median <"$tmp/cpu.$c")
	slow=$(awk -v a="$base" -v b="$r" 'BEGIN { printf("%.1f%%", (b > 0) ? 100 * (a / b - 1) : 0) }')
	printf '%-8s %-34s %12s %10s %11s%%\n' "$c" "$what" "$r" "$slow" "$cpu"
done
