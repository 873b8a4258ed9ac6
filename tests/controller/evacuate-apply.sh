#!/bin/sh
# evacuate --apply on a copy of server-2s-mpst (node 1's blocks made Movable; the plan
# takes regions 4 and 5, blocks 56-63 and 64-71) through memregctl-fake, whose
# blocks go offline in the copy as the kernel would show it and whose memory60 fails
# to (EBUSY): with --keep-going region 4 is rolled back and region 5 still goes
# offline, both reported (text and JSON); without it the evacuation stops at region
# 4. On a pseudo-terminal (script(1)) the progress bar is drawn, the whole output as
# expected, and an error line never lands on the bar; without a terminal there is
# no bar. Seconds are masked: no timing is asserted.
set -u
b=${top_builddir:-.}
ctl=$b/tools/memregctl
fake=$b/tests/controller/memregctl-fake
fix=$b/tests/fixtures/server-2s-mpst
[ -d "$fix/sys/devices/system/memory" ] || { echo "SKIP: fixture $fix not built"; exit 77; }
tmp=$(mktemp -d /tmp/mr-evac-apply-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
nl='
'
root=$tmp/root
cp -R "$fix" "$root"
mkdir -p "$root/proc/sys/kernel/random"
echo 11111111-2222-3333-4444-555555555555 >"$root/proc/sys/kernel/random/boot_id"
mem=$root/sys/devices/system/memory
for n in $(seq 56 87); do echo Movable >"$mem/memory$n/valid_zones"; done
MEMREG_STATE_DIR=/state
export MEMREG_STATE_DIR
"$ctl" plan --root "$root" --regions 2 --move-rate 64M -o "$tmp/p.plan" >"$tmp/plan.out" 2>&1 ||
	{ cat "$tmp/plan.out"; exit 99; }
grep -qx 'selected regions, in evacuation order: 4, 5' "$tmp/plan.out" ||
	{ echo "the plan does not select regions 4 and 5: $(cat "$tmp/plan.out")"; exit 99; }
id=$(sed -n 's/^  "id":"\([0-9a-f]*\)",$/\1/p' "$tmp/p.plan")

reset() {
	for n in $(seq 56 71); do echo online >"$mem/memory$n/state"; done
	rm -f "$root/state/offline.state"
}
states() { for n in $(seq "$1" "$2"); do cat "$mem/memory$n/state"; done | sort | uniq -c | tr -s ' \n' ' '; }
mask() { sed -E 's/[0-9]+\.[0-9]{3} s/T s/g' "$1"; }
# run NAME ARGS...: memregctl-fake evacuate, memory60 failing
run() {
	name=$1
	shift
	MR_FAKE_LIVE=1 MR_FAKE_FAIL=60 "$fake" evacuate "$tmp/p.plan" --root "$root" --apply "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
}
lines() { for n in $(seq "$2" "$3"); do echo "  region $1:  memory$n offline"; done; }
busy='/sys/devices/system/memory/memory60/state: write "offline": Device or resource busy'
head="plan $id: 2 regions, taking them offline${nl}region 4 (node 1): 8 blocks, moving 192 MiB"
r4="$(lines 4 56 59)${nl}  region 4:  memory60 offline FAILED: $busy"
r5="region 5 (node 1): 8 blocks, moving 192 MiB${nl}$(lines 5 64 71)${nl}region 5: offline in T s"
undo="\`memregctl evacuate --undo $tmp/p.plan --apply\` brings them back"

# --keep-going: region 4 fails and is rolled back, region 5 goes offline; exit 1.
reset
run keep --keep-going
want="$head${nl}$r4${nl}$r5${nl}1 of 2 regions offline, 192 MiB moved by the offline and 0 B by the pre-move in T s (estimated 6.0 s); $undo"
[ "$(cat "$tmp/keep.rc")" = 1 ] || fail "--keep-going: exit $(cat "$tmp/keep.rc")"
[ "$(mask "$tmp/keep.out")" = "$want" ] || fail "--keep-going: stdout is:$nl$(cat "$tmp/keep.out")${nl}expected:$nl$want"
[ "$(cat "$tmp/keep.err")" = "memregctl: region 4: $busy; 4 block(s) brought back online" ] ||
	fail "--keep-going: stderr: $(cat "$tmp/keep.err")"
[ "$(states 56 63)" = " 8 online " ] || fail "--keep-going: region 4 not rolled back: $(states 56 63)"
[ "$(states 64 71)" = " 8 offline " ] || fail "--keep-going: region 5 not offline: $(states 64 71)"
[ "$(grep -c "^memory6[4-9] \|^memory7[01] " "$root/state/offline.state")" = 8 ] &&
	! grep -q "^memory5[6-9] \|^memory6[0-3] " "$root/state/offline.state" ||
	fail "--keep-going: state file: $(cat "$root/state/offline.state")"
grep -q '[[:cntrl:]]' "$tmp/keep.out" && fail "--keep-going without a terminal drew a bar: $(cat -A "$tmp/keep.out")"

# The same as JSON: both regions reported.
reset
run keepjson --keep-going --json
python3 - "$tmp/keepjson.out" <<'PY' || fail "--keep-going --json: $(cat "$tmp/keepjson.out")"
import json, sys
j = json.load(open(sys.argv[1]))
got = (j["regions_offline"], j["regions_failed"], j["bytes_moved"], j["bytes_premoved"],
       [(r["id"], r["status"]) for r in j["regions"]])
want = (1, 1, 192 << 20, 0, [(4, "rolled-back"), (5, "offline")])
if got != want:
    sys.exit("got %r, expected %r" % (got, want))
PY
[ "$(cat "$tmp/keepjson.rc")" = 1 ] || fail "--keep-going --json: exit $(cat "$tmp/keepjson.rc")"

# Without --keep-going: stop at region 4, region 5 untouched.
reset
run stop
want="$head${nl}$r4${nl}0 of 2 regions offline, 0 B moved by the offline and 0 B by the pre-move in T s (estimated 6.0 s); $undo"
[ "$(cat "$tmp/stop.rc")" = 1 ] || fail "stop: exit $(cat "$tmp/stop.rc")"
[ "$(mask "$tmp/stop.out")" = "$want" ] || fail "stop: stdout is:$nl$(cat "$tmp/stop.out")${nl}expected:$nl$want"
[ "$(cat "$tmp/stop.err")" = "memregctl: region 4: $busy; 4 block(s) brought back online; stopping (--keep-going goes on to the next region)" ] ||
	fail "stop: stderr: $(cat "$tmp/stop.err")"
[ "$(states 56 71)" = " 16 online " ] || fail "stop: blocks changed: $(states 56 71)"

# The progress bar, on a pseudo-terminal: stdout and stderr both on it.
if ! command -v script >/dev/null; then
	echo "SKIP (part): no script(1) from util-linux: the progress bar is not tested"
else
	reset
	MR_FAKE_LIVE=1 MR_FAKE_FAIL=60 script -qec "'$fake' evacuate '$tmp/p.plan' --root '$root' --apply --keep-going" \
		/dev/null >"$tmp/pty.out" </dev/null
	python3 - "$tmp/pty.out" "$id" "$tmp/p.plan" "$busy" <<'PY' || fail "progress bar: the output differs"
import re, sys
got = open(sys.argv[1], "rb").read().decode()
plan_id, path, busy = sys.argv[2:5]
got = re.sub(r"[0-9]+\.[0-9]{3} s", "T s", got)
CLR = "\r\033[K"
def bar(done):
    fill = done * 30 // 8
    return "  [" + "#" * fill + "." * (30 - fill) + "] %d/8 blocks" % done
def region(r, first, nr_ok, fail_block=None):
    out = ""
    for i in range(nr_ok):
        out += (bar(i) if i else "") + CLR + "  region %d:  memory%d offline\n" % (r, first + i)
    if fail_block is not None:
        out += bar(nr_ok) + CLR + "  region %d:  memory%d offline FAILED: %s\n" % (r, fail_block, busy)
        out += bar(nr_ok)
    else:
        out += bar(nr_ok)
    return out
want = "plan %s: 2 regions, taking them offline\n" % plan_id
want += "region 4 (node 1): 8 blocks, moving 192 MiB\n"
want += region(4, 56, 4, 60)
# the bar's line is cleared, then the error (stderr) has a line of its own
want += CLR + "memregctl: region 4: %s; 4 block(s) brought back online\n" % busy
want += "region 5 (node 1): 8 blocks, moving 192 MiB\n"
want += region(5, 64, 8)
want += CLR + "region 5: offline in T s\n"
want += ("1 of 2 regions offline, 192 MiB moved by the offline and 0 B by the pre-move in "
         "T s (estimated 6.0 s); `memregctl evacuate --undo %s --apply` brings them back\n" % path)
want = want.replace("\n", "\r\n")	# the terminal's line discipline
if got != want:
    print("got:     ", repr(got))
    print("expected:", repr(want))
    sys.exit(1)
PY
	[ "$(states 64 71)" = " 8 offline " ] || fail "progress bar run: region 5 not offline"
fi
[ "$fails" -eq 0 ]
