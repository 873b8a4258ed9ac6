#!/bin/sh
# report regions of a process record against a fixture machine (vm-1node's region
# map: 128 MiB regions) with a fixture process 4242:
#   maps: [0x10000000, +16 pages) rw, [0x100000000, +64 GiB) PROT_NONE,
#         [0x1100000000, +8 pages) rw
#   pagemap: 8 pages present at 0x10000000 in region 1 (PFN 0x8000..), 8 at
#         0x1100000000 in region 2 (PFN 0x10000..)
# The record (one region spanning all of it, accessed in 5 of 10 samples) puts
# 32 KiB per snapshot at rate 0.5 in each of regions 1 and 2. Then: frames hidden
# (PFN 0, as a non-root reader sees them) is refused; a pid reused since the record
# is refused, by the record's start time (version 2) or, without one, because the
# process started after the record did.
set -u
ctl=$top_builddir/tools/memregctl
mk=$top_builddir/tests/monitor/mk-phys-record
fx=$top_srcdir/tests/fixtures/vm-1node
tmp=$(mktemp -d /tmp/mr-report-regions-proc-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -d "$fx" ] || { echo "SKIP: fixture $fx missing"; exit 77; }
hz=$(getconf CLK_TCK)

root=$tmp/root
mkdir -p "$root/proc/4242" "$tmp/empty"
cp -R "$fx/sys" "$root/sys"
cp "$fx/proc/meminfo" "$fx/proc/cpuinfo" "$root/proc/" 2>/dev/null
printf 'cpu  1 2 3 4\nbtime 1000\nprocesses 9\n' >"$root/proc/stat"
# started 5 s after boot (btime 1000): at 1005 s
stat_at() { printf '4242 (fixture proc) S 1 4242 4242 0 -1 4194304 100 0 0 0 1 2 0 0 20 0 1 0 %s 1000000 100\n' "$1" >"$root/proc/4242/stat"; }
stat_at $((5 * hz))
cat >"$root/proc/4242/maps" <<'MAPS'
10000000-10010000 rw-p 00000000 00:00 0
100000000-1100000000 ---p 00000000 00:00 0
1100000000-1100008000 rw-p 00000000 00:00 0                          [anon]
MAPS
good_pagemap() {
	rm -f "$root/proc/4242/pagemap"
	"$mk" --pagemap "$root/proc/4242/pagemap" 65536 32768 8 &&
		"$mk" --pagemap "$root/proc/4242/pagemap" 17825792 65536 8 || fail "pagemap fixture"
}
good_pagemap

# a version 2 record of the process that started at tick 5 * hz, recording from 1010 s
"$mk" "$tmp/v2.rec" span 4242 $((5 * hz)) 1010 || fail "mk-phys-record span"
"$ctl" report regions --json --root "$root" "$tmp/v2.rec" >"$tmp/out.json" 2>"$tmp/err" ||
	{ cat "$tmp/err"; fail "report regions of the running process: exit $?"; }
tr -d ' \n' <"$tmp/out.json" >"$tmp/flat.json"
for want in \
	'{"id":1,"node":0,"size_bytes":134217728,"monitored_bytes_per_snapshot":32768.0,"access_rate":0.5,"idle_share":0.0}' \
	'{"id":2,"node":0,"size_bytes":134217728,"monitored_bytes_per_snapshot":32768.0,"access_rate":0.5,"idle_share":0.0}' \
	'{"id":0,"node":0,"size_bytes":134217728,"monitored_bytes_per_snapshot":0.0,"access_rate":0.0,"idle_share":1.0}'
do
	grep -qF "$want" "$tmp/flat.json" || { cat "$tmp/out.json"; fail "no entry $want"; }
done

# frames hidden: every present page reads PFN 0
rm -f "$root/proc/4242/pagemap"
"$mk" --pagemap "$root/proc/4242/pagemap" 65536 0 8 || fail "pagemap fixture"
"$ctl" report regions --root "$root" "$tmp/v2.rec" >"$tmp/out.txt" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/out.txt"; fail "hidden PFNs: exit $rc, want 1"; }
want="memregctl: process-scoped record of pid 4242: per-region rates need its physical pages, read from its pagemap while it runs, as root (or a --phys record): pid 4242's pagemap shows its pages without frame numbers (the kernel shows PFNs only to CAP_SYS_ADMIN): every power region would look idle"
[ "$(cat "$tmp/err")" = "$want" ] || { cat "$tmp/err"; fail "hidden PFNs: message"; }
[ -s "$tmp/out.txt" ] && fail "hidden PFNs: printed a table"
good_pagemap

# pid reused: the process 4242 now started at another tick than the recorded one
stat_at $((7 * hz))
"$ctl" report regions --root "$root" "$tmp/v2.rec" >"$tmp/out.txt" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "reused pid (version 2): exit $rc, want 1"
want="memregctl: process-scoped record of pid 4242: per-region rates need its physical pages, read from its pagemap while it runs, as root (or a --phys record): pid 4242 is another process now (started at tick $((7 * hz)), not $((5 * hz)))"
[ "$(cat "$tmp/err")" = "$want" ] || { cat "$tmp/err"; fail "reused pid (version 2): message"; }

# no start time in the record (version 1, or unreadable when recording): a process
# that started (1000 + 7 = 1007 s) before the record did (1010 s) is accepted, one
# that started after (1000 + 20 s) is not
MEMREG_ROOT=$tmp/empty "$mk" "$tmp/nostart.rec" span 4242 0 1010 || fail "mk-phys-record span 0"
"$ctl" report raw "$tmp/nostart.rec" >/dev/null || fail "raw"
"$ctl" report regions --root "$root" "$tmp/nostart.rec" >"$tmp/out.txt" 2>"$tmp/err" ||
	{ cat "$tmp/err"; fail "no start time, process older than the record: refused"; }
stat_at $((20 * hz))
"$ctl" report regions --root "$root" "$tmp/nostart.rec" >"$tmp/out.txt" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "reused pid (no start time): exit $rc, want 1"
want="memregctl: process-scoped record of pid 4242: per-region rates need its physical pages, read from its pagemap while it runs, as root (or a --phys record): pid 4242 started after the record did: it is another process now"
[ "$(cat "$tmp/err")" = "$want" ] || { cat "$tmp/err"; fail "reused pid (no start time): message"; }

# the process gone
rm -rf "$root/proc/4242"
"$ctl" report regions --root "$root" "$tmp/v2.rec" >"$tmp/out.txt" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "gone: exit $rc, want 1"
want="memregctl: process-scoped record of pid 4242: per-region rates need its physical pages, read from its pagemap while it runs, as root (or a --phys record): pid 4242 has exited"
[ "$(cat "$tmp/err")" = "$want" ] || { cat "$tmp/err"; fail "gone: message"; }
echo PASS
