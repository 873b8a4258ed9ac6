#!/bin/sh
# memregctl control over several processes in one run (--pid A --pid B), on two
# processes this test starts (so --apply acts only on our own children: the refs
# backend's clear_refs and MADV_COLD on their pages): both join, the log names each
# one's actions, one that exits leaves while the other goes on; a quota is one for
# both (DAMOS's per-scheme quota across a context's targets); the refusals of
# --cgroup (missing, not cgroup v2, without --apply) and of a backend that
# aggregates itself. Cgroup following itself: test-targets (a fixture cgroup) and the
# lab's control/60-targets.sh (a real one).
set -u
ctl=$top_builddir/tools/memregctl
gen=$top_builddir/monitor/memreg-accessgen
tmp=$(mktemp -d /tmp/mr-control-targets-XXXXXX)
pids=
cleanup() {
	for p in $pids; do kill $p 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# a 4 MiB area touched all the time and a 16 MiB one written once (cold)
cat >"$tmp/w.cfg" <<'CFG'
area hot 4M
area cold 16M
phase 120s hot seq rw
CFG
start() {
	"$gen" "$tmp/w.cfg" >/dev/null 2>&1 &
	pids="$pids $!"
	last=$!
}
# wait_for FILE ERE: until a line of FILE matches (20 s at most)
wait_for() {
	i=0
	while [ $i -lt 200 ] && ! grep -Eq "$2" "$1"; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -Eq "$2" "$1" || { cat "$1"; fail "never saw '$2'"; }
}
start; a=$last
start; b=$last
sleep 0.3

# 1. both join, both are acted on; B ends, the log says it left, A goes on
attrs=100000,500000,1000000,10,1000
"$ctl" control --backend refs --attrs $attrs --apply --pid $a --pid $b \
	--scheme 'min max 0 0 0s max stat' >"$tmp/l.out" 2>"$tmp/l.err" &
cpid=$!
stat=' s: pid %d: scheme 0 \(line 1\) stat: matched [0-9]+ regions?, [0-9.]+ [KMG]?i?B \([0-9]+ pages\)$'
wait_for "$tmp/l.out" "$(printf "$stat" $a)"
wait_for "$tmp/l.out" "$(printf "$stat" $b)"
kill $b
wait $b 2>/dev/null
wait_for "$tmp/l.out" " s: pid $b left (\(ended\) )?after [0-9]+ aggregations?$"
n=$(grep -n " s: pid $b left " "$tmp/l.out" | cut -d: -f1)
# an action line of A after B left: the run goes on while others live
i=0
while [ $i -lt 200 ] && ! tail -n +$((n + 1)) "$tmp/l.out" | grep -Eq "$(printf "$stat" $a)"; do
	sleep 0.1
	i=$((i + 1))
done
tail -n +$((n + 1)) "$tmp/l.out" | grep -Eq "$(printf "$stat" $a)" ||
	{ cat "$tmp/l.out"; fail "pid $a not acted on after pid $b left"; }
kill -TERM $cpid
wait $cpid || { cat "$tmp/l.err"; fail "control exit $? after SIGTERM"; }
sed -E 's/^[0-9]+\.[0-9]{3} s: /T s: /' "$tmp/l.out" >"$tmp/l.norm"
for p in $a $b; do
	grep -qx "T s: pid $p joined" "$tmp/l.norm" || { cat "$tmp/l.out"; fail "no join of $p"; }
done
grep -Eqx 'statistics after [1-9][0-9]* aggregations \([0-9]+\.[0-9]{3} s of monitoring, user engine, refs backend\):' \
	"$tmp/l.out" || { cat "$tmp/l.out"; fail "no final statistics"; }
[ -s "$tmp/l.err" ] && { cat "$tmp/l.err"; fail "the run wrote to stderr"; }

# 2. one quota for both: 4 MiB per minute of MADV_COLD over two processes with
# 16 MiB cold each is 4 MiB in all (per process it would be 8 MiB)
start; b=$last
sleep 0.3
"$ctl" control --backend refs --attrs $attrs --apply --pid $a --pid $b --duration 3s --json \
	--scheme 'min max 0 0 0s max cold
  quota bytes 4M per 60s' >"$tmp/q.json" 2>"$tmp/q.err" ||
	{ cat "$tmp/q.err"; fail "quota run exit $?"; }
python3 - "$tmp/q.json" $a $b <<'PY' || fail "quota statistics differ"
import json, sys
j = json.load(open(sys.argv[1]))
s = j["schemes"][0]
assert (s["sz_tried"], s["sz_applied"], s["qt_exceeds"]) == (4 << 20, 4 << 20, 0), s
assert j["targets_joined"] == 2 and j["target_pid"] is None, j
pids = {int(sys.argv[2]), int(sys.argv[3])}
assert j["actions"] and all(a["pid"] in pids for a in j["actions"]), j["actions"]
assert sum(a["bytes"] for a in j["actions"]) == 4 << 20, j["actions"]
PY
grep -qx 'memregctl control: the refs backend sees one access count per mapping: cold decides for whole mappings only' \
	"$tmp/q.err" || { cat "$tmp/q.err"; fail "quota run's note"; }

# 3. refusals: one line, exit 1 (usage: 2)
check_refusal() {  # NAME RC WANT ARGS...
	name=$1 want_rc=$2 want=$3
	shift 3
	"$ctl" control "$@" >"$tmp/r.out" 2>"$tmp/r.err"
	rc=$?
	[ $rc -eq $want_rc ] || { cat "$tmp/r.err"; fail "$name: exit $rc, want $want_rc"; }
	printf '%s\n' "$want" | diff -u - "$tmp/r.err" || fail "$name: message differs"
	[ -s "$tmp/r.out" ] && fail "$name: wrote to stdout"
	return 0
}
st='min max 0 0 0s max stat'
check_refusal cgroup-missing 1 "memregctl: $tmp/nocg: no such cgroup" \
	--backend refs --apply --cgroup "$tmp/nocg" --scheme "$st"
check_refusal cgroup-v1 1 "memregctl: $tmp: not a cgroup v2 directory (no cgroup.controllers); memreg follows cgroup v2 only" \
	--backend refs --apply --cgroup "$tmp/" --scheme "$st"
check_refusal cgroup-consent 1 "memregctl: observing the processes of cgroup /sys/fs/cgroup, which memreg did not start, needs --apply (consent to act on them); a dry run works from --replay REC or -- COMMAND" \
	--backend refs --cgroup /sys/fs/cgroup --scheme "$st"
check_refusal damon-several 1 "memregctl: the damon backend monitors one target per run (it aggregates itself: one kdamond or one record); with several processes use refs or perf" \
	--backend damon --apply --pid $a --pid $b --scheme "$st"
check_refusal pid-gone 1 "memregctl: pid $cpid: no such process" \
	--backend refs --apply --pid $a --pid $cpid --scheme "$st"
check_refusal pid-and-replay 2 "memregctl control: give exactly one kind of target: --pid PID and --cgroup DIR (each repeatable), --replay REC, --phys or -- COMMAND
Try 'memregctl help control'." \
	--pid $a --replay "$tmp/none.rec" --scheme "$st"
echo "PASS: control-targets"
