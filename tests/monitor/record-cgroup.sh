#!/bin/sh
# memregctl record --cgroup on this host, with processes the test starts itself: a
# fake cgroup v2 directory (cgroup.controllers and a cgroup.procs the test writes,
# as a cgroup's changes while processes join and leave) followed by record, one
# record per process in the -o directory; a process that joins later and one that
# leaves; then the refusals (consent, damon, a fixture root, usage).
set -u
ctl=$top_builddir/tools/memregctl
gen=$top_builddir/monitor/memreg-accessgen
tmp=$(mktemp -d /tmp/mr-record-cgroup-XXXXXX)
kids=
trap '[ -z "$kids" ] || kill $kids 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$top_srcdir/tests/monitor/wait-lib.sh"
[ -r /proc/self/clear_refs ] || [ -e /proc/self/clear_refs ] ||
	{ echo "SKIP: no /proc/PID/clear_refs here (the refs backend)"; exit 77; }

cg=$tmp/cg
mkdir "$cg" && : >"$cg/cgroup.controllers" && : >"$cg/cgroup.procs" || fail "fake cgroup"
# The group's members now: PIDs, one a line. Written beside it and renamed over it,
# so that a read sees the old list or the new one; `>` truncates first, and a record
# that read the file empty in between saw every process leave (and come back as new
# ones: seen once in CI).
procs() {
	printf '%s\n' "$@" | sed '/^$/d' >"$tmp/procs.new" && mv "$tmp/procs.new" "$cg/cgroup.procs" ||
		fail "writing the fake cgroup.procs"
}
# each child writes 4 MiB page by page until killed (600 s: longer than the waits below)
printf 'stride 4K\narea a 4M\nphase 600s a seq rw\n' >"$tmp/c"
"$gen" "$tmp/c" >/dev/null & p1=$!
"$gen" "$tmp/c" >/dev/null & p2=$!
kids="$p1 $p2"
procs $p1 $p2

# 1. refusals: whole messages, exit status, nothing written
check() {	# NAME STATUS MESSAGE -- ARGS...
	name=$1 want_rc=$2 want=$3
	shift 4
	"$ctl" record "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq "$want_rc" ] || { cat "$tmp/err"; fail "$name: exit $rc, want $want_rc"; }
	[ "$(cat "$tmp/err")" = "$want" ] || { cat "$tmp/err"; fail "$name: message"; }
}
check "refs without --apply" 1 "memregctl: refs: did not write the clear_refs of the processes followed, which memreg did not start: it changes the kernel's state; pass --apply to do it" \
	-- -b refs --cgroup "$cg" -o "$tmp/no"
[ ! -e "$tmp/no" ] || fail "a refusal created the output directory"
check "damon" 1 "memregctl: damon: monitors one target per run (the one kdamond memreg owns), not a set of processes that changes; with --cgroup or several --pid use refs, softdirty or perf (one monitor per process)" \
	-- -b damon --apply --cgroup "$cg" -o "$tmp/no"
check "fixture root" 1 "memregctl: refs: refusing to write the clear_refs of the processes followed, which memreg did not start under fixture root $tmp" \
	-- -b refs --apply --root "$tmp" --cgroup "$cg" -o "$tmp/no"
check "with a command" 2 "memregctl record: --cgroup and several --pid follow running processes: not with --phys, --replay or -- COMMAND (start the command inside the cgroup; memregctl bench --apply does)
Try 'memregctl help record'." \
	-- -b refs --apply --cgroup "$cg" -- true
check "not cgroup v2" 1 "memregctl: $tmp: not a cgroup v2 directory (no cgroup.controllers); memreg follows cgroup v2 only" \
	-- -b refs --apply --cgroup "$tmp" -o "$tmp/no"
[ ! -e "$tmp/no" ] || fail "a refusal created the output directory"

# 2. the set: p1 and p2 from the start; once both have a snapshot recorded, p3 joins
# and p1 moves out (it keeps running: it left the group); once p1's record is closed
# and p3 has a snapshot, SIGINT ends the record (--duration's end is section 3's).
# Each wait is for what the record has written, at most 120 s, not for a time.
out=$tmp/recs
"$ctl" record -b refs -a 10ms,100ms,200ms --apply --cgroup "$cg" -o "$out" \
	2>"$tmp/rec.err" &
