#!/bin/sh
# memregctl control, replay-driven (tests/controller/mk-ctl-record: a 32 MiB hot area
# and a 192 MiB cold one, 20 snapshots of 100 ms, ages 1..20) against fixture machines:
# exactly the expected actions and statistics of a dry run, the quota, the refusals
# (one node, a writes-only backend, --pid without --apply), and SIGTERM printing the
# final statistics of a command memreg started. Nothing here changes the kernel.
set -u
ctl=$top_builddir/tools/memregctl
mk=$top_builddir/tests/controller/mk-ctl-record
gen=$top_builddir/monitor/memreg-accessgen
fx=$top_builddir/tests/fixtures
tmp=$(mktemp -d /tmp/mr-control-cli-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -d "$fx/server-2s-mpst/sys" ] || { echo "SKIP: fixture roots not built"; exit 77; }

"$mk" "$tmp/ctl.rec" || fail "mk-ctl-record"
"$mk" "$tmp/sd.rec" softdirty || fail "mk-ctl-record softdirty"

# 1. migrate_cold with a quota of 64 MiB per 1 s, and a stat scheme, over the
# two-node server: the cold area matches from age 5 (500 ms) on; the quota lets
# 64 MiB through at 0.5 s and at 1.1 s (the next reset interval), and the first
# interval ends spent (qt_exceeds 1). Each action started its piece's age over
# (DAMOS), so at 1.9 s the stat scheme (age >= 1.9 s) matches only the 64 MiB never
# acted on.
cat >"$tmp/q.sch" <<'SCH'
4K max 0 0 500ms max migrate_cold 1
  quota bytes 64M per 1s
min max 0 0 1900ms max stat
SCH
"$ctl" control --root "$fx/server-2s-mpst" --replay "$tmp/ctl.rec" --schemes "$tmp/q.sch" \
	>"$tmp/q.out" 2>"$tmp/q.err" || { cat "$tmp/q.err"; fail "quota run exit $?"; }
u='from unknown nodes (replayed virtual addresses)'
cat >"$tmp/q.want" <<OUT
0.500 s: scheme 0 (line 1) migrate_cold -> node 1: would apply to 1 region, 64 MiB (16384 pages); $u 64 MiB (16384 pages)
1.100 s: scheme 0 (line 1) migrate_cold -> node 1: would apply to 1 region, 64 MiB (16384 pages); $u 64 MiB (16384 pages)
1.900 s: scheme 1 (line 3) stat: matched 1 region, 64 MiB (16384 pages)
2.000 s: scheme 1 (line 3) stat: matched 1 region, 64 MiB (16384 pages)
dry run: statistics of what would be done after 20 aggregations (2.000 s of monitoring, user engine, damon backend) (nothing changed: pass --apply to act):
scheme 0 (line 1) migrate_cold -> node 1
  tried 2 regions, 128 MiB (32768 pages); applied 2 regions, 128 MiB (32768 pages); quota exceeded 1 times
  not done: ebusy 0 B, eacces 0 B, enomem 0 B, other 0 B
scheme 1 (line 3) stat
  tried 2 regions, 128 MiB (32768 pages); applied 0 regions, 0 B (0 pages); quota exceeded 0 times
OUT
diff -u "$tmp/q.want" "$tmp/q.out" || fail "quota run output differs"
[ -s "$tmp/q.err" ] && { cat "$tmp/q.err"; fail "quota run wrote to stderr"; }

# 2. the same without the quota, migrate_hot to region:0 beside it, as JSON. An
# action sets the region's age to 0 (DAMOS), so the cold area (age >= 500 ms) is
# moved at 0.5, 1.0, 1.5 and 2.0 s, the hot one (age >= 1 s) at 1.0 and 2.0 s, though
# the record's own ages keep growing.
"$ctl" control --root "$fx/server-2s-mpst" --replay "$tmp/ctl.rec" --json \
	--scheme '4K max 0 0 500ms max migrate_cold 1' \
	--scheme '4K max 50% max 1s max migrate_hot region:0' >"$tmp/j.json" ||
	fail "json run exit $?"
