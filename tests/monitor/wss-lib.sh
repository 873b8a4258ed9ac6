# Shared by the wss tests: record a shipped accessgen config with the refs backend
# and check the median working-set size. Sourced; needs top_srcdir/top_builddir.
# wss_check CONFIG TIME_SCALE ATTRS MIN_ACCESSES LO_MIB HI_MIB
wss_check() {
	config=$1 scale=$2 attrs=$3 min=$4 lo=$5 hi=$6
	ctl=$top_builddir/tools/memregctl
	gen=$top_builddir/monitor/memreg-accessgen
	rec=$(mktemp /tmp/mr-wss-XXXXXX.rec)
	trap 'rm -f "$rec" "$rec.old"' EXIT	# record keeps a previous file as .old
	if ! "$ctl" record -b refs -a "$attrs" -o "$rec" -- \
		"$gen" -t "$scale" "$top_srcdir/monitor/configs/$config" 2>"$rec.err"; then
		if grep -q "self-test" "$rec.err"; then
			echo "SKIP: refs backend does not work here: $(cat "$rec.err")"
			rm -f "$rec.err"
			exit 77
		fi
		cat "$rec.err"; rm -f "$rec.err"
		exit 1
	fi
	cat "$rec.err"; rm -f "$rec.err"
	"$ctl" report wss --min-accesses "$min" "$rec"
	p50=$("$ctl" report wss --json --min-accesses "$min" "$rec" |
		sed -n 's/^ *"p50": *\([0-9]*\).*/\1/p')
	[ -n "$p50" ] || { echo "FAIL: no p50 in the JSON report"; exit 1; }
	mib=$((p50 / 1048576))
	if [ "$p50" -lt $((lo * 1048576)) ] || [ "$p50" -gt $((hi * 1048576)) ]; then
		echo "FAIL: $config median working set $p50 bytes (~$mib MiB), want $lo..$hi MiB"
		exit 1
	fi
	echo "PASS: $config median working set $p50 bytes (~$mib MiB) within $lo..$hi MiB"
}
