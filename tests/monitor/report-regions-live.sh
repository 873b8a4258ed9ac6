#!/bin/sh
# report regions of a process record while the process still runs: its pagemap
# PFNs place the zigzag's 200 MiB (resident, written at start) in the live
# machine's power regions. Needs PFNs (root with CAP_SYS_ADMIN), else a skip.
set -u
ctl=$top_builddir/tools/memregctl
gen=$top_builddir/monitor/memreg-accessgen
tmp=$(mktemp -d /tmp/mr-regions-live-XXXXXX)
fail() { echo "FAIL: $*"; exit 1; }
if ! "$top_builddir/tests/monitor/mk-phys-record" --pfn-readable; then
	rmdir "$tmp"
	echo "SKIP: pagemap PFNs read as 0 here (needs CAP_SYS_ADMIN)"
	exit 77
fi
"$gen" -t 1 "$top_srcdir/monitor/configs/zigzag" >/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
# Recorded once its 200 MiB are written, not after a fixed pause: under a loaded
# machine's make check a second was not enough (101 MiB placed, 2026-12-06).
i=0
while [ "$(awk '/^VmRSS:/ { print int($2 / 1024) }' /proc/$pid/status 2>/dev/null || echo 0)" -lt 200 ]; do
	i=$((i + 1))
	[ $i -lt 1200 ] || fail "the generator did not write its 200 MiB in 120 s"
	kill -0 $pid 2>/dev/null || fail "the generator exited"
	sleep 0.1
done
"$ctl" record -b refs --apply -a 100000,500000,2000000 -d 2 --pid $pid -o "$tmp/live.rec" 2>"$tmp/err" ||
	{ cat "$tmp/err"; fail "record"; }
"$ctl" report regions --json "$tmp/live.rec" >"$tmp/out.json" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/err"; fail "report regions exited $rc"; }
grep -q '"scope":"process"' "$tmp/out.json" || fail "not marked process-scoped"
mib=$(sed -n 's/.*"monitored_bytes_per_snapshot":\([0-9.e+]*\).*/\1/p' "$tmp/out.json" |
	awk '{ s += $1 } END { printf "%d", s / 1048576 }')
[ "$mib" -ge 200 ] || fail "only $mib MiB of the process placed in power regions, want >= 200"
echo "PASS: $mib MiB per snapshot placed in power regions through pagemap PFNs"