python3 - "$tmp/j.json" <<'PY' || fail "json statistics differ"
import json, sys
j = json.load(open(sys.argv[1]))
s = [{k: x[k] for k in ("action", "target_node", "nr_tried", "sz_tried", "pages_tried",
      "nr_applied", "sz_applied", "qt_exceeds", "failed_bytes")} for x in j["schemes"]]
want = [
    {"action": "migrate_cold", "target_node": 1, "nr_tried": 4, "sz_tried": 4 * 192 << 20,
     "pages_tried": 4 * 49152, "nr_applied": 4, "sz_applied": 4 * 192 << 20, "qt_exceeds": 0,
     "failed_bytes": {"ebusy": 0, "eacces": 0, "enomem": 0, "other": 0}},
    {"action": "migrate_hot", "target_node": 0, "nr_tried": 2, "sz_tried": 2 * 32 << 20,
     "pages_tried": 2 * 8192, "nr_applied": 2, "sz_applied": 2 * 32 << 20, "qt_exceeds": 0,
     "failed_bytes": {"ebusy": 0, "eacces": 0, "enomem": 0, "other": 0}},
]
assert s == want, s
acts = [(a["time_us"], a["scheme"], a["bytes"]) for a in j["actions"]]
wa = sorted([(t * 100000, 0, 192 << 20) for t in (5, 10, 15, 20)] +
            [(t * 100000, 1, 32 << 20) for t in (10, 20)])
assert acts == wa, acts
assert j["applied"] is False and j["aggregations"] == 20 and j["backend"] == "damon", j
PY

# 3. refusals, each one line and exit 1
check_refusal() {  # NAME WANT ARGS...
	name=$1 want=$2
	shift 2
	"$ctl" control "$@" >"$tmp/r.out" 2>"$tmp/r.err"
	rc=$?
	[ $rc -eq 1 ] || { cat "$tmp/r.err"; fail "$name: exit $rc, want 1"; }
	printf '%s\n' "$want" | diff -u - "$tmp/r.err" || fail "$name: message differs"
	[ -s "$tmp/r.out" ] && fail "$name: wrote to stdout"
	return 0
}
one='memregctl: scheme of line 1: migrate_cold moves pages between NUMA nodes, and this machine has 1 node with memory: nothing to move to'
check_refusal one-node "$one" --root "$fx/vm-1node" --replay "$tmp/ctl.rec" \
	--scheme '4K max 0 0 30s max migrate_cold 3'
check_refusal no-node "memregctl: scheme of line 1: migrate_cold target node 3 holds no memory region on this machine" \
	--root "$fx/server-2s-mpst" --replay "$tmp/ctl.rec" --scheme '4K max 0 0 30s max migrate_cold 3'
check_refusal writes-only "memregctl: scheme of line 1: pageout needs a backend that sees reads per page (damon, perf, or a replay of their record); this one sees writes only, so a read-hot area would look cold" \
	--replay "$tmp/sd.rec" --scheme '100M max 0 0 2m max pageout'
check_refusal pid-consent "memregctl: observing process 1, which memreg did not start, needs --apply (consent to act on it); a dry run works from --replay REC or -- COMMAND" \
	--pid 1 --scheme 'min max min max min max stat'
# the kernel engine: what it cannot do is a usage error; a fixture root is never written
check_usage() {  # NAME WANT ARGS...
	name=$1 want=$2
	shift 2
	"$ctl" control "$@" >"$tmp/r.out" 2>"$tmp/r.err"
	rc=$?
	[ $rc -eq 2 ] || { cat "$tmp/r.err"; fail "$name: exit $rc, want 2"; }
	printf '%s\n' "$want" "Try 'memregctl help control'." | diff -u - "$tmp/r.err" ||
		fail "$name: message differs"
	[ -s "$tmp/r.out" ] && fail "$name: wrote to stdout"
	return 0
}
check_usage kernel-replay "memregctl control: --engine kernel: --replay: a record has no memory for the kernel to act on (use --engine user)" \
	--engine kernel --apply --replay "$tmp/ctl.rec" --scheme 'min max min max min max stat'
check_usage kernel-apply "memregctl control: --engine kernel: installing schemes in the kernel changes its state: pass --apply (a dry run works with --engine user)" \
	--engine kernel --phys --scheme 'min max min max min max stat'
