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
# expect STATUS PATTERN CMD...: exit status and a line of output (stdout+stderr).
expect() {
	want=$1 pat=$2
	shift 2
	"$@" >"$tmp/out" 2>&1
	got=$?
	[ "$got" -eq "$want" ] || fail "$*: exit $got, expected $want: $(cat "$tmp/out")"
	grep -q -e "$pat" "$tmp/out" || fail "$*: no '$pat' in: $(cat "$tmp/out")"
}
snap() { find "$fix/sys/devices/system/memory" -type f -exec cat {} + | cksum; }
before=$(snap)

expect 0 'would offline 32 blocks' "$ctl" offline 1 --root "$fix"
expect 0 'pass --apply' "$ctl" offline 1 --root "$fix"
expect 1 'refusing to change memory blocks under fixture root' "$ctl" offline 1 --root "$fix" --apply
expect 1 'memory0 of region 0 is in zone none, not Movable' "$ctl" offline 0 --root "$fix" --apply
expect 0 'no block to bring online' "$ctl" online 1 --root "$fix" --apply
expect 1 'no region 7' "$ctl" offline 7 --root "$fix"
expect 1 "bad region 'x'" "$ctl" offline x --root "$fix"
[ ! -e "$tmp/state" ] || fail "a refused or planned offline wrote the state directory"
mkdir -p "$tmp/state"
printf 'memory130\n' >"$tmp/state/offline.state"
expect 0 'no block to bring online' "$ctl" online --restore --root "$fix"
expect 1 'refusing to change the state file under fixture root' "$ctl" online --restore --root "$fix" --apply
grep -qx memory130 "$tmp/state/offline.state" || fail "the state file changed under a fixture root"
printf 'memory130\nnot-a-block\n' >"$tmp/state/offline.state"
expect 1 'offline.state:2: not a memory block' "$ctl" online --restore --root "$fix"
[ "$(snap)" = "$before" ] || fail "the fixture's memory blocks changed"

expect 2 'give one PID or PATTERN' "$ctl" where
expect 2 "bad PID '0'" "$ctl" where 0
expect 2 '--to REGION is required' "$ctl" move 1
expect 2 '--range: bad range' "$ctl" move 1 --to 0 --range 0x5000-0x3000
expect 2 'give one REGION, or --restore' "$ctl" online
expect 2 '--timeout: bad seconds' "$ctl" offline 1 --timeout 0
expect 1 '/proc/999999999/maps' "$ctl" where 999999999 --root "$fix"
expect 1 'refusing to move pages under fixture root' "$ctl" move 1 --to 1 --root "$fix" --apply

# This machine, read-only: where a live process's pages are.
sleep 30 &
pid=$!
expect 0 '"source":' "$ctl" where "$pid" --json
grep -q '"total_bytes":[1-9]' "$tmp/out" || fail "where $pid counted no bytes: $(cat "$tmp/out")"
kill "$pid"
[ "$fails" -eq 0 ]
