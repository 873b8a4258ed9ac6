# Shared by the wss tests: record a shipped accessgen config with the refs backend
# and check the median working-set size. Sourced; needs top_srcdir/top_builddir.
#
# The check holds only if the target ran its pattern: a target that goes without
# a CPU for most of a sampling interval touches nothing in it, and the monitor is
# right to read no working set there. accessgen reports its longest stall; a
# median out of range with a stall of half a sampling interval or more is retried
# once (said so in the log), a median out of range without one fails at once.
# wss_check CONFIG TIME_SCALE ATTRS MIN_ACCESSES LO_MIB HI_MIB
wss_check() {
	config=$1 scale=$2 attrs=$3 min=$4 lo=$5 hi=$6
	ctl=$top_builddir/tools/memregctl
	gen=$top_builddir/monitor/memreg-accessgen
	rec=$(mktemp /tmp/mr-wss-XXXXXX.rec)
	# record keeps a previous file as .old
	trap 'rm -f "$rec" "$rec.old" "$rec.err" "$rec.out"' EXIT
	sample_us=${attrs%%,*}
	for try in 1 2; do
		wss_record && return 0
		[ "$try" = 1 ] || break
		# retried only if the target stalled for half a sampling interval or more
		awk -v s="$stall_ms" -v us="$sample_us" 'BEGIN { exit !(s * 2000 >= us) }' || break
		echo "# the target stalled for $stall_ms ms, half a sampling interval or more:"
		echo "# it did not run the pattern throughout; recording once more"
	done
	echo "FAIL: $config: $why"
	exit 1
}

# One record and its check: 0 when the median is in range, 1 when it is not (why
# and stall_ms say so); exits on any other failure.
wss_record() {
	if ! "$ctl" record -b refs -a "$attrs" -o "$rec" -- \
		"$gen" -s -t "$scale" "$top_srcdir/monitor/configs/$config" >"$rec.out" 2>"$rec.err"; then
		if grep -q "self-test" "$rec.err"; then
			echo "SKIP: refs backend does not work here: $(cat "$rec.err")"
			exit 77
		fi
		cat "$rec.out" "$rec.err"
		exit 1
	fi
	cat "$rec.out" "$rec.err"
	stall_ms=$(sed -n 's/.*longest_stall_ms \([0-9.]*\).*/\1/p' "$rec.out")
	[ -n "$stall_ms" ] || { echo "FAIL: accessgen -s printed no longest_stall_ms"; exit 1; }
	"$ctl" report wss --min-accesses "$min" "$rec"
	p50=$("$ctl" report wss --json --min-accesses "$min" "$rec" |
		sed -n 's/^ *"p50": *\([0-9]*\).*/\1/p')
	[ -n "$p50" ] || { echo "FAIL: no p50 in the JSON report"; exit 1; }
	mib=$((p50 / 1048576))
	if [ "$p50" -ge $((lo * 1048576)) ] && [ "$p50" -le $((hi * 1048576)) ]; then
		echo "PASS: $config median working set $p50 bytes (~$mib MiB) within $lo..$hi MiB"
		return 0
	fi
	why="median working set $p50 bytes (~$mib MiB), want $lo..$hi MiB"
	why="$why (the target's longest stall: $stall_ms ms)"
	echo "# $config: $why"
	# each snapshot's working set, for whoever reads the log
	"$ctl" report raw "$rec" | awk -v min="$min" '
		/^snapshot/ { if (n++) l = l sprintf(" %.1f", w / 1048576); w = 0 }
		/nr_accesses/ { if ($4 >= min) w += $2 }
		END { if (n) printf "# each snapshot (MiB):%s %.1f\n", l, w / 1048576 }'
	return 1
}