check_usage kernel-backend "memregctl control: --engine kernel: --backend: the kernel engine monitors with the kernel's DAMON itself (drop --backend)" \
	--engine kernel --apply --backend perf --phys --scheme 'min max min max min max stat'
check_usage phys-user "memregctl control: --phys: only the kernel engine acts on physical memory (the user engine moves a process's pages with move_pages); add --engine kernel" \
	--phys --scheme 'min max min max min max stat'
check_refusal kernel-fixture "memregctl: refusing to install DAMOS schemes in the kernel under fixture root $fx/server-2s-mpst" \
	--root "$fx/server-2s-mpst" --engine kernel --apply --phys --scheme '4K max 0 0 30s max migrate_cold 1'
# arbitration: an offline region (all its blocks offline) is never a target; a
# node with only offline regions neither
cp -r "$fx/server-2s-mpst" "$tmp/off"
for b in $(seq 56 63); do echo offline >"$tmp/off/sys/devices/system/memory/memory$b/state"; done
check_refusal offline-region "memregctl: scheme of line 1: region 4 is offline (its memory blocks are): the controller never targets an offline region" \
	--root "$tmp/off" --replay "$tmp/ctl.rec" --scheme '4K max 50% max 1s max migrate_hot region:4'
"$ctl" control --root "$tmp/off" --replay "$tmp/ctl.rec" --scheme '4K max 0 0 1900ms max migrate_cold 1' \
	>/dev/null || fail "node 1 with online regions left refused"
for b in $(seq 64 87); do echo offline >"$tmp/off/sys/devices/system/memory/memory$b/state"; done
check_refusal offline-node "memregctl: scheme of line 1: migrate_cold target node 1 has only offline regions: the controller never targets an offline region" \
	--root "$tmp/off" --replay "$tmp/ctl.rec" --scheme '4K max 0 0 1900ms max migrate_cold 1'
# this machine: one node means the refusal, more means the dry run runs
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
if [ "$nodes" -le 1 ]; then
	check_refusal host-one-node "$one" --replay "$tmp/ctl.rec" \
		--scheme '4K max 0 0 30s max migrate_cold 3'
fi
# a writes-only record may still drive willneed and stat
"$ctl" control --replay "$tmp/sd.rec" --scheme '4K max 0 0 1s max willneed' >"$tmp/w.out" ||
	fail "willneed on a softdirty record refused"
grep -qx '  tried 2 regions, 384 MiB (98304 pages); applied 2 regions, 384 MiB (98304 pages); quota exceeded 0 times' \
	"$tmp/w.out" || { cat "$tmp/w.out"; fail "willneed statistics"; }

# 4. a command memreg starts: a dry run without --apply; SIGTERM ends it with the
# final statistics and the command is stopped.
# (the config copied into this test's directory: the pgrep below then finds this
# test's command only, never another test's accessgen on the same config)
cp "$top_srcdir/monitor/configs/zigzag" "$tmp/zigzag"
"$ctl" control --backend refs -a 20000,100000,1000000 --scheme 'min max min max min max stat' \
	-- "$gen" -t 60 "$tmp/zigzag" >"$tmp/c.out" 2>"$tmp/c.err" &
cpid=$!
i=0
while [ $i -lt 100 ] && ! grep -q ' s: scheme 0 (line 1) stat: matched ' "$tmp/c.out"; do
	sleep 0.1
	i=$((i + 1))
done
kill -TERM $cpid
wait $cpid || { cat "$tmp/c.err"; fail "control exited $? after SIGTERM"; }
grep -Eqx 'dry run: statistics of what would be done after [1-9][0-9]* aggregations? \([0-9]+\.[0-9]{3} s of monitoring, user engine, refs backend\) \(nothing changed: pass --apply to act\):' \
	"$tmp/c.out" || { cat "$tmp/c.out" "$tmp/c.err"; fail "no final statistics after SIGTERM"; }
pgrep -f "memreg-accessgen -t 60 $tmp/zigzag" >/dev/null &&
	fail "the command still runs after control ended"
echo "PASS: control-cli"
