#!/bin/sh
# report regions: a physical record (replayed from a recording made by the test
# helper tests/monitor/mk-phys-record) joined with a fixture machine's region map: the accessed region
# has a rate, the others are idle; a process record whose process is gone says
# it needs physical addresses.
set -u
ctl=$top_builddir/tools/memregctl
mk=$top_builddir/tests/monitor/mk-phys-record
fx=$top_srcdir/tests/fixtures/vm-1node
tmp=$(mktemp -d /tmp/mr-report-regions-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -d "$fx" ] || { echo "SKIP: fixture $fx missing"; exit 77; }

"$mk" "$tmp/phys.rec" || fail "mk-phys-record"
"$ctl" report regions --root "$fx" "$tmp/phys.rec" >"$tmp/out.txt" || { cat "$tmp/out.txt"; fail "report regions"; }
cat "$tmp/out.txt"
grep -q '^# physical memory' "$tmp/out.txt" || fail "does not say physical"
"$ctl" report regions --json --root "$fx" "$tmp/phys.rec" >"$tmp/out.json" || fail "json"
grep -q '"access_rate":0.5' "$tmp/out.json" || fail "no region with access rate 0.5"
grep -q '"idle_share":1' "$tmp/out.json" || fail "no idle region"
"$mk" "$tmp/proc.rec" process || fail "mk-phys-record process"
"$ctl" report regions --root "$fx" "$tmp/proc.rec" 2>"$tmp/err.txt"
[ $? -eq 1 ] || fail "process record of a gone process accepted"
grep -q "process-scoped record of pid" "$tmp/err.txt" || { cat "$tmp/err.txt"; fail "message"; }
echo PASS
