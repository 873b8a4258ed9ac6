#!/bin/sh
# Arbitration, the controller's side: while a memregctl evacuate runs (its marker
# beside the state file names this boot and a live process), memregctl control
# never migrates to the node of one of its regions, says so once in its log and in
# its status JSON ("evacuation", "targeted_regions"); a marker of a dead process or
# of another boot is ignored. Replay-driven, on a copy of server-2s-mpst (regions
# 4-7 are node 1): nothing here changes the kernel.
set -u
ctl=$top_builddir/tools/memregctl
mk=$top_builddir/tests/controller/mk-ctl-record
fx=$top_builddir/tests/fixtures/server-2s-mpst
[ -d "$fx/sys" ] || { echo "SKIP: fixture roots not built"; exit 77; }
tmp=$(mktemp -d /tmp/mr-evac-arb-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
nl='
'
root=$tmp/root
cp -R "$fx" "$root"
boot=11111111-2222-3333-4444-555555555555
mkdir -p "$root/proc/sys/kernel/random" "$root/proc/4242" "$root/state"
echo $boot >"$root/proc/sys/kernel/random/boot_id"
# pid 4242 lives under the root, started 100 ticks after boot (field 22)
echo "4242 (memregctl) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 100 0 0" \
	>"$root/proc/4242/stat"
MEMREG_STATE_DIR=/state
export MEMREG_STATE_DIR
"$mk" "$tmp/ctl.rec" || { echo "mk-ctl-record failed"; exit 99; }

# run NAME: one replay with a migrate_cold to node 1 (the cold area qualifies from
# 0.5 s on, then every 0.5 s), the log in NAME.out, the status in NAME.json.
run() {
	"$ctl" control --root "$root" --replay "$tmp/ctl.rec" \
		--scheme '4K max 0 0 500ms max migrate_cold 1' \
		--status-file "$tmp/$1.json" >"$tmp/$1.out" 2>"$tmp/$1.err" ||
		fail "$1: exit $?: $(cat "$tmp/$1.err")"
	[ -s "$tmp/$1.err" ] && fail "$1: stderr: $(cat "$tmp/$1.err")"
}
# status NAME: the status file's evacuation and targeted regions, one line
status() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(json.dumps(j["evacuation"], sort_keys=True), j["targeted_regions"])' "$tmp/$1.json"
}
u='from unknown nodes (replayed virtual addresses) 192 MiB (49152 pages)'
acting="0.500 s: scheme 0 (line 1) migrate_cold -> node 1: would apply to 1 region, 192 MiB (49152 pages); $u"

# No marker: the scheme acts, node 1's regions are its targets.
run none
[ "$(head -1 "$tmp/none.out")" = "$acting" ] || fail "none: log:$nl$(cat "$tmp/none.out")"
[ "$(status none)" = "null [4, 5, 6, 7]" ] || fail "none: status: $(status none)"

# An evacuation of regions 5 and 2 runs: nothing migrates to node 1 (region 5 is on
# it), said once; regions 5 and 2 are no target.
printf 'pid=4242\nstart=100\nboot_id=%s\nplan=00112233aabbccdd\nregions=5,2\n' $boot \
	>"$root/state/evacuating"
run held
want="evacuation of plan 00112233aabbccdd (memregctl evacuate, pid 4242) holds regions 5,2: no scheme migrates to their nodes until it ends"
[ "$(grep -v '^dry run\|^scheme\|^  ' "$tmp/held.out")" = "$want" ] ||
	fail "held: log:$nl$(cat "$tmp/held.out")"
grep -q '^  tried .*; applied 0 regions, 0 B (0 pages);' "$tmp/held.out" ||
	fail "held: something was applied:$nl$(cat "$tmp/held.out")"
[ "$(status held)" = '{"pid": 4242, "plan": "00112233aabbccdd", "regions": [5, 2]} [4, 6, 7]' ] ||
	fail "held: status: $(status held)"

# The same marker, but its pid is another process now (another start time), or in
# another boot: stale, ignored.
sed 's/^start=100$/start=99/' "$root/state/evacuating" >"$tmp/m" && mv "$tmp/m" "$root/state/evacuating"
run reused
[ "$(head -1 "$tmp/reused.out")" = "$acting" ] || fail "reused pid: log:$nl$(cat "$tmp/reused.out")"
[ "$(status reused)" = "null [4, 5, 6, 7]" ] || fail "reused pid: status: $(status reused)"
printf 'pid=4242\nstart=100\nboot_id=0-earlier\nplan=00112233aabbccdd\nregions=5\n' \
	>"$root/state/evacuating"
run oldboot
[ "$(head -1 "$tmp/oldboot.out")" = "$acting" ] || fail "old boot: log:$nl$(cat "$tmp/oldboot.out")"

# An evacuation of a node-0 region only: migrating to node 1 goes on.
printf 'pid=4242\nstart=100\nboot_id=%s\nplan=00112233aabbccdd\nregions=2\n' $boot \
	>"$root/state/evacuating"
run other
[ "$(sed -n 2p "$tmp/other.out")" = "$acting" ] || fail "node 0 evacuated: log:$nl$(cat "$tmp/other.out")"
[ "$(status other)" = '{"pid": 4242, "plan": "00112233aabbccdd", "regions": [2]} [4, 5, 6, 7]' ] ||
	fail "node 0 evacuated: status: $(status other)"

# A malformed marker: a warning in the log, the run goes on.
echo garbage >"$root/state/evacuating"
run bad
[ "$(grep -c evacuat "$tmp/bad.out")" = 1 ] &&
	[ "$(head -1 "$tmp/bad.out")" = "warning: /state/evacuating: not an evacuation marker (pid=, plan= missing)" ] &&
	[ "$(sed -n 2p "$tmp/bad.out")" = "$acting" ] ||
	fail "bad marker: log:$nl$(cat "$tmp/bad.out")"
[ "$fails" -eq 0 ]
