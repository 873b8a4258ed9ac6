#!/bin/sh
# The placement commands on a fixture machine (cxl-cpuless: region 1 = node 1, all
# Movable blocks; region 0 holds DMA32 blocks) and on this machine, read-only:
# plans print and change nothing, --apply under a fixture root is refused, bad usage
# exits 2, bad input exits 1 with one line, where reads a live process.
set -u
b=${top_builddir:-.}
ctl=$b/tools/memregctl
fix=$b/tests/fixtures/cxl-cpuless
[ -d "$fix/sys/devices/system/memory" ] || { echo "SKIP: fixture $fix not built"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
MEMREG_STATE_DIR=$tmp/state
export MEMREG_STATE_DIR
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
nl='
'
# expect STATUS STDOUT STDERR CMD...: the exit status and the whole of stdout and
# stderr (each compared line for line; "" for nothing).
expect() {
	want=$1 want_out=$2 want_err=$3
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	shift
	set -- memregctl "$@"	# the messages name the command, not the build path
	if [ "$got" -ne "$want" ]; then
		fail "$*: exit $got, expected $want: $(cat "$tmp/out" "$tmp/err")"
	elif [ "$(cat "$tmp/out")" != "$want_out" ]; then
		fail "$*: stdout is:$nl$(cat "$tmp/out")${nl}expected:$nl$want_out"
	elif [ "$(cat "$tmp/err")" != "$want_err" ]; then
		fail "$*: stderr is:$nl$(cat "$tmp/err")${nl}expected:$nl$want_err"
	else
		echo "ok: $*: exit $got"
	fi
}
# usage CMD ARGS... MESSAGE: exit 2, the message and the help hint on stderr.
usage() {
	cmd=$1 msg=$2
	shift 2
	expect 2 "" "memregctl $cmd: $msg${nl}Try 'memregctl help $cmd'." "$ctl" "$cmd" "$@"
}
snap() { find "$1/sys/devices/system/memory" -type f -exec cat {} + | cksum; }

# A copy of the fixture with one block of region 1 offline, so that `online` has
# something to do and reaches the fixture-root refusal (on the fixture itself every
# block is online: nothing to do, exit 0, before any check of the root).
off=$tmp/cxl-offline
cp -R "$fix" "$off"
echo offline >"$off/sys/devices/system/memory/memory130/state"
before=$(snap "$fix") before_off=$(snap "$off")

blocks=$(i=128; while [ $i -le 159 ]; do printf ' memory%d' $i; i=$((i + 1)); done)
plan="region 1 (node 1): would offline 32 blocks (4 GiB):$blocks${nl}nothing changed: pass --apply to do it"
expect 0 "$plan" "" "$ctl" offline 1 --root "$fix"
expect 1 "" "memregctl: region 1: refusing to change memory blocks under fixture root $fix" \
	"$ctl" offline 1 --root "$fix" --apply
expect 1 "" "memregctl: memory0 of region 0 is in zone none, not Movable: it may hold unmovable pages; refusing to offline the region" \
	"$ctl" offline 0 --root "$fix" --apply
expect 0 "region 1: no block to bring online (32 already online)" "" \
	"$ctl" online 1 --root "$fix" --apply
expect 0 "region 1: would online 1 blocks: memory130${nl}nothing changed: pass --apply to do it" "" \
	"$ctl" online 1 --root "$off"
expect 1 "" "memregctl: region 1: refusing to change memory blocks under fixture root $off (0 of 1 blocks online)" \
	"$ctl" online 1 --root "$off" --apply
expect 1 "" "memregctl: no region 7: this machine has regions 0-1 (memregctl regions)" \
	"$ctl" offline 7 --root "$fix"
expect 1 "" "memregctl: bad region 'x': give a region id from \`memregctl regions\`" \
	"$ctl" offline x --root "$fix"
[ ! -e "$tmp/state" ] || fail "a refused or planned offline wrote the state directory"
mkdir -p "$tmp/state"
state=$tmp/state/offline.state
printf 'memory130\n' >"$state"
expect 0 "state file $state: no block to bring online (1 already online)" "" \
	"$ctl" online --restore --root "$fix"
expect 1 "" "memregctl: refusing to change the state file under fixture root $fix" \
	"$ctl" online --restore --root "$fix" --apply
expect 0 "state file $state: would online 1 blocks: memory130${nl}nothing changed: pass --apply to do it" "" \
	"$ctl" online --restore --root "$off"
expect 1 "" "memregctl: refusing to change the state file under fixture root $off" \
	"$ctl" online --restore --root "$off" --apply
[ "$(cat "$state")" = memory130 ] || fail "the state file changed under a fixture root: $(cat "$state")"
printf 'memory130\nnot-a-block\n' >"$state"
expect 1 "" "memregctl: $state:2: not a memory block: 'not-a-block'" \
	"$ctl" online --restore --root "$fix"
[ "$(snap "$fix")" = "$before" ] || fail "the fixture's memory blocks changed"
[ "$(snap "$off")" = "$before_off" ] || fail "the copied fixture's memory blocks changed"

usage where 'give one PID or PATTERN'
usage where "bad PID '0'" 0
usage move '--to REGION is required' 1
usage move "--range: bad range '0x5000-0x3000' (START-END, START < END)" 1 --to 0 --range 0x5000-0x3000
usage online 'give one REGION, or --restore'
usage offline "--timeout: bad time '0' (1s to 1d: 90s, 2m)" 1 --timeout 0
usage offline "--timeout: bad time '1h1x' (1s to 1d: 90s, 2m)" 1 --timeout 1h1x
expect 1 "" "memregctl: pid 999999999: no such process" \
	"$ctl" where 999999999 --root "$fix"
expect 1 "" "memregctl: refusing to move pages under fixture root $fix" \
	"$ctl" move 1 --to 0 --root "$fix" --apply

# This machine, read-only: where a live process's pages are.
sleep 30 &
pid=$!
"$ctl" where "$pid" --json >"$tmp/out" 2>"$tmp/err"
status=$?
[ $status -eq 0 ] && [ ! -s "$tmp/err" ] || fail "where $pid: exit $status: $(cat "$tmp/err")"
grep -q '"source":' "$tmp/out" || fail "where $pid: no source: $(cat "$tmp/out")"
grep -q '"total_bytes":[1-9]' "$tmp/out" || fail "where $pid counted no bytes: $(cat "$tmp/out")"
kill "$pid"
[ "$fails" -eq 0 ]