rec=$!
kids="$kids $rec"
# has_snapshot PID: PID's record (being written, or installed) holds a snapshot
has_snapshot() {
	for f in "$out/$1.rec" "$out/$1.rec".part-*; do
		[ -f "$f" ] && "$ctl" report raw "$f" 2>/dev/null | grep -q '^snapshot ' && return 0
	done
	return 1
}
# wait_for WHAT COMMAND...: until COMMAND succeeds, while the record runs
wait_for() {
	wf_what=$1
	shift
	wait_until "$wf_what" $rec "$tmp/rec.err" "$@"
}
wait_for "snapshot of p1 ($p1)" has_snapshot $p1
wait_for "snapshot of p2 ($p2)" has_snapshot $p2
"$gen" "$tmp/c" >/dev/null & p3=$!
kids="$kids $p3"
procs $p2 $p3
wait_for "snapshot of p3 ($p3)" has_snapshot $p3
wait_for "end of p1's record ($p1 left)" grep -q "^memregctl record: pid $p1 (cgroup .*) left after" "$tmp/rec.err"
kill -INT $rec
wait_gone $rec "$tmp/rec.err" "record --cgroup"
wait $rec || { rc=$?; cat "$tmp/rec.err"; fail "record --cgroup exited $rc"; }
kill -0 $p1 || fail "p1 is gone: it should have left the group alive"
cat "$tmp/rec.err"
for p in $p1 $p2 $p3; do
	f=$out/$p.rec
	[ -f "$f" ] || fail "no record $f"
	"$ctl" report raw "$f" >"$tmp/raw" || fail "report raw $f"
	[ "$(sed -n 1p "$tmp/raw")" = "# process-scoped (pid $p): virtual addresses of one process, not whether a power region is idle; backend refs; format version 2; attrs 10000,100000,200000,10,1000" ] ||
		{ head -2 "$tmp/raw"; fail "$f: header"; }
	[ "$(sed -n 2p "$tmp/raw")" = "# note: backend=refs pid $p (cgroup $cg)" ] ||
		{ head -2 "$tmp/raw"; fail "$f: note"; }
	grep -q "^memregctl record: pid $p (cgroup $cg) joined: recording to $f\$" "$tmp/rec.err" ||
		fail "no join line for $p"
	"$ctl" report wss "$f" >/dev/null || fail "report wss $f"
done
# p1's record was closed when it left; p2's and p3's when the record ended
left=$(sed -n 's/^memregctl record: pid \([0-9]*\) (cgroup .*) left after .* snapshots in .*/\1/p' \
	"$tmp/rec.err" | tr '\n' ' ')
[ "$left" = "$p1 " ] || fail "left: '$left', want p1 ($p1) alone"
ended=$(sed -n 's/^memregctl record: pid \([0-9]*\) (cgroup .*) recorded until the end, .* snapshots in .*/\1/p' \
	"$tmp/rec.err" | sort | tr '\n' ' ')
[ "$ended" = "$(printf '%s\n' $p2 $p3 | sort | tr '\n' ' ')" ] ||
	fail "recorded until the end: '$ended', want p2 and p3 ($p2 $p3)"
[ "$(ls "$out" | sort | tr '\n' ' ')" = "$(printf '%s.rec\n' $p1 $p2 $p3 | sort | tr '\n' ' ')" ] ||
	{ ls "$out"; fail "the directory holds other files"; }
[ "$(sed -n 's/^memregctl record: [0-9]* records ([0-9]* snapshots, [0-9]* samples) by refs in \(.*\): \(.*\)$/\1: \2/p' "$tmp/rec.err")" = \
	"$out: 3 processes followed, 0 too short to record, 0 failed" ] || fail "summary line"

# 3. an empty group: nothing joins, nothing recorded, exit 1
procs
"$ctl" record -b refs --apply --cgroup "$cg" -o "$tmp/empty" -d 0.3s 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "empty group: exit $rc, want 1"
grep -qx "memregctl: nothing recorded: no process joined" "$tmp/err" ||
	{ cat "$tmp/err"; fail "empty group: message"; }
echo "PASS: record-cgroup"
